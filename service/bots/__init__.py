"""Computer players for Split Mind: pure, like the engine, and blind to what their seat cannot see.

A computer player's only input is a seat's view (``service.rules.seat_view``,
the data of the JSON API) and a seeded ``random.Random``; its answer is an
action in the engine's notation, as :func:`service.rules.apply` and the JSON
API take it. The same view and seed always give the same action.

:data:`LEVELS` is the one table of levels:

- ``random``: any legal move;
- ``easy``: card sense, no look ahead (``cardsense``);
- ``medium``: a short flat search over imagined deals of the unseen cards
  (``search``), within 18 ms of processor time;
- ``hard``: information-set Monte Carlo tree search over the same imagined
  deals (``tree``), within 180 ms of processor time.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import partial
from typing import Any, Protocol

from .knowledge import View
from .search import FlatSearch
from .simple import Action, CardSense, RandomPlayer
from .tree import TreeSearch


class Player(Protocol):
    """A computer player: chooses the move a seat owes from that seat's view."""

    def choose(self, view: View, rng: random.Random) -> Action:
        """The action for the seat of ``view``, which must owe one."""
        ...


LEVELS: dict[str, Callable[..., Player]] = {
    "random": RandomPlayer,
    "easy": CardSense,
    "medium": partial(FlatSearch, playouts=40, budget_ms=18.0, gifts=8),
    "hard": partial(TreeSearch, playouts=1000, budget_ms=180.0, gifts=30),
}


# The levels whose search has a time limit as well as a budget of play-outs.
TIMED = ("medium", "hard")


def player(level: str, *, timed: bool = True, **settings: Any) -> Player:
    """The computer player of ``level``; ``settings`` replace its standard ones (search budgets).

    ``timed=False`` lifts the time limit of a search and leaves its budget of
    play-outs alone to bound it: the same view and seed then give the same
    move however slow or busy the machine.
    """
    if level not in LEVELS:
        raise ValueError(f"no level {level!r}; the levels are {', '.join(LEVELS)}")
    if not timed and level in TIMED:
        settings = {"budget_ms": None, **settings}
    return LEVELS[level](**settings)


def choose(level: str, view: View, rng: random.Random) -> Action:
    """The move the computer player of ``level`` makes from ``view``."""
    return player(level).choose(view, rng)
