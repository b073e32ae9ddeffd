"""A player moving their games to another address from their home page: the link emailed to
the new address, its page, the move, and what the old address is told."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import time_machine
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service import games, homes, invitations, notify
from service.addresses import settings_for
from service.games import Seating
from service.links import home_token
from service.models import (
    Address,
    AdminAction,
    Event,
    Invitation,
    OutboxMessage,
    Player,
    db,
    utcnow,
)
from service.unit_of_work import transaction

from ..helpers import csrf_token
from ..smtp import SMTPServer
from .test_invitations import last_link

KIM = "kim@example.com"
NEW = "kim@newjob.example"


def home_of(app: Flask, email: str = KIM) -> str:
    with app.app_context():
        return f"/me/{home_token(email)}"


def ask_to_move(client: FlaskClient, home: str, new: str = NEW):  # type: ignore[no-untyped-def]
    """Post the home page's form that asks to move its games to ``new``."""
    token = csrf_token(client.get(home).get_data(as_text=True))
    return client.post(f"{home}/move", data={"csrf_token": token, "email": new})


def asked(
    app: Flask,
    client: FlaskClient,
    smtp_server: SMTPServer,
    deliver: Callable[[], int],
    new: str = NEW,
) -> str:
    """Kim asks to move to ``new``; the path of the link that confirms it."""
    response = ask_to_move(client, home_of(app), new)
    assert response.status_code == 200, response.get_data(as_text=True)
    deliver()
    return last_link(smtp_server, new, "/moving/")


