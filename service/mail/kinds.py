"""The kinds of email the service sends: one entry each, in one registry.

A kind's name is the name of its templates (``templates/email/<name>.txt``,
which sets the subject, and ``.html``) and of its snapshots in the tests. Its
entry says how the outbox and the worker treat it; the code that sends the
email registers it, so the mail package knows nothing of games. A new kind of
email is a :class:`Kind` registered beside the code that sends it, and its two
templates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..models import OutboxMessage


def always(message: OutboxMessage) -> bool:
    """Every message of a kind that has no reason to be dropped is still wanted."""
    return True


@dataclass(frozen=True)
class Kind:
    """One kind of email, and how the outbox and the worker treat it."""

    name: str
    # Whether a newer email of this kind to a player replaces their unsent one: the outbox
    # keeps at most one waiting, and an admin cannot queue an older one again behind it.
    replaces_queued: bool = False
    # Asked by the worker just before sending: does the message still matter? A message that
    # does not is skipped, not sent.
    still_wanted: Callable[[OutboxMessage], bool] = always
    # For a kind queued bare, as a request: writes the email into the message when it is
    # sent, or returns False when there is none to send (the message is skipped).
    write: Callable[[OutboxMessage], bool] | None = None


KINDS: dict[str, Kind] = {}


def register(*kinds: Kind) -> None:
    """Add kinds of email to the registry; a name registered twice raises ``ValueError``."""
    for kind in kinds:
        if kind.name in KINDS:
            raise ValueError(f"the email kind {kind.name!r} is already registered")
        KINDS[kind.name] = kind


def kind(name: str) -> Kind:
    """The registered kind ``name``; raises ``LookupError`` for a kind nobody registered."""
    try:
        return KINDS[name]
    except KeyError:
        raise LookupError(f"no email kind {name!r}") from None
