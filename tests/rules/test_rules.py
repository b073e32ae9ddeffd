"""The rules of docs/rules.md, one at a time, on games built from explicit deals."""

from __future__ import annotations

import copy
import random

import pytest

from service.game_text import effect_text
from service.rules import (
    SEATS,
    ActionError,
    DealError,
    RuleError,
    Seat,
    State,
    apply,
    choices,
    is_elixir,
    legal_actions,
    new_game,
    other,
    parse_action,
    seat_view,
    to_act,
    track_advances,
)

from .helpers import deal, finish_round, late_in_round, play, playing, random_action

PLAIN = deal("1H 2H 3H 4H 5H 6H 7H 1D 2D 3D", "4D 5D 6D 7D 1C 2C 3C 4C 5C 6C")
TWO_ELIXIRS = deal("2S 3S 1H 2H 3H 4H 5H 6H 7H 1D", "4S 2D 3D 4D 5D 6D 7D 1C 2C 3C")
THREE_ELIXIRS = deal("2S 3S 4S 1H 2H 3H 4H 5H 6H 7H", "1D 2D 3D 4D 5D 6D 7D 1C 2C 3C")

# After the exchange: the Shadow holds diamonds and an elixir, the Keeper leads.
DIAMONDS_AND_ELIXIR = ("3D 4D 5D 6D 7D 1H 2H 3H 4H 5H", "1D 2D 1C 2C 3C 4C 5C 6H 7H 4S")
# The Shadow holds no diamonds.
NO_DIAMONDS = ("1D 2D 3D 4D 5D 6D 7D 1H 2H 3H", "1C 2C 3C 4C 5C 6C 7C 4H 5H 2S")
# Neither diamonds nor an elixir.
NO_DIAMONDS_NO_ELIXIR = ("1D 2D 3D 4D 5D 6D 7D 1H 2H 3H", "1C 2C 3C 4C 5C 6C 7C 4H 5H 6H")
# Both hold an elixir; the Shadow holds clubs and hearts but no diamonds.
ELIXIR_LEAD = ("4S 1D 2D 3D 4D 5D 6D 7D 1H 2H", "5S 1C 2C 3C 4C 5C 3H 4H 5H 6H")
# Example 01 after its exchange: diamonds led first, the Shadow has none.
SUIT_ORDER = ("6D 4H 5H 6H 7H 1D 2D 3D 4D 5D", "1C 2C 3C 4C 5C 6C 7C 1H 2H 3H")


def refused(state: State, seat: Seat, action: dict[str, object], code: str) -> str:
    """Apply an action a rule must refuse; returns the message."""
    with pytest.raises(RuleError) as caught:
        apply(state, seat, action)
    assert caught.value.code == code
    assert caught.value.message == str(caught.value)
    return caught.value.message


def reach_round(number: int, track: int = 0) -> State:
    """The exchange of round ``number`` with ``track`` cards turned up."""
    state = new_game(deals=[PLAIN, PLAIN, PLAIN])
    for _ in range(number - 1):
        state = finish_round(state, 5, 5, track)
    assert (state["round"], state["phase"], state["track"]) == (number, "exchange", track)
    return state


def plays(state: State, seat: Seat) -> list[str]:
    legal = legal_actions(state, seat)
    assert isinstance(legal, list)
    return sorted(action["play"] for action in legal)


# --- dealing -------------------------------------------------------------------


def test_new_game_deals_round_1_from_the_deal() -> None:
    state = new_game(deals=[PLAIN])
    assert (state["round"], state["phase"], state["track"]) == (1, "exchange", 0)
    assert sorted(state["hands"]["keeper"]) == sorted(PLAIN["keeper"])
    assert sorted(state["hands"]["shadow"]) == sorted(PLAIN["shadow"])
    assert sorted(state["aside"]) == sorted(PLAIN["aside"])
    assert to_act(state) == ["keeper", "shadow"]


def test_a_seed_deals_the_same_game_every_time() -> None:
    assert new_game(seed=41) == new_game(seed=41)
    assert new_game(seed=41)["hands"] != new_game(seed=42)["hands"]
    state = new_game(seed=41)
    dealt = state["hands"]["keeper"] + state["hands"]["shadow"] + state["aside"]
    assert len(dealt) == len(set(dealt)) == 25


