"""The service's command classes: a database outage ends any command with one line."""

from __future__ import annotations

from typing import Any

import click
from flask.cli import AppGroup, ScriptInfo
from sqlalchemy.exc import SQLAlchemyError

from . import schema
from .errors import is_outage, outage_reason

# PostgreSQL's SQLSTATE for "permission denied": the role lacks a right on what it touched.
INSUFFICIENT_PRIVILEGE = "42501"
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
            behind = None if migrating or not schema.missing(refused) else schema_behind(ctx)
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


def schema_behind(ctx: click.Context) -> str | None:
    """What :func:`service.schema.behind` says of the app ``ctx`` runs, if it can load it."""
    info = ctx.find_object(ScriptInfo)
    if info is None:
        return None
    try:
        app = info.load_app()
    except Exception:
        return None
    return schema.behind(app)


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
