"""A permanent refusal of an address's mail marks it as bouncing; a delivery clears it."""

from __future__ import annotations

import pytest
from flask import Flask

from service.addresses import bounces
from service.games import Seating, create_game
from service.links import token_for
from service.mail import requeue
from service.mail.worker import drain
from service.models import OutboxMessage, Player, db
from service.unit_of_work import transaction

from ..smtp import SMTPServer

pytestmark = pytest.mark.both_backends

DEAD = "jo@dead.example"


def invite(app: Flask, shadow: str = DEAD) -> None:
    """A game between kim and ``shadow``: two invitation emails."""
    with app.app_context(), transaction():
        create_game(Seating("kim@example.com", "Kim"), Seating(shadow, "Jo"))


def bouncing(app: Flask) -> dict[str, tuple[int | None, str | None]]:
    with app.app_context():
        found = bounces([DEAD, "kim@example.com"])
        return {email: (row.bounce_code, row.bounce_reply) for email, row in found.items()}


def test_a_refused_recipient_marks_the_address_as_bouncing(
    app: Flask, smtp_server: SMTPServer
) -> None:
    smtp_server.handler.refuse[DEAD] = "550 5.1.1 User unknown"
    invite(app)
    with app.app_context():
        drain()
    assert bouncing(app) == {DEAD: (550, "5.1.1 User unknown")}
    with app.app_context():
        refused = db.session.scalars(
            db.select(OutboxMessage).where(OutboxMessage.recipient == DEAD)
        ).one()
        assert refused.status == "failed" and refused.last_error == "550 5.1.1 User unknown"
        row = bounces([DEAD])[DEAD]
        assert row.bounced_at is not None


def test_a_refusal_quoting_a_link_keeps_no_token(app: Flask, smtp_server: SMTPServer) -> None:
    """A URL filter's refusal may quote the link it found: the refusal is shown on the
    dashboard and in its CSV, which must not hand out a player's link."""
    invite(app)
    with app.app_context():
        token = token_for(db.session.scalars(db.select(Player).where(Player.email == DEAD)).one())
    smtp_server.handler.refuse[DEAD] = f"550 5.7.1 URL http://splitmind.test/play/{token} listed"
    with app.app_context():
        drain()
        refused = db.session.scalars(
            db.select(OutboxMessage).where(OutboxMessage.recipient == DEAD)
        ).one()
        assert refused.last_error == "550 5.7.1 URL http://splitmind.test/play/[redacted] listed"
    assert bouncing(app) == {DEAD: (550, "5.7.1 URL http://splitmind.test/play/[redacted] listed")}


def test_a_temporary_refusal_is_no_bounce(app: Flask, smtp_server: SMTPServer) -> None:
    smtp_server.handler.refuse[DEAD] = "450 4.2.1 Mailbox busy"
    invite(app)
    with app.app_context():
        drain()
    assert bouncing(app) == {}


def test_a_later_delivery_clears_the_bounce(app: Flask, smtp_server: SMTPServer) -> None:
    smtp_server.handler.refuse[DEAD] = "550 5.1.1 User unknown"
    invite(app)
    with app.app_context():
        drain()
    assert DEAD in bouncing(app)
    del smtp_server.handler.refuse[DEAD]
    with app.app_context():
        failed = db.session.scalars(
            db.select(OutboxMessage.id).where(OutboxMessage.status == "failed")
        ).one()
        with transaction():
            requeue(failed)
        drain()
    assert bouncing(app) == {}
    assert smtp_server.handler.to(DEAD)


def test_a_refusal_holding_a_nul_is_kept_without_it(app: Flask, smtp_server: SMTPServer) -> None:
    """No text column holds a NUL: kept as it came, the refusal failed the commit, and the
    message was claimed first again at every pass, holding up the queue behind it."""
    smtp_server.handler.refuse[DEAD] = "550 5.1.1 no such\x00user"
    invite(app)
    with app.app_context():
        drain()
    assert bouncing(app) == {DEAD: (550, "5.1.1 no suchuser")}
    assert smtp_server.handler.to("kim@example.com")


def test_a_refused_sender_is_no_bounce(app: Flask, smtp_server: SMTPServer) -> None:
    """A refusal of the sender says nothing of the recipients' addresses."""
    smtp_server.handler.refuse_sender = "553 5.7.1 Sender address rejected"
    invite(app)
    with app.app_context():
        drain()
        failed = db.session.scalars(db.select(OutboxMessage.last_error)).all()
    assert failed == ["sender refused: 553 5.7.1 Sender address rejected"] * 2
    assert bouncing(app) == {}


@pytest.mark.parametrize(
    ("reply", "bounces"),
    [
        ("554 5.6.0 Message content rejected", False),
        ("550 5.7.1 Message rejected as spam", False),
        ("550 Message refused by a content filter", False),
        ("552 5.2.2 Mailbox full", True),
        ("550 5.1.1 No such user", True),
    ],
)
def test_a_refusal_after_data_is_a_bounce_only_for_the_address(
    app: Flask, smtp_server: SMTPServer, reply: str, bounces: bool
) -> None:
    """The server took the recipient before the content: a refusal at the end of the data
    is the message's (its content, a filter's verdict), unless its status names the
    address or the mailbox (X.1.X, X.2.X of RFC 3463). Marked as bouncing, the address
    sent the admins to correct an address that was right."""
    smtp_server.handler.replies = [reply, reply]
    invite(app)
    with app.app_context():
        drain()
        refused = db.session.scalars(db.select(OutboxMessage.last_error)).all()
    assert refused == [reply] * 2
    code, said = reply.split(" ", 1)
    expected = {DEAD: (int(code), said), "kim@example.com": (int(code), said)}
    assert bouncing(app) == (expected if bounces else {})


def test_a_refusal_is_logged_without_the_address(
    app: Flask, smtp_server: SMTPServer, caplog: pytest.LogCaptureFixture
) -> None:
    """The log names the message, whose row the dashboard shows with its recipient: no line
    keeps a player's address, though the server's reply quotes it."""
    smtp_server.handler.refuse[DEAD] = f"550 5.1.1 <{DEAD}>: Recipient address rejected"
    invite(app)
    with app.app_context():
        drain()
        refused = db.session.scalars(
            db.select(OutboxMessage).where(OutboxMessage.recipient == DEAD)
        ).one()
    logged = [record.getMessage() for record in caplog.records]
    assert any(f"mail {refused.id}" in line and "Recipient address" in line for line in logged)
    assert not [line for line in logged if DEAD in line]
