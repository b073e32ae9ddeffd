"""The deadline sweep: a reminder when a day is left, a timeout when the time is up,
the end of invitations left unanswered, the daily digests of the addresses that asked
for one, and the housekeeping of the replies read, the emails sent and the games never
started long ago.

Both queries (the reminders' in :func:`service.games.reminders_due`, beside the window
it reads again under each game's lock) use the (status, deadline) index: their cost
grows with the games in play near their deadline, never with the games already
finished. The sweep owns its transactions: one for each game it changes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from flask import current_app
from sqlalchemy import select

from . import games, homes, invitations, metrics
from .errors import is_outage, outage_reason
from .mail import outbox
from .models import Game, db, utcnow
from .replies import inbound
from .unit_of_work import transaction

log = logging.getLogger(__name__)

# PostgreSQL's errors for one row's lock, or one statement, that waited too long
# (lock_not_available, query_canceled): that game's, left for the next sweep.
WAITED_TOO_LONG = frozenset({"55P03", "57014"})


@dataclass
class SweepResult:
    """What one sweep did."""

    reminded: list[int]
    expired: list[int]
    digests: list[str] = field(default_factory=list)
    invitations_expired: list[int] = field(default_factory=list)
    replies_forgotten: int = 0
    mail_forgotten: int = 0
    unplayed_forgotten: int = 0


def sweep(now: datetime | None = None) -> SweepResult:
    """Send due reminders, then end the games whose deadline has passed and the invitations
    left unanswered, then the digests; forget the replies read long ago
    (:func:`service.replies.inbound.prune`) and the emails sent long ago
    (:func:`service.mail.outbox.prune`, after ``OUTBOX_DAYS``) and the games that never
    started (:func:`service.invitations.prune`, after ``UNPLAYED_DAYS``).

    Each game is changed in a transaction of its own: one game's lock is held
    only while that game is handled, and a game that fails undoes no other.
    """
    now = now or utcnow()
    with transaction():
        soon = games.reminders_due(now)
        late = db.session.scalars(
            select(Game.id).where(Game.status == "active", Game.deadline <= now)
        ).all()
        unanswered = invitations.unanswered(now)
    reminded = _each(soon, games.remind, now, "game")
    expired = _each(late, games.expire, now, "game")
    invitations_expired = _each(unanswered, invitations.expire, now, "invitation")
    with transaction():
        digests = homes.send_digests(now)
    with transaction():
        forgotten = inbound.prune(now)
    with transaction():
        mail_forgotten = outbox.prune(now, current_app.config["OUTBOX_DAYS"])
    with transaction():
        unplayed = invitations.prune(now, current_app.config["UNPLAYED_DAYS"])
    metrics.SWEEPS.inc()
    return SweepResult(
        reminded, expired, digests, invitations_expired, forgotten, mail_forgotten, unplayed
    )


def _each(
    ids: Sequence[int], step: Callable[[int, datetime], object | None], now: datetime, what: str
) -> list[int]:
    """Run ``step`` on each game or invitation (``what``), one transaction each; returns
    those it changed.

    One that fails is left as it was, for the next sweep, and the others go on: a
    game whose row another transaction holds too long, or one the step meets a
    fault in, must not hold back every other game's timeout and the digests. A
    database that is unavailable ends the sweep, which waits for it.
    """
    changed = []
    for one in ids:
        try:
            with transaction():
                if step(one, now) is not None:
                    changed.append(one)
        except Exception as exc:
            if getattr(getattr(exc, "orig", None), "sqlstate", None) in WAITED_TOO_LONG:
                log.warning("sweep: %s %d left for the next: %s", what, one, outage_reason(exc))
            elif is_outage(exc):
                raise
            else:
                log.exception("sweep: %s %d failed, left for the next", what, one)
    return changed
