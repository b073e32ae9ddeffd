"""Fixtures: an app on a fresh SQLite file or on a fresh PostgreSQL database, and games.

PostgreSQL is the one at ``TEST_POSTGRES_URL`` (default: the local server,
role root, database test), where each test worker creates a database of its
own and drops it at the end. Under ``CI=true`` a missing PostgreSQL fails the
run; elsewhere the PostgreSQL half of the suite is skipped with a message.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from jinja2 import BytecodeCache, Environment
from jinja2.bccache import Bucket
from psycopg import sql
from werkzeug import security
from werkzeug.routing import Rule

from service import create_app
from service.games import Seating, create_game
from service.links import token_for
from service.mail.worker import drain
from service.models import Game, db
from service.unit_of_work import transaction

from .smtp import SMTPServer

POSTGRES_URL = os.environ.get("TEST_POSTGRES_URL", "postgresql://root@127.0.0.1:5432/test")
IN_CI = os.environ.get("CI", "").lower() == "true"
BASE_URL = "http://splitmind.test"


def base_config(database_url: str, instance: Path) -> dict[str, Any]:
    """Settings for a test app: no real mail server, fixed secret, a test address."""
    return {
        "DATABASE_URL": database_url,
        "SECRET_KEY": "test-secret-key",
        "BASE_URL": BASE_URL,
        "SPLITMIND_ENV": "development",
        "BOT_DELAY_SECONDS": "0",
        "PAGE_POLL_SECONDS": "0.2",  # the browser tests' pages follow the opponent at once
        "TESTING": True,
        "instance_path": str(instance),
    }


def _migrate(app: Flask) -> None:
    from flask_migrate import upgrade

    with app.app_context():
        upgrade()


def _postgres_available() -> str | None:
    try:
        with psycopg.connect(POSTGRES_URL, connect_timeout=3):
            return None
    except psycopg.OperationalError as exc:
        return str(exc).strip().splitlines()[0]


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """The URL of the PostgreSQL server's maintenance database; fails under CI if unreachable."""
    problem = _postgres_available()
    if problem:
        message = f"PostgreSQL is not reachable at {POSTGRES_URL}: {problem}"
        if IN_CI:
            pytest.fail(message + " (required when CI=true)", pytrace=False)
        pytest.skip(message + "; start it or set TEST_POSTGRES_URL")
    return POSTGRES_URL


