"""The move page tells the service its browser's time zone, for the deadlines in emails."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from flask import Flask

from service.addresses import time_zone
from service.homes import set_time_zone
from service.unit_of_work import transaction


def test_the_move_page_reports_the_browser_time_zone(
    pg_app: Flask, new_game: Callable[..., dict[str, Any]], phone: Any
) -> None:
    game = new_game(seed=5, days_per_move=3)
    page = phone(timezone_id="Europe/Paris").new_page()
    with page.expect_response(lambda response: response.url.endswith("/time-zone")) as told:
        page.goto(game["keeper"])
    assert told.value.status == 204
    deadline = time.monotonic() + 5
    with pg_app.app_context():
        while time_zone("kim@example.com") is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert time_zone("kim@example.com") == "Europe/Paris"
        assert time_zone("sam@example.com") is None


def test_a_deadline_in_the_chosen_zone_stays_in_it_whatever_the_browser(
    pg_app: Flask, new_game: Callable[..., dict[str, Any]], phone: Any
) -> None:
    """Given in UTC, the script shows a time in the browser's zone; given in the zone the
    address chose, it is left as it is, named, as the emails and home page give it."""
    game = new_game(seed=5, days_per_move=3)
    page = phone(timezone_id="America/New_York").new_page()
    page.goto(game["shadow"])
    shown = page.locator("p.deadline time")
    assert shown.get_attribute("title").endswith(" UTC")  # rewritten, the UTC text kept
    assert "UTC" not in shown.inner_text()
    assert shown.inner_text().endswith(" America/New_York")  # named, as the emails name it
    with pg_app.app_context(), transaction():
        set_time_zone("sam@example.com", "Asia/Tokyo")
    page.goto(game["shadow"])
    assert shown.inner_text().endswith(" Asia/Tokyo")
    assert shown.get_attribute("title") is None


def test_a_french_deadline_on_the_first_of_a_month_reads_1er_in_the_browsers_zone(
    new_game: Callable[..., dict[str, Any]], phone: Any
) -> None:
    """The script writes the deadline again in the browser's zone as the service writes it:
    in French, the first day of a month as "1er", whichever day it is in UTC."""
    game = new_game(seed=5, days_per_move=3)
    browser = phone(locale="fr-FR", timezone_id="Europe/Paris")
    # 23:30 UTC on 31 March is 1 April in Paris; 09:30 UTC on 2 April is the 2nd there.
    for moment, day in (
        ("2026-03-31T23:30:00+00:00", "1er avr."),
        ("2026-04-02T09:30:00+00:00", "2 avr."),
    ):
        shown = deadline_written(browser, game["shadow"], moment)
        assert shown.startswith(f"{day} 2026"), shown
        assert shown.endswith(" Europe/Paris")


def test_a_deadline_the_clocks_read_twice_names_its_offset_in_the_browsers_zone(
    new_game: Callable[..., dict[str, Any]], phone: Any
) -> None:
    """1:30 comes twice in New York on 1 November 2026 (05:30 and 06:30 UTC): the script
    writes each deadline with its offset, as the service does in a zone the address chose;
    a time read once that night is named by its zone alone."""
    game = new_game(seed=5, days_per_move=3)
    browser = phone(timezone_id="America/New_York")
    for moment, said in (
        ("2026-11-01T05:30:00+00:00", "1:30 AM America/New_York (GMT-04:00)"),
        ("2026-11-01T06:30:00+00:00", "1:30 AM America/New_York (GMT-05:00)"),
        ("2026-11-01T07:30:00+00:00", "2:30 AM America/New_York"),
    ):
        shown = deadline_written(browser, game["shadow"], moment).replace("\u202f", " ")
        assert shown.endswith(said), shown


def deadline_written(browser: Any, link: str, moment: str) -> str:
    """The deadline of the page at ``link`` as the script writes it in ``browser``'s zone,
    the page served with its deadline at ``moment`` (ISO) and its zone left as UTC."""

    def due_on(route: Any) -> None:
        served = route.fetch()
        body = served.text().replace('datetime="', f'datetime="{moment}" data-was="', 1)
        route.fulfill(response=served, body=body)

    page = browser.new_page()
    page.route("**/time-zone", lambda route: route.abort())  # the page gives it in UTC
    page.route(link, due_on)
    page.goto(link)
    return str(page.locator("p.deadline time").inner_text())
