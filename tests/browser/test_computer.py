"""Against the computer in a real browser: the page follows the move the worker makes."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from flask import Flask
from playwright.sync_api import Page

from service.computer import ComputerMoves
from service.games import Seating, create_game
from service.links import token_for
from service.unit_of_work import transaction

from .conftest import screenshot
from .test_play import SEED, choose

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


def exchanged_with_the_computer(pg_app: Flask, live_server: str, phone: Callable) -> Page:
    """Kim's page of a new game against the computer, her half of the exchange chosen."""
    with pg_app.app_context(), transaction():
        game = create_game(
            Seating("kim@example.com", "Kim"), Seating.the_computer("easy"), seed=SEED
        )
        link = f"{live_server}/play/{token_for(game.player('keeper'))}"
    page = phone().new_page()
    page.goto(link)
    choose(page, ["7D"])
    return page


def test_the_page_follows_the_computers_move(
    pg_app: Flask, live_server: str, phone: Callable
) -> None:
    page = exchanged_with_the_computer(pg_app, live_server, phone)
    assert page.locator("#status-line").inner_text() == (
        "Waiting for the computer (easy) to choose the cards to give you."
    )
    with pg_app.app_context():
        assert ComputerMoves()() == 1
    page.locator("#status-line", has_text="Your move").wait_for(timeout=15_000)
    assert page.locator("#game").get_attribute("data-version") == "2"
    screenshot(page, "20-against-the-computer")


def test_the_page_says_so_when_the_computers_move_is_late(
    pg_app: Flask, live_server: str, phone: Callable
) -> None:
    """No worker makes the computer's move: once its time has come, the script shows the
    notice the page holds, and the page stays as it is otherwise."""
    page = exchanged_with_the_computer(pg_app, live_server, phone)
    late = page.locator("#computer-late")
    assert late.is_hidden()
    # The time the page holds comes (two minutes past the delay, on the reader's clock).
    late.evaluate("element => { element.dataset.lateAt = '2000-01-01T00:00:00+00:00'; }")
    late.wait_for(state="visible", timeout=15_000)
    assert late.inner_text().startswith("The computer (easy) has not moved yet:")
    assert page.locator("#game").get_attribute("data-version") == "1"
