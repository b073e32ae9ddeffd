"""Lost your link? The links of an address's games in play go to that address, and only there."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient

from service import games

from ..helpers import csrf_token, play_to_end
from ..secrecy import hidden_cards, leaks
from .test_invitations import path_of


def ask(client: FlaskClient, email: str, headers: dict[str, str] | None = None):  # noqa: ANN201
    token = csrf_token(client.get("/links", headers=headers).get_data(as_text=True))
    return client.post("/links", data={"email": email, "csrf_token": token}, headers=headers)


def test_the_links_of_games_in_play_go_to_their_address(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    live = [make_game(seed=n) for n in (1, 2)]
    finished = make_game(seed=3)
    play_to_end(client, finished, seed=3)
    with app.app_context():
        other = games.create_game(
            games.Seating("zoe@example.com", "Zoe"), games.Seating("sam@example.com", "Sam")
        )
        other_id = other.id
    deliver()
    smtp_server.received.clear()
    response = ask(client, "Kim@Example.com")
    assert response.status_code == 200
    assert "their links are on their way" in response.get_data(as_text=True)
    deliver()
    (email,) = smtp_server.received
    assert email.envelope_to == ["kim@example.com"]
    links = [path_of(link) for link in email.links("/play/")]
    assert links == [f"/play/{game['keeper']}" for game in live]  # not the finished game
    assert f"Game {other_id}" not in email.text
    for game in live:
        assert f"Game {game['id']}: you are the Keeper against Sam." in email.text
        state = client.get(f"/api/play/{game['keeper']}").get_json()
        assert state["seat"] == "keeper"
    with app.app_context():
        from service.models import Game, db

        for game in live:
            secret = hidden_cards(db.session.get(Game, game["id"]).state, "keeper")
            assert not leaks(email.text + email.html, secret, tuple(g["keeper"] for g in live))


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


def test_bad_input_and_limits(client: FlaskClient, make_game) -> None:
    make_game(seed=1)
    response = ask(client, "not an address")
    assert response.status_code == 400 and "Invalid email address." in response.get_data(
        as_text=True
    )
    assert client.post("/links", data={"email": "kim@example.com"}).status_code == 400  # no CSRF
    statuses = [ask(client, "kim@example.com").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]


def test_the_page_and_email_in_french(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    make_game(seed=5)
    deliver()
    smtp_server.received.clear()
    french = {"Accept-Language": "fr-FR,fr;q=0.9"}
    assert "Lien perdu" in client.get("/links", headers=french).get_data(as_text=True)
    ask(client, "kim@example.com", headers=french)
    deliver()
    (email,) = smtp_server.received
    assert "les liens de vos parties" in str(email.message["Subject"])
    assert "vous êtes le Gardien contre Sam" in email.text
