"""The deadline sweep: a reminder when a day is left, a timeout when the time is up.

Both queries use the (status, deadline) index: their cost grows with the games
in play near their deadline, never with the games already finished.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, or_, select

from . import games, metrics
from .models import Game, db, utcnow

REMINDER_BEFORE = timedelta(hours=24)
# With one day per move, every deadline is already within a day: remind halfway instead.
SHORT_REMINDER_BEFORE = timedelta(hours=12)


@dataclass
class SweepResult:
    """What one sweep did."""

    reminded: list[int]
    expired: list[int]


def sweep(now: datetime | None = None) -> SweepResult:
    """Send due reminders, then end the games whose deadline has passed."""
    now = now or utcnow()
    soon = db.session.scalars(
        select(Game.id).where(
            Game.status == "active",
            Game.deadline > now,
            Game.reminded.is_(False),
            or_(
                and_(Game.days_per_move > 1, Game.deadline <= now + REMINDER_BEFORE),
                and_(Game.days_per_move == 1, Game.deadline <= now + SHORT_REMINDER_BEFORE),
            ),
        )
    ).all()
    late = db.session.scalars(
        select(Game.id).where(Game.status == "active", Game.deadline <= now)
    ).all()
    db.session.rollback()
    reminded = [game_id for game_id in soon if games.remind(game_id, now)]
    expired = [game_id for game_id in late if games.expire(game_id, now)]
    metrics.SWEEPS.inc()
    return SweepResult(reminded=reminded, expired=expired)
