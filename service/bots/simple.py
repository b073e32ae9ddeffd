"""The two levels that need no search: ``random`` and ``easy`` (card sense)."""

from __future__ import annotations

import random
from itertools import combinations

from service.rules.cards import DECK
from service.rules.names import PLAY

from . import cardsense
from .knowledge import View, acting_phase, read
from .round_model import ELIXIR_SUIT, SUIT, SUIT_LETTERS, card_numbers, card_texts

Action = dict[str, object]


def play_action(card: int, name: int) -> Action:
    """A play in the engine's notation: ``{"play": "4S", "name": "H"}`` or ``{"play": "6H"}``."""
    return {"play": DECK[card], "name": SUIT_LETTERS[name]} if name >= 0 else {"play": DECK[card]}


def give_action(phase: str, cards: list[int]) -> Action:
    """An exchange or swap in the engine's notation: ``{"swap": ["1H", "2H"]}``."""
    return {phase: card_texts(cards)}


def gift_sets(view: View) -> list[tuple[int, ...]]:
    """Every set of cards the seat may give in the exchange or swap it owes, in a fixed order."""
    legal = view["legal"]
    assert isinstance(legal, dict), "an exchange or swap is owed"
    return [
        combo
        for combo in combinations(card_numbers(view["hand"]), legal["choose"])
        if not legal["must_include_elixir"] or any(SUIT[card] == ELIXIR_SUIT for card in combo)
    ]


class RandomPlayer:
    """Any legal move, each as likely as the others (an elixir lead naming each suit is three)."""

    def choose(self, view: View, rng: random.Random) -> Action:
        """A legal move picked at random."""
        phase = acting_phase(view)
        legal = view["legal"]
        if phase == PLAY:
            assert isinstance(legal, list), "a play is owed"
            return dict(rng.choice(legal))
        return give_action(phase, list(rng.choice(gift_sets(view))))


class CardSense:
    """Simple card sense (``easy``): follow low, take tricks when the role's goal wants them."""

    def choose(self, view: View, rng: random.Random) -> Action:
        """The card-sense move for the seat of ``view``; ``rng`` is not needed."""
        phase = acting_phase(view)
        known = read(view)
        model = known.round_with([])
        if phase == PLAY:
            return play_action(*cardsense.pick_play(model, known.seat))
        legal = view["legal"]
        assert isinstance(legal, dict), "an exchange or swap is owed"
        keep = cardsense.keep_strength(model, known.seat)
        gives = cardsense.pick_give(
            list(known.hand), legal["choose"], legal["must_include_elixir"], keep
        )
        return give_action(phase, gives)
