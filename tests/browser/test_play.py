"""The move page in a real browser: phones, live updates, French, and no JavaScript."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest

from .conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

# Seed 5 deals a one-round game: the Shadow, dealt three elixirs, must give one in the
# exchange; two elixir leads name a suit, three diamonds against elixirs make swaps,
# and the Shadow takes all ten tricks (the last by a steal), which ends the game.
SEED = 5
GAME = [
    ("keeper", "exchange", "7D"),
    ("shadow", "exchange", "5S"),
    ("keeper", "play", "6H"),
    ("shadow", "play", "7H"),
    ("shadow", "play", "5H"),
    ("keeper", "play", "3H"),
    ("shadow", "play", "3D"),
    ("keeper", "play", "2D"),
    ("shadow", "play", "2S:D"),
    ("keeper", "play", "1D"),
    ("shadow", "swap", "6D 5C"),
    ("keeper", "swap", "2C 3S"),
    ("shadow", "play", "3C"),
    ("keeper", "play", "5C"),
    ("keeper", "play", "5S:H"),
    ("shadow", "play", "7D"),
    ("keeper", "swap", "1H 6D"),
    ("shadow", "swap", "2C 4S"),
    ("shadow", "play", "6D"),
    ("keeper", "play", "4S"),
    ("shadow", "swap", "1H 3S"),
    ("keeper", "swap", "2C 6C"),
    ("shadow", "play", "7C"),
    ("keeper", "play", "3S"),  # no clubs but an elixir: the elixir must be played
    ("shadow", "play", "2C"),
    ("keeper", "play", "1H"),
    ("shadow", "play", "6C"),
    ("keeper", "play", "4H"),
]


def api_view(url: str) -> dict[str, Any]:
    """The seat's view from the JSON API of the live server."""
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def choose(page: Any, cards: list[str]) -> None:
    """Tap the cards to give in an exchange or swap, then confirm."""
    for card in cards:
        page.locator(f'label.pick:has(input[value="{card}"])').click()
    confirm = page.locator("form.choose .confirm")
    assert confirm.is_enabled()
    with page.expect_navigation():
        confirm.click()


def play(page: Any, move: str) -> None:
    """Tap a card (and the suit an elixir lead names), then confirm."""
    card, _, suit = move.partition(":")
    page.locator(f'.choice[data-card="{card}"]').click()
    if suit:
        page.locator(f'.name-choice[data-suit="{suit}"]').click()
    confirm = page.locator(".confirm-bar .confirm")
    assert confirm.is_enabled()
    with page.expect_navigation():
        confirm.click()


