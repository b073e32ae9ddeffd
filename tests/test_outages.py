"""A database that is down, slow or locked is an outage: 503 with Retry-After, never a 500,
and never a request that waits until gunicorn kills its worker. So is a rate limiter's storage
(Redis) that is down, for the requests that a limit guards."""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
import yaml
from alembic.script import ScriptDirectory
from flask import Flask
from flask_migrate import upgrade
from psycopg import sql
from sqlalchemy import func, select, text
from werkzeug.serving import make_server

from service import create_app
from service.admin.auth import create_admin
from service.deadlines import sweep
from service.extensions import limiter
from service.games import Seating, create_game
from service.links import SALT, new_link_key, serializer, token_for
from service.models import AdminUser, Event, Game, Invitation, OutboxMessage, db
from service.unit_of_work import transaction

from .conftest import base_config
from .helpers import ask_for_game, csrf_token, pick_action
from .servers import ROOT
from .smtp import free_port

pytestmark = pytest.mark.both_backends


UNAVAILABLE_PAGE = "The service is unavailable for a moment: try again later."


@pytest.fixture
def down(tmp_path: Path) -> Iterator[Flask]:
    """An app whose PostgreSQL is not there: nothing listens on its port."""
    app = create_app(
        base_config(f"postgresql://root@127.0.0.1:{free_port()}/splitmind", tmp_path / "down")
    )
    yield app
    with app.app_context():
        db.engine.dispose()


def link(app: Flask) -> str:
    """A well-signed player token: only the database could tell whether it is live."""
    with app.app_context():
        return serializer(SALT).dumps([1, new_link_key()])


def assert_unavailable(response: Any, page: bool = True) -> None:
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "30"
    if page:
        assert UNAVAILABLE_PAGE in response.get_data(as_text=True)


def test_the_api_answers_503_in_json_when_the_database_is_down(
    down: Flask, caplog: pytest.LogCaptureFixture
) -> None:
    token = link(down)
    client = down.test_client()
    for response in (
        client.get(f"/api/play/{token}"),
        client.post(f"/api/play/{token}", json={"version": 0, "exchange": ["1H"]}),
    ):
        assert_unavailable(response, page=False)
        assert response.get_json() == {
            "error": {
                "code": "service_unavailable",
                "message": "The service is unavailable for a moment: try again later.",
            }
        }
    assert "Connection refused; answered 503 to GET /api/play/[redacted]" in caplog.text
    assert token not in caplog.text


def test_pages_answer_503_in_the_visitors_language_when_the_database_is_down(down: Flask) -> None:
    token = link(down)
    client = down.test_client()
    assert_unavailable(client.get(f"/play/{token}"))
    assert_unavailable(client.post(f"/play/{token}", data={"kind": "play", "version": "0"}))
    form = csrf_token(client.get("/admin/login").get_data(as_text=True))
    signing_in = client.post(
        "/admin/login", data={"csrf_token": form, "name": "ada", "password": "secret"}
    )
    assert_unavailable(signing_in)
    french = client.get(f"/play/{token}", headers={"Accept-Language": "fr"})
    assert french.status_code == 503
    assert "Le service est indisponible pour un moment" in french.get_data(as_text=True)


def test_the_front_page_and_the_forms_it_leads_to_answer_503_when_the_database_is_down(
    down: Flask,
) -> None:
    """They need no row, but every form they lead to does: the outage shows at once."""
    client = down.test_client()
    for path in ("/", "/new", "/links"):
        assert_unavailable(client.get(path))
    assert client.get("/rules").status_code == 200  # the rules need no database


