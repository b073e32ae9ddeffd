"""The search's compact round agrees with the engine on every play, trick, suit order and swap."""

from __future__ import annotations

import random

import pytest

from service.bots.knowledge import read
from service.bots.round_model import (
    CARD_INDEX,
    NO_CARD,
    SUIT_LETTERS,
    Round,
    card_numbers,
    card_texts,
    seat_number,
)
from service.rules import (
    PLAY,
    SEATS,
    SWAP,
    State,
    Variant,
    apply,
    legal_actions,
    new_game,
    other,
    seat_view,
    to_act,
)
from tests.rules.helpers import random_action


def model_of(state: State) -> Round:
    """The engine state's current round as the search sees it, with both hands known."""
    seat = to_act(state)[0]
    known = read(seat_view(state, seat))
    opponent = other(seat)
    return known.round_with(card_numbers(state["hands"][opponent]))


def assert_same(model: Round, state: State) -> None:
    hands = [sorted(card_texts(model.hands[number])) for number in range(2)]
    assert hands == [sorted(state["hands"][seat]) for seat in SEATS]
    order = sorted((spot, SUIT_LETTERS[suit]) for suit, spot in enumerate(model.place) if spot >= 0)
    assert [suit for _, suit in order] == state["suit_order"]
    assert model.tricks == [state["tricks"][seat] for seat in SEATS]
    assert model.leader == seat_number(state["leader"])
    assert model.trick == state["trick"]
    table = state["table"]
    assert model.lead == (CARD_INDEX[table[0]["card"]] if table else NO_CARD)
    assert (model.swap_due > 0) == (state["phase"] == SWAP)


@pytest.mark.parametrize("variant", [Variant(), Variant(swap_size=3)], ids=["printed", "swap 3"])
@pytest.mark.parametrize("seed", range(12))
def test_random_rounds_play_the_same(seed: int, variant: Variant) -> None:
    rng = random.Random(seed)
    state = new_game(seed=seed, variant=variant)
    model: Round | None = None
    rounds_played = 0
    while state["phase"] != "over" and rounds_played < 2:
        seat = to_act(state)[0]
        if state["phase"] == PLAY:
            model = model if model is not None else model_of(state)
            assert_same(model, state)
            playable = model.playable(seat_number(seat))
            assert sorted(card_texts(playable)) == sorted(
                {action["play"] for action in legal_actions(state, seat)}
            )
            action = random_action(state, seat, rng)
            name = SUIT_LETTERS.index(action["name"]) if "name" in action else -1
            number = CARD_INDEX[action["play"]]
            following = model.lead != NO_CARD
            follower_wins = following and model.beats_lead(number)
            leader = model.leader
            model.play(number, name)
            state = apply(state, seat, action)
            if following:
                winner = 1 - leader if follower_wins else leader
                assert seat_number(state["history"][-1]["winner"]) == winner
            if model.over:
                assert state["phase"] == "over" or state["trick"] == 1
                rounds_played += 1
                model = None
            else:
                assert_same(model, state)
        else:
            first = random_action(state, seat, rng)
            state = apply(state, seat, first)
            second_seat = other(seat)
            second = random_action(state, second_seat, rng)
            state = apply(state, second_seat, second)
            if model is not None:
                gives = {seat: first[SWAP], second_seat: second[SWAP]}
                model.swap(*(card_numbers(gives[each]) for each in SEATS))
                assert_same(model, state)
    assert rounds_played == 2 or state["phase"] == "over"
