"""Playtest figures of a finished game, written in the transaction that finishes it.

A finished game never changes, so the statistics page adds up these small rows
instead of reading every game's final state.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .models import Game, GameFigures, db
from .rules import OVER, State


def game_figures(state: State) -> dict[str, Any]:
    """A finished game's figures: result, final track, effects fired, who led rounds 2 and 3."""
    history = state["history"]
    effects = Counter(entry["effect"] for entry in history)
    leaders = {entry["round"]: entry["leader"] for entry in history if entry["trick"] == 1}
    return {
        "complete": state["phase"] == OVER,
        "winner": state["winner"],
        "track": state["track"],
        "tricks": len(history),
        "reset": effects["reset"],
        "swap": effects["swap"],
        "steal": effects["steal"],
        "two_elixirs": effects["none"],
        "round2_leader": leaders.get(2),
        "round3_leader": leaders.get(3),
    }


def record(game: Game) -> None:
    """Add the figures of a game that has just finished (in the caller's transaction)."""
    db.session.add(
        GameFigures(game_id=game.id, finished_at=game.finished_at, **game_figures(game.state))
    )
