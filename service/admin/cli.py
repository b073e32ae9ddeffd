"""Command line: ``flask --app service admin list|create-user|set-password|remove-user|disable|
enable|unlock|reset-2fa|update-stats``."""

from __future__ import annotations

import os
from collections.abc import Callable

import click

from ..commands import ServiceGroup
from ..unit_of_work import transaction
from . import auth, stats

PASSWORD_VARIABLE = "SPLITMIND_ADMIN_PASSWORD"

admin_cli = ServiceGroup("admin", help="Admin accounts and the dashboard's statistics.")


def _password() -> str:
    """The password from the environment (for scripts), or asked for twice."""
    return os.environ.get(PASSWORD_VARIABLE) or click.prompt(
        "Password", hide_input=True, confirmation_prompt=True
    )


@admin_cli.command("create-user")
@click.argument("name")
def create_user(name: str) -> None:
    """Add an admin; the password is asked for, or read from SPLITMIND_ADMIN_PASSWORD."""
    _check_name(name, new=True)
    password = _password()
    _change(
        lambda: auth.create_admin(name, password), f"Admin {name} can now sign in at /admin/login."
    )


@admin_cli.command("set-password")
@click.argument("name")
def set_password(name: str) -> None:
    """Give an admin a new password, asked for or read from SPLITMIND_ADMIN_PASSWORD."""
    _check_name(name, new=False)
    password = _password()
    _change(
        lambda: auth.set_password(name, password),
        f"Admin {name} has a new password; their sessions have ended.",
    )


@admin_cli.command("remove-user")
@click.argument("name")
@click.confirmation_option(prompt="Remove this admin? Their sessions end at once.")
def remove_user(name: str) -> None:
    """Delete an admin (--yes to skip the question); the games log keeps their name."""
    _change(lambda: auth.remove_admin(name), f"Admin {name} is removed.")


def _check_name(name: str, *, new: bool) -> None:
    """Refuse a name before the password is asked for (:func:`.auth.check_name`)."""
    try:
        auth.check_name(name, new=new)
    except auth.AccountError as exc:
        raise click.UsageError(str(exc)) from None


def _change(change: Callable[[], object], done: str) -> None:
    """Apply an account change in one transaction and say ``done``; a refusal is a usage error."""
    try:
        with transaction():
            change()
    except auth.AlreadyDone as exc:
        click.echo(f"{exc}.")  # what was asked for holds: no error
        return
    except auth.AccountError as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(done)


@admin_cli.command("list")
def list_admins() -> None:
    """Every admin: enabled or disabled, two-factor sign-in on or off, last sign-in (UTC)."""
    rows = [
        (
            admin.name,
            "enabled" if admin.is_active else "disabled",
            "2FA on" if admin.two_factor else "2FA off",
            admin.last_login_at.strftime("%Y-%m-%d %H:%M UTC") if admin.last_login_at else "never",
        )
        for admin in auth.admins()
    ]
    if not rows:
        click.echo("No admins yet: add one with `flask --app service admin create-user NAME`.")
        return
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    for row in rows:
        cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        click.echo("  ".join(cells).rstrip())


@admin_cli.command("disable")
@click.argument("name")
def disable(name: str) -> None:
    """Stop an admin from signing in; their open sessions stop at their next request."""
    _change(
        lambda: auth.disable_admin(name), f"Admin {name} is disabled: they can no longer sign in."
    )


@admin_cli.command("enable")
@click.argument("name")
def enable(name: str) -> None:
    """Let a disabled admin sign in again."""
    _change(lambda: auth.enable_admin(name), f"Admin {name} can sign in again.")


@admin_cli.command("unlock")
@click.argument("name")
def unlock(name: str) -> None:
    """Lift an admin's sign-in lockout after failed sign-ins: they may try again at once."""
    _change(lambda: auth.lift_lockout(name), f"Admin {name} may try to sign in again at once.")


@admin_cli.command("reset-2fa")
@click.argument("name")
def reset_two_factor(name: str) -> None:
    """Turn an admin's two-factor sign-in off (a lost phone); their sessions end."""
    _change(
        lambda: auth.reset_two_factor(name),
        f"Admin {name} signs in with their password alone until they set up two-factor "
        "sign-in again; their sessions have ended.",
    )


@admin_cli.command("update-stats")
def update_stats() -> None:
    """Write the playtest figures of every finished game that has none."""
    added, _ = stats.summarize_finished()
    click.echo(f"summarized {added} finished game(s)")
