"""Return-match scoring and the display labels of both looks."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from service.rules import (
    State,
    card_label,
    effect_label,
    new_game,
    return_match,
    seat_label,
    shadow_score,
    suit_label,
)

from .helpers import finish_round, play, playing


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


@pytest.mark.parametrize(
    ("card", "standard", "classic"),
    [
        ("4H", "4♥", "red 4"),
        ("7D", "7♦", "green 7"),
        ("1C", "1♣", "purple 1"),
        ("4S", "♠4", "potion 4+"),
        ("2S", "♠2", "potion 2+"),
    ],
)
def test_card_labels(card: str, standard: str, classic: str) -> None:
    assert card_label(card) == standard
    assert card_label(card, "standard") == standard
    assert card_label(card, "classic") == classic


def test_seat_and_suit_labels() -> None:
    assert [seat_label("keeper"), seat_label("shadow")] == ["Keeper", "Shadow"]
    assert [seat_label("keeper", "classic"), seat_label("shadow", "classic")] == ["Jekyll", "Hyde"]
    assert [suit_label(suit) for suit in "HDC"] == ["hearts", "diamonds", "clubs"]
    assert [suit_label(suit, "classic") for suit in "HDC"] == ["red", "green", "purple"]


ELIXIR_AND_CLUBS = ("4S 1D 2D 3D 4D 5D 6D 7D 1H 2H", "5S 1C 2C 3C 4C 5C 3H 4H 5H 6H")


@pytest.mark.parametrize(
    ("moves", "standard", "classic"),
    [
        (
            [("keeper", "1H"), ("shadow", "3H"), ("shadow", "2C"), ("keeper", "4S")],
            "Steal: Keeper took a trick from Shadow",
            "Steal: Jekyll took a trick from Hyde",
        ),
        (
            [("keeper", "4S", "C"), ("shadow", "5C")],
            "Steal: Keeper had no trick to take",
            "Steal: Jekyll had no trick to take",
        ),
        (
            [("keeper", "4S", "D"), ("shadow", "5S")],
            "Two elixirs: no effect",
            "Two elixirs: no effect",
        ),
        (
            [("keeper", "1H"), ("shadow", "3H")],
            "",
            "",
        ),
    ],
)
def test_effect_labels(moves: list[tuple[str, ...]], standard: str, classic: str) -> None:
    entry = play(playing(*ELIXIR_AND_CLUBS), *moves)["history"][-1]
    assert effect_label(entry) == standard
    assert effect_label(entry, "classic") == classic
