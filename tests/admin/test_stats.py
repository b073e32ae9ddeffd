"""The statistics agree with figures the test works out on its own from games it played.

The statistics read no email: the games are played without the emails of their moves
but the last (``play(..., emails=False)``).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from datetime import UTC, datetime, timedelta
from html import unescape
from typing import Any

import pytest
from sqlalchemy import select, update

from service import deadlines, figures, games, invitations
from service.admin import stats
from service.admin.routes import duration
from service.models import Event, Game, GameFigures, db, utcnow
from service.rules import is_elixir
from service.rules.cards import suit_of
from service.unit_of_work import transaction

from ..helpers import request_invitation
from .conftest import play
from .test_games import new_game

pytestmark = pytest.mark.both_backends


EFFECT_OF_SUIT = {"H": "reset", "D": "swap", "C": "steal"}


def table(html: str, table_id: str) -> list[list[str]]:
    """The body rows of the table with this id, as the text of their cells."""
    found = re.search(rf'<table[^>]*id="{table_id}">.*?<tbody>(.*?)</tbody>', html, re.S)
    assert found, table_id
    return [
        [" ".join(unescape(re.sub(r"<[^>]+>", " ", cell)).split()) for cell in cells]
        for cells in (
            re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)
            for row in re.findall(r"<tr>(.*?)</tr>", found.group(1), re.S)
        )
    ]


def effect(trick: dict[str, Any]) -> str | None:
    """A trick's effect, worked out from its two cards (not from the engine's record)."""
    cards = [entry["card"] for entry in trick["cards"]]
    elixirs = [card for card in cards if is_elixir(card)]
    if len(elixirs) == 2:
        return "two_elixirs"
    if len(elixirs) == 1:
        colour = next(card for card in cards if not is_elixir(card))
        return EFFECT_OF_SUIT[suit_of(colour)]
    return None


def shadow_led(state: dict[str, Any], round_number: int) -> bool | None:
    """Whether the rules had the Shadow lead this round: the track stood at 5 or more."""
    if len(state["rounds"]) < round_number:
        return None
    before = sum(result["moved"] for result in state["rounds"][: round_number - 1])
    return min(before, 10) >= 5


@pytest.mark.slow
def test_the_statistics_page_matches_games_played_to_the_end(app, admin) -> None:
    finals = [
        play(
            app,
            new_game(app, f"k{n}@example.com", f"s{n}@example.com", seed=100 + n),
            seed=n,
            emails=False,
        )
        for n in range(6)
    ]
    # Games that did not end by the rules: none of them is a playtest figure.
    cancelled = new_game(app, "c1@example.com", "c2@example.com", seed=1)
    forfeited = new_game(app, "f1@example.com", "f2@example.com", seed=2)
    abandoned = new_game(app, "a1@example.com", "a2@example.com", seed=3)
    timed_out = new_game(app, "t1@example.com", "t2@example.com", seed=4)
    play(app, forfeited, seed=9, until=lambda s: s["round"] == 2, emails=False)
    play(app, timed_out, seed=9, until=lambda s: len(games.to_act(s)) == 1, emails=False)
    new_game(app, "live1@example.com", "live2@example.com", seed=5)
    with app.app_context():
        with transaction():
            games.cancel_game(cancelled, actor="ada")
            games.declare_forfeit(forfeited, "keeper", actor="ada")
        late = datetime.now(UTC) - timedelta(minutes=1)
        db.session.execute(
            update(Game).where(Game.id.in_([abandoned, timed_out])).values(deadline=late)
        )
        db.session.commit()
        assert sorted(deadlines.sweep().expired) == [abandoned, timed_out]

    html = admin.get("/admin/stats").get_data(as_text=True)
    played = len(finals)
    assert f'<strong id="played">{played}</strong>' in html
    assert "forfeit or a resignation (1)" in html

    wins = Counter(final["winner"] for final in finals)
    assert table(html, "wins") == [
        ["Keeper", str(wins["keeper"]), f"{100 * wins['keeper'] / played:.1f}%"],
        ["Shadow", str(wins["shadow"]), f"{100 * wins['shadow'] / played:.1f}%"],
    ]
    tracks = Counter(final["track"] for final in finals)
    assert [row[:2] for row in table(html, "tracks")] == [
        [str(n), str(tracks[n])] for n in range(11)
    ]
    fired = Counter(effect(trick) for final in finals for trick in final["history"])
    tricks = sum(len(final["history"]) for final in finals)
    assert [row[0] for row in table(html, "effects")] == [
        "Reset (♥)",
        "Swap (♦)",
        "Steal (♣)",
        "Two elixirs: no effect",
    ]
    assert [row[1:] for row in table(html, "effects")] == [
        [str(fired[name]), f"{fired[name] / played:.2f}", f"{100 * fired[name] / tricks:.1f}%"]
        for name in ("reset", "swap", "steal", "two_elixirs")
    ]
    leaders = table(html, "leaders")
    for row, number in zip(leaders, (2, 3), strict=True):
        led = [shadow_led(final, number) for final in finals]
        rounds_played = sum(flag is not None for flag in led)
        assert row[:3] == [str(number), str(rounds_played), str(sum(flag is True for flag in led))]
    # Both kinds of timeout, and the counts of every status.
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())
    assert "Timeouts: 2 (" in text and "1 lost by one player's timeout, 1 abandoned" in text
    assert table(html, "counts") == [["0", "1", str(played + 1), "0", "1", "1", "1"]]


def test_the_timeout_rate_counts_the_games_that_started_and_ended(app, admin) -> None:
    """A game cancelled before it started (an invitation never accepted, a waiting game an
    admin cancelled) is no ended game of the rate, as it is none of the weekly table's."""
    abandoned = new_game(app, "a1@example.com", "a2@example.com", seed=1)
    forfeited = new_game(app, "f1@example.com", "f2@example.com", seed=2)
    cancelled = new_game(app, "c1@example.com", "c2@example.com", seed=3)
    waiting = [
        new_game(app, f"w{n}@example.com", f"v{n}@example.com", seed=n, waiting=True)
        for n in (4, 5)
    ]
    with app.app_context():
        with transaction():
            games.declare_forfeit(forfeited, "keeper", actor="ada")
            games.cancel_game(cancelled, actor="ada")
            games.cancel_game(waiting[0], actor="ada")
            games.drop_waiting_game(waiting[1], "the invitation expired")
        late = datetime.now(UTC) - timedelta(minutes=1)
        db.session.execute(update(Game).where(Game.id == abandoned).values(deadline=late))
        db.session.commit()
        assert deadlines.sweep().expired == [abandoned]

    html = admin.get("/admin/stats").get_data(as_text=True)
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())
    assert "Timeouts: 1 (33.3% of the 3 games that started and ended;" in text
    this_week = re.search(
        r'<table class="list figures weeks">.*?<tbody>\s*<tr>(.*?)</tr>', html, re.S
    )
    assert this_week
    cells = re.findall(r"<td>(\d+)</td>", this_week.group(1))
    # Started, against the computer, finished, timed out, cancelled: the same three games.
    assert cells == ["3", "0", "1", "0", "1", "1"]


