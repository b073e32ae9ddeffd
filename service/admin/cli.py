"""Command line: ``flask --app service admin create-user|set-password|remove-user|update-stats``."""

from __future__ import annotations

import os

import click
from flask.cli import AppGroup

from ..unit_of_work import transaction
from . import auth, stats

PASSWORD_VARIABLE = "SPLITMIND_ADMIN_PASSWORD"

admin_cli = AppGroup("admin", help="Admin accounts and the dashboard's statistics.")


def _password() -> str:
    """The password from the environment (for scripts), or asked for twice."""
    return os.environ.get(PASSWORD_VARIABLE) or click.prompt(
        "Password", hide_input=True, confirmation_prompt=True
    )


@admin_cli.command("create-user")
@click.argument("name")
def create_user(name: str) -> None:
    """Add an admin; the password is asked for, or read from SPLITMIND_ADMIN_PASSWORD."""
    password = _password()
    try:
        with transaction():
            auth.create_admin(name, password)
    except auth.AccountError as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(f"Admin {name} can now sign in at /admin/login.")


@admin_cli.command("set-password")
@click.argument("name")
def set_password(name: str) -> None:
    """Give an admin a new password, asked for or read from SPLITMIND_ADMIN_PASSWORD."""
    password = _password()
    try:
        with transaction():
            auth.set_password(name, password)
    except auth.AccountError as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(f"Admin {name} has a new password; their sessions have ended.")


@admin_cli.command("remove-user")
@click.argument("name")
@click.confirmation_option(prompt="Remove this admin? Their sessions end at once.")
def remove_user(name: str) -> None:
    """Delete an admin (--yes to skip the question); the games log keeps their name."""
    try:
        with transaction():
            auth.remove_admin(name)
    except auth.AccountError as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(f"Admin {name} is removed.")


@admin_cli.command("update-stats")
def update_stats() -> None:
    """Write the playtest figures of every finished game that has none."""
    added, _ = stats.summarize_finished()
    click.echo(f"summarized {added} finished game(s)")
