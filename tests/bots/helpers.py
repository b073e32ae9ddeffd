"""Positions for the computer-player tests, and the same positions with the unseen cards moved."""

from __future__ import annotations

import random
from typing import Any

from service.bots import Player, player
from service.rules import (
    PLAY,
    RuleError,
    Seat,
    State,
    apply,
    choices,
    new_game,
    other,
    to_act,
    variant_of,
)
from tests.rules.helpers import random_game

# Search budgets small enough for tests, with no time limit so that results never depend on speed.
TEST_SETTINGS: dict[str, dict[str, Any]] = {
    "random": {},
    "easy": {},
    "medium": {"playouts": 24, "budget_ms": None, "gifts": 6},
    "hard": {"playouts": 40, "budget_ms": None, "gifts": 8},
}
# Whole games each level plays in the tests of legal moves.
WHOLE_GAMES = {"random": 40, "easy": 40, "medium": 10, "hard": 6}
LEVEL_NAMES = tuple(TEST_SETTINGS)


def bot(level: str) -> Player:
    """The player of ``level`` with the test budget."""
    return player(level, **TEST_SETTINGS[level])


def decision(state: State, seat: Seat) -> str:
    """The kind of move ``seat`` owes: ``exchange``, ``swap``, ``lead`` or ``follow``."""
    if state["phase"] != PLAY:
        return state["phase"]
    return "follow" if state["table"] else "lead"


def positions(games: int, every: int = 5) -> list[tuple[State, list[dict[str, Any]], Seat]]:
    """Positions of random games (every ``every``-th step), each with its actions and a seat to act.

    Every kind of decision comes up: exchanges in all three rounds, leads,
    follows and swaps, with the opponent's half of an exchange or swap made or not.
    """
    found = []
    for seed in range(games):
        rng = random.Random(seed)
        state, actions = random_game(seed)
        replayed = new_game(seed=seed)
        for index, action in enumerate(actions):
            if index % every == seed % every:
                found.append((replayed, actions[:index], rng.choice(to_act(replayed))))
            seat = action["seat"]
            replayed = apply(replayed, seat, {k: v for k, v in action.items() if k != "seat"})
        assert replayed == state
    return found


def redeal(
    state: State, actions: list[dict[str, Any]], seat: Seat, rng: random.Random
) -> State | None:
    """The same game with the cards ``seat`` has not seen this round dealt again.

    The opponent's dealt hand and the cards aside of the current round are
    shuffled together, except the opponent's cards the seat has seen (played,
    or given to the seat); the game is replayed on that deal, with a new seed
    for later rounds. A secret choice the opponent has made and not yet handed
    over is made again at random from its new hand. ``None`` when the replay
    breaks a rule (the deal contradicts what the seat saw, such as a suit the
    opponent did not follow).
    """
    number = state["round"]
    opponent = other(seat)
    dealt = state["deals"][number - 1]
    this_round = [entry for entry in state["history"] if entry["round"] == number]
    transfers = [entry for entry in state["transfers"] if entry["round"] == number]
    shown = {c["card"] for entry in this_round for c in entry["cards"] if c["seat"] == opponent}
    shown |= {c["card"] for c in state["table"] if c["seat"] == opponent}
    shown |= {card for entry in transfers for card in entry[opponent]}
    shown -= {card for entry in transfers for card in entry[seat]}
    kept = [card for card in dealt[opponent] if card in shown]
    free = [card for card in dealt[opponent] if card not in shown] + list(dealt["aside"])
    rng.shuffle(free)
    size = len(dealt[opponent]) - len(kept)
    deal = {seat: dealt[seat], opponent: kept + free[:size], "aside": free[size:]}
    replay = list(actions)
    secret = state["pending"][opponent] is not None
    if secret:
        assert replay[-1]["seat"] == opponent, "an unresolved choice is the last action"
        replay.pop()
    try:
        again = new_game(
            seed=rng.randrange(2**32),
            deals=[*state["deals"][: number - 1], deal],
            variant=variant_of(state),
        )
        for action in replay:
            again = apply(again, action["seat"], {k: v for k, v in action.items() if k != "seat"})
    except RuleError:
        return None
    if secret:
        again = apply(again, opponent, {again["phase"]: rng.choice(choices(again, opponent))})
    return again
