"""Computer players: legal moves of every kind, the same move for the same view and seed, and
nothing but the view behind it."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from service.bots import LEVELS, choose, player
from service.rules import (
    PLAY,
    SEATS,
    RuleError,
    State,
    Variant,
    apply,
    choices,
    legal_actions,
    new_game,
    seat_view,
    to_act,
)
from tests.rules.helpers import deal, late_in_round, play, playing

from .helpers import LEVEL_NAMES, WHOLE_GAMES, bot, decision, positions, redeal

POSITIONS = positions(24, every=6)


def assert_legal(state: State, seat: str, action: dict[str, Any]) -> None:
    """The action is one the engine lists for the seat, and the engine applies it."""
    if state["phase"] == PLAY:
        assert action in legal_actions(state, seat)
    else:
        (kind,) = action
        assert kind == state["phase"]
        assert sorted(action[kind]) in [sorted(combo) for combo in choices(state, seat)]
    apply(state, seat, action)


def test_the_levels_are_those_of_the_table() -> None:
    assert tuple(LEVELS) == LEVEL_NAMES == ("random", "easy", "medium", "hard")


def test_an_unknown_level_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="no level 'expert'; the levels are random, easy"):
        player("expert")


@pytest.mark.parametrize("level", LEVEL_NAMES)
def test_every_move_of_whole_games_is_legal(level: str) -> None:
    kinds = set()
    for seed in range(WHOLE_GAMES[level]):
        players = {seat: bot(level) for seat in SEATS}
        rngs = {seat: random.Random(f"{seed}:{seat}") for seat in SEATS}
        state = new_game(seed=seed)
        order = random.Random(seed)
        while state["phase"] != "over":
            seat = order.choice(to_act(state))
            action = players[seat].choose(seat_view(state, seat), rngs[seat])
            kinds.add(decision(state, seat))
            assert_legal(state, seat, action)
            state = apply(state, seat, action)
        assert state["winner"] in SEATS
    assert kinds >= {"exchange", "lead", "follow"}


@pytest.mark.parametrize("level", LEVEL_NAMES)
def test_every_move_is_legal_in_a_variant(level: str) -> None:
    variant = Variant(exchange_sizes=(2, 0), rounds=2, swap_size=3, track_length=6, halfway=3)
    rng = random.Random(level)
    for seed in range(WHOLE_GAMES[level] // 3 + 1):
        state = new_game(seed=seed, variant=variant)
        while state["phase"] != "over":
            seat = to_act(state)[0]
            action = bot(level).choose(seat_view(state, seat), rng)
            assert_legal(state, seat, action)
            state = apply(state, seat, action)


@pytest.mark.parametrize("level", LEVEL_NAMES)
def test_the_same_view_and_seed_give_the_same_move(level: str) -> None:
    moves = []
    for state, _, seat in POSITIONS[::4]:
        view = seat_view(state, seat)
        first = bot(level).choose(view, random.Random(7))
        again = bot(level).choose(json.loads(json.dumps(view)), random.Random(7))
        assert first == again
        moves.append(first)
    assert len({json.dumps(move, sort_keys=True) for move in moves}) > 1


def test_the_random_level_depends_on_the_seed() -> None:
    view = seat_view(POSITIONS[0][0], POSITIONS[0][2])
    moves = {json.dumps(choose("random", view, random.Random(seed))) for seed in range(20)}
    assert len(moves) > 1


@pytest.mark.parametrize("level", LEVEL_NAMES)
def test_a_player_does_not_change_the_view(level: str) -> None:
    state, _, seat = POSITIONS[5]
    view = seat_view(state, seat)
    before = json.dumps(view, sort_keys=True)
    bot(level).choose(view, random.Random(1))
    assert json.dumps(view, sort_keys=True) == before


@pytest.mark.parametrize("level", LEVEL_NAMES)
def test_the_unseen_cards_do_not_change_the_move(level: str) -> None:
    """Dealing the cards the seat has not seen differently, consistently with its view,
    never changes its move for a given seed."""
    rng = random.Random(level)
    moved = 0
    for state, actions, seat in POSITIONS[::2]:
        view = seat_view(state, seat)
        move = bot(level).choose(view, random.Random(3))
        for _ in range(3):
            other_deal = redeal(state, actions, seat, rng)
            if other_deal is None:
                continue
            assert seat_view(other_deal, seat) == view
            opponent = "shadow" if seat == "keeper" else "keeper"
            moved += other_deal["hands"][opponent] != state["hands"][opponent]
            assert bot(level).choose(seat_view(other_deal, seat), random.Random(3)) == move
    assert moved >= len(POSITIONS[::2])


def test_redealing_keeps_what_the_seat_saw() -> None:
    """The re-deal moves only unseen cards, and refuses a deal the opponent's moves rule out."""
    dealt = deal("5S 1D 2D 3D 4D 5D 6D 7D 1H 2H", "1C 2C 3C 4C 5C 6C 7C 3H 4H 5H")
    actions = [
        {"seat": "keeper", "exchange": ["1H"]},
        {"seat": "shadow", "exchange": ["7C"]},
        {"seat": "keeper", "play": "5S", "name": "D"},
        {"seat": "shadow", "play": "1C"},
    ]
    state = new_game(deals=[dealt])
    for action in actions:
        state = apply(state, action["seat"], {k: v for k, v in action.items() if k != "seat"})
    rng = random.Random(2)
    outcomes = [redeal(state, actions, "keeper", rng) for _ in range(40)]
    consistent = [again for again in outcomes if again is not None]
    assert consistent and len(consistent) < len(outcomes)
    for again in consistent:
        dealt_again = again["deals"][0]["shadow"]
        assert {"7C", "1C"} <= set(dealt_again)
        assert sum(card[1] == "S" for card in dealt_again) <= 1, "gave no elixir: dealt one at most"
        assert "1H" in again["hands"]["shadow"]
        assert seat_view(again, "keeper") == seat_view(state, "keeper")
    assert len({tuple(again["hands"]["shadow"]) for again in consistent}) > 1


