"""How requests get their database connection: pinged only after a pause, retried once if dropped.

A pooled connection that served a request a moment ago is almost surely still
there, so a round trip to check it before every request would be wasted: the
pool pings a connection only when it has been idle for
:data:`IDLE_PING_SECONDS` (a database restarted meanwhile, or a proxy that
closes idle connections), and replaces it if the ping fails.

A connection can still die between two requests (the server restarted within
the pause, an administrator terminated it). The request that finds it dead is
run again once, on a new connection, when nothing of it can have been
committed: no commit was attempted, so the server rolled back all the request
did. A move is never applied twice. Any other request answers the outage's 503
(:mod:`service.errors`), and SQLAlchemy replaces the pool's other connections,
which the same event made stale.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from flask import Flask
from sqlalchemy import Engine, event
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.pool import ConnectionPoolEntry

from .models import FOLD, db, folded

# Seconds a pooled connection may have been idle and still be handed out without a ping.
IDLE_PING_SECONDS = 2.0
# Where a pooled connection keeps when it was last handed back, and a session whether it
# has tried to commit (so a request that lost its connection is not run again).
RETURNED_AT = "splitmind.returned_at"
COMMITTED = "splitmind.committed"


def _returned(dbapi_connection: Any, entry: ConnectionPoolEntry) -> None:
    entry.info[RETURNED_AT] = time.monotonic()


def _ping_if_idle(engine: Engine) -> Callable[[Any, ConnectionPoolEntry, Any], None]:
    """A checkout hook that pings a connection idle a while; a failed ping makes the pool
    replace it with a new one."""

    def checkout(dbapi_connection: Any, entry: ConnectionPoolEntry, proxy: Any) -> None:
        returned = entry.info.get(RETURNED_AT)
        if returned is None or time.monotonic() - returned < IDLE_PING_SECONDS:
            return
        try:
            engine.dialect.do_ping(dbapi_connection)
        except Exception as exc:
            raise DisconnectionError("the pooled connection did not answer its ping") from exc

    return checkout


def _committing(session: Any) -> None:
    session.info[COMMITTED] = True


def may_run_again(exc: BaseException) -> bool:
    """Whether a request that raised ``exc`` may be run again on a new connection.

    Only when its connection was lost and the request never tried to commit:
    the server has then rolled back everything the request sent.
    """
    return (
        isinstance(exc, DBAPIError)
        and exc.connection_invalidated
        and not db.session.info.get(COMMITTED)
    )


def _give_fold(connection: Any, _: ConnectionPoolEntry) -> None:
    """Give a new SQLite connection the function that PostgreSQL's schema has to fold names
    (:data:`~service.models.FOLD`)."""
    connection.create_function(FOLD, 1, folded, deterministic=True)


def start_again() -> None:
    """Forget what the failed attempt loaded, so the next one reads afresh."""
    db.session.rollback()


def init_app(app: Flask) -> None:
    """Ping idle connections on checkout; note each commit attempt (call after ``db.init_app``)."""
    with app.app_context():
        engine = db.engine
    event.listen(engine, "checkin", _returned)
    event.listen(engine, "checkout", _ping_if_idle(engine))
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _give_fold)
    if not event.contains(db.session, "before_commit", _committing):
        event.listen(db.session, "before_commit", _committing)
