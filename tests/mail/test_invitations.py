"""Starting a game without an admin: confirm, invite, accept or decline; stop emails; rematch."""

from __future__ import annotations

import re

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service.models import Address, Game, Invitation, Player, db

from ..conftest import BASE_URL
from ..smtp import SMTPServer

FORM = {
    "name": "Ann",
    "email": "ann@example.com",
    "opponent_name": "Bob",
    "opponent_email": "bob@example.com",
    "role": "keeper",
    "format": "single",
    "look": "standard",
    "days": "5",
}


def csrf_token(client: FlaskClient, url: str = "/new") -> str:
    html = client.get(url).get_data(as_text=True)
    return re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', html).group(1)


def ask(client: FlaskClient, **changes: str):  # noqa: ANN201
    return client.post("/new", data={**FORM, **changes, "csrf_token": csrf_token(client)})


def path_of(link: str) -> str:
    assert link.startswith(BASE_URL)
    return link[len(BASE_URL) :]


def last_link(smtp_server: SMTPServer, address: str, path: str) -> str:
    return path_of(smtp_server.handler.to(address)[-1].links(path)[0])


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


def test_decline_tells_the_creator_and_blocks_future_invitations(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    ask(client)
    deliver()
    client.post(last_link(smtp_server, "ann@example.com", "/invitations/"))
    deliver()
    invite = last_link(smtp_server, "bob@example.com", "/invitations/")
    assert client.post(invite, data={"answer": "decline"}).status_code == 200
    deliver()
    assert "declined" in str(smtp_server.handler.to("ann@example.com")[-1].message["Subject"])
    with app.app_context():
        assert db.session.scalars(select(Game)).one().status == "cancelled"
        assert db.session.get(Address, "bob@example.com").declined_at is not None
    response = ask(client, name="Cy", email="cy@example.com")
    assert response.status_code == 400
    assert "asked not to receive invitations" in response.get_data(as_text=True)
    deliver()
    assert len(smtp_server.handler.to("bob@example.com")) == 1


def test_bad_requests_are_refused_with_the_reason(client: FlaskClient) -> None:
    for changes, reason in (
        ({"opponent_email": "ann@example.com"}, "two different email addresses"),
        ({"email": "not-an-address"}, "Invalid email address"),
        ({"days": "0"}, "between 1 and 60"),
    ):
        response = ask(client, **changes)
        assert response.status_code == 400
        assert reason in response.get_data(as_text=True)
    response = client.post("/new", data=FORM)  # no CSRF token
    assert response.status_code == 400


def test_requests_are_rate_limited_per_address(client: FlaskClient) -> None:
    statuses = [ask(client, opponent_email=f"friend{n}@example.com").status_code for n in range(6)]
    assert statuses[:5] == [200] * 5 and statuses[5] == 429


def test_requests_are_rate_limited_per_ip(client: FlaskClient) -> None:
    statuses = [
        ask(client, email=f"me{n}@example.com", opponent_email=f"you{n}@example.com").status_code
        for n in range(11)
    ]
    assert statuses[:10] == [200] * 10 and statuses[10] == 429


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
        assert "you will get no more emails about game" in response.get_data(as_text=True)
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
        deliver()
    assert len(smtp_server.handler.to("kim@example.com")) == before
    assert len(smtp_server.handler.to("sam@example.com")) > 1
    # And the public page will not invite that address again.
    response = ask(client, opponent_email="kim@example.com")
    assert response.status_code == 400


def test_rematch_from_the_game_over_email(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    from ..helpers import play_to_end

    game = make_game(seed=30)
    play_to_end(client, game, seed=30)
    deliver()
    over = smtp_server.handler.to("kim@example.com")[-1]
    (rematch,) = over.links("/rematch/")
    assert client.get(path_of(rematch)).status_code == 200
    with app.app_context():
        assert db.session.scalar(select(db.func.count()).select_from(Game)) == 1
    response = client.post(path_of(rematch))
    assert response.status_code == 303
    again = client.post(path_of(rematch))  # a second tap gives the same new game
    assert again.headers["Location"] == response.headers["Location"]
    with app.app_context():
        games = db.session.scalars(select(Game).order_by(Game.id)).all()
        assert len(games) == 2
        assert games[1].player("keeper").email == "sam@example.com"
        assert games[1].player("shadow").email == "kim@example.com"
    # The link in the answer is Kim's seat in the new game.
    view = client.get("/api" + response.headers["Location"]).get_json()
    assert view["seat"] == "shadow" and view["game"] == games[1].id
    # A game still in play offers no rematch.
    live = make_game(seed=31)
    assert client.post(f"/rematch/{live['keeper']}").status_code == 409


def test_an_invitation_closes_when_an_admin_cancels_its_game(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    from service import games

    ask(client)
    deliver()
    confirm = last_link(smtp_server, "ann@example.com", "/invitations/")
    client.post(confirm)
    deliver()
    invite = last_link(smtp_server, "bob@example.com", "/invitations/")
    with app.app_context():
        games.cancel_game(db.session.scalars(select(Game)).one().id, "alice")
    response = client.post(invite, data={"answer": "accept"})
    assert response.status_code == 200
    assert "This invitation is closed." in response.get_data(as_text=True)
    with app.app_context():
        assert db.session.scalars(select(Invitation)).one().status == "closed"
        assert db.session.scalars(select(Game)).one().status == "cancelled"
    deliver()
    assert len(smtp_server.handler.to("bob@example.com")) == 1  # only the invitation