@pytest.mark.parametrize("app_config", [{"RATELIMIT_DEFAULT": "2 per minute"}])
def test_healthz_says_ok_while_the_database_answers(app: Flask) -> None:
    """Without a cookie, and whatever the rate limits (here, two requests a minute elsewhere)."""
    client = app.test_client()
    try:
        for _ in range(5):
            response = client.get("/healthz")
            assert response.status_code == 200
            assert response.get_json() == {"status": "ok"}
            assert "Set-Cookie" not in response.headers
        invitation = "/invitations/no-such-invitation"
        assert [client.get(invitation).status_code for _ in range(3)] == [404, 404, 429]
    finally:
        # Flask-Limiter keeps default limits on its one instance for the process's later apps.
        limiter.limit_manager.set_default_limits([])


def test_healthz_works_on_a_thread_that_already_runs_an_event_loop(pg_app: Flask) -> None:
    """As under an async worker, or beside Playwright's loop in this very process."""

    async def ask() -> Any:
        return pg_app.test_client().get("/healthz")

    # A thread of the test's own: the test process may already run a loop on this one.
    answers: list[Any] = []
    thread = threading.Thread(target=lambda: answers.append(asyncio.run(ask())))
    thread.start()
    thread.join(10)
    response = answers[0]
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok"}


def test_healthz_says_unavailable_when_the_database_is_down(down: Flask) -> None:
    response = down.test_client().get("/healthz")
    assert response.status_code == 503
    assert response.get_json() == {"status": "unavailable"}
    assert response.headers["Retry-After"] == "30"


def new_game(app: Flask) -> dict[str, Any]:
    with app.app_context():
        with transaction():
            game = create_game(Seating("kim@example.com", "Kim"), Seating("sam@example.com", "Sam"))
        return {"id": game.id, **{player.seat: token_for(player) for player in game.players}}


@pytest.mark.postgres
def test_every_connection_carries_the_timeouts(pg_app: Flask, postgres_database: str) -> None:
    with pg_app.app_context():
        assert db.session.execute(text("SHOW statement_timeout")).scalar() == "5s"
        assert db.session.execute(text("SHOW lock_timeout")).scalar() == "3s"
        connection = db.session.connection().connection.driver_connection
        assert connection.info.get_parameters()["connect_timeout"] == "5"
    # Options of the operator's own, in the URL, are kept.
    app = create_app(
        {
            **base_config(f"{postgres_database}?options=-c%20work_mem%3D7MB", pg_app.instance_path),
            "DATABASE_LOCK_TIMEOUT": "0.25",
        }
    )
    with app.app_context():
        assert db.session.execute(text("SHOW work_mem")).scalar() == "7MB"
        assert db.session.execute(text("SHOW lock_timeout")).scalar() == "250ms"
        db.session.remove()
        db.engine.dispose()


