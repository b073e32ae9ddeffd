"""Error pages: plain HTML for people, JSON under ``/api/`` and for clients that ask for
JSON alone. They reveal nothing.

A page says what went wrong in the visitor's language; the API keeps its
English messages, with a code a client can explain in its own words.

A database that cannot be reached, does not answer in time or holds a lock
too long is an outage, not a fault: 503 with ``Retry-After``, and a warning in
the log rather than a traceback. So is a rate limiter's storage (Redis) that
cannot be reached: a request whose limit cannot be checked is refused, never
let through unlimited.
"""

from __future__ import annotations

import logging
import math
import sqlite3
import time

from flask import (
    Flask,
    Response,
    current_app,
    g,
    jsonify,
    make_response,
    render_template,
    request,
)
from flask.typing import ResponseReturnValue
from flask_babel import refresh
from flask_limiter import RateLimitExceeded
from flask_wtf.csrf import CSRFError
from limits.errors import StorageError
from psycopg import OperationalError as PostgreSQLUnavailable
from sqlalchemy.exc import InternalError, OperationalError, SQLAlchemyError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from werkzeug.exceptions import HTTPException, ServiceUnavailable

from . import addresses
from .extensions import limiter
from .language import lazy_gettext as _l
from .language import on_dashboard
from .links import address_for, player_for

log = logging.getLogger(__name__)

NOT_FOUND = "There is nothing at this address."

# What a page says for an error that came with no message of the service's own.
PAGE_MESSAGES = {
    400: _l("This request could not be understood."),
    404: _l("There is nothing at this address."),
    405: _l("This address does not take this kind of request."),
    413: _l("This request is larger than the service accepts: nothing was saved."),
    429: _l("Too many requests: wait a while, then try again."),
    500: _l("Something went wrong on our side: try again later."),
    503: _l("The service is unavailable for a moment: try again later."),
}
# What the API says for an error that came with no message of the service's own.
API_MESSAGES = {
    413: "The request is larger than the {MAX_CONTENT_LENGTH} bytes the service reads.",
    503: "The service is unavailable for a moment: try again later.",
}
# PostgreSQL's SQLSTATE for a write refused by a server that takes none: a standby while a
# failover completes, a database set read-only for maintenance. The service opens no
# read-only transaction of its own, so it is the server's state, never the service's fault.
READ_ONLY = "25006"
# Seconds a client is asked to wait before trying again after a database outage.
RETRY_AFTER = 30
UNCHECKED_FORM = _l("This form could not be checked: reload the page and send it again.")


def wants_json() -> bool:
    """Whether the request is for the JSON API."""
    return request.path.startswith("/api/")


def answers_in_json() -> bool:
    """Whether an error is answered in JSON: under the API, and to a client that prefers JSON
    to a page (``Accept: application/json``: a script reading a game's replay, an API address
    mistyped). A browser, and a client that takes anything (``*/*``), get a page."""
    accepted = request.accept_mimetypes
    return wants_json() or accepted.quality("application/json") > accepted.quality("text/html")


def error_response(status: int, code: str, message: str, **extra: object) -> ResponseReturnValue:
    """An error in the form the client expects (:func:`answers_in_json`): JSON or a page."""
    if answers_in_json():
        return jsonify(error={"code": code, "message": message, **extra}), status
    template = "admin/error.html" if on_dashboard() else "errors/error.html"
    return render_template(template, status=status, message=message), status


def page_message(exc: HTTPException) -> str:
    """What an error page says, in the visitor's language.

    A message given where the error was raised (translated there) is kept.
    Werkzeug's descriptions and the CSRF check's reasons are English only, so
    the page has its own words for them (the dashboard answers a failed CSRF
    check with a page of its own, :func:`service.admin.auth.form_not_checked`);
    a 404 always says the same (it reveals nothing), and a 429 describes the
    limit's terms, not the problem.
    """
    if isinstance(exc, CSRFError):
        return str(UNCHECKED_FORM)
    own = exc.description != type(exc).description and exc.code not in (404, 429)
    if own or exc.code not in PAGE_MESSAGES:
        return exc.description or exc.name
    return str(PAGE_MESSAGES[exc.code])


def api_message(exc: HTTPException) -> str:
    """What an API error says, in English: the message given where it was raised, if any."""
    own = exc.description != type(exc).description
    if own or exc.code not in API_MESSAGES:
        return exc.description or exc.name
    return API_MESSAGES[exc.code].format(**current_app.config)


