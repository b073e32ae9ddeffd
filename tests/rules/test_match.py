"""Return-match scoring."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from service.rules import State, new_game, return_match, shadow_score

from .helpers import finish_round


def shadow_won_in(rounds: int) -> State:
    state = new_game(seed=rounds)
    for _ in range(rounds - 1):
        state = finish_round(state, 5, 5, track=0)
    state = finish_round(state, 10, 0, track=0)
    assert (state["winner"], len(state["rounds"]), state["track"]) == ("shadow", rounds, 10)
    return state


def keeper_won_at(track: int) -> State:
    state = new_game(seed=track)
    for _ in range(3):
        state = finish_round(state, 5, 5, track=track)
    assert (state["winner"], state["track"]) == ("keeper", track)
    return state


def test_shadow_score() -> None:
    assert shadow_score(shadow_won_in(2)) == 10
    assert shadow_score(keeper_won_at(7)) == 7
    assert shadow_score(finish_round(new_game(seed=1), 7, 3, track=2)) == 6
    assert shadow_score(new_game(seed=1)) == 0


def test_higher_score_wins() -> None:
    # The first player is the Keeper of game one and the Shadow of game two.
    result = return_match(keeper_won_at(3), keeper_won_at(6))
    assert result == {
        "scores": {"first": 6, "second": 3},
        "rounds": {"first": 3, "second": 3},
        "over": True,
        "winner": "first",
    }
    assert return_match(shadow_won_in(3), keeper_won_at(9))["winner"] == "second"


def test_both_at_10_fewer_rounds_wins() -> None:
    result = return_match(shadow_won_in(1), shadow_won_in(2))
    assert result["scores"] == {"first": 10, "second": 10}
    assert result["rounds"] == {"first": 2, "second": 1}
    assert result["winner"] == "second"
    assert return_match(shadow_won_in(3), shadow_won_in(2))["winner"] == "first"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (lambda: shadow_won_in(2), lambda: shadow_won_in(2)),
        (lambda: keeper_won_at(4), lambda: keeper_won_at(4)),
    ],
    ids=["both 10 in as many rounds", "equal scores below 10"],
)
def test_draw(first: Callable[[], State], second: Callable[[], State]) -> None:
    result = return_match(first(), second())
    assert result["over"] is True
    assert result["winner"] is None


def test_incomplete_match() -> None:
    result = return_match(keeper_won_at(3))
    assert (result["over"], result["winner"]) == (False, None)
    assert result["scores"] == {"first": 0, "second": 3}
    running = finish_round(new_game(seed=4), 8, 2, track=0)
    result = return_match(keeper_won_at(3), running)
    assert (result["over"], result["winner"]) == (False, None)
    assert result["scores"] == {"first": 6, "second": 3}
    assert return_match(running, shadow_won_in(1))["winner"] is None
