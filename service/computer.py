"""The computer's moves: found and made by the mail worker, one transaction each.

A seat the computer plays (``Player.computer_level``) owes moves like any
other. On each pass the mail worker calls a :class:`ComputerMoves`, which finds
the games in play where the computer owes a move and nothing has moved for
``BOT_DELAY_SECONDS``, asks the computer player of the seat's level
(:mod:`service.bots`) for its move from the seat's view, and applies it with
:func:`service.games.apply_move`, the function a person's move goes through:
under the game's row lock, against the version the computer saw, with the
event, the emails and the live page update it causes. In an exchange or swap
the computer chooses its half as soon as it is due, whether or not the person
has chosen theirs.

The computer's random source is seeded from the game's id and version, so a
game against it replays the same, and two workers that choose at once choose
the same move (the slower one is refused as stale, and tries nothing else).
A level whose code fails, or answers a move the rules refuse, is logged and
replaced by the ``random`` level for that move (:func:`choice`): it would fail
the same way at every try. A move that fails otherwise is logged and left for a
minute; the other games, and the mail, go on. A pass spends a few seconds at
most on the computer's moves (:data:`PASS_BUDGET`), so the mail and the
worker's heartbeat never wait long behind them; the moves still due are made on
the next passes.
"""

from __future__ import annotations

import hmac
import logging
import random
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import NamedTuple, TypedDict

from flask import current_app
from sqlalchemy import ColumnElement, literal, or_, select, tuple_

from . import bots, games
from .errors import is_outage
from .models import Game, Player, db, utcnow
from .rules import apply, seat_view, to_act
from .unit_of_work import transaction

log = logging.getLogger(__name__)

# Seats read at a time, and rounds per pass: a computer that wins a trick leads the
# next one at once when there is no delay, so a pass goes round until nothing is due.
BATCH = 100
MAX_ROUNDS = 50
# Seconds before a move that failed is tried again.
RETRY_AFTER = 60.0
# Seconds of computer moves in one pass of the worker: then it drains the mail and writes
# its heartbeat, and the moves still due are made on the next passes.
PASS_BUDGET = 5.0
# How long past BOT_DELAY_SECONDS a move the computer owes counts as late: no mail worker is
# passing to make it, and the person's page says so.
LATE_AFTER = timedelta(minutes=2)


class Due(NamedTuple):
    """A computer's seat that owes a move, and where its game stands in the order of waiting."""

    player_id: int
    version: int
    updated_at: datetime
    game_id: int


def due(now: datetime, delay: float, after: Due | None = None) -> list[Due]:
    """The computer's seats that owe a move in a game in play that has not moved for ``delay``.

    At most :data:`BATCH` of them, the game that waited longest first; with
    ``after``, those that come after that one in this order.
    """
    query = (
        select(Player.id, Game.version, Game.updated_at, Game.id)
        .join(Game, Game.id == Player.game_id)
        .where(*owes_since(now - timedelta(seconds=delay)))
        .order_by(Game.updated_at, Game.id)
        .limit(BATCH)
    )
    if after is not None:
        bound = tuple_(literal(after.updated_at, Game.updated_at.type), literal(after.game_id))
        query = query.where(tuple_(Game.updated_at, Game.id) > bound)
    return [Due(*row) for row in db.session.execute(query)]


def owes_since(changed: datetime) -> tuple[ColumnElement[bool], ...]:
    """Where a computer's seat (a :class:`Player` joined to its :class:`Game`) owes a move in a
    game in play that has not changed since ``changed``."""
    return (
        Player.computer_level.is_not(None),
        Game.status == "active",
        or_(Game.to_act == Player.seat, Game.to_act == "both"),
        Game.updated_at <= changed,
    )


def longest_owed(now: datetime) -> datetime | None:
    """Since when the computer's longest-owed move has been owed (its game's last change);
    ``None`` while it owes none. The mail worker makes these moves: one owed for long says
    the worker is not passing."""
    seats = due(now, 0.0)
    return seats[0].updated_at if seats else None


def late_from(changed: datetime) -> datetime:
    """When a move the computer owes in a game that last changed at ``changed`` counts as
    late (:data:`LATE_AFTER`): the move page of its opponent then says it is awaited."""
    return changed + _late_after()


def late_before(now: datetime) -> datetime:
    """The last change of a game whose move the computer owes that makes the move late at
    ``now``: :func:`late_from` turned round."""
    return now - _late_after()


def _late_after() -> timedelta:
    """How long after its game's last change a move the computer owes is late."""
    return timedelta(seconds=current_app.config["BOT_DELAY_SECONDS"]) + LATE_AFTER


class Lateness(TypedDict):
    """What a move page says of a move the computer owes (:func:`lateness`)."""

    computer_late_at: str | None
    computer_late: bool


def lateness(changed: datetime, now: datetime, *, against_computer: bool) -> Lateness:
    """What a move page against the computer says of a move it owes since ``changed``: from
    when it counts as late (``computer_late_at``, ISO; ``None`` against a person) and
    whether it is (``computer_late``, which changes with the time)."""
    if not against_computer:
        return Lateness(computer_late_at=None, computer_late=False)
    late = late_from(changed)
    return Lateness(computer_late_at=late.isoformat(timespec="seconds"), computer_late=now >= late)


