"""Variants: the rule numbers as parameters (docs/rules.md, "Variants").

Printed games are unchanged (the other engine tests and the examples show it);
here each parameter changes what docs/rules.md says it changes, bad variants
are refused with a precise message, and random games with random variants
always end legally.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.rules import (
    PRINTED,
    ROUNDS,
    SEATS,
    TRACK_LENGTH,
    TRICKS_PER_ROUND,
    DealError,
    RuleError,
    State,
    Variant,
    VariantError,
    apply,
    export,
    legal_actions,
    new_game,
    return_match,
    run,
    seat_view,
    shadow_score,
    summary,
    to_act,
    track_advances,
    variant_of,
)

from .helpers import deal, finish_round, play, playing, random_action, replay_json

PLAIN = deal("1H 2H 3H 4H 5H 6H 7H 1D 2D 3D", "4D 5D 6D 7D 1C 2C 3C 4C 5C 6C")
# After the exchange: the Shadow holds diamonds and an elixir, the Keeper leads.
DIAMONDS_AND_ELIXIR = ("3D 4D 5D 6D 7D 1H 2H 3H 4H 5H", "1D 2D 1C 2C 3C 4C 5C 6H 7H 4S")


def reach_round(variant: Variant, number: int, track: int = 0) -> State:
    """The start of round ``number`` of a ``variant`` game, ``track`` cards turned up."""
    state = new_game(deals=[PLAIN] * variant.rounds, variant=variant)
    for _ in range(number - 1):
        state = finish_round(state, 5, 5, track)
    assert (state["round"], state["track"]) == (number, track)
    return state


def exchange_all(state: State) -> State:
    """Both seats give the first cards of their hands in the current exchange."""
    size = legal_actions(state, "keeper")["choose"]
    for seat in SEATS:
        state = apply(state, seat, {"exchange": state["hands"][seat][:size]})
    return state


# --- the printed game ------------------------------------------------------------------


def test_the_default_is_the_printed_game() -> None:
    assert Variant() == PRINTED
    assert (PRINTED.halfway, PRINTED.exchange_sizes, PRINTED.swap_size) == (5, (1, 2, 3), 2)
    assert (PRINTED.track_length, PRINTED.rounds, PRINTED.first_leader) == (10, 3, "keeper")
    assert (TRACK_LENGTH, ROUNDS, TRICKS_PER_ROUND) == (10, 3, 10)
    assert PRINTED.options() == {} and PRINTED.describe() == ""


def test_a_printed_game_keeps_no_variant_in_its_state() -> None:
    state = new_game(seed=3)
    assert "variant" not in state
    assert new_game(seed=3, variant=Variant()) == state
    assert variant_of(state) is PRINTED
    assert "variant" not in export(state, [])


def test_another_variant_is_kept_whole_in_the_state() -> None:
    variant = Variant(halfway=7, swap_size=1)
    state = new_game(seed=3, variant=variant)
    assert state["variant"] == {
        "halfway": 7,
        "exchange_sizes": [1, 2, 3],
        "swap_size": 1,
        "track_length": 10,
        "rounds": 3,
        "first_leader": "keeper",
    }
    stored = json.loads(json.dumps(state))
    assert variant_of(stored) == variant
    assert seat_view(stored, "keeper") == seat_view(state, "keeper")


# --- reading variants --------------------------------------------------------------------


def test_each_state_reads_its_own_variant() -> None:
    first = new_game(seed=1, variant=Variant(halfway=7))
    second = new_game(seed=1, variant=Variant(halfway=3))
    assert [variant_of(s).halfway for s in (first, second, first, first, second)] == [7, 3, 7, 7, 3]
    first["variant"]["halfway"] = 8  # states are never changed in place, but a copy would be
    assert variant_of(first).halfway == 8
    assert variant_of(new_game(seed=1)) is PRINTED


def test_options_are_read_as_a_command_line_gives_them() -> None:
    variant = Variant.from_options(
        {"halfway": "6", "exchange_sizes": " 1, 1,1", "swap_size": "1", "first_leader": "shadow"}
    )
    assert variant == Variant(
        halfway=6, exchange_sizes=(1, 1, 1), swap_size=1, first_leader="shadow"
    )
    assert variant.options() == {
        "halfway": "6",
        "exchange_sizes": "1,1,1",
        "swap_size": "1",
        "first_leader": "shadow",
    }
    assert variant.describe() == "halfway=6 exchange_sizes=1,1,1 swap_size=1 first_leader=shadow"
    assert Variant.from_options(variant.options()) == variant
    assert Variant.from_options({}) == PRINTED


def test_rounds_and_exchange_sizes_complete_each_other() -> None:
    assert Variant.from_options({"rounds": "4"}).exchange_sizes == (1, 2, 3, 4)
    assert Variant.from_options({"rounds": "2"}).exchange_sizes == (1, 2)
    assert Variant.from_options({"exchange_sizes": "2,2"}).rounds == 2
    assert Variant.from_json({"rounds": 1}) == Variant(rounds=1, exchange_sizes=(1,))
    assert Variant.from_json({"exchange_sizes": [0, 3]}).rounds == 2


def test_json_variants_round_trip() -> None:
    variant = Variant(exchange_sizes=(0, 2), rounds=2, track_length=14, halfway=0)
    assert Variant.from_json(json.loads(json.dumps(variant.to_json()))) == variant
    assert Variant.from_json({}) == PRINTED


BAD_OPTIONS: dict[str, tuple[dict[str, str], str]] = {
    "unknown key": (
        {"halfwy": "6"},
        "unknown variant parameter 'halfwy'; the parameters are halfway, exchange_sizes, "
        "swap_size, track_length, rounds, first_leader",
    ),
    "not a number": ({"halfway": "six"}, "halfway is a whole number, not 'six'"),
    "a fraction": ({"swap_size": "1.5"}, "swap_size is a whole number, not '1.5'"),
    "digits grouped": ({"halfway": "1_0"}, "halfway is a whole number, not '1_0'"),
    "digits of another script": ({"halfway": "٣"}, "halfway is a whole number, not '٣'"),
    "wide digits": ({"halfway": "６"}, "halfway is a whole number, not '６'"),
    "a long refusal is cut short": (
        {"rounds": "9" * 5000 + "x"},
        f"rounds is a whole number, not '{'9' * 40}…'",
    ),
    "sizes not numbers": (
        {"exchange_sizes": "1;2;3"},
        "exchange_sizes is whole numbers separated by commas, such as 1,2,3, not '1;2;3'",
    ),
    "empty sizes": (
        {"exchange_sizes": ""},
        "exchange_sizes is whole numbers separated by commas, such as 1,2,3, not ''",
    ),
    "halfway past the track": ({"halfway": "11"}, "halfway is 0 to the track length 10, not 11"),
    "halfway below 0": ({"halfway": "-1"}, "halfway is 0 to the track length 10, not -1"),
    "halfway past a short track": (
        {"track_length": "4", "halfway": "5"},
        "halfway is 0 to the track length 4, not 5",
    ),
    "a short track without its halfway": (
        {"track_length": "1"},
        "track_length=1 needs halfway too: the default halfway 5 is past the end of a track "
        "of 1; give halfway 0 to 1",
    ),
    "an exchange larger than a hand": (
        {"exchange_sizes": "1,11,3"},
        "the round 2 exchange gives 0 to 10 cards (a hand), not 11",
    ),
    "a negative exchange": (
        {"exchange_sizes": "-1,2,3"},
        "the round 1 exchange gives 0 to 10 cards (a hand), not -1",
    ),
    "sizes and rounds disagree": (
        {"rounds": "2", "exchange_sizes": "1,2,3"},
        "exchange_sizes gives one size per round: 2 rounds but 3 sizes",
    ),
    "too many rounds for the derived exchanges": (
        {"rounds": "11", "track_length": "10"},
        "rounds=11 needs exchange_sizes too: the default gives round 11 an exchange of 11 "
        "cards, more than a hand (10); give one size of 0 to 10 per round",
    ),
    "no rounds": ({"rounds": "0"}, "rounds is 1 to 1000, not 0"),
    "more rounds than a variant holds": (
        {"rounds": str(10**12)},
        f"rounds is 1 to 1000, not {10**12}",
    ),
    "more sizes than a variant holds": (
        {"exchange_sizes": ",".join(["0"] * 1001)},
        "rounds is 1 to 1000, not 1001",
    ),
    "no swap": (
        {"swap_size": "0"},
        "swap_size is 1 to 9 (the most cards held after a trick), not 0",
    ),
    "a swap of a whole hand": (
        {"swap_size": "10"},
        "swap_size is 1 to 9 (the most cards held after a trick), not 10",
    ),
    "no track": ({"track_length": "0", "halfway": "0"}, "track_length is 1 to 30"),
    "a track no Shadow can finish": (
        {"track_length": "11", "rounds": "1"},
        "track_length is 1 to 10 (the tricks of 1 round), not 11",
    ),
    "an unknown seat": ({"first_leader": "dealer"}, "first_leader is keeper or shadow"),
}


@pytest.mark.parametrize(("options", "message"), BAD_OPTIONS.values(), ids=BAD_OPTIONS.keys())
def test_bad_options_are_refused_with_the_reason(options: dict[str, str], message: str) -> None:
    with pytest.raises(VariantError) as caught:
        Variant.from_options(options)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([6], 'a variant is an object such as {"halfway": 6}'),
        ({"halfway": "6"}, "halfway is a whole number, not '6'"),
        ({"halfway": True}, "halfway is a whole number, not True"),
        ({"exchange_sizes": "1,2,3"}, "exchange_sizes is a list of sizes, not '1,2,3'"),
        ({"exchange_sizes": [1, 2.5, 3]}, "exchange_sizes holds whole numbers, not 2.5"),
        ({"rounds": None}, "rounds is a whole number, not None"),
        ({"rounds": None, "exchange_sizes": [1]}, "rounds is a whole number, not None"),
        ({"seed": 3}, "unknown variant parameter 'seed'"),
        ({"rounds": 11}, "rounds=11 needs exchange_sizes too"),
        ({"track_length": 2}, "track_length=2 needs halfway too"),
    ],
)
def test_bad_json_variants_are_refused(data: object, message: str) -> None:
    with pytest.raises(VariantError) as caught:
        Variant.from_json(data)
    assert str(caught.value).startswith(message)


def test_a_variant_built_directly_is_checked_too() -> None:
    with pytest.raises(VariantError, match="exchange_sizes is a tuple of sizes"):
        Variant(exchange_sizes=[1, 2, 3])  # type: ignore[arg-type]
    with pytest.raises(VariantError, match="3 rounds but 2 sizes"):
        Variant(exchange_sizes=(1, 2))


# --- what each parameter changes ----------------------------------------------------------


@pytest.mark.parametrize(
    ("halfway", "track", "leader"),
    [(5, 5, "shadow"), (6, 5, "keeper"), (6, 6, "shadow"), (0, 0, "shadow"), (10, 9, "keeper")],
)
def test_halfway_decides_who_leads_later_rounds(halfway: int, track: int, leader: str) -> None:
    state = reach_round(Variant(halfway=halfway), 2, track)
    assert state["leader"] == leader
    assert to_act(exchange_all(state)) == [leader]


def test_exchange_sizes_set_each_rounds_exchange() -> None:
    variant = Variant(exchange_sizes=(2, 0, 4))
    state = new_game(deals=[PLAIN] * 3, variant=variant)
    assert legal_actions(state, "keeper") == {"choose": 2, "must_include_elixir": False}
    state = exchange_all(state)
    assert [len(entry["keeper"]) for entry in state["transfers"]] == [2]
    # Round 2 gives nothing: its first trick is led at once.
    state = finish_round(state, 5, 5, track=0)
    assert (state["round"], state["phase"], to_act(state)) == (2, "play", ["keeper"])
    assert len(state["transfers"]) == 1
    state = finish_round(state, 5, 5, track=0)
    assert (state["round"], state["phase"]) == (3, "exchange")
    assert legal_actions(state, "shadow") == {"choose": 4, "must_include_elixir": False}
    with pytest.raises(RuleError, match="Give exactly 4 different cards in the round 3 exchange"):
        apply(state, "shadow", {"exchange": state["hands"]["shadow"][:3]})


def test_a_game_may_start_without_an_exchange() -> None:
    state = new_game(deals=[PLAIN], seed=1, variant=Variant(exchange_sizes=(0, 2, 3)))
    assert (state["phase"], to_act(state), state["transfers"]) == ("play", ["keeper"], [])
    view = seat_view(state, "keeper")
    assert view["choosing"] is False and view["your_turn"] is True


@pytest.mark.parametrize(("swap_size", "given"), [(1, 1), (3, 3), (9, 9)])
def test_swap_size_sets_the_cards_each_gives(swap_size: int, given: int) -> None:
    state = playing(*DIAMONDS_AND_ELIXIR, variant=Variant(swap_size=swap_size))
    state = play(state, ("keeper", "3D"), ("shadow", "4S"))
    entry = state["history"][-1]
    assert (entry["effect"], entry["outcome"], state["phase"]) == ("swap", str(given), "swap")
    for seat in SEATS:
        assert legal_actions(state, seat) == {"choose": given, "must_include_elixir": False}
    for seat in SEATS:
        state = apply(state, seat, {"swap": state["hands"][seat][:given]})
    assert [len(state["transfers"][-1][seat]) for seat in SEATS] == [given, given]
    assert state["phase"] == "play"


def test_a_large_swap_is_held_to_the_cards_left() -> None:
    state = playing(*DIAMONDS_AND_ELIXIR, variant=Variant(swap_size=9))
    state = play(state, ("keeper", "1H"), ("shadow", "6H"), ("shadow", "7H"), ("keeper", "2H"))
    state = play(state, ("shadow", "4S", "D"), ("keeper", "3D"))
    assert state["history"][-1]["outcome"] == "7"
    assert legal_actions(state, "keeper") == {"choose": 7, "must_include_elixir": False}


@pytest.mark.parametrize(
    ("length", "track", "moved", "winner"),
    [(4, 0, 4, "shadow"), (4, 0, 2, None), (12, 0, 10, None), (12, 10, 2, "shadow")],
)
def test_track_length_is_what_the_shadow_must_finish(
    length: int, track: int, moved: int, winner: str | None
) -> None:
    variant = Variant(track_length=length, halfway=min(5, length))
    keeper_tricks = 5 + moved // 2
    state = finish_round(reach_round(variant, 1), keeper_tricks, 10 - keeper_tricks, track)
    assert state["track"] == min(length, track + moved)
    assert state["winner"] == winner
    assert state["phase"] == ("over" if winner else "exchange")
    view = seat_view(state, "keeper")
    assert view["track_length"] == length and view["track"] <= length


def test_the_track_stops_at_its_end() -> None:
    variant = Variant(track_length=3, halfway=2)
    state = finish_round(reach_round(variant, 1), 10, 0, track=0)
    assert (state["track"], state["winner"], state["rounds"][-1]["moved"]) == (3, "shadow", 10)
    # The round turned up only the three cards there were.
    assert track_advances(state) == [3]
    assert [result["advanced"] for result in seat_view(state, "keeper")["rounds"]] == [3]


@pytest.mark.parametrize("rounds", [1, 2, 4])
def test_rounds_are_what_the_keeper_must_last(rounds: int) -> None:
    variant = Variant.from_options({"rounds": str(rounds)})
    state = reach_round(variant, rounds)
    assert legal_actions(state, "keeper") == {"choose": rounds, "must_include_elixir": False}
    assert seat_view(state, "keeper")["last_round"] == rounds
    state = finish_round(state, 5, 5, track=0)
    assert (state["phase"], state["winner"], len(state["rounds"])) == ("over", "keeper", rounds)


def test_more_rounds_than_deals_are_dealt_from_the_seed() -> None:
    state = new_game(seed=4, variant=Variant.from_options({"rounds": "5"}))
    for number in range(2, 6):
        state = finish_round(state, 5, 5, track=0)
        assert state["round"] == number
    assert len(state["deals"]) == 5
    with pytest.raises(DealError, match="at most 2 deals"):
        new_game(deals=[PLAIN] * 3, variant=Variant.from_options({"rounds": "2"}))


def test_first_leader_leads_round_1() -> None:
    state = new_game(deals=[PLAIN], seed=1, variant=Variant(first_leader="shadow"))
    assert state["leader"] == "shadow"
    assert to_act(exchange_all(state)) == ["shadow"]
    state = finish_round(exchange_all(state), 5, 5, track=0)
    # Later rounds follow the halfway mark, whoever led round 1.
    assert state["leader"] == "keeper"


def test_the_return_match_scores_a_finished_track_whole() -> None:
    variant = Variant(track_length=6, halfway=3)
    won = finish_round(reach_round(variant, 1), 8, 2, track=0)
    assert (won["winner"], won["track"], shadow_score(won)) == ("shadow", 6, 6)
    lost = finish_round(reach_round(variant, 3, track=2), 6, 4, track=2)
    assert (lost["winner"], shadow_score(lost)) == ("keeper", 4)
    # The first player is the Shadow of the second game.
    assert return_match(lost, won)["winner"] == "first"
    slower = finish_round(reach_round(variant, 2, track=3), 8, 2, track=3)
    assert return_match(won, slower)["winner"] == "second"


def test_the_view_carries_the_games_numbers_and_whether_it_is_a_choice() -> None:
    state = new_game(
        deals=[PLAIN],
        seed=2,
        variant=Variant(
            track_length=20, rounds=4, halfway=9, exchange_sizes=(1, 1, 1, 1), swap_size=5
        ),
    )
    keeper = seat_view(state, "keeper")
    numbers = ("track_length", "last_round", "tricks_per_round", "swap_size")
    assert tuple(keeper[name] for name in numbers) == (20, 4, 10, 5)
    assert keeper["choosing"] is True
    state = apply(state, "keeper", {"exchange": ["1H"]})
    assert seat_view(state, "keeper")["choosing"] is False
    assert seat_view(state, "shadow")["choosing"] is True
    state = apply(state, "shadow", {"exchange": ["4D"]})
    assert [seat_view(state, seat)["choosing"] for seat in SEATS] == [False, False]


# --- random games under random variants ------------------------------------------------------


@st.composite
def variants(draw: st.DrawFn) -> Variant:
    """Any valid variant, with up to five rounds."""
    rounds = draw(st.integers(min_value=1, max_value=5))
    sizes = draw(st.lists(st.integers(0, 10), min_size=rounds, max_size=rounds))
    track_length = draw(st.integers(min_value=1, max_value=rounds * TRICKS_PER_ROUND))
    return Variant(
        halfway=draw(st.integers(min_value=0, max_value=track_length)),
        exchange_sizes=tuple(sizes),
        swap_size=draw(st.integers(min_value=1, max_value=9)),
        track_length=track_length,
        rounds=rounds,
        first_leader=draw(st.sampled_from(SEATS)),
    )


def play_out(variant: Variant, seed: int) -> tuple[State, list[dict[str, Any]]]:
    """A random game under ``variant``, checking after every action that the track holds."""
    rng = random.Random(seed)
    state = new_game(seed=seed, variant=variant)
    actions: list[dict[str, Any]] = []
    while state["phase"] != "over":
        seat = rng.choice(to_act(state))
        action = random_action(state, seat, rng)
        before = state["track"]
        state = apply(state, seat, action)
        actions.append({"seat": seat, **action})
        assert before <= state["track"] <= variant.track_length
        assert 1 <= state["round"] <= variant.rounds
    return state, actions


@settings(max_examples=80, deadline=None, database=None)
@given(variant=variants(), seed=st.integers(min_value=0, max_value=2**32))
def test_random_games_under_random_variants_end_legally(variant: Variant, seed: int) -> None:
    state, actions = play_out(variant, seed)
    rounds = state["rounds"]
    # The end: the Shadow finished the track, or the Keeper lasted every round.
    if state["winner"] == "shadow":
        assert state["track"] == variant.track_length
    else:
        assert state["winner"] == "keeper" and state["track"] < variant.track_length
        assert len(rounds) == variant.rounds
    assert len(rounds) == state["round"] and to_act(state) == []
    # Every round played all its tricks, and the track moved by their difference.
    for result in rounds:
        assert result["keeper"] + result["shadow"] == TRICKS_PER_ROUND
        assert result["moved"] == abs(result["keeper"] - result["shadow"])
    assert state["track"] == min(variant.track_length, sum(result["moved"] for result in rounds))
    for number in range(1, len(rounds) + 1):
        tricks = [entry for entry in state["history"] if entry["round"] == number]
        assert [entry["trick"] for entry in tricks] == list(range(1, TRICKS_PER_ROUND + 1))
        # Who led the round's first trick.
        track_before = min(variant.track_length, sum(r["moved"] for r in rounds[: number - 1]))
        if number == 1:
            assert tricks[0]["leader"] == variant.first_leader
        else:
            expected = "keeper" if track_before < variant.halfway else "shadow"
            assert tricks[0]["leader"] == expected
        # The exchange gave the variant's number of cards, or did not happen.
        exchanges = [
            entry
            for entry in state["transfers"]
            if entry["round"] == number and entry["kind"] == "exchange"
        ]
        size = variant.exchange_sizes[number - 1]
        assert [[len(entry[seat]) for seat in SEATS] for entry in exchanges] == (
            [[size, size]] if size else []
        )
    # Each Swap gave what its trick announced: the swap size, or the cards left.
    swaps = [entry for entry in state["transfers"] if entry["kind"] == "swap"]
    announced = [
        entry for entry in state["history"] if entry["effect"] == "swap" and entry["outcome"] != "0"
    ]
    assert len(swaps) == len(announced)
    for swap, trick in zip(swaps, announced, strict=True):
        held = TRICKS_PER_ROUND - trick["trick"]
        given = min(variant.swap_size, held)
        assert str(given) == trick["outcome"]
        assert [len(swap[seat]) for seat in SEATS] == [given, given]
        assert (swap["round"], swap["after_trick"]) == (trick["round"], trick["trick"])
    # The game replays from its export, variant included.
    scenario = json.loads(json.dumps(export(state, actions)))
    assert Variant.from_json(scenario.get("variant", {})) == variant
    replayed = run(scenario)
    assert replayed.error is None and replayed.state == state


# --- the replay format -------------------------------------------------------------------------


def test_a_scenario_with_a_variant_replays_through_the_command() -> None:
    variant = Variant(track_length=4, halfway=2, exchange_sizes=(2, 1, 0))
    state, actions = play_out(variant, 12)
    scenario = export(state, actions)
    assert scenario["variant"]["track_length"] == 4
    result = replay_json(scenario)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == json.loads(json.dumps(summary(state)))
    # A partial variant keeps the other parameters at their defaults.
    partial = {
        **scenario,
        "variant": {"track_length": 4, "halfway": 2, "exchange_sizes": [2, 1, 0]},
    }
    assert json.loads(replay_json(partial).stdout) == json.loads(result.stdout)


@pytest.mark.parametrize(
    ("variant", "reason"),
    [
        ({"halfway": 11}, "variant: halfway is 0 to the track length 10, not 11"),
        ({"tricks": 8}, "variant: unknown variant parameter 'tricks'"),
        ([1, 2, 3], "variant: a variant is an object"),
    ],
)
def test_a_bad_variant_is_not_a_scenario(variant: object, reason: str) -> None:
    result = replay_json({"seed": 3, "variant": variant, "actions": []})
    assert result.returncode == 2 and result.stdout == ""
    assert reason in result.stderr and "Traceback" not in result.stderr
