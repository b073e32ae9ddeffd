"""The service's command classes: a database outage ends any command with one line."""

from __future__ import annotations

import sqlite3
from typing import Any

import click
from alembic.script import ScriptDirectory
from flask.cli import AppGroup, ScriptInfo
from sqlalchemy import inspect, text
from sqlalchemy.exc import SQLAlchemyError

from .errors import is_outage, outage_reason
from .extensions import db

# PostgreSQL's SQLSTATE for "permission denied": the role lacks a right on what it touched.
INSUFFICIENT_PRIVILEGE = "42501"
# PostgreSQL's SQLSTATEs for a table and a column that are not there.
UNDEFINED = {"42P01", "42703"}
UPGRADE = "run `flask --app service db upgrade` first"
# Flask-Migrate's command group.
MIGRATIONS = "db"


class ServiceCommand(click.Command):
    """A command that ends on a database outage with one line, ``Error: the database is
    unavailable: <the driver's reason>``, and exit status 1, rather than a traceback.

    A right the database refuses the service's role (``permission denied for schema public``,
    a role that does not own the database) is said in one line too, and so is a schema older
    than the code's (a command run before ``db upgrade``). Any other error goes on to be the
    traceback it is: a fault to look into.
    """

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command, an outage of the database said as a :class:`click.ClickException`."""
        try:
            return super().invoke(ctx)
        except SQLAlchemyError as exc:
            if is_outage(exc):
                raise click.ClickException(
                    f"the database is unavailable: {outage_reason(exc)}"
                ) from None
            refused = getattr(exc, "orig", None)
            # Migrations change the schema: one that fails is a fault of its own.
            migrating = ctx.command.name == MIGRATIONS
            behind = None if migrating or not missing_from_schema(refused) else schema_behind(ctx)
            if behind:
                raise click.ClickException(behind) from None
            if getattr(refused, "sqlstate", None) != INSUFFICIENT_PRIVILEGE:
                raise
            # A setting of the deployment, not a fault: the role the service connects as.
            reason = str(refused).strip().splitlines()[0]
            raise click.ClickException(
                f"the database refused this role a right: {reason} (the service's role must "
                "own its database, and the pg_trgm and unaccent extensions be created)"
            ) from None


def missing_from_schema(error: BaseException | None) -> bool:
    """Whether the driver's ``error`` says a table or a column is not there."""
    if isinstance(error, sqlite3.OperationalError):
        return str(error).startswith(("no such table", "no such column"))
    return getattr(error, "sqlstate", None) in UNDEFINED


def schema_behind(ctx: click.Context) -> str | None:
    """What to say when the database's schema is not the latest migration's (none, or an
    older one); ``None`` when it is, or when that cannot be read: the error is a fault."""
    info = ctx.find_object(ScriptInfo)
    if info is None:
        return None
    try:
        app = info.load_app()
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


class ServiceGroup(ServiceCommand, AppGroup):
    """Flask's command group (each command runs in the app context), which says a database
    outage in any of its commands in one line, as a :class:`ServiceCommand`."""

    @classmethod
    def of(cls, group: click.Group) -> ServiceGroup:
        """Another library's ``group`` (Flask-Migrate's ``db``) as one of these: the same
        name, options and commands, a database outage said in one line. ``db upgrade`` runs
        before the services start (a unit's ``ExecStartPre``, the image's ``CMD``), where an
        outage is common and a chained traceback says it in a hundred lines."""
        return cls(
            group.name,
            commands=group.commands,
            callback=group.callback,
            params=group.params,
            help=group.help,
            short_help=group.short_help,
        )
