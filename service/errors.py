"""Error pages: plain HTML for people, JSON under ``/api/``. They reveal nothing."""

from __future__ import annotations

from flask import Flask, jsonify, render_template, request
from werkzeug.exceptions import HTTPException


def wants_json() -> bool:
    """Whether the request is for the JSON API."""
    return request.path.startswith("/api/")


def error_response(status: int, code: str, message: str, **extra: object):  # noqa: ANN201
    """An error in the form the client expects: JSON for the API, a page otherwise."""
    if wants_json():
        return jsonify(error={"code": code, "message": message, **extra}), status
    return render_template("errors/error.html", status=status, message=message), status


def init_app(app: Flask) -> None:
    """Register the handlers."""

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):  # noqa: ANN202
        code = (exc.name or "error").lower().replace(" ", "_")
        if exc.code == 404:
            return error_response(404, "not_found", "There is nothing at this address.")
        return error_response(exc.code or 500, code, exc.description or exc.name)
