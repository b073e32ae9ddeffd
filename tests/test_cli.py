"""The command line: create, show and export games; the export replays to the stored state."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import click
import psycopg
import pytest
from alembic.script import ScriptDirectory
from click.testing import CliRunner
from flask import Flask
from sqlalchemy import select, text

from service import create_app, schema
from service.commands import ServiceCommand, ServiceGroup
from service.deadlines import sweep
from service.links import player_for
from service.models import Game, OutboxMessage, db, utcnow
from service.rules import Variant, run, summary
from service.unit_of_work import transaction

from .conftest import BASE_URL, base_config
from .helpers import pick_action, redeal, request_invitation
from .servers import FLASK, ROOT, gunicorn_env
from .smtp import free_port

pytestmark = pytest.mark.both_backends


def test_create_prints_the_id_and_each_seat_with_its_link(app: Flask, runner) -> None:
    result = runner.invoke(
        args=["games", "create", "--keeper", "Kim@Example.com", "--shadow", "sam@example.com",
              "--keeper-name", "Kim", "--seed", "12"]
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    game_id = int(lines[0])
    seats = dict(line.split(" ", 1) for line in lines[1:])
    assert set(seats) == {"keeper", "shadow"}
    with app.app_context():
        game = db.session.get(Game, game_id)
        assert game.state["seed"] == 12
        assert (
            game.player("keeper").email == "kim@example.com" and game.player("keeper").name == "Kim"
        )
        assert game.player("shadow").name == "sam"
        for seat, link in seats.items():
            assert link.startswith(f"{BASE_URL}/play/")
            assert player_for(link.rsplit("/", 1)[1]).seat == seat


def test_create_refuses_bad_input(runner) -> None:
    result = runner.invoke(
        args=["games", "create", "--keeper", "a@example.com", "--shadow", "a@example.com"]
    )
    assert result.exit_code == 2 and "two different email addresses" in result.output
    result = runner.invoke(
        args=["games", "create", "--keeper", "nobody", "--shadow", "b@example.com"]
    )
    assert result.exit_code == 2 and "is not an email address" in result.output


def test_create_refuses_a_name_that_reads_as_the_computers(app: Flask, runner) -> None:
    for name in ("The Computer, HARD", "l'ordinateur facile"):
        result = runner.invoke(
            args=["games", "create", "--keeper", "a@example.com", "--computer", "shadow",
                  "--keeper-name", name]
        )  # fmt: skip
        assert result.exit_code == 2
        assert "is how this service names the computer: choose another name" in result.output
    with app.app_context():
        assert db.session.scalars(db.select(Game)).all() == []


@pytest.mark.parametrize(
    ("args", "refusal"),
    [
        (["games", "show", "99999999999999999999"], "Invalid value for 'ID'"),
        (["games", "export", "3000000000"], "Invalid value for 'ID'"),
        (
            ["games", "correct-address", "0", "keeper", "kim@example.com", "--by", "ann"],
            "Invalid value for 'ID'",
        ),
        (
            ["games", "create", "--keeper", "a@example.com", "--shadow", "b@example.com",
             "--days", "99999999"],
            "Invalid value for '--days'",
        ),
        (["mail", "worker", "--poll", "0"], "Invalid value for '--poll'"),
        (["mail", "worker", "--poll", "nan"], "Invalid value for '--poll'"),
        (["mail", "inbound", "--port", "70000"], "Invalid value for '--port'"),
    ],
)  # fmt: skip
def test_numbers_past_what_the_service_takes_are_usage_errors(runner, args, refusal) -> None:
    """One line saying which value, before the database or the network is asked."""
    result = runner.invoke(args=args)
    assert result.exit_code == 2 and refusal in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_create_refuses_an_address_that_needs_smtputf8(app: Flask, runner) -> None:
    """A fullwidth v reads as victim@example.com; only SMTPUTF8 could carry it."""
    result = runner.invoke(
        args=["games", "create", "--keeper", "\uff56ictim@example.com", "--shadow", "b@example.com"]
    )
    assert result.exit_code == 2
    assert "Internationalized characters before the @-sign are not supported" in result.output
    with app.app_context():
        assert db.session.scalars(db.select(Game)).all() == []


def test_export_replays_to_the_stored_state(
    app: Flask, client, runner, make_game, tmp_path
) -> None:
    game = make_game(seed=33)
    rng = random.Random(33)
    for _ in range(37):
        for seat in ("keeper", "shadow"):
            view = client.get(f"/api/play/{game[seat]}").get_json()
            if view["your_turn"]:
                body = {"version": view["version"], **pick_action(view, rng)}
                assert client.post(f"/api/play/{game[seat]}", json=body).status_code == 200
    result = runner.invoke(args=["games", "export", "--in-play", str(game["id"])])
    assert result.exit_code == 0
    scenario = json.loads(result.output)
    with app.app_context():
        stored = db.session.get(Game, game["id"]).state
    assert run(scenario).state == stored
    path = tmp_path / "game.json"
    path.write_text(result.output)
    replayed = subprocess.run(
        [sys.executable, "-m", "service.replay", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(replayed.stdout) == summary(stored)


def test_show_prints_a_summary(runner, make_game) -> None:
    game = make_game(seed=1)
    result = runner.invoke(args=["games", "show", str(game["id"])])
    assert result.exit_code == 0
    assert f"Game {game['id']}: in play (version 0)" in result.output
    assert "keeper  Kim <kim@example.com> (link live)" in result.output
    assert "round 1, exchange" in result.output and "to act: both" in result.output
    assert "track 0/10" in result.output and "variant" not in result.output
    assert runner.invoke(args=["games", "show", "999"]).exit_code == 2


def test_show_names_a_variant(app: Flask, runner, make_game) -> None:
    game = make_game(seed=1)
    redeal(app, game["id"], Variant(track_length=12, exchange_sizes=(0, 2, 3)))
    result = runner.invoke(args=["games", "show", str(game["id"])])
    assert result.exit_code == 0
    assert "round 1, play, trick 1; tricks 0-0; track 0/12" in result.output
    assert "  variant: exchange_sizes=0,2,3 track_length=12\n" in result.output


def test_tick_says_what_it_forgot(app: Flask, runner) -> None:
    """The sweep deletes the emails sent long ago and the games that never started: the
    operator reading cron's log sees how many went, as for everything else it did."""
    with app.app_context():
        game_id = request_invitation("stranger@example.net").game_id
        sweep(utcnow() + timedelta(days=15))  # left unanswered: the game never started
    days = max(app.config["UNPLAYED_DAYS"], app.config["OUTBOX_DAYS"])
    long_ago = utcnow() - timedelta(days=days + 1)
    with app.app_context(), transaction():
        sent = db.session.scalars(select(OutboxMessage)).all()
        for message in sent:
            message.status, message.created_at = "sent", long_ago
        db.session.get_one(Game, game_id).updated_at = long_ago
    assert sent
    result = runner.invoke(args=["tick"])
    assert result.exit_code == 0, result.output
    assert f"forgot {len(sent)} email(s) sent long ago" in result.output.splitlines()
    assert "forgot 1 game(s) never started" in result.output.splitlines()
    with app.app_context():
        assert db.session.get(Game, game_id) is None


