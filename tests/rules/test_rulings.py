"""The elixir effects and rulings 1 to 6 of docs/rules.md."""

from __future__ import annotations

import pytest

from service.game_text import effect_text
from service.rules import SEATS, RuleError, Seat, State, apply, legal_actions, to_act

from .helpers import late_in_round, play, playing

# The Shadow holds a 4½ elixir and two diamonds; the Keeper leads.
DIAMONDS_AND_ELIXIR = ("3D 4D 5D 6D 7D 1H 2H 3H 4H 5H", "1D 2D 1C 2C 3C 4C 5C 6H 7H 4S")
# The Keeper holds a 4½ elixir, the Shadow clubs and hearts, no diamonds, no elixir.
ELIXIR_AND_CLUBS = ("4S 1D 2D 3D 4D 5D 6D 7D 1H 2H", "1C 2C 3C 4C 5C 6C 3H 4H 5H 6H")
# The Keeper holds diamonds and hearts, the Shadow clubs and hearts.
TWO_NEW_SUITS = ("1D 2D 3D 4D 5D 6D 7D 1H 2H 3H", "1C 2C 3C 4C 5C 6C 7C 4H 5H 6H")


def last_effect(state: State) -> tuple[Seat, str, str]:
    entry = state["history"][-1]
    return entry["winner"], entry["effect"], entry["outcome"]


# --- Reset (ruling 3) -------------------------------------------------------------


def test_reset_clears_an_established_order() -> None:
    state = play(playing(*ELIXIR_AND_CLUBS), ("keeper", "1D"), ("shadow", "1C"))
    assert state["suit_order"] == ["D", "C", "H"]
    state = play(state, ("shadow", "3H"))
    assert state["suit_order"] == ["D", "C", "H"]
    state = play(state, ("keeper", "4S"))
    assert last_effect(state)[:2] == ("keeper", "reset")
    assert effect_text(state["history"][-1]) == "Reset: suit order cleared"
    assert state["suit_order"] == []
    # The order is built again from scratch: hearts, strongest before, now come first.
    state = play(state, ("keeper", "1H"))
    assert state["suit_order"] == ["H"]


def test_reset_clears_the_heart_that_triggered_it() -> None:
    fresh = late_in_round(
        playing(*ELIXIR_AND_CLUBS), "4S 1D", "3H 1C", tricks=(4, 4), leader="shadow"
    )
    state = play(fresh, ("shadow", "3H"))
    assert state["suit_order"] == ["H"]
    state = play(state, ("keeper", "4S"))
    assert state["suit_order"] == []
    state = play(playing(*ELIXIR_AND_CLUBS), ("keeper", "4S", "H"), ("shadow", "5H"))
    assert last_effect(state)[:2] == ("shadow", "reset")
    assert state["suit_order"] == []


# --- Swap (ruling 2) ---------------------------------------------------------------


@pytest.mark.parametrize(("lead", "winner"), [("3D", "shadow"), ("5D", "keeper")])
def test_swap_two_cards_each_then_the_winner_leads(lead: str, winner: Seat) -> None:
    state = play(playing(*DIAMONDS_AND_ELIXIR), ("keeper", lead), ("shadow", "4S"))
    assert last_effect(state) == (winner, "swap", "2")
    assert effect_text(state["history"][-1]) == "Swap: each gave 2 cards"
    assert (state["phase"], to_act(state), state["leader"]) == (
        "swap",
        ["keeper", "shadow"],
        winner,
    )
    for seat in SEATS:
        assert legal_actions(state, seat) == {"choose": 2, "must_include_elixir": False}
        assert len(state["hands"][seat]) == 9

    state = apply(state, "shadow", {"swap": ["1C", "2C"]})
    assert len(state["hands"]["shadow"]) == 7
    assert not {"1C", "2C"} & set(state["hands"]["keeper"])
    assert to_act(state) == ["keeper"]
    with pytest.raises(RuleError, match="already chosen your cards for this swap"):
        apply(state, "shadow", {"swap": ["3C", "4C"]})

    state = apply(state, "keeper", {"swap": ["1H", "2H"]})
    assert {"1C", "2C"} <= set(state["hands"]["keeper"]) - {"1H", "2H"}
    assert {"1H", "2H"} <= set(state["hands"]["shadow"]) - {"1C", "2C"}
    assert [len(state["hands"][seat]) for seat in SEATS] == [9, 9]
    assert (state["phase"], to_act(state)) == ("play", [winner])
    assert state["transfers"][-1] == {
        "round": 1,
        "kind": "swap",
        "after_trick": 1,
        "keeper": ["1H", "2H"],
        "shadow": ["1C", "2C"],
    }


def test_swap_gives_exactly_two_different_cards_held() -> None:
    state = play(playing(*DIAMONDS_AND_ELIXIR), ("keeper", "3D"), ("shadow", "4S"))
    for cards in (["1H"], ["1H", "2H", "3H"], ["1H", "1H"]):
        with pytest.raises(RuleError, match="Give exactly 2 different cards in the swap"):
            apply(state, "keeper", {"swap": cards})
    with pytest.raises(RuleError, match="You do not hold 1C"):
        apply(state, "keeper", {"swap": ["1H", "1C"]})
    with pytest.raises(RuleError, match="This is the swap phase"):
        apply(state, "shadow", {"play": "1D"})


