"""A finished game step by step, with every hand shown: what its review page walks through.

:func:`review` replays a game's moves from its deals and returns one
:class:`Step` per thing that happened in public (a deal, an exchange or swap
settled, a trick won, and the card led of a trick the game stopped in). Each
step holds both hands and the cards set aside, so it is for a game that is
over: no seat may see it while the game is played.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from .cards import sort_cards
from .engine import Played, RoundResult, RuleError, State, Trick, apply, new_game
from .names import SEATS, Seat
from .variant import variant_of


class Step(TypedDict):
    """One moment of a game, seen with every card face up.

    ``kind`` is "deal" (a round starts: ``hands`` as dealt), "exchange" or
    "swap" (``gave``: the cards each seat gave), "trick" (``trick``: the
    history entry; ``result``: the round it ended, if it did), or "lead" (a game
    that ended other than by play stopped with a card led: ``lead``, that card,
    and ``number``, its trick's number in the round). ``hands`` are
    both seats' cards once the step is done, ``tricks`` the tricks each has won
    this round and ``track`` the track cards face up.
    """

    kind: Literal["deal", "exchange", "swap", "trick", "lead"]
    round: int
    hands: dict[Seat, list[str]]
    aside: list[str]
    tricks: dict[Seat, int]
    track: int
    gave: dict[Seat, list[str]] | None
    trick: Trick | None
    result: RoundResult | None
    lead: Played | None
    number: int | None


class ReviewError(ValueError):
    """The moves do not replay to the game's state: the record is not the game's."""


def review(state: State, actions: list[dict[str, Any]]) -> list[Step]:
    """Every step of a game, from its deals (``state``) and its moves in order (``actions``).

    ``actions`` are the replay notation's, each naming its ``seat``. Raises
    :class:`ReviewError` if they do not lead to ``state``'s history.
    """
    game = new_game(seed=state["seed"], deals=state["deals"], variant=variant_of(state))
    steps = [_deal(game)]
    for number, action in enumerate(actions):
        seat = action.get("seat")
        if seat not in SEATS:
            raise ReviewError(f"move {number} names no seat")
        before = game
        try:
            game = apply(before, seat, {k: v for k, v in action.items() if k != "seat"})
        except (RuleError, ValueError, LookupError) as exc:
            raise ReviewError(f"move {number}: {exc}") from None
        steps.extend(_steps_between(before, game))
    if game["history"] != state["history"] or game["transfers"] != state["transfers"]:
        raise ReviewError("the moves do not replay to this game")
    if game["table"]:  # stopped in the middle of a trick: the card led is public
        (lead,) = game["table"]
        steps.append(_step("lead", game, lead=lead, number=game["trick"]))
    return steps


def _deal(state: State) -> Step:
    deal = state["deals"][state["round"] - 1]
    return _step(
        "deal",
        state,
        hands={seat: sort_cards(deal[seat]) for seat in SEATS},
        tricks={seat: 0 for seat in SEATS},
    )


def _steps_between(before: State, after: State) -> list[Step]:
    """The public steps one move made: a transfer settled, a trick won, perhaps a new deal."""
    steps: list[Step] = []
    for transfer in after["transfers"][len(before["transfers"]) :]:
        kind: Literal["exchange", "swap"] = "swap" if transfer["kind"] == "swap" else "exchange"
        steps.append(_step(kind, after, gave={seat: list(transfer[seat]) for seat in SEATS}))
    for trick in after["history"][len(before["history"]) :]:
        played = {entry["card"] for entry in trick["cards"]}
        ended = len(after["rounds"]) > len(before["rounds"])
        result = after["rounds"][-1] if ended else None
        hands = {seat: [c for c in before["hands"][seat] if c not in played] for seat in SEATS}
        tricks = dict(after["tricks"]) if not ended else _final_tricks(result)
        steps.append(
            _step(
                "trick",
                after,
                hands=hands,
                tricks=tricks,
                trick=trick,
                result=result,
                round_number=trick["round"],
                aside=before["aside"],
            )
        )
    if after["round"] > before["round"]:
        steps.append(_deal(after))
    return steps


def _final_tricks(result: RoundResult | None) -> dict[Seat, int]:
    assert result is not None
    return {"keeper": result["keeper"], "shadow": result["shadow"]}


def _step(
    kind: Literal["deal", "exchange", "swap", "trick", "lead"],
    state: State,
    *,
    hands: dict[Seat, list[str]] | None = None,
    tricks: dict[Seat, int] | None = None,
    gave: dict[Seat, list[str]] | None = None,
    trick: Trick | None = None,
    result: RoundResult | None = None,
    round_number: int | None = None,
    aside: list[str] | None = None,
    lead: Played | None = None,
    number: int | None = None,
) -> Step:
    return {
        "kind": kind,
        "round": round_number or state["round"],
        "hands": hands or {seat: list(state["hands"][seat]) for seat in SEATS},
        "aside": list(state["aside"] if aside is None else aside),
        "tricks": tricks or dict(state["tricks"]),
        "track": state["track"],
        "gave": gave,
        "trick": trick,
        "result": result,
        "lead": lead,
        "number": number,
    }
