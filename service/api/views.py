"""``GET /api/play/<token>`` returns the seat's view; ``POST`` applies a move."""

from __future__ import annotations

from flask import jsonify, request

from .. import games
from ..errors import NOT_FOUND, error_response
from ..links import player_for
from ..playerview import player_view
from . import bp
from .openapi import document


@bp.get("/play/<token>")
def view(token: str):  # noqa: ANN201
    """The seat's view as JSON."""
    player = player_for(token)
    if player is None:
        return error_response(404, "not_found", NOT_FOUND)
    return jsonify(player_view(player))


@bp.post("/play/<token>")
def move(token: str):  # noqa: ANN201
    """Apply ``{"version": V, <action>}``; answer with the new view."""
    player = player_for(token)
    if player is None:
        return error_response(404, "not_found", NOT_FOUND)
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        return error_response(400, "malformed", 'Send a JSON object: {"version": V, ...move}.')
    action = {key: value for key, value in body.items() if key != "version"}
    try:
        games.apply_move(player.id, body.get("version"), action)
    except games.IllegalMove as exc:  # the rule's name lets a client explain it in its own words
        return error_response(exc.status, exc.code, exc.message, rule=exc.rule)
    except games.MoveError as exc:
        return error_response(exc.status, exc.code, exc.message)
    return jsonify(player_view(player))


@bp.get("/openapi.json")
def openapi():  # noqa: ANN201
    """The OpenAPI document of this API."""
    return jsonify(document())
