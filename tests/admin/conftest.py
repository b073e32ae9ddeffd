"""Fixtures for the dashboard: an admin account, a signed-in client, games played by the rules."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from service.admin.auth import create_admin
from service.models import Game, db
from service.rules import apply, seat_view, to_act
from service.unit_of_work import transaction

from ..factories import Move, apply_moves, write_moves
from ..helpers import csrf_token, pick_action

ADMIN = "ada"
PASSWORD = "correct horse battery staple"


def sign_in(
    client: FlaskClient, name: str = ADMIN, password: str = PASSWORD, *, at: str = "/admin/login"
) -> TestResponse:
    """Fill in and send the sign-in form, as a browser would (the form at ``at``)."""
    token = csrf_token(client.get(at).get_data(as_text=True))
    return client.post(at, data={"csrf_token": token, "name": name, "password": password})


def submit(client: FlaskClient, page: str, action: str, **data: Any) -> TestResponse:
    """POST a form of ``page`` to ``action`` with the page's CSRF token."""
    token = csrf_token(client.get(page).get_data(as_text=True))
    return client.post(action, data={"csrf_token": token, **data})


def shown_deadline(client: FlaskClient, game_id: int) -> str:
    """The deadline the game page's extension form was written with."""
    page = client.get(f"/admin/games/{game_id}").get_data(as_text=True)
    found = re.search(r'name="deadline" value="([^"]+)"', page)
    assert found is not None, "the page offers no extension"
    return found.group(1)


def shown_version(client: FlaskClient, game_id: int) -> str:
    """The version of the game its page's cancel and forfeit forms were written with."""
    page = client.get(f"/admin/games/{game_id}").get_data(as_text=True)
    found = re.search(r'name="version" value="([^"]+)"', page)
    assert found is not None, "the page offers no cancel or forfeit"
    return found.group(1)


@pytest.fixture
def admin_account(app: Flask) -> str:
    """An admin account; its name."""
    with app.app_context(), transaction():
        create_admin(ADMIN, PASSWORD)
    return ADMIN


@pytest.fixture
def admin(client: FlaskClient, admin_account: str) -> FlaskClient:
    """The test client, signed in as the admin."""
    assert sign_in(client).status_code == 303
    return client


def play(
    app: Flask,
    game_id: int,
    seed: int,
    until: Callable[[dict[str, Any]], bool] = lambda s: False,
    *,
    emails: bool = True,
) -> dict[str, Any]:
    """Play random legal moves through the service until the game is over or ``until(state)``.

    The moves are picked on the engine's state and applied in one transaction
    (:func:`tests.factories.apply_moves`); returns the state reached. Without
    ``emails``, all moves but the last are written at once, without the emails
    they would queue (:func:`tests.factories.write_moves`), and the last is
    applied through the service: what ends the game is the service's own doing.
    """
    rng = random.Random(seed)
    with app.app_context():
        state = db.session.get_one(Game, game_id).state
        db.session.remove()
    moves: list[Move] = []
    while not (state["phase"] == "over" or until(state)):
        seat = rng.choice(to_act(state))
        action = pick_action(dict(seat_view(state, seat)), rng)
        state = apply(state, seat, action)
        moves.append((seat, action))
    if emails:
        apply_moves(app, game_id, moves)
    else:
        write_moves(app, game_id, moves[:-1])
        apply_moves(app, game_id, moves[-1:])
    return state
