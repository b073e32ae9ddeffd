"""Random legal moves, the same for the benchmarks and the tests that play whole games.

Each function draws from the ``rng`` it is given in a fixed order, so a seed
replays the same moves wherever it is used.
"""

from __future__ import annotations

import random
from typing import Any

from service.rules import is_elixir


def random_cards(rng: random.Random, hand: list[str], choose: int, needs_elixir: bool) -> list[str]:
    """A random legal set of ``choose`` cards to give from ``hand``."""
    if needs_elixir:
        elixir = rng.choice([card for card in hand if is_elixir(card)])
        rest = [card for card in hand if card != elixir]
        return [elixir, *rng.sample(rest, choose - 1)]
    return rng.sample(hand, choose)


def pick_action(view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A random legal action for the seat whose view this is (it must be the seat's turn)."""
    legal = view["legal"]
    if isinstance(legal, list):
        return dict(rng.choice(legal))
    cards = random_cards(rng, view["hand"], legal["choose"], legal["must_include_elixir"])
    return {view["phase"]: cards}
