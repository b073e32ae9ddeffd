"""The home page in a real browser: its games, a setting saved, the way to a game and back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from service.games import declare_forfeit
from service.links import home_token
from service.models import AddressSettings, Player, db
from service.unit_of_work import transaction

from .conftest import screenshot
from .test_accessibility import violations

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


def test_the_home_page(
    pg_app: Flask, live_server: str, new_game: Callable[..., dict[str, Any]], phone: Any
) -> None:
    live = new_game(seed=5, days_per_move=3)
    finished = new_game(seed=6)
    with pg_app.app_context():
        with transaction():
            declare_forfeit(finished["id"], "shadow", "admin")
        home = f"{live_server}/me/{home_token('kim@example.com')}"
    page = phone().new_page()
    page.goto(home)
    assert violations(page) == []
    assert page.locator("h1").inner_text() == "Your games"
    live_card = page.locator(f"#game-{live['id']}")
    assert "Game 1 against Sam" in live_card.inner_text()
    assert "Round 1 of 3" in live_card.inner_text()
    assert "Your move and Sam's are due" in live_card.inner_text()
    done = page.locator(f"#game-{finished['id']}")
    assert "You won" in done.inner_text()
    assert done.get_by_role("button", name="Ask Sam for a rematch").is_visible()
    page.get_by_label("once a day, with every move I owe (a digest)").check()
    hour = page.get_by_label("Hour of the digest (0 to 23)")
    # Its zone is said beside it, and read with it: UTC until the address has one.
    assert page.locator("#" + str(hour.get_attribute("aria-describedby"))).inner_text() == (
        "UTC time"
    )
    hour.fill("19")
    page.locator("form[action$='/emails'] button[type=submit]").click()
    page.wait_for_load_state()
    assert page.get_by_label("once a day, with every move I owe (a digest)").is_checked()
    with pg_app.app_context():
        settings = db.session.get_one(AddressSettings, "kim@example.com")
        assert (settings.email_policy, settings.digest_hour) == ("digest", 19)
    screenshot(page, "home")
    # To the game, whose page says it is open (a POST of its script), and back.
    live_card.get_by_role("link", name=f"Open game {live['id']}").click()
    page.wait_for_url(live["keeper"])
    page.wait_for_function("document.getElementById('game') !== null")
    with pg_app.app_context():
        for _ in range(50):
            db.session.expire_all()
            seen = db.session.scalars(
                select(Player.seen_at).where(Player.game_id == live["id"], Player.seat == "keeper")
            ).one()
            if seen is not None:
                break
            page.wait_for_timeout(100)
        assert seen is not None
    page.get_by_role("link", name="All your games and your email settings").click()
    page.wait_for_url(home)