def test_a_whole_game_on_two_phones(new_game: Callable[..., dict], phone: Callable) -> None:
    game = new_game(seed=SEED)
    pages = {seat: phone().new_page() for seat in ("keeper", "shadow")}
    failures: list[str] = []
    for page in pages.values():
        page.on("pageerror", lambda error: failures.append(str(error)))
    for number, (seat, kind, cards) in enumerate(GAME):
        page = pages[seat]
        page.goto(game[seat])
        assert page.locator("#status-line").inner_text() == "Your move"
        if number == 1:
            # The Shadow holds three elixirs: a selection without one cannot be confirmed.
            page.locator('label.pick:has(input[value="5H"])').click()
            assert page.locator("form.choose .confirm").is_disabled()
            reason = page.locator("form.choose .reason").inner_text()
            assert reason == "You hold 3 elixirs: give at least one of them."
            screenshot(page, "01-exchange-needs-an-elixir")
            page.locator('label.pick:has(input[value="5H"])').click()
        if number == 3:
            # Following the Keeper's heart, a diamond is refused with the rule.
            page.locator('.choice[data-card="3D"]').click()
            assert page.locator(".confirm-bar .reason").inner_text() == (
                "You hold hearts: follow with hearts or play an elixir."
            )
            assert page.locator(".confirm-bar .confirm").is_disabled()
            screenshot(page, "02-follow-suit-refused")
        if number == 8:
            page.locator('.choice[data-card="2S"]').click()
            assert page.locator(".naming").is_visible()
            assert page.locator(".confirm-bar .confirm").is_disabled()
            page.locator('.name-choice[data-suit="D"]').click()
            screenshot(page, "03-elixir-lead-naming-diamonds")
            page.locator('.choice[data-card="2S"]').click()  # unselect: play() selects again
        if number == 10:
            assert "Swap: choose 2 cards to give Kim." in page.locator("#status").inner_text()
            screenshot(page, "04-swap")
        if kind == "play":
            play(page, cards)
        else:
            choose(page, cards.split())
    for seat, page in pages.items():
        page.goto(game[seat])
        assert page.locator("#status-line").inner_text() == "Game over: the Shadow wins."
        assert page.locator(".track .track-card.up").count() == 10
    news = pages["shadow"].locator(".news").inner_text()
    assert "Round 1 is over: 10 tricks for you, 0 for Kim; the track moves 10." in news
    # A finished game keeps every round, trick by trick, folded until opened.
    rounds = pages["shadow"].locator(".history.earlier")
    assert "Steal: you took a trick from Kim" not in rounds.inner_text()
    rounds.locator("summary").first.click()
    assert "Steal: you took a trick from Kim" in rounds.inner_text()
    assert pages["shadow"].get_by_role("button", name="Ask Kim for a rematch").is_visible()
    screenshot(pages["shadow"], "05-game-over")
    assert api_view(game["api"]["keeper"])["winner"] == "shadow"
    assert not failures


def test_the_waiting_page_follows_the_opponent(new_game: Callable, phone: Callable) -> None:
    game = new_game(seed=SEED)
    keeper = phone().new_page()
    keeper.goto(game["keeper"])
    assert keeper.title() == "Your move · Game 1 · Split Mind by Mail"
    choose(keeper, ["7D"])
    assert keeper.locator("#status-line").inner_text() == (
        "Waiting for Sam to choose the cards to give you."
    )
    assert keeper.title() == "Game 1 · Split Mind by Mail"
    keeper.evaluate("window.splitMindMarker = 'still the same page'")
    # The reader was somewhere in the game's content, which the update replaces.
    keeper.evaluate("(h => { h.tabIndex = -1; h.focus(); })(document.querySelector('#game h1'))")
    screenshot(keeper, "06-waiting")
    shadow = phone().new_page()
    shadow.goto(game["shadow"])
    shadow.locator("#note").fill("hello Kim")
    choose(shadow, ["5S"])
    keeper.locator("#status-line", has_text="Your move").wait_for(timeout=15_000)
    assert keeper.evaluate("window.splitMindMarker") == "still the same page"
    assert keeper.locator("#game").get_attribute("data-version") == "2"
    assert keeper.title() == "Your move · Game 1 · Split Mind by Mail"  # the tab says so too
    news = keeper.locator(".news li").inner_text().strip()
    assert news == "Exchange done: you gave 7♦ and received ♠5½."
    # The screen reader hears the cards received, in words, then whose move it is.
    assert keeper.locator("#announce").inner_text() == (
        "Exchange done: you gave 7 of diamonds and received elixir 5½. Notes from Sam."
        " hello Kim. Your move. Lead the first trick of the round."
    )
    # Focus moved to what changed, not to the start of the page.
    assert keeper.evaluate("document.activeElement.id") == "status-line"
    # The new content works like a fresh page: the Keeper leads at once.
    play(keeper, "6H")
    assert api_view(game["api"]["shadow"])["table"] == [{"seat": "keeper", "card": "6H"}]
    screenshot(keeper, "07-updated-and-played")