def test_a_move_confirmed_at_the_new_address_carries_every_game_and_setting(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    game = make_game(seed=3)
    finished = make_game(seed=4)
    with app.app_context(), transaction():
        games.cancel_game(finished["id"], "ada")
        homes.set_language(KIM, "fr")
        homes.set_email_policy(KIM, "digest", 19)
    old_home = home_of(app)
    link = asked(app, client, smtp_server, deliver)
    # In the language Kim chose, the email and its page.
    assert "Si c’était vous, ouvrez ce lien d’ici 48" in smtp_server.handler.to(NEW)[-1].text
    page = client.get(link)
    assert page.status_code == 200
    assert "Passer mes parties à kim@newjob.example" in page.get_data(as_text=True)
    with app.app_context():
        assert db.session.scalars(select(Player.email).where(Player.email == NEW)).all() == []
    done = client.post(link)
    assert done.status_code == 303
    new_home = done.headers["Location"]
    assert new_home == home_of(app, NEW)
    shown = client.get(new_home).get_data(as_text=True)
    assert f"{game['id']}" in shown and f"{finished['id']}" in shown
    with app.app_context():
        seats = db.session.scalars(select(Player.email).where(Player.game_id == game["id"])).all()
        assert sorted(seats) == sorted([NEW, "sam@example.com"])
        settings = settings_for(NEW)
        assert settings is not None
        chosen = (settings.language, settings.email_policy, settings.digest_hour)
        assert chosen == ("fr", "digest", 19)
        assert db.session.scalars(select(AdminAction.action)).all()[-1] == "move_address"
        logged = select(Event.actor).where(
            Event.game_id == game["id"], Event.kind == "move_address"
        )
        assert db.session.scalars(logged).all() == ["its player (home page)"]
    # The game link still works; the old home link leads to the new page in this browser only.
    assert client.get(f"/play/{game['keeper']}").status_code == 200
    assert app.test_client().get(old_home).status_code == 404
    assert client.get(link).status_code == 404  # used
    deliver()
    told = smtp_server.handler.to(KIM)[-1]
    assert NEW in told.text
    assert "Bonjour" in told.text  # in the language the old address chose


def test_get_of_the_confirmation_link_moves_nothing(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    """A mail scanner opens every link: only the page's button moves the games."""
    make_game(seed=3)
    link = asked(app, client, smtp_server, deliver)
    for _ in range(2):
        assert app.test_client().get(link).status_code == 200
    with app.app_context():
        assert db.session.scalars(select(Player.email).where(Player.email == NEW)).all() == []
        assert settings_for(NEW) is None


def test_the_same_form_twice_sends_one_link_and_the_new_address_one_an_hour(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    make_game(seed=3)
    assert ask_to_move(client, home_of(app)).status_code == 200
    assert ask_to_move(client, home_of(app)).status_code == 200  # still queued: nothing more
    deliver()
    assert len(smtp_server.handler.to(NEW)) == 1
    refused = ask_to_move(client, home_of(app))  # sent: past the new address's allowance
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    deliver()
    assert len(smtp_server.handler.to(NEW)) == 1


def test_the_form_is_no_way_to_mail_strangers(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    """Three addresses a day from one page; the fourth is refused, and nothing is sent."""
    make_game(seed=3)
    for number in range(3):
        assert ask_to_move(client, home_of(app), f"x{number}@example.net").status_code == 200
    assert ask_to_move(client, home_of(app), "x3@example.net").status_code == 429
    deliver()
    assert smtp_server.handler.to("x3@example.net") == []


def test_the_pages_address_is_refused_and_so_is_no_address(
    app: Flask, client: FlaskClient, make_game
) -> None:
    make_game(seed=3)
    assert ask_to_move(client, home_of(app), "KIM@example.com").status_code == 400
    assert ask_to_move(client, home_of(app), "not an address").status_code == 400
    with app.app_context():
        assert db.session.scalars(select(OutboxMessage.kind)).all().count("confirm_move") == 0


def test_no_one_can_play_against_themselves(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    """An address that plays Kim's opponent in a game in play cannot take Kim's seats."""
    game = make_game(seed=3)
    link = asked(app, client, smtp_server, deliver, "sam@example.com")
    page = client.get(link)
    assert page.status_code == 409
    assert f"game {game['id']}" in page.get_data(as_text=True)
    assert client.post(link).status_code == 409
    with app.app_context():
        seats = db.session.scalars(select(Player.email).where(Player.game_id == game["id"])).all()
        assert sorted(seats) == [KIM, "sam@example.com"]


def test_an_address_already_playing_here_keeps_its_choices_and_adds_the_days(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    make_game(seed=3)
    with app.app_context(), transaction():
        games.create_game(Seating(NEW, "Kim"), Seating("zoe@example.com", "Zoe"), seed=5)
        homes.set_email_policy(NEW, "reminders", 8)
        homes.set_language(KIM, "fr")
        homes.take_vacation(KIM, 2, utcnow() - timedelta(days=3))
        homes.take_vacation(NEW, 3, utcnow() - timedelta(days=5))
    link = asked(app, client, smtp_server, deliver)
    assert client.post(link).status_code == 303
    with app.app_context():
        settings = settings_for(NEW)
        assert settings is not None
        assert (settings.email_policy, settings.language) == ("reminders", "fr")
        assert settings.vacation_days_used == 5
        assert len(db.session.scalars(select(Player.id).where(Player.email == NEW)).all()) == 2


def test_a_stop_of_every_email_holds_at_the_new_address(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    game = make_game(seed=3)
    with app.app_context(), transaction():
        invitations.stop_all_emails(KIM)
    link = asked(app, client, smtp_server, deliver)
    assert client.post(link).status_code == 303
    deliver()
    with app.app_context():
        assert invitations.stopped_all_emails(NEW)
        seat = db.session.scalars(
            select(Player).where(Player.game_id == game["id"], Player.email == NEW)
        ).one()
        assert not seat.notify
    assert smtp_server.handler.to(KIM) == []  # it stopped every email: not even the notice


def test_an_address_that_stopped_emails_is_sent_no_link(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    make_game(seed=3)
    with app.app_context(), transaction():
        invitations.stop_all_emails(NEW)
    assert ask_to_move(client, home_of(app)).status_code == 200  # said as for any address
    deliver()
    assert smtp_server.handler.to(NEW) == []


def test_a_bouncing_new_address_moves_nothing(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    make_game(seed=3)
    smtp_server.handler.refuse[NEW] = "550 5.1.1 User unknown"
    assert ask_to_move(client, home_of(app)).status_code == 200
    deliver()
    with app.app_context():
        assert db.session.get_one(Address, NEW).bounce_code == 550
        assert db.session.scalars(select(Player.email).where(Player.email == NEW)).all() == []
    assert client.get(home_of(app)).status_code == 200  # the old page still works


def test_the_link_expires_and_dies_with_a_replaced_home_link(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    make_game(seed=3)
    link = asked(app, client, smtp_server, deliver)
    with time_machine.travel(utcnow() + timedelta(hours=49)):
        assert client.get(link).status_code == 410
        assert client.post(link).status_code == 410
    with app.app_context(), transaction():
        homes.replace_home_link(KIM)
    assert client.get(link).status_code == 404
    with app.app_context():
        assert db.session.scalars(select(Player.email).where(Player.email == NEW)).all() == []


def test_invitations_waiting_and_emails_queued_follow_but_a_request_never_confirmed_stays(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    make_game(seed=3)
    with app.app_context(), transaction():
        sent = invitations.request_game(
            invitations.Request("Kim", KIM, "Bob", "bob@example.com", "keeper", False, 5)
        )
        invitations.confirm(sent)
        unconfirmed = invitations.request_game(
            invitations.Request("Kim", KIM, "Cy", "cy@example.com", "keeper", False, 5)
        )
        waiting = invitations.request_game(
            invitations.Request("Ann", "ann@example.com", "Kim", KIM, "keeper", False, 5)
        )
        invitations.confirm(waiting)
        ids = sent.id, unconfirmed.id, waiting.id
    link = asked(app, client, smtp_server, deliver)
    with app.app_context(), transaction():  # a turn email, queued, not sent yet
        seat = db.session.scalars(select(Player).where(Player.email == KIM)).first()
        notify.your_move(seat)
    assert client.post(link).status_code == 303
    with app.app_context():
        rows = [db.session.get_one(Invitation, each) for each in ids]
        assert rows[0].creator_email == NEW
        assert rows[1].creator_email == KIM  # anyone may have typed Kim's address
        assert rows[2].opponent_email == NEW
        queued = select(OutboxMessage.recipient).where(OutboxMessage.kind == "turn")
        assert db.session.scalars(queued).all() == [NEW]
    deliver()
    with app.app_context():  # written for the seat, whose address it is now
        assert db.session.scalars(select(OutboxMessage.status).where(queued.whereclause)).all() == [
            "sent"
        ]


def test_a_request_never_confirmed_between_the_two_addresses_does_not_stop_the_move(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    """Anyone may type both addresses on the public page: a request nobody confirmed is no
    game they play each other, and it stays as it was typed."""
    make_game(seed=3)
    with app.app_context(), transaction():
        typed = invitations.request_game(
            invitations.Request("Kim", NEW, "Kim", KIM, "keeper", False, 5)
        )
        game_id = typed.game_id
    link = asked(app, client, smtp_server, deliver)
    assert client.get(link).status_code == 200
    assert client.post(link).status_code == 303
    with app.app_context():
        seats = db.session.scalars(select(Player.email).where(Player.game_id == game_id)).all()
        assert sorted(seats) == [KIM, NEW]
        assert db.session.scalars(select(Player.email).where(Player.email == KIM)).all() == [KIM]
