"""The statistics page: how the service is used, and the playtest figures of finished games.

The playtest figures come from each finished game's final state, written as a
small ``game_figures`` row when the game finishes (:mod:`service.figures`);
the page adds those rows up with SQL and writes nothing.

Games against the computer are kept apart: the playtest figures and the time
per move are those of games between people, and the games against the
computer have figures of their own, by level.
"""

from __future__ import annotations

import logging
import statistics as pystats
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Float,
    case,
    cast,
    func,
    literal_column,
    select,
)

from ..bots import LEVELS
from ..figures import game_figures
from ..models import OPEN_STATUSES, Event, Game, GameFigures, Player, db, insert_new
from ..unit_of_work import transaction

log = logging.getLogger(__name__)

WEEKS = 12
# The median time per move is taken over this many of the latest moves.
MOVE_WINDOW = 20_000
SUMMARY_BATCH = 500


def summarize_finished(limit: int | None = None) -> tuple[int, bool]:
    """Write the figures of finished games that have none, up to ``limit`` games.

    Games write their figures when they finish; this fills in any that are
    missing (``flask --app service admin update-stats``). Returns how many were
    added and whether more remain. Safe to run in several processes at once: a
    game summarized twice keeps its first row. Each batch is a transaction of
    its own, so a long run keeps what it has written if it is stopped.
    """
    computer = select(Player).where(Player.game_id == Game.id, Player.computer_level.is_not(None))
    missing = (
        select(
            Game.id,
            Game.state,
            Game.finished_at,
            computer.with_only_columns(Player.seat).scalar_subquery(),
            computer.with_only_columns(Player.computer_level).scalar_subquery(),
        )
        .where(
            Game.status == "finished",
            ~select(GameFigures.game_id).where(GameFigures.game_id == Game.id).exists(),
        )
        .order_by(Game.id)
    )
    added = 0
    while limit is None or added < limit:
        size = SUMMARY_BATCH if limit is None else min(SUMMARY_BATCH, limit - added)
        with transaction():
            rows = db.session.execute(missing.limit(size)).all()
            if rows:
                figures = [
                    {
                        "game_id": game_id,
                        "finished_at": finished_at,
                        "computer_seat": seat,
                        "computer_level": level,
                        **game_figures(state),
                    }
                    for game_id, state, finished_at, seat, level in rows
                ]
                db.session.execute(insert_new(GameFigures), figures)
        if not rows:
            return added, False
        log.info("figures written for %d finished game(s)", len(rows))
        added += len(rows)
        missing = missing.where(Game.id > rows[-1].id)
    with transaction():
        more = db.session.execute(missing.with_only_columns(Game.id).limit(1)).first() is not None
    return added, more


@dataclass(frozen=True)
class Week:
    """Games started and ended in one week (Monday to Sunday, UTC)."""

    start: date
    started: int
    finished: int
    timeouts: int
    cancelled: int
    resigned: int
    # Of the games started, those against the computer.
    against_computer: int = 0


def _postgresql() -> bool:
    return db.session.get_bind().dialect.name == "postgresql"


def _week(column: Any) -> ColumnElement[Any]:
    """The Monday of the week a timestamp falls in, in SQL (each database spells it its own way)."""
    if _postgresql():
        utc = func.timezone(literal_column("'UTC'"), column)
        return func.date_trunc(literal_column("'week'"), utc)
    # The day first: SQLite rounds 23:59:59.9995 up to the next day when it applies modifiers.
    day = func.date(column)
    return func.date(day, literal_column("'-6 days'"), literal_column("'weekday 1'"))


def _day(value: Any) -> date:
    return date.fromisoformat(str(value)[:10])


def _against_computer() -> ColumnElement[bool]:
    """Whether the computer plays a seat of the game, in SQL."""
    return (
        select(Player.id)
        .where(Player.game_id == Game.id, Player.computer_level.is_not(None))
        .exists()
    )