@pytest.mark.parametrize("app_config", [{"BASE_URL": "http://127.0.0.1/splitmind"}])
def test_under_a_path_the_page_plays_and_follows_the_opponent(
    new_game: Callable, phone: Callable, live_server: str
) -> None:
    """Served under ``/splitmind`` (BASE_URL's path): the page's style and script load from
    there, a move is sent there, and the script follows the opponent's move there."""
    assert live_server.endswith("/splitmind")
    game = new_game(seed=SEED)
    keeper = phone().new_page()
    failed: list[str] = []
    keeper.on("requestfailed", lambda request: failed.append(request.url))
    keeper.on("response", lambda answer: answer.status >= 400 and failed.append(answer.url))
    keeper.goto(game["keeper"])
    assert keeper.evaluate("getComputedStyle(document.body).margin") != "8px"  # styled
    choose(keeper, ["7D"])
    assert keeper.url.startswith(f"{live_server}/play/")
    assert keeper.locator("#game").get_attribute("data-version") == "1"
    keeper.evaluate("window.splitMindMarker = 'still the same page'")
    api_move(game["api"]["shadow"], {"exchange": ["5S"]})
    keeper.locator("#status-line", has_text="Your move").wait_for(timeout=15_000)
    assert keeper.evaluate("window.splitMindMarker") == "still the same page"
    play(keeper, "6H")
    assert api_view(game["api"]["shadow"])["table"] == [{"seat": "keeper", "card": "6H"}]
    assert not failed, failed


def test_an_update_leaves_the_reader_where_they_were(new_game: Callable, phone: Callable) -> None:
    """Reading the rules while waiting, by keyboard: the opponent's move is announced, and the
    rules stay open with the focus on them, not closed under the reader."""
    game = new_game(seed=SEED)
    keeper = phone().new_page()
    keeper.goto(game["keeper"])
    choose(keeper, ["7D"])
    keeper.locator("details.rules > summary").focus()
    keeper.keyboard.press("Enter")
    assert keeper.locator("details.rules").evaluate("d => d.open")
    api_move(game["api"]["shadow"], {"exchange": ["5S"]})
    keeper.locator("#status-line", has_text="Your move").wait_for(timeout=15_000)
    announced = keeper.locator("#announce").inner_text()
    assert announced.endswith("Your move. Lead the first trick of the round.")
    assert keeper.locator("details.rules").evaluate("d => d.open")
    assert keeper.evaluate("document.activeElement.matches('details.rules > summary')")


def api_move(url: str, action: dict[str, Any]) -> None:
    """Make a move through the JSON API of the live server, at the version it is at."""
    body = {"version": api_view(url)["version"], **action}
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200


def test_a_page_that_failed_to_load_is_tried_again(new_game: Callable, phone: Callable) -> None:
    """A proxy or the database down for a moment: the update waits longer and tries again."""
    game = new_game(seed=SEED)
    keeper = phone().new_page()
    keeper.goto(game["keeper"])
    choose(keeper, ["7D"])
    failed: list[str] = []

    def once_unavailable(route: Any) -> None:
        if route.request.method == "GET" and not failed:
            failed.append(route.request.url)
            route.fulfill(status=503, content_type="text/html", body="<p>Back soon</p>")
        else:
            route.continue_()

    keeper.route(game["keeper"], once_unavailable)
    api_move(game["api"]["shadow"], {"exchange": ["5S"]})
    keeper.locator("#status-line", has_text="Your move").wait_for(timeout=15_000)
    assert failed == [game["keeper"]]


def test_one_update_at_a_time(new_game: Callable, phone: Callable) -> None:
    """The page shown again while a poll is on its way starts no second one, whose update
    would replace a game section no longer on the page, and follow that from then on."""
    game = new_game(seed=SEED)
    keeper = phone().new_page()
    keeper.goto(game["keeper"])
    choose(keeper, ["7D"])
    reads: list[str] = []
    keeper.on("request", lambda request: reads.append(request.url))
    api_move(game["api"]["shadow"], {"exchange": ["5S"]})
    keeper.evaluate(
        "for (let n = 0; n < 3; n++) document.dispatchEvent(new Event('visibilitychange'))"
    )
    keeper.locator("#status-line", has_text="Your move").wait_for(timeout=15_000)
    keeper.wait_for_timeout(500)  # time for a second update, were one under way
    assert reads.count(game["keeper"]) == 1
    assert keeper.locator("#game").count() == 1


