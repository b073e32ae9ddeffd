"""Flask extensions, created unbound and bound to an app in :func:`service.create_app`."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from contextlib import suppress
from functools import wraps
from typing import Any, TypeVar

from flask import current_app, request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_migrate import Migrate
from flask_wtf.csrf import CSRFError, CSRFProtect
from sqlalchemy import JSON

from .models import POSTGRESQL_ONLY_INDEXES, UTCDateTime, db

View = TypeVar("View", bound=Callable[..., Any])


def render_type(kind: str, obj: Any, context: Any) -> str | bool:
    """Write the project's column types into migrations as plain SQLAlchemy types."""
    if kind != "type":
        return False
    if isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    if isinstance(obj, JSON):
        context.imports.add("from sqlalchemy.dialects import postgresql")
        return 'sa.JSON().with_variant(postgresql.JSONB(), "postgresql")'
    return False


def compared(obj: Any, name: str | None, kind: str, reflected: bool, compare_to: Any) -> bool:
    """Whether autogenerate compares a schema object: all but the indexes that the migrations
    make on PostgreSQL alone (:data:`service.models.POSTGRESQL_ONLY_INDEXES`)."""
    return not (kind == "index" and name in POSTGRESQL_ONLY_INDEXES)


migrate = Migrate(
    render_as_batch=True, compare_type=True, render_item=render_type, include_object=compared
)
csrf = CSRFProtect()
# An IPv6 host picks its addresses from a whole /64 (SLAAC, privacy addresses): counted one
# address at a time it would have no limit at all.
IPV6_CLIENT_PREFIX = 64


def client_network() -> str:
    """Whom a per-client limit counts: the client's IPv4 address (mapped into IPv6 or not),
    or its IPv6 /64. The client's address is the proxy's word for it behind one
    (``TRUSTED_PROXIES``)."""
    address = get_remote_address()
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:  # no address (a test client's, say): counted as given
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/{IPV6_CLIENT_PREFIX}", strict=False))
    return str(ip)


# A player's links (the move page, the API and its polls, the home page) carry their own
# credential and are limited nowhere, nor are the front page and the rules beside them.
# tests/test_rate_limits.py checks that none of their routes declares one.
UNLIMITED_BLUEPRINTS = frozenset({"players", "api", "home"})


class Limits(Limiter):
    """Flask-Limiter, passing over the requests of :data:`UNLIMITED_BLUEPRINTS` at once.

    A request filter would exempt them too, but only once the limiter has
    identified the request's view and checked whether its meta limits apply,
    some 120 function calls on every request (a poll makes 1,700 in all).
    """

    def _check_request_limit(self, *args: Any, **kwargs: Any) -> None:
        """Flask-Limiter's ``before_request`` hook (and its decorators' check), for the
        requests of the blueprints that have limits."""
        if request.blueprint not in UNLIMITED_BLUEPRINTS:
            super()._check_request_limit(*args, **kwargs)


# Storage comes from RATELIMIT_STORAGE_URI, so several web processes can share counts. Each
# window is one count (Flask-Limiter's default, stated here): sign-in gives back what a right
# password drew (service.allowances.give_back), which a moving window could not.
# Whatever the storage raises comes as limits' StorageError, which service.errors answers with a
# 503: a limit that cannot be checked refuses the request (neither swallow_errors, which would
# let it through, nor an in-memory fallback, which each worker would count on its own).
limiter = Limits(
    key_func=client_network,
    strategy="fixed-window",
    # A Redis that accepts and never answers is as down as one that refuses: a request waits
    # 2 s for it at most, whatever the default of the installed redis client.
    storage_options={"wrap_exceptions": True, "socket_timeout": 2, "socket_connect_timeout": 2},
)


def limited_form(limit: str) -> Callable[[View], View]:
    """Limit a form's POSTs per IP to ``limit``, counting each before its CSRF token is checked.

    Flask-Limiter counts a view's own limit as the view is called, after every
    ``before_request`` hook, and CSRFProtect's is one: a POST it refused, for a
    missing or stale token, would never be counted. So the view is exempt from
    that hook and checks its token itself, once the limiter has counted it.

    A token refused is left for the view's form to refuse again (a ``FlaskForm``
    checks its own token unless this check passed it): the view shows the form
    as it was filled in, with a fresh token, saying why
    (:func:`service.lobby.forms.refilled`), where the
    error page would lose what was typed into a form left open past the token's
    time or whose session cookie was lost. The view must validate such a form
    before it acts on anything posted.
    """

    def decorate(view: View) -> View:
        @wraps(view)
        def counted(*args: Any, **kwargs: Any) -> Any:
            if current_app.config["WTF_CSRF_ENABLED"]:
                # Its form refuses it again: see service.lobby.forms.refilled.
                with suppress(CSRFError):
                    csrf.protect()
            return view(*args, **kwargs)

        return limiter.limit(limit, methods=["POST"])(csrf.exempt(counted))

    return decorate


__all__ = ["csrf", "db", "limited_form", "limiter", "migrate"]
