"""Security headers on every response of the service."""

from __future__ import annotations

from flask import Flask, Response, request

from .links import TOKEN_PATHS

CSP = "default-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'"
# Pages whose address carries a credential (a player's, a creator's or an opponent's link).
PRIVATE_PREFIXES = (*TOKEN_PATHS, "/admin", "/mailbox")


def init_app(app: Flask) -> None:
    """Add the headers after every request."""

    @app.after_request
    def secure_headers(response: Response) -> Response:
        headers = response.headers
        headers.setdefault("Content-Security-Policy", CSP)
        headers.setdefault("Referrer-Policy", "same-origin")
        headers.setdefault("X-Content-Type-Options", "nosniff")
        headers.setdefault("X-Frame-Options", "DENY")
        if request.is_secure or app.config["BASE_URL"].startswith("https://"):
            headers.setdefault("Strict-Transport-Security", "max-age=31536000; includeSubDomains")
        if request.path.startswith(PRIVATE_PREFIXES):
            headers["Cache-Control"] = "no-store"
        return response