def test_the_screen_reader_hears_only_what_is_new(new_game: Callable, phone: Callable) -> None:
    """The trick Sam won was read out when it was won; Sam's next lead does not repeat it."""
    game = new_game(seed=SEED)
    api_move(game["api"]["keeper"], {"exchange": ["7D"]})
    api_move(game["api"]["shadow"], {"exchange": ["5S"]})
    keeper = phone().new_page()
    keeper.goto(game["keeper"])
    play(keeper, "6H")
    api_move(game["api"]["shadow"], {"play": "7H"})
    keeper.locator("#game[data-version='4']").wait_for(timeout=15_000)
    won = keeper.locator("#announce").inner_text()
    assert "Sam won" in won
    api_move(game["api"]["shadow"], {"play": "5H"})
    keeper.locator("#status-line", has_text="Your move").wait_for(timeout=15_000)
    led = keeper.locator("#announce").inner_text()
    assert "Sam won" not in led and led.endswith("Your move. Answer the 5 of hearts Sam led.")


def test_a_second_tab_shown_again_follows_the_first(new_game: Callable, phone: Callable) -> None:
    """A move made in one tab: the other, still offering it, catches up when shown again."""
    game = new_game(seed=SEED)
    context = phone()
    first, second = context.new_page(), context.new_page()
    for page in (first, second):
        page.goto(game["keeper"])
    choose(first, ["7D"])
    second.evaluate("document.dispatchEvent(new Event('visibilitychange'))")
    second.locator("#status-line", has_text="Waiting for Sam").wait_for(timeout=15_000)


def test_a_refused_resignation_s_page_follows_the_opponent(
    new_game: Callable, phone: Callable
) -> None:
    """A page shown by a refused POST of its own (a resignation from a page the game had
    moved on from, a reminder sent already) is at that POST's address: it still follows
    the opponent's moves, from the game's own page."""
    game = new_game(seed=SEED)
    api_move(game["api"]["keeper"], {"exchange": ["7D"]})
    api_move(game["api"]["shadow"], {"exchange": ["5S"]})
    api_move(game["api"]["keeper"], {"play": "6H"})
    keeper = phone().new_page()
    keeper.goto(game["keeper"])
    keeper.locator("details.resign summary").click()
    keeper.locator("details.resign input[name=confirm]").check()
    # The version of a page loaded before the Keeper led.
    keeper.evaluate("document.querySelector('details.resign input[name=version]').value = '2'")
    with keeper.expect_navigation():
        keeper.locator("details.resign button[type=submit]").click()
    assert keeper.url == f"{game['keeper']}/resign"
    assert keeper.locator(".error").inner_text().startswith("This page was out of date")
    assert keeper.locator("#game").get_attribute("data-version") == "3"
    api_move(game["api"]["shadow"], {"play": "7H"})
    keeper.locator("#game[data-version='4']").wait_for(timeout=15_000)
    assert keeper.locator("#status-line").inner_text() == (
        "Waiting for Sam to lead the next trick."
    )


def test_a_move_sent_keeps_its_cards_until_the_next_page(
    new_game: Callable, phone: Callable
) -> None:
    """A card tapped while the move is on its way changes nothing: the move sent is the
    one played, and no second one follows it."""
    game = new_game(seed=SEED)
    api_move(game["api"]["keeper"], {"exchange": ["7D"]})
    api_move(game["api"]["shadow"], {"exchange": ["5S"]})
    keeper = phone().new_page()
    keeper.goto(game["keeper"])
    posted: list[str | None] = []
    keeper.on("request", lambda r: posted.append(r.post_data) if r.method == "POST" else None)
    with keeper.expect_navigation():
        keeper.evaluate(
            """() => {
                const tap = selector => document.querySelector(selector).click();
                tap('.choice[data-card="6H"]');
                tap('.confirm-bar .confirm');
                tap('.choice[data-card="4H"]');
                tap('.confirm-bar .confirm');
            }"""
        )
    assert [data for data in posted if data and "play=" in data] == [
        next(data for data in posted if data and "play=6H" in data)
    ]
    assert api_view(game["api"]["shadow"])["table"] == [{"seat": "keeper", "card": "6H"}]


