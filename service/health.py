"""``GET /healthz``: whether the service can serve, for compose, a load balancer or a monitor.

200 ``{"status": "ok"}`` when the database answers ``SELECT 1`` within a
second, 503 ``{"status": "unavailable"}`` otherwise. On PostgreSQL the check
opens a connection of its own and gives up after the second, wherever it is
(connecting to a server that accepts and never answers, or waiting for its
reply): no pooled connection is left stuck behind a frozen server, and the
check never waits for the statement timeout of requests. It sets no cookie
and no rate limit counts it. It does not ask the rate limiter's storage: while
that is down, only the requests a limit guards are refused (503,
:func:`service.errors.limits_unavailable`), and players play on.

The pages that lead to a form (the front page, the new-game and lost-links
forms) ask the database too (:func:`check_database`), so that an outage
shows there as a 503 rather than after the visitor has filled the form in.
"""

from __future__ import annotations

import asyncio
import threading

import psycopg
from flask import Flask, Response, jsonify
from sqlalchemy import select, text
from sqlalchemy.exc import SQLAlchemyError

from .config import conninfo
from .errors import RETRY_AFTER
from .extensions import db, limiter

# Seconds the database has to answer the health check.
HEALTH_TIMEOUT = 1.0


def check_database() -> None:
    """Ask the database a trivial question; an outage raises, and the visitor gets a 503."""
    db.session.execute(select(1))


async def _select_one(conninfo: str) -> None:
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as connection:
        await connection.execute("SELECT 1")


def _ask_postgres(conninfo: str, timeout: float) -> None:
    """``SELECT 1`` on a connection of its own, abandoned after ``timeout`` seconds.

    The check runs its own event loop on a thread of its own, so it works the
    same under any worker, including one whose thread already runs a loop.
    """
    failure: list[BaseException] = []

    def check() -> None:
        try:
            asyncio.run(asyncio.wait_for(_select_one(conninfo), timeout))
        except BaseException as error:  # handed back to the caller's thread
            failure.append(error)

    thread = threading.Thread(target=check, name="healthz", daemon=True)
    thread.start()
    # wait_for gives up at the timeout; the margin covers closing the loop.
    thread.join(timeout + 1.0)
    if thread.is_alive():
        raise TimeoutError("the health check did not finish")
    if failure:
        raise failure[0]


def database_answers(timeout: float = HEALTH_TIMEOUT) -> bool:
    """Whether the database answers ``SELECT 1`` within ``timeout`` seconds."""
    engine = db.engine
    try:
        if engine.url.get_backend_name() == "postgresql":
            _ask_postgres(conninfo(engine.dialect, engine.url), timeout)
        else:
            with engine.connect() as connection:
                connection.execute(text("SELECT 1"))
    except (TimeoutError, psycopg.Error, SQLAlchemyError, OSError):
        return False
    return True


def healthz() -> tuple[Response, int]:
    """``GET /healthz``."""
    if database_answers():
        return jsonify(status="ok"), 200
    # As every answer of an outage says: when to ask again.
    response = jsonify(status="unavailable")
    response.headers["Retry-After"] = str(RETRY_AFTER)
    return response, 503


def init_app(app: Flask) -> None:
    """Serve ``/healthz``, exempt from rate limits."""
    app.add_url_rule("/healthz", "healthz", limiter.exempt(healthz))
