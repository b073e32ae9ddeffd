"""Pages reached from emails and the front page: start a game, confirm, accept or decline,
stop notifications, ask for a rematch. Every change is a POST behind a confirm button."""

from flask import Blueprint

bp = Blueprint("lobby", __name__)

from . import moving, routes  # noqa: E402,F401
