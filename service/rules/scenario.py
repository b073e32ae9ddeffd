"""Replay scenarios: deals or a seed, a variant and actions, as docs/rules.md defines them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .engine import SEATS, ActionError, DealError, RuleError, State, apply, new_game, parse_action
from .variant import PRINTED, Variant, VariantError, variant_of


class ScenarioError(ValueError):
    """Input that is not a valid scenario; the message is one line."""


@dataclass
class Outcome:
    """Where a scenario got to: the last good state, and the refused action if any."""

    state: State
    error_index: int | None = None
    error: RuleError | None = None


def run(scenario: object) -> Outcome:
    """Apply a scenario's actions in order, stopping at the first one a rule refuses.

    Raises :class:`ScenarioError` for input that is no scenario, wherever in it,
    before any action applies.
    """
    if not isinstance(scenario, dict):
        raise ScenarioError("a scenario is a JSON object with deals or a seed, and actions")
    if "scenario" in scenario and "actions" not in scenario:
        scenario = scenario["scenario"]  # an example file: {"scenario": ..., "expected": ...}
        if not isinstance(scenario, dict):
            raise ScenarioError("a scenario is a JSON object with deals or a seed, and actions")
    deals = scenario.get("deals", [])
    seed = scenario.get("seed")
    actions = scenario.get("actions", [])
    if not isinstance(deals, list):
        raise ScenarioError('"deals" is a list of deals')
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise ScenarioError('"seed" is an integer')
    if not isinstance(actions, list):
        raise ScenarioError('"actions" is a list of actions')
    try:
        variant = Variant.from_json(scenario["variant"]) if "variant" in scenario else PRINTED
    except VariantError as exc:
        raise ScenarioError(f"variant: {exc}") from None
    try:
        state = new_game(seed=seed, deals=deals, variant=variant)
    except DealError as exc:
        raise ScenarioError(str(exc)) from None
    # The whole input is checked before any action applies: an unknown card or seat
    # makes the file no scenario (exit 2), even past an action a rule refuses (exit 1).
    seats: list[Any] = []
    for index, action in enumerate(actions):
        try:
            seats.append(_seat(action))
            parse_action(action)
        except ActionError as exc:
            raise ScenarioError(f"action {index}: {exc}") from None
    for index, (seat, action) in enumerate(zip(seats, actions, strict=True)):
        try:
            state = apply(state, seat, action)
        except DealError as exc:
            raise ScenarioError(f"action {index}: {exc}") from None
        except RuleError as exc:
            return Outcome(state, index, exc)
    return Outcome(state)


def _seat(action: Any) -> Any:
    if not isinstance(action, dict) or action.get("seat") not in SEATS:
        raise ActionError('each action names its "seat": keeper or shadow')
    return action["seat"]


def export(state: State, actions: list[dict[str, Any]]) -> dict[str, Any]:
    """A scenario that replays to ``state``: its deals, its seed, its variant and the actions."""
    scenario: dict[str, Any] = {"deals": [dict(deal) for deal in state["deals"]]}
    if state["seed"] is not None:
        scenario["seed"] = state["seed"]
    if "variant" in state:
        scenario["variant"] = variant_of(state).to_json()
    scenario["actions"] = actions
    return scenario
