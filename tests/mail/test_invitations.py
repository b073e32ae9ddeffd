"""Starting a game without an admin: confirm, invite, accept or decline; stop emails; a rematch,
which invites the opponent the same way."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select
from werkzeug.test import TestResponse

from service import homes, invitations
from service.deadlines import sweep
from service.invitations import REPEAT_WINDOW
from service.links import home_token, token_for
from service.mail import compose
from service.models import Address, Game, Invitation, OutboxMessage, Player, db, utcnow
from service.notify import greeting
from service.unit_of_work import transaction

from ..conftest import BASE_URL
from ..helpers import (
    NEW_GAME_FORM,
    ask_for_game,
    csrf_token,
    from_elsewhere,
    pick_action,
    request_invitation,
    statements_run,
)
from ..smtp import SMTPServer


def ask(client: FlaskClient, **changes: str) -> TestResponse:
    return ask_for_game(client, **changes)


def path_of(link: str) -> str:
    assert link.startswith(BASE_URL)
    return link[len(BASE_URL) :]


def last_link(smtp_server: SMTPServer, address: str, path: str) -> str:
    return path_of(smtp_server.handler.to(address)[-1].links(path)[0])


def requested(client: FlaskClient, smtp_server: SMTPServer, deliver: Callable[[], int]) -> str:
    """Ann asks for a game; returns the path of the link that confirms her address."""
    ask(client)
    deliver()
    return last_link(smtp_server, "ann@example.com", "/invitations/")


def invited(client: FlaskClient, smtp_server: SMTPServer, deliver: Callable[[], int]) -> str:
    """Ann asks for a game and confirms; returns the path of Bob's accept-or-decline link."""
    client.post(requested(client, smtp_server, deliver))
    deliver()
    return last_link(smtp_server, "bob@example.com", "/invitations/")


def test_a_look_alike_of_a_familiar_address_shows_for_what_it_is(
    app: Flask, client: FlaskClient, smtp_server: SMTPServer, deliver: Callable[[], int]
) -> None:
    """An address written with a Cyrillic "а" in example.com is another domain: the person
    invited sees its domain as mail carries it, not as a twin of the familiar one."""
    look_alike = "ann@ex\u0430mple.com"
    ask(client, email=look_alike)
    deliver()
    (confirmation,) = smtp_server.handler.to("ann@xn--exmple-4nf.com")
    client.post(last_link(smtp_server, "ann@xn--exmple-4nf.com", "/invitations/"))
    deliver()
    (invitation,) = smtp_server.handler.to("bob@example.com")
    for body in (invitation.text, invitation.html):
        assert "ann@xn--exmple-4nf.com" in body and look_alike not in body
    page = client.get(last_link(smtp_server, "bob@example.com", "/invitations/")).text
    assert "ann@xn--exmple-4nf.com" in page and look_alike not in page


def test_confirm_invite_accept_starts_the_game(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    response = ask(client)
    assert response.status_code == 200 and "Check your email" in response.get_data(as_text=True)
    deliver()
    assert [m.envelope_to for m in smtp_server.received] == [["ann@example.com"]]
    confirm = last_link(smtp_server, "ann@example.com", "/invitations/")
    # Opening the link (a mail scanner, say) changes nothing.
    assert client.get(confirm).status_code == 200
    assert client.head(confirm).status_code == 200
    with app.app_context():
        assert db.session.scalars(select(Invitation)).one().status == "unconfirmed"
        game = db.session.scalars(select(Game)).one()
        assert game.status == "waiting" and game.deadline is None
    assert client.post(confirm).status_code == 200
    deliver()
    invite = last_link(smtp_server, "bob@example.com", "/invitations/")
    assert invite != confirm
    assert client.get(invite).status_code == 200
    response = client.post(invite, data={"answer": "accept"})
    assert response.status_code == 303 and response.headers["Location"].startswith("/play/")
    deliver()
    with app.app_context():
        game = db.session.scalars(select(Game)).one()
        assert game.status == "active" and game.deadline is not None and game.days_per_move == 5
        assert game.player("keeper").email == "ann@example.com"
        assert game.player("shadow").email == "bob@example.com"
    for address in ("ann@example.com", "bob@example.com"):
        assert smtp_server.handler.to(address)[-1].links("/play/")
    # The creator's confirm link cannot be used to answer for the opponent.
    assert client.post(confirm, data={"answer": "decline"}).status_code == 200
    with app.app_context():
        assert db.session.scalars(select(Game)).one().status == "active"


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({}, ("a game of Split Mind against Bob", "You have 5 days for each move.")),
        (
            {"format": "match", "days": ""},
            ("a return match of Split Mind against Bob", "There is no deadline for moves."),
        ),
    ],
    ids=["game", "match"],
)
def test_the_confirm_page_shows_the_game_asked_for(
    client: FlaskClient,
    smtp_server: SMTPServer,
    deliver: Callable[[], int],
    changes: dict[str, str],
    said: tuple[str, ...],
) -> None:
    """Its email sends the creator, who may not have typed the request, to see the game asked
    for before confirming: one game or a return match, and the time for each move."""
    ask(client, **changes)
    deliver()
    page = client.get(last_link(smtp_server, "ann@example.com", "/invitations/"))
    text = page.get_data(as_text=True)
    for words in said:
        assert words in text


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("en", ("The rules in short", "the track moves by the difference in tricks", "full rules")),
        ("fr", ("La règle en bref", "la piste avance de l’écart entre les plis", "règle complète")),
    ],
)
def test_the_invitation_says_what_the_track_it_speaks_of_is(
    client: FlaskClient,
    smtp_server: SMTPServer,
    deliver: Callable[[], int],
    language: str,
    said: tuple[str, ...],
) -> None:
    """The invitation's role line says the track must not reach its end: the email and the
    page give the rules in short, which say what the track is, and link the full rules, to
    someone who has never played."""
    headers = {"Accept-Language": language}
    ask_for_game(client, headers)
    deliver()
    client.post(last_link(smtp_server, "ann@example.com", "/invitations/"))
    deliver()
    (email,) = smtp_server.handler.to("bob@example.com")
    page = client.get(last_link(smtp_server, "bob@example.com", "/invitations/"), headers=headers)
    for text in (email.text, email.html, page.get_data(as_text=True)):
        for words in said:
            assert words in text.replace("&#39;", "'"), words
    assert f"{BASE_URL}/rules?look=standard&lang={language}" in email.text
    assert page.get_data(as_text=True).count('href="/rules?look=standard') == 2  # and the header's


