"""GET and HEAD on every player URL leave the database exactly as it was."""

from __future__ import annotations

import random

import pytest
from flask import Flask
from sqlalchemy import select

from service.models import db
from service.rules import SEATS

from .helpers import pick_action

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
    return [f"/play/{token}", f"/api/play/{token}", f"/play/{token}zz", f"/api/play/{token}zz"]


def test_get_and_head_change_nothing_in_any_phase(app, client, make_game) -> None:
    game = make_game(seed=77)
    rng = random.Random(7)
    phases = set()
    for step in range(400):
        views = {seat: client.get(f"/api/play/{game[seat]}").get_json() for seat in SEATS}
        phase = views["keeper"]["phase"]
        if phase not in phases or step % 15 == 0:
            phases.add(phase)
            before = snapshot(app)
            for seat in SEATS:
                for url in [*player_urls(game[seat]), "/", "/api/openapi.json"]:
                    assert client.get(url).status_code in (200, 404)
                    assert client.head(url).status_code in (200, 404)
            assert snapshot(app) == before
        if phase == "over":
            break
        seat = rng.choice([s for s in SEATS if views[s]["your_turn"]])
        body = {"version": views[seat]["version"], **pick_action(views[seat], rng)}
        assert client.post(f"/api/play/{game[seat]}", json=body).status_code == 200
    assert {"exchange", "play", "over"} <= phases