@pytest.mark.postgres
def test_a_game_held_too_long_holds_back_no_other_in_the_sweep(
    pg_app: Flask, postgres_database: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Another connection holds one late game's row: the sweep ends the other, leaves that one
    as it was, and the next sweep ends it."""
    held, free = new_game(pg_app), new_game(pg_app)
    impatient = create_app(
        {**base_config(postgres_database, tmp_path / "impatient"), "DATABASE_LOCK_TIMEOUT": "0.2"}
    )
    with impatient.app_context():
        late = db.session.get_one(Game, held["id"]).deadline + timedelta(seconds=1)
        db.session.rollback()
        with psycopg.connect(postgres_database) as holder:
            holder.execute("SET idle_in_transaction_session_timeout = '60s'")
            holder.execute("SELECT id FROM games WHERE id = %s FOR UPDATE", [held["id"]])
            assert sweep(late).expired == [free["id"]]
            holder.rollback()
        assert f"sweep: game {held['id']} left for the next: canceling statement" in caplog.text
        assert db.session.get_one(Game, held["id"]).status == "active"
        db.session.rollback()
        assert sweep(late).expired == [held["id"]]
        assert db.session.get_one(Game, held["id"]).status == "abandoned"
        db.session.remove()
        db.engine.dispose()


@pytest.mark.postgres
def test_healthz_connects_as_the_service_does(pg_app: Flask, postgres_database: str) -> None:
    """With the options of the URL, spaces and all, as libpq reads them: an option's value
    with a space (``-c search_path=...``) must not leave the check failing while the service
    serves."""
    url = f"{postgres_database}?options=-c%20search_path%3Dpublic&application_name=split%20mind"
    app = create_app(base_config(url, pg_app.instance_path))
    try:
        assert app.test_client().get("/healthz").status_code == 200
    finally:
        with app.app_context():
            db.engine.dispose()


@pytest.mark.postgres
@pytest.mark.parametrize(
    "timeouts",
    [
        {"DATABASE_LOCK_TIMEOUT": "0.2", "DATABASE_STATEMENT_TIMEOUT": "0"},
        {"DATABASE_LOCK_TIMEOUT": "0", "DATABASE_STATEMENT_TIMEOUT": "0.2"},
    ],
    ids=["lock_timeout", "statement_timeout"],
)
def test_a_move_behind_a_lock_held_too_long_is_a_503_and_changes_nothing(
    pg_app: Flask, postgres_database: str, tmp_path: Path, timeouts: dict[str, str]
) -> None:
    """Another connection holds the game's row: the move gives up, and can be sent again."""
    game = new_game(pg_app)
    impatient = create_app({**base_config(postgres_database, tmp_path / "impatient"), **timeouts})
    client = impatient.test_client()
    view = client.get(f"/api/play/{game['keeper']}").get_json()
    move = {"version": 0, **pick_action(view, random.Random(1))}
    with psycopg.connect(postgres_database) as holder:
        # Should the move wait after all, the server ends the holder in a minute and the move
        # goes through: a 200, not a test that hangs.
        holder.execute("SET idle_in_transaction_session_timeout = '60s'")
        holder.execute("SELECT id FROM games WHERE id = %s FOR UPDATE", [game["id"]])
        response = client.post(f"/api/play/{game['keeper']}", json=move)
        assert_unavailable(response, page=False)
        page = client.post(
            f"/play/{game['keeper']}",
            data={"kind": "exchange", "version": "0", "cards": move["exchange"]},
        )
        assert_unavailable(page)
        holder.rollback()
    with pg_app.app_context():
        stored = db.session.get(Game, game["id"])
        assert stored.version == 0
        moves = select(func.count()).select_from(Event).filter_by(game_id=game["id"], kind="move")
        assert db.session.scalar(moves) == 0
    assert client.post(f"/api/play/{game['keeper']}", json=move).status_code == 200
    with impatient.app_context():
        db.engine.dispose()


@pytest.mark.postgres
def test_a_move_refused_by_a_read_only_database_is_a_503_and_changes_nothing(
    pg_app: Flask, postgres_database: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A server that takes no writes (a standby while a failover completes, a database set
    read-only for maintenance) is unavailable for a while, not a fault of the service's."""
    game = new_game(pg_app)
    read_only = f"{postgres_database}?options=-c%20default_transaction_read_only%3Don"
    app = create_app(base_config(read_only, tmp_path / "read-only"))
    client = app.test_client()
    view = client.get(f"/api/play/{game['keeper']}").get_json()
    move = {"version": 0, **pick_action(view, random.Random(1))}
    assert_unavailable(client.post(f"/api/play/{game['keeper']}", json=move), page=False)
    said = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert [record.getMessage() for record in said] == [
        "database unavailable: cannot execute SELECT FOR UPDATE in a read-only transaction; "
        "answered 503 to POST /api/play/[redacted]"
    ]
    assert said[0].exc_info is None
    result = app.test_cli_runner().invoke(args=["tick"])
    assert result.exit_code == 1
    assert result.output.endswith("in a read-only transaction\n")
    assert "Traceback" not in result.output
    with pg_app.app_context():
        assert db.session.get(Game, game["id"]).version == 0
    with app.app_context():
        db.engine.dispose()


def test_a_database_that_accepts_and_never_answers_is_a_503(tmp_path: Path) -> None:
    """A frozen server: the connection is accepted, and nothing more comes back."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        app = create_app(
            {
                **base_config(f"postgresql://root@127.0.0.1:{port}/splitmind", tmp_path),
                "DATABASE_CONNECT_TIMEOUT": "1",
            }
        )
        response = app.test_client().get(f"/api/play/{link(app)}")
        assert_unavailable(response, page=False)
        assert app.test_client().get("/healthz").status_code == 503
        with app.app_context():
            db.engine.dispose()


@pytest.mark.postgres
def test_a_migration_waits_for_its_locks_whatever_the_timeouts(
    throwaway_database: str, tmp_path: Path
) -> None:
    """``flask db upgrade`` waits behind a lock longer than the statement and lock timeouts."""
    name = "splitmind-migration-under-test"
    app = create_app(
        {
            **base_config(f"{throwaway_database}?application_name={name}", tmp_path),
            "DATABASE_STATEMENT_TIMEOUT": "0.1",
            "DATABASE_LOCK_TIMEOUT": "0.1",
        }
    )
    failures: list[Exception] = []

    def migrate() -> None:
        with app.app_context():
            try:
                upgrade()
            except Exception as exc:  # reported below, in the test's thread
                failures.append(exc)
            finally:
                db.engine.dispose()

    with (
        psycopg.connect(throwaway_database) as holder,
        psycopg.connect(throwaway_database, autocommit=True) as watcher,
    ):
        # Alembic writes the first revision into alembic_version: it waits for the holder,
        # and is let go once it has waited five times as long as its timeouts would allow.
        holder.execute("CREATE TABLE alembic_version (version_num varchar(32) PRIMARY KEY)")
        holder.commit()
        holder.execute("LOCK TABLE alembic_version IN SHARE MODE")
        migration = threading.Thread(target=migrate)
        migration.start()
        waiting = (
            "SELECT 1 FROM pg_stat_activity WHERE application_name = %s"
            " AND wait_event_type = 'Lock' AND clock_timestamp() - query_start > '0.5 s'"
        )
        while migration.is_alive() and not watcher.execute(waiting, [name]).fetchone():
            time.sleep(0.05)
        holder.rollback()
        migration.join(timeout=60)
    assert not failures, failures
    with app.app_context():
        head = ScriptDirectory.from_config(app.extensions["migrate"].migrate.get_config())
    with psycopg.connect(throwaway_database) as conn:
        (version,) = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    assert version == head.get_current_head()


@pytest.mark.postgres
def test_the_compose_healthcheck_follows_the_database(
    throwaway_database: str, postgres_server: str, tmp_path: Path
) -> None:
    """The web service's healthcheck command, run against the app: healthy while the database
    takes connections, unhealthy once it refuses them."""
    web = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["web"]
    kind, program, flag, code = web["healthcheck"]["test"]
    assert (kind, program, flag) == ("CMD", "python", "-c")
    assert "http://127.0.0.1:8000/healthz" in code
    app = create_app(base_config(throwaway_database, tmp_path))
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    check = [sys.executable, "-c", code.replace(":8000/", f":{server.port}/")]
    try:
        assert subprocess.run(check, capture_output=True, timeout=30).returncode == 0
        name = throwaway_database.rsplit("/", 1)[1]
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            refuse = sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS false")
            conn.execute(refuse.format(sql.Identifier(name)))
        unhealthy = subprocess.run(check, capture_output=True, text=True, timeout=30)
        assert unhealthy.returncode == 1
        assert "HTTP Error 503: SERVICE UNAVAILABLE" in unhealthy.stderr
    finally:
        server.shutdown()
        server.server_close()


# A Redis that is not there (nothing listens on its port), with a password the log must not show.
REDIS_PASSWORD = "redis-secret-0f9c"
LIMITS_DOWN = {"RATELIMIT_STORAGE_URI": f"redis://:{REDIS_PASSWORD}@127.0.0.1:{free_port()}/0"}


def assert_logged_once(caplog: pytest.LogCaptureFixture, request: str) -> None:
    """One warning line and no traceback for the refused request, without the storage's
    password."""
    lines = [record for record in caplog.records if record.name == "service.errors"]
    assert [(record.levelname, record.exc_info) for record in lines] == [("WARNING", None)]
    assert lines[0].getMessage().startswith("rate-limit storage unavailable: ")
    assert lines[0].getMessage().endswith(f"Connection refused.; answered 503 to {request}")
    assert REDIS_PASSWORD not in caplog.text
    caplog.clear()


@pytest.mark.parametrize("app_config", [LIMITS_DOWN])
def test_the_forms_that_send_email_answer_503_while_their_limits_cannot_be_checked(
    pg_app: Flask, caplog: pytest.LogCaptureFixture
) -> None:
    """Refused, not let through unlimited: no game, no invitation, no email; while a player's
    links play on."""
    client = pg_app.test_client()
    caplog.set_level("WARNING")
    assert_unavailable(ask_for_game(client))
    assert_logged_once(caplog, "POST /new")
    french = ask_for_game(client, {"Accept-Language": "fr"})
    assert french.status_code == 503
    assert "Le service est indisponible pour un moment" in french.get_data(as_text=True)
    caplog.clear()
    token = csrf_token(client.get("/links").get_data(as_text=True))
    assert_unavailable(
        client.post("/links", data={"email": "kim@example.com", "csrf_token": token})
    )
    assert_logged_once(caplog, "POST /links")
    with pg_app.app_context():
        for table in (Game, Invitation, OutboxMessage):
            assert db.session.scalar(select(func.count()).select_from(table)) == 0, table
    # A player's links are limited nowhere: the move page and the API play on.
    game = new_game(pg_app)
    assert client.get(f"/play/{game['keeper']}").status_code == 200
    view = client.get(f"/api/play/{game['keeper']}").get_json()
    move = {"version": 0, **pick_action(view, random.Random(1))}
    assert client.post(f"/api/play/{game['keeper']}", json=move).status_code == 200
    assert client.get("/healthz").status_code == 200  # the service serves (see its docstring)


@pytest.mark.parametrize("app_config", [LIMITS_DOWN])
def test_signing_in_answers_503_while_its_limits_cannot_be_checked(
    pg_app: Flask, caplog: pytest.LogCaptureFixture
) -> None:
    """Neither a wrong password nor the right one is checked: no guess goes uncounted, and no
    one is signed in."""
    with pg_app.app_context(), transaction():
        create_admin("ada", "correct horse battery staple")
    client = pg_app.test_client()
    caplog.set_level("WARNING")
    for password in ("guess", "correct horse battery staple"):
        form = csrf_token(client.get("/admin/login").get_data(as_text=True))
        signing_in = client.post(
            "/admin/login", data={"csrf_token": form, "name": "ada", "password": password}
        )
        assert_unavailable(signing_in)
        assert_logged_once(caplog, "POST /admin/login")
    with client.session_transaction() as session:
        assert "_user_id" not in session
    assert client.get("/admin/").status_code == 302  # to the sign-in form
    with pg_app.app_context():
        admin = db.session.scalars(select(AdminUser)).one()
        assert (admin.last_login_at, admin.locked_until) == (None, None)


def test_a_redis_that_accepts_and_never_answers_is_a_503(
    tmp_path: Path, postgres_database: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A frozen Redis: the sign-in's limit waits its socket timeout, then refuses."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        app = create_app(
            {
                **base_config(postgres_database, tmp_path),
                "RATELIMIT_STORAGE_URI": f"redis://127.0.0.1:{port}/0",
            }
        )
        client = app.test_client()
        form = csrf_token(client.get("/admin/login").get_data(as_text=True))
        caplog.set_level("WARNING")
        signing_in = client.post(
            "/admin/login", data={"csrf_token": form, "name": "ada", "password": "guess"}
        )
        assert_unavailable(signing_in)
        assert "rate-limit storage unavailable: Timeout" in caplog.text