def test_decline_tells_the_creator_and_blocks_future_invitations(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    invite = invited(client, smtp_server, deliver)
    # What declining does is said before its button, and tied to it.
    page = client.get(invite).get_data(as_text=True)
    warning = page.index('id="decline-note">Declining tells Ann so, and turns away every later')
    assert warning < page.index('aria-describedby="decline-note">Decline</button>')
    declined = client.post(invite, data={"answer": "decline"})
    assert declined.status_code == 200
    assert "You declined: the game will not start" in declined.get_data(as_text=True)
    deliver()
    assert "declined" in str(smtp_server.handler.to("ann@example.com")[-1].message["Subject"])
    with app.app_context():
        assert db.session.scalars(select(Game)).one().status == "cancelled"
        assert db.session.get(Address, "bob@example.com").declined_at is not None
    # Someone else asks: the pages say nothing about Bob, even once confirmed; Bob gets nothing.
    response = ask(client, name="Cy", email="cy@example.com")
    assert response.status_code == 200 and "Check your email" in response.get_data(as_text=True)
    deliver()
    confirmed = client.post(last_link(smtp_server, "cy@example.com", "/invitations/"))
    page = confirmed.get_data(as_text=True)
    assert "Bob is invited. The game starts when they accept. The invitation expires on " in page
    deliver()
    assert len(smtp_server.handler.to("bob@example.com")) == 1
    with app.app_context():
        cy = db.session.scalars(
            select(Invitation).where(Invitation.creator_email == "cy@example.com")
        )
        assert cy.one().status == "invited"


def test_a_decline_from_a_sub_address_turns_away_its_whole_inbox(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    """Bob declines as bob+1@: a stranger naming bob+2@ or bob@ next reaches the same inbox,
    and it gets nothing; the page of bob+1@ takes invitations again for all of them."""
    invite = invited_as(client, smtp_server, deliver, "bob+1@example.com", "ann@example.com")
    assert client.post(invite, data={"answer": "decline"}).status_code == 200
    for number, opponent in enumerate(["bob+2@example.com", "bob@example.com"]):
        creator = f"cy{number}@example.com"
        invited_as(client, smtp_server, deliver, opponent, creator)
    assert smtp_server.handler.to("bob+2@example.com") == []
    assert smtp_server.handler.to("bob@example.com") == []
    with app.app_context(), transaction():
        homes.accept_invitations("bob+1@example.com")
    with app.app_context():
        assert not invitations.blocked("bob+2@example.com")


def invited_as(
    client: FlaskClient,
    smtp_server: SMTPServer,
    deliver: Callable[[], int],
    opponent: str,
    creator: str,
) -> str:
    """``creator`` asks for a game against ``opponent`` and confirms; the path of the
    opponent's link, if their invitation went."""
    ask(client, name="Cy", email=creator, opponent_email=opponent)
    deliver()
    client.post(last_link(smtp_server, creator, "/invitations/"))
    deliver()
    sent = smtp_server.handler.to(opponent)
    return path_of(sent[-1].links("/invitations/")[0]) if sent else ""


def statuses(app: Flask) -> tuple[str, str]:
    """The one invitation's status and its game's."""
    with app.app_context():
        invitation = db.session.scalars(select(Invitation)).one()
        return invitation.status, db.session.get_one(Game, invitation.game_id).status


def test_an_invitation_left_unanswered_expires_and_the_creator_is_told(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    invite = invited(client, smtp_server, deliver)
    told = len(smtp_server.handler.to("ann@example.com"))
    with app.app_context():
        ends = db.session.scalars(select(Invitation)).one().updated_at + timedelta(days=14)
    page = client.get(invite).get_data(as_text=True)
    assert f"This invitation expires on {ends:%b} {ends.day}, {ends.year}," in page
    # In the time zone the invitee's address chose, as its emails and home page give times.
    with app.app_context(), transaction():
        homes.set_time_zone("bob@example.com", "Asia/Tokyo")
    tokyo = ends.astimezone(ZoneInfo("Asia/Tokyo"))
    page = client.get(invite).get_data(as_text=True)
    assert f"expires on {tokyo:%b} {tokyo.day}, {tokyo.year}, {tokyo:%-I:%M}\u202f" in page
    assert " Asia/Tokyo." in page
    with app.app_context():
        assert sweep(utcnow() + timedelta(days=13)).invitations_expired == []
    assert statuses(app) == ("invited", "waiting")
    with app.app_context():
        (expired,) = sweep(utcnow() + timedelta(days=14, minutes=1)).invitations_expired
        assert sweep(utcnow() + timedelta(days=15)).invitations_expired == []
    assert statuses(app) == ("expired", "cancelled")
    deliver()
    (email,) = smtp_server.handler.to("ann@example.com")[told:]
    assert str(email.message["Subject"]) == "Your Split Mind invitation to Bob expired"
    assert "Bob did not answer your invitation to play Split Mind within 14 days." in email.text
    page = client.get(invite).get_data(as_text=True)
    assert "This invitation expired unanswered: the game will not start." in page
    assert "Accept and start" not in page
    answered = client.post(invite, data={"answer": "accept"}).get_data(as_text=True)
    assert "This invitation expired unanswered" in answered
    assert statuses(app) == ("expired", "cancelled")


@pytest.mark.parametrize("answer", ["accept", "decline"])
def test_an_answer_after_the_invitations_time_finds_it_expired(
    app: Flask, client: FlaskClient, smtp_server, deliver, answer: str
) -> None:
    """Before the sweep's next pass too: whether an answer was too late hangs on the time."""
    invite = invited(client, smtp_server, deliver)
    told = len(smtp_server.handler.to("ann@example.com"))
    with app.app_context():
        ends = db.session.scalars(select(Invitation)).one().updated_at + timedelta(days=14)
    with time_machine.travel(ends + timedelta(seconds=1)):
        page = client.get(invite).get_data(as_text=True)  # no answer offered, nothing changed
        assert "This invitation expired unanswered" in page and "Accept and start" not in page
        assert statuses(app) == ("invited", "waiting")
        late = client.post(invite, data={"answer": answer, "name": "Bob"})
        deliver()
    assert late.status_code == 409 and "Location" not in late.headers
    assert "This invitation expired unanswered" in late.get_data(as_text=True)
    assert statuses(app) == ("expired", "cancelled")
    with app.app_context():  # a decline's promise holds: the address takes no more
        assert invitations.blocked("bob@example.com") == (answer == "decline")
    (email,) = smtp_server.handler.to("ann@example.com")[told:]
    assert str(email.message["Subject"]) == "Your Split Mind invitation to Bob expired"
    with app.app_context():
        assert sweep(utcnow() + timedelta(days=15)).invitations_expired == []


def test_a_confirmation_after_the_requests_time_finds_it_expired(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    confirm = requested(client, smtp_server, deliver)
    with time_machine.travel(utcnow() + timedelta(days=14, seconds=1)):
        late = client.post(confirm)
    assert late.status_code == 409
    assert "This invitation expired unanswered" in late.get_data(as_text=True)
    assert statuses(app) == ("expired", "cancelled")
    deliver()
    assert len(smtp_server.received) == 1  # Bob was never invited


def test_a_request_never_confirmed_expires_without_a_word(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    confirm = requested(client, smtp_server, deliver)
    with app.app_context():
        assert len(sweep(utcnow() + timedelta(days=15)).invitations_expired) == 1
    deliver()
    assert len(smtp_server.received) == 1  # the confirmation asked for, and nothing since
    assert statuses(app) == ("expired", "cancelled")
    page = client.post(confirm).get_data(as_text=True)
    assert "This invitation expired unanswered: the game will not start." in page
    deliver()
    assert len(smtp_server.received) == 1  # Bob was never invited


def test_a_rematch_that_expired_unanswered_may_be_asked_for_again(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    from ..factories import played

    game = make_game(seed=30)
    played(app, game["id"], 30, emails=False)
    deliver()
    (rematch,) = smtp_server.handler.to("kim@example.com")[-1].links("/rematch/")
    assert client.post(path_of(rematch)).status_code == 303
    with app.app_context():
        (expired,) = sweep(utcnow() + timedelta(days=15)).invitations_expired
    page = client.post(path_of(rematch), follow_redirects=True).get_data(as_text=True)
    assert "Sam is invited. The game starts when they accept." in page
    with app.app_context():
        rows = db.session.scalars(select(Invitation).order_by(Invitation.id)).all()
        assert [(row.id == expired, row.status) for row in rows] == [
            (True, "expired"),
            (False, "invited"),
        ]


def test_invitations_wait_for_ever_with_no_invitation_days(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    invited(client, smtp_server, deliver)
    app.config["INVITATION_DAYS"] = 0
    with app.app_context():
        assert sweep(utcnow() + timedelta(days=400)).invitations_expired == []
    assert statuses(app) == ("invited", "waiting")


def test_bad_requests_are_refused_with_the_reason(client: FlaskClient) -> None:
    for changes, reason in (
        ({"opponent_email": "ann@example.com"}, "two different email addresses"),
        ({"email": "not-an-address"}, "Invalid email address"),
        ({"days": "0"}, "from 1 to 60, or leave it empty"),
    ):
        response = ask(client, **changes)
        assert response.status_code == 400
        assert reason in response.get_data(as_text=True)
    # Each wrong field is named invalid, described by its error, and listed at the top.
    html = ask(client, email="not-an-address", days="0").get_data(as_text=True)
    for field in ("email", "days"):
        assert f'aria-describedby="{field}-error" aria-invalid="true"' in html.replace(
            f'aria-invalid="true" aria-describedby="{field}-error"',
            f'aria-describedby="{field}-error" aria-invalid="true"',
        )
        assert f'<p class="error" id="{field}-error">' in html
        assert f'<a href="#{field}">' in html
    assert "2 fields need a change:" in html and html.count('aria-invalid="true"') == 2
    response = client.post("/new", data=NEW_GAME_FORM)  # no CSRF token
    assert response.status_code == 400


@pytest.mark.parametrize(
    ("path", "form", "sent"),
    [
        ("/new", NEW_GAME_FORM, "Check your email"),
        ("/links", {"email": "ann@example.com"}, "is on its way to it"),
    ],
)
def test_a_form_left_open_past_its_tokens_time_comes_back_filled_in(
    app: Flask, client: FlaskClient, path: str, form: dict[str, str], sent: str
) -> None:
    """A form filled in over a long time is not lost: it comes back as it was sent, with a
    fresh token, and nothing done; sent again, it is taken."""
    token = csrf_token(client.get(path).get_data(as_text=True))
    limit = app.config["WTF_CSRF_TIME_LIMIT"]
    app.config["WTF_CSRF_TIME_LIMIT"] = -1  # every token signed before now has expired
    response = client.post(path, data={**form, "csrf_token": token})
    app.config["WTF_CSRF_TIME_LIMIT"] = limit
    assert response.status_code == 400
    html = response.get_data(as_text=True)
    assert "as it was open a long time: here it is as you filled it in" in html
    for value in form.values():
        assert f'value="{value}"' in html or value in ("keeper", "single", "standard")
    assert count(app, Invitation) == count(app, OutboxMessage) == 0
    # A refused token is refused again with nothing posted but the token (no form's data).
    assert client.post(path, data={"csrf_token": "forged"}).status_code == 400
    again = client.post(path, data={**form, "csrf_token": csrf_token(html)})
    assert again.status_code == 200 and sent in again.get_data(as_text=True)
    assert count(app, OutboxMessage) == 1


@pytest.mark.parametrize("blank", ["   ", "\t\u200b"])
def test_a_name_of_spaces_alone_is_no_name(app: Flask, client: FlaskClient, blank: str) -> None:
    """Nothing of it would be left to play under: the form asks for a name, and keeps the rest."""
    response = ask(client, name=blank, opponent_name=blank)
    assert response.status_code == 400
    html = response.get_data(as_text=True)
    assert html.count('-error">This field is required.') == 2
    assert 'value="bob@example.com"' in html
    assert count(app, Game) == count(app, Invitation) == count(app, OutboxMessage) == 0


def test_a_name_that_reads_as_the_computers_is_refused(app: Flask, client: FlaskClient) -> None:
    """A person called "the computer, hard" would pass for it on pages and in emails."""
    for changes in (
        {"name": " The computer, HARD "},
        {"opponent_name": "the computer - easy"},
        {"opponent": "computer", "level": "easy", "name": "l’ordinateur, difficile"},
        {"name": "Computer"},
        {"opponent_name": "Ordinateur"},
    ):
        response = ask(client, **changes)
        assert response.status_code == 400
        assert "is how this service names the computer: choose another name." in (
            response.get_data(as_text=True)
        )
    response = ask_for_game(client, {"Accept-Language": "fr"}, name="l'ordinateur moyen")
    assert response.status_code == 400
    said = "«\u00a0l&#39;ordinateur moyen\u00a0» est le nom que ce service donne à l’ordinateur"
    assert said in response.get_data(as_text=True)
    assert count(app, Game) == count(app, Invitation) == count(app, OutboxMessage) == 0


# What a stranger might type into the public form, to be carried to someone else's inbox.
HOSTILE = {
    "name": "URGENT call your bank about your account",
    "opponent_name": "Bank Security Team: call +1 555 0100",
    "opponent_email": "support@phish.example",
}


def test_an_unconfirmed_address_gets_no_word_the_requester_typed(
    client: FlaskClient, smtp_server, deliver
) -> None:
    """The typed address may not be the requester's: its emails carry nothing they chose,
    neither the confirmation of a game against a person nor the start of one against the
    computer."""
    for language in ("en", "fr"):
        headers = {"Accept-Language": language}
        assert (
            ask_for_game(client, headers, email="victim@example.org", **HOSTILE).status_code == 200
        )
        computer = {"opponent": "computer", "level": "easy", "name": HOSTILE["name"]}
        assert (
            ask_for_game(client, headers, email="prey@example.org", **computer).status_code == 200
        )
    deliver()
    received = smtp_server.handler.to("victim@example.org") + smtp_server.handler.to(
        "prey@example.org"
    )
    assert len(received) == 4
    for email in received:
        words = [email.text, email.html, *(str(value) for value in email.message.values())]
        for typed in (*HOSTILE.values(), "URGENT", "evil.example", "Bank", "phish"):
            assert not any(typed in text for text in words), typed
    assert received[0].links("/invitations/")


def test_a_game_against_the_computer_greets_by_the_typed_name_once_its_player_moved(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    """Its invitation, to an address that never used its link, carries no word the requester
    typed (and no reminder or timeout follows it); once the player has moved, the emails
    greet them by their name."""
    computer = {"opponent": "computer", "level": "easy", "name": HOSTILE["name"]}
    assert ask_for_game(client, email="prey@example.org", **computer).status_code == 200
    with app.app_context():
        deadline = db.session.scalars(select(Game)).one().deadline
        assert sweep(deadline - timedelta(hours=23)).reminded
    deliver()
    with app.app_context():
        assert sweep(deadline + timedelta(seconds=1)).expired
    deliver()
    received = smtp_server.handler.to("prey@example.org")
    assert len(received) == 1  # its start alone: the address never moved
    for email in received:
        assert "Hello," in email.text
        words = [email.text, email.html, *(str(value) for value in email.message.values())]
        assert not any(HOSTILE["name"] in text for text in words)

    assert ask_for_game(client, email="kim@example.org", **computer).status_code == 200
    with app.app_context():
        game = db.session.scalars(select(Game).order_by(Game.id.desc())).first()
        kim = next(player for player in game.players if not player.is_computer)
        token = token_for(kim)
        assert greeting(kim) is None
    view = client.get(f"/api/play/{token}").get_json()
    body = {"version": view["version"], **pick_action(view, random.Random(1))}
    assert client.post(f"/api/play/{token}", json=body).status_code == 200
    with app.app_context():
        assert greeting(db.session.get_one(Player, kim.id)) == HOSTILE["name"]


@pytest.mark.parametrize(
    "name",
    [
        "Visit http://evil.test/prize NOW",
        "win at www.prize now",
        "prizes at evil.test",
        "Mallory mallory@evil.test",
        "bit.ly/x",
        "Win cash at prizes.cc",
        "ｅｖｉｌ．ｃｏｍ",
        "evil。com",
        "evil｡com",
        "mallory＠evil.test",
        "goo.gl/abc",
        "secure-login.dev",
        "evil.zip",
        "evil.to/x",
        "my.page",
        "evil.c\u043em",
    ],
)
def test_a_name_holding_a_web_or_email_address_is_refused(
    app: Flask, client: FlaskClient, name: str
) -> None:
    """Names go into the subject and greeting of an email to a stranger: no link rides in."""
    for field in ("name", "opponent_name"):
        response = ask(client, **{field: name})
        assert response.status_code == 400
        assert "A name cannot hold a web or email address." in response.get_data(as_text=True)
    assert count(app, Game) == count(app, Invitation) == count(app, OutboxMessage) == 0


def test_names_with_initials_and_numbers_are_names(app: Flask, client: FlaskClient) -> None:
    names = (
        "J.Smith",
        "Dr. Who",
        "Kim 2.0",
        "Anne-Marie O'Neil",
        "ann.lee",
        "Jo.Anne",
        "Zoë Ødegaard",
        "Αλέξης",  # Greek, whose letters pass for Latin ones in an address only
        "AC/DC",
        "J.Page",  # an initial before a name that is also an ending of addresses
        "V.To",
        "S.Im",
    )
    for number, name in enumerate(names):
        # Each from a machine of its own, clear of the per-IP limit.
        response = ask(from_elsewhere(app, number), name=name, email=f"ann{number}@example.com")
        assert response.status_code == 200, name
    assert count(app, Invitation) == len(names)


def test_the_invited_player_sees_and_may_change_the_name_they_play_under(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    """Ann wrote "Bob" for her opponent: the invitation says so, and Bob may play as Robert.
    A name that reads as the computer's is refused, and the invitation still waits."""
    respond = invited(client, smtp_server, deliver)
    page = client.get(respond).get_data(as_text=True)
    assert 'name="name" value="Bob"' in page and "Ann chose it" in page
    spam = client.post(respond, data={"answer": "accept", "name": "see evil.test"})
    assert spam.status_code == 400
    assert "A name cannot hold a web or email address." in spam.get_data(as_text=True)
    refused = client.post(respond, data={"answer": "accept", "name": "The Computer, hard"})
    assert refused.status_code == 400
    assert "is how this service names the computer" in refused.get_data(as_text=True)
    # The name typed comes back, tied to the error, where the cursor is.
    field = re.search(r'<input[^>]*id="name"[^>]*>', refused.get_data(as_text=True))
    assert field is not None and 'value="The Computer, hard"' in field.group(0)
    assert 'aria-describedby="answer-error"' in field.group(0) and "autofocus" in field.group(0)
    with app.app_context():
        invitation = db.session.scalars(select(Invitation)).one()
        assert (invitation.status, invitation.opponent_name) == ("invited", "Bob")
    accepted = client.post(respond, data={"answer": "accept", "name": "  Robert  "})
    assert accepted.status_code == 303
    with app.app_context():
        game = db.session.scalars(select(Game)).one()
        assert game.status == "active"
        assert {player.seat: player.name for player in game.players} == {
            "keeper": "Ann",
            "shadow": "Robert",
        }
    deliver()
    assert "Hello Robert," in smtp_server.handler.to("bob@example.com")[-1].text
    # Answered: the same form again says so, whatever name it gives.
    again = client.post(respond, data={"answer": "accept", "name": "The Computer, hard"})
    assert again.status_code == 200
    assert "You accepted: the game has started" in again.get_data(as_text=True)


def test_requests_are_rate_limited_per_address(client: FlaskClient) -> None:
    statuses = [ask(client, opponent_email=f"friend{n}@example.com").status_code for n in range(6)]
    assert statuses[:5] == [200] * 5 and statuses[5] == 429


def test_requests_are_rate_limited_per_ip(client: FlaskClient) -> None:
    statuses = [
        ask(client, email=f"me{n}@example.com", opponent_email=f"you{n}@example.com").status_code
        for n in range(11)
    ]
    assert statuses[:10] == [200] * 10 and statuses[10] == 429


AGAINST_THE_COMPUTER = {"opponent": "computer", "level": "easy", "opponent_name": ""}


def games_and_emails(app: Flask) -> tuple[list[str], list[str]]:
    """The status of every game and the kind of every email queued, oldest first."""
    with app.app_context():
        statuses = db.session.scalars(select(Game.status).order_by(Game.id)).all()
        kinds = db.session.scalars(select(OutboxMessage.kind).order_by(OutboxMessage.id)).all()
        return list(statuses), list(kinds)


def test_the_same_form_sent_again_before_an_answer_asks_once(
    app: Flask, client: FlaskClient
) -> None:
    """A double click, or the form sent again after a slow answer: the same page, one game
    and one email each, against a person or the computer; and one count of the allowance
    of five a day, which the seventh would pass."""
    person = [ask(client) for _ in range(7)]
    computer = [ask(from_elsewhere(app, 1), **AGAINST_THE_COMPUTER) for _ in range(7)]
    for responses in (person, computer):
        assert [response.status_code for response in responses] == [200] * 7
        pages = {response.get_data(as_text=True) for response in responses}
        assert len(pages) == 1 and "Check your email" in pages.pop()
    assert games_and_emails(app) == (["waiting", "active"], ["confirm_address", "invitation"])
    with app.app_context():
        assert db.session.scalars(select(Invitation.status)).all() == ["unconfirmed"]


def test_the_same_form_asks_again_once_answered_changed_or_later(
    app: Flask, client: FlaskClient
) -> None:
    """Not a repeat: the first one confirmed or played, another option, ten minutes later."""
    assert ask(client).status_code == 200
    with app.app_context():
        first = db.session.scalars(select(Invitation)).one()
        confirm = f"/invitations/{invitations.token(first, 'confirm')}"
    assert client.post(confirm).status_code == 200
    assert ask(client).status_code == 200  # the first one is confirmed
    assert ask(client, days="6").status_code == 200  # another option
    assert ask(client, opponent_email="cy@example.com").status_code == 200
    with app.app_context(), transaction():
        for game in db.session.scalars(select(Game)):
            game.created_at -= REPEAT_WINDOW
    assert ask(client, opponent_email="cy@example.com").status_code == 200  # later
    assert games_and_emails(app)[0] == ["waiting"] * 5
    elsewhere = from_elsewhere(app, 1)
    dee = {**AGAINST_THE_COMPUTER, "email": "dee@example.com"}
    assert ask(elsewhere, **dee).status_code == 200
    with app.app_context():
        game = db.session.scalars(select(Game).order_by(Game.id.desc())).first()
        token = token_for(game.player("keeper"))
    view = client.get(f"/api/play/{token}").get_json()
    move = {"version": view["version"], **pick_action(view, random.Random(1))}
    assert client.post(f"/api/play/{token}", json=move).status_code == 200
    assert ask(elsewhere, **dee).status_code == 200  # Dee has played in the first one
    statuses, kinds = games_and_emails(app)
    assert statuses == ["waiting"] * 5 + ["active"] * 2
    assert kinds.count("confirm_address") == 5 and kinds.count("invitation") == 2


def test_stop_emails_with_the_confirm_page_and_one_click(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    make_game(seed=1)
    deliver()
    for address, one_click in (("kim@example.com", False), ("sam@example.com", True)):
        message = smtp_server.handler.to(address)[-1]
        link = path_of(message.message["List-Unsubscribe"].strip().strip("<>"))
        assert client.get(link).status_code == 200
        with app.app_context():
            assert db.session.scalars(select(Player).where(Player.email == address)).one().notify
        data = {"List-Unsubscribe": "One-Click"} if one_click else {}
        response = client.post(link, data=data)
        assert response.status_code == 200
        page = response.get_data(as_text=True)
        assert "you will get no more emails about game" in page
        assert "Nobody can invite your address to a new game here any more either." in page
        # Where to undo it, in words: this link never changes, so it leads to no page.
        assert "in your latest email from this service" in page and "/me/" not in page
        with app.app_context():
            player = db.session.scalars(select(Player).where(Player.email == address)).one()
            assert not player.notify
            assert db.session.get(Address, address).unsubscribed_at is not None
    assert client.get("/unsubscribe/forged").status_code == 404


def test_no_more_emails_after_stopping_them(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    import random

    from ..helpers import pick_action

    game = make_game(seed=2)
    deliver()
    message = smtp_server.handler.to("kim@example.com")[-1]
    client.post(path_of(message.message["List-Unsubscribe"].strip().strip("<>")))
    before = len(smtp_server.handler.to("kim@example.com"))
    rng = random.Random(2)
    for _ in range(12):
        for seat in ("keeper", "shadow"):
            view = client.get(f"/api/play/{game[seat]}").get_json()
            if view["your_turn"]:
                body = {"version": view["version"], **pick_action(view, rng)}
                assert client.post(f"/api/play/{game[seat]}", json=body).status_code == 200
            deliver()  # before the other player moves, which withdraws their turn email
    assert len(smtp_server.handler.to("kim@example.com")) == before
    assert len(smtp_server.handler.to("sam@example.com")) > 1
    # And the public page will not invite that address again.
    assert ask(client, opponent_email="kim@example.com").status_code == 200
    deliver()
    client.post(last_link(smtp_server, "ann@example.com", "/invitations/"))
    deliver()
    assert len(smtp_server.handler.to("kim@example.com")) == before


def refuses_rematch(client: FlaskClient, token: str, reason: str) -> None:
    """The rematch page of the player with ``token``, read and posted, refuses with ``reason``."""
    for method in (client.get, client.post):
        response = method(f"/rematch/{token}")
        assert response.status_code == 409, reason
        assert reason in response.get_data(as_text=True)


def count(app: Flask, model: type) -> int:
    with app.app_context():
        return db.session.scalar(select(db.func.count()).select_from(model))


def test_rematch_from_the_game_over_email_invites_the_opponent(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    from ..factories import played

    game = make_game(seed=30, look="classic", days_per_move=3)
    played(app, game["id"], 30, emails=False)
    deliver()
    over = smtp_server.handler.to("kim@example.com")[-1]
    (rematch,) = over.links("/rematch/")
    page = client.get(path_of(rematch))
    assert page.status_code == 200
    assert "Invite Sam to a new game with the roles swapped" in page.get_data(as_text=True)
    assert count(app, Game) == 1
    response = client.post(path_of(rematch))
    # Back to the rematch's page, which says Sam is invited: no play link before Sam accepts.
    assert response.status_code == 303 and response.headers["Location"].endswith(path_of(rematch))
    said = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "Sam is invited. The game starts when they accept." in said
    again = client.post(path_of(rematch), follow_redirects=True)  # a second tap: the same
    assert again.status_code == 200 and "Sam is invited" in again.get_data(as_text=True)
    with app.app_context():
        games = db.session.scalars(select(Game).order_by(Game.id)).all()
        assert len(games) == 2
        new = games[1]
        assert new.status == "waiting" and new.deadline is None and new.match_id is None
        assert (new.look, new.days_per_move) == ("classic", 3)
        assert new.player("keeper").email == "sam@example.com"
        assert new.player("shadow").email == "kim@example.com"
        invitation = db.session.scalars(select(Invitation)).one()
        assert invitation.game_id == new.id and invitation.status == "invited"
        assert (invitation.creator_email, invitation.creator_role) == ("kim@example.com", "shadow")
        assert invitation.opponent_email == "sam@example.com" and invitation.days_per_move == 3
    before = len(smtp_server.handler.to("kim@example.com"))
    deliver()
    assert len(smtp_server.handler.to("kim@example.com")) == before
    invited = smtp_server.handler.to("sam@example.com")[-1]
    assert "Kim invites you to play Split Mind" in str(invited.message["Subject"])
    (answer,) = invited.links("/invitations/")
    accepted = client.post(path_of(answer), data={"answer": "accept"})
    assert accepted.status_code == 303
    view = client.get("/api" + accepted.headers["Location"]).get_json()
    assert view["seat"] == "keeper" and view["game"] == new.id and view["status"] == "active"
    deliver()
    assert smtp_server.handler.to("kim@example.com")[-1].links("/play/")
    started = client.get(path_of(rematch)).get_data(as_text=True)
    assert "Sam accepted: the game has started, your link is in your email." in started


@pytest.mark.parametrize(
    ("kim", "sam", "subject"),
    [
        ("fr", None, "Kim invites you to play Split Mind"),
        ("en", "fr", "Kim vous invite à jouer à Split Mind"),
    ],
)
def test_a_rematch_invites_the_opponent_in_the_language_their_emails_are_in(
    app: Flask,
    client: FlaskClient,
    make_game,
    smtp_server,
    deliver,
    kim: str,
    sam: str | None,
    subject: str,
) -> None:
    """Sam, who never chose a language, has had every email in English: so is the rematch
    Kim, who reads French, asks for; and Sam who chose French is invited in French."""
    from service import games, homes

    game = make_game()
    with app.app_context(), transaction():
        homes.set_language("kim@example.com", kim)
        if sam is not None:
            homes.set_language("sam@example.com", sam)
        games.declare_forfeit(game["id"], "shadow", "alice")
    deliver()
    assert client.post(f"/rematch/{game['keeper']}").status_code == 303
    deliver()
    invited = smtp_server.handler.to("sam@example.com")[-1]
    assert subject in str(invited.message["Subject"])


def test_the_opponent_asking_too_is_shown_the_invitation_they_were_sent(
    app: Flask, client: FlaskClient, make_game
) -> None:
    from service import games

    game = make_game()
    with app.app_context(), transaction():
        games.declare_forfeit(game["id"], "shadow", "alice")
    assert client.post(f"/rematch/{game['keeper']}").status_code == 303
    response = client.post(f"/rematch/{game['shadow']}", follow_redirects=True)
    assert response.status_code == 200
    assert "Kim has already invited you to a new game" in response.get_data(as_text=True)
    assert count(app, Invitation) == 1 and count(app, Game) == 2
    # The link to answer it, as the email has it, from the page the player reached.
    (answer,) = re.findall(
        r'<a class="button primary" href="([^"]+)">Accept or decline', response.text
    )
    assert "Accept" in client.get(answer).text
    assert client.post(answer, data={"answer": "accept"}).status_code == 303
    with app.app_context():
        assert db.session.scalars(select(Invitation.status)).one() == "accepted"


def test_a_declined_rematch_tells_the_requester(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    from service import games

    game = make_game()
    with app.app_context(), transaction():
        games.declare_forfeit(game["id"], "keeper", "alice")
    client.post(f"/rematch/{game['shadow']}")
    deliver()
    invite = last_link(smtp_server, "kim@example.com", "/invitations/")
    assert client.post(invite, data={"answer": "decline"}).status_code == 200
    deliver()
    assert "declined" in str(smtp_server.handler.to("sam@example.com")[-1].message["Subject"])
    # Kim's address takes no invitation now; Sam's page offers a rematch all the same, as it
    # would to any address: what Kim chose shows nowhere but in the answer Sam was sent.
    offered = client.get(f"/rematch/{game['shadow']}")
    assert offered.status_code == 200
    assert "Invite Kim to a new game with the roles swapped" in offered.text
    with app.app_context():
        assert db.session.scalars(select(Game).order_by(Game.id.desc())).first().status == (
            "cancelled"
        )
    # A game that never started is no rematch: Kim's home page offers one, not "game N".
    with app.app_context():
        home = f"/me/{home_token('kim@example.com')}"
    page = client.get(home).get_data(as_text=True)
    assert "Rematch: game" not in page and "Ask Sam for a rematch" in page


def test_no_rematch_for_an_open_cancelled_or_first_match_game(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    """The first game of a return match played to its end is followed by the second; one cut
    short may have a rematch (tests/mail/test_return_match.py)."""
    from service import games

    from ..factories import written

    live = make_game(seed=31)
    cancelled = make_game(seed=32)
    with app.app_context(), transaction():
        games.cancel_game(cancelled["id"], "alice")
        match = games.create_match(
            games.Seating("kim@example.com", "Kim"), games.Seating("sam@example.com", "Sam")
        )
        first_of_match = {"id": match.id, "keeper": token_for(match.player("keeper"))}
    written(app, first_of_match["id"], seed=33)  # played to its end, which deals the second game
    with app.app_context():
        second = db.session.get_one(Game, first_of_match["id"]).match.games[1].id
    follows = (
        f"first game of a return match: ask for a rematch from its second game, game {second}."
    )
    for tokens, reason in (
        (live, f"Game {live['id']} is still in play: finish it first."),
        (cancelled, f"Game {cancelled['id']} was cancelled: it has no rematch."),
        (first_of_match, follows),
    ):
        refuses_rematch(client, tokens["keeper"], reason)
    with app.app_context(), transaction():
        games.cancel_game(second, "alice")
    refuses_rematch(
        client,
        first_of_match["keeper"],
        f"is the first game of a return match whose second game, game {second}, was "
        "cancelled: it has no rematch.",
    )
    assert count(app, Invitation) == 0 and count(app, Game) == 4
    with app.app_context():
        assert not db.session.scalars(
            select(OutboxMessage).where(OutboxMessage.kind == "invite_opponent")
        ).all()


@pytest.mark.parametrize("stop", [None, "declined_at", "unsubscribed_at"])
def test_a_rematch_to_an_address_that_takes_no_invitation_reads_the_same(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver, stop: str | None
) -> None:
    """Sam declined an invitation, or stopped emails, or neither: Kim's move page, game-end
    email and rematch page read the same, and the rematch is asked for, as a fresh invitation
    to such an address is; only its email to Sam is withheld, and it waits to expire."""
    from ..factories import played

    game = make_game(seed=30)
    if stop is not None:
        with app.app_context(), transaction():
            db.session.add(Address(email="sam@example.com", **{stop: utcnow()}))
    played(app, game["id"], 30, emails=False)
    deliver()
    (rematch,) = smtp_server.handler.to("kim@example.com")[-1].links("/rematch/")
    assert "Ask Sam for a rematch" in client.get(f"/play/{game['keeper']}").text
    offered = client.get(path_of(rematch))
    assert offered.status_code == 200
    assert "Invite Sam to a new game with the roles swapped" in offered.text
    asked = client.post(path_of(rematch), follow_redirects=True)
    assert asked.status_code == 200
    assert "Sam is invited. The game starts when they accept." in asked.text
    with app.app_context():
        assert db.session.scalars(select(Invitation.status)).one() == "invited"
    before = len(smtp_server.handler.to("sam@example.com"))
    deliver()
    assert len(smtp_server.handler.to("sam@example.com")) == before + (stop is None)
    assert "See the rematch" in client.get(f"/play/{game['keeper']}").text


def test_no_rematch_copies_a_stored_name_holding_an_address(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """A name given before such names were refused stays, but no rematch copies it: the
    rematch's invitation would carry it to the opponent (nor does one against the computer)."""
    from service import games

    finished = make_game(seed=35)
    with app.app_context(), transaction():
        games.declare_forfeit(finished["id"], "keeper", "alice")
        db.session.get_one(Game, finished["id"]).player("shadow").name = "Sam sam.com"
    refuses_rematch(
        client, finished["keeper"], "holds a web or email address, so no rematch copies it"
    )
    assert count(app, Invitation) == 0 and count(app, Game) == 1


def test_no_rematch_copies_a_stored_name_that_reads_as_the_computers(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """Names given before such names were refused stay, but a rematch does not copy them;
    the second game of a return match still deals, with the names of its first."""
    from service import games

    from ..factories import played

    finished = make_game(seed=35)
    with app.app_context(), transaction():
        games.declare_forfeit(finished["id"], "keeper", "alice")
        match_id = games.create_match(
            games.Seating("kim@example.com", "Kim"), games.Seating("sam@example.com", "Sam")
        ).id
        for game_id in (finished["id"], match_id):
            db.session.get(Game, game_id).player("shadow").name = "the computer, hard"
    refuses_rematch(
        client,
        finished["keeper"],
        "is how this service names the computer, so no rematch copies it",
    )
    assert count(app, Invitation) == 0
    played(app, match_id, 36, emails=False)
    with app.app_context():
        second = db.session.scalars(select(Game).where(Game.match_game == 2)).one()
        assert second.player("keeper").name == "the computer, hard"


def test_accepting_again_shows_the_page_not_the_play_link(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    invite = invited(client, smtp_server, deliver)
    assert client.post(invite, data={"answer": "accept"}).status_code == 303
    for answer, status in (("accept", 200), ("decline", 409)):  # the same answer, or another
        again = client.post(invite, data={"answer": answer})
        assert again.status_code == status and "Location" not in again.headers
        page = again.get_data(as_text=True)
        assert "You accepted: the game has started, and your link is in your email." in page
        assert "/play/" not in page
    with app.app_context():
        assert db.session.scalars(select(Game)).one().status == "active"


def test_a_game_closed_under_the_answer_shows_the_page(
    app: Flask, client: FlaskClient, smtp_server, deliver, monkeypatch
) -> None:
    from service import games

    def closed(game_id: int) -> None:
        raise games.GameClosed("This game is cancelled.")

    invite = invited(client, smtp_server, deliver)
    monkeypatch.setattr(games, "start_waiting_game", closed)
    response = client.post(invite, data={"answer": "accept"})
    assert response.status_code == 409
    assert "Accept and start" in response.get_data(as_text=True)
    with app.app_context():
        assert db.session.scalars(select(Invitation)).one().status == "invited"


def test_stop_emails_keeps_the_first_time(app: Flask, make_game) -> None:
    game = make_game()
    with app.app_context():
        kim = db.session.scalars(select(Player).where(Player.game_id == game["id"])).first()
        with transaction():
            invitations.stop_emails(kim)
        first = db.session.get(Address, kim.email).unsubscribed_at
        with transaction():
            invitations.stop_emails(kim)
        assert not kim.notify
        assert db.session.get(Address, kim.email).unsubscribed_at == first is not None
        assert invitations.blocked(kim.email)


def test_pages_reached_by_a_link_are_not_stored_by_caches(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    game = make_game()
    confirm = requested(client, smtp_server, deliver)
    with app.app_context():
        kim = db.session.scalars(select(Player).where(Player.game_id == game["id"])).first()
        unsubscribe = f"/unsubscribe/{compose.unsubscribe_token(kim)}"
    for path in (confirm, unsubscribe, f"/rematch/{game['keeper']}"):
        for method in (client.get, client.post):
            assert method(path).headers["Cache-Control"] == "no-store", path
    # A form's page holds its session's CSRF token, not a credential in its address.
    assert client.get("/new").headers["Cache-Control"] == "private, no-store"


def test_an_invitation_closes_when_an_admin_cancels_its_game(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    from service import games

    invite = invited(client, smtp_server, deliver)
    with app.app_context(), transaction():
        games.cancel_game(db.session.scalars(select(Game)).one().id, "alice", "not a real game")
    response = client.post(invite, data={"answer": "accept"})
    assert response.status_code == 409
    assert "This invitation is closed." in response.get_data(as_text=True)
    with app.app_context():
        assert db.session.scalars(select(Invitation)).one().status == "closed"
        assert db.session.scalars(select(Game)).one().status == "cancelled"
    deliver()
    assert len(smtp_server.handler.to("bob@example.com")) == 1  # only the invitation
    # Ann, who confirmed, waits for an answer: she is told, with the admin's reason.
    told = smtp_server.handler.to("ann@example.com")[-1]
    assert str(told.message["Subject"]) == "Your Split Mind invitation to Bob was cancelled"
    assert "The service's admins cancelled the game you invited Bob to play" in told.text
    assert "The reason given: not a real game" in told.text
    assert told.links("/unsubscribe/")


def test_a_creator_who_never_confirmed_is_not_told_of_the_cancel(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    """The address may not be theirs: it is written to no more."""
    from service import games

    requested(client, smtp_server, deliver)
    with app.app_context(), transaction():
        games.cancel_game(db.session.scalars(select(Game)).one().id, "alice")
    deliver()
    assert len(smtp_server.handler.to("ann@example.com")) == 1  # only the confirm link


def test_a_rematch_an_admin_cancelled_is_closed_at_once_and_may_be_asked_again(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    """Cancelled before Sam answered: Sam's pages no longer offer it, Kim's rematch page no
    longer says Sam is invited, and either may ask for a rematch again."""
    from service import games

    from ..factories import played

    game = make_game(seed=30)
    played(app, game["id"], 30, emails=False)
    deliver()
    (rematch,) = smtp_server.handler.to("kim@example.com")[-1].links("/rematch/")
    client.post(path_of(rematch))
    deliver()
    invitation = smtp_server.handler.to("sam@example.com")[-1]
    (answer,) = invitation.links("/invitations/")
    (home,) = invitation.links("/me/")
    with app.app_context(), transaction():
        cancelled = db.session.scalars(select(Game).order_by(Game.id.desc())).first()
        assert cancelled is not None and cancelled.status == "waiting"
        cancelled_id = cancelled.id
        games.cancel_game(cancelled_id, "alice")
    with app.app_context():
        assert db.session.scalars(select(Invitation)).one().status == "closed"
    assert "Accept" not in client.get(path_of(answer)).get_data(as_text=True)
    assert f"invites you to game {cancelled_id}" not in client.get(path_of(home)).get_data(
        as_text=True
    )
    page = client.get(path_of(rematch)).get_data(as_text=True)
    assert "Sam is invited" not in page and "Invite Sam to a new game" in page
    again = client.post(path_of(rematch), follow_redirects=True)
    assert "Sam is invited. The game starts when they accept." in again.get_data(as_text=True)
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(Game)) == 3


def test_confirming_after_an_admin_cancelled_the_game_closes_the_invitation(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    from service import games

    confirm = requested(client, smtp_server, deliver)
    with app.app_context(), transaction():
        games.cancel_game(db.session.scalars(select(Game)).one().id, "alice")
    response = client.post(confirm)
    assert response.status_code == 409
    page = response.get_data(as_text=True)
    assert "This invitation is closed." in page and "Bob will not play" not in page
    with app.app_context():
        assert db.session.scalars(select(Invitation)).one().status == "closed"
    deliver()
    assert smtp_server.handler.to("bob@example.com") == []


def test_a_rematchs_page_says_what_it_follows_and_its_email_when_it_expires(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    """The invitation's page says it is a rematch, as its email does; the email says when
    the invitation expires, in the invitee's time zone, and what declining does."""
    from service import games

    game = make_game()
    with app.app_context(), transaction():
        games.declare_forfeit(game["id"], "keeper", "alice")  # Sam, the Shadow, won
        homes.set_time_zone("kim@example.com", "Europe/Paris")
    assert client.post(f"/rematch/{game['shadow']}").status_code == 303
    deliver()
    email = smtp_server.handler.to("kim@example.com")[-1].text
    said = f"It is a rematch of game {game['id']}, which Sam won, with the roles swapped."
    assert said in email
    assert re.search(r"This invitation expires on [^\n]* Europe/Paris\.", email), email
    assert "will not invite your address again" not in email
    assert "Declining tells Sam so, and turns away every later invitation" in email
    answer = last_link(smtp_server, "kim@example.com", "/invitations/")
    with statements_run(app) as statements:
        page = client.get(answer).text
    assert said in page
    assert "Declining tells Sam so, and turns away every later invitation" in page
    # The invitation names the game it follows: no event is looked for by its note, which
    # no index finds, as every page of every invitation would then scan them all.
    assert not [sql for sql, _ in statements if "FROM events" in sql]


def test_a_rematch_asked_for_leads_back_to_its_page_and_a_reload_posts_nothing(
    app: Flask, client: FlaskClient, make_game
) -> None:
    from service import games

    game = make_game()
    with app.app_context(), transaction():
        games.declare_forfeit(game["id"], "shadow", "alice")
    response = client.post(f"/rematch/{game['keeper']}")
    assert response.status_code == 303
    assert response.headers["Location"].endswith(f"/rematch/{game['keeper']}")
    page = client.get(response.headers["Location"])
    assert page.status_code == 200
    assert "Sam is invited. The game starts when they accept." in page.text
    client.get(response.headers["Location"])  # the reload: a GET
    assert count(app, Invitation) == 1 and count(app, Game) == 2


def test_an_invitation_queued_before_an_admin_cancelled_its_game_is_dropped(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    """Ann confirms, and an admin cancels the game before the worker sends Bob's invitation:
    Bob is not asked to play a game that no longer exists; Ann hears of the cancel."""
    from service import games

    client.post(requested(client, smtp_server, deliver))
    with app.app_context(), transaction():
        games.cancel_game(db.session.scalars(select(Game)).one().id, "alice")
    deliver()
    assert smtp_server.handler.to("bob@example.com") == []
    told = smtp_server.handler.to("ann@example.com")[-1]
    assert str(told.message["Subject"]) == "Your Split Mind invitation to Bob was cancelled"
    with app.app_context():
        invite = db.session.scalars(
            select(OutboxMessage).where(OutboxMessage.kind == "invite_opponent")
        ).one()
        assert invite.status == "skipped"
        assert invite.last_error == "skipped: the invitation was closed or answered before it went"


def test_a_confirmation_queued_before_an_admin_cancelled_its_game_is_dropped(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    """The link would only say the invitation is closed."""
    from service import games

    ask(client)
    with app.app_context(), transaction():
        games.cancel_game(db.session.scalars(select(Game)).one().id, "alice")
    deliver()
    assert smtp_server.handler.to("ann@example.com") == []


def test_the_sweep_forgets_games_that_never_started_long_ago(
    app: Flask, make_game, deliver
) -> None:
    """Anyone may type any address on the public page: a request never confirmed, or an
    invitation declined or left unanswered, kept those addresses and names for good. The
    sweep deletes such a game, its invitation, seats and log, UNPLAYED_DAYS after it ended;
    a game played, and one that ended since, stay."""
    played_id = make_game()["id"]
    with app.app_context():
        old = request_invitation("stranger@example.net", creator="typed@example.net")
        recent = request_invitation("bob@example.com")
        old_game, recent_game = old.game_id, recent.game_id
    with app.app_context():
        assert sweep(utcnow() + timedelta(days=15)).invitations_expired == [old.id, recent.id]
    deliver()
    days = app.config["UNPLAYED_DAYS"]
    with app.app_context(), transaction():
        db.session.get_one(Game, old_game).updated_at = utcnow() - timedelta(days=days, hours=1)
        db.session.get_one(Invitation, old.id).updated_at = utcnow() - timedelta(days=days + 1)
    with app.app_context():
        assert sweep().unplayed_forgotten == 1
        assert db.session.get(Game, old_game) is None
        assert db.session.get(Invitation, old.id) is None
        left = db.session.scalars(select(Player.email).order_by(Player.email)).all()
        assert "stranger@example.net" not in left and "typed@example.net" not in left
        assert {played_id, recent_game} <= set(db.session.scalars(select(Game.id)))
        assert db.session.get(Invitation, recent.id) is not None


# --- an invitee on vacation ----------------------------------------------------


def played_before(app: Flask) -> None:
    """Ann and Bob played a game, over now: an invitation between them waits for either's
    return from vacation."""
    from service import games

    with app.app_context(), transaction():
        game = games.create_game(
            games.Seating("ann@example.com", "Ann", None),
            games.Seating("bob@example.com", "Bob", None),
        )
        games.declare_forfeit(game.id, "shadow", "alice")


def test_an_invitation_to_an_address_on_vacation_waits_for_its_return(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    """Bob goes away for thirty days the day Ann invites him: the invitation expires
    ``INVITATION_DAYS`` after he is back, not while he is away (they played before); his
    pages say so, and an answer after the usual fourteen days starts the game."""
    played_before(app)
    invite = invited(client, smtp_server, deliver)
    with app.app_context(), transaction():
        back = homes.take_vacation("bob@example.com", 30)
    ends = back + timedelta(days=14)
    page = client.get(invite).text
    assert f"This invitation expires on {ends:%b} {ends.day}, {ends.year}," in page
    with app.app_context():
        assert sweep(utcnow() + timedelta(days=15)).invitations_expired == []
        assert sweep(ends - timedelta(minutes=1)).invitations_expired == []
    assert statuses(app) == ("invited", "waiting")
    with time_machine.travel(back + timedelta(days=3)):
        accepted = client.post(invite, data={"answer": "accept"})
    assert accepted.status_code == 303
    assert statuses(app) == ("accepted", "active")


def test_an_invitation_expires_fourteen_days_after_a_vacation_cut_short(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    played_before(app)
    invited(client, smtp_server, deliver)
    with app.app_context(), transaction():
        homes.take_vacation("bob@example.com", 30)
    returned = utcnow() + timedelta(days=10)
    with time_machine.travel(returned, tick=False), app.app_context(), transaction():
        homes.end_vacation("bob@example.com")
    with app.app_context():
        assert sweep(returned + timedelta(days=14, minutes=-1)).invitations_expired == []
        assert len(sweep(returned + timedelta(days=14, minutes=1)).invitations_expired) == 1
    assert statuses(app) == ("expired", "cancelled")


def test_a_vacation_over_before_the_invitation_changes_nothing(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    before = utcnow() - timedelta(days=5)
    with time_machine.travel(before, tick=False), app.app_context(), transaction():
        homes.take_vacation("bob@example.com", 2)
    invited(client, smtp_server, deliver)
    with app.app_context():
        assert len(sweep(utcnow() + timedelta(days=14, minutes=1)).invitations_expired) == 1


def test_a_rematchs_requester_reads_that_the_opponent_is_away(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """Kim, who played Sam, asks for a rematch while Sam is away: the rematch's page and
    Kim's home page say until when, and that the invitation waits for Sam's return."""
    from service import games

    game = make_game()
    with app.app_context(), transaction():
        games.declare_forfeit(game["id"], "shadow", "alice")
        home = f"/me/{home_token('kim@example.com')}"
        back = homes.take_vacation("sam@example.com", 20)
    assert client.post(f"/rematch/{game['keeper']}").status_code == 303
    ends = back + timedelta(days=14)
    said = (
        f"Sam is on vacation until {back:%b} {back.day}, {back.year}, {back:%-I:%M}\u202f"
        f"{back:%p} UTC: the invitation waits for them, and expires on "
        f"{ends:%b} {ends.day}, {ends.year},"
    )
    assert said in client.get(f"/rematch/{game['keeper']}").text
    assert said in client.get(home).text


def test_a_stranger_inviting_an_address_on_vacation_learns_nothing_of_it(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    """Ann has never played Bob: what she sees of her invitation is what she would see
    were he at home."""
    invited(client, smtp_server, deliver)
    with app.app_context():
        usual = db.session.scalars(select(Invitation)).one().updated_at + timedelta(days=14)
        home = f"/me/{home_token('ann@example.com')}"
    with app.app_context(), transaction():
        homes.take_vacation("bob@example.com", 30)
    page = client.get(home).text
    assert f"The invitation expires on {usual:%b} {usual.day}, {usual.year}," in page
    assert "vacation" not in page.split("Invitations")[1]


def test_a_strangers_invitation_ends_as_usual_while_the_address_is_away(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    """Ann has never played Bob: her invitation ends when it would were he at home, for an
    invitation still open past that time would tell her that his address plays here, and
    is away. His page gives that end too."""
    invite = invited(client, smtp_server, deliver)
    with app.app_context(), transaction():
        homes.take_vacation("bob@example.com", 30)
    with app.app_context():
        usual = db.session.scalars(select(Invitation)).one().updated_at + timedelta(days=14)
    assert (
        f"This invitation expires on {usual:%b} {usual.day}, {usual.year},"
        in client.get(invite).text
    )
    with app.app_context():
        assert len(sweep(usual + timedelta(minutes=1)).invitations_expired) == 1
    assert statuses(app) == ("expired", "cancelled")
