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
    """The return match's score, by player email, for a game that belongs to one.

    A game of the match that ends other than by play (a timeout, a forfeit, an
    abandoned or cancelled game) ends the match: its winner, if any, wins it.
    """
    if game.match is None:
        return None
    games = {g.match_game: g for g in game.match.games}
    first = games.get(1)
    if first is None:
        return None
    second = games.get(2)
    result = return_match(first.state, second.state if second else None)
    # "first" is the Keeper of game 1, who is the Shadow of game 2.
    players = {"first": first.player("keeper"), "second": first.player("shadow")}
    winner = players[result["winner"]].email if result["winner"] else None
    over = result["over"]
    cut_short = next((g for g in (first, second) if g is not None and _ended_early(g)), None)
    if cut_short is not None:
        over = True
        winner = cut_short.player(cut_short.winner).email if cut_short.winner else None
    return {
        "game": game.match_game,
        "scores": {players[p].email: result["scores"][p] for p in players},
        "players": {players[p].email: players[p].name for p in players},
        "over": over,
        "winner": winner,
        "draw": over and winner is None,
        "ended_early": cut_short is not None,
    }


def _ended_early(game: Game) -> bool:
    return game.status not in ("waiting", "active") and game.state["phase"] != "over"


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