def test_a_choice_sent_twice_is_sent_once(new_game: Callable, phone: Callable) -> None:
    """Two taps on "Give" before the next page: one exchange, and no page saying it was stale."""
    game = new_game(seed=SEED)
    keeper = phone().new_page()
    keeper.goto(game["keeper"])
    keeper.locator('label.pick:has(input[value="7D"])').click()
    posted: list[str] = []
    keeper.on("request", lambda r: posted.append(r.url) if r.method == "POST" else None)

    def slowly(route: Any) -> None:  # a slow network: the second tap comes while it is sent
        time.sleep(0.5)
        route.continue_()

    keeper.route(game["keeper"], slowly)
    with keeper.expect_navigation():
        keeper.evaluate(
            "() => { const b = document.querySelector('form.choose .confirm');"
            " b.click(); setTimeout(() => b.click(), 100); }"
        )
    keeper.wait_for_load_state()
    assert [url for url in posted if url == game["keeper"]] == [game["keeper"]]
    assert keeper.locator(".error").count() == 0
    assert api_view(game["api"]["keeper"])["version"] == 1


@pytest.mark.parametrize("script", [True, False], ids=["script", "no-script"])
def test_enter_on_a_card_to_give_gives_nothing_and_keeps_it_ticked(
    new_game: Callable, phone: Callable, script: bool
) -> None:
    """Enter on a ticked card presses the form's first button too: nothing is given, and no
    note is said to be kept when none was written."""
    game = new_game(seed=SEED)
    page = phone(java_script_enabled=script).new_page()
    page.goto(game["keeper"])
    page.locator('input[name=cards][value="7D"]').check()
    page.locator('input[name=cards][value="7D"]').press("Enter")
    page.wait_for_timeout(300)  # a navigation Enter started would be under way by now
    page.wait_for_load_state()
    assert api_view(game["api"]["keeper"])["version"] == 0
    assert page.locator('input[name=cards][value="7D"]').is_checked()
    if script:  # not even sent: no page came back saying so
        assert page.locator(".error").count() == 0
    else:
        assert page.locator(".error").inner_text() == (
            "Enter sends no move: choose your card, then press its button."
        )


@pytest.mark.parametrize("script", [True, False], ids=["script", "no-script"])
def test_enter_in_the_note_neither_picks_nor_plays_a_card(
    new_game: Callable, phone: Callable, script: bool
) -> None:
    """Enter in a text field presses its form's first submit button: with the script the
    first card (picking it instead of the one chosen), without it that card played."""
    game = new_game(seed=SEED)
    pages = {seat: phone(java_script_enabled=script).new_page() for seat in ("keeper", "shadow")}
    for version, (seat, card) in enumerate((("keeper", "7D"), ("shadow", "5S"))):
        pages[seat].goto(game[seat])
        pages[seat].locator(f'input[name=cards][value="{card}"]').check()
        pages[seat].locator("#note").fill("exchange note")
        pages[seat].locator("#note").press("Enter")
        pages[seat].wait_for_load_state()
        assert api_view(game["api"][seat])["version"] == version  # Enter gave nothing
        with pages[seat].expect_navigation():
            pages[seat].get_by_role("button", name="Give this card").click()
    keeper = pages["keeper"]
    keeper.goto(game["keeper"])
    if script:
        keeper.locator('.choice[data-card="6H"]').click()
    keeper.locator("#note").fill("good luck")
    keeper.locator("#note").press("Enter")
    keeper.wait_for_timeout(300)  # a navigation Enter started would be under way by now
    assert api_view(game["api"]["keeper"])["table"] == []
    if script:
        assert keeper.locator('.choice[data-card="6H"]').get_attribute("aria-pressed") == "true"
        with keeper.expect_navigation():
            keeper.locator(".confirm-bar .confirm").click()
    else:
        # The page came back saying so, the note as typed.
        assert keeper.locator(".error").inner_text().startswith("Enter sends no move")
        assert keeper.locator("#note").input_value() == "good luck"
        with keeper.expect_navigation():
            keeper.get_by_role("button", name="Play 6 of hearts").click()
    assert api_view(game["api"]["shadow"])["table"] == [{"seat": "keeper", "card": "6H"}]
    pages["shadow"].goto(game["shadow"])
    assert "good luck" in pages["shadow"].locator(".notes").inner_text()


