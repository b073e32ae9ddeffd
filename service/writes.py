"""Several writes of one change sent to the database as one statement.

A move writes its event, its game's row, the mover's row, the withdrawal of the
mover's turn email and the emails it causes: up to six statements, each a round
trip to PostgreSQL, which was most of the time a move waited. On PostgreSQL
they go as one statement, each write but the last in its WITH clause (a
data-modifying common table expression): the writes are applied together, or
none is, and the last one's row count is the statement's. Elsewhere (SQLite,
which has no such WITH clause) they are executed one after another, in order.

The writes of one statement all see the rows as they were before it, so none
may depend on another's effect: each writes other rows. Their parameters have
names of their own (a prefix per row), as they are given together, and none is
named as a column of a table written (SQLAlchemy would take its value for that
column in every INSERT of the statement that does not give one). An INSERT in
the WITH clause gets no column default computed in Python (SQLAlchemy computes
them for the statement executed, not for those inside it): it gives every such
column its value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy import CursorResult
from sqlalchemy.dialects import postgresql
from sqlalchemy.sql.dml import UpdateBase

from .models import db


@dataclass(frozen=True)
class Write:
    """One INSERT, UPDATE or DELETE (built once, with named bind parameters) and its values."""

    statement: UpdateBase
    params: Mapping[str, Any]


def write_together(writes: Sequence[Write]) -> CursorResult[Any]:
    """Execute ``writes`` as one statement on PostgreSQL, one after another elsewhere, in the
    session's transaction; the result of the last."""
    if not writes:
        raise ValueError("nothing to write")
    connection = db.session.connection()
    if connection.dialect.name != "postgresql" or len(writes) == 1:
        for write in writes:
            result = connection.execute(write.statement, write.params)
        return result
    statement = _together(tuple(write.statement for write in writes))
    params: dict[str, Any] = {}
    for write in writes:
        params.update(write.params)
    return connection.execute(statement, params)


@lru_cache(maxsize=256)
def _together(statements: tuple[UpdateBase, ...]) -> UpdateBase:
    """The last statement with each of the others in its WITH clause; built once for each
    (the statements are themselves built once). Raises ``ValueError`` if two of them name a
    parameter alike (one value would be given to both), if one names a parameter as a
    column of a table written, or if one but the last leaves a column to a default computed
    in Python (it would be written NULL)."""
    seen: set[str] = set()
    columns = {column.key for statement in statements for column in statement.table.c}
    for number, statement in enumerate(statements, 1):
        compiled = statement.compile(dialect=postgresql.dialect())
        defaults = [*compiled.insert_prefetch, *compiled.update_prefetch]
        if defaults and number < len(statements):
            raise ValueError(f"give a value to {', '.join(map(str, defaults))}")
        # Anonymous parameters (a literal's) are numbered across the whole statement.
        names = {name for name, bind in compiled.binds.items() if not bind.unique}
        if names & seen:
            raise ValueError(f"parameters named twice: {sorted(names & seen)}")
        if names & columns:
            raise ValueError(f"parameters named as columns: {sorted(names & columns)}")
        seen |= names
    *first, last = statements
    return last.add_cte(
        *(statement.cte(f"write_{number}") for number, statement in enumerate(first, 1))
    )
