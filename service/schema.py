"""Whether the database's schema is the one this version's code reads.

A table or a column that is not there, on a schema older than the code's (a process
started before ``flask db upgrade``), is a step of the deployment left out, said in one
line; on the latest schema it is a fault, and keeps its traceback.
"""

from __future__ import annotations

import sqlite3

from alembic.script import ScriptDirectory
from flask import Flask
from sqlalchemy import inspect, text

from .extensions import db

# PostgreSQL's SQLSTATEs for a table and a column that are not there.
UNDEFINED = {"42P01", "42703"}
UPGRADE = "run `flask --app service db upgrade` first"
# The PostgreSQL advisory lock each migration run holds for its transaction (any number the
# service takes no other lock under): runs started together take turns.
MIGRATION_LOCK = 0x5EA1_0B0E


def missing(error: BaseException | None) -> bool:
    """Whether the driver's ``error`` says a table or a column is not there."""
    if isinstance(error, sqlite3.OperationalError):
        return str(error).startswith(("no such table", "no such column"))
    return getattr(error, "sqlstate", None) in UNDEFINED


def behind(app: Flask) -> str | None:
    """What to say when the database's schema is not the latest migration's (none, or an
    older one); ``None`` when it is, or when that cannot be read: the error is a fault."""
    try:
        with app.app_context():
            config = app.extensions["migrate"].migrate.get_config()
            script = ScriptDirectory.from_config(config)
            head = script.get_current_head()
            known = {revision.revision for revision in script.walk_revisions()}
            with db.engine.connect() as connection:
                # Read as alembic keeps it, without its context, which logs as it starts.
                current = (
                    connection.scalar(text("SELECT version_num FROM alembic_version"))
                    if inspect(connection).has_table("alembic_version")
                    else None
                )
    except Exception:
        return None
    if current == head:
        return None
    if current is None:
        return f"the database has none of the service's tables: {UPGRADE}"
    if current not in known:  # a later version's: this one cannot migrate it either way
        return (
            f"the database's schema is that of migration {current}, which this version does "
            f"not know (its latest is {head}): run the version that migrated it"
        )
    return (
        f"the database's schema is that of migration {current}, older than this version's "
        f"({head}): {UPGRADE}"
    )
