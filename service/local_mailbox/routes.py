"""Every email the service sent, newest first, with its links ready to click.

Registered only in development when no ``MAIL_SERVER`` is set.
"""

from __future__ import annotations

from flask import Response, abort, render_template, request
from sqlalchemy import select

from ..mail.compose import Email
from ..mail.kinds import written
from ..models import OutboxMessage, db
from . import bp

PAGE = 50


@bp.get("")
def inbox() -> str:
    """All messages, optionally for one recipient."""
    query = select(OutboxMessage).order_by(OutboxMessage.id.desc()).limit(PAGE)
    recipient = request.args.get("to")
    if recipient:
        query = query.where(OutboxMessage.recipient == recipient)
    recipients = db.session.scalars(
        select(OutboxMessage.recipient).distinct().order_by(OutboxMessage.recipient)
    ).all()
    return render_template(
        "local_mailbox/inbox.html",
        messages=db.session.scalars(query).all(),
        recipients=recipients,
        recipient=recipient,
    )


def _email(message_id: int) -> tuple[OutboxMessage, Email]:
    """The message and its email; one not sent yet as it would be written now."""
    found = db.session.get(OutboxMessage, message_id)
    email = written(found) if found is not None else None
    if found is None or email is None:
        abort(404)
    return found, email


@bp.get("/<id:message_id>")
def message(message_id: int) -> str:
    """One message: headers and plain-text body, its links clickable."""
    found, email = _email(message_id)
    return render_template("local_mailbox/message.html", message=found, email=email)


@bp.get("/<id:message_id>/html")
def message_html(message_id: int) -> Response:
    """The HTML body as the recipient's mail program would show it (inline styles allowed)."""
    _, email = _email(message_id)
    response = Response(email.html, mimetype="text/html")
    response.headers["Content-Security-Policy"] = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'"
    )
    return response
