"""The dashboard in Chromium: every page fits a phone's width, two-factor sign-in from the QR
code's address to the code after the password, and the admins page's confirmed actions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyotp
import pytest
from flask import Flask
from playwright.sync_api import expect

from service.admin.auth import create_admin
from service.games import declare_forfeit
from service.unit_of_work import transaction

from .conftest import PHONE, screenshot
from .test_accessibility import violations

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.xdist_group("browser")]

ADMIN, PASSWORD = "ada", "correct horse battery staple"
OTHER, OTHER_PASSWORD = "bob", "bob's long password"


@pytest.fixture
def accounts(pg_app: Flask) -> dict[str, int]:
    """Two admin accounts; their ids by name."""
    with pg_app.app_context(), transaction():
        return {
            name: create_admin(name, password).id
            for name, password in ((ADMIN, PASSWORD), (OTHER, OTHER_PASSWORD))
        }


def sign_in(page: Any, base: str, name: str = ADMIN, password: str = PASSWORD) -> None:
    page.goto(f"{base}/admin/login")
    page.get_by_label("Name").fill(name)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def scroll_width(page: Any) -> int:
    return page.evaluate("document.scrollingElement.scrollWidth")


# The elements that reach past the screen's right edge, for the message of a failed check.
OVERFLOWING = """() => [...document.querySelectorAll('body *')]
    .filter(e => e.getBoundingClientRect().right > innerWidth + 1)
    .map(e => e.tagName.toLowerCase() + (e.className ? '.' + e.className : ''))
    .slice(0, 8)"""


def test_no_admin_page_scrolls_sideways_on_a_phone(
    pg_app: Flask,
    live_server: str,
    new_game: Callable[..., dict[str, Any]],
    accounts: dict[str, int],
    phone: Callable[..., Any],
) -> None:
    live = new_game(3)
    finished = new_game(4, days_per_move=3)
    with pg_app.app_context(), transaction():
        declare_forfeit(finished["id"], "shadow", ADMIN)
    page = phone().new_page()
    page.goto(f"{live_server}/admin/login")
    assert scroll_width(page) <= PHONE["width"], "sign-in"
    sign_in(page, live_server)
    page.wait_for_url(f"{live_server}/admin/")
    pages = {
        "games": "/admin/",
        "game": f"/admin/games/{live['id']}",
        "finished-game": f"/admin/games/{finished['id']}",
        "mail": "/admin/mail",
        "message": "/admin/mail/1",
        "address": "/admin/address?email=kim@example.com",
        "stats": "/admin/stats",
        "playtest": "/admin/playtest",
        "admins": "/admin/admins",
        "two-factor": "/admin/two-factor",
    }
    for name, path in pages.items():
        response = page.goto(live_server + path)
        assert response is not None and response.status == 200, name
        assert scroll_width(page) <= PHONE["width"], (name, page.evaluate(OVERFLOWING))
        screenshot(page, f"admin-phone-{name}")

    # Every button of a live game's page can be reached and pressed within the screen.
    page.goto(f"{live_server}/admin/games/{live['id']}")
    # Actions that ask for confirmation sit in folded boxes: open them all first.
    for summary in page.locator("main details > summary").all():
        summary.click()
    buttons = page.locator("main button")
    assert buttons.count() >= 6  # resend and rotate for each player, extend, forfeit, cancel
    for index in range(buttons.count()):
        button = buttons.nth(index)
        button.scroll_into_view_if_needed()
        box = button.bounding_box()
        assert box is not None
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], button.inner_text()
        button.click(trial=True)  # nothing covers it


def test_two_factor_sign_in_from_the_qr_codes_address(
    live_server: str, accounts: dict[str, int], phone: Callable[..., Any]
) -> None:
    page = phone().new_page()
    sign_in(page, live_server)
    page.goto(f"{live_server}/admin/two-factor")
    page.get_by_label("Your password").fill(PASSWORD)
    page.get_by_role("button", name="Set up two-factor sign-in").click()
    assert violations(page) == []
    qr = page.locator(".qr svg")
    assert qr.is_visible() and (qr.bounding_box() or {"width": 0})["width"] >= 150
    assert scroll_width(page) <= PHONE["width"]
    screenshot(page, "admin-phone-two-factor-qr")
    totp = pyotp.parse_uri(page.locator("a#otpauth").get_attribute("href"))
    assert isinstance(totp, pyotp.TOTP)
    page.get_by_label("The six-digit code the app shows").fill(totp.now())
    page.get_by_label("Your password").fill(PASSWORD)
    page.get_by_role("button", name="Turn two-factor sign-in on").click()
    codes = page.locator(".recovery-codes code").all_inner_texts()
    assert len(codes) == 10 and violations(page) == []
    assert scroll_width(page) <= PHONE["width"]
    screenshot(page, "admin-phone-recovery-codes")

    page.get_by_role("button", name="Sign out").click()
    sign_in(page, live_server)
    page.wait_for_url(f"{live_server}/admin/login/code")
    assert scroll_width(page) <= PHONE["width"] and violations(page) == []
    page.get_by_label("recovery code").fill(codes[0])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{live_server}/admin/")
    page.goto(f"{live_server}/admin/two-factor")
    expect(page.locator("main")).to_contain_text("9 recovery codes left")


def test_disable_another_admin_on_the_admins_page(
    live_server: str, accounts: dict[str, int], phone: Callable[..., Any]
) -> None:
    bob = phone().new_page()
    sign_in(bob, live_server, OTHER, OTHER_PASSWORD)
    bob.wait_for_url(f"{live_server}/admin/")

    page = phone().new_page()
    sign_in(page, live_server)
    page.get_by_role("link", name="Admins").click()
    row = page.locator(f"#admin-{accounts[OTHER]}")
    assert "never" not in row.inner_text()  # bob signed in just now
    assert page.locator(f"#admin-{accounts[ADMIN]} button").count() == 0  # nothing on oneself
    assert violations(page) == []
    # The box must be ticked: the browser does not send the form without it.
    row.get_by_role("button", name="Disable").click()
    assert row.get_by_label("Yes, disable bob").evaluate("box => !box.validity.valid")
    expect(row).to_contain_text("enabled")
    row.get_by_label("Yes, disable bob").check()
    row.get_by_role("button", name="Disable").click()
    expect(page.get_by_role("status")).to_have_text("bob can no longer sign in.")
    expect(row).to_contain_text("disabled")

    bob.reload()
    assert bob.url.startswith(f"{live_server}/admin/login")