@pytest.mark.parametrize(
    "deals",
    [
        [],
        [{**PLAIN, "aside": PLAIN["aside"][:4]}],
        [{**PLAIN, "keeper": [*PLAIN["keeper"][:9], "2H"]}],
        [{**PLAIN, "keeper": [*PLAIN["keeper"][:9], "8H"]}],
        [PLAIN, PLAIN, PLAIN, PLAIN],
    ],
    ids=["nothing", "short aside", "duplicate", "unknown card", "four deals"],
)
def test_bad_deals_are_refused(deals: list[object]) -> None:
    with pytest.raises(DealError):
        new_game(deals=deals)


# --- exchange ------------------------------------------------------------------


@pytest.mark.parametrize("number", [1, 2, 3])
def test_exchange_gives_the_round_number_of_cards(number: int) -> None:
    state = reach_round(number)
    for seat in SEATS:
        assert legal_actions(state, seat) == {"choose": number, "must_include_elixir": False}
    hand = state["hands"]["keeper"]
    wrongs = [hand[: number - 1], hand[: number + 1]] + ([[hand[0]] * number] * (number > 1))
    for wrong in wrongs:
        message = refused(state, "keeper", {"exchange": wrong}, "choose_count")
        assert f"Give exactly {number} different card" in message
        assert f"in the round {number} exchange" in message
    state = apply(state, "keeper", {"exchange": hand[:number]})
    assert len(state["hands"]["keeper"]) == 10 - number


def test_two_elixirs_oblige_giving_one() -> None:
    state = new_game(deals=[TWO_ELIXIRS])
    assert legal_actions(state, "keeper") == {"choose": 1, "must_include_elixir": True}
    message = refused(state, "keeper", {"exchange": ["1H"]}, "exchange_elixir")
    assert message == "You hold 2 elixirs: give at least one of them in the exchange."
    assert all(card in ("2S", "3S") for [card] in choices(state, "keeper"))
    state = apply(state, "keeper", {"exchange": ["3S"]})
    assert state["pending"]["keeper"] == ["3S"]


@pytest.mark.parametrize("card", ["4S", "2D"])
def test_one_elixir_leaves_the_choice_free(card: str) -> None:
    state = new_game(deals=[TWO_ELIXIRS])
    assert legal_actions(state, "shadow") == {"choose": 1, "must_include_elixir": False}
    assert len(choices(state, "shadow")) == 10
    assert apply(state, "shadow", {"exchange": [card]})["pending"]["shadow"] == [card]


def test_elixir_rule_in_a_larger_exchange() -> None:
    state = new_game(deals=[PLAIN, THREE_ELIXIRS])
    state = finish_round(state, 5, 5, 0)
    assert legal_actions(state, "keeper") == {"choose": 2, "must_include_elixir": True}
    message = refused(state, "keeper", {"exchange": ["1H", "2H"]}, "exchange_elixir")
    assert "You hold 3 elixirs" in message
    assert apply(state, "keeper", {"exchange": ["1H", "4S"]})["pending"]["keeper"] == ["1H", "4S"]


@pytest.mark.parametrize("first", SEATS)
def test_exchanged_cards_leave_at_once_and_arrive_when_both_chose(first: Seat) -> None:
    gives: dict[Seat, list[str]] = {"keeper": ["7H"], "shadow": ["6C"]}
    second = other(first)
    state = apply(new_game(deals=[PLAIN]), first, {"exchange": gives[first]})
    assert gives[first][0] not in state["hands"][first]
    assert len(state["hands"][first]) == 9
    assert state["pending"][first] == gives[first]
    assert gives[first][0] not in state["hands"][second]
    assert len(state["hands"][second]) == 10
    assert (state["phase"], to_act(state)) == ("exchange", [second])

    state = apply(state, second, {"exchange": gives[second]})
    assert "6C" in state["hands"]["keeper"] and "7H" not in state["hands"]["keeper"]
    assert "7H" in state["hands"]["shadow"] and "6C" not in state["hands"]["shadow"]
    assert [len(state["hands"][seat]) for seat in SEATS] == [10, 10]
    assert state["pending"] == {"keeper": None, "shadow": None}
    assert (state["phase"], to_act(state)) == ("play", ["keeper"])
    assert state["transfers"] == [
        {"round": 1, "kind": "exchange", "after_trick": 0, "keeper": ["7H"], "shadow": ["6C"]}
    ]


