"""The return match: two games with roles swapped, scored per docs/rules.md."""

from __future__ import annotations

from typing import Any, Literal

from .engine import State
from .names import OVER
from .variant import variant_of

Player = Literal["first", "second"]


def shadow_score(game: State) -> int:
    """What the Shadow of a game scores: track cards turned up, all of them if the Shadow won."""
    return variant_of(game).track_length if game["winner"] == "shadow" else game["track"]


def return_match(first: State, second: State | None = None) -> dict[str, Any]:
    """Score a return match.

    The ``first`` player is the Keeper of the first game and the Shadow of the
    second. Each player scores for the game they played as Shadow; the higher
    score wins; if both finished the track, the one who needed fewer rounds wins;
    otherwise it is a draw. Until both games are over, ``winner`` is ``None``
    and ``over`` is false; a game not over yet scores its track so far.
    """
    games: dict[Player, State | None] = {"first": second, "second": first}
    scores = {player: shadow_score(game) if game else 0 for player, game in games.items()}
    rounds = {player: len(game["rounds"]) if game else 0 for player, game in games.items()}
    over = all(game is not None and game["phase"] == OVER for game in games.values())
    both_finished = all(game is not None and game["winner"] == "shadow" for game in games.values())
    winner: Player | None = None
    if over:
        if scores["first"] != scores["second"]:
            winner = "first" if scores["first"] > scores["second"] else "second"
        elif both_finished and rounds["first"] != rounds["second"]:
            winner = "first" if rounds["first"] < rounds["second"] else "second"
    return {"scores": scores, "rounds": rounds, "over": over, "winner": winner}
