"""What one seat may see: the single source for the pages, the JSON API and the emails."""

from __future__ import annotations

from typing import TypedDict

from .engine import (
    Action,
    Choice,
    Played,
    RoundResult,
    Seat,
    State,
    Trick,
    legal_actions,
    other,
    to_act,
    track_advances,
)
from .names import CHOICE_PHASES
from .variant import TRICKS_PER_ROUND, variant_of


class SeenTransfer(TypedDict):
    """An exchange or swap as one seat saw it: the cards it gave and those it received."""

    round: int
    kind: str
    after_trick: int
    gave: list[str]
    received: list[str]


class SeenRound(RoundResult):
    """A finished round as the views show it: ``advanced`` is how far it turned the
    track up, which is ``moved`` unless the track reached its end."""

    advanced: int


class SeatView(TypedDict):
    """What :func:`seat_view` returns."""

    seat: Seat
    round: int
    phase: str
    trick: int
    your_turn: bool
    choosing: bool
    to_act: list[Seat]
    leader: Seat | None
    hand: list[str]
    pending: list[str] | None
    opponent_cards: int
    opponent_chosen: bool
    table: list[Played]
    suit_order: list[str]
    tricks: dict[Seat, int]
    track: int
    track_length: int
    tricks_per_round: int
    last_round: int
    swap_size: int
    rounds: list[SeenRound]
    history: list[Trick]
    transfers: list[SeenTransfer]
    winner: Seat | None
    legal: list[Action] | Choice


def seat_view(state: State, seat: Seat) -> SeatView:
    """The game as ``seat`` sees it.

    Holds the seat's own hand and pending choice, the opponent's card count and
    everything public. Never the opponent's hand or pending choice, the cards
    set aside, the seed or the deals. Entries of ``table`` and ``history`` are
    shared with the state: read them, do not change them. Every card the
    opponent gave in an exchange or swap is a card this seat received, so both
    sides of a transfer are the seat's to see. Each of ``rounds`` says how far
    it turned the track up (``advanced``), which is its difference in tricks
    (``moved``) unless the track reached its end.

    ``choosing`` says the seat owes a secret choice of cards (an exchange or
    swap) rather than a play; ``tricks_per_round``, ``track_length``,
    ``last_round`` and ``swap_size`` are the game's numbers, which a variant
    may change.
    """
    acting = to_act(state)
    opponent = other(seat)
    variant = variant_of(state)
    choice = state["phase"] in CHOICE_PHASES
    pending = state["pending"][seat]
    return {
        "seat": seat,
        "round": state["round"],
        "phase": state["phase"],
        "trick": state["trick"],
        "your_turn": seat in acting,
        "choosing": choice and seat in acting,
        "to_act": acting,
        "leader": state["leader"],
        "hand": list(state["hands"][seat]),
        "pending": list(pending) if pending else None,
        "opponent_cards": len(state["hands"][opponent]),
        "opponent_chosen": choice and opponent not in acting,
        "table": list(state["table"]),
        "suit_order": list(state["suit_order"]),
        "tricks": dict(state["tricks"]),
        "track": state["track"],
        "track_length": variant.track_length,
        "tricks_per_round": TRICKS_PER_ROUND,
        "last_round": variant.rounds,
        "swap_size": variant.swap_size,
        "rounds": [
            {**result, "advanced": advanced}
            for result, advanced in zip(state["rounds"], track_advances(state), strict=True)
        ],
        "history": list(state["history"]),
        "transfers": [
            {
                "round": entry["round"],
                "kind": entry["kind"],
                "after_trick": entry["after_trick"],
                "gave": entry[seat],
                "received": entry[opponent],
            }
            for entry in state["transfers"]
        ],
        "winner": state["winner"],
        "legal": legal_actions(state, seat, acting),
    }