# --- who leads -------------------------------------------------------------------


def test_keeper_leads_round_1() -> None:
    state = playing(*NO_DIAMONDS)
    assert (state["leader"], to_act(state)) == ("keeper", ["keeper"])


@pytest.mark.parametrize(
    ("number", "track", "leader"),
    [(2, 0, "keeper"), (2, 4, "keeper"), (2, 5, "shadow"), (2, 9, "shadow")]
    + [(3, 4, "keeper"), (3, 5, "shadow")],
)
def test_later_rounds_leader_depends_on_the_track(number: int, track: int, leader: Seat) -> None:
    state = reach_round(number, track)
    assert state["leader"] == leader
    state = apply(state, "keeper", {"exchange": state["hands"]["keeper"][:number]})
    state = apply(state, "shadow", {"exchange": state["hands"]["shadow"][:number]})
    assert to_act(state) == [leader]
    refused(state, other(leader), {"play": state["hands"][other(leader)][0]}, "not_your_turn")


def test_the_trick_winner_leads_the_next() -> None:
    state = play(playing(*SUIT_ORDER), ("keeper", "6D"), ("shadow", "2C"))
    assert (state["leader"], to_act(state)) == ("shadow", ["shadow"])


# --- following -------------------------------------------------------------------


def test_follow_a_colour_lead_with_its_suit_or_an_elixir() -> None:
    state = play(playing(*DIAMONDS_AND_ELIXIR), ("keeper", "3D"))
    assert plays(state, "shadow") == ["1D", "2D", "4S"]
    message = refused(state, "shadow", {"play": "1C"}, "follow_suit")
    assert message == "You hold diamonds: follow with a diamond or play an elixir."
    assert refused(state, "shadow", {"play": "6H"}, "follow_suit") == message
    assert play(state, ("shadow", "4S"))["history"][-1]["effect"] == "swap"
    assert play(state, ("shadow", "1D"))["history"][-1]["winner"] == "keeper"


def test_without_the_led_suit_or_an_elixir_anything_goes() -> None:
    state = play(playing(*NO_DIAMONDS_NO_ELIXIR), ("keeper", "3D"))
    hand = NO_DIAMONDS_NO_ELIXIR[1].split()
    assert plays(state, "shadow") == sorted(hand)
    for card in hand:
        assert play(state, ("shadow", card))["trick"] == 2


def test_without_the_led_suit_an_elixir_must_be_played() -> None:
    """ "Play that suit or an elixir; holding neither, play anything": an elixir is not neither."""
    state = play(playing(*NO_DIAMONDS), ("keeper", "3D"))
    assert plays(state, "shadow") == ["2S"]
    message = refused(state, "shadow", {"play": "1C"}, "follow_elixir")
    assert message == "You hold no diamonds but you hold an elixir: play an elixir."
    assert play(state, ("shadow", "2S"))["history"][-1]["effect"] == "swap"


def test_leading_an_elixir_needs_a_name() -> None:
    state = playing(*ELIXIR_LEAD)
    message = refused(state, "keeper", {"play": "4S"}, "name_required")
    assert message == "Leading an elixir, name a suit: H, D or C."
    elixir_leads = [action for action in legal_actions(state, "keeper") if action["play"] == "4S"]
    assert elixir_leads == [
        {"play": "4S", "name": "H"},
        {"play": "4S", "name": "D"},
        {"play": "4S", "name": "C"},
    ]
    assert play(state, ("keeper", "4S", "C"))["table"] == [
        {"seat": "keeper", "card": "4S", "name": "C"}
    ]


def test_a_name_only_on_an_elixir_lead() -> None:
    state = playing(*ELIXIR_LEAD)
    message = refused(state, "keeper", {"play": "1D", "name": "D"}, "name_not_allowed")
    assert message == "Name a suit only when leading an elixir."
    legal = legal_actions(state, "keeper")
    assert all(("name" in action) == is_elixir(action["play"]) for action in legal)
    led = play(state, ("keeper", "1D"))
    refused(led, "shadow", {"play": "1C", "name": "C"}, "name_not_allowed")
    refused(led, "shadow", {"play": "5S", "name": "C"}, "name_not_allowed")


