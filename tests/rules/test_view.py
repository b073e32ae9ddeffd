"""What one seat sees: its own cards and everything public, never the opponent's cards."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from service.rules import SEATS, Seat, State, apply, new_game, other, seat_view, track_advances

from . import helpers
from .helpers import deal, leaks, play, playing, random_game

VIEW_KEYS = {
    "seat",
    "round",
    "phase",
    "trick",
    "your_turn",
    "choosing",
    "to_act",
    "leader",
    "hand",
    "pending",
    "opponent_cards",
    "opponent_chosen",
    "table",
    "suit_order",
    "tricks",
    "track",
    "track_length",
    "tricks_per_round",
    "last_round",
    "swap_size",
    "rounds",
    "history",
    "transfers",
    "winner",
    "legal",
}
DEAL = deal("4S 1D 2D 3D 4D 5D 6D 7D 1H 2H", "5S 1C 2C 3C 4C 5C 3H 4H 5H 6H")
DIAMONDS_AND_ELIXIR = ("3D 4D 5D 6D 7D 1H 2H 3H 4H 5H", "1D 2D 1C 2C 3C 4C 5C 6H 7H 4S")


def half_exchange() -> State:
    return apply(new_game(deals=[DEAL]), "keeper", {"exchange": ["4S"]})


def in_play() -> State:
    return play(playing(*DIAMONDS_AND_ELIXIR), ("keeper", "3D"))


def half_swap() -> State:
    return apply(play(in_play(), ("shadow", "4S")), "shadow", {"swap": ["1C", "2C"]})


def round_two_started() -> State:
    state = random_game(8, stop_at_round=2)[0]
    assert (state["round"], state["phase"]) == (2, "exchange")
    return state


def round_two_in_play() -> State:
    round_one = len(random_game(8, stop_at_round=2)[1])
    state = random_game(8, stop_after=round_one + 5)[0]
    assert (state["round"], state["phase"]) == (2, "play")
    return state


STATES: dict[str, Callable[[], State]] = {
    "exchange": lambda: new_game(seed=3),
    "exchange, keeper chose": half_exchange,
    "play": in_play,
    "swap": lambda: play(in_play(), ("shadow", "4S")),
    "swap, shadow chose": half_swap,
    "round 2 exchange": round_two_started,
    "round 2 play": round_two_in_play,
    "over": lambda: random_game(9)[0],
}


@pytest.mark.parametrize("seat", SEATS)
@pytest.mark.parametrize("build", STATES.values(), ids=STATES.keys())
def test_view_shows_own_cards_and_hides_the_opponents(
    build: Callable[[], State], seat: Seat
) -> None:
    state = build()
    view = seat_view(state, seat)
    assert set(view) == VIEW_KEYS
    assert view["seat"] == seat
    assert view["hand"] == state["hands"][seat]
    assert view["pending"] == state["pending"][seat]
    assert view["opponent_cards"] == len(state["hands"][other(seat)])
    assert view["history"] == state["history"]
    assert view["rounds"] == [
        {**result, "advanced": advanced}
        for result, advanced in zip(state["rounds"], track_advances(state), strict=True)
    ]
    assert leaks(state, seat) == set()
    assert json.loads(json.dumps(view)) == view


def test_a_half_chosen_exchange_hides_the_choice() -> None:
    state = apply(new_game(deals=[DEAL]), "keeper", {"exchange": ["4S"]})
    keeper, shadow = seat_view(state, "keeper"), seat_view(state, "shadow")
    assert keeper["pending"] == ["4S"] and keeper["opponent_chosen"] is False
    assert shadow["pending"] is None and shadow["opponent_chosen"] is True
    assert "4S" not in set(helpers.strings(shadow))
    assert shadow["opponent_cards"] == 9 and keeper["opponent_cards"] == 10


def test_what_a_seat_gave_stays_visible_to_it() -> None:
    state = apply(new_game(deals=[DEAL]), "keeper", {"exchange": ["4S"]})
    state = apply(state, "shadow", {"exchange": ["6H"]})
    view = seat_view(state, "keeper")
    assert "4S" in state["hands"]["shadow"]
    assert view["transfers"] == [
        {"round": 1, "kind": "exchange", "after_trick": 0, "gave": ["4S"], "received": ["6H"]}
    ]
    assert seat_view(state, "shadow")["transfers"][0]["gave"] == ["6H"]
    assert leaks(state, "keeper") == set()


def test_leaks_finds_a_view_showing_hidden_cards(monkeypatch: pytest.MonkeyPatch) -> None:
    state = playing(*DIAMONDS_AND_ELIXIR)

    def careless_view(state: State, seat: Seat) -> dict[str, object]:
        return {**seat_view(state, seat), "table": [state["aside"][0]]}

    monkeypatch.setattr(helpers, "seat_view", careless_view)
    assert leaks(state, "keeper") == {state["aside"][0]}


def test_view_never_holds_seed_deals_or_the_aside() -> None:
    state = new_game(seed=12)
    for seat in SEATS:
        view = seat_view(state, seat)
        assert not {"seed", "deals", "aside", "hands"} & set(view)
        assert not set(state["aside"]) & set(helpers.strings(view))


def test_legal_in_play_lists_plays() -> None:
    state = playing("4S 1D 2D 3D 4D 5D 6D 7D 1H 2H", "5S 1C 2C 3C 4C 5C 3H 4H 5H 6H")
    leader = seat_view(state, "keeper")
    assert leader["your_turn"] is True
    assert {"play": "1D"} in leader["legal"]
    assert {"play": "4S", "name": "C"} in leader["legal"]
    for action in leader["legal"]:
        assert set(action) in ({"play"}, {"play", "name"})
        assert action["play"] in state["hands"]["keeper"]
    assert leader["choosing"] is False
    follower = seat_view(state, "shadow")
    assert follower["legal"] == [] and follower["your_turn"] is False


def choosing(phase: str) -> tuple[State, int]:
    """A state in ``phase`` with nobody chosen yet, and how many cards each gives."""
    if phase == "exchange":
        return new_game(deals=[DEAL]), 1
    return play(playing(*DIAMONDS_AND_ELIXIR), ("keeper", "3D"), ("shadow", "4S")), 2


@pytest.mark.parametrize("phase", ["exchange", "swap"])
def test_legal_when_choosing_cards(phase: str) -> None:
    state, size = choosing(phase)
    assert state["phase"] == phase
    for seat in SEATS:
        view = seat_view(state, seat)
        assert view["legal"] == {"choose": size, "must_include_elixir": False}
        assert view["your_turn"] is True and view["choosing"] is True
    state = apply(state, "keeper", {phase: state["hands"]["keeper"][:size]})
    assert seat_view(state, "keeper")["legal"] == []
    assert seat_view(state, "keeper")["your_turn"] is False
    assert seat_view(state, "keeper")["choosing"] is False
    assert seat_view(state, "shadow")["choosing"] is True
    assert seat_view(state, "shadow")["legal"] == {"choose": size, "must_include_elixir": False}


def test_legal_flags_the_elixir_rule() -> None:
    state = new_game(deals=[deal("2S 3S 1H 2H 3H 4H 5H 6H 7H 1D", "4S 2D 3D 4D 5D 6D 7D 1C 2C 3C")])
    assert seat_view(state, "keeper")["legal"] == {"choose": 1, "must_include_elixir": True}
    assert seat_view(state, "shadow")["legal"] == {"choose": 1, "must_include_elixir": False}


def test_legal_is_empty_once_over() -> None:
    state, _ = random_game(9)
    assert state["phase"] == "over"
    for seat in SEATS:
        view = seat_view(state, seat)
        assert view["legal"] == [] and view["winner"] == state["winner"]
        assert view["choosing"] is False


def test_view_holds_the_printed_numbers() -> None:
    view = seat_view(new_game(seed=4), "shadow")
    numbers = ("track_length", "tricks_per_round", "last_round", "swap_size")
    assert tuple(view[name] for name in numbers) == (10, 10, 3, 2)
