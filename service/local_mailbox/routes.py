"""Every email the service sent, newest first, with its links ready to click.

Registered only in development when no ``MAIL_SERVER`` is set.
"""

from __future__ import annotations

from flask import Response, abort, render_template, request
from sqlalchemy import select

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


@bp.get("/<id:message_id>")
def message(message_id: int) -> str:
    """One message: headers and plain-text body, its links clickable."""
    found = db.session.get(OutboxMessage, message_id)
    if found is None:
        abort(404)
    return render_template("local_mailbox/message.html", message=found)


@bp.get("/<id:message_id>/html")
def message_html(message_id: int) -> Response:
    """The HTML body as the recipient's mail program would show it (inline styles allowed)."""
    found = db.session.get(OutboxMessage, message_id)
    if found is None:
        abort(404)
    response = Response(found.html_body, mimetype="text/html")
    response.headers["Content-Security-Policy"] = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'"
    )
    return response