def test_follow_the_named_suit_and_not_with_an_elixir() -> None:
    state = play(playing(*ELIXIR_LEAD), ("keeper", "4S", "C"))
    assert plays(state, "shadow") == ["1C", "2C", "3C", "4C", "5C"]
    message = refused(state, "shadow", {"play": "5S"}, "follow_named")
    named = "Clubs were named and you hold one: play a club"
    assert message == f"{named} (an elixir may not answer here)."
    message = refused(state, "shadow", {"play": "3H"}, "follow_named")
    assert message == f"{named}."


def test_without_the_named_suit_anything_goes_even_an_elixir() -> None:
    state = play(playing(*ELIXIR_LEAD), ("keeper", "4S", "D"))
    assert plays(state, "shadow") == sorted(ELIXIR_LEAD[1].split())
    after = play(state, ("shadow", "5S"))
    assert after["history"][-1]["effect"] == "none"
    assert after["history"][-1]["winner"] == "shadow"


# --- suit order ------------------------------------------------------------------


def test_first_suit_weakest_second_middle_third_strongest_at_once() -> None:
    state = play(playing(*SUIT_ORDER), ("keeper", "6D"))
    assert state["suit_order"] == ["D"]
    state = play(state, ("shadow", "2C"))
    assert state["suit_order"] == ["D", "C", "H"]
    assert state["tricks"] == {"keeper": 0, "shadow": 1}
    # The order holds for the round: hearts, never played yet, beat clubs.
    state = play(state, ("shadow", "7C"), ("keeper", "4H"))
    assert state["history"][-1]["winner"] == "keeper"
    assert state["suit_order"] == ["D", "C", "H"]


def test_elixirs_never_take_a_place() -> None:
    state = play(playing(*ELIXIR_LEAD), ("keeper", "4S", "D"), ("shadow", "5S"))
    assert state["suit_order"] == []


def test_a_colour_card_ranks_when_played_in_an_elixir_trick() -> None:
    state = play(playing(*ELIXIR_LEAD), ("keeper", "4S", "C"), ("shadow", "2C"))
    assert state["suit_order"] == ["C"]
    state = play(playing(*DIAMONDS_AND_ELIXIR), ("keeper", "3D"))
    assert state["suit_order"] == ["D"]


# --- who wins a trick --------------------------------------------------------------


SAME_SUIT = ("4H 2D 7D 5C 6C 7C 1H 2H 6H 7H", "3H 5H 1D 6D 1C 2C 3C 4C 3D 4D")


@pytest.mark.parametrize(
    ("lead", "follow", "winner"),
    [
        ("4H", "3H", "keeper"),
        ("4H", "5H", "shadow"),
        ("7D", "1D", "keeper"),
        ("2D", "6D", "shadow"),
    ],
)
def test_same_suit_higher_number_wins(lead: str, follow: str, winner: Seat) -> None:
    state = play(playing(*SAME_SUIT), ("keeper", lead), ("shadow", follow))
    assert state["history"][-1]["winner"] == winner
    assert state["history"][-1]["effect"] is None
    assert state["tricks"][winner] == 1


def test_different_suits_stronger_suit_wins_whatever_the_numbers() -> None:
    state = play(playing(*SUIT_ORDER), ("keeper", "6D"), ("shadow", "2C"))
    assert state["history"][-1]["winner"] == "shadow"
    state = play(state, ("shadow", "1H"), ("keeper", "7H"))
    state = play(state, ("keeper", "1D"), ("shadow", "7C"))
    assert state["history"][-1]["winner"] == "shadow"
    assert state["tricks"] == {"keeper": 1, "shadow": 2}


@pytest.mark.parametrize(("follow", "winner"), [("4H", "keeper"), ("5H", "shadow")])
def test_one_elixir_higher_number_wins_and_the_half_counts(follow: str, winner: Seat) -> None:
    state = play(playing(*ELIXIR_LEAD), ("keeper", "4S", "H"), ("shadow", follow))
    assert state["history"][-1]["winner"] == winner
    assert state["history"][-1]["effect"] == "reset"


@pytest.mark.parametrize(("lead", "winner"), [("3H", "keeper"), ("7D", "shadow")])
def test_one_elixir_ignores_the_suit_order(lead: str, winner: Seat) -> None:
    state = late_in_round(
        playing(*SUIT_ORDER), "5S 1C", "3H 7D", tricks=(4, 4), leader="shadow", suit_order="DCH"
    )
    # Hearts are strongest and diamonds weakest, yet only the numbers count against an elixir.
    state = play(state, ("shadow", lead), ("keeper", "5S"))
    assert state["history"][-1]["winner"] == winner