def test_swap_with_one_card_left_each() -> None:
    state = late_in_round(playing(*DIAMONDS_AND_ELIXIR), "5D 1H", "4S 1C", tricks=(4, 4))
    state = play(state, ("keeper", "5D"), ("shadow", "4S"))
    assert last_effect(state) == ("keeper", "swap", "1")
    assert effect_text(state["history"][-1]) == "Swap: each gave 1 card"
    assert state["phase"] == "swap"
    assert legal_actions(state, "shadow") == {"choose": 1, "must_include_elixir": False}
    with pytest.raises(RuleError, match="Give exactly 1 different card in the swap"):
        apply(state, "keeper", {"swap": ["1H", "5D"]})
    state = apply(state, "keeper", {"swap": ["1H"]})
    state = apply(state, "shadow", {"swap": ["1C"]})
    assert state["hands"] == {"keeper": ["1C"], "shadow": ["1H"]}
    assert (state["phase"], state["trick"], to_act(state)) == ("play", 10, ["keeper"])
    state = play(state, ("keeper", "1C"), ("shadow", "1H"))
    assert state["rounds"][-1]["keeper"] + state["rounds"][-1]["shadow"] == 10


def test_no_swap_after_the_tenth_trick() -> None:
    state = late_in_round(playing(*DIAMONDS_AND_ELIXIR), "5D", "4S", tricks=(4, 5))
    state = play(state, ("keeper", "5D"), ("shadow", "4S"))
    entry = state["history"][-1]
    assert (entry["round"], entry["trick"], entry["effect"], entry["outcome"]) == (
        1,
        10,
        "swap",
        "0",
    )
    assert effect_text(entry) == "Swap: no cards left to give"
    assert state["rounds"] == [{"keeper": 5, "shadow": 5, "moved": 0}]
    assert (state["round"], state["phase"]) == (2, "exchange")
    assert [entry["kind"] for entry in state["transfers"]] == ["exchange"]


# --- Steal (rulings 1 and 6) ----------------------------------------------------------


@pytest.mark.parametrize(
    ("follow", "winner", "tricks"),
    [("2C", "keeper", {"keeper": 6, "shadow": 3}), ("5C", "shadow", {"keeper": 3, "shadow": 6})],
)
def test_steal_moves_one_trick_from_loser_to_winner(
    follow: str, winner: Seat, tricks: dict[str, int]
) -> None:
    state = late_in_round(playing(*ELIXIR_AND_CLUBS), "4S 1H", f"{follow} 3H", tricks=(4, 4))
    state = play(state, ("keeper", "4S", "C"), ("shadow", follow))
    assert last_effect(state) == (winner, "steal", "took")
    loser = "shadow" if winner == "keeper" else "keeper"
    assert effect_text(state["history"][-1]) == (
        f"Steal: {winner.capitalize()} took a trick from {loser.capitalize()}"
    )
    assert state["tricks"] == tricks
    assert sum(state["tricks"].values()) == 9


def test_steal_on_the_last_trick_keeps_the_round_at_10() -> None:
    state = late_in_round(playing(*ELIXIR_AND_CLUBS), "4S", "2C", tricks=(5, 4), track=1)
    state = play(state, ("keeper", "4S", "C"), ("shadow", "2C"))
    assert state["rounds"] == [{"keeper": 7, "shadow": 3, "moved": 4}]
    assert state["track"] == 5
    assert (state["round"], state["leader"]) == (2, "shadow")


@pytest.mark.parametrize(
    ("follow", "winner", "loser"), [("2C", "keeper", "shadow"), ("5C", "shadow", "keeper")]
)
def test_steal_with_nothing_to_steal(follow: str, winner: Seat, loser: Seat) -> None:
    state = playing(*ELIXIR_AND_CLUBS)
    state = play(state, ("keeper", "4S", "C"), ("shadow", follow))
    assert last_effect(state) == (winner, "steal", "nothing")
    assert state["tricks"] == {winner: 1, loser: 0}
    assert effect_text(state["history"][-1]) == f"Steal: nothing to take from {loser.capitalize()}"


# --- naming and ranking (rulings 4 and 5) -----------------------------------------------


def test_naming_a_suit_does_not_rank_it() -> None:
    state = play(playing(*ELIXIR_AND_CLUBS), ("keeper", "4S", "D"))
    assert state["suit_order"] == []
    assert state["table"] == [{"seat": "keeper", "card": "4S", "name": "D"}]
    state = play(state, ("shadow", "1C"))
    assert state["suit_order"] == ["C"]


@pytest.mark.parametrize(("follow", "order"), [("1C", ["D", "C", "H"]), ("4H", ["D", "H", "C"])])
def test_two_new_suits_in_one_trick_leader_ranks_below(follow: str, order: list[str]) -> None:
    state = play(playing(*TWO_NEW_SUITS), ("keeper", "7D"), ("shadow", follow))
    assert state["suit_order"] == order
    assert state["history"][-1]["winner"] == "shadow"
