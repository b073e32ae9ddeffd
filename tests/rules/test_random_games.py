"""Random legal games: invariants after every step, and exported games that replay exactly."""

from __future__ import annotations

import json
import pickle
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from service.rules import (
    DECK,
    SEATS,
    RuleError,
    Seat,
    State,
    apply,
    choices,
    export,
    legal_actions,
    new_game,
    run,
    summary,
    to_act,
)

from .helpers import leaks, random_game, replay_json

SEEDS = st.integers(min_value=0, max_value=2**32)


def card_places(state: State) -> Counter[str]:
    """How often each card appears across hands, aside, this round's tricks, table and choices."""
    places: Counter[str] = Counter()
    for seat in SEATS:
        places.update(state["hands"][seat])
        places.update(state["pending"][seat] or ())
    places.update(state["aside"])
    places.update(entry["card"] for entry in state["table"])
    for trick in state["history"]:
        if trick["round"] == state["round"]:
            places.update(entry["card"] for entry in trick["cards"])
    return places


def pick_action(state: State, seat: Seat, pick: int) -> dict[str, Any]:
    """The ``pick``-th legal action for ``seat`` (modulo how many there are)."""
    legal = legal_actions(state, seat)
    if isinstance(legal, dict):
        options = choices(state, seat)
        assert options, f"{seat} owes a {state['phase']} but has no legal choice"
        return {state["phase"]: options[pick % len(options)]}
    assert legal, f"{seat} owes a play but has no legal play"
    return dict(legal[pick % len(legal)])


class RandomGames(RuleBasedStateMachine):
    """Plays random legal games from random seeds, starting a new one when a game ends."""

    state: State

    def begin(self, seed: int) -> None:
        self.state = new_game(seed=seed)

    @initialize(seed=SEEDS)
    def deal(self, seed: int) -> None:
        self.begin(seed)

    @rule(seat=st.sampled_from(SEATS), pick=st.integers(min_value=0, max_value=10**6), seed=SEEDS)
    def step(self, seat: Seat, pick: int, seed: int) -> None:
        """One legal action; once the game is over, check it stays over and deal a new one."""
        before = self.state
        if before["phase"] == "over":
            event("game over")
            for anyone in SEATS:
                with pytest.raises(RuleError, match="The game is over"):
                    apply(before, anyone, {"play": DECK[0]})
            self.begin(seed)
            return
        acting = to_act(before)
        seat = seat if seat in acting else acting[0]
        snapshot = pickle.loads(pickle.dumps(before))  # a deep copy, in a tenth of the time
        after = apply(before, seat, pick_action(before, seat, pick))
        assert before == snapshot, "apply changed the state it was given"
        assert before["track"] <= after["track"] <= 10
        assert (before["round"], len(before["rounds"])) <= (after["round"], len(after["rounds"]))
        self.state = after

    @invariant()
    def cards_are_conserved(self) -> None:
        places = card_places(self.state)
        assert set(places) == set(DECK)
        assert max(places.values()) == 1, [card for card, n in places.items() if n > 1]

    @invariant()
    def tricks_add_up(self) -> None:
        state = self.state
        for finished in state["rounds"]:
            assert finished["keeper"] + finished["shadow"] == 10
            assert finished["moved"] == abs(finished["keeper"] - finished["shadow"])
        played = sum(1 for trick in state["history"] if trick["round"] == state["round"])
        assert sum(state["tricks"].values()) == played == state["trick"] - 1
        assert state["track"] == min(10, sum(finished["moved"] for finished in state["rounds"]))

    @invariant()
    def game_ends_by_round_3(self) -> None:
        state = self.state
        assert 1 <= state["round"] <= 3
        assert 0 <= state["track"] <= 10
        if state["phase"] == "over":
            assert len(state["rounds"]) == state["round"]
            assert state["winner"] == ("shadow" if state["track"] == 10 else "keeper")
            assert state["winner"] == "shadow" or state["round"] == 3
            assert to_act(state) == [] and state["leader"] is None
        else:
            assert len(state["rounds"]) == state["round"] - 1
            assert state["winner"] is None and state["track"] < 10

    @invariant()
    def views_hide_the_opponents_cards(self) -> None:
        for seat in SEATS:
            assert leaks(self.state, seat) == set()


RandomGames.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=120,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TestRandomGames = pytest.mark.slow(RandomGames.TestCase)


def test_random_games_reach_the_end() -> None:
    finished = [random_game(seed)[0] for seed in range(40)]
    assert all(state["phase"] == "over" for state in finished)
    assert {state["winner"] for state in finished} == {"keeper", "shadow"}


# --- export and replay -------------------------------------------------------------


def assert_replays(state: State, actions: list[dict[str, Any]]) -> dict[str, Any]:
    scenario = export(state, actions)
    outcome = run(json.loads(json.dumps(scenario)))
    assert outcome.error is None and outcome.error_index is None
    assert outcome.state == state
    assert summary(outcome.state) == summary(state)
    return scenario


@settings(max_examples=60, deadline=None, database=None)
@given(seed=SEEDS, stop_after=st.none() | st.integers(min_value=0, max_value=90))
def test_exported_games_replay_to_the_same_state(seed: int, stop_after: int | None) -> None:
    state, actions = random_game(seed, stop_after=stop_after)
    assert_replays(state, actions)


@pytest.mark.parametrize(("seed", "stop_after"), [(1, None), (2, None), (3, 0), (4, 17), (5, 40)])
def test_exported_games_replay_through_the_command(seed: int, stop_after: int | None) -> None:
    state, actions = random_game(seed, stop_after=stop_after)
    if stop_after is None:
        assert state["phase"] == "over"
    scenario = assert_replays(state, actions)
    result = replay_json(scenario)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == json.loads(json.dumps(summary(state)))


def test_exported_game_from_explicit_deals_replays() -> None:
    deals = [new_game(seed=seed)["deals"][0] for seed in (1, 2, 3)]
    state, actions = random_game(6, deals=deals)
    assert state["seed"] is None and state["phase"] == "over"
    scenario = export(state, actions)
    assert "seed" not in scenario and scenario["deals"] == state["deals"]
    assert_replays(state, actions)
