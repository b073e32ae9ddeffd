"""A bouncing address on the dashboard: beside its player, and in the warning of a resent link."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service import games
from service.games import Seating, create_game
from service.mail.worker import drain
from service.models import Address, Game, OutboxMessage, db
from service.unit_of_work import transaction

from ..smtp import SMTPServer
from .conftest import submit

DEAD = "jo@dead.example"


def page_text(admin: FlaskClient, page: str) -> str:
    """The page's text, without its tags."""
    return " ".join(
        unescape(re.sub(r"<[^>]+>", "", admin.get(page).get_data(as_text=True))).split()
    )


@pytest.fixture
def app_config(mail_config: dict[str, Any]) -> dict[str, Any]:
    return mail_config


def bounced_game(app: Flask, smtp_server: SMTPServer) -> tuple[int, int]:
    """A game whose shadow's invitation was refused for good; the game's id and the shadow's."""
    smtp_server.handler.refuse[DEAD] = "550 5.1.1 User unknown"
    with app.app_context():
        with transaction():
            game = create_game(Seating("kim@example.com", "Kim"), Seating(DEAD, "Jo"))
            ids = game.id, game.player("shadow").id
        drain()
    return ids


def test_the_game_page_shows_the_bounce_beside_the_player(
    app: Flask, admin: FlaskClient, smtp_server: SMTPServer
) -> None:
    game_id, _ = bounced_game(app, smtp_server)
    with app.app_context(), transaction():
        address = db.session.get_one(Address, DEAD)
        address.bounced_at = address.bounced_at - timedelta(days=2)
    html = page_text(admin, f"/admin/games/{game_id}")
    assert f"{DEAD}: 550 5.1.1 User unknown, 2 days ago" in html
    assert "kim@example.com:" not in html


def test_resending_to_a_bouncing_address_warns(
    app: Flask, admin: FlaskClient, smtp_server: SMTPServer
) -> None:
    game_id, shadow = bounced_game(app, smtp_server)
    page = f"/admin/games/{game_id}"
    assert submit(admin, page, f"{page}/players/{shadow}/resend").status_code == 303
    html = unescape(admin.get(page).get_data(as_text=True))
    assert f"mail to {DEAD} bounces (550 5.1.1 User unknown" in html
    assert "is on its way" not in html
    # Once the address takes mail again, the bounce is forgotten and the link is on its way.
    del smtp_server.handler.refuse[DEAD]
    with app.app_context():
        drain()
    assert submit(admin, page, f"{page}/players/{shadow}/resend").status_code == 303
    html = unescape(admin.get(page).get_data(as_text=True))
    assert f"The Shadow's link is on its way to {DEAD}." in html
    assert "bounces" not in html
    with app.app_context():
        game = db.session.get_one(Game, game_id)
        sent = db.session.scalars(
            db.select(OutboxMessage).where(
                OutboxMessage.recipient == DEAD, OutboxMessage.status == "sent"
            )
        ).all()
        assert game.status == "active" and len(sent) == 1


def test_the_overview_lists_the_bounces_an_admin_can_mend(
    app: Flask, admin: FlaskClient, smtp_server: SMTPServer
) -> None:
    """A bouncing address in a game in play is listed; once its seat has a corrected address,
    it no longer is: no seat holds it."""
    _, shadow = bounced_game(app, smtp_server)
    assert f"{DEAD}: 550 5.1.1 User unknown" in page_text(admin, "/admin/")
    with app.app_context(), transaction():
        games.correct_address(shadow, "jo@alive.example", "ada")
    html = page_text(admin, "/admin/")
    assert DEAD not in html
