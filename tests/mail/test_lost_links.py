"""Lost your link? The link to an address's home page, with its games in play, goes to that
address, and only there."""

from __future__ import annotations

import re

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select
from werkzeug.test import TestResponse

from service import games, homes, invitations
from service.links import home_token
from service.mail import requeue
from service.models import Game, OutboxMessage, db
from service.unit_of_work import transaction

from ..factories import one_by_one, played, written
from ..helpers import at_once, csrf_token, from_elsewhere, request_invitation, statements_run
from ..secrecy import hidden_cards, leaks
from ..smtp import SMTPServer
from .test_invitations import path_of


def ask(client: FlaskClient, email: str, headers: dict[str, str] | None = None) -> TestResponse:
    token = csrf_token(client.get("/links", headers=headers).get_data(as_text=True))
    return client.post("/links", data={"email": email, "csrf_token": token}, headers=headers)


@pytest.mark.slow
def test_the_home_link_and_the_games_in_play_go_to_their_address(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    live = [make_game(seed=n) for n in (1, 2)]
    finished = make_game(seed=3)
    played(app, finished["id"], 3, emails=False)
    with app.app_context(), transaction():
        other = games.create_game(
            games.Seating("zoe@example.com", "Zoe"), games.Seating("sam@example.com", "Sam")
        )
        other_id = other.id
    deliver()
    smtp_server.received.clear()
    response = ask(client, "Kim@Example.com")
    assert response.status_code == 200
    assert "the link to its page, with all its games, is on its way" in response.get_data(
        as_text=True
    )
    deliver()
    (email,) = smtp_server.received
    assert email.envelope_to == ["kim@example.com"]
    assert email.links("/play/") == []  # one link instead of one per game
    homes = {path_of(link) for link in email.links("/me/")}
    with app.app_context():
        assert homes == {f"/me/{home_token('kim@example.com')}"}
    (home,) = homes
    page = client.get(home).get_data(as_text=True)
    for game in live + [finished]:
        assert f"/play/{game['keeper']}" in page
    assert f"Game {other_id}" not in email.text
    assert f"Game {finished['id']}" not in email.text  # only the games in play are listed
    for game in live:
        assert f"Game {game['id']}: you are the Keeper against Sam." in email.text
    with app.app_context():
        from service.models import Game, db

        for game in live:
            secret = hidden_cards(db.session.get(Game, game["id"]).state, "keeper")
            assert not leaks(email.text + email.html, secret, (home,))


def test_the_games_in_play_are_listed_the_moves_owed_first(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    """As on the home page: the games where the address owes a move first, soonest due first."""
    waiting = make_game(seed=1, days_per_move=1)
    written(app, waiting["id"], 1, until=lambda view: not view["your_turn"])
    later, sooner = make_game(seed=2, days_per_move=9), make_game(seed=3, days_per_move=2)
    deliver()
    smtp_server.received.clear()
    ask(client, "kim@example.com")
    deliver()
    (email,) = smtp_server.received
    listed = [int(n) for n in re.findall(r"Game (\d+): you are", email.text)]
    assert listed == [sooner["id"], later["id"], waiting["id"]]


def test_an_address_whose_games_are_all_over_gets_its_home_link(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    """Its page holds its finished games, their rematches and its settings."""
    finished = make_game(seed=3)
    played(app, finished["id"], 3, emails=False)
    deliver()
    smtp_server.received.clear()
    ask(client, "kim@example.com")
    deliver()
    (email,) = smtp_server.received
    assert email.envelope_to == ["kim@example.com"]
    with app.app_context():
        assert {path_of(link) for link in email.links("/me/")} == {
            f"/me/{home_token('kim@example.com')}"
        }
    assert "Your games in play" not in email.text
    assert email.links("/play/") == []


def test_an_address_invited_but_yet_to_play_gets_its_home_link_and_its_invitations(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    """An invitation's email lost, its address has no game to show but the invitation: the
    link to its page, where it accepts or declines, comes with the invitations waiting. Not
    while the creator has not confirmed (anyone may type an address), nor to an address
    that takes no invitation, which was never sent one."""
    with app.app_context():
        request_invitation("kim@example.com", creator="zoe@example.com")  # unconfirmed
        invitation = request_invitation("kim@example.com", creator="ann@example.com")
        with transaction():
            invitations.confirm(invitation)
        game_id = invitation.game_id
        home = f"/me/{home_token('kim@example.com')}"
        request_invitation("bob@example.com", creator="ann@example.com")  # unconfirmed
        stopped = request_invitation("cat@example.com", creator="ann@example.com")
        with transaction():
            invitations.confirm(stopped)
            homes.stop_all_emails("cat@example.com")
    deliver()
    smtp_server.received.clear()
    for address in ("kim@example.com", "bob@example.com", "cat@example.com"):
        ask(client, address)
    deliver()
    (email,) = smtp_server.received
    assert email.envelope_to == ["kim@example.com"]
    assert {path_of(link) for link in email.links("/me/")} == {home}
    assert f"Ann invites you to game {game_id}. The invitation expires on" in email.text
    assert "Zoe" not in email.text + email.html and "Your games in play" not in email.text
    assert f"Ann invites you to game {game_id}." in email.html
    assert f"Ann invites you to game {game_id}." in client.get(home).get_data(as_text=True)


def test_an_unknown_address_gets_the_same_answer_and_no_email(
    client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    make_game(seed=1)
    deliver()
    smtp_server.received.clear()
    known = ask(client, "kim@example.com").get_data(as_text=True)
    unknown = ask(client, "nobody@example.com").get_data(as_text=True)
    assert known.replace("kim@example.com", "X") == unknown.replace("nobody@example.com", "X")
    deliver()
    assert [m.envelope_to for m in smtp_server.received] == [["kim@example.com"]]
    # The page says, to anyone, that an address that opted out is sent nothing.
    assert "stopped the emails of every game it played here is sent nothing" in known


def test_bad_input_and_limits(
    app: Flask, client: FlaskClient, make_game, smtp_server: SMTPServer, deliver
) -> None:
    make_game(seed=1)
    response = ask(client, "not an address")
    assert response.status_code == 400 and "Invalid email address." in response.get_data(
        as_text=True
    )
    assert client.post("/links", data={"email": "kim@example.com"}).status_code == 400  # no CSRF
    answers = []
    for _ in range(4):
        answers.append(ask(client, "Kim@example.com"))
        deliver()  # each goes before the next is asked for (else it carries the next's links)
    assert [answer.status_code for answer in answers] == [200] * 4
    # Past the address's allowance, whoever asked, its links are in the emails it was sent.
    assert "on its way" in answers[2].text and "on its way" not in answers[3].text
    assert "was sent as many of these emails today as we send one address" in answers[3].text
    with app.app_context():
        queued = select(OutboxMessage).where(OutboxMessage.kind == "your_games")
        assert len(db.session.scalars(queued).all()) == 3


def test_the_form_sent_twice_before_its_email_went_sends_one(
    app: Flask, client: FlaskClient, make_game, smtp_server: SMTPServer, deliver
) -> None:
    """A double click, or both clicks at once: the email still to go carries the links, and
    the second request draws nothing on the address's allowance. Once it went, asking
    again sends another."""
    make_game(seed=1)
    deliver()
    smtp_server.received.clear()
    for _ in range(2):
        answer = ask(client, "kim@example.com")
        assert answer.status_code == 200 and "on its way" in answer.text
    calls = [lambda n=n: ask(from_elsewhere(app, n), "Kim@example.com") for n in (1, 2)]
    assert [answer.status_code for answer in at_once(calls)] == [200, 200]
    deliver()
    assert [m.envelope_to for m in smtp_server.received] == [["kim@example.com"]]
    for _ in range(2):
        assert "on its way" in ask(client, "kim@example.com").text
        deliver()
    assert len(smtp_server.received) == 3
    assert "was sent as many of these emails today" in ask(client, "kim@example.com").text


def test_the_page_and_email_in_french(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    make_game(seed=5, keeper_language="fr")  # Kim reads her games in French
    deliver()
    smtp_server.received.clear()
    french = {"Accept-Language": "fr-FR,fr;q=0.9"}
    assert "Lien perdu" in client.get("/links", headers=french).get_data(as_text=True)
    ask(client, "kim@example.com", headers=french)
    deliver()
    (email,) = smtp_server.received
    assert "le lien vers vos parties" in str(email.message["Subject"])
    assert "vous êtes le Gardien contre Sam" in email.text


@pytest.mark.parametrize(
    ("chosen", "asked_in", "subject"),
    [
        ("fr", None, "le lien vers vos parties"),
        ("en", "fr", "the link to your games"),
        # Chosen nowhere: the language its games' emails are in (English here).
        (None, "fr", "the link to your games"),
    ],
)
def test_the_email_is_in_the_language_the_address_chose(
    app: Flask,
    client: FlaskClient,
    make_game,
    smtp_server,
    deliver,
    chosen: str,
    asked_in: str | None,
    subject: str,
) -> None:
    """Whoever asks, and in whatever language: the email is only written for an address that
    plays here, so its own choice tells the asker nothing."""
    make_game(seed=5)
    if chosen is not None:
        with app.app_context(), transaction():
            homes.set_language("kim@example.com", chosen)
    deliver()
    smtp_server.received.clear()
    ask(client, "kim@example.com", headers={"Accept-Language": asked_in} if asked_in else None)
    deliver()
    (email,) = smtp_server.received
    assert subject in str(email.message["Subject"])
    assert email.message["Content-Language"] == (chosen or "en")


def test_asking_does_the_same_work_whether_or_not_the_address_plays(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """The same statements and the same row, bar the address: nothing to time, nothing to read.

    The worker looks the games up afterwards (see the tests above).
    """
    make_game(seed=1)
    statements: dict[str, list[str]] = {}
    for asking in ("kim@example.com", "nobody@example.com"):
        token = csrf_token(client.get("/links").get_data(as_text=True))
        with statements_run(app) as run:
            response = client.post("/links", data={"email": asking, "csrf_token": token})
        assert response.status_code == 200
        statements[asking] = [sql for sql, _ in run]
    assert statements["kim@example.com"] == statements["nobody@example.com"]
    assert any(
        statement.startswith("INSERT INTO outbox") for statement in statements["kim@example.com"]
    )
    with app.app_context():
        kim, nobody = (
            db.session.scalars(
                select(OutboxMessage).where(
                    OutboxMessage.recipient == address, OutboxMessage.kind == "your_games"
                )
            ).one()
            for address in ("kim@example.com", "nobody@example.com")
        )
        assert same_but_address(kim) == same_but_address(nobody)


def same_but_address(message: OutboxMessage) -> dict[str, object]:
    """What a queued email holds, but for what names or numbers it."""
    skip = {"id", "recipient", "message_id", "created_at", "next_attempt_at"}
    return {
        column.key: getattr(message, column.key)
        for column in OutboxMessage.__table__.columns
        if column.key not in skip
    }


@pytest.mark.parametrize("kind", ["invitation", "turn"])
def test_an_email_queued_again_after_its_link_was_rotated_carries_the_new_link(
    app: Flask, client: FlaskClient, make_game, smtp_server: SMTPServer, deliver, kind: str
) -> None:
    """Refused, then the player's link rotated, then queued again: the email that goes out
    opens the player's page, and the link it was first written with is dead."""
    game = make_game(seed=4)
    if kind == "turn":
        deliver()  # the invitations
        moves = one_by_one(app, game["id"], 4)
        while queued_for_kim(app, "turn") is None:
            next(moves)
    smtp_server.handler.replies = ["550 5.1.1 No such user"] * 4
    deliver()
    smtp_server.handler.replies = []
    with app.app_context():
        refused = db.session.scalars(
            select(OutboxMessage).where(
                OutboxMessage.kind == kind,
                OutboxMessage.recipient == "kim@example.com",
                OutboxMessage.status == "failed",
            )
        ).one()
        refused_id, kim = refused.id, refused.player_id
    # The worker keeps what it wrote for the refused attempt: the link valid then.
    old = set(re.findall(r"/play/[A-Za-z0-9_.\-]+", refused.text_body))
    assert old == {f"/play/{game['keeper']}"}
    with app.app_context(), transaction():
        games.rotate_link(kim, "admin")
        requeue(refused_id)
    smtp_server.received.clear()
    deliver()
    (again,) = smtp_server.received
    assert again.message["Message-ID"] == refused.message_id
    new = {path_of(link) for link in again.links("/play/")}
    assert new and not new & old
    for path in new:
        assert client.get(path).status_code == 200
    for path in old:
        assert client.get(path).status_code == 404


def queued_for_kim(app: Flask, kind: str) -> OutboxMessage | None:
    """Kim's queued email of ``kind``, if any."""
    with app.app_context():
        return db.session.scalars(
            select(OutboxMessage).where(
                OutboxMessage.kind == kind,
                OutboxMessage.recipient == "kim@example.com",
                OutboxMessage.status == "queued",
            )
        ).first()


def test_an_email_queued_for_an_address_the_player_no_longer_has_is_not_sent(
    app: Flask, make_game, smtp_server: SMTPServer, deliver
) -> None:
    """Written when sent, it would carry the player's link to the old address: it is skipped."""
    game = make_game(seed=4)
    with app.app_context(), transaction():
        db.session.get_one(Game, game["id"]).player("keeper").email = "kim@example.org"
    deliver()
    assert [r.envelope_to for r in smtp_server.received] == [["sam@example.com"]]
    with app.app_context():
        statuses = dict(
            db.session.execute(select(OutboxMessage.recipient, OutboxMessage.status)).all()
        )
    assert statuses == {"kim@example.com": "skipped", "sam@example.com": "sent"}


def test_a_wrong_address_is_named_invalid_and_described_by_its_error(client: FlaskClient) -> None:
    """A screen reader on the address's field hears that it is wrong, and why."""
    html = ask(client, "not an address").get_data(as_text=True)
    field = re.search(r'<input[^>]* name="email"[^>]*>', html)
    assert field is not None
    assert 'aria-invalid="true"' in field.group(0)
    described = re.search(r'aria-describedby="([^"]+)"', field.group(0))
    assert described is not None
    assert re.search(rf'<p class="error" id="{described.group(1)}">Invalid email address.', html)
    fine = ask(client, "kim@example.com").get_data(as_text=True)
    assert "aria-invalid" not in fine
