"""Resigning: a player gives the game up, from the page or the API, and the opponent wins it."""

from __future__ import annotations

from datetime import timedelta
from html import unescape
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service import deadlines, games
from service.admin import stats
from service.links import home_token, token_for
from service.models import Event, Game, GameFigures, OutboxMessage, db, utcnow
from service.unit_of_work import transaction

from .test_safe_methods import snapshot


def version_of(client: FlaskClient, token: str) -> int:
    return client.get(f"/api/play/{token}").get_json()["version"]


def resign(client: FlaskClient, token: str, body: Any) -> Any:
    return client.post(f"/api/play/{token}/resign", json=body)


def test_resigning_gives_the_opponent_the_game_and_tells_them(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game(seed=3)
    with app.app_context():
        first = db.session.scalar(select(OutboxMessage.id).order_by(OutboxMessage.id.desc()))
    answer = resign(client, game["keeper"], {"version": version_of(client, game["keeper"])})
    assert answer.status_code == 200, answer.get_json()
    view = answer.get_json()
    assert (view["status"], view["winner"], view["your_turn"], view["legal"]) == (
        "resigned",
        "shadow",
        False,
        [],
    )
    theirs = client.get(f"/api/play/{game['shadow']}").get_json()
    assert (theirs["status"], theirs["winner"]) == ("resigned", "shadow")
    with app.app_context():
        ended = db.session.get_one(Game, game["id"])
        assert (ended.to_act, ended.deadline, ended.finished_at is not None) == ("", None, True)
        event = db.session.scalars(select(Event).order_by(Event.id.desc())).first()
        assert (event.kind, event.seat, event.version) == ("resign", "keeper", ended.version)
        figures = db.session.get_one(GameFigures, game["id"])
        assert figures.complete is False
        emails = db.session.execute(
            select(OutboxMessage.kind, OutboxMessage.recipient).where(OutboxMessage.id > first)
        ).all()
    # The winner is told; the one who resigned sees it on their page.
    assert emails == [("game_ended", "sam@example.com")]


def test_the_winner_s_email_and_both_pages_say_who_resigned(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver, mail_config
) -> None:
    game = make_game(seed=3)
    deliver()
    resign(client, game["shadow"], {"version": version_of(client, game["shadow"])})
    deliver()
    message = smtp_server.handler.to("kim@example.com")[-1].message
    assert message["Subject"] == f"Split Mind, game {game['id']}: Sam resigned, you win"
    assert "Sam resigned: you win." in message.get_body(("plain",)).get_content()
    assert smtp_server.handler.to("sam@example.com")[-1].message["Subject"] != message["Subject"]
    keeper = unescape(client.get(f"/play/{game['keeper']}").text)
    shadow = unescape(client.get(f"/play/{game['shadow']}").text)
    assert "Game over: Sam resigned; you win." in keeper
    assert "Game over: you resigned; Kim wins." in shadow
    assert "Resign this game" not in keeper + shadow


@pytest.fixture
def app_config(mail_config: dict[str, Any]) -> dict[str, Any]:
    return mail_config


@pytest.mark.parametrize(
    "body",
    [None, [], {}, {"version": "0"}, {"version": True}, {"version": 0, "play": "4S"}, "resign"],
)
def test_a_malformed_resignation_changes_nothing(
    app: Flask, client: FlaskClient, make_game, body: Any
) -> None:
    game = make_game(seed=3)
    before = snapshot(app)
    answer = resign(client, game["keeper"], body)
    assert answer.status_code == 400
    assert answer.get_json()["error"]["code"] == "malformed"
    assert snapshot(app) == before


def test_a_stale_double_or_late_resignation_changes_nothing(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game(seed=3)
    seen = version_of(client, game["keeper"])
    before = snapshot(app)
    for version in (seen + 1, seen - 1, 10**12, 1e300):
        stale = resign(client, game["keeper"], {"version": version})
        assert (stale.status_code, stale.get_json()["error"]["code"]) == (409, "stale")
        said = stale.get_json()["error"]["message"]
        assert said.startswith(f"The game is at version {seen}, not the one you sent")
        assert str(int(version)) not in said
    assert snapshot(app) == before
    assert resign(client, game["keeper"], {"version": seen}).status_code == 200
    ended = snapshot(app)
    again = resign(client, game["keeper"], {"version": seen})
    assert (again.status_code, again.get_json()["error"]["code"]) == (409, "closed")
    assert "resigned this game already" in again.get_json()["error"]["message"]
    theirs = resign(client, game["shadow"], {"version": seen + 1})
    assert theirs.status_code == 409
    assert theirs.get_json()["error"]["message"] == "This game is over: there is nothing to resign."
    assert resign(client, game["keeper"] + "x", {"version": seen}).status_code == 404
    assert snapshot(app) == ended


def test_a_game_past_its_deadline_is_the_sweep_s_to_end_not_a_resignation_s(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """Both owe the opening exchange and both are late: the game is abandoned, with no winner,
    whoever asks to resign meanwhile; and with one late, a timeout is not a resignation."""
    game = make_game(seed=3, days_per_move=3)
    with app.app_context(), transaction():
        db.session.get_one(Game, game["id"]).deadline = utcnow() - timedelta(hours=1)
    before = snapshot(app)
    late = resign(client, game["keeper"], {"version": version_of(client, game["keeper"])})
    assert (late.status_code, late.get_json()["error"]["code"]) == (409, "closed")
    assert "deadline of the move owed has passed" in late.get_json()["error"]["message"]
    page = client.post(
        f"/play/{game['keeper']}/resign",
        data={"version": version_of(client, game["keeper"]), "confirm": "y"},
    )
    assert page.status_code == 409 and "can no longer be resigned" in page.text
    assert snapshot(app) == before
    with app.app_context():
        assert deadlines.sweep(utcnow()).expired == [game["id"]]
        assert db.session.get_one(Game, game["id"]).status == "abandoned"


def test_the_page_asks_for_the_box_ticked_and_then_shows_the_end(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game(seed=3)
    page = client.get(f"/play/{game['keeper']}").text
    assert "Resign this game" in page and "I give this game up: Sam wins it." in page
    path = f"/play/{game['keeper']}/resign"
    seen = version_of(client, game["keeper"])
    before = snapshot(app)
    for unticked in ({"version": seen}, {"version": seen, "confirm": "false"}):
        refused = client.post(path, data=unticked)
        assert refused.status_code == 400
        assert "Tick the box to say you give the game up: nothing was changed." in refused.text
    stale = client.post(path, data={"version": seen - 1, "confirm": "yes"})
    assert stale.status_code == 409 and "This page was out of date" in stale.text
    assert snapshot(app) == before
    done = client.post(path, data={"version": seen, "confirm": "yes"})
    assert done.status_code == 303 and done.headers["Location"] == f"/play/{game['keeper']}"
    again = client.post(path, data={"version": seen, "confirm": "yes"})
    assert again.status_code == 409
    assert "You have resigned this game already: nothing more was changed." in again.text
    # What comes next: a new game from the player's own page, which needs no confirming.
    with app.app_context():
        home = home_token("kim@example.com")
    assert f'href="/me/{home}/new?name=Kim"' in again.text


def test_a_resignation_is_counted_as_a_game_cut_short(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game(seed=3)
    resign(client, game["keeper"], {"version": version_of(client, game["keeper"])})
    with app.app_context():
        assert (stats.playtest().games, stats.playtest().cut_short) == (0, 1)
        assert stats.endings().resigned == 1


def test_resigning_the_first_game_of_a_return_match_ends_the_match(
    app: Flask, client: FlaskClient
) -> None:
    with app.app_context(), transaction():
        first = games.create_match(
            games.Seating("kim@example.com", "Kim"), games.Seating("sam@example.com", "Sam")
        )
        token = token_for(first.player("shadow"))
    page = client.get(f"/play/{token}").text
    assert "It ends the return match too: no second game follows." in page
    view = resign(client, token, {"version": version_of(client, token)}).get_json()
    assert view["match"]["over"] and view["match"]["ended_early"]
    assert view["match"]["winner"] == "opponent"
    with app.app_context():
        assert db.session.scalars(select(Game.status).order_by(Game.id)).all() == ["resigned"]