def weekly(now: datetime, weeks: int = WEEKS) -> list[Week]:
    """The last ``weeks`` weeks, newest first: games started, finished, timed out, cancelled."""
    this_monday = now.date() - timedelta(days=now.weekday())
    mondays = [this_monday - timedelta(weeks=n) for n in range(weeks)]
    since = datetime.combine(mondays[-1], datetime.min.time(), tzinfo=now.tzinfo)
    started_week = _week(Game.started_at)
    started: Counter[date] = Counter()
    against_computer: Counter[date] = Counter()
    for week, computer, count in db.session.execute(
        select(started_week, _against_computer(), func.count())
        .where(Game.started_at >= since)
        .group_by(started_week, _against_computer())
    ):
        started[_day(week)] += count
        if computer:
            against_computer[_day(week)] += count
    # Games that ended after they started: not an invitation declined or withdrawn.
    ended_week = _week(Game.finished_at)
    ended: Counter[tuple[date, str]] = Counter()
    for week, status, count in db.session.execute(
        select(ended_week, Game.status, func.count())
        .where(Game.finished_at >= since, Game.started_at.is_not(None))
        .group_by(ended_week, Game.status)
    ):
        ended[_day(week), status] += count
    return [
        Week(
            start=monday,
            started=started[monday],
            against_computer=against_computer[monday],
            finished=ended[monday, "finished"],
            timeouts=ended[monday, "timed_out"] + ended[monday, "abandoned"],
            cancelled=ended[monday, "cancelled"],
            resigned=ended[monday, "resigned"],
        )
        for monday in mondays
    ]


@dataclass(frozen=True)
class Endings:
    """How the games that started have ended, since the service began: as the weekly
    figures count them, a game cancelled before it started (its invitation declined or never
    answered) is no game that ended."""

    finished: int
    timed_out: int
    abandoned: int
    cancelled: int
    resigned: int

    @property
    def ended(self) -> int:
        """Games that started and ended, however they ended."""
        return self.finished + self.resigned + self.timed_out + self.abandoned + self.cancelled

    @property
    def timeouts(self) -> int:
        """Games ended by a deadline: lost by one player's timeout, or abandoned by both."""
        return self.timed_out + self.abandoned


def endings() -> Endings:
    """How many of the games that started have ended in each way."""
    counts = dict(
        db.session.execute(
            select(Game.status, func.count())
            .where(Game.started_at.is_not(None), Game.status.not_in(OPEN_STATUSES))
            .group_by(Game.status)
        ).all()
    )
    return Endings(
        finished=counts.get("finished", 0),
        timed_out=counts.get("timed_out", 0),
        abandoned=counts.get("abandoned", 0),
        cancelled=counts.get("cancelled", 0),
        resigned=counts.get("resigned", 0),
    )


@dataclass(frozen=True)
class MoveTimes:
    """The median time between two moves of a game, over the latest moves."""

    intervals: int
    median_seconds: float | None
    since: datetime | None


def _seconds_between(earlier: Any, later: Any) -> ColumnElement[float]:
    """Seconds from one timestamp to another, in SQL."""
    if _postgresql():
        return cast(func.extract("epoch", later - earlier), Float)
    return (func.julianday(later) - func.julianday(earlier)) * 86400.0


def move_times(window: int = MOVE_WINDOW) -> MoveTimes:
    """The median time between consecutive moves of a game, among the latest ``window`` moves.

    Only games between people count: the computer answers in seconds.
    """
    computer_games = select(Player.game_id).where(Player.computer_level.is_not(None))
    recent = (
        select(Event.game_id, Event.id, Event.created_at)
        .where(Event.kind == "move", Event.game_id.not_in(computer_games))
        .order_by(Event.id.desc())
        .limit(window)
        .subquery()
    )
    previous = func.lag(recent.c.created_at).over(
        partition_by=recent.c.game_id, order_by=recent.c.id
    )
    gaps = [
        gap
        for gap in db.session.scalars(select(_seconds_between(previous, recent.c.created_at))).all()
        if gap is not None
    ]
    return MoveTimes(
        intervals=len(gaps),
        median_seconds=pystats.median(gaps) if gaps else None,
        since=db.session.scalar(select(func.min(recent.c.created_at))),
    )


