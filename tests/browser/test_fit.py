"""The move page fits the screen: the hand and the move's button are seen without scrolling,
on a phone and on a laptop, in both looks and both languages."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest

from .conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

SCREENS = {"phone": {"width": 390, "height": 844}, "laptop": {"width": 1280, "height": 800}}


def post(url: str, body: dict[str, Any]) -> None:
    """A move through the live server's JSON API."""
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200


def bottom(page: Any, selector: str) -> float:
    """How far down the first screen the element's lowest edge is, in CSS pixels."""
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return float(box["y"] + box["height"])


@pytest.mark.parametrize("screen", SCREENS)
@pytest.mark.parametrize("look", ["standard", "classic"])
@pytest.mark.parametrize("locale", ["en-GB", "fr-FR"])
def test_the_hand_and_the_button_are_on_the_first_screen(
    new_game: Callable[..., dict], phone: Callable, screen: str, look: str, locale: str
) -> None:
    game = new_game(seed=5, look=look)
    size = SCREENS[screen]
    options: dict[str, Any] = {"locale": locale, "viewport": size}
    if screen == "laptop":
        options.update(is_mobile=False, has_touch=False, device_scale_factor=1)
    page = phone(**options).new_page()
    name = f"fit-{screen}-{look}-{locale}"
    # The exchange: the button is a real one, shown before any card is chosen.
    page.goto(game["shadow"])
    screenshot(page, f"{name}-exchange", full_page=False)
    assert bottom(page, ".hand .cards") <= size["height"]
    assert bottom(page, "form.choose .confirm") <= size["height"]
    for seat, card in (("keeper", "7D"), ("shadow", "5S")):
        post(game["api"][seat], {"version": 0, "exchange": [card]})
    post(game["api"]["keeper"], {"version": 2, "play": "6H"})
    # Answering a lead: the confirm bar appears once a card is tapped.
    page.goto(game["shadow"])
    page.locator('.choice[data-card="7H"]').click()
    screenshot(page, f"{name}-answer", full_page=False)
    assert bottom(page, ".hand .cards") <= size["height"]
    assert bottom(page, ".confirm-bar .confirm") <= size["height"]


def test_text_twice_as_large_on_a_phone_scrolls_only_down(
    new_game: Callable[..., dict], phone: Callable
) -> None:
    """A reader who doubles the text size on a narrow phone gets no sideways scrolling."""
    game = new_game(seed=5)
    for seat, card in (("keeper", "7D"), ("shadow", "5S")):
        post(game["api"][seat], {"version": 0, "exchange": [card]})
    page = phone(viewport={"width": 360, "height": 740}).new_page()
    page.goto(game["keeper"])
    page.evaluate("document.documentElement.style.fontSize = '200%'")
    page.locator('.choice[data-card="6H"]').click()
    screenshot(page, "fit-phone-text-200")
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