@pytest.fixture(scope="module")
def down(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    """An app whose PostgreSQL is not there: nothing listens on its port."""
    nowhere = f"postgresql://root@127.0.0.1:{free_port()}/splitmind"
    app = create_app(base_config(nowhere, tmp_path_factory.mktemp("down")))
    yield app
    with app.app_context():
        db.engine.dispose()


def test_export_of_a_game_in_play_is_asked_for_by_name(runner, make_game) -> None:
    """Its deals are the players' secrets: the operator says they mean to see them."""
    game = make_game(seed=34)
    refused = runner.invoke(args=["games", "export", str(game["id"])])
    assert refused.exit_code == 1 and refused.output.startswith(f"Error: game {game['id']} is ")
    assert "give --in-play to print it all the same" in refused.output
    assert '"deals"' not in refused.output
    printed = runner.invoke(args=["games", "export", "--in-play", str(game["id"])])
    assert printed.exit_code == 0 and json.loads(printed.output)["deals"]


@pytest.mark.parametrize(
    "args",
    [
        ["games", "show", "1"],
        ["games", "export", "1"],
        ["games", "create", "--keeper", "a@example.com", "--shadow", "b@example.com"],
        ["games", "correct-address", "1", "keeper", "c@example.com", "--by", "ada"],
        ["mail", "worker", "--once"],
        ["tick"],
        ["admin", "list"],
        ["db", "upgrade"],
        [
            "playtest",
            "simulate",
            "--games",
            "2",
            "--keeper",
            "random",
            "--shadow",
            "random",
            "--save",
        ],
    ],
    ids=" ".join,
)
def test_a_database_outage_ends_a_command_with_one_line(down: Flask, args: list[str]) -> None:
    result = down.test_cli_runner().invoke(args=args)
    assert result.exit_code == 1, result.exception
    assert "Traceback" not in result.output
    said = result.output.splitlines()[-1]  # after the worker's log lines, if any
    assert said.startswith("Error: the database is unavailable: connection failed: ")
    assert said.endswith("Connection refused"), result.output


def test_every_command_of_the_service_says_an_outage_in_one_line(app: Flask) -> None:
    """Each is a ServiceCommand, or in a ServiceGroup: a new one as the others, Flask-Migrate's
    ``db`` too."""
    commands = app.cli.commands
    assert {"games", "mail", "tick", "serve", "admin", "playtest", "db"} <= set(commands)
    assert all(isinstance(command, ServiceCommand) for command in commands.values())


def test_the_readme_lists_every_command(app: Flask) -> None:
    """Each of the service's commands starts a line of one of the README's lists of commands:
    the command-line section's, or the admin dashboard's for ``admin``."""
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    listed = readme.splitlines()
    context = click.Context(app.cli)
    commands: list[str] = []
    for name in app.cli.list_commands(context):
        command = app.cli.get_command(context, name)
        if name == "db":  # Flask-Migrate's: the README lists the one an operator runs
            commands.append("db upgrade")
        elif isinstance(command, ServiceGroup):
            commands += [f"{name} {each}" for each in command.commands]
        elif isinstance(command, ServiceCommand):
            commands.append(name)
    assert "playtest compare" in commands
    missing = [
        each
        for each in commands
        if not any(line.startswith(f"flask --app service {each} ") for line in listed)
    ]
    assert not missing, f"README does not list {missing}"


def test_the_readme_names_every_option_of_each_command(app: Flask) -> None:
    """An option of a command is named on one of the README's lines for it: ``--help``
    and the README tell an operator the same."""
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    listed = readme.replace("\\\n", " ").splitlines()  # a command continued on lines: one
    context = click.Context(app.cli)
    unnamed = []
    for name in app.cli.list_commands(context):
        command = app.cli.get_command(context, name)
        if isinstance(command, ServiceGroup) and name != "db":
            each = [(f"{name} {sub}", command.commands[sub]) for sub in command.commands]
        elif isinstance(command, ServiceCommand) and name != "db":
            each = [(name, command)]
        else:
            continue
        for full, one in each:
            lines = [line for line in listed if f"flask --app service {full} " in line]
            options = [
                option
                for param in one.params
                if isinstance(param, click.Option)
                for option in param.opts
                if option.startswith("--")
            ]
            unnamed += [
                f"{full} {option}"
                for option in options
                if not any(option in line for line in lines)
            ]
    assert not unnamed, f"README does not name {unnamed}"


def test_a_right_the_database_refuses_ends_a_command_with_one_line() -> None:
    """``db upgrade`` as a role that does not own the database (PostgreSQL 15 grants nobody
    else CREATE in public) fails on the first table: one line, not a hundred of traceback."""
    from psycopg.errors import InsufficientPrivilege
    from sqlalchemy.exc import ProgrammingError

    def upgrade() -> None:
        raise ProgrammingError(
            "CREATE TABLE alembic_version (...)",
            {},
            InsufficientPrivilege("permission denied for schema public\nLINE 1: ..."),
        )

    result = CliRunner().invoke(ServiceCommand("upgrade", callback=upgrade))
    assert result.exit_code == 1, result.exception
    assert result.output == (
        "Error: the database refused this role a right: permission denied for schema public "
        "(the service's role must own its database, and the pg_trgm and unaccent extensions "
        "be created)\n"
    )


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def unmigrated_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database of this test's own: SQLite's file, or PostgreSQL's, dropped after."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'new.sqlite'}"
        return
    yield request.getfixturevalue("throwaway_database")


def test_a_database_not_upgraded_ends_a_command_with_one_line(
    unmigrated_url: str, tmp_path: Path
) -> None:
    """A command run before ``db upgrade`` (on a new database, or by new code on the schema
    of the version before) says so in one line, not in the traceback of the first table or
    column it misses; on the latest schema the same command runs."""
    app = create_app(base_config(unmigrated_url, tmp_path / "instance"))
    runner = app.test_cli_runner()
    try:
        result = runner.invoke(args=["admin", "list"])
        assert result.exit_code == 1, result.exception
        assert result.output == (
            "Error: the database has none of the service's tables: run "
            "`flask --app service db upgrade` first\n"
        )
        first = "c4cda3c84275"  # the first migration: games and players, no admins yet
        assert runner.invoke(args=["db", "upgrade", first]).exit_code == 0
        with app.app_context():
            config = app.extensions["migrate"].migrate.get_config()
            head = ScriptDirectory.from_config(config).get_current_head()
        result = runner.invoke(args=["admin", "list"])
        assert result.exit_code == 1, result.exception
        assert result.output == (
            f"Error: the database's schema is that of migration {first}, older than this "
            f"version's ({head}): run `flask --app service db upgrade` first\n"
        )
        with app.app_context(), db.engine.begin() as connection:  # a later version's schema
            connection.execute(text("UPDATE alembic_version SET version_num = 'ffff00001111'"))
        result = runner.invoke(args=["admin", "list"])
        assert result.exit_code == 1, result.exception
        assert result.output == (
            "Error: the database's schema is that of migration ffff00001111, which this "
            f"version does not know (its latest is {head}): run the version that migrated it\n"
        )
        with app.app_context(), db.engine.begin() as connection:
            connection.execute(text(f"UPDATE alembic_version SET version_num = '{first}'"))
        assert runner.invoke(args=["db", "upgrade"]).exit_code == 0
        result = runner.invoke(args=["admin", "list"])
        assert result.exit_code == 0, result.output
    finally:
        with app.app_context():
            db.engine.dispose()


def test_a_migration_missing_a_table_is_not_told_to_run_the_migrations(tmp_path: Path) -> None:
    """``db upgrade`` itself failing on a table that is not there is a fault to look into."""
    app = create_app(base_config(f"sqlite:///{tmp_path / 'broken.sqlite'}", tmp_path / "i"))
    runner = app.test_cli_runner()
    try:
        assert runner.invoke(args=["db", "upgrade", "c4cda3c84275"]).exit_code == 0
        with app.app_context(), db.engine.begin() as connection:
            connection.execute(text("DROP TABLE players"))
        result = runner.invoke(args=["db", "upgrade"])
        assert result.exit_code == 1
        assert "no such table: players" in str(result.exception)
        assert "db upgrade` first" not in result.output
    finally:
        with app.app_context():
            db.engine.dispose()


@pytest.mark.postgres
def test_migrations_started_together_run_one_after_the_other(
    throwaway_database: str, tmp_path: Path
) -> None:
    """Two ``db upgrade`` at once (two web services starting, each migrating first) take
    turns: the second finds the schema migrated and does nothing, instead of failing on
    the tables the first is creating."""
    env = gunicorn_env(tmp_path, DATABASE_URL=throwaway_database)
    waiting = (
        "SELECT count(*) FROM pg_locks JOIN pg_database ON pg_database.oid = database"
        " WHERE datname = current_database() AND locktype = 'advisory' AND NOT granted"
    )
    with psycopg.connect(throwaway_database) as holder:
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (schema.MIGRATION_LOCK,))
        upgrades = [
            subprocess.Popen(
                [*FLASK, "db", "upgrade"],
                env=env,
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for _ in range(2)
        ]
        queued = 0
        while queued < 2 and any(upgrade.poll() is None for upgrade in upgrades):
            with psycopg.connect(throwaway_database, autocommit=True) as watcher:
                queued = watcher.execute(waiting).fetchone()[0]  # type: ignore[index]
            time.sleep(0.05)
        holder.rollback()  # lets the first go
    said = [upgrade.communicate(timeout=60)[0] for upgrade in upgrades]
    assert queued == 2, said
    assert [upgrade.returncode for upgrade in upgrades] == [0, 0], said
    assert "Traceback" not in "".join(said)