def test_a_french_page_and_the_language_switch(new_game: Callable, phone: Callable) -> None:
    game = new_game(seed=SEED)
    page = phone(locale="fr-FR").new_page()
    page.goto(game["shadow"])
    assert page.locator("html").get_attribute("lang") == "fr"
    assert page.locator("#status-line").inner_text() == "À vous de jouer"
    page.locator('label.pick:has(input[value="5H"])').click()
    assert page.locator("form.choose .reason").inner_text() == (
        "Vous avez 3 élixirs\u00a0: donnez-en au moins un."
    )
    screenshot(page, "08-french")
    page.get_by_role("link", name="Règles").click()
    assert page.locator("h1").inner_text() == "Split Mind\u00a0: la règle du jeu"
    page.go_back()
    with page.expect_navigation():
        page.get_by_role("button", name="English").click()
    assert page.locator("html").get_attribute("lang") == "en"
    assert page.locator("#status-line").inner_text() == "Your move"


def test_a_language_link_keeps_the_page_and_its_query(live_server: str, phone: Callable) -> None:
    page = phone(locale="fr-FR").new_page()
    page.goto(f"{live_server}/rules?look=classic")
    assert page.locator("html").get_attribute("lang") == "fr"
    with page.expect_navigation():
        page.get_by_role("link", name="English").click()
    assert page.url == f"{live_server}/rules?look=classic&lang=en"
    assert page.locator("html").get_attribute("lang") == "en"


def test_without_javascript_the_forms_still_play(new_game: Callable, phone: Callable) -> None:
    game = new_game(seed=SEED)
    pages = {seat: phone(java_script_enabled=False).new_page() for seat in ("keeper", "shadow")}
    for seat, card in (("keeper", "7D"), ("shadow", "5S")):
        page = pages[seat]
        page.goto(game[seat])
        assert page.locator(".confirm-bar").is_hidden()
        name = "7 of diamonds" if card == "7D" else "elixir 5½"
        page.get_by_role("checkbox", name=name).check()
        with page.expect_navigation():
            page.get_by_role("button", name="Give this card").click()
    page = pages["keeper"]
    page.goto(game["keeper"])
    screenshot(page, "09-no-javascript")
    with page.expect_navigation():
        page.get_by_role("button", name="Play 6 of hearts").click()
    assert page.locator("#status-line").inner_text() == "Waiting for Sam to play to your card."
    assert api_view(game["api"]["shadow"])["table"] == [{"seat": "keeper", "card": "6H"}]


@pytest.mark.parametrize("script", [False, True], ids=["no-javascript", "javascript"])
def test_the_page_says_a_tap_plays_a_card_only_where_it_does(
    new_game: Callable, phone: Callable, script: bool
) -> None:
    """Without the script a card is the button that plays it: a first tap, meant to pick the
    card as the page with the script does, plays it at once. The page says so, there only."""
    game = new_game(seed=SEED)
    for seat, card in (("keeper", "7D"), ("shadow", "5S")):
        page = phone().new_page()
        page.goto(game[seat])
        choose(page, [card])
    page = phone(java_script_enabled=script).new_page()
    page.goto(game["keeper"])
    said = page.get_by_text("Tap a card to play it at once: there is no other button to press.")
    if script:
        assert said.is_hidden()
    else:
        said.wait_for()
        # Read before the cards it is about.
        assert said.bounding_box()["y"] < page.locator("form.play .cards").bounding_box()["y"]
        page.goto(game["keeper"] + "?lang=fr")
        page.get_by_text("Touchez une carte pour la jouer aussitôt\u00a0: il n’y a pas").wait_for()


