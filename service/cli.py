"""Command line: ``flask --app service games create|export|show|correct-address|erase-address|
export-address``, ``mail``, ``tick``, ``serve``, and ``playtest`` (:mod:`service.playtest.cli`)."""

from __future__ import annotations

import json
import math
import signal
import smtplib
import threading
from typing import Any

import click
from click.core import ParameterSource
from flask import Flask, current_app
from flask.cli import with_appcontext
from werkzeug.serving import run_simple

from . import bots, computer, deadlines, erasure, games
from .admin import address_data
from .audit import COMMAND_LINE
from .commands import ServiceCommand, ServiceGroup
from .errors import outage_reason
from .game_text import LOOKS
from .links import player_url
from .mail import worker
from .models import ADMIN_NAME_LENGTH, MAX_ID, Game, db
from .perspective import describe_status
from .playtest.cli import playtest_cli
from .replies import servers
from .rules import PRINTED, SEATS, TRICKS_PER_ROUND, Seat, track_advances, variant_of
from .unit_of_work import transaction

# What the database and the network can take: a bad number is one line of usage, no traceback.
GAME_ID = click.IntRange(1, MAX_ID)
PORT = click.IntRange(1, 65535)


class AdminName(click.ParamType):
    """Who asks, for the audit trail, as the command line: ``the command line (NAME)``.

    The trail tells what was done at the command line from what an admin did on
    the dashboard, whatever the name given: nobody at a shell can act as an
    admin of the dashboard. The name has 1 to :data:`MOST` characters once
    stripped, so that the whole fits the trail's :data:`ADMIN_NAME_LENGTH`.
    """

    name = "name"
    MOST = ADMIN_NAME_LENGTH - len(f"{COMMAND_LINE} ()")

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        name = str(value).strip()
        if not 1 <= len(name) <= self.MOST:
            self.fail(f"a name has 1 to {self.MOST} characters", param, ctx)
        return f"{COMMAND_LINE} ({name})"


# The --by of a command that changes or reads what is kept of a player: who asks, for the trail.
asked_by = click.option(
    "--by",
    "admin",
    required=True,
    type=AdminName(),
    help="Who asks: the audit trail says the command line did it, for this name.",
)


