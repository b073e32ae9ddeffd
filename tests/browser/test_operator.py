"""The operator's jobs on the dashboard in a real browser: the overview, a bounce and the
address that fixes it, failures queued again in bulk, the games list's search box."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from service import games
from service.addresses import record_bounce
from service.admin.auth import create_admin
from service.models import Game, OutboxMessage, db
from service.unit_of_work import transaction

from ..admin.conftest import ADMIN, PASSWORD
from .conftest import screenshot
from .test_accessibility import violations

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


def sign_in(page: Any, live_server: str) -> None:
    page.goto(f"{live_server}/admin/login")
    page.get_by_label("Name").fill(ADMIN)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def test_an_operator_fixes_a_bouncing_address(
    pg_app: Flask, live_server: str, new_game: Callable[..., dict[str, Any]], browser: Any
) -> None:
    game = new_game(seed=5, days_per_move=3)
    with pg_app.app_context(), transaction():
        create_admin(ADMIN, PASSWORD)
        record_bounce("sam@example.com", 550, "5.1.1 User unknown")
        failed = db.session.scalars(
            select(OutboxMessage).where(OutboxMessage.recipient == "sam@example.com")
        ).one()
        failed.status, failed.last_error = "failed", "550 5.1.1 User unknown"
        failed_id = failed.id
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, live_server)

    # The landing page: the bouncing address, with a way to its games.
    assert page.locator("h1").inner_text() == "Overview"
    bouncing = page.locator("#bouncing")
    assert "sam@example.com: 550 5.1.1 User unknown, just now" in bouncing.inner_text()
    screenshot(page, "admin-overview")
    bouncing.get_by_role("link", name="games").click()
    # Its games alone: filtered by the whole address, not searched for as part of one.
    assert page.locator("input[name=email]").input_value() == "sam@example.com"
    assert page.locator("input[type=search]").input_value() == ""
    page.get_by_role("link", name=f"#{game['id']}").click()

    # The game page shows the bounce beside the player; the corrected address takes its place.
    players = page.locator("table.list").first
    assert "sam@example.com: 550 5.1.1 User unknown" in players.inner_text()
    page.locator("form.correct-address").last.get_by_label("Corrected address").fill(
        "sam@example.org"
    )
    page.locator("form.correct-address").last.get_by_role("button").click()
    assert "address is corrected" in page.get_by_role("status").inner_text()
    assert "sam@example.org" in players.inner_text()
    with pg_app.app_context():
        assert db.session.get_one(Game, game["id"]).player("shadow").email == "sam@example.org"

    # The failure is queued again from the mail list, once its permanent refusal is confirmed.
    page.goto(f"{live_server}/admin/mail?status=failed")
    page.locator(f"#pick-{failed_id}").check()
    page.get_by_role("button", name="Queue the selected failures again").click()
    assert "refused 1 of these for good" in page.get_by_role("alert").inner_text()
    page.locator(f"#pick-{failed_id}").check()
    page.locator("#bulk-confirm").check()
    page.get_by_role("button", name="Queue the selected failures again").click()
    assert "1 message is queued again." in page.get_by_role("status").inner_text()

    # The audit trail has both actions, newest first, after the admin's account was added.
    page.get_by_role("link", name="Audit").click()
    rows = page.locator("table.audit tbody tr")
    assert rows.count() == 3
    assert "requeue" in rows.nth(0).inner_text() and "correct address" in rows.nth(1).inner_text()
    assert "create admin" in rows.nth(2).inner_text()


def test_game_actions_confirm_and_name_the_seats_of_a_classic_game(
    pg_app: Flask, live_server: str, new_game: Callable[..., dict[str, Any]], browser: Any
) -> None:
    game = new_game(seed=6, days_per_move=3, look="classic")
    with pg_app.app_context(), transaction():
        create_admin(ADMIN, PASSWORD)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, live_server)
    page.goto(f"{live_server}/admin/games/{game['id']}")
    assert violations(page) == []

    # Rotating needs the box ticked; the new link goes out in the same step.
    rotate = page.locator("details.rotate").first
    rotate.locator("summary").click()
    assert rotate.get_by_label("Email the new link to kim@example.com").is_checked()
    rotate.get_by_role("button", name="Rotate link").click()
    assert page.url.endswith(f"/admin/games/{game['id']}")  # the browser asked for the tick
    rotate.get_by_label("Yes, replace the link").check()
    rotate.get_by_role("button", name="Rotate link").click()
    assert "Jekyll has a new link" in page.get_by_role("status").inner_text()
    assert "on its way to kim@example.com" in page.get_by_role("status").inner_text()

    # The forfeit menu names the seats as the game does, and who would win.
    menu = page.get_by_label("Forfeited by")
    assert menu.locator("option").all_inner_texts() == [
        "choose who forfeits",
        "Jekyll: Hyde wins",
        "Hyde: Jekyll wins",
    ]
    assert menu.input_value() == ""  # no seat forfeits unless the admin chooses it
    menu.select_option("shadow")
    page.locator("#forfeit-reason").fill("Hyde left the club.")
    page.locator("#forfeit-confirm").check()
    page.get_by_role("button", name="End by forfeit").click()
    assert "over by forfeit: Hyde forfeited and Jekyll wins" in (
        page.get_by_role("status").inner_text()
    )
    log = page.locator("table.log").inner_text()
    assert "declared a forfeit by Hyde: Hyde left the club." in log
    assert "rotated Jekyll's link and sent the new one" in log
    # Over: no link actions, no phase.
    assert page.get_by_role("button", name="Resend link").count() == 0
    assert page.locator("details.rotate").count() == 0
    screenshot(page, "admin-game-classic-forfeited")

    for path in ("/admin/", "/admin/games", "/admin/mail", "/admin/audit"):
        page.goto(f"{live_server}{path}")
        assert violations(page) == [], path


def test_an_address_with_a_domain_beyond_ascii_is_found_and_corrected_as_typed(
    pg_app: Flask, live_server: str, browser: Any
) -> None:
    """Sam plays from bücher.example: typed in the address filters as the player wrote it
    (any case), it finds his game and his mail, and so does its ASCII form (xn--…) copied
    from a bounce; a corrected address keeps the domain typed (faß.example is not
    fass.example, a domain someone else may own)."""
    with pg_app.app_context(), transaction():
        create_admin(ADMIN, PASSWORD)
        game_id = games.create_game(
            games.Seating("kim@example.com", "Kim"),
            games.Seating("Sam@Bücher.example", "Sam"),
            seed=3,
        ).id
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, live_server)
    for typed in ("Sam@Bücher.example", "sam@xn--bcher-kva.example"):
        page.goto(f"{live_server}/admin/games")
        page.get_by_label("Address (whole)").fill(typed)
        page.get_by_role("button", name="Show").click()
        assert page.get_by_role("link", name=f"#{game_id}").count() == 1, typed
        page.goto(f"{live_server}/admin/mail")
        page.get_by_label("Recipient").fill(typed)
        page.get_by_role("button", name="Show").click()
        assert "sam@bücher.example" in page.locator("table.list tbody").inner_text(), typed

    page.goto(f"{live_server}/admin/games/{game_id}")
    corrected = page.locator("form.correct-address").last
    assert corrected.get_by_label("Corrected address").input_value() == "sam@bücher.example"
    corrected.get_by_label("Corrected address").fill("sam@faß.example")
    corrected.get_by_role("button").click()
    assert "address is corrected" in page.get_by_role("status").inner_text()
    with pg_app.app_context():
        assert db.session.get_one(Game, game_id).player("shadow").email == "sam@faß.example"


def test_a_mistyped_address_comes_back_as_typed_to_be_fixed(
    pg_app: Flask, live_server: str, new_game: Callable[..., dict[str, Any]], browser: Any
) -> None:
    """An address the service refuses comes back in its seat's form as it was typed, the
    refusal said, for the operator to fix the typo rather than type it all again."""
    game = new_game(seed=5, days_per_move=3)
    with pg_app.app_context(), transaction():
        create_admin(ADMIN, PASSWORD)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, live_server)
    page.goto(f"{live_server}/admin/games/{game['id']}")

    shadows = page.locator("form.correct-address").last
    shadows.get_by_label("Corrected address").fill("sam.new at example.org")
    shadows.get_by_role("button").click()
    assert "is not an email address" in page.get_by_role("alert").inner_text()
    keepers, shadows = page.locator("form.correct-address").all()
    assert shadows.get_by_label("Corrected address").input_value() == "sam.new at example.org"
    with pg_app.app_context():
        kept = db.session.get_one(Game, game["id"]).player("keeper").email
    assert keepers.get_by_label("Corrected address").input_value() == kept

    shadows.get_by_label("Corrected address").fill("sam.new@example.org")
    shadows.get_by_role("button").click()
    assert "address is corrected" in page.get_by_role("status").inner_text()
    with pg_app.app_context():
        assert db.session.get_one(Game, game["id"]).player("shadow").email == "sam.new@example.org"