@dataclass(frozen=True)
class Playtest:
    """What finished games say about the rules. Only games played to the end count."""

    games: int
    cut_short: int  # by a forfeit or a resignation: not played to the end
    keeper_wins: int
    shadow_wins: int
    # tracks[n]: games that ended with the track at n (0 to 10).
    tracks: list[int]
    tricks: int
    effects: dict[str, int]
    # rounds[r]: (games that played round r, of which the Shadow led its first trick).
    rounds: dict[int, tuple[int, int]]


def _count_if(condition: ColumnElement[bool]) -> ColumnElement[Any]:
    return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)


def playtest(against_computer: bool = False) -> Playtest:
    """Win rates, final tracks, effects and round leaders, added up over finished games.

    Over the games between people, or with ``against_computer`` over the games
    against the computer. One pass over the figures, grouped by how each game
    ended; the groups (at most a few dozen) are added up here.
    """
    figures = GameFigures
    seat = figures.computer_seat
    which = seat.is_not(None) if against_computer else seat.is_(None)
    groups = db.session.execute(
        select(
            figures.complete,
            figures.winner,
            figures.track,
            func.count(),
            func.sum(figures.tricks),
            func.sum(figures.reset),
            func.sum(figures.swap),
            func.sum(figures.steal),
            func.sum(figures.two_elixirs),
            func.count(figures.round2_leader),
            _count_if(figures.round2_leader == "shadow"),
            func.count(figures.round3_leader),
            _count_if(figures.round3_leader == "shadow"),
        )
        .where(which)
        .group_by(figures.complete, figures.winner, figures.track)
    ).all()
    complete = [group for group in groups if group[0]]
    counts = [group[3:] for group in complete]
    total = [sum(group[i] for group in counts) for i in range(10)]
    games, tricks, reset, swap, steal, two, r2, r2_shadow, r3, r3_shadow = total
    tracks = [0] * 11
    for group in complete:
        tracks[group[2]] += group[3]
    return Playtest(
        games=games,
        cut_short=sum(group[3] for group in groups if not group[0]),
        keeper_wins=sum(group[3] for group in complete if group[1] == "keeper"),
        shadow_wins=sum(group[3] for group in complete if group[1] == "shadow"),
        tracks=tracks,
        tricks=tricks,
        effects={"reset": reset, "swap": swap, "steal": steal, "two_elixirs": two},
        rounds={2: (r2, r2_shadow), 3: (r3, r3_shadow)},
    )


@dataclass(frozen=True)
class LevelResults:
    """Games against the computer at one level, played to the end, and who won them."""

    level: str
    # The computer's seat: the person played the other.
    computer_seat: str
    games: int
    person_wins: int


def computer_results() -> list[LevelResults]:
    """The games against the computer played to the end, by level and the computer's seat."""
    figures = GameFigures
    rows = db.session.execute(
        select(
            figures.computer_level,
            figures.computer_seat,
            func.count(),
            _count_if(figures.winner != figures.computer_seat),
        )
        .where(figures.computer_seat.is_not(None), figures.complete)
        .group_by(figures.computer_level, figures.computer_seat)
    ).all()
    results = [LevelResults(level, seat, games, wins) for level, seat, games, wins in rows]
    order = list(LEVELS)
    return sorted(results, key=lambda row: (order.index(row.level), row.computer_seat))


@dataclass(frozen=True)
class Statistics:
    """Everything the statistics page shows."""

    weeks: list[Week]
    endings: Endings
    moves: MoveTimes
    # Games between people.
    playtest: Playtest
    # Games against the computer.
    computer: Playtest
    levels: list[LevelResults]


def statistics(now: datetime) -> Statistics:
    """Add everything up (reads only)."""
    return Statistics(
        weeks=weekly(now),
        endings=endings(),
        moves=move_times(),
        playtest=playtest(),
        computer=playtest(against_computer=True),
        levels=computer_results(),
    )
