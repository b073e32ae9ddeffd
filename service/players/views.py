"""GET shows the seat's view; POST applies a move. GET and HEAD never change anything."""

from __future__ import annotations

from flask import abort, redirect, render_template, url_for

from .. import games
from ..links import player_for
from ..models import Player
from ..playerview import player_view
from . import bp
from .forms import MoveForm


def _player(token: str) -> Player:
    player = player_for(token)
    if player is None:
        abort(404)
    return player


@bp.get("/play/<token>")
def play(token: str):  # noqa: ANN201
    """The move page."""
    player = _player(token)
    return render_template("play/page.html", **_page(player, token))


@bp.post("/play/<token>")
def move(token: str):  # noqa: ANN201
    """Apply the posted move, then show the page again (or say what was wrong)."""
    player = _player(token)
    form = MoveForm()
    if not form.validate():
        return _refused(player, token, form.first_error(), 400)
    action = form.action()
    if action is None:
        return _refused(player, token, form.problem, 400)
    try:
        games.apply_move(player.id, form.version.data, action)
    except games.MoveError as exc:
        return _refused(player, token, exc.message, exc.status)
    return redirect(url_for("players.play", token=token), code=303)


def _refused(player: Player, token: str, message: str, status: int):  # noqa: ANN202
    return render_template("play/page.html", error=message, **_page(player, token)), status


def _page(player: Player, token: str) -> dict:
    return {"view": player_view(player), "token": token, "player": player}


@bp.get("/")
def home():  # noqa: ANN201
    """The front page."""
    return render_template("home.html")
