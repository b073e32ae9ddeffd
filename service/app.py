"""The application factory."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from inspect import iscoroutinefunction
from pathlib import Path
from typing import Any

from flask import Flask, Request, Response, request
from flask.sessions import SecureCookieSession, SecureCookieSessionInterface, SessionMixin
from flask.typing import ResponseReturnValue
from limits.errors import ConfigurationError
from werkzeug.datastructures import ImmutableDict
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.routing import IntegerConverter, Map

from . import connections, logs, metrics, request_limits
from .config import load_config, storage_refused
from .extensions import csrf, db, limiter, migrate
from .models import MAX_ID

PACKAGE = Path(__file__).resolve().parent


def data_folder(name: str) -> Path:
    """``templates/`` or ``migrations/``: inside the installed package, else beside it.

    The repository keeps them at its top level; a wheel carries them inside
    ``service/`` (see pyproject.toml), while a checkout and an editable
    install find them next to the package.
    """
    inside = PACKAGE / name
    return inside if inside.is_dir() else PACKAGE.parent / name


class IdConverter(IntegerConverter):
    """``<id:name>`` in a route: a row id, up to the largest the database holds.

    A larger number is a page not found, not a database error.
    """

    def __init__(self, map: Map) -> None:
        super().__init__(map, min=1, max=MAX_ID)


class CookieSessions(SecureCookieSessionInterface):
    """Flask's signed-cookie session, with no signer made for a request that sends no session
    cookie: a player's link, the API and a poll, which never use one."""

    def open_session(self, app: Flask, request: Request) -> SecureCookieSession | None:
        """An empty session when there is a key but no cookie; else Flask's own answer."""
        if app.secret_key and not request.cookies.get(self.get_cookie_name(app)):
            return self.session_class()
        return super().open_session(app, request)

    def save_session(self, app: Flask, session: SessionMixin, response: Response) -> None:
        """Flask's own, without ``Vary: Cookie`` on a static file, which no cookie changes.

        Flask-Login looks into the session after every request, which to Flask means that
        the answer depends on the cookie: a browser would fetch the file's year-long copy
        again whenever a cookie changed, a shared cache keep one copy per visitor.
        """
        if request.endpoint == "static" and not session.modified:
            session.accessed = False
        super().save_session(app, session, response)


class Service(Flask):
    """The Flask app, running a view again once when it lost its database connection before
    trying to commit (:mod:`service.connections`)."""

    session_interface = CookieSessions()
    # No route answers OPTIONS, which Flask would with an empty 200 of its own: the service
    # serves no other origin, and the API's document lists no such operation. It is a 405
    # with Allow, like any method a path does not take; set before Flask adds its first route.
    default_config = ImmutableDict({**Flask.default_config, "PROVIDE_AUTOMATIC_OPTIONS": False})

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        """Flask's own, with whether ``func`` is a coroutine function asked once, not on every
        call of each hook and view (a dozen a request)."""
        try:
            coroutine = _is_coroutine(func)
        except TypeError:  # an unhashable callable
            coroutine = iscoroutinefunction(func)
        return self.async_to_sync(func) if coroutine else func

    def dispatch_request(self) -> ResponseReturnValue:
        """Call the view; once more, afresh, if its connection dropped and nothing was committed."""
        try:
            return super().dispatch_request()
        except Exception as exc:
            if not connections.may_run_again(exc):
                raise
        connections.start_again()
        return super().dispatch_request()


@lru_cache(maxsize=1024)
def _is_coroutine(func: Callable[..., Any]) -> bool:
    return iscoroutinefunction(func)


def create_app(test_config: Mapping[str, Any] | None = None) -> Flask:
    """The application factory; ``test_config`` overrides settings (tests only)."""
    app = Service(
        "service",
        instance_path=(test_config or {}).get("instance_path"),
        instance_relative_config=True,
        template_folder=str(data_folder("templates")),
    )
    load_config(app, test_config)
    logs.init_app(app)
    metrics.init_app(app)  # first, so it times requests that other hooks answer early
    request_limits.init_app(app)  # before the hooks that read forms
    db.init_app(app)
    connections.init_app(app)
    migrate.init_app(app, db, directory=str(data_folder("migrations")))
    try:
        limiter.init_app(app)  # before CSRF: a POST it refuses counts against the limit too
    except (ValueError, ConfigurationError) as exc:  # the storage could not read its URL
        raise storage_refused(app.config["RATELIMIT_STORAGE_URI"], exc) from None
    csrf.init_app(app)
    app.url_map.converters["id"] = IdConverter
    app.url_map.merge_slashes = False  # see request_limits.refuse_empty_segments

    from . import admin, cli, errors, health, language, mount, security, static_files, templating
    from .api import bp as api_bp
    from .api import shortcut
    from .lobby import bp as lobby_bp
    from .local_mailbox import bp as local_mailbox_bp
    from .mail import worker
    from .players import bp as players_bp
    from .players import kept
    from .players.home import bp as home_bp

    app.register_blueprint(players_bp)
    kept.init_app(app)
    app.register_blueprint(home_bp)
    app.register_blueprint(api_bp)
    app.register_blueprint(lobby_bp)
    if app.config["LOCAL_MAILBOX"]:
        app.register_blueprint(local_mailbox_bp)
    # Player links carry their credential in the URL, not a cookie: no CSRF to guard against.
    csrf.exempt(api_bp)
    csrf.exempt(players_bp)
    errors.init_app(app)
    health.init_app(app)
    security.init_app(app)
    static_files.init_app(app)
    templating.init_app(app)
    language.init_app(app)
    cli.init_app(app)
    admin.init_app(app)
    worker.init_app(app)
    shortcut.init_app(app)
    mount.init_app(app)  # outside the shortcut, which reads the path within the service
    if app.config["TRUSTED_PROXIES"]:
        # Outermost: every request's address and scheme are the proxy's word before anything,
        # the views' shortcut too, reads them.
        hops = app.config["TRUSTED_PROXIES"]
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops)  # type: ignore[method-assign]
    return app
