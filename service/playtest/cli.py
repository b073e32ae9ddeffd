"""Command line: ``flask --app service playtest simulate`` and ``playtest compare``."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

import click
from sqlalchemy.exc import SQLAlchemyError

from ..bots import LEVELS
from ..commands import ServiceGroup
from ..errors import is_outage, outage_reason
from ..models import db
from ..rules import Variant, VariantError
from ..unit_of_work import transaction
from .compare import Comparison, compare, comparison_figures
from .report import counted, describe, describe_comparison
from .runs import runs_stored, save_run
from .simulate import MOST_GAMES, Interrupted, Settings, figures, simulate

F = TypeVar("F", bound=Callable[..., Any])
Done = TypeVar("Done")
# The exit status of a command stopped by Ctrl-C, as the shell gives one.
INTERRUPTED = 130

playtest_cli = ServiceGroup("playtest", help="Computer players on variants of the rules.")

# The options of both commands: who plays each seat, in how many processes, and the output.
_keeper = click.option(
    "--keeper", type=click.Choice(list(LEVELS)), required=True, help="The Keeper's level."
)
_shadow = click.option(
    "--shadow", type=click.Choice(list(LEVELS)), required=True, help="The Shadow's level."
)
_workers = click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Processes to play in (no more than the machine's processors).",
)
_as_json = click.option(
    "--json", "as_json", is_flag=True, help="Print the figures as one line of JSON."
)


def _variant(
    context: click.Context, parameter: click.Parameter, values: tuple[str, ...]
) -> Variant:
    """The variant of ``--variant KEY=VALUE`` options, or a usage error saying what is wrong."""
    options: dict[str, str] = {}
    for text in values:
        key, equals, value = text.partition("=")
        if not equals:
            raise click.BadParameter(f"{text!r} is not KEY=VALUE, such as halfway=6")
        if key.strip() in options:
            raise click.BadParameter(f"{key.strip()} is given twice")
        options[key.strip()] = value
    try:
        return Variant.from_options(options)
    except VariantError as exc:
        raise click.BadParameter(str(exc)) from None


def _rules(name: str, help: str) -> Callable[[F], F]:
    """A repeatable ``--<name> KEY=VALUE`` option giving a variant of the rules."""
    return click.option(
        f"--{name}", name, multiple=True, metavar="KEY=VALUE", callback=_variant, help=help
    )


@playtest_cli.command("simulate")
@click.option("--games", type=click.IntRange(1, MOST_GAMES), default=1000, show_default=True)
@_keeper
@_shadow
@_rules(
    "variant",
    "A rule number to change, such as halfway=6 or exchange_sizes=1,2,2 (repeatable).",
)
@_workers
@click.option(
    "--seed", type=int, default=1, show_default=True, help="The same seed, the same games."
)
@_as_json
@click.option("--save", is_flag=True, help="Store the run for the admin dashboard.")
def simulate_command(
    games: int,
    keeper: str,
    shadow: str,
    variant: Variant,
    workers: int,
    seed: int,
    as_json: bool,
    save: bool,
) -> None:
    """Play computer players against each other and print what their games say."""
    settings = Settings(games=games, keeper=keeper, shadow=shadow, variant=variant, seed=seed)
    if save:
        _check_runs_can_be_stored()
    tally, stopped = _play(
        games, lambda progress: simulate(settings, workers=workers, progress=progress)
    )
    if stopped:
        settings = replace(settings, games=tally.games)
    result = figures(settings, tally)
    # Printed first: a run whose figures cannot be stored has not been played for nothing.
    click.echo(json.dumps(result) if as_json else describe(result))
    if stopped:
        _stopped(tally.games, games, "game", save)
    if save:
        with transaction():
            run = save_run(settings, result)
        click.echo(f"Stored as run {run.id}.", err=True)


def _play(length: int, play: Callable[[Callable[[int], None]], Done]) -> tuple[Done, bool]:
    """What ``play`` gives, with a progress bar of ``length`` games on standard error, and
    whether it was interrupted (Ctrl-C): then what the games played before it add up to.

    A run interrupted before any game was finished ends the command."""
    try:
        with click.progressbar(
            length=length, label="Playing", show_pos=True, file=sys.stderr
        ) as bar:
            return play(bar.update), False
    except Interrupted as stop:
        if not stop.played:
            click.echo("Interrupted before a game was finished: nothing to show.", err=True)
            click.get_current_context().exit(INTERRUPTED)
        return stop.done, True


def _stopped(played: int, asked: int, thing: str, save: bool) -> None:
    """Say that a command was interrupted and what its figures are, then end it."""
    click.echo(
        f"Interrupted after {counted(played, thing)} of {asked:,}: the figures are those of "
        f"the first {counted(played, thing)}, as the same command with --games {played} "
        "plays them" + ("; the run was not stored." if save else "."),
        err=True,
    )
    click.get_current_context().exit(INTERRUPTED)


def _check_runs_can_be_stored() -> None:
    """Refuse a run to store, before it is played, where runs cannot be stored: a database
    that does not answer (said as every command says it), or has no table of runs (not
    upgraded)."""
    try:
        runs_stored()
    except SQLAlchemyError as exc:
        db.session.rollback()
        if is_outage(exc):
            raise
        raise click.ClickException(
            f"runs cannot be stored ({outage_reason(exc)}): run `flask --app service db "
            "upgrade`; nothing was played"
        ) from None


@playtest_cli.command("compare")
@click.option(
    "--games",
    type=click.IntRange(1, MOST_GAMES),
    default=1000,
    show_default=True,
    help="Deals, each played under both rule sets.",
)
@_keeper
@_shadow
@_rules("variant", "A rule number of the rules to try, such as exchange_sizes=1,2,1 (repeatable).")
@_rules(
    "against",
    "A rule number of the rules to compare with (repeatable; default: the printed rules).",
)
@_workers
@click.option(
    "--seed", type=int, default=1, show_default=True, help="The same seed, the same deals."
)
@_as_json
def compare_command(
    games: int,
    keeper: str,
    shadow: str,
    variant: Variant,
    against: Variant,
    workers: int,
    seed: int,
    as_json: bool,
) -> None:
    """Play two rule sets on the same deals and print how much the Keeper's win rate differs,
    and which is nearer an even game."""
    if variant == against:
        # The same rules play the same games: every deal would agree.
        raise click.UsageError(
            f"--variant and --against give the same rules ({variant.describe() or 'printed'}); "
            "give a rule number that differs, such as --variant exchange_sizes=1,2,1"
        )
    comparison = Comparison(
        games=games, keeper=keeper, shadow=shadow, variant=variant, against=against, seed=seed
    )
    deals, stopped = _play(
        games, lambda progress: compare(comparison, workers=workers, progress=progress)
    )
    if stopped:
        comparison = replace(comparison, games=deals.total)
    result = comparison_figures(comparison, deals)
    click.echo(json.dumps(result) if as_json else describe_comparison(result))
    if stopped:
        _stopped(deals.total, games, "deal", save=False)