def test_two_elixirs_no_effect_higher_wins() -> None:
    state = play(playing(*ELIXIR_LEAD), ("keeper", "4S", "D"), ("shadow", "5S"))
    entry = state["history"][-1]
    assert (entry["winner"], entry["effect"], effect_text(entry)) == (
        "shadow",
        "none",
        "Two elixirs: no effect",
    )
    assert (state["phase"], state["tricks"]) == ("play", {"keeper": 0, "shadow": 1})


# --- end of a round and of the game ------------------------------------------------


@pytest.mark.parametrize(
    ("keeper_tricks", "shadow_tricks", "moved"), [(3, 7, 4), (7, 3, 4), (5, 5, 0), (10, 0, 10)]
)
def test_end_of_round_track_moves_by_the_difference(
    keeper_tricks: int, shadow_tricks: int, moved: int
) -> None:
    state = finish_round(new_game(seed=5), keeper_tricks, shadow_tricks, track=0)
    assert state["rounds"] == [{"keeper": keeper_tricks, "shadow": shadow_tricks, "moved": moved}]
    assert state["track"] == moved
    if moved < 10:
        assert (state["round"], state["phase"], state["trick"]) == (2, "exchange", 1)
        assert state["tricks"] == {"keeper": 0, "shadow": 0}
        assert state["suit_order"] == [] and state["table"] == []
        assert [len(state["hands"][seat]) for seat in SEATS] == [10, 10]


def test_the_round_that_finishes_the_track_turns_up_only_what_was_left() -> None:
    # Differences of 6, 2 and then 4 with 2 cards left: the last round advances 2.
    state = new_game(seed=5)
    state["rounds"] = [
        {"keeper": 2, "shadow": 8, "moved": 6},
        {"keeper": 6, "shadow": 4, "moved": 2},
        {"keeper": 3, "shadow": 7, "moved": 4},
    ]
    assert track_advances(state) == [6, 2, 2]
    view = seat_view(state, "shadow")
    assert [(result["moved"], result["advanced"]) for result in view["rounds"]] == [
        (6, 6),
        (2, 2),
        (4, 2),
    ]
    state["rounds"] = [{"keeper": 10, "shadow": 0, "moved": 10}]
    assert track_advances(state) == [10]


@pytest.mark.parametrize(("track", "keeper_tricks", "shadow_tricks"), [(6, 7, 3), (5, 10, 0)])
def test_shadow_wins_at_once_at_10(track: int, keeper_tricks: int, shadow_tricks: int) -> None:
    state = finish_round(new_game(seed=5), keeper_tricks, shadow_tricks, track=track)
    assert state["track"] == 10
    assert (state["phase"], state["winner"], state["round"]) == ("over", "shadow", 1)
    assert state["leader"] is None and to_act(state) == []
    assert legal_actions(state, "keeper") == legal_actions(state, "shadow") == []


def test_keeper_wins_after_round_3_below_10() -> None:
    state = finish_round(reach_round(3, track=6), 6, 4, track=6)
    assert (state["phase"], state["winner"], state["round"], state["track"]) == (
        "over",
        "keeper",
        3,
        8,
    )
    assert len(state["rounds"]) == 3


def test_shadow_wins_reaching_10_in_round_3() -> None:
    state = finish_round(reach_round(3, track=6), 7, 3, track=6)
    assert (state["phase"], state["winner"], state["track"]) == ("over", "shadow", 10)


# --- refusals ------------------------------------------------------------------------


def test_not_your_turn() -> None:
    state = playing(*SUIT_ORDER)
    assert refused(state, "shadow", {"play": "1C"}, "not_your_turn") == (
        "It is not your turn: the Keeper plays next."
    )
    state = play(state, ("keeper", "6D"))
    message = refused(state, "keeper", {"play": "1D"}, "not_your_turn")
    assert message == "It is not your turn: the Shadow plays next."


def test_wrong_phase() -> None:
    state = new_game(deals=[PLAIN])
    message = refused(state, "keeper", {"play": "1H"}, "wrong_phase")
    assert message == "This is the exchange phase. Give 1 card."
    assert "exchange phase" in refused(state, "shadow", {"swap": ["4D", "5D"]}, "wrong_phase")
    state = playing(*SUIT_ORDER)
    message = refused(state, "keeper", {"exchange": ["6D"]}, "wrong_phase")
    assert message == "This is the play phase. Play a card."
    assert "play phase" in refused(state, "keeper", {"swap": ["6D", "1D"]}, "wrong_phase")


