"""Playtest figures of a finished game, written in the transaction that finishes it.

A finished game never changes, so the statistics page adds up these small rows
instead of reading every game's final state. Each row says whether the computer
played a seat, and at which level, so that games against the computer are
counted apart and the figures of games between people stay theirs alone.
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


def computer_figures(game: Game) -> dict[str, Any]:
    """The seat the computer played in the game and its level; both ``None`` between people."""
    computer = next((player for player in game.players if player.is_computer), None)
    if computer is None:
        return {"computer_seat": None, "computer_level": None}
    return {"computer_seat": computer.seat, "computer_level": computer.computer_level}


def record(game: Game) -> None:
    """Add the figures of a game that has just finished (in the caller's transaction)."""
    db.session.add(
        GameFigures(
            game_id=game.id,
            finished_at=game.finished_at,
            **game_figures(game.state),
            **computer_figures(game),
        )
    )
