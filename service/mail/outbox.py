"""Queue rendered emails in the outbox, inside the caller's transaction."""

from __future__ import annotations

from email.utils import make_msgid, parseaddr
from typing import Any

from flask import current_app
from sqlalchemy import select

from ..models import Game, OutboxMessage, Player, db, utcnow
from .compose import Email


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
    waiting: the newest says everything the older one did.
    """
    message: OutboxMessage | None = None
    if kind == "turn" and player is not None and player.id is not None:
        message = db.session.scalars(
            select(OutboxMessage).where(
                OutboxMessage.player_id == player.id,
                OutboxMessage.kind == "turn",
                OutboxMessage.status == "queued",
            )
        ).first()
    if message is None:
        message = OutboxMessage(kind=kind, message_id=make_msgid(domain=_domain()))
        db.session.add(message)
    message.recipient = recipient
    message.game_id = game.id if game is not None else None
    message.player_id = player.id if player is not None else None
    message.subject = email.subject
    message.text_body = email.text
    message.html_body = email.html
    message.headers = headers or {}
    message.status = "queued"
    message.next_attempt_at = utcnow()
    return message


def requeue(message_id: int) -> OutboxMessage:
    """Put a failed message back in the queue, with a fresh count of attempts."""
    message = db.session.get(OutboxMessage, message_id)
    if message is None:
        raise LookupError(f"no message {message_id}")
    if message.status != "failed":
        raise ValueError(f"message {message_id} is {message.status}, not failed")
    message.status = "queued"
    message.attempts = 0
    message.next_attempt_at = utcnow()
    db.session.commit()
    return message
