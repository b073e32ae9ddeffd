"""Helpers for tests that play games: pick legal moves, read the move page's form."""

from __future__ import annotations

import random
import re
from html.parser import HTMLParser
from typing import Any

from service.rules import is_elixir


def pick_action(view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A random legal action for the seat whose view this is (it must be the seat's turn)."""
    legal = view["legal"]
    if isinstance(legal, list):
        return dict(rng.choice(legal))
    hand = view["hand"]
    if legal["must_include_elixir"]:
        elixir = rng.choice([card for card in hand if is_elixir(card)])
        rest = [card for card in hand if card != elixir]
        return {view["phase"]: [elixir, *rng.sample(rest, legal["choose"] - 1)]}
    return {view["phase"]: rng.sample(hand, legal["choose"])}


class MoveForm(HTMLParser):
    """What the move page offers: its hidden fields, the play buttons, the card checkboxes."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.hidden: dict[str, str] = {}
        self.plays: list[str] = []
        self.disabled: list[str] = []
        self.checkboxes: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if tag == "input" and attr.get("type") == "hidden" and attr.get("name"):
            self.hidden[attr["name"] or ""] = attr.get("value") or ""
        elif tag == "input" and attr.get("type") == "checkbox" and attr.get("name") == "cards":
            self.checkboxes.append(attr.get("value") or "")
        elif tag == "button" and attr.get("name") == "play":
            self.plays.append(attr.get("value") or "")
        elif tag == "button" and "disabled" in attr:
            self.disabled.append(attr.get("aria-label") or "")


def form_data(form: MoveForm, action: dict[str, Any]) -> dict[str, Any]:
    """The POST body the page would send for ``action``, checking the page offers it."""
    data: dict[str, Any] = dict(form.hidden)
    if "play" in action:
        value = action["play"] + (f":{action['name']}" if "name" in action else "")
        assert value in form.plays, f"the page does not offer {value}: {form.plays}"
        data["play"] = value
    else:
        kind = next(iter(action))
        assert data.get("kind") == kind
        assert set(action[kind]) <= set(form.checkboxes)
        data["cards"] = action[kind]
    return data


def error_text(html: str) -> str:
    """The page's error message, or empty."""
    found = re.search(r'<p class="error" role="alert">(.*?)</p>', html, re.S)
    return found.group(1).strip() if found else ""