def test_median_time_per_move(app, admin) -> None:
    ids = [new_game(app, f"k{n}@example.com", f"s{n}@example.com", seed=n) for n in range(3)]
    for n, game_id in enumerate(ids):
        play(
            app,
            game_id,
            seed=n,
            until=lambda s, n=n: s["phase"] == "play" and s["trick"] == n + 2,
            emails=False,
        )
    start = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    gaps = []
    with app.app_context():
        for n, game_id in enumerate(ids):
            moves = db.session.scalars(
                select(Event).where(Event.game_id == game_id, Event.kind == "move")
            ).all()
            # Game n moves every (n + 1) * 7 minutes, and once took a day.
            moments = [start + timedelta(minutes=7 * (n + 1) * k) for k in range(len(moves))]
            moments[-1] += timedelta(days=1)
            for event, moment in zip(moves, moments, strict=True):
                event.created_at = moment
            gaps += [(b - a).total_seconds() for a, b in zip(moments, moments[1:], strict=False)]
        db.session.commit()
        assert stats.move_times().median_seconds == pytest.approx(statistics.median(gaps))
        assert stats.move_times().intervals == len(gaps)
        assert stats.move_times(window=2).intervals == 1
    html = admin.get("/admin/stats").get_data(as_text=True)
    expected = duration(statistics.median(gaps))
    assert f"Median time per move: <strong>{expected}</strong>" in html


def test_weeks_start_on_monday_in_utc(app) -> None:
    now = datetime(2026, 3, 11, 15, 0, tzinfo=UTC)  # a Wednesday
    monday = datetime(2026, 3, 9, tzinfo=UTC)
    dates = {
        "this week's first instant": (monday, "finished"),
        "last week's last instant": (monday - timedelta(microseconds=1), "timed_out"),
        "two weeks ago": (monday - timedelta(days=10), "abandoned"),
        "this week, cancelled": (now, "cancelled"),
        "long ago": (monday - timedelta(weeks=30), "finished"),
    }
    with app.app_context():
        with transaction():
            for n, (moment, status) in enumerate(dates.values()):
                game = games.create_game(
                    games.Seating(f"k{n}@example.com", "K"),
                    games.Seating(f"s{n}@example.com", "S"),
                )
                game.status, game.started_at, game.finished_at = status, moment, moment
            waiting = games.create_game(
                games.Seating("w1@example.com", "W"),
                games.Seating("w2@example.com", "V"),
                waiting=True,
            )
            waiting.created_at = monday
        weeks = stats.weekly(now, weeks=3)
    assert [week.start.isoformat() for week in weeks] == ["2026-03-09", "2026-03-02", "2026-02-23"]
    assert [(w.started, w.finished, w.timeouts, w.cancelled) for w in weeks] == [
        (2, 1, 0, 1),
        (1, 0, 1, 0),
        (1, 0, 1, 0),
    ]


