"""Security headers on every response of the service."""

from __future__ import annotations

from flask import Flask, Request, Response, request, session

from .config import over_https
from .links import TOKEN_PATHS

CSP = "default-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'"
# Set on every response that has not set them itself.
HEADERS: tuple[tuple[str, str], ...] = (
    ("Content-Security-Policy", CSP),
    ("Referrer-Policy", "same-origin"),
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
)
HSTS = ("Strict-Transport-Security", "max-age=31536000; includeSubDomains")
# Answers no cache may keep: pages whose address carries a credential (a player's, a
# creator's or an opponent's link), the dashboard and the local mailbox, and the probes of
# the service's health, which say how it is now.
PRIVATE_PREFIXES = (*TOKEN_PATHS, "/admin", "/mailbox", "/healthz", "/metrics")


def add_headers(response: Response, *, path: str, secure: bool) -> set[str]:
    """Add the headers every response has that it has not set itself (HSTS too when
    ``secure``: served over HTTPS), and ``Cache-Control: no-store`` under
    :data:`PRIVATE_PREFIXES`; the names of the headers it had before, in lower case.

    Apart from the hook for :mod:`service.api.shortcut`, which answers a view before Flask
    makes the request's context.
    """
    headers = response.headers
    # One pass over the headers, where a setdefault of each would make one per header.
    present = {name.lower() for name, _ in headers}
    for name, value in (*HEADERS, HSTS) if secure else HEADERS:
        if name.lower() not in present:
            headers.add(name, value)
    if path.startswith(PRIVATE_PREFIXES):
        headers["Cache-Control"] = "no-store"
    return present


def served_securely(app: Flask, asked: Request) -> bool:
    """Whether the service is served over HTTPS (``BASE_URL``), or this request came so."""
    return over_https(app.config["BASE_URL"]) or asked.is_secure


def init_app(app: Flask) -> None:
    """Add the headers after every request."""

    @app.after_request
    def secure_headers(response: Response) -> Response:
        present = add_headers(response, path=request.path, secure=served_securely(app, request))
        if (
            not request.path.startswith(PRIVATE_PREFIXES)
            and "cache-control" not in present
            and (session or "set-cookie" in present)
        ):
            # A page made for one visitor's session (a form's CSRF token): no shared cache
            # keeps it. Flask sets the session's cookie after this, when it was changed. (Not
            # session.accessed: Flask-Login looks into every session, so it always holds.)
            response.headers["Cache-Control"] = "private, no-store"
        return response
