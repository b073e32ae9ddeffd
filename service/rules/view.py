"""What one seat may see: the single source for the pages, the JSON API and the emails."""

from __future__ import annotations

from typing import Any

from .cards import sort_cards
from .engine import Seat, State, legal_actions, other, to_act


def seat_view(state: State, seat: Seat) -> dict[str, Any]:
    """The game as ``seat`` sees it.

    Holds the seat's own hand and pending choice, the opponent's card count and
    everything public. Never the opponent's hand or pending choice, the cards
    set aside, the seed or the deals.
    """
    acting = to_act(state)
    opponent = other(seat)
    return {
        "seat": seat,
        "round": state["round"],
        "phase": state["phase"],
        "trick": state["trick"],
        "your_turn": seat in acting,
        "to_act": acting,
        "leader": state["leader"],
        "hand": sort_cards(state["hands"][seat]),
        "pending": state["pending"][seat],
        "opponent_cards": len(state["hands"][opponent]),
        "opponent_chosen": state["phase"] in ("exchange", "swap") and opponent not in acting,
        "table": [dict(entry) for entry in state["table"]],
        "suit_order": list(state["suit_order"]),
        "tricks": dict(state["tricks"]),
        "track": state["track"],
        "rounds": [dict(entry) for entry in state["rounds"]],
        "history": list(state["history"]),
        "transfers": [_transfer(entry, seat) for entry in state["transfers"]],
        "winner": state["winner"],
        "legal": legal_actions(state, seat),
    }


def _transfer(entry: dict[str, Any], seat: Seat) -> dict[str, Any]:
    # In a two-seat exchange every card the opponent gave is a card this seat received.
    return {
        "round": entry["round"],
        "kind": entry["kind"],
        "after_trick": entry["after_trick"],
        "gave": list(entry[seat]),
        "received": list(entry[other(seat)]),
    }