# --- each kind of decision ------------------------------------------------------------------


def exchange_with_two_elixirs() -> State:
    return new_game(deals=[deal("4S 5S 1D 2D 3D 4D 5D 6D 7D 1H", "1C 2C 3C 4C 5C 6C 7C 2H 3H 4H")])


def leading_with_elixirs_only() -> State:
    start = playing("1D 2D 3D 4D 5D 6D 7D 1H 2H 3H", "1C 2C 3C 4C 5C 6C 7C 4H 5H 6H")
    return late_in_round(start, "4S 5S", "6C 2H", tricks=(4, 4))


def swap_due() -> State:
    start = playing("3D 4D 5D 6D 7D 1H 2H 3H 4H 5H", "1D 2D 1C 2C 3C 4C 5C 6H 7H 4S")
    return play(start, ("keeper", "3D"), ("shadow", "4S"))


def round_three_exchange() -> State:
    return next(
        state
        for state, _, _ in POSITIONS
        if state["phase"] == "exchange" and state["round"] == 3 and "keeper" in to_act(state)
    )


DECISIONS = {
    "exchange, an elixir owed": (exchange_with_two_elixirs, "keeper"),
    "round 3 exchange": (round_three_exchange, "keeper"),
    "elixir lead": (leading_with_elixirs_only, "keeper"),
    "swap": (swap_due, "shadow"),
}


@pytest.mark.parametrize("level", LEVEL_NAMES)
@pytest.mark.parametrize("case", DECISIONS)
def test_each_kind_of_decision(level: str, case: str) -> None:
    build, seat = DECISIONS[case]
    state = build()
    action = bot(level).choose(seat_view(state, seat), random.Random(5))
    assert_legal(state, seat, action)
    if case == "exchange, an elixir owed":
        assert set(action["exchange"]) & {"4S", "5S"}
    if case == "round 3 exchange":
        assert len(action["exchange"]) == 3
    if case == "elixir lead":
        assert action["play"] in ("4S", "5S") and action["name"] in ("H", "D", "C")
    if case == "swap":
        assert len(action["swap"]) == 2


@pytest.mark.parametrize("level", LEVEL_NAMES)
def test_a_seat_that_owes_nothing_is_told_so(level: str) -> None:
    state = swap_due()
    state = apply(state, "shadow", {"swap": ["1C", "2C"]})
    with pytest.raises(ValueError, match="the shadow owes no move now"):
        bot(level).choose(seat_view(state, "shadow"), random.Random(1))
    with pytest.raises(RuleError):
        apply(state, "shadow", {"swap": ["3C", "4C"]})
