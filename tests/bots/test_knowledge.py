"""What a seat knows about unseen cards: always true of the real game, and sharp where it can be."""

from __future__ import annotations

import random
from itertools import product

from service.bots.knowledge import Knowledge, read
from service.bots.round_model import ELIXIR_SUIT, SUIT, card_numbers, card_texts
from service.rules import SEATS, Seat, State, Variant, apply, new_game, other, seat_view
from tests.rules.helpers import deal, play, playing

from .helpers import positions

POSITIONS = positions(30, every=4)


def opponent_cards(state: State, seat: Seat) -> set[int]:
    """What the opponent really holds: hand and pending choice."""
    opponent = other(seat)
    return set(card_numbers(state["hands"][opponent] + (state["pending"][opponent] or [])))


def from_elsewhere(state: State, seat: Seat) -> set[int]:
    """The opponent's cards that came from ``seat`` this round."""
    number = state["round"]
    given = {c for entry in state["transfers"] if entry["round"] == number for c in entry[seat]}
    return set(card_numbers(sorted(given)))


def test_the_positions_cover_every_decision() -> None:
    phases = {(state["phase"], state["round"], bool(state["table"])) for state, _, _ in POSITIONS}
    assert {("exchange", number, False) for number in (1, 2, 3)} <= phases
    assert {("play", 1, False), ("play", 1, True), ("swap", 1, False)} <= phases


def test_knowledge_is_true_of_the_real_game() -> None:
    for (state, _, _), seat in product(POSITIONS, SEATS):
        known = read(seat_view(state, seat))
        held = opponent_cards(state, seat)
        aside = set(card_numbers(state["aside"]))
        assert set(known.unseen) == held | aside
        assert set(known.opponent_known) <= held
        assert known.opponent_holds == len(held)
        own = held - from_elsewhere(state, seat)
        assert not {SUIT[card] for card in own} & known.opponent_voids
        if known.opponent_elixirs is not None:
            assert sum(SUIT[card] == ELIXIR_SUIT for card in own) <= known.opponent_elixirs


def test_samples_respect_the_knowledge() -> None:
    for (state, _, seat), draw in product(POSITIONS, range(3)):
        known = read(seat_view(state, seat))
        cards = known.sample(random.Random(draw))
        assert len(cards) == len(set(cards)) == known.opponent_holds
        assert set(cards) <= set(known.unseen)
        assert set(known.opponent_known) <= set(cards)
        drawn = set(cards) - set(known.opponent_known)
        assert not {SUIT[card] for card in drawn} & known.opponent_voids
        if known.opponent_elixirs is not None:
            assert sum(SUIT[card] == ELIXIR_SUIT for card in drawn) <= known.opponent_elixirs
        assert cards == known.sample(random.Random(draw))


def knows(state: State, seat: Seat) -> Knowledge:
    return read(seat_view(state, seat))


def test_a_suit_not_followed_is_a_void_and_so_are_elixirs() -> None:
    state = playing("1D 2D 3D 4D 5D 6D 7D 1H 2H 3H", "1C 2C 3C 4C 5C 6C 7C 4H 5H 6H")
    state = play(state, ("keeper", "1D"), ("shadow", "1C"))
    assert knows(state, "keeper").opponent_voids == {1, ELIXIR_SUIT}
    assert knows(state, "shadow").opponent_voids == set()


def test_a_named_suit_not_followed_is_a_void() -> None:
    state = playing("5S 2D 3D 4D 5D 6D 7D 1H 2H 3H", "1C 2C 3C 4C 5C 6C 7C 4H 5H 4S")
    state = play(state, ("keeper", "5S", "D"), ("shadow", "4S"))
    assert knows(state, "keeper").opponent_voids == {1}


def test_an_elixir_answering_a_colour_shows_nothing() -> None:
    state = playing("5S 2D 3D 4D 5D 6D 7D 1H 2H 3H", "1C 2C 3C 4C 5C 6C 7C 4H 5H 4S")
    state = play(state, ("keeper", "2D"), ("shadow", "4S"))
    assert knows(state, "keeper").opponent_voids == set()


def test_an_exchange_without_an_elixir_limits_the_elixirs() -> None:
    dealt = deal("1D 2D 3D 4D 5D 6D 7D 1H 2H 3H", "1C 2C 3C 4C 5C 6C 7C 4H 5H 2S")
    state = new_game(deals=[dealt])
    state = apply(state, "keeper", {"exchange": ["1D"]})
    state = apply(state, "shadow", {"exchange": ["1C"]})
    assert knows(state, "keeper").opponent_elixirs == 1
    assert knows(state, "shadow").opponent_elixirs == 1
    state = play(state, ("keeper", "2D"), ("shadow", "2S"))
    assert knows(state, "keeper").opponent_elixirs == 0


def test_an_exchange_with_an_elixir_limits_nothing() -> None:
    dealt = deal("1D 2D 3D 4D 5D 6D 7D 1H 2H 3S", "1C 2C 3C 4C 5C 6C 7C 4H 5H 2S")
    state = new_game(deals=[dealt])
    state = apply(state, "keeper", {"exchange": ["3S"]})
    state = apply(state, "shadow", {"exchange": ["1C"]})
    assert knows(state, "shadow").opponent_elixirs is None
    assert knows(state, "keeper").opponent_elixirs == 1


def test_cards_given_are_known_until_seen_again() -> None:
    dealt = deal("1D 2D 3D 4D 5D 6D 7D 1H 2H 3H", "1C 2C 3C 4C 5C 6C 7C 4H 5H 2S")
    state = new_game(deals=[dealt])
    state = apply(state, "keeper", {"exchange": ["7D"]})
    state = apply(state, "shadow", {"exchange": ["1C"]})
    assert card_texts(list(knows(state, "keeper").opponent_known)) == ["7D"]
    state = play(state, ("keeper", "1D"), ("shadow", "7D"))
    assert knows(state, "keeper").opponent_known == ()


def test_the_swap_size_is_the_variants_before_any_swap() -> None:
    """The imagined rounds swap as many cards as the game's rule says, not the printed two."""
    for size in (1, 2, 5):
        hands = ("1D 2D 3D 4D 5D 6D 7D 1H 2H 3H", "1C 2C 3C 4C 5C 6C 7C 4H 5H 6H")
        state = playing(*hands, variant=Variant(swap_size=size))
        assert all(entry["kind"] != "swap" for entry in state["transfers"])
        for seat in SEATS:
            known = knows(state, seat)
            assert known.swap_size == size
            assert known.round_with(known.sample(random.Random(0))).swap_size == size