@pytest.mark.parametrize("seat", SEATS)
def test_choosing_twice(seat: Seat) -> None:
    state = new_game(deals=[PLAIN])
    state = apply(state, seat, {"exchange": [state["hands"][seat][0]]})
    message = refused(state, seat, {"exchange": [state["hands"][seat][0]]}, "not_your_turn")
    assert message == (
        f"You have already chosen your cards for this exchange; "
        f"waiting for the {other(seat).capitalize()}."
    )


def test_card_not_held() -> None:
    state = new_game(deals=[PLAIN])
    assert refused(state, "keeper", {"exchange": ["1C"]}, "not_held") == "You do not hold 1C."
    assert refused(state, "keeper", {"exchange": ["7C"]}, "not_held") == "You do not hold 7C."
    state = playing(*SUIT_ORDER)
    assert refused(state, "keeper", {"play": "1C"}, "not_held") == "You do not hold 1C."


def test_game_over_refuses_every_move() -> None:
    state = finish_round(new_game(seed=5), 10, 0, track=0)
    assert state["phase"] == "over"
    for seat in SEATS:
        for action in ({"play": "1H"}, {"exchange": ["1H"]}, {"swap": ["1H", "2H"]}):
            message = refused(state, seat, action, "game_over")
            assert message == "The game is over: no more moves."


@pytest.mark.parametrize(
    "action",
    [
        "4S",
        ["4S"],
        {},
        {"card": "1H"},
        {"play": "1H", "exchange": ["1H"]},
        {"play": "8H"},
        {"play": "1S"},
        {"play": 4},
        {"play": "4S", "name": "S"},
        {"play": "4S", "name": None},
        {"play": "1H", "extra": 1},
        {"exchange": ["1H"], "name": "H"},
        {"exchange": "1H"},
        {"exchange": ["9X"]},
        {"swap": [1, 2]},
    ],
)
def test_malformed_actions(action: object) -> None:
    state = new_game(deals=[PLAIN])
    with pytest.raises(ActionError):
        apply(state, "keeper", action)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ({"exchange": ["1H"], "": None}, 'unexpected key "" in an exchange action'),
        ({"play": "1H", "cards": ["1H"]}, 'unexpected key "cards" in a play action'),
        ({"swap": ["1H"], "name": "H"}, 'unexpected key "name" in a swap action'),
        ({"play": "1H", "\x00": 1}, 'unexpected key "\\u0000" in a play action'),
        ({"play": ["4S"]}, 'unknown card ["4S"]'),
        ({"play": {"a": 1}}, 'unknown card {"a": 1}'),
        ({"play": "5♠"}, 'unknown card "5♠"'),
        ({"play": "5S", "name": "♥"}, 'a named suit is H, D or C, not "♥"'),
        ({"play": "4S", "name": None}, "a named suit is H, D or C, not null"),
        ({"swap": ["1H", True]}, "unknown card true"),
        ({"play": "x" * 100}, f'unknown card "{"x" * 58}…'),
    ],
)
def test_a_malformed_action_is_told_what_it_holds(action: dict, message: str) -> None:
    """Each value in JSON, as the action came: a reader of the API or a replay file knows it."""
    with pytest.raises(ActionError) as refused:
        parse_action(action)
    assert str(refused.value) == message


def test_unknown_seat() -> None:
    with pytest.raises(ActionError, match="keeper or shadow"):
        apply(new_game(deals=[PLAIN]), "dealer", {"exchange": ["1H"]})  # type: ignore[arg-type]


def test_apply_never_changes_the_state_it_is_given() -> None:
    rng = random.Random(2024)
    for seed in range(8):
        state = new_game(seed=seed)
        while state["phase"] != "over":
            seat = rng.choice(to_act(state))
            action = random_action(state, seat, rng)
            before = copy.deepcopy(state)
            for wrong_seat in SEATS:
                with pytest.raises((RuleError, ActionError)):
                    apply(state, wrong_seat, {"play": "1H", "name": "H"})
            after = apply(state, seat, action)
            assert state == before
            assert after is not state
            state = after