class Seconds(click.FloatRange):
    """A number of seconds within a range; ``nan``, which no comparison refuses, is refused."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if math.isnan(seconds):
            self.fail(f"{value!r} is not a number of seconds.", param, ctx)
        return seconds


games_cli = ServiceGroup("games", help="Create, inspect and correct games.")


@games_cli.command("create")
@click.option("--keeper", "keeper_email", default="", help="The Keeper's email address.")
@click.option("--shadow", "shadow_email", default="", help="The Shadow's email address.")
@click.option("--keeper-name", default="", help="The Keeper's display name.")
@click.option("--shadow-name", default="", help="The Shadow's display name.")
@click.option(
    "--computer",
    type=click.Choice(SEATS),
    default=None,
    help="The seat the computer plays (instead of an address).",
)
@click.option(
    "--level",
    type=click.Choice(list(bots.LEVELS)),
    default="medium",
    show_default=True,
    help="How well the computer plays.",
)
@click.option("--seed", type=int, default=None, help="Deal from this seed (default: random).")
@click.option("--look", type=click.Choice(LOOKS), default="standard")
@click.option(
    "--days", type=click.IntRange(0, 365), default=None, help="Days per move; 0 for no deadline."
)
@click.option("--match", is_flag=True, help="A return match: a second game with roles swapped.")
def create(
    keeper_email: str,
    shadow_email: str,
    keeper_name: str,
    shadow_name: str,
    computer: Seat | None,
    level: str,
    seed: int | None,
    look: str,
    days: int | None,
    match: bool,
) -> None:
    """Deal a game; print its id, then each person's seat and link.

    Give both addresses for a game between people, or one address and
    ``--computer`` with the other seat to play against the computer.
    """
    level_given = click.get_current_context().get_parameter_source("level")
    if computer is None and level_given is not ParameterSource.DEFAULT:
        raise click.UsageError(
            "--level is how well the computer plays: give --computer keeper or shadow too"
        )
    given: dict[Seat, tuple[str, str]] = {
        "keeper": (keeper_email, keeper_name),
        "shadow": (shadow_email, shadow_name),
    }
    seatings: dict[Seat, games.Seating] = {}
    for seat, (email, name) in given.items():
        if seat == computer:
            if email:
                raise click.UsageError(f"the computer plays the {seat}: give no --{seat}")
            seatings[seat] = games.Seating.the_computer(level)
        elif not email:
            raise click.UsageError(f"give --{seat} (an address) or --computer {seat}")
        else:
            seatings[seat] = games.Seating(email, name or email.split("@")[0])
    start = games.create_match if match else games.create_game
    try:
        with transaction():
            game = start(
                seatings["keeper"],
                seatings["shadow"],
                seed=seed,
                look=look,
                days_per_move=days,
            )
    except games.InvalidGame as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(game.id)
    for player in game.players:
        if not player.is_computer:
            click.echo(f"{player.seat} {player_url(player)}")


def _game(game_id: int) -> Game:
    game = db.session.get(Game, game_id)
    if game is None:
        raise click.BadParameter(f"no game {game_id}", param_hint="ID")
    return game


@games_cli.command("export")
@click.argument("game_id", metavar="ID", type=GAME_ID)
@click.option(
    "--in-play", is_flag=True, help="Print a game still in play too: its deals are secret."
)
def export(game_id: int, in_play: bool) -> None:
    """Print the game as a replay scenario for ``python -m service.replay``."""
    try:
        scenario = games.export_game(_game(game_id), in_play=in_play)
    except games.GameOpen as exc:
        raise click.ClickException(
            f"{exc}: its replay shows both hands and the cards set aside; "
            "give --in-play to print it all the same"
        ) from None
    click.echo(json.dumps(scenario, indent=1))


@games_cli.command("show")
@click.argument("game_id", metavar="ID", type=GAME_ID)
def show(game_id: int) -> None:
    """Print a summary of the game."""
    game = _game(game_id)
    state = game.state
    variant = variant_of(state)
    click.echo(f"Game {game.id}: {describe_status(game.status)} (version {game.version})")
    for player in game.players:
        if player.is_computer:
            click.echo(f"  {player.seat:<7} the computer ({player.computer_level})")
            continue
        link = "link revoked" if player.link_key is None else "link live"
        click.echo(f"  {player.seat:<7} {player.name} <{player.email}> ({link})")
    click.echo(
        f"  round {state['round']}, {state['phase']}, "
        f"trick {min(state['trick'], TRICKS_PER_ROUND)}; "
        f"tricks {state['tricks']['keeper']}-{state['tricks']['shadow']}; "
        f"track {state['track']}/{variant.track_length}"
    )
    if variant != PRINTED:
        click.echo(f"  variant: {variant.describe()}")
    if game.to_act:
        deadline = game.deadline.isoformat(timespec="minutes") if game.deadline else "none"
        click.echo(f"  to act: {game.to_act}; deadline {deadline}")
    if game.winner:
        click.echo(f"  winner: {game.winner}")
    advances = zip(state["rounds"], track_advances(state), strict=True)
    for number, (result, advanced) in enumerate(advances, start=1):
        click.echo(
            f"  round {number}: keeper {result['keeper']}, shadow {result['shadow']}, "
            f"track +{advanced}"
        )


@games_cli.command("correct-address")
@click.argument("game_id", metavar="ID", type=GAME_ID)
@click.argument("seat", type=click.Choice(SEATS))
@click.argument("address")
@asked_by
def correct_address(game_id: int, seat: Seat, address: str, admin: str) -> None:
    """Put a corrected ADDRESS in a SEAT of a game in play: it gets a fresh link by email,
    and the old link stops working."""
    try:
        with transaction():
            player = games.correct_address(_game(game_id).player(seat).id, address, actor=admin)
            email = player.email
    except (games.MoveError, games.InvalidGame) as exc:
        raise click.UsageError(getattr(exc, "message", str(exc))) from None
    click.echo(f"The {seat} of game {game_id} is now {email}; a new link is on its way.")


@games_cli.command("erase-address")
@click.argument("address")
@asked_by
@click.confirmation_option(prompt="Erase this address? Nothing of it can be brought back.")
def erase_address_command(address: str, admin: str) -> None:
    """Erase ADDRESS at its owner's request (--yes to skip the question): its finished games
    stay, played by nobody named; nothing else of it is kept but a stop of its emails."""
    try:
        with transaction():
            erased = erasure.erase_address(address, actor=admin)
    except (erasure.StillPlaying, ValueError) as exc:
        raise click.UsageError(str(exc)) from None
    if not erased.found:
        click.echo("Nothing was stored of that address; the erasure is in the audit trail.")
        return
    click.echo(
        f"Erased: {erased.games} finished game(s) and {erased.invitations} invitation(s) "
        f"kept without the address, {erased.emails} email(s) deleted."
    )


@games_cli.command("export-address")
@click.argument("address")
@asked_by
def export_address_command(address: str, admin: str) -> None:
    """Print as JSON what is kept of ADDRESS, for its owner who asked: its games, settings,
    invitations, emails, replies and the audit entries naming it (no link, no card)."""
    try:
        with transaction():
            kept = address_data.export_address(address, actor=admin)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if address_data.is_empty(kept):
        click.echo("Nothing is kept of that address; the export is in the audit trail.", err=True)
    click.echo(json.dumps(kept, indent=1, ensure_ascii=False))


mail_cli = ServiceGroup("mail", help="Deliver queued email; read replies.")


@mail_cli.command("worker")
@click.option(
    "--once",
    is_flag=True,
    help="Make the computer's moves, drain the queue, say how many were handled, exit.",
)
@click.option(
    "--poll",
    type=Seconds(0.1, 3600),
    default=2.0,
    show_default=True,
    help="Seconds between polls.",
)
def mail_worker(once: bool, poll: float) -> None:
    """Deliver queued email and make the computer's moves until stopped; also runs the
    deadline sweep every minute.

    With ``--once``, make the moves that are due (a few seconds of them, as one pass
    does), deliver what is queued, and exit; an unreachable database or SMTP server
    ends it with an error, as does a server refusing the login, queue empty or not.
    """
    moves = computer.ComputerMoves()
    if not once:
        # SIGTERM (systemctl stop, docker stop) ends the loop after the message in hand:
        # killed mid-send, the worker would leave it to be sent again.
        stop = _until_signalled()
        worker.run(poll=poll, sweep=deadlines.sweep, moves=moves, should_stop=stop.is_set)
        return
    try:
        handled = worker.run(once=True, moves=moves)
    except (smtplib.SMTPException, OSError) as exc:
        raise click.ClickException(
            f"the SMTP server is unavailable: {outage_reason(exc)}"
        ) from None
    if moves.made:
        click.echo(f"made {moves.made} computer move(s)")
    click.echo(f"handled {handled} message(s)")


def _until_signalled() -> threading.Event:
    """An event set by SIGTERM or SIGINT: a server loop ends cleanly on either."""
    stop = threading.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_: stop.set())
    return stop


@mail_cli.command("inbound")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8024, show_default=True, type=PORT)
@click.option("--smtp", is_flag=True, help="Speak SMTP instead of LMTP.")
def mail_inbound(host: str, port: int, smtp: bool) -> None:
    """Read replies handed over by LMTP (or SMTP), until stopped: each reply to a tagged
    REPLY_ADDRESS is a move, applied and answered."""
    if not current_app.config["REPLY_ADDRESS"]:
        raise click.ClickException("REPLY_ADDRESS is not set: no email asks for a reply")
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    stop = _until_signalled()
    listening = f"reading replies by {'SMTP' if smtp else 'LMTP'} on {host}:{port}"
    servers.serve(
        app, host, port, smtp=smtp, should_stop=stop.is_set, started=lambda: click.echo(listening)
    )


@mail_cli.command("fetch")
@click.option("--once", is_flag=True, help="Read the folder once, say how many were handled, exit.")
@click.option(
    "--poll",
    type=Seconds(1, 86400),
    default=60.0,
    show_default=True,
    help="Seconds between polls (no IDLE).",
)
def mail_fetch(once: bool, poll: float) -> None:
    """Read replies from the IMAP folder IMAP_FOLDER, moving each to IMAP_DONE_FOLDER, until
    stopped (IDLE where the server has it, else polling)."""
    if not current_app.config["REPLY_ADDRESS"]:
        raise click.ClickException("REPLY_ADDRESS is not set: no email asks for a reply")
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    if once:
        try:
            handled = servers.fetch(app, once=True)
        except servers.IMAP_UNAVAILABLE as exc:
            raise click.ClickException(
                f"the IMAP server is unavailable: {servers.unavailable_reason(exc, app.config)}"
            ) from None
        click.echo(f"handled {handled} message(s)")
        return
    stop = _until_signalled()
    servers.fetch(app, once=False, poll=poll, should_stop=stop.is_set)


@click.command("tick", cls=ServiceCommand)
@with_appcontext
def tick() -> None:
    """Run the deadline sweep once (reminders, timeouts, digests) and make the computer's
    moves that are due: for cron, where no mail worker does both. The email they cause is
    queued: `mail worker --once` delivers it."""
    result = deadlines.sweep()
    click.echo(f"reminded {len(result.reminded)} game(s), timed out {len(result.expired)} game(s)")
    click.echo(f"ended {len(result.invitations_expired)} invitation(s) left unanswered")
    click.echo(f"queued {len(result.digests)} digest(s)")
    click.echo(f"forgot {result.mail_forgotten} email(s) sent long ago")
    click.echo(f"forgot {result.unplayed_forgotten} game(s) never started")
    click.echo(f"forgot {result.replies_forgotten} reply message(s) read long ago")
    click.echo(f"made {computer.ComputerMoves()()} computer move(s)")


@click.command("serve", cls=ServiceCommand)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True, type=PORT)
@with_appcontext
def serve(host: str, port: int) -> None:
    """Development server with the mail worker in a background thread."""
    if current_app.config["PRODUCTION"]:
        raise click.UsageError(
            "serve is the development server: in production run gunicorn (gunicorn.conf.py) "
            "and the mail worker (README: Running it for real)"
        )
    # The app itself, not the context-bound proxy, for the worker thread.
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    stop = threading.Event()

    def work() -> None:
        with app.app_context():
            worker.run(
                poll=1.0,
                sweep=deadlines.sweep,
                moves=computer.ComputerMoves(),
                should_stop=stop.is_set,
            )

    thread = threading.Thread(target=work, name="mail-worker", daemon=True)
    thread.start()
    if app.config["LOCAL_MAILBOX"]:
        click.echo(f"Emails go to the local mailbox: {app.config['BASE_URL']}/mailbox")
    try:
        run_simple(host, port, app, threaded=True)
    finally:
        stop.set()
        thread.join(5)


def init_app(app: Flask) -> None:
    """Register the command groups, and put Flask-Migrate's ``db`` among them."""
    migrations = app.cli.commands["db"]
    assert isinstance(migrations, click.Group)
    app.cli.add_command(ServiceGroup.of(migrations))
    app.cli.add_command(games_cli)
    app.cli.add_command(mail_cli)
    app.cli.add_command(tick)
    app.cli.add_command(serve)
    app.cli.add_command(playtest_cli)
