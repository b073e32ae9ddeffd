"""Queue rendered emails in the outbox, inside the caller's transaction."""

from __future__ import annotations

import logging
from email.utils import make_msgid, parseaddr
from typing import Any

from flask import current_app
from sqlalchemy import select

from ..models import Game, OutboxMessage, Player, db, utcnow
from . import kinds
from .compose import Email

log = logging.getLogger(__name__)


def _domain() -> str:
    address = parseaddr(current_app.config["MAIL_DEFAULT_SENDER"])[1]
    return address.rpartition("@")[2] or "splitmind.invalid"


def queue(
    email: Email,
    *,
    kind: str,
    recipient: str,
    game: Game | None = None,
    player: Player | None = None,
    headers: dict[str, Any] | None = None,
) -> OutboxMessage:
    """Add an email to the outbox; it is sent only if the caller's transaction commits.

    A turn email replaces the player's unsent one, so a player never has two
    waiting: the newest says everything the older one did. (The player's own
    move withdraws it first, see :func:`withdraw_turn`; one is still here if a
    worker was sending it then and the server put it off, or an admin queued
    it again.) Raises ``LookupError`` for a kind that is not registered
    (:mod:`.kinds`).
    """
    kinds.kind(kind)
    message: OutboxMessage | None = None
    if kind == "turn" and player is not None and player.id is not None:
        message = _queued_turn(player.id)
    if message is None:
        message = OutboxMessage(kind=kind)
        db.session.add(message)
    # A replaced email is a new message: the old one may already have gone out once
    # (a worker killed before its commit), and a receiving server that de-duplicates
    # by Message-ID must not drop the new content.
    message.message_id = make_msgid(domain=_domain())
    message.recipient = recipient
    message.game_id = game.id if game is not None else None
    message.player_id = player.id if player is not None else None
    message.subject = email.subject
    message.text_body = email.text
    message.html_body = email.html
    message.headers = headers or {}
    message.status = "queued"
    message.attempts = 0
    message.last_error = None
    message.next_attempt_at = utcnow()
    return message


def _queued_turn(player_id: int, *, skip_locked: bool = False) -> OutboxMessage | None:
    """The player's unsent turn email, locked until the caller's transaction ends.

    A worker sending this very email holds its row lock until it has recorded
    the outcome: this waits for it, then finds the email still queued (to be
    rewritten) or sent (not found: a new one is added). Read without the lock,
    the row the worker had just marked sent would be put back in the queue with
    its Message-ID. Skipping the locked row would not spare the wait: a second
    queued turn email for the player meets it in ``uq_outbox_queued_turn``.
    With ``skip_locked``, a row a worker holds is not found (and not waited for).
    """
    return db.session.scalars(
        select(OutboxMessage)
        .where(
            OutboxMessage.player_id == player_id,
            OutboxMessage.kind == "turn",
            OutboxMessage.status == "queued",
        )
        .with_for_update(skip_locked=skip_locked)
    ).first()


def withdraw_turn(player_id: int) -> None:
    """Withdraw the player's unsent turn email: they have just moved, so it is out of date.

    Called inside the move's transaction. A row a worker has claimed is being
    sent right now and is too late to stop: it is passed over rather than
    waited for, so a move never waits on an SMTP server.
    """
    message = _queued_turn(player_id, skip_locked=True)
    if message is not None:
        message.status = "skipped"


def requeue(message_id: int) -> OutboxMessage:
    """Put a failed message back in the queue, with a fresh count of attempts.

    Raises ``LookupError`` for no such message, ``ValueError`` for one that did
    not fail, or for a turn email whose player has a newer one waiting (it says
    more, and a player never has two waiting).
    """
    message = db.session.get(OutboxMessage, message_id)
    if message is None:
        raise LookupError(f"no message {message_id}")
    if message.status != "failed":
        raise ValueError(f"message {message_id} is {message.status}, not failed")
    if (
        message.kind == "turn"
        and message.player_id is not None
        and _queued_turn(message.player_id) is not None
    ):
        raise ValueError("A newer turn email for this player is already queued.")
    message.status = "queued"
    message.attempts = 0
    message.next_attempt_at = utcnow()
    db.session.flush()
    log.info("mail %d queued again", message.id)
    return message
