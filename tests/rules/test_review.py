"""The review of a game: every step replayed from the deals, every card accounted for."""

from __future__ import annotations

from collections import Counter

import pytest

from service.rules import DECK, PRINTED, SEATS, Variant, sort_cards
from service.rules.review import ReviewError, Step, review

from .helpers import random_game


def places(step: Step, played: list[str]) -> Counter[str]:
    """Every card the step shows: both hands, the cards set aside, the round's tricks so far."""
    counted: Counter[str] = Counter(step["aside"])
    for seat in SEATS:
        counted.update(step["hands"][seat])
    counted.update(played)
    return counted


@pytest.mark.parametrize("seed", range(12))
def test_every_step_accounts_for_each_card_once(seed: int) -> None:
    state, actions = random_game(seed)
    steps = review(state, actions)
    played: list[str] = []
    for step in steps:
        if step["kind"] == "deal":
            played = []
        if step["trick"] is not None:
            played += [entry["card"] for entry in step["trick"]["cards"]]
        assert places(step, played) == Counter(DECK), step


@pytest.mark.parametrize("seed", range(6))
def test_the_steps_follow_the_game(seed: int) -> None:
    state, actions = random_game(seed)
    steps = review(state, actions)
    kinds = Counter(step["kind"] for step in steps)
    swaps = sum(1 for transfer in state["transfers"] if transfer["kind"] == "swap")
    assert kinds == {
        "deal": len(state["deals"]),
        "exchange": len(state["transfers"]) - swaps,
        "swap": swaps,
        "trick": len(state["history"]),
    }
    assert [step["trick"] for step in steps if step["trick"]] == state["history"]
    deals = [step for step in steps if step["kind"] == "deal"]
    for number, (step, dealt) in enumerate(zip(deals, state["deals"], strict=True), start=1):
        assert step["round"] == number
        assert step["hands"] == {seat: sort_cards(dealt[seat]) for seat in SEATS}
        assert step["aside"] == dealt["aside"]
    ends = [step for step in steps if step["result"] is not None]
    assert [step["result"] for step in ends] == state["rounds"]
    for step, result in zip(ends, state["rounds"], strict=True):
        assert step["tricks"] == {seat: result[seat] for seat in SEATS}
        assert step["hands"] == {"keeper": [], "shadow": []}
    assert steps[-1]["track"] == state["track"]


def test_a_transfer_step_shows_the_cards_in_their_new_hands() -> None:
    state, actions = random_game(3)
    steps = review(state, actions)
    for before, step in zip(steps, steps[1:], strict=False):
        if step["gave"] is None:
            continue
        for seat, opponent in (("keeper", "shadow"), ("shadow", "keeper")):
            assert set(step["gave"][seat]) <= set(before["hands"][seat])
            assert set(step["gave"][seat]) <= set(step["hands"][opponent])
            assert not set(step["gave"][seat]) & set(step["hands"][seat])


@pytest.mark.parametrize("moves", [25, 26, 40])
def test_a_game_cut_short_reviews_up_to_where_it_stopped(moves: int) -> None:
    state, actions = random_game(4, stop_after=moves)
    steps = review(state, actions)
    assert [step["trick"] for step in steps if step["trick"]] == state["history"]
    # A lead on the table or a choice not yet matched is no step: the hand still holds it.
    for seat in SEATS:
        on_table = [entry["card"] for entry in state["table"] if entry["seat"] == seat]
        chosen = state["pending"][seat] or []
        assert sorted(steps[-1]["hands"][seat]) == sorted(state["hands"][seat] + on_table + chosen)


def test_a_variant_reviews_by_its_own_rules() -> None:
    variant = Variant(exchange_sizes=(1, 2, 1))
    assert variant != PRINTED
    state, actions = random_game(8, variant=variant)
    steps = review(state, actions)
    exchanges = [step for step in steps if step["kind"] == "exchange"]
    assert [len(step["gave"]["keeper"]) for step in exchanges if step["gave"]] == [1, 2, 1][
        : len(exchanges)
    ]


def test_moves_that_are_not_the_games_are_refused() -> None:
    state, actions = random_game(5)
    with pytest.raises(ReviewError, match="do not replay"):
        review(state, actions[:-1])
    with pytest.raises(ReviewError, match="move 0"):
        review(state, [{"seat": "keeper", "play": "1S"}, *actions])
    with pytest.raises(ReviewError, match="names no seat"):
        review(state, [{"play": "1S"}])
