"""Builders and checks the engine tests share: deals, set-up states, a random player."""

from __future__ import annotations

import copy
import itertools
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

from service.rules import (
    DECK,
    PRINTED,
    Seat,
    State,
    Variant,
    apply,
    choices,
    is_elixir,
    legal_actions,
    new_game,
    other,
    seat_view,
    to_act,
)

REPO = Path(__file__).resolve().parents[2]
RULES_DIR_VARIABLE = "SPLITMIND_RULES_DIR"


def examples_dir() -> Path:
    """Where the rule examples are: ``$SPLITMIND_RULES_DIR/examples``, or the copies kept here.

    ``tests/rules/examples/`` holds scenarios in the replay format of docs/rules.md with
    their expected output.
    """
    rules = os.environ.get(RULES_DIR_VARIABLE)
    return Path(rules) / "examples" if rules else Path(__file__).resolve().parent / "examples"


def deal(keeper: str, shadow: str) -> dict[str, list[str]]:
    """A deal of these space-separated cards to each seat, the other five aside."""
    hands = {"keeper": keeper.split(), "shadow": shadow.split()}
    aside = [card for card in DECK if card not in hands["keeper"] + hands["shadow"]]
    assert [len(hands["keeper"]), len(hands["shadow"]), len(aside)] == [10, 10, 5], "bad test deal"
    return {**hands, "aside": aside}


def elixirs(cards: list[str]) -> int:
    return sum(1 for card in cards if is_elixir(card))


def playing(keeper: str, shadow: str, *, seed: int | None = 0, variant: Variant = PRINTED) -> State:
    """Round 1 at its first trick with exactly these hands, reached through a legal exchange.

    Later rounds are dealt from ``seed``. ``variant`` must give one card in round 1.
    """
    want = {"keeper": keeper.split(), "shadow": shadow.split()}
    for keeper_gives, shadow_gives in itertools.product(want["shadow"], want["keeper"]):
        dealt_keeper = [c for c in want["keeper"] if c != shadow_gives] + [keeper_gives]
        dealt_shadow = [c for c in want["shadow"] if c != keeper_gives] + [shadow_gives]
        if (elixirs(dealt_keeper) < 2 or is_elixir(keeper_gives)) and (
            elixirs(dealt_shadow) < 2 or is_elixir(shadow_gives)
        ):
            break
    else:
        raise AssertionError("no legal round 1 exchange leads to these hands")
    dealt = deal(" ".join(dealt_keeper), " ".join(dealt_shadow))
    state = new_game(seed=seed, deals=[dealt], variant=variant)
    state = apply(state, "keeper", {"exchange": [keeper_gives]})
    state = apply(state, "shadow", {"exchange": [shadow_gives]})
    assert {seat: sorted(state["hands"][seat]) for seat in want} == {
        seat: sorted(cards) for seat, cards in want.items()
    }
    return state


def late_in_round(
    state: State,
    keeper: str,
    shadow: str,
    *,
    tricks: tuple[int, int],
    track: int | None = None,
    leader: Seat = "keeper",
    suit_order: str = "",
) -> State:
    """A copy of ``state`` edited to the play phase with only these cards left in hand."""
    edited = copy.deepcopy(state)
    hands = {"keeper": keeper.split(), "shadow": shadow.split()}
    assert len(hands["keeper"]) == len(hands["shadow"])
    trick = 11 - len(hands["keeper"])
    assert sum(tricks) == trick - 1, "tricks so far must match the trick number"
    edited.update(
        phase="play",
        trick=trick,
        leader=leader,
        hands=hands,
        pending={"keeper": None, "shadow": None},
        table=[],
        suit_order=list(suit_order),
        tricks={"keeper": tricks[0], "shadow": tricks[1]},
    )
    if track is not None:
        edited["track"] = track
    return edited


def play(state: State, *moves: tuple[str, ...]) -> State:
    """Apply plays given as ``(seat, card)`` or ``(seat, card, name)``."""
    for seat, card, *name in moves:
        action = {"play": card, "name": name[0]} if name else {"play": card}
        state = apply(state, seat, action)  # type: ignore[arg-type]
    return state


def finish_round(state: State, keeper_tricks: int, shadow_tricks: int, track: int) -> State:
    """Play the last trick of the round: the Keeper wins it, ending at ``keeper_tricks``."""
    before = late_in_round(
        state, "7H", "1H", tricks=(keeper_tricks - 1, shadow_tricks), track=track
    )
    return play(before, ("keeper", "7H"), ("shadow", "1H"))


def random_action(state: State, seat: Seat, rng: random.Random) -> dict[str, Any]:
    """A random legal action for ``seat``, which must owe one."""
    legal = legal_actions(state, seat)
    if isinstance(legal, dict):
        return {state["phase"]: rng.choice(choices(state, seat))}
    return dict(rng.choice(legal))


def random_game(
    seed: int,
    *,
    deals: list[dict[str, list[str]]] | None = None,
    stop_after: int | None = None,
    stop_at_round: int | None = None,
    variant: Variant = PRINTED,
) -> tuple[State, list[dict[str, Any]]]:
    """Play random legal moves; returns the state and the actions taken, each with its seat."""
    rng = random.Random(seed)
    state = new_game(seed=None if deals else seed, deals=deals, variant=variant)
    actions: list[dict[str, Any]] = []
    while state["phase"] != "over":
        if stop_after is not None and len(actions) >= stop_after:
            break
        if stop_at_round is not None and state["round"] >= stop_at_round:
            break
        seat = rng.choice(to_act(state))
        action = random_action(state, seat, rng)
        state = apply(state, seat, action)
        actions.append({"seat": seat, **action})
    return state, actions


def strings(value: object) -> set[str]:
    """Every string in a JSON-like value, keys included.

    A loop over a stack rather than nested generators: the random games call it on
    every view after every step, and it took a quarter of their time.
    """
    found: set[str] = set()
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            found.add(item)
        elif isinstance(item, dict):
            pending += item
            pending += item.values()
        elif isinstance(item, list | tuple):
            pending += item
    return found


def hidden_from(state: State, seat: Seat) -> set[str]:
    """The cards ``seat`` may not see: the opponent's hand and pending choice, and the aside."""
    opponent = other(seat)
    return (
        set(state["hands"][opponent]) | set(state["aside"]) | set(state["pending"][opponent] or ())
    )


def leaks(state: State, seat: Seat) -> set[str]:
    """Hidden cards that show anywhere in ``seat``'s view.

    Earlier rounds' history and transfers are the past and are skipped: every
    card is dealt again each round. This round's transfers show only cards the
    seat held at some point (what it gave may now sit in the opponent's hand).
    """
    view = seat_view(state, seat)
    round_number = state["round"]
    hidden = hidden_from(state, seat)
    held = set(state["deals"][round_number - 1][seat]) | {
        card
        for entry in state["transfers"]
        if entry["round"] == round_number
        for card in entry[other(seat)]
    }
    rest = {key: value for key, value in view.items() if key not in ("history", "transfers")}
    history = [entry for entry in view["history"] if entry["round"] == round_number]
    transfers = [entry for entry in view["transfers"] if entry["round"] == round_number]
    seen_anywhere = strings(rest) | strings(history)
    return (seen_anywhere & hidden) | (strings(transfers) & (hidden - held))


def replay(args: list[str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m service.replay`` from the repository."""
    return subprocess.run(
        [sys.executable, "-m", "service.replay", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=REPO,
        timeout=60,
        check=False,
    )


def replay_json(scenario: object) -> subprocess.CompletedProcess[str]:
    return replay(["-"], json.dumps(scenario))
