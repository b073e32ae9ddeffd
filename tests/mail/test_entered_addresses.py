"""Addresses typed into the public pages: one that needs SMTPUTF8 is refused with the reason,
and every way of writing or sending one address draws on that address's one allowance."""

from __future__ import annotations

import html
import json
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import pytest
import time_machine
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

from service import games, invitations
from service.models import Address, Game, Invitation, OutboxMessage, db
from service.rematch_rules import blocked
from service.unit_of_work import transaction

from ..helpers import ask_for_game, csrf_token, from_elsewhere, request_invitation
from ..smtp import SMTPServer
from .test_lost_links import ask as ask_for_links

# Each reads as an ASCII address, and each needs SMTPUTF8: a fullwidth v, an accent, Cyrillic.
NEEDS_SMTPUTF8 = ["\uff56ictim@example.com", "andré@example.com", "\u0430nn@example.com"]
# One inbox written five ways: capitals, a fullwidth a, an ideographic and a fullwidth full stop.
ANN = ["ann@example.com", "ANN@Example.com", "ann@ex\uff41mple.com", "ann@example\u3002com",
       "ann@example\uff0ecom"]  # fmt: skip


def rows(app: Flask) -> tuple[int, int, int]:
    """How many games, invitations and emails there are."""
    with app.app_context():
        return tuple(
            db.session.scalar(select(func.count()).select_from(model))
            for model in (Game, Invitation, OutboxMessage)
        )


@pytest.mark.parametrize("address", NEEDS_SMTPUTF8)
@pytest.mark.parametrize("field", ["email", "opponent_email"])
def test_the_new_game_form_refuses_an_address_that_needs_smtputf8(
    app: Flask, client: FlaskClient, field: str, address: str
) -> None:
    response = ask_for_game(client, **{field: address})
    assert response.status_code == 400
    page = response.get_data(as_text=True)
    reason = "Before the @ this address has characters that mail servers need not accept"
    unusual = next(ch for ch in address if not ch.isascii())
    assert reason in page and f"({unusual})" in page
    assert rows(app) == (0, 0, 0)


def test_the_lost_links_page_refuses_an_address_that_needs_smtputf8(
    app: Flask, client: FlaskClient
) -> None:
    response = ask_for_links(client, NEEDS_SMTPUTF8[0])
    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert "Before the @ this address has characters" in page and "(\uff56)" in page
    assert rows(app) == (0, 0, 0)


def test_the_reason_in_french(client: FlaskClient) -> None:
    french = {"Accept-Language": "fr-FR,fr;q=0.9"}
    response = ask_for_game(client, headers=french, email=NEEDS_SMTPUTF8[1])
    assert response.status_code == 400
    assert "Avant le @, cette adresse contient des caractères" in response.get_data(as_text=True)


def test_a_plain_bad_address_is_still_just_invalid(client: FlaskClient) -> None:
    response = ask_for_game(client, email="ann@@example.com")
    assert response.status_code == 400
    assert "Invalid email address." in response.get_data(as_text=True)
    assert "Before the @" not in response.get_data(as_text=True)


@pytest.mark.parametrize("address", NEEDS_SMTPUTF8)
def test_the_service_refuses_an_address_that_needs_smtputf8(app: Flask, address: str) -> None:
    with app.app_context():
        with pytest.raises(games.InvalidGame, match="before the @-sign are not supported"):
            games.clean_email(address)
        with pytest.raises(games.InvalidGame):
            request_invitation(address)
        with pytest.raises(games.InvalidGame), transaction():
            invitations.send_links(address, "en")
        db.session.rollback()
    assert rows(app) == (0, 0, 0)


def test_the_creators_ways_of_writing_an_address_share_one_allowance(
    app: Flask, client: FlaskClient, smtp_server: SMTPServer, deliver
) -> None:
    statuses = [
        ask_for_game(client, email=address, opponent_email=f"friend{n}@example.com").status_code
        for n, address in enumerate([*ANN, "Ann@EXAMPLE.COM"])
    ]
    assert statuses == [200] * 5 + [429]
    deliver()
    assert len(smtp_server.handler.to("ann@example.com")) == 5
    assert [m.envelope_to for m in smtp_server.received] == [["ann@example.com"]] * 5


def test_sub_addresses_draw_on_their_inbox_s_allowance(
    app: Flask, client: FlaskClient, smtp_server: SMTPServer, deliver
) -> None:
    """ann+1@ and ann+2@ reach ann@'s inbox: one stranger cannot send it more through them.
    The refusal says when to try again."""
    addresses = ["ann+1@example.com", "ann+2@example.com", "ann@example.com", "ANN+x@example.com"]
    answers = [
        ask_for_game(client, email=address, opponent_email=f"friend{n}@example.com")
        for n, address in enumerate([*addresses, "ann+y@example.com", "ann+z@example.com"])
    ]
    assert [answer.status_code for answer in answers] == [200] * 5 + [429]
    assert 0 < int(answers[-1].headers["Retry-After"]) <= 24 * 3600
    deliver()
    assert len(smtp_server.received) == 5


