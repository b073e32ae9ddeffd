"""The JSON API: ``/api/play/<token>`` and its OpenAPI document."""

from flask import Blueprint

bp = Blueprint("api", __name__, url_prefix="/api")

from . import routes  # noqa: E402,F401
