"""One-row reads run on the database driver's own cursor, for the requests made most.

A poll of a game's view, a read of the view and a page read again unchanged
are each one SELECT by primary key (``service.perspective``,
``service.players.kept``). Around that one statement SQLAlchemy's execution
(its compiled-statement cache, its execution context, its result and row
objects) cost a poll some 300 of its 1,000 function calls, more than the rest
of the answer (``bench/calls.py``). :func:`one_or_none` runs such a statement,
compiled once, on psycopg's cursor instead, and gives back what SQLAlchemy
would have: the same values (each column's type reads its own, a timestamp in
UTC as :class:`~service.models.UTCDateTime` reads it), by the same names, the
same errors (a dropped connection invalidated, the error wrapped as
SQLAlchemy wraps it), and the engine's cursor events, which the tests count
statements by.

Only on PostgreSQL, and only outside a transaction (an autocommit connection,
as those reads are made: ``service.unit_of_work.reading``): an error then
leaves no transaction aborted behind it. Anywhere else SQLAlchemy runs it.
``tests/test_driver_reads.py`` checks both give the same rows.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, cast

import psycopg
from sqlalchemy import Connection, Dialect, Select
from sqlalchemy.exc import DBAPIError, StatementError


@dataclass(frozen=True)
class Compiled:
    """A statement as psycopg runs it: its SQL, its parameters' fixed values, how each of its
    columns' values is read and the class of the rows it gives."""

    sql: str
    fixed: Mapping[str, Any]
    readers: tuple[Callable[[Any], Any] | None, ...]
    row: type


def one_or_none(connection: Connection, statement: Select[Any], params: Mapping[str, Any]) -> Any:
    """The one row ``statement`` reads with ``params`` on ``connection``, or ``None``; a row
    whose values are read by their column's name, as SQLAlchemy's :class:`~sqlalchemy.Row`.

    ``statement`` is one built once (its compiled form is kept for it).
    """
    driver = connection.connection.driver_connection
    if not isinstance(driver, psycopg.Connection) or not driver.autocommit:
        return connection.execute(statement, params).one_or_none()
    compiled = _compiled(statement, connection.dialect)
    values = {**compiled.fixed, **params}
    try:
        cursor = driver.cursor()
    except psycopg.Error as exc:  # a connection closed already: psycopg refuses a cursor
        raise _wrapped(connection, exc, compiled.sql, None) from exc
    with cursor:
        # As SQLAlchemy's execution does: whoever listens for statements hears of this one.
        events = connection.dispatch
        if events.before_cursor_execute:
            events.before_cursor_execute(connection, cursor, compiled.sql, values, None, False)
        try:
            cursor.execute(compiled.sql, values)
            found = cursor.fetchone()
        except psycopg.Error as exc:
            raise _wrapped(connection, exc, compiled.sql, cursor) from exc
        if events.after_cursor_execute:
            events.after_cursor_execute(connection, cursor, compiled.sql, values, None, False)
    if found is None:
        return None
    read = [
        value if reader is None or value is None else reader(value)
        for reader, value in zip(compiled.readers, found, strict=True)
    ]
    return compiled.row(*read)


@cache
def _compiled(statement: Select[Any], dialect: Dialect) -> Compiled:
    """``statement`` compiled for ``dialect`` (psycopg's), once.

    Refused (``ValueError``) when its parameters would need what SQLAlchemy does
    at each execution: a value converted before it is sent, a list expanded.
    """
    compiled = statement.compile(dialect=dialect)
    for name, bind in compiled.binds.items():
        if bind.expanding or bind.type.dialect_impl(dialect).bind_processor(dialect) is not None:
            raise ValueError(f"the parameter {name} is converted when sent: run it by SQLAlchemy")
    columns = list(statement.selected_columns)
    readers = tuple(
        column.type.dialect_impl(dialect).result_processor(dialect, None) for column in columns
    )
    # The values the statement holds (a kind of event it looks for): the caller gives the rest.
    binds = compiled.binds.items()
    fixed = {name: bind.effective_value for name, bind in binds if not bind.required}
    keys = statement.selected_columns.keys()
    return Compiled(compiled.string, fixed, readers, namedtuple("Row", keys))


def _wrapped(
    connection: Connection, exc: psycopg.Error, sql: str, cursor: psycopg.Cursor[Any] | None
) -> StatementError:
    """``exc`` as SQLAlchemy raises a driver's error: its own class of it, the connection
    invalidated if it was dropped, with every other its pool opened before (the pool then
    opens new ones), no parameter shown."""
    dropped = connection.dialect.is_disconnect(
        cast(Any, exc), connection.connection, cast(Any, cursor)
    )
    if dropped:
        # As SQLAlchemy does: the pool's other connections, opened before this one was
        # dropped, are as stale (a restarted server) and are replaced at their next checkout.
        connection.engine.pool._invalidate(connection.connection, exc)
        connection.invalidate(exc)
    return DBAPIError.instance(
        sql,
        None,
        exc,
        psycopg.Error,
        hide_parameters=True,
        connection_invalidated=dropped,
        dialect=connection.dialect,
    )