def test_an_address_past_its_allowance_is_told_why_and_keeps_its_form(
    app: Flask, client: FlaskClient
) -> None:
    """Past the creator's allowance (whoever spent it) the page says what happened and how
    to play all the same, keeps what was typed, and still answers 429 with Retry-After."""
    for n in range(5):
        ask_for_game(from_elsewhere(app, n), email="ann@example.com", days=str(n + 1))
    refused = ask_for_game(client, email="ann@example.com", opponent_name="Zoe")
    assert refused.status_code == 429
    assert 0 < int(refused.headers["Retry-After"]) <= 24 * 3600
    text = html.unescape(refused.get_data(as_text=True))
    assert "Nothing was sent: ann@example.com has had as many emails of this form" in text
    assert "start a game from your page" in text
    assert 'value="Zoe"' in text and "<form" in text


def test_gmail_spellings_draw_on_their_inbox_s_allowance(
    app: Flask, client: FlaskClient, smtp_server: SMTPServer, deliver
) -> None:
    """Gmail reads no full stop before the @, and googlemail.com as gmail.com: each spelling
    reaches one inbox, which one stranger cannot flood through them; a stop from any of
    them holds for all."""
    spellings = ["a.nn@gmail.com", "an.n@googlemail.com", "ann@gmail.com", "A.N.N+x@gmail.com"]
    answers = [
        ask_for_game(from_elsewhere(app, n), email=address, opponent_email=f"f{n}@example.com")
        for n, address in enumerate([*spellings, "a.n.n@gmail.com", "an.n@gmail.com"])
    ]
    assert [answer.status_code for answer in answers] == [200] * 5 + [429]
    deliver()
    assert len(smtp_server.received) == 5
    with app.app_context(), transaction():
        invitations.stop_all_emails("a.nn@gmail.com")
    with app.app_context():
        assert blocked("a.n.n@googlemail.com") and not blocked("anna@gmail.com")


def confirm_latest(app: Flask, client: FlaskClient, of: str | None = None) -> Any:
    """Confirm the latest invitation asked for (to the opponent ``of``, if given), as its
    creator does with the emailed link."""
    latest = select(Invitation).order_by(Invitation.id.desc())
    if of is not None:
        latest = latest.where(Invitation.opponent_email == of)
    with app.app_context():
        invitation = db.session.scalars(latest).first()
        assert invitation is not None
        path = f"/invitations/{invitations.token(invitation, 'confirm')}"
    return client.post(path)


def test_the_opponents_ways_of_writing_an_address_share_one_allowance(
    app: Flask, client: FlaskClient
) -> None:
    statuses = []
    for n, address in enumerate(ANN[:4]):
        assert (
            ask_for_game(client, email=f"fan{n}@example.com", opponent_email=address).status_code
            == 200
        )
        statuses.append(confirm_latest(app, client).status_code)
    assert statuses == [200] * 3 + [429]


def test_requests_nobody_confirms_use_up_nothing_of_their_opponents(
    app: Flask, client: FlaskClient
) -> None:
    """Strangers name Vic as their opponent from made-up addresses and confirm nothing: no
    email goes to Vic, and a friend's invitations to Vic still go, as many as Vic's allowance."""
    for n in range(6):
        stranger = from_elsewhere(app, n + 1)
        request = ask_for_game(
            stranger, email=f"nobody{n}@example.com", opponent_email="vic@example.com"
        )
        assert request.status_code == 200
    assert rows(app) == (6, 6, 6)  # each an address to confirm, none an invitation
    confirmed = []
    for n in range(4):
        friend = {"email": f"friend{n}@example.com", "opponent_email": "vic@example.com"}
        assert ask_for_game(client, **friend).status_code == 200
        confirmed.append(confirm_latest(app, client).status_code)
    assert confirmed == [200] * 3 + [429]
    with app.app_context():
        invited = select(OutboxMessage.recipient).where(OutboxMessage.kind == "invite_opponent")
        assert db.session.scalars(invited).all() == ["vic@example.com"] * 3