def test_classic_look_with_the_keyboard(new_game: Callable, phone: Callable) -> None:
    game = new_game(seed=SEED, look="classic")
    page = phone().new_page()
    page.goto(game["shadow"])
    assert "You are Hyde, Sam, against Kim (Jekyll)." in page.locator(".who").inner_text()
    assert page.locator(".card.look-classic").count() == 10
    page.locator('label.pick:has(input[value="5H"]) input').focus()
    page.keyboard.press("Space")
    assert page.locator("form.choose .reason").inner_text() == (
        "You hold 3 potions: give at least one of them."
    )
    page.keyboard.press("Space")
    page.locator('label.pick:has(input[value="5S"]) input').focus()
    page.keyboard.press("Space")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "confirm"
    screenshot(page, "10-classic-keyboard")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert "Waiting for Kim" in page.locator("#status-line").inner_text()


def around(page: Any, element: Any, margin: int = 8) -> bytes:
    """A screenshot of ``element`` with its surroundings, where a focus ring is drawn."""
    box = element.bounding_box()
    assert box is not None
    clip = {
        "x": box["x"] - margin,
        "y": box["y"] - margin,
        "width": box["width"] + 2 * margin,
        "height": box["height"] + 2 * margin,
    }
    return bytes(page.screenshot(clip=clip, animations="disabled", caret="hide"))


@pytest.mark.parametrize("look", ["standard", "classic"])
def test_the_suit_named_shows_in_forced_colours(
    new_game: Callable, phone: Callable, look: str
) -> None:
    """High contrast draws no shadow and no colour of its own: the suit an elixir lead names
    still looks named, also under the keyboard's focus ring."""
    game = new_game(seed=SEED, look=look)
    api_move(game["api"]["keeper"], {"exchange": ["7D"]})
    api_move(game["api"]["shadow"], {"exchange": ["5S"]})
    page = phone().new_page()
    page.emulate_media(forced_colors="active")
    page.goto(game["keeper"])
    page.locator('.choice[data-card="3S"]').focus()
    page.keyboard.press("Space")
    page.locator('.name-choice[data-suit="D"]').focus()
    page.keyboard.press("Shift+Tab")
    hearts = page.locator('.name-choice[data-suit="H"]')
    assert hearts.evaluate("b => b === document.activeElement && b.matches(':focus-visible')")
    focused = around(page, hearts)
    page.keyboard.press("Space")
    assert hearts.get_attribute("aria-pressed") == "true"
    named = around(page, hearts)
    assert named != focused, "a named suit under the focus looks as one not named"


def test_the_next_pages_load_no_static_file_again(
    pg_app: Any, new_game: Callable, phone: Callable
) -> None:
    """The style sheet, script and icon come once; each page after that is one request
    (with the page's own small posts: the time zone and the seen mark)."""
    game = new_game(seed=SEED)
    requested: list[str] = []
    serve = pg_app.wsgi_app

    def recording(environ: dict[str, Any], start_response: Any) -> Any:
        requested.append(f"{environ['REQUEST_METHOD']} {environ['PATH_INFO']}")
        return serve(environ, start_response)

    pg_app.wsgi_app = recording
    page = phone().new_page()
    page.goto(game["keeper"])
    page.wait_for_load_state("networkidle")
    first = [line for line in requested if "/static/" in line]
    assert sorted(first) == [
        "GET /static/favicon.svg",
        "GET /static/play.js",
        "GET /static/style.css",
    ]
    requested.clear()
    choose(page, ["7D"])
    page.goto(game["keeper"])
    page.wait_for_load_state("networkidle")
    assert requested and not [line for line in requested if "/static/" in line], requested
