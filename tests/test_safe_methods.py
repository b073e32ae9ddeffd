"""GET and HEAD on every page a player, a visitor or an admin can reach change nothing.

Mail scanners and link previews open every link they see; only a POST may act.
"""

from __future__ import annotations

import re

import pytest
from flask import Flask, url_for
from flask.testing import FlaskClient
from sqlalchemy import select

from service import address_change
from service.admin.auth import create_admin
from service.games import declare_forfeit
from service.links import home_token
from service.models import Game, OutboxMessage, Player, db
from service.rules import SEATS
from service.unit_of_work import transaction

from .admin.conftest import ADMIN, PASSWORD, sign_in
from .conftest import BASE_URL
from .factories import one_by_one, played
from .helpers import ask_for_game, write_queued

# Long whole-game tests whose subject does not depend on the database: PostgreSQL only.
pytestmark = pytest.mark.parametrize("app", ["postgres"], indirect=True)


def snapshot(app: Flask) -> dict[str, list[tuple]]:
    with app.app_context():
        return {
            table.name: [
                tuple(row)
                for row in db.session.execute(select(table).order_by(*table.primary_key.columns))
            ]
            for table in db.metadata.sorted_tables
        }


def player_urls(token: str) -> list[str]:
    pages = [f"/play/{token}", f"/play/{token}/review", f"/play/{token}/replay.json"]
    api = [f"/api/play/{token}", f"/api/play/{token}/notes"]
    return [*pages, *api, f"/play/{token}zz", f"/api/play/{token}zz"]


def test_get_and_head_change_nothing_in_any_phase(app, client, make_game) -> None:
    game = make_game(seed=77)
    with app.app_context():
        state = db.session.get_one(Game, game["id"]).state
    moves = one_by_one(app, game["id"], 7)
    phases = set()
    for step in range(400):
        phase = state["phase"]
        if phase not in phases or step % 15 == 0:
            phases.add(phase)
            before = snapshot(app)
            for seat in SEATS:
                for url in [*player_urls(game[seat]), "/", "/api/openapi.json"]:
                    # 409: a review and its replay file wait for the end of the game.
                    assert client.get(url).status_code in (200, 404, 409)
                    assert client.head(url).status_code in (200, 404, 409)
            assert snapshot(app) == before
        if phase == "over":
            break
        _, _, state = next(moves)
    assert {"exchange", "play", "over"} <= phases


def links_in_outbox(app: Flask, path: str) -> list[str]:
    """The paths of every link to ``path`` in the emails queued or sent, oldest first."""
    write_queued(app)
    with app.app_context():
        bodies = db.session.scalars(select(OutboxMessage.text_body).order_by(OutboxMessage.id))
        pattern = rf"{re.escape(BASE_URL)}({re.escape(path)}[^\s<>\"]+)"
        # A turn email withdrawn before the worker reached it was never written.
        return [link for body in bodies if body for link in re.findall(pattern, body)]


def ask_for_a_game(client: FlaskClient, creator: str, opponent: str) -> None:
    """Fill in the public new-game form, as a visitor would."""
    names = {"name": creator.split("@")[0], "opponent_name": opponent.split("@")[0]}
    response = ask_for_game(client, email=creator, opponent_email=opponent, **names)
    assert response.status_code == 200


def visited(app: Flask, clients: list[FlaskClient], urls: list[str]) -> set[str]:
    """GET and HEAD each URL with each client (HEAD answers as GET); returns the endpoints."""
    adapter = app.url_map.bind("splitmind.test")
    endpoints = set()
    for url in urls:
        endpoints.add(adapter.match(url.partition("?")[0], method="GET")[0])
        for client in clients:
            status = client.get(url).status_code
            assert status < 500 and client.head(url).status_code == status, url
    return endpoints


def test_get_and_head_change_nothing_on_any_page(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """Every GET route, visited by a visitor and by a signed-in admin, before and after an end."""
    with app.app_context(), transaction():
        create_admin(ADMIN, PASSWORD)
    admin = app.test_client()
    assert sign_in(admin).status_code == 303
    game = make_game(seed=77)
    played(app, game["id"], 77, until=lambda view: view["version"] == 6)
    # A visitor asks for two games: one left unconfirmed, one confirmed (its opponent invited).
    ask_for_a_game(client, "ann@example.com", "bob@example.com")
    ask_for_a_game(client, "cat@example.com", "dan@example.com")
    _, cat_confirms = links_in_outbox(app, "/invitations/")
    assert client.post(cat_confirms).status_code == 200
    invitation_pages = links_in_outbox(app, "/invitations/")
    assert len(invitation_pages) == 3  # two to confirm an address, one to answer
    with app.app_context(), transaction():  # Kim asks to move her games to another address
        address_change.ask("kim@example.com", "kim@newjob.example", "en")
    (moving_page,) = links_in_outbox(app, "/moving/")
    with app.app_context():
        messages = db.session.scalars(select(OutboxMessage.id)).all()
        values = {
            "game_id": game["id"],
            "player_id": db.session.scalar(select(Player.id).where(Player.game_id == game["id"])),
            "message_id": messages[0],
        }
        with app.test_request_context():
            admin_pages = []
            for rule in app.url_map.iter_rules():
                if rule.endpoint.startswith("admin.") and "GET" in rule.methods:
                    assert rule.arguments <= values.keys(), f"what to put in {rule}?"
                    arguments = {name: values[name] for name in rule.arguments}
                    admin_pages.append(url_for(rule.endpoint, **arguments))
            # "Compute again now": the statistics, not the ones kept for a minute.
            admin_pages.append(url_for("admin.statistics", refresh=1))
    with app.app_context():
        addresses = ("kim@example.com", "sam@example.com", "bob@example.com", "cat@example.com")
        homes = [f"/me/{home_token(email)}" for email in addresses]
    urls = [
        "/",
        "/rules",
        "/new",
        "/links",
        "/api/openapi.json",
        "/metrics",
        "/healthz",
        *invitation_pages,
        "/invitations/nothing-here",
        *links_in_outbox(app, "/unsubscribe/"),
        "/unsubscribe/nothing-here",
        *(f"/rematch/{game[seat]}" for seat in SEATS),
        "/rematch/nothing-here",
        *(url for seat in SEATS for url in player_urls(game[seat])),
        *homes,
        "/me/nothing-here",
        f"{homes[0]}/move",
        moving_page,
        "/moving/nothing-here",
        "/mailbox",
        "/mailbox?to=kim@example.com",
        *(f"/mailbox/{message}" for message in messages[:3]),
        *(f"/mailbox/{message}/html" for message in messages[:3]),
        "/mailbox/999999",
        *admin_pages,
    ]
    for moment in ("in play", "ended"):
        if moment == "ended":
            with app.app_context(), transaction():
                declare_forfeit(game["id"], "keeper", ADMIN)
        before = snapshot(app)
        reached = visited(app, [client, admin], urls)
        assert snapshot(app) == before, f"a GET or HEAD changed the database ({moment})"
        # The rematch page offers its button only once the game is over.
        rematch = client.get(f"/rematch/{game['keeper']}").status_code
        assert rematch == (409 if moment == "in play" else 200)
    every_get = {rule.endpoint for rule in app.url_map.iter_rules() if "GET" in rule.methods}
    assert every_get - {"static"} <= reached
