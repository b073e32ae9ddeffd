"""The engine's words for seats and phases, which pages, emails and the API compare against.

A state's ``phase`` is one of :data:`PHASES`. The moves are named after the
phase they are made in, so :data:`ACTION_KINDS` are phases too; in the
:data:`CHOICE_PHASES` both seats choose cards secretly and at the same time.
"""

from __future__ import annotations

from typing import Literal, TypeGuard

Seat = Literal["keeper", "shadow"]
SEATS: tuple[Seat, Seat] = ("keeper", "shadow")


def is_seat(value: object) -> TypeGuard[Seat]:
    """Whether ``value`` names a seat: a check that also tells the type checker."""
    return value in SEATS


EXCHANGE = "exchange"
PLAY = "play"
SWAP = "swap"
OVER = "over"

PHASES: tuple[str, ...] = (EXCHANGE, PLAY, SWAP, OVER)
ACTION_KINDS: tuple[str, ...] = (EXCHANGE, PLAY, SWAP)
CHOICE_PHASES: tuple[str, ...] = (EXCHANGE, SWAP)