def test_a_declined_invitation_is_no_game_started_or_cancelled(app) -> None:
    with app.app_context():
        started = []
        for opponent, accept in (("bob@example.com", False), ("cat@example.com", True)):
            with transaction():
                invitation = request_invitation(opponent)
                invitations.confirm(invitation)
                if invitations.respond(invitation, accept=accept) is not None:
                    started.append(invitation.game_id)
        statuses = sorted(db.session.scalars(select(Game.status)))
        assert statuses == ["active", "cancelled"]
        (this_week,) = stats.weekly(utcnow(), weeks=1)
        assert (this_week.started, this_week.cancelled) == (1, 0)
        # Cancelled once in play, the accepted game counts as cancelled.
        with transaction():
            games.cancel_game(started[0], actor="ada")
        (this_week,) = stats.weekly(utcnow(), weeks=1)
        assert (this_week.started, this_week.finished, this_week.cancelled) == (1, 0, 1)


def test_figures_are_written_when_a_game_finishes(app) -> None:
    ids = [new_game(app, f"k{n}@example.com", f"s{n}@example.com", seed=n) for n in range(3)]
    for n, game_id in enumerate(ids):
        play(app, game_id, seed=n, emails=False)
    forfeited = new_game(app, "f1@example.com", "f2@example.com", seed=9)
    new_game(app, "live1@example.com", "live2@example.com", seed=10)
    with app.app_context():
        with transaction():
            games.declare_forfeit(forfeited, "shadow", actor="ada")
        rows = {row.game_id: row for row in db.session.scalars(select(GameFigures))}
        assert sorted(rows) == [*ids, forfeited]
        assert rows[forfeited].complete is False and rows[ids[0]].complete is True
        for game_id in ids:
            assert rows[game_id].finished_at == db.session.get(Game, game_id).finished_at
        assert stats.playtest().games == 3 and stats.playtest().cut_short == 1
        assert stats.summarize_finished() == (0, False)


def test_missing_figures_are_filled_in_by_the_command(app) -> None:
    ids = [new_game(app, f"k{n}@example.com", f"s{n}@example.com", seed=n) for n in range(3)]
    with app.app_context():
        with transaction():
            for game_id in ids:
                games.declare_forfeit(game_id, "shadow", actor="ada")
        db.session.execute(GameFigures.__table__.delete())
        db.session.commit()
        assert stats.summarize_finished(limit=2) == (2, True)
        assert sorted(db.session.scalars(select(GameFigures.game_id)).all()) == ids[:2]
    result = app.test_cli_runner().invoke(args=["admin", "update-stats"])
    assert result.exit_code == 0 and result.stdout == "summarized 1 finished game(s)\n"
    with app.app_context():
        assert sorted(db.session.scalars(select(GameFigures.game_id)).all()) == ids


def test_game_figures_of_a_state() -> None:
    def trick(round_number: int, number: int, leader: str, effect: str | None) -> dict[str, Any]:
        return {"round": round_number, "trick": number, "leader": leader, "effect": effect}

    state = {
        "phase": "over",
        "winner": "shadow",
        "track": 10,
        "history": [
            trick(1, 1, "keeper", None),
            trick(1, 2, "shadow", "swap"),
            trick(1, 3, "shadow", "none"),
            trick(2, 1, "shadow", "steal"),
            trick(2, 2, "keeper", "steal"),
            trick(2, 3, "keeper", "reset"),
        ],
    }
    assert figures.game_figures(state) == {
        "complete": True,
        "winner": "shadow",
        "track": 10,
        "tricks": 6,
        "reset": 1,
        "swap": 1,
        "steal": 2,
        "two_elixirs": 1,
        "round2_leader": "shadow",
        "round3_leader": None,
    }


def test_figures_are_kept_for_a_minute_unless_asked_again(app, admin) -> None:
    html = admin.get("/admin/stats").get_data(as_text=True)
    assert '<strong id="played">0</strong>' in html
    play(app, new_game(app, "k@example.com", "s@example.com", seed=1), seed=1, emails=False)
    assert '<strong id="played">0</strong>' in admin.get("/admin/stats").get_data(as_text=True)
    html = admin.get("/admin/stats?refresh=1").get_data(as_text=True)
    assert '<strong id="played">1</strong>' in html
