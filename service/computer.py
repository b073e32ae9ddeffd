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
A move that fails is logged and left for a minute; the other games, and the
mail, go on.
"""

from __future__ import annotations

import logging
import random
import time
from datetime import datetime, timedelta

from flask import current_app
from sqlalchemy import or_, select
from sqlalchemy.exc import DBAPIError

from . import bots, games
from .models import Game, Player, db, utcnow
from .rules import seat_view, to_act
from .unit_of_work import transaction

log = logging.getLogger(__name__)

# Seats looked at per round, and rounds per pass: a computer that wins a trick leads the
# next one at once when there is no delay, so a pass goes round until nothing is due.
BATCH = 100
MAX_ROUNDS = 50
# Seconds before a move that failed is tried again.
RETRY_AFTER = 60.0


def due(now: datetime, delay: float) -> list[tuple[int, int]]:
    """The computer's seats that owe a move in a game in play that has not moved for ``delay``.

    Returns (player id, game version) pairs, the game that waited longest first.
    """
    return [
        (player_id, version)
        for player_id, version in db.session.execute(
            select(Player.id, Game.version)
            .join(Game, Game.id == Player.game_id)
            .where(
                Player.computer_level.is_not(None),
                Game.status == "active",
                or_(Game.to_act == Player.seat, Game.to_act == "both"),
                Game.updated_at <= now - timedelta(seconds=delay),
            )
            .order_by(Game.updated_at, Game.id)
            .limit(BATCH)
        )
    ]


def rng_for(game: Game) -> random.Random:
    """The computer's random source for its move at the game's current version."""
    return random.Random(f"{game.id}:{game.version}")


def play(player_id: int) -> bool:
    """Make the move the computer owes in this seat, in a transaction of its own.

    The choice is made from the seat's view at the version read, then applied
    by :func:`service.games.apply_move`, which locks the game and refuses the
    move if the game has moved on meanwhile. Returns whether a move was made.
    """
    try:
        with transaction():
            player = db.session.get(Player, player_id)
            if player is None or player.computer_level is None:
                return False
            game = db.session.get(Game, player.game_id, populate_existing=True)
            if game is None or game.status != "active" or player.seat not in to_act(game.state):
                return False
            view = seat_view(game.state, player.seat)
            action = bots.choose(player.computer_level, view, rng_for(game))
            games.apply_move(player.id, game.version, action)
            log.info("game %d: the computer (%s) made its move", game.id, player.computer_level)
    except games.StaleVersion:
        return False  # the game moved on while the computer chose: the next pass sees it
    return True


class ComputerMoves:
    """The computer's moves, made on each pass of the mail worker (see the module's notes).

    A seat whose move failed is not tried again at the same version for
    :data:`RETRY_AFTER` seconds, so a fault that persists is logged once a
    minute rather than on every pass.
    """

    def __init__(self, retry_after: float = RETRY_AFTER) -> None:
        self.retry_after = retry_after
        self.made = 0
        # Player id of a failed move: the game's version then, and when to try again.
        self._failed: dict[int, tuple[int, float]] = {}

    def __call__(self, now: datetime | None = None) -> int:
        """Make every move the computer owes that is due; returns how many were made.

        A database that is unavailable is raised (the worker waits for it); any
        other failure is that one move's, logged, and the others go on.
        """
        delay = current_app.config["BOT_DELAY_SECONDS"]
        made = 0
        for _ in range(MAX_ROUNDS):
            with transaction():
                seats = [seat for seat in due(now or utcnow(), delay) if self._may_try(*seat)]
            moved = sum(self._play(*seat) for seat in seats)
            made += moved
            if not moved:
                break
        self.made += made
        return made

    def _may_try(self, player_id: int, version: int) -> bool:
        failed = self._failed.get(player_id)
        return failed is None or failed[0] != version or failed[1] <= time.monotonic()

    def _play(self, player_id: int, version: int) -> bool:
        try:
            return play(player_id)
        except DBAPIError:
            raise
        except Exception:
            db.session.rollback()
            self._failed[player_id] = (version, time.monotonic() + self.retry_after)
            log.exception(
                "the computer's move as player %d failed; tried again in %.0fs, the rest goes on",
                player_id,
                self.retry_after,
            )
            return False