def test_a_confirmation_past_the_opponents_allowance_leaves_the_invitation_waiting(
    app: Flask, client: FlaskClient
) -> None:
    """Bob has had his invitations for the day: Ann's confirmation is refused in her language,
    sends nothing and confirms nothing, and she may confirm again once Bob's day is over."""
    for n in range(3):
        fan = from_elsewhere(app, n + 1)
        assert ask_for_game(fan, email=f"fan{n}@example.com").status_code == 200
        assert confirm_latest(app, fan).status_code == 200
    french = {"Accept-Language": "fr"}
    assert ask_for_game(client, french).status_code == 200
    refused = confirm_latest(app, from_elsewhere(app, 9))  # her browser elsewhere: her language
    assert refused.status_code == 429
    assert 0 < int(refused.headers["Retry-After"]) <= 24 * 3600  # when Bob's day ends
    assert (
        "Rien n’a été envoyé\u00a0: Bob a déjà reçu autant d’invitations de ce service qu’une "
        "adresse peut en recevoir en un jour."
    ) in html.unescape(refused.get_data(as_text=True))
    with app.app_context():
        latest = db.session.scalars(select(Invitation).order_by(Invitation.id.desc())).first()
        assert latest is not None and latest.status == "unconfirmed"
        ann = db.session.get(Address, "ann@example.com")
        assert ann is None or ann.confirmed_at is None
        invited = select(func.count()).where(OutboxMessage.kind == "invite_opponent")
        assert db.session.scalar(invited) == 3
    # Her own allowance paid for the address to confirm she was sent, and for nothing else.
    mine = [ask_for_game(client, opponent_email=f"f{n}@example.com").status_code for n in range(5)]
    assert mine == [200] * 4 + [429]
    with time_machine.travel(datetime.now(UTC) + timedelta(days=1, minutes=1), tick=False):
        assert confirm_latest(app, client, of="bob@example.com").status_code == 200
    with app.app_context():
        assert db.session.scalar(invited) == 4


def test_the_lost_links_ways_of_writing_an_address_share_one_allowance(
    client: FlaskClient, make_game, smtp_server: SMTPServer, deliver
) -> None:
    make_game(seed=1)
    deliver()
    smtp_server.received.clear()
    kim = ["kim@example.com", "KIM@example.com", "kim@ex\uff41mple.com", "kim@example\u3002com"]
    answers = []
    for address in kim:  # each goes before the next is asked for
        answers.append(ask_for_links(client, address))
        deliver()
    assert [answer.status_code for answer in answers] == [200] * 4
    assert "as many of these emails today" in answers[3].text
    assert [m.envelope_to for m in smtp_server.received] == [["kim@example.com"]] * 3


def test_the_allowance_holds_whatever_the_body_is_sent_as(
    app: Flask, client: FlaskClient, caplog: pytest.LogCaptureFixture
) -> None:
    """URL-encoded or multipart, a form draws on its address's allowance; JSON is refused
    unread, and a body that is no form names no address but skips no limit."""
    token = csrf_token(client.get("/new").get_data(as_text=True))
    headers = {"X-CSRFToken": token}

    def post(n: int, content_type: str) -> int:
        # The fields without a default.
        fields = {"name": "Ann", "email": "ann@example.com", "opponent_name": "Bob"}
        fields["opponent_email"] = f"friend{n}@example.com"
        body: Any = fields  # encoded as the content type says
        if content_type == "application/json":
            body = json.dumps(fields)
        elif content_type == "text/plain":
            body = urlencode(fields)
        response = client.post("/new", data=body, content_type=content_type, headers=headers)
        return response.status_code

    kinds = ["application/x-www-form-urlencoded", "multipart/form-data"]
    assert [post(n, "application/json") for n in range(6)] == [415] * 6
    assert post(0, "text/plain") == 400
    assert [post(n, kinds[n % 2]) for n in range(6)] == [200] * 5 + [429]
    assert post(6, "application/json") == 415
    assert rows(app) == (5, 5, 5)
    assert not [r for r in caplog.records if "Skipping limit" in r.getMessage()]


def test_forms_refused_use_up_no_allowance(
    app: Flask, client: FlaskClient, smtp_server: SMTPServer, deliver
) -> None:
    """Forms that email no one, naming Vic as creator or opponent from other machines as
    often as their own limit lets them: Vic's requests, and a friend's invitation, still go."""
    strangers = [from_elsewhere(app, n + 1) for n in range(3)]

    def status(client: FlaskClient, **changes: str) -> int:
        return ask_for_game(client, **changes).status_code

    as_creator = [status(strangers[0], name="", email="VIC@example.com") for _ in range(10)]
    as_opponent = [
        status(
            strangers[1], email=f"fan{n}@example.com", opponent_email="vic@example.com", days="0"
        )
        for n in range(10)
    ]
    assert as_creator == as_opponent == [400] * 10
    assert rows(app) == (0, 0, 0)
    assert status(strangers[2], email="amy@example.com", opponent_email="vic@example.com") == 200
    mine = [
        status(client, email="vic@example.com", opponent_email=f"f{n}@example.com")
        for n in range(6)
    ]
    assert mine == [200] * 5 + [429]  # five emails a day, every one of them sent
    deliver()
    assert len(smtp_server.handler.to("vic@example.com")) == 5


def test_a_refused_address_counts_against_nothing(client: FlaskClient) -> None:
    statuses = [ask_for_links(client, "kim@@example.com").status_code for _ in range(4)]
    assert statuses == [400] * 4
    assert ask_for_links(client, "kim@example.com").status_code == 200
