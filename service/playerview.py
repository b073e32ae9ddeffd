"""What a player sees: the engine's seat view plus what the service knows.

The move page, the JSON API and every email render from :func:`player_view`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .models import Game, Player
from .rules import return_match, seat_view

STATUS_WORDS = {
    "waiting": "waiting for its players",
    "active": "in play",
    "finished": "over",
    "timed_out": "over: a player ran out of time",
    "abandoned": "abandoned: neither player moved in time",
    "cancelled": "cancelled",
}


def describe_status(status: str) -> str:
    """A game status in words."""
    return STATUS_WORDS.get(status, status)


def match_summary(game: Game) -> dict[str, Any] | None:
    """The return match's score, by player email, for a game that belongs to one."""
    if game.match is None:
        return None
    games = {g.match_game: g for g in game.match.games}
    first = games.get(1)
    if first is None:
        return None
    second = games.get(2)
    result = return_match(first.state, second.state if second else None)
    # "first" is the Keeper of game 1, who is the Shadow of game 2.
    names = {"first": first.player("keeper"), "second": first.player("shadow")}
    winner = result["winner"]
    return {
        "game": game.match_game,
        "scores": {names[p].email: result["scores"][p] for p in names},
        "players": {names[p].email: names[p].name for p in names},
        "over": result["over"],
        "winner": names[winner].email if winner else None,
        "draw": result["over"] and winner is None,
    }


def player_view(player: Player) -> dict[str, Any]:
    """The seat view of the engine, plus what the service knows: version, names, deadline."""
    game = player.game
    view = seat_view(game.state, player.seat)
    open_game = game.status == "active"
    if not open_game:
        view.update(your_turn=False, to_act=[], legal=[])
    opponent = game.player("shadow" if player.seat == "keeper" else "keeper")
    view.update(
        game=game.id,
        version=game.version,
        status=game.status,
        winner=game.winner,
        look=game.look,
        you=player.name,
        opponent=opponent.name,
        names={p.seat: p.name for p in game.players},
        deadline=_iso(game.deadline) if open_game else None,
        since=game.state["history"][player.history_mark :],
        match=match_summary(game),
    )
    return view


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat(timespec="seconds") if moment else None
