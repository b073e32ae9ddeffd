"""The kinds of email the service sends: one entry each, in one registry.

A kind's name is the name of its templates (``templates/email/<name>.txt``,
which sets the subject, and ``.html``) and of its snapshots in the tests. Its
entry says how the outbox and the worker treat it, and how a queued message of
the kind is written; the code that sends the email registers it, so the mail
package knows nothing of games. A new kind of email is a :class:`Kind`
registered beside the code that sends it, and its two templates.

Emails are written when they are sent, not when they are queued: a change to a
game queues what to write (kind, player, game, a few ``params``) in its own
transaction, and the worker writes the email just before it sends it
(:func:`written`). The links in it are the ones valid then (a link an admin
rotated meanwhile is not sent dead), the language is the recipient's then, and
a move does not pay for rendering templates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from ..models import OutboxMessage
from .compose import Email


def always(message: OutboxMessage) -> bool:
    """Every message of a kind that has no reason to be dropped is still wanted."""
    return True


def now(message: OutboxMessage) -> datetime | None:
    """A message of a kind that has no reason to wait goes as soon as it is due."""
    return None


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
    # Why a message of this kind was skipped when it no longer mattered, for the admins.
    unwanted: str = "it no longer mattered"
    # Asked by the worker next, of a wanted message about to be written: until when must it
    # wait (the player is at their page, say)? It stays queued until then, and is asked
    # again, wanted or not, when it is due.
    held_until: Callable[[OutboxMessage], datetime | None] = now
    # Writes a queued message of this kind, when it is sent, from what it was queued with:
    # the email, or None when there is none to send (the message is skipped).
    write: Callable[[OutboxMessage], Email | None] | None = None
    # Why a message of this kind was skipped when its writer wrote none, for the admins.
    unwritten: str = "there was nothing to write"


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


def written(message: OutboxMessage) -> Email | None:
    """The email a message is: for one still queued, written now by its kind, as it would go.

    The worker sends what this returns, and the admin pages and the tests read
    a queued message through it too: one place writes every email. A message
    sent, failed or skipped is what was written when it was tried (``None`` if
    it never was); one queued already written (``params`` ``None``) is as it
    was queued. ``None`` also when the kind has nothing to send any more. Only
    reads: writing a message on a page changes nothing.
    """
    if message.params is None or message.status != "queued":
        if message.subject is None or message.text_body is None or message.html_body is None:
            return None
        return Email(message.subject, message.text_body, message.html_body)
    write = kind(message.kind).write
    if write is None:
        raise LookupError(f"the email kind {message.kind!r} is not written when sent")
    return write(message)
