"""The return match: two games with roles swapped, scored per RULES.md."""

from __future__ import annotations

from typing import Any, Literal

from .engine import TRACK_LENGTH, State

Player = Literal["first", "second"]


def shadow_score(game: State) -> int:
    """What the Shadow of a game scores: track cards turned up, 10 if the Shadow won."""
    return TRACK_LENGTH if game["winner"] == "shadow" else game["track"]


def return_match(first: State, second: State | None = None) -> dict[str, Any]:
    """Score a return match.

    The ``first`` player is the Keeper of the first game and the Shadow of the
    second. Each player scores for the game they played as Shadow; the higher
    score wins; if both scored 10, the one who needed fewer rounds wins;
    otherwise it is a draw. Until both games are over, ``winner`` is ``None``
    and ``over`` is false; a game not over yet scores its track so far.
    """
    games: dict[Player, State | None] = {"first": second, "second": first}
    scores = {player: shadow_score(game) if game else 0 for player, game in games.items()}
    rounds = {player: len(game["rounds"]) if game else 0 for player, game in games.items()}
    over = all(game is not None and game["phase"] == "over" for game in games.values())
    winner: Player | None = None
    if over:
        if scores["first"] != scores["second"]:
            winner = "first" if scores["first"] > scores["second"] else "second"
        elif scores["first"] == TRACK_LENGTH and rounds["first"] != rounds["second"]:
            winner = "first" if rounds["first"] < rounds["second"] else "second"
    return {"scores": scores, "rounds": rounds, "over": over, "winner": winner}
