"""Accessibility audit of the pages players and visitors use, with axe-core in Chromium."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe

from .conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


def post(url: str, body: dict[str, Any]) -> None:
    """A move through the live server's JSON API."""
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200


def violations(page: Any) -> list[str]:
    """Every axe-core violation on the page, as ``rule: where`` lines."""
    results = Axe().run(page)
    return [
        f"{violation['id']} ({violation['impact']}): {node['target']}"
        for violation in results.response["violations"]
        for node in violation["nodes"]
    ]


@pytest.mark.parametrize("look", ["standard", "classic"])
@pytest.mark.parametrize("locale", ["en-GB", "fr-FR"])
def test_the_move_page_passes_an_accessibility_audit(
    new_game: Callable[..., dict], phone: Callable, look: str, locale: str
) -> None:
    game = new_game(seed=5, look=look)
    page = phone(locale=locale).new_page()
    for seat in ("keeper", "shadow"):  # the exchange
        page.goto(game[seat])
        assert violations(page) == []
    # The note's field: a finger's size, and no zoom on a phone (16px text and more).
    note = page.locator("#note")
    assert note.evaluate("e => parseFloat(getComputedStyle(e).fontSize)") >= 16
    assert (note.bounding_box() or {"height": 0})["height"] >= 40
    for seat, card in (("keeper", "7D"), ("shadow", "5S")):
        post(game["api"][seat], {"version": 0, "exchange": [card]})
    for seat in ("keeper", "shadow"):  # a lead with some cards playable, and waiting
        page.goto(game[seat])
        assert violations(page) == []
    post(game["api"]["keeper"], {"version": 2, "play": "6H"})
    page.goto(game["shadow"])  # an answer: the cards that may not follow are marked
    assert page.locator(".card.illegal").count() > 0
    assert violations(page) == []


def play_to_the_end(game: dict[str, Any]) -> None:
    """Play test_play's whole game (seed 5) through the API."""
    from .test_play import GAME

    for number, (seat, kind, cards) in enumerate(GAME):
        card, _, name = cards.partition(":")
        action: dict[str, Any] = {"play": card} if kind == "play" else {kind: cards.split()}
        if name:
            action["name"] = name
        post(game["api"][seat], {"version": number, **action})  # one version per move


@pytest.mark.parametrize("look", ["standard", "classic"])
def test_a_finished_game_passes_an_accessibility_audit(
    new_game: Callable[..., dict], phone: Callable, look: str
) -> None:
    """The page after the last move: what it did, the result, the next games, every round."""
    game = new_game(seed=5, look=look)
    play_to_the_end(game)
    page = phone().new_page()
    page.goto(game["keeper"])
    assert page.locator(".outcome").is_visible()
    summary = page.locator(".history.earlier summary").first

    def marker() -> str:
        return str(summary.evaluate("s => getComputedStyle(s, '::before').content"))

    # A folded round shows it can be opened, and that it is open once it is.
    assert "▸" in marker()
    summary.click()
    assert "▾" in marker()
    assert violations(page) == []


@pytest.mark.parametrize("script", [True, False], ids=["script", "no-script"])
@pytest.mark.parametrize("locale", ["en-GB", "fr-FR"])
def test_a_finished_game_fits_the_narrowest_phone(
    new_game: Callable[..., dict], phone: Callable, locale: str, script: bool
) -> None:
    """At 320 px, nothing of the last page scrolls sideways: not the table of the rounds
    (whose columns the players' names head), not a long name anywhere."""
    names = {
        "keeper_name": "Marie-Dominique-Charlotte",
        "shadow_name": "Wolfgang-Amadeus-Theophilus",
    }
    game = new_game(seed=5, **names)
    play_to_the_end(game)
    context = phone(
        locale=locale, java_script_enabled=script, viewport={"width": 320, "height": 568}
    )
    page = context.new_page()
    for seat in ("keeper", "shadow"):
        page.goto(game[seat])
        screenshot(page, f"finished-320-{locale}-{'script' if script else 'no-script'}-{seat}")
        assert page.locator(".rounds table").is_visible()
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 320, f"the {seat}'s last page scrolls sideways at 320 px: {width} px"


def test_the_public_pages_pass_an_accessibility_audit(live_server: str, phone: Callable) -> None:
    page = phone().new_page()
    for path in ("/", "/rules", "/rules?look=classic", "/new", "/links", "/play/no-such-link"):
        page.goto(live_server + path)
        assert violations(page) == [], path


def test_the_audit_finds_what_it_should(live_server: str, phone: Callable) -> None:
    """The audit itself: an image without a text alternative is reported."""
    page = phone().new_page()
    page.goto(live_server + "/")
    page.evaluate("document.querySelector('main').append(document.createElement('img'))")
    assert any(line.startswith("image-alt") for line in violations(page))


@pytest.mark.parametrize(
    ("locale", "shown", "card", "said"),
    [
        (
            "en-GB",
            "Answer the 6♥ Kim led.",
            "6 of hearts",
            "Kim leads 6 of hearts. Your move. Answer the 6 of hearts Kim led.",
        ),
        (
            "fr-FR",
            "Répondez à la carte de Kim\u00a0: 6♥.",
            "6 de cœur",
            "Kim entame avec 6 de cœur. À vous de jouer. Répondez à la carte de Kim : 6 de cœur.",
        ),
    ],
)
def test_a_card_in_a_sentence_is_said_in_words(
    new_game: Callable[..., dict], phone: Callable, locale: str, shown: str, card: str, said: str
) -> None:
    """The page writes "Answer the 6♥ Kim led." for the eye; a screen reader meets an image
    named as the card buttons are ("6 of hearts"), and the page's live update says the
    words."""
    game = new_game(seed=5)
    for seat, given in (("keeper", "7D"), ("shadow", "5S")):
        post(game["api"][seat], {"version": 0, "exchange": [given]})
    page = phone(locale=locale).new_page()
    page.goto(game["shadow"])
    post(game["api"]["keeper"], {"version": 2, "play": "6H"})
    page.locator("#game[data-version='3']").wait_for(timeout=15_000)
    sentence = page.locator("#status > p").first
    assert sentence.inner_text().strip() == shown  # what the eye reads, and copies, is the same
    named = sentence.get_by_role("img", name=card, exact=True)
    assert named.count() == 1 and named.inner_text() == "6♥"
    assert f'img "{card}": 6♥' in sentence.aria_snapshot()
    assert page.locator("#announce").inner_text() == said