def rng_for(game_id: int, version: int) -> random.Random:
    """The computer's random source for its move at a version of a game.

    The same at each try (a pass that failed chooses the same move again), and
    keyed with the service's secret key: a player knows the game's id and
    version (both are in their view) and may read the computer's code, and
    replaying its random choices against every hand it could hold would tell
    them its hand.
    """
    secret = current_app.config["SECRET_KEY"]
    key = secret.encode() if isinstance(secret, str) else secret
    return random.Random(hmac.digest(key, f"computer:{game_id}:{version}".encode(), "sha256"))


def choice(game: Game, player: Player) -> bots.Action:
    """The move the computer's level chooses for ``player`` from its seat's view; a move of the
    ``random`` level when the level's code fails or answers a move the rules refuse.

    The same view and random source fail the same way at every try: without another
    move, the game would wait for the computer for good. The fault is logged as an error.
    """
    level = player.computer_level
    assert level is not None, "a seat the computer plays"
    view = seat_view(game.state, player.seat)
    try:
        action = bots.choose(level, view, rng_for(game.id, game.version))
        apply(game.state, player.seat, action)  # the engine refuses what the level got wrong
    except Exception:
        log.exception(
            "game %d: the computer (%s) could not choose its move; it plays one of the random "
            "level instead",
            game.id,
            level,
        )
        return bots.choose("random", view, rng_for(game.id, game.version))
    return action


def play(player_id: int) -> bool:
    """Make the move the computer owes in this seat, in a transaction of its own.

    The choice is made from the seat's view at the version read, then applied
    by :func:`service.games.apply_move`, which locks the game and refuses the
    move if the game has moved on or ended meanwhile. Returns whether a move was made.
    """
    try:
        with transaction():
            player = db.session.get(Player, player_id)
            if player is None or player.computer_level is None:
                return False
            game = db.session.get(Game, player.game_id, populate_existing=True)
            if game is None or game.status != "active" or player.seat not in to_act(game.state):
                return False
            action = choice(game, player)
            games.apply_move(player.id, game.version, action)
            log.info("game %d: the computer (%s) made its move", game.id, player.computer_level)
    except games.StaleVersion:
        return False  # the game moved on while the computer chose: the next pass sees it
    except games.GameClosed:
        return False  # it ended while the computer chose (cancelled, timed out, won meanwhile)
    return True


class ComputerMoves:
    """The computer's moves, made on each pass of the mail worker (see the module's notes).

    A seat whose move failed is not tried again at the same version for
    :data:`RETRY_AFTER` seconds, so a fault that persists is logged once a
    minute rather than on every pass; a failure is forgotten once that time is
    up, so a worker that runs for months keeps only the last minute's. A pass
    stops trying moves once it has spent ``budget`` seconds on them, after its
    first try at least. ``clock`` is a monotonic clock in seconds.
    """

    def __init__(
        self,
        retry_after: float = RETRY_AFTER,
        budget: float = PASS_BUDGET,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.retry_after = retry_after
        self.budget = budget
        self.clock = clock
        self.made = 0
        # Player id of a failed move: the game's version then, and when to try again.
        self._failed: dict[int, tuple[int, float]] = {}

    @property
    def held_back(self) -> int:
        """How many seats' moves failed lately and wait to be tried again."""
        return len(self._failed)

    def __call__(self, now: datetime | None = None) -> int:
        """Make the moves the computer owes that are due, for the pass's budget of time;
        returns how many were made.

        A database that is unavailable is raised (the worker waits for it); any
        other failure, a database error that is no outage too, is that one
        move's, logged, and the others go on.
        """
        delay = current_app.config["BOT_DELAY_SECONDS"]
        started = self.clock()
        self._failed = {
            player: failure for player, failure in self._failed.items() if failure[1] > started
        }
        until = started + self.budget
        made = 0
        for _ in range(MAX_ROUNDS):
            moved = self._round(now or utcnow(), delay, until)
            made += moved
            if not moved or self.clock() >= until:
                break
        self.made += made
        return made

    def _round(self, now: datetime, delay: float, until: float) -> int:
        """Try each seat that is due once, oldest first, until the monotonic clock reads
        ``until``; returns how many moves were made.

        The seats are read a batch at a time, on past those whose move failed
        lately: however many games fail, the others behind them still move.
        """
        made = 0
        after = None
        while True:
            with transaction():
                seats = due(now, delay, after)
            for seat in seats:
                if self._may_try(seat):
                    made += self._play(seat)
                    if self.clock() >= until:
                        return made
            if len(seats) < BATCH:
                return made
            after = seats[-1]

    def _may_try(self, seat: Due) -> bool:
        failed = self._failed.get(seat.player_id)
        return failed is None or failed[0] != seat.version or failed[1] <= self.clock()

    def _play(self, seat: Due) -> bool:
        try:
            return play(seat.player_id)
        except Exception as exc:
            if is_outage(exc):
                raise
            db.session.rollback()
            self._failed[seat.player_id] = (seat.version, self.clock() + self.retry_after)
            log.exception(
                "the computer's move as player %d failed; tried again in %.0fs, the rest goes on",
                seat.player_id,
                self.retry_after,
            )
            return False
