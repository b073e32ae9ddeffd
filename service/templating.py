"""Template filters that show cards and seats in a game's look."""

from __future__ import annotations

from flask import Flask

from .rules import is_elixir
from .rules.cards import suit_of
from .rules.labels import card_label, effect_label, seat_label, suit_label

RANK_WORDS = {"1": "ace"}


def card_text(card: str, look: str = "standard") -> str:
    """A card in words, for screen readers: ``7 of hearts``, ``elixir 4½``."""
    rank = card[0]
    if is_elixir(card):
        noun = "potion" if look == "classic" else "elixir"
        return f"{noun} {rank}½"
    word = RANK_WORDS.get(rank, rank)
    suit = suit_label(suit_of(card), look)
    return f"{suit} {word}" if look == "classic" else f"{word} of {suit}"


def init_app(app: Flask) -> None:
    """Register the filters."""
    app.add_template_filter(card_label, "card")
    app.add_template_filter(card_text, "card_text")
    app.add_template_filter(seat_label, "seat")
    app.add_template_filter(suit_label, "suit")
    app.add_template_filter(effect_label, "effect")
    app.add_template_filter(suit_of, "suit_of")
    app.add_template_filter(is_elixir, "is_elixir")
    app.add_template_test(is_elixir, "elixir")
