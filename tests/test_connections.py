"""Pooled connections: pinged after a pause only, and a request that lost its connection
before committing runs again once, on a new one (a move is still applied once)."""

from __future__ import annotations

import random
from typing import Any

import psycopg
import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select
from sqlalchemy.exc import DBAPIError

from service import connections
from service.models import Event, Game, db
from service.unit_of_work import transaction

from .helpers import pick_action


def terminate_connections(database_url: str) -> int:
    """End every server process on the test database but this one's; how many there were."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    return len(rows)


def test_a_connection_is_pinged_only_after_a_pause(
    app: Flask, client: FlaskClient, make_game: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = make_game()
    path = f"/api/play/{game['keeper']}"
    pings: list[object] = []
    with app.app_context():
        dialect = db.engine.dialect
    ping = dialect.do_ping
    monkeypatch.setattr(dialect, "do_ping", lambda connection: pings.append(ping(connection)))
    assert client.get(path).status_code == 200
    assert client.get(path).status_code == 200
    assert pings == []
    monkeypatch.setattr(connections, "IDLE_PING_SECONDS", 0.0)
    assert client.get(path).status_code == 200
    assert pings == [True]


@pytest.fixture
def dropped(client: FlaskClient, postgres_database: str, make_game: Any) -> dict[str, Any]:
    """A game's Keeper API path and view, read once; then the app's connections terminated."""
    game = make_game()
    path = f"/api/play/{game['keeper']}"
    view = client.get(path).get_json()
    assert terminate_connections(postgres_database) >= 1
    return {"game": game, "path": path, "view": view}


def test_a_read_whose_connection_was_terminated_is_answered(
    client: FlaskClient, dropped: dict[str, Any]
) -> None:
    again = client.get(dropped["path"])
    assert again.status_code == 200
    assert again.get_json() == dropped["view"]


def test_a_move_whose_connection_was_terminated_is_applied_once(
    app: Flask, client: FlaskClient, dropped: dict[str, Any]
) -> None:
    view = dropped["view"]
    body = {"version": view["version"], **pick_action(view, random.Random(3))}
    moved = client.post(dropped["path"], json=body)
    assert moved.status_code == 200, moved.get_json()
    assert moved.get_json()["version"] == view["version"] + 1
    with app.app_context():
        assert db.session.get_one(Game, dropped["game"]["id"]).version == view["version"] + 1
        moves = select(func.count()).select_from(Event).where(Event.kind == "move")
        assert db.session.scalar(moves) == 1


def test_a_request_that_tried_to_commit_is_not_run_again(app: Flask) -> None:
    lost = DBAPIError("COMMIT", None, Exception("gone"), connection_invalidated=True)
    with app.app_context():
        assert connections.may_run_again(lost)
        with transaction():
            db.session.execute(select(1))
        assert not connections.may_run_again(lost)
    with app.app_context():
        assert connections.may_run_again(lost)
        assert not connections.may_run_again(DBAPIError("SELECT", None, Exception("bad"), False))


def test_an_idle_connection_is_pinged_and_replaced_when_dead(
    app: Flask, postgres_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with app.app_context():
        db.session.execute(select(1))
        db.session.remove()
    assert terminate_connections(postgres_database) >= 1
    monkeypatch.setattr(connections, "IDLE_PING_SECONDS", 0.0)
    with app.app_context():
        # No request around it to run it again: the pool's ping alone replaced the connection.
        assert db.session.scalar(select(1)) == 1
