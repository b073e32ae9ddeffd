"""The 25 playing cards of Split Mind and their notation.

A card is written rank then suit letter: ``1H``…``7H``, ``1D``…``7D``,
``1C``…``7C`` for the colour cards and ``2S``…``5S`` for the elixirs.
"""

from __future__ import annotations

SUITS: tuple[str, ...] = ("H", "D", "C")
ELIXIR = "S"

COLOUR_CARDS: tuple[str, ...] = tuple(f"{rank}{suit}" for suit in SUITS for rank in range(1, 8))
ELIXIRS: tuple[str, ...] = tuple(f"{rank}{ELIXIR}" for rank in range(2, 6))
DECK: tuple[str, ...] = COLOUR_CARDS + ELIXIRS
DECK_SET: frozenset[str] = frozenset(DECK)

HAND_SIZE = 10
ASIDE_SIZE = 5

# The suits in the engine's own English messages; players read service.game_text's names.
SUIT_WORDS = {"H": "heart", "D": "diamond", "C": "club"}

# Elixirs are worth their number and a half; doubling keeps the values whole.
_STRENGTH = {card: int(card[0]) * 2 + (card[1] == ELIXIR) for card in DECK}
# Display order: hearts, diamonds, clubs, then elixirs, each by rank.
_DISPLAY_ORDER = {card: index for index, card in enumerate(DECK)}


def is_card(value: object) -> bool:
    """Whether ``value`` is one of the 25 playing cards in canonical notation."""
    return isinstance(value, str) and value in DECK_SET


def is_elixir(card: str) -> bool:
    """Whether ``card`` is an elixir (a small spade)."""
    return card[1] == ELIXIR


def suit_of(card: str) -> str:
    """The suit letter of a card; ``S`` for an elixir."""
    return card[1]


def strength(card: str) -> int:
    """Twice the card's value: an elixir's half point makes ``4S`` beat ``4H`` but not ``5H``."""
    return _STRENGTH[card]


def sort_cards(cards: list[str] | tuple[str, ...]) -> list[str]:
    """Cards in display order: hearts, diamonds, clubs, elixirs, each rising."""
    return sorted(cards, key=_DISPLAY_ORDER.__getitem__)


def plural(suit: str) -> str:
    """The plural word for a suit letter: ``D`` gives ``diamonds``."""
    return SUIT_WORDS[suit] + "s"