def link_language(path: str) -> str | None:
    """The language stored for the player or address whose link ``path`` carries (``None``
    for none): an error on a page of theirs (a method it does not take, a body it does not
    read, a form refused before its view) is in the language the page is in."""
    prefix, _, rest = path.lstrip("/").partition("/")
    token = rest.partition("/")[0]
    if not token or prefix not in ("play", "me", "rematch"):
        return None
    try:
        if prefix == "me":
            email = address_for(token)
            return addresses.language(email) if email else None
        player = player_for(token)
        return player.language if player is not None else None
    except SQLAlchemyError:  # the error page goes out all the same, in the browser's language
        return None


def http_error(exc: HTTPException) -> Response:
    """The answer to an HTTP error: its status, code and message, and its own headers."""
    code = (exc.name or "error").lower().replace(" ", "_")
    if exc.code == 404:
        code = "not_found"
    if answers_in_json():
        message = NOT_FOUND if exc.code == 404 else api_message(exc)
    else:
        # Refused before the view could say; not an outage or a limit, when looking the
        # link up would wait on the database again, or on a flood of requests.
        if "player_language" not in g and (exc.code or 500) < 500 and exc.code != 429:
            g.player_language = link_language(request.path)
            refresh()  # the language read before this, if any, is read again
        message = page_message(exc)
    response = make_response(error_response(exc.code or 500, code, message))
    # The exception's own headers stay: Allow on a 405 (RFC 9110), Retry-After...
    for name, value in exc.get_headers():
        if name.lower() != "content-type":
            response.headers.add(name, value)
    return response


def is_outage(exc: BaseException) -> bool:
    """Whether an error says the database is unavailable, rather than a fault (``False`` for
    an error that is not the database's).

    PostgreSQL's operational errors are all about the server: down or
    restarting, a statement or lock timeout, a transaction to run again. So is
    a server that takes no writes (:data:`READ_ONLY`). No connection left in
    the pool is one too. SQLite's also say "no such table", a fault: there only
    a locked database file is an outage.
    """
    if not isinstance(exc, SQLAlchemyError):
        return False
    if isinstance(exc, PoolTimeout):
        return True
    orig = getattr(exc, "orig", None)
    if isinstance(orig, sqlite3.OperationalError):
        return "database is locked" in str(orig)
    return isinstance(orig, PostgreSQLUnavailable) or getattr(orig, "sqlstate", None) == READ_ONLY


def outage_reason(exc: BaseException) -> str:
    """What an outage's driver said, in one line: the first of its message.

    libpq goes on over more lines (``Is the server running on that host…``)
    and so does SQLAlchemy's wrapper, with the statement: every log line, the
    web's, the mail worker's and the reply readers', and every command's error
    is one line.
    """
    reason = getattr(exc, "orig", None) or exc
    said = str(reason).strip().splitlines()
    return said[0] if said else type(reason).__name__


def unavailable(what: str, reason: BaseException) -> Response:
    """503 with ``Retry-After`` for an outage of ``what``, logged as one warning line with
    what its driver said (no traceback: the outage is not the service's fault)."""
    log.warning(
        "%s unavailable: %s; answered 503 to %s %s",
        what,
        outage_reason(reason),
        request.method,
        request.path,
    )
    return http_error(ServiceUnavailable(retry_after=RETRY_AFTER))


def database_unavailable(exc: SQLAlchemyError) -> Response:
    """503 with ``Retry-After`` for a database outage; the log says what the driver said.

    Any other database error goes on to be the 500 it is.
    """
    if not is_outage(exc):
        raise exc
    return unavailable("database", exc)


def limits_unavailable(exc: StorageError) -> Response:
    """503 with ``Retry-After`` when the rate limiter's storage fails, wherever it is asked: a
    limit of Flask-Limiter's before the view, an allowance drawn on inside it
    (:mod:`service.allowances`). The request is refused, as its limit cannot be checked, and
    what it started rolls back with its transaction."""
    return unavailable("rate-limit storage", exc.storage_error)


def rate_limited(exc: RateLimitExceeded) -> Response:
    """429 from a limit of Flask-Limiter's, with ``Retry-After``: when the limit's window ends.
    Its storage asked again for that, and failing, the refusal goes without it."""
    response = http_error(exc)
    limit = limiter.current_limit
    try:
        reset_at = limit.window[0] if limit is not None else None
    except StorageError:
        reset_at = None
    if reset_at is not None:
        response.headers["Retry-After"] = str(max(1, math.ceil(reset_at - time.time())))
    return response


def init_app(app: Flask) -> None:
    """Register the handlers."""
    app.register_error_handler(HTTPException, http_error)
    app.register_error_handler(RateLimitExceeded, rate_limited)
    app.register_error_handler(OperationalError, database_unavailable)
    app.register_error_handler(InternalError, database_unavailable)  # READ_ONLY
    app.register_error_handler(PoolTimeout, database_unavailable)
    app.register_error_handler(StorageError, limits_unavailable)
