"""Command line: ``flask --app service games create|export|show``."""

from __future__ import annotations

import json

import click
from flask import Flask
from flask.cli import AppGroup

from . import games
from .links import player_url
from .models import Game, db

games_cli = AppGroup("games", help="Create and inspect games.")


@games_cli.command("create")
@click.option("--keeper", "keeper_email", required=True, help="The Keeper's email address.")
@click.option("--shadow", "shadow_email", required=True, help="The Shadow's email address.")
@click.option("--keeper-name", default="", help="The Keeper's display name.")
@click.option("--shadow-name", default="", help="The Shadow's display name.")
@click.option("--seed", type=int, default=None, help="Deal from this seed (default: random).")
@click.option("--look", type=click.Choice(["standard", "classic"]), default="standard")
@click.option("--days", type=int, default=None, help="Days per move; 0 for no deadline.")
@click.option("--match", is_flag=True, help="A return match: a second game with roles swapped.")
def create(
    keeper_email: str,
    shadow_email: str,
    keeper_name: str,
    shadow_name: str,
    seed: int | None,
    look: str,
    days: int | None,
    match: bool,
) -> None:
    """Deal a game; print its id, then each seat and its link."""
    start = games.create_match if match else games.create_game
    try:
        game = start(
            games.Seating(keeper_email, keeper_name or keeper_email.split("@")[0]),
            games.Seating(shadow_email, shadow_name or shadow_email.split("@")[0]),
            seed=seed,
            look=look,
            days_per_move=days,
        )
    except games.InvalidGame as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(game.id)
    for player in game.players:
        click.echo(f"{player.seat} {player_url(player)}")


def _game(game_id: int) -> Game:
    game = db.session.get(Game, game_id)
    if game is None:
        raise click.BadParameter(f"no game {game_id}", param_hint="ID")
    return game


@games_cli.command("export")
@click.argument("game_id", metavar="ID", type=int)
def export(game_id: int) -> None:
    """Print the game as a replay scenario for ``python -m service.replay``."""
    click.echo(json.dumps(games.export_game(_game(game_id)), indent=1))


@games_cli.command("show")
@click.argument("game_id", metavar="ID", type=int)
def show(game_id: int) -> None:
    """Print a summary of the game."""
    game = _game(game_id)
    state = game.state
    click.echo(f"Game {game.id}: {games.describe_status(game.status)} (version {game.version})")
    for player in game.players:
        link = "link revoked" if player.link_key is None else "link live"
        click.echo(f"  {player.seat:<7} {player.name} <{player.email}> ({link})")
    click.echo(
        f"  round {state['round']}, {state['phase']}, trick {min(state['trick'], 10)}; "
        f"tricks {state['tricks']['keeper']}-{state['tricks']['shadow']}; "
        f"track {state['track']}/10"
    )
    if game.to_act:
        deadline = game.deadline.isoformat(timespec="minutes") if game.deadline else "none"
        click.echo(f"  to act: {game.to_act}; deadline {deadline}")
    if game.winner:
        click.echo(f"  winner: {game.winner}")
    for number, result in enumerate(state["rounds"], start=1):
        click.echo(
            f"  round {number}: keeper {result['keeper']}, shadow {result['shadow']}, "
            f"track +{result['moved']}"
        )


def init_app(app: Flask) -> None:
    """Register the command groups."""
    app.cli.add_command(games_cli)
