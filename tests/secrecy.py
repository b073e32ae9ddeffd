"""Finding hidden cards in what a player receives."""

from __future__ import annotations

import re

from service.rules import State, card_label, other
from service.templating import card_text


def hidden_cards(state: State, seat: str) -> set[str]:
    """The cards ``seat`` may not know where they are: the opponent's hand and choice, the aside.

    Cards the seat itself gave the opponent in an exchange or swap are known to it.
    Cards named in the record of earlier rounds (tricks played, cards passed) are
    public history, though they were dealt again since: they are left out here,
    and the interference test covers them.
    """
    opponent = other(seat)
    now = state["round"]
    given = {card for t in state["transfers"] for card in t[seat]}
    earlier = {e["card"] for t in state["history"] if t["round"] < now for e in t["cards"]}
    earlier |= {
        c for t in state["transfers"] if t["round"] < now for c in t["keeper"] + t["shadow"]
    }
    secret = (
        set(state["hands"][opponent]) | set(state["pending"][opponent] or ()) | set(state["aside"])
    )
    return secret - given - earlier


def forms_of(card: str) -> list[str]:
    """Every way a page, JSON or email may write a card."""
    return [
        card,
        card_label(card),
        card_label(card, "classic"),
        card_text(card),
        card_text(card, "classic"),
    ]


def leaks(text: str, cards: set[str], tokens: tuple[str, ...] = ()) -> list[str]:
    """The hidden cards that ``text`` mentions (links are removed first: they are random text)."""
    for token in tokens:
        text = text.replace(token, "")
    found = []
    for card in sorted(cards):
        for form in forms_of(card):
            if re.search(rf"(?<![0-9A-Za-z]){re.escape(form)}(?![0-9A-Za-z½+])", text):
                found.append(f"{card} as {form!r}")
    return found
