"""Every email threads by game and is marked automatic; those asking for a move reply to a tag."""

from __future__ import annotations

import random

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service import games
from service.mail import requeue
from service.models import OutboxMessage, Player, db
from service.replies.tags import read_tag, tag_for, tag_in
from service.unit_of_work import transaction

from ..helpers import moves_delivered, pick_action
from ..smtp import Received
from .conftest import REPLY_ADDRESS

EMAILS = {"keeper": "kim@example.com", "shadow": "sam@example.com"}


def tag_of(app: Flask, received: Received) -> tuple[int, int] | None:
    """The player id and version of an email's Reply-To tag, or ``None`` without one."""
    reply_to = received.message["Reply-To"]
    if reply_to is None:
        return None
    with app.app_context():
        tag = tag_in(str(reply_to))
        assert tag is not None, reply_to
        found = read_tag(tag)
        assert found is not None, tag
        return found[0].id, found[1]


def test_a_game_threads_and_asks_for_moves_by_reply(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    game = make_game(seed=11)
    deliver()
    with app.app_context():
        ids = {p.seat: p.id for p in db.session.get_one(games.Game, game["id"]).players}
    roots = {}
    for seat in ("keeper", "shadow"):
        (invitation,) = smtp_server.handler.to(EMAILS[seat])
        message = invitation.message
        assert message["Auto-Submitted"] == "auto-generated"
        assert message["References"] is None and message["In-Reply-To"] is None
        roots[seat] = message["Message-ID"]
        assert str(message["Reply-To"]).endswith("@splitmind.test")
        assert str(message["Reply-To"]).startswith("play+")
        assert tag_of(app, invitation) == (ids[seat], 0)  # both owe the round 1 exchange
        assert "reply to this email with your move" in invitation.text
        assert "for example" in invitation.text
    assert roots["keeper"] != roots["shadow"]
    moves_delivered(client, game, deliver, 8)
    later = smtp_server.received[2:]
    assert later
    for received in later:
        seat = next(s for s in EMAILS if EMAILS[s] in received.envelope_to)
        message = received.message
        assert message["Auto-Submitted"] == "auto-generated"
        assert message["References"] == roots[seat] == message["In-Reply-To"]
        with app.app_context():
            version = db.session.get_one(games.Game, game["id"]).version
        found = tag_of(app, received)
        assert found is not None and found[0] == ids[seat] and found[1] <= version


def test_an_email_asking_for_nothing_has_no_reply_address(
    app: Flask, make_game, smtp_server, deliver
) -> None:
    game = make_game(seed=5)
    with app.app_context(), transaction():
        games.cancel_game(game["id"], "admin")
    deliver()
    ended = [r for r in smtp_server.received if "cancelled" in r.text]
    assert len(ended) == 2
    for received in ended:
        assert received.message["Reply-To"] is None
        assert received.message["Auto-Submitted"] == "auto-generated"


def test_a_tag_is_refused_once_tampered_or_its_link_rotated(app: Flask, make_game) -> None:
    game = make_game(seed=5)
    with app.app_context():
        player = db.session.get_one(games.Game, game["id"]).player("keeper")
        tag = tag_for(player, 3)
        assert read_tag(tag) == (player, 3)
        assert read_tag(tag.upper()) == (player, 3)  # a mail system may change the case
        assert len(f"play+{tag}") <= 64
        player_id, version, signature = tag.split(".")
        assert read_tag(f"{player_id}.4.{signature}") is None
        assert read_tag(f"{int(player_id) + 1}.{version}.{signature}") is None
        flipped = "b" if signature[-1] == "a" else "a"
        assert read_tag(f"{player_id}.{version}.{signature[:-1]}{flipped}") is None
        assert read_tag("nonsense") is None
        with transaction():
            games.rotate_link(player.id, "admin")
        assert read_tag(tag) is None
        assert tag_in(f"play+{tag}@SPLITMIND.test") == tag
        assert tag_in(f"other+{tag}@splitmind.test") is None
        assert tag_in(REPLY_ADDRESS) is None


def refused_invitation(smtp_server, deliver, app: Flask) -> OutboxMessage:
    """Kim's invitation, refused for good by her mail server (it had a Reply-To then)."""
    smtp_server.handler.replies = ["550 5.1.1 No such user"] * 4
    deliver()
    smtp_server.handler.replies = []
    with app.app_context():
        return db.session.scalars(
            select(OutboxMessage).where(
                OutboxMessage.kind == "invitation",
                OutboxMessage.recipient == EMAILS["keeper"],
                OutboxMessage.status == "failed",
            )
        ).one()


def test_an_email_queued_again_carries_the_current_tag(
    app: Flask, make_game, smtp_server, deliver
) -> None:
    """Refused, then the opponent moved and the player's link was rotated, then queued again:
    the email that goes out replies to a tag of the new link and the game's version now, and
    the tag it was first written with is dead."""
    game = make_game(seed=4)
    refused = refused_invitation(smtp_server, deliver, app)
    with app.app_context():
        old_tag, kim = tag_in(refused.headers["Reply-To"]), refused.player_id
        assert old_tag is not None
        found = read_tag(old_tag)
        assert found is not None and found[1] == 0
    with app.app_context(), transaction():
        sam = db.session.get_one(games.Game, game["id"]).player("shadow")
        # Sam's half of the exchange: Kim still owes hers, at the next version.
        games.apply_move(sam.id, 0, pick_action(games.player_view(sam), random.Random(4)))
        games.rotate_link(kim, "admin")
        requeue(refused.id)
    smtp_server.received.clear()
    deliver()
    (again,) = smtp_server.handler.to(EMAILS["keeper"])
    assert again.message["Message-ID"] == refused.message_id
    assert tag_of(app, again) == (kim, 1)
    assert "reply to this email with your move" in again.text
    with app.app_context():
        assert read_tag(old_tag) is None


def test_an_email_queued_again_once_no_move_is_owed_has_no_reply_address(
    app: Flask, make_game, smtp_server, deliver
) -> None:
    game = make_game(seed=4)
    refused = refused_invitation(smtp_server, deliver, app)
    assert "Reply-To" in refused.headers
    with app.app_context(), transaction():
        kim = db.session.get_one(games.Game, game["id"]).player("keeper")
        # Kim's half of the exchange (on her page): she owes nothing until Sam gives his.
        games.apply_move(kim.id, 0, pick_action(games.player_view(kim), random.Random(4)))
        requeue(refused.id)
    smtp_server.received.clear()
    deliver()
    (again,) = smtp_server.handler.to(EMAILS["keeper"])
    assert again.message["Reply-To"] is None
    assert "reply to this email" not in again.text
    with app.app_context():
        assert "Reply-To" not in db.session.get_one(OutboxMessage, refused.id).headers


@pytest.mark.parametrize("app_config", [{}], indirect=False)
def test_without_a_reply_address_emails_still_thread(
    app: Flask, make_game, smtp_server, deliver
) -> None:
    make_game(seed=5)
    deliver()
    for received in smtp_server.received:
        assert received.message["Reply-To"] is None
        assert received.message["Auto-Submitted"] == "auto-generated"
        assert "reply to this email" not in received.text
    with app.app_context():
        assert db.session.query(Player).count() == 2


def test_the_front_page_says_a_reply_is_a_move(app: Flask, client: FlaskClient) -> None:
    assert "by replying to the email that asks for it" in client.get("/").get_data(as_text=True)
    french = client.get("/", headers={"Accept-Language": "fr"}).get_data(as_text=True)
    assert "en répondant à l’e-mail qui vous le demande" in french
    app.config["REPLY_ADDRESS"] = None
    assert "by replying" not in client.get("/").get_data(as_text=True)


def test_a_tag_survives_a_new_secret_key_while_the_old_is_a_fallback(app: Flask, make_game) -> None:
    game = make_game(seed=5)
    with app.app_context():
        player = db.session.get_one(games.Game, game["id"]).player("shadow")
        tag = tag_for(player, 0)
        old = app.config["SECRET_KEY"]
        app.config["SECRET_KEY"] = "a-new-secret-key"
        app.config["SECRET_KEY_FALLBACKS"] = [old]
        assert read_tag(tag) == (player, 0)
        assert tag_for(player, 0) != tag  # new tags are signed with the new key
        app.config["SECRET_KEY_FALLBACKS"] = []
        assert read_tag(tag) is None