@pytest.fixture(scope="session")
def postgres_database(
    postgres_server: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A migrated PostgreSQL database of this test worker's own, dropped at the end."""
    name = f"splitmind_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        # A test database need not survive a crash of the server: commits do not wait
        # for the disk, which is most of a commit's time on a shared machine.
        conn.execute(
            sql.SQL("ALTER DATABASE {} SET synchronous_commit TO off").format(sql.Identifier(name))
        )
    url = postgres_server.rsplit("/", 1)[0] + "/" + name
    instance = tmp_path_factory.mktemp("pg-instance")
    app = create_app(base_config(url, instance))
    _migrate(app)
    with app.app_context():
        db.engine.dispose()
    try:
        yield url
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture
def throwaway_database(postgres_server: str) -> Iterator[str]:
    """An empty PostgreSQL database of this test's own, dropped at the end."""
    name = f"splitmind_throwaway_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield postgres_server.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite file that each test copies."""
    folder = tmp_path_factory.mktemp("sqlite-template")
    path = folder / "template.sqlite"
    _migrate(create_app(base_config(f"sqlite:///{path}", folder)))
    return path


def _truncate(app: Flask) -> None:
    """Empty every table and restart its ids for the next test.

    DELETE, dependents first, rather than TRUNCATE: on tables of a test's few rows it
    takes a sixth of the time (TRUNCATE makes new files for each table), and every
    test pays it. Only the tables holding rows are emptied and only the sequences
    drawn from are restarted (most tests touch a few of them), in one round trip
    after the one that finds them.
    """
    with app.app_context():
        db.session.remove()
        tables = list(reversed(db.metadata.sorted_tables))
        quote = db.engine.dialect.identifier_preparer.quote
        with db.engine.begin() as conn:
            # A sequence never drawn from, or restarted since, has no last value.
            used = conn.exec_driver_sql(
                "SELECT 'S' || quote_ident(sequencename) FROM pg_sequences"
                " WHERE schemaname = current_schema() AND last_value IS NOT NULL"
                + "".join(
                    f" UNION ALL SELECT 'T{table.name}'"
                    f" WHERE EXISTS (SELECT FROM {quote(table.name)})"
                    for table in tables
                )
            ).scalars()
            found = set(used)
            statements = [f"DELETE FROM {quote(t.name)}" for t in tables if f"T{t.name}" in found]
            statements += [f"ALTER SEQUENCE {name[1:]} RESTART" for name in found if name[0] == "S"]
            if statements:
                conn.exec_driver_sql("; ".join(statements))
        db.engine.dispose()


def _make_app(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, extra: dict[str, Any]
) -> Iterator[Flask]:
    if backend == "postgres":
        url = request.getfixturevalue("postgres_database")
    else:
        template = request.getfixturevalue("sqlite_template")
        path = tmp_path / "game.sqlite"
        shutil.copy(template, path)
        url = f"sqlite:///{path}"
    app = create_app({**base_config(url, tmp_path / "instance"), **extra})
    try:
        yield app
    finally:
        if backend == "postgres":
            _truncate(app)
        else:
            with app.app_context():
                db.session.remove()
                db.engine.dispose()


@pytest.fixture
def app_config() -> dict[str, Any]:
    """Extra settings a test module may override."""
    return {}


BACKENDS = ("postgres", "sqlite")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run ``app`` tests on PostgreSQL, and on SQLite too where marked ``both_backends``.

    SQLite is what ``make run`` serves on; the tests marked run everything whose
    SQL differs between the two (migrations, the outbox and its worker, the unit
    of work, statistics, settings, one whole game). A test may name its backends
    itself with ``parametrize("app", [...], indirect=True)``.
    """
    if "app" not in metafunc.fixturenames:
        return
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0]
        if "app" in (names.replace(" ", "").split(",") if isinstance(names, str) else names):
            return
    both = metafunc.definition.get_closest_marker("both_backends") is not None
    metafunc.parametrize("app", BACKENDS if both else BACKENDS[:1], indirect=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Start the tests marked ``slow`` first, in their order, and the rest after them.

    Each xdist worker is handed a few tests at a time in this order; a long test
    handed out last would keep one worker busy while the other has finished.
    """
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture
def app(
    request: pytest.FixtureRequest, tmp_path: Path, app_config: dict[str, Any]
) -> Iterator[Flask]:
    """The app on PostgreSQL (and on SQLite for tests marked ``both_backends``)."""
    yield from _make_app(request.param, request, tmp_path, app_config)


@pytest.fixture
def pg_app(
    request: pytest.FixtureRequest, tmp_path: Path, app_config: dict[str, Any]
) -> Iterator[Flask]:
    """The app on PostgreSQL only (row locks, concurrency)."""
    yield from _make_app("postgres", request, tmp_path, app_config)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def runner(app: Flask) -> FlaskCliRunner:
    return app.test_cli_runner()


@pytest.fixture
def ctx(app: Flask) -> Iterator[Flask]:
    """An application context for tests that call the service layer directly."""
    with app.app_context():
        yield app


def create_kim_and_sam(seed: int, options: dict[str, Any]) -> Game:
    """Kim (the Keeper) against Sam, dealt from ``seed``. Options besides those of
    ``create_game``: ``keeper_name``, ``shadow_name``, and ``keeper_language``,
    ``shadow_language`` (the language each player reads)."""
    return create_game(
        Seating(
            "kim@example.com",
            options.pop("keeper_name", "Kim"),
            options.pop("keeper_language", None),
        ),
        Seating(
            "sam@example.com",
            options.pop("shadow_name", "Sam"),
            options.pop("shadow_language", None),
        ),
        seed=seed,
        **options,
    )


@pytest.fixture
def make_game(app: Flask) -> Callable[..., dict[str, Any]]:
    """Create a game; returns its id and each seat's token.

    Options besides those of ``create_game``: ``keeper_name``, ``shadow_name``, and
    ``keeper_language``, ``shadow_language`` (the language each player reads).
    """

    def make(seed: int = 7, **options: Any) -> dict[str, Any]:
        with app.app_context(), transaction():
            game = create_kim_and_sam(seed, options)
            return {
                "id": game.id,
                "keeper": token_for(game.player("keeper")),
                "shadow": token_for(game.player("shadow")),
            }

    return make


def load_game(app: Flask, game_id: int) -> Game:
    """A fresh copy of the game row, detached from any session."""
    with app.app_context():
        game = db.session.get(Game, game_id)
        assert game is not None
        db.session.expunge(game)
        return game


HASH_PASSWORD, CHECK_PASSWORD = security.generate_password_hash, security.check_password_hash


@functools.cache
def _password_hash(password: str, *args: Any, **kwargs: Any) -> str:
    return HASH_PASSWORD(password, *args, **kwargs)


@functools.cache
def _password_check(pwhash: str, password: str) -> bool:
    return CHECK_PASSWORD(pwhash, password)


@pytest.fixture(autouse=True, scope="session")
def passwords_hashed_once() -> Iterator[None]:
    """Hash each password, and check each password against each hash, once per test worker.

    A scrypt hash or check takes about 0.1 s of a core, and most admin tests make an
    account and sign in. The hashes are real (the same salt for the same password)
    and every check still runs scrypt the first time, so a wrong password is refused.
    Modules of the service imported later take the cached functions from werkzeug.
    """
    with pytest.MonkeyPatch.context() as patch:
        for module in [security] + [
            module
            for name, module in list(sys.modules.items())
            if name == "service" or name.startswith("service.")
        ]:
            for original, cached in (
                (HASH_PASSWORD, _password_hash),
                (CHECK_PASSWORD, _password_check),
            ):
                if getattr(module, original.__name__, None) is original:
                    patch.setattr(module, original.__name__, cached)
        yield


COMPILE_BUILDER = Rule._compile_builder
BUILDERS: dict[tuple[Any, ...], Callable[..., Any]] = {}


def _compile_builder_once(self: Rule, append_unknown: bool = True) -> Callable[..., Any]:
    """A rule's URL builder, made once per worker for each rule of the same text and defaults.

    werkzeug writes and compiles Python source for each rule of each new app: two
    builders a rule, about 40 ms an app, and every test makes an app. A builder reads
    its rule's converters through the rule it is bound to, and compiles in nothing else
    from the rule than its parts and defaults, so the same function serves every app.
    """
    key = (self.rule, self.subdomain, self.host, tuple(self._trace), repr(self.defaults))
    key += (append_unknown,)
    if key not in BUILDERS:
        BUILDERS[key] = COMPILE_BUILDER(self, append_unknown)
    return BUILDERS[key]


@pytest.fixture(autouse=True, scope="session")
def url_builders_compiled_once() -> Iterator[None]:
    """Each distinct URL rule's builder is compiled once per test worker (see above)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Rule, "_compile_builder", _compile_builder_once)
        yield


class CompiledTemplates(BytecodeCache):
    """Templates compiled once per test worker, for every app whose Jinja settings are the same.

    Each test makes an app, and each app's Jinja environment compiles each template it
    renders anew: about 13 ms a template, a tenth of a second or more for a test that
    renders a page and its emails. Jinja's bytecode cache keeps the compiled code under
    the template's name and the checksum of its source, so an edited template is
    compiled again; the key here also holds each setting that changes the code made.
    """

    def __init__(self) -> None:
        self.code: dict[str, bytes] = {}

    @staticmethod
    def settings(environment: Environment) -> str:
        """What, besides the source, decides the code a template compiles to."""

        def named(value: Any) -> Any:
            return getattr(value, "__qualname__", value)

        return repr(
            (
                sorted(environment.extensions),
                getattr(environment, "newstyle_gettext", None),
                named(environment.autoescape),
                named(environment.finalize),
                environment.is_async,
                environment.optimized,
                environment.block_start_string,
                environment.block_end_string,
                environment.variable_start_string,
                environment.variable_end_string,
                environment.comment_start_string,
                environment.comment_end_string,
                environment.line_statement_prefix,
                environment.line_comment_prefix,
                environment.trim_blocks,
                environment.lstrip_blocks,
                environment.newline_sequence,
                environment.keep_trailing_newline,
            )
        )

    def get_bucket(
        self, environment: Environment, name: str, filename: str | None, source: str
    ) -> Bucket:
        key = self.get_cache_key(name, filename) + self.settings(environment)
        bucket = Bucket(environment, key, self.get_source_checksum(source))
        self.load_bytecode(bucket)
        return bucket

    def load_bytecode(self, bucket: Bucket) -> None:
        if bucket.key in self.code:
            bucket.bytecode_from_string(self.code[bucket.key])

    def dump_bytecode(self, bucket: Bucket) -> None:
        self.code[bucket.key] = bucket.bytecode_to_string()


@pytest.fixture(autouse=True, scope="session")
def templates_compiled_once() -> Iterator[None]:
    """Every app of a test worker shares the compiled templates (see above)."""
    with pytest.MonkeyPatch.context() as patch:
        options = {**Flask.jinja_options, "bytecode_cache": CompiledTemplates()}
        patch.setattr(Flask, "jinja_options", options)
        yield


STARTED_SMTP: set[tuple[str, int]] = set()


@pytest.fixture(autouse=True)
def only_our_smtp_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any test that would talk to an SMTP server the tests did not start."""
    import smtplib

    connect = smtplib.SMTP.connect

    def guarded(
        self: smtplib.SMTP, host: str = "localhost", port: int = 0, *args: Any, **kwargs: Any
    ) -> Any:
        if (host, port) not in STARTED_SMTP:
            pytest.fail(f"a test tried to reach the SMTP server {host}:{port}", pytrace=False)
        return connect(self, host, port, *args, **kwargs)

    monkeypatch.setattr(smtplib.SMTP, "connect", guarded)


@pytest.fixture
def smtp_server() -> Iterator[SMTPServer]:
    """A real SMTP server (aiosmtpd) for this test."""
    server = SMTPServer().start()
    STARTED_SMTP.add(("127.0.0.1", server.port))
    try:
        yield server
    finally:
        server.stop()
        STARTED_SMTP.discard(("127.0.0.1", server.port))


@pytest.fixture
def deliver(app: Flask) -> Callable[[], int]:
    """Run the mail worker until the queue is empty; returns how many messages it handled."""

    def run() -> int:
        with app.app_context():
            return drain()

    return run


@pytest.fixture
def mail_config(smtp_server: SMTPServer) -> dict[str, Any]:
    """Settings that send through the test's SMTP server, retrying at once."""
    return {"MAIL_SERVER": "127.0.0.1", "MAIL_PORT": str(smtp_server.port), "MAIL_RETRY_SCALE": 0}
