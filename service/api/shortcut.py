"""A read of a game's view, answered before Flask makes a request of it.

The move page polls its game's view, ``GET /api/play/<token>``, with the
``If-None-Match`` of the last view it read (``play.js``), every few seconds
while it is open; a client of the API reads it before each move. The view
answers from one statement by primary key (:func:`~service.api.routes.stored_answer`:
a 304 for a poll of an unchanged game, the view otherwise), but around the
statement Flask makes the request's context and session and runs every
extension's hooks before and after the view, then its teardown, which cost
more than the read and the view together (``bench/calls.py`` counts them).

:class:`ViewShortcut` wraps the app's WSGI callable and answers such a read
itself, with the view's own functions: the token's signature
(:func:`~service.links.signed_link`), the view's answer read by primary key
in the request's language (:func:`~service.api.routes.stored_answer`,
:func:`~service.language.request_language`), with what the hooks add to it:
the security headers and ``no-store`` (:func:`~service.security.add_headers`)
and the language's ``Vary`` (:func:`~service.language.varies_by_language`);
it is counted in the metrics under the view's route.

Anything else goes the normal way, which answers it as it always has:

- any method but GET and HEAD, any other path, a query string (``?lang=``
  sets a cookie, a NUL is refused), a body or its announcement (read and
  limited by :mod:`service.request_limits`), a cookie besides the language's
  (a session, which Flask may refresh on any request, or the dashboard's
  sign-in);
- a token that is not a good signature, a link that is not the player's
  (rotated or revoked: the view answers 404), a game of a return match (its
  view holds the match's score, read from the other game); the tokens of the
  two last are remembered (:data:`PASSED_ON`), and their next reads passed on
  unread;
- a host Flask's routing refuses (one IDNA cannot write: it answers 400);
- a database error, which the view then meets itself and answers, but for an
  outage (a timeout, the server down), which the app is handed to answer at
  once (a 503) rather than wait for it a second time; a connection found
  dropped goes the normal way, which runs the request again on a new one.

``tests/test_view_shortcut.py`` checks that both ways answer alike.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from cachetools import LRUCache
from flask import Flask, Request, request
from flask_babel import force_locale
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from werkzeug.wrappers import Response

from ..errors import is_outage
from ..language import COOKIE, LOCALES, request_language, varies_by_language
from ..links import signed_link
from ..metrics import STARTED, count_request, start_timer
from ..models import db
from ..security import add_headers, served_securely
from .routes import stored_answer

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

# The view this answers for, by its endpoint.
ENDPOINT = "api.view"
# Methods the view answers alike (Flask answers HEAD with GET's view, without its body).
METHODS = ("GET", "HEAD")
# Where the shortcut leaves, in the request's environ, the outage it met: the app raises it.
OUTAGE = "splitmind.view_outage"
# Tokens whose row says the shortcut cannot answer them (a game of a return match, a link no
# longer the player's: neither ever changes back) that each process remembers, so that their
# reads, which the view answers, do not read the row twice.
PASSED_ON = 1024


class ViewShortcut:
    """The app's WSGI callable, with each read of a game's view answered by :meth:`answer`
    and every other request passed on to ``wsgi_app``."""

    def __init__(self, app: Flask, wsgi_app: WSGIApplication) -> None:
        self.app = app
        self.wsgi_app = wsgi_app
        rule = next(app.url_map.iter_rules(ENDPOINT))
        self.route = rule.rule
        # The path up to its one argument, the token: "/api/play/".
        self.prefix = self.route.partition("<")[0]
        self.passed_on: LRUCache[str, bool] = LRUCache(maxsize=PASSED_ON)
        self.lock = threading.Lock()

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        started = environ[STARTED] = time.perf_counter()
        token = self.token(environ)
        response = None if token is None else self.answer(environ, token)
        if response is None:
            return self.wsgi_app(environ, start_response)
        count_request(self.route, environ["REQUEST_METHOD"], response.status_code, started)
        return response(environ, start_response)

    def answer(self, environ: WSGIEnvironment, token: str) -> Response | None:
        """The view's answer to a read of the view of :meth:`token`; ``None`` for any other
        request."""
        asked: Request = self.app.request_class(environ)
        if set(asked.cookies) - {COOKIE} or not _routable(asked):
            return None
        # The view's own language: it never knows the player's stored one (g.player_language).
        # A locale made once: forcing it by its code would parse the code each time.
        language = LOCALES[request_language(asked, None)]
        with self.app.app_context(), force_locale(language):
            signed = signed_link(token)
            if signed is None:
                return None
            try:
                with db.engine.connect() as connection:
                    # As the view reads (service.unit_of_work.reading): no transaction to open.
                    connection.execution_options(isolation_level="AUTOCOMMIT")
                    response = stored_answer(signed, asked.if_none_match, connection=connection)
            except SQLAlchemyError as exc:
                dropped = isinstance(exc, DBAPIError) and exc.connection_invalidated
                if is_outage(exc) and not dropped:  # a dropped one: the view runs on a new one
                    # Answered as the view would answer it, without waiting for it again.
                    environ[OUTAGE] = exc
                return None
            except Exception:  # the view meets it again, and answers it as it answers any
                return None
        if response is None:
            with self.lock:
                self.passed_on[token] = True
            return None
        # In the order the app's hooks add them: the language's, then the security headers.
        varies_by_language(response)
        add_headers(response, path=asked.path, secure=served_securely(self.app, asked))
        return response

    def token(self, environ: WSGIEnvironment) -> str | None:
        """The token of a bodiless GET or HEAD of the view, with no query; ``None`` for any
        other request."""
        if (
            environ["REQUEST_METHOD"] not in METHODS
            or environ.get("QUERY_STRING")
            or environ.get("CONTENT_LENGTH", "0") not in ("", "0")
            or environ.get("CONTENT_TYPE")
            or "HTTP_TRANSFER_ENCODING" in environ
        ):
            return None
        path: str = environ.get("PATH_INFO", "")
        token = path.removeprefix(self.prefix)
        # As the route's converter takes it: one segment, not empty.
        if token == path or not token or "/" in token:
            return None
        with self.lock:
            return None if token in self.passed_on else token


def _routable(asked: Request) -> bool:
    """Whether Flask's routing takes the request's host, as it does only a name that IDNA
    can write (werkzeug's ``Map.bind``): no empty label, none of more than 63 characters.
    It answers any other 400, and so does the shortcut, by passing the request on."""
    try:
        asked.host.lower().partition(":")[0].encode("idna")
    except UnicodeError:
        return False
    return True


def _raise_outage_met() -> None:
    """Raise the outage the shortcut met reading a view (:data:`OUTAGE`), so the app
    answers it at once (a 503, :mod:`service.errors`) rather than wait for it a second time."""
    exc = request.environ.pop(OUTAGE, None)
    if exc is not None:
        raise exc


def init_app(app: Flask) -> None:
    """Answer reads of games' views ahead of the app (after the API's routes are added)."""
    app.wsgi_app = ViewShortcut(app, app.wsgi_app)  # type: ignore[method-assign]
    # Right after the metrics' timer, so that the outage's 503 is counted as the view's, and
    # before every other hook: none of them waits on the database before it.
    hooks = app.before_request_funcs.setdefault(None, [])
    hooks.insert(hooks.index(start_timer) + 1, _raise_outage_met)
