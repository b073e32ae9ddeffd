"""The player's move page: ``/play/<token>``."""

from flask import Blueprint

bp = Blueprint("players", __name__)

from . import routes  # noqa: E402,F401
