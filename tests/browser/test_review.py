"""The review of a finished game in a real browser: one step at a time, back and forth."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask

from ..helpers import play_to_end
from .conftest import screenshot
from .test_accessibility import violations

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


def test_stepping_through_a_finished_game(
    pg_app: Flask, new_game: Callable[..., dict[str, Any]], phone: Any
) -> None:
    game = new_game(seed=21)
    tokens = {seat: game[seat].rpartition("/")[2] for seat in ("keeper", "shadow")}
    play_to_end(pg_app.test_client(), tokens, 21)
    page = phone().new_page()
    page.goto(game["keeper"])
    page.get_by_role("link", name="Review the game, every card shown").click()
    page.wait_for_url("**/review")
    position = page.locator(".stepper .position")
    steps = page.locator(".step")
    total = steps.count()
    assert total >= 23  # a deal, an exchange and ten tricks a round, at least two rounds
    assert position.inner_text() == f"Step 1 of {total} · Round 1: the deal"
    assert page.locator(".step:visible").count() == 1
    assert page.locator(".step:visible h2").inner_text() == "Round 1: the deal"
    assert page.get_by_role("button", name="Previous").is_disabled()
    assert violations(page) == []
    screenshot(page, "review-deal")

    page.get_by_role("button", name="Next").click()
    assert position.inner_text() == f"Step 2 of {total} · Round 1: the exchange"
    assert page.locator(".step:visible h2").inner_text() == "Round 1: the exchange"
    assert page.url.endswith("#step-2")
    page.keyboard.press("ArrowRight")
    assert page.locator(".step:visible h2").inner_text() == "Round 1, trick 1"
    page.keyboard.press("ArrowLeft")
    assert position.inner_text().startswith(f"Step 2 of {total} · ")

    # With the keyboard: End disables itself, and focus goes to a button still there.
    page.get_by_role("button", name="End").focus()
    page.keyboard.press("Enter")
    assert position.inner_text().startswith(f"Step {total} of {total} · Round ")
    assert page.get_by_role("button", name="Next").is_disabled()
    assert page.evaluate("document.activeElement.dataset.go") == "previous"
    assert "over:" in page.locator(".step:visible").inner_text()
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= 390, f"the review scrolls sideways at 390 px: {width} px"
    screenshot(page, "review-end")

    # A shared address opens at its step; without the script every step is listed.
    page.goto(f"{page.url.partition('#')[0]}#step-5")
    assert position.inner_text().startswith(f"Step 5 of {total} · ")
    bare = phone(java_script_enabled=False).new_page()
    bare.goto(page.url.partition("#")[0])
    assert bare.locator(".step:visible").count() == total
    assert not bare.locator(".stepper").is_visible()
