"""The audit trail: every admin action, across games, in the transaction that makes it.

The game service writes an entry for each action on a game (beside the game's
own log); the dashboard writes one for each action on the outbox, and one for
each change to an admin account, its own two-factor sign-in included. The
dashboard's audit page lists them (:mod:`service.admin.listing`).
"""

from __future__ import annotations

import logging

from .logs import without_addresses
from .models import AdminAction, db

log = logging.getLogger(__name__)

# Who did what was done at the command line (``flask admin``, ``flask games``), as the
# trail names it: never an admin of the dashboard.
COMMAND_LINE = "the command line"


def record(
    admin: str,
    action: str,
    note: str,
    *,
    game_id: int | None = None,
    message_id: int | None = None,
) -> AdminAction:
    """Write that ``admin`` did ``action`` (caller's transaction); ``note`` says what, in words."""
    entry = AdminAction(
        admin=admin, action=action, note=note, game_id=game_id, message_id=message_id
    )
    db.session.add(entry)
    db.session.flush()
    log.info("admin %s: %s (%s)", admin, without_addresses(note), action)
    return entry
