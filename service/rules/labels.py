"""Display names for the two looks of the same cards.

``standard`` is an ordinary deck (♥ ♦ ♣, ♠ elixirs, Keeper and Shadow);
``classic`` is the original game's colours (red, green and purple cards,
potions 2+ to 5+, Jekyll and Hyde). The engine names things; pages pick the look.
"""

from __future__ import annotations

from typing import Any

from .cards import is_elixir, suit_of
from .engine import describe_effect

LOOKS: dict[str, dict[str, Any]] = {
    "standard": {
        "seats": {"keeper": "Keeper", "shadow": "Shadow"},
        "suits": {"H": "hearts", "D": "diamonds", "C": "clubs"},
        "symbols": {"H": "♥", "D": "♦", "C": "♣", "S": "♠"},
        "elixir": "elixir",
    },
    "classic": {
        "seats": {"keeper": "Jekyll", "shadow": "Hyde"},
        "suits": {"H": "red", "D": "green", "C": "purple"},
        "symbols": {"H": "red", "D": "green", "C": "purple", "S": "potion"},
        "elixir": "potion",
    },
}


def card_label(card: str, look_name: str = "standard") -> str:
    """A card as a player reads it.

    ``4♥`` or ``♠4`` in the standard look, ``red 4`` or ``potion 4+`` in the classic one.
    """
    rank, suit = card[0], suit_of(card)
    if look_name == "classic":
        return f"potion {rank}+" if is_elixir(card) else f"{LOOKS['classic']['suits'][suit]} {rank}"
    symbol = LOOKS["standard"]["symbols"][suit]
    return f"{symbol}{rank}" if is_elixir(card) else f"{rank}{symbol}"


def seat_label(seat: str, look_name: str = "standard") -> str:
    """The seat's name in a look: Keeper/Shadow or Jekyll/Hyde."""
    return LOOKS[look_name]["seats"][seat]


def suit_label(suit: str, look_name: str = "standard") -> str:
    """The suit's name in a look: ``hearts`` or ``red``."""
    return LOOKS[look_name]["suits"][suit]


def effect_label(entry: dict[str, Any], look_name: str = "standard") -> str:
    """What a trick's elixir did, with the look's seat names."""
    return describe_effect(entry, LOOKS[look_name]["seats"])
