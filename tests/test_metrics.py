"""``/metrics``: Prometheus' text format, for the holder of ``METRICS_TOKEN`` alone."""

from __future__ import annotations

import logging
import random
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select, update
from sqlalchemy.exc import OperationalError

from service import create_app, games
from service.computer import ComputerMoves
from service.games import Seating, create_game
from service.mail import worker
from service.mail.worker import drain
from service.metrics import HOST
from service.models import Game, OutboxMessage, WorkerHeartbeat, db, utcnow
from service.unit_of_work import transaction

from .conftest import base_config
from .helpers import AUTH, TOKEN, pick_action, scrape, value
from .servers import clean_env
from .smtp import free_port

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
# The gauges a scrape reads from the database, left out while it cannot be read.
READ_FROM_THE_DATABASE = (
    "splitmind_outbox_messages",
    "splitmind_outbox_oldest_queued_age_seconds",
    "splitmind_mail_worker_last_pass_age_seconds",
    "splitmind_imap_reader_last_read_age_seconds",
    "splitmind_inbound_server_last_beat_age_seconds",
    "splitmind_computer_move_wait_seconds",
)


@pytest.fixture
def app_config() -> dict[str, Any]:
    return {"METRICS_TOKEN": TOKEN}


def test_metrics_are_not_found_without_a_token_setting(tmp_path: Path) -> None:
    app = create_app(base_config(f"sqlite:///{tmp_path / 'x.sqlite'}", tmp_path))
    assert app.config["METRICS_TOKEN"] is None
    assert app.test_client().get("/metrics", headers=AUTH).status_code == 404


def test_metrics_ask_for_the_token(client: FlaskClient) -> None:
    refused = ["Bearer wrong", TOKEN, "Bearer", f"Basic {TOKEN}", f"Bearer {TOKEN}x", "Basic \xff"]
    for headers in ({}, *({"Authorization": given} for given in refused)):
        response = client.get("/metrics", headers=headers)
        assert response.status_code == 401, headers
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        assert "splitmind" not in response.get_data(as_text=True)
    assert client.get("/metrics", headers=AUTH).status_code == 200
    # The scheme's name is case-insensitive.
    assert client.get("/metrics", headers={"Authorization": f"bearer {TOKEN}"}).status_code == 200


def test_requests_are_counted_by_route_never_by_path(client: FlaskClient, make_game) -> None:
    game = make_game(seed=5)
    name, route = "splitmind_http_request_duration_seconds_count", "/api/play/<token>"
    before = scrape(client)
    assert client.get(f"/api/play/{game['keeper']}").status_code == 200
    assert client.get(f"/api/play/{game['keeper']}zz").status_code == 404
    assert client.get("/no/such/page").status_code == 404
    after = scrape(client)
    for status, labels in (("200", {"route": route}), ("404", {"route": route})):
        labels = {**labels, "method": "GET", "status": status}
        assert value(after, name, **labels) == value(before, name, **labels) + 1
    unmatched = {"route": "unmatched", "method": "GET", "status": "404"}
    assert value(after, name, **unmatched) == value(before, name, **unmatched) + 1
    text = client.get("/metrics", headers=AUTH).get_data(as_text=True)
    assert game["keeper"] not in text and "/no/such/page" not in text
    assert (
        value(
            after,
            "splitmind_http_request_duration_seconds_bucket",
            le="+Inf",
            **{"route": route, "method": "GET", "status": "200"},
        )
        >= 1
    )


@pytest.mark.parametrize("app", ["postgres"], indirect=True)
def test_an_outage_met_ahead_of_the_app_is_counted_as_the_view_s(
    client: FlaskClient, make_game, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The view's shortcut meets the database down; the app answers its 503, counted under
    the view's route, from when the shortcut began."""

    def down(*args: Any, **kwargs: Any) -> str:
        raise OperationalError("SELECT", {}, psycopg.OperationalError("connection timeout"))

    game = make_game(seed=5)
    name, route = "splitmind_http_request_duration_seconds_count", "/api/play/<token>"
    labels = {"route": route, "method": "GET", "status": "503"}
    before = value(scrape(client), name, **labels)
    monkeypatch.setattr("service.api.routes.stored_view_tag", down)
    polled = client.get(f"/api/play/{game['keeper']}", headers={"If-None-Match": '"x"'})
    assert polled.status_code == 503
    assert value(scrape(client), name, **labels) == before + 1


def test_a_move_is_counted(app: Flask, client: FlaskClient, make_game) -> None:
    game = make_game(seed=3)
    before = value(scrape(client), "splitmind_moves_total")
    view = client.get(f"/api/play/{game['keeper']}").get_json()
    body = {"version": view["version"], **pick_action(view, random.Random(3))}
    assert client.post(f"/api/play/{game['keeper']}", json=body).status_code == 200
    stale = client.post(f"/api/play/{game['keeper']}", json=body)
    assert stale.status_code in (409, 422)  # refused: not a move applied
    assert value(scrape(client), "splitmind_moves_total") == before + 1


def test_the_computers_move_is_counted_as_the_readme_says(app: Flask, client: FlaskClient) -> None:
    """Every move applied counts, the computer's too: a rate of the players' moves alone
    is not what the counter gives, and the README and its help say so."""
    with app.app_context(), transaction():
        create_game(Seating("kim@example.com", "Kim"), Seating.the_computer("easy"), seed=5)
    before = value(scrape(client), "splitmind_moves_total")
    with app.app_context():
        assert ComputerMoves()() == 1  # the Shadow's half of the first exchange
    assert value(scrape(client), "splitmind_moves_total") == before + 1
    (row,) = [line for line in README.splitlines() if line.startswith("| `splitmind_moves_total`")]
    assert "the computer's" in row and "a reply" in row
    assert "the computer's" in client.get("/metrics", headers=AUTH).get_data(as_text=True)


def test_outbox_depth_and_oldest_age_come_from_the_database(
    app: Flask, client: FlaskClient, make_game
) -> None:
    make_game(seed=1)
    make_game(seed=2)
    with app.app_context():
        queued = db.session.scalar(select(func.count()).where(OutboxMessage.status == "queued"))
        failed = db.session.scalars(select(OutboxMessage).limit(1)).one()
        failed.status = "failed"
        db.session.commit()
    samples = scrape(client)
    assert value(samples, "splitmind_database_up") == 1
    assert value(samples, "splitmind_outbox_messages", status="queued") == queued - 1
    assert value(samples, "splitmind_outbox_messages", status="failed") == 1
    assert value(samples, "splitmind_outbox_oldest_queued_age_seconds") >= 0
    sent_before = value(samples, "splitmind_mail_total", outcome="sent")
    with app.app_context():
        assert drain() == queued - 1
    samples = scrape(client)
    assert value(samples, "splitmind_outbox_messages", status="queued") == 0
    assert value(samples, "splitmind_outbox_oldest_queued_age_seconds") == 0
    assert value(samples, "splitmind_mail_total", outcome="sent") == sent_before + queued - 1


def test_the_mail_workers_last_pass_is_a_gauge(app: Flask, client: FlaskClient) -> None:
    names = {name for name, _ in scrape(client)}
    assert "splitmind_mail_worker_last_pass_age_seconds" not in names  # no worker yet
    with app.app_context():
        worker.beat()
        db.session.execute(update(WorkerHeartbeat).values(beat_at=utcnow() - timedelta(minutes=7)))
        db.session.commit()
    age = value(scrape(client), "splitmind_mail_worker_last_pass_age_seconds")
    assert 420 <= age < 480


def test_the_computers_longest_owed_move_is_a_gauge(app: Flask, client: FlaskClient) -> None:
    """The mail worker makes the computer's moves: one owed for long says none is passing."""
    assert value(scrape(client), "splitmind_computer_move_wait_seconds") == 0
    with app.app_context(), transaction():
        game = create_game(Seating("kim@example.com", "Kim"), Seating.the_computer("easy"))
        kim = game.player("keeper")
        games.apply_move(kim.id, 0, pick_action(games.player_view(kim), random.Random(1)))
        game.updated_at = utcnow() - timedelta(minutes=3)
        game_id = game.id
    waited = value(scrape(client), "splitmind_computer_move_wait_seconds")
    assert 180 <= waited < 240
    with app.app_context(), transaction():
        db.session.get_one(Game, game_id).status = "cancelled"
    assert value(scrape(client), "splitmind_computer_move_wait_seconds") == 0


def test_the_oldest_age_counts_from_when_an_email_fell_due(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """An email put off until later (a turn email while its player's page is open, a retry)
    is not due yet; one that fell due an hour ago, however long ago it was queued or first
    tried, has been due an hour: the worker is an hour behind."""
    make_game(seed=1)
    now = utcnow()
    with app.app_context():
        first, second = db.session.scalars(select(OutboxMessage).order_by(OutboxMessage.id))
        for message in (first, second):
            message.created_at = now - timedelta(days=2)
            message.next_attempt_at = now + timedelta(minutes=5)
        db.session.commit()
    assert value(scrape(client), "splitmind_outbox_oldest_queued_age_seconds") == 0
    with app.app_context():
        first, second = db.session.scalars(select(OutboxMessage).order_by(OutboxMessage.id))
        first.next_attempt_at = now - timedelta(hours=1)
        db.session.commit()
    age = value(scrape(client), "splitmind_outbox_oldest_queued_age_seconds")
    assert 3600 <= age < 3700
    with app.app_context():
        first, second = db.session.scalars(select(OutboxMessage).order_by(OutboxMessage.id))
        first.attempts = 3  # retried: still due an hour ago
        second.next_attempt_at = now - timedelta(minutes=10)
        db.session.commit()
    age = value(scrape(client), "splitmind_outbox_oldest_queued_age_seconds")
    assert 3600 <= age < 3700


def test_an_unreachable_smtp_server_shows_in_the_oldest_age_alone(
    app: Flask, client: FlaskClient, make_game, smtp_server
) -> None:
    """No message is handled while no session opens: none counts as deferred, and they wait
    queued, due, as the README says."""
    app.config["LOCAL_MAILBOX"] = False
    mail = app.extensions["mail"]
    mail.server, mail.port = "127.0.0.1", smtp_server.port
    make_game(seed=1)
    with app.app_context():
        db.session.execute(
            update(OutboxMessage).values(next_attempt_at=utcnow() - timedelta(minutes=10))
        )
        db.session.commit()
    deferred = value(scrape(client), "splitmind_mail_total", outcome="deferred")
    smtp_server.stop()
    try:
        with app.app_context(), pytest.raises(worker.ServerUnavailable):
            drain()
    finally:
        smtp_server.restart()
    samples = scrape(client)
    assert value(samples, "splitmind_mail_total", outcome="deferred") == deferred
    assert value(samples, "splitmind_outbox_oldest_queued_age_seconds") >= 600
    (row,) = [
        line
        for line in README.splitlines()
        if line.startswith("| `splitmind_outbox_oldest_queued_age_seconds`")
    ]
    assert "An SMTP server that cannot be reached" in row and "shows here alone" in row


def test_the_counts_are_served_while_the_database_is_down(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An outage is when the counts matter: the scrape leaves out what it cannot read."""
    closed = f"postgresql://root@127.0.0.1:{free_port()}/splitmind"
    app = create_app({**base_config(closed, tmp_path), "METRICS_TOKEN": TOKEN})
    client = app.test_client()
    try:
        assert client.get("/rules").status_code == 200
        caplog.clear()
        samples = scrape(client)
    finally:
        with app.app_context():
            db.engine.dispose()
    rules = {"route": "/rules", "method": "GET", "status": "200"}
    assert value(samples, "splitmind_http_request_duration_seconds_count", **rules) >= 1
    assert ("splitmind_moves_total", ()) in samples
    assert value(samples, "splitmind_database_up") == 0
    names = {name for name, _ in samples}
    assert not set(READ_FROM_THE_DATABASE) & names
    # The README names each gauge an outage takes, for the operator who alerts on them.
    (row,) = [line for line in README.splitlines() if line.startswith("| `splitmind_database_up`")]
    assert all(f"`{name}`" in row for name in READ_FROM_THE_DATABASE)
    said = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert len(said) == 1 and said[0].getMessage().startswith("database unavailable: ")
    assert said[0].getMessage().endswith("Connection refused; /metrics served without the outbox")
    assert said[0].exc_info is None and "Traceback" not in caplog.text


def test_a_sweep_is_counted(app: Flask, client: FlaskClient) -> None:
    before = value(scrape(client), "splitmind_sweeps_total")
    result = app.test_cli_runner().invoke(args=["tick"])
    assert result.exit_code == 0, result.output
    assert value(scrape(client), "splitmind_sweeps_total") == before + 1


COUNT_IN_A_PROCESS = """
from service import metrics
metrics.MOVES.inc({moves})
metrics.count_mail("sent")
"""


def test_processes_sharing_a_directory_add_up(tmp_path: Path) -> None:
    directory = tmp_path / "metrics"
    directory.mkdir()
    env = clean_env(PROMETHEUS_MULTIPROC_DIR=str(directory))
    for moves in (2, 3):
        subprocess.run(
            [sys.executable, "-c", COUNT_IN_A_PROCESS.format(moves=moves)], env=env, check=True
        )
    files = list(directory.glob("counter_*.db"))
    # Named by the host too: containers sharing the directory have process ids of their own.
    assert len(files) == 2 and all(f.name.startswith(f"counter_{HOST}-") for f in files)
    config = base_config(f"sqlite:///{tmp_path / 'x.sqlite'}", tmp_path / "instance")
    app = create_app({**config, "METRICS_TOKEN": TOKEN, "PROMETHEUS_MULTIPROC_DIR": str(directory)})
    with app.app_context():
        db.create_all()
    samples = scrape(app.test_client())
    assert value(samples, "splitmind_moves_total") == 5
    assert value(samples, "splitmind_mail_total", outcome="sent") == 2


def test_a_metrics_directory_that_cannot_be_written_stops_the_start_in_one_line(
    tmp_path: Path,
) -> None:
    """Every process that records metrics writes files there: a directory gone (a reboot
    empties /run), mistyped or another user's stops the flask command and gunicorn alike with
    one line naming the setting, not a traceback from prometheus-client at the first metric."""
    from .servers import PRODUCTION, gunicorn_refusal, run_flask

    missing = tmp_path / "gone"
    message = f"Error: PROMETHEUS_MULTIPROC_DIR must be a directory, not {str(missing)!r}"
    env = clean_env(**PRODUCTION, PROMETHEUS_MULTIPROC_DIR=str(missing))
    command = run_flask("tick", env=env)
    assert (command.returncode, command.stderr) == (1, f"{message}\n")
    said = gunicorn_refusal(env)
    assert [line for line in said if "PROMETHEUS" in line] == [message]


def test_an_empty_metrics_directory_setting_is_no_directory(tmp_path: Path) -> None:
    """Empty, as every setting, it means unset: each process counts in its own memory, and
    writes no file in its working directory (not the service's to write in, under systemd),
    where prometheus-client would take an empty name to point."""
    from .servers import ROOT, run_flask

    work = tmp_path / "work"
    work.mkdir()
    env = clean_env(PROMETHEUS_MULTIPROC_DIR="", PYTHONPATH=str(ROOT))
    database = f"sqlite:///{tmp_path / 'x.sqlite'}"
    assert run_flask("db", "upgrade", env={**env, "DATABASE_URL": database}).returncode == 0
    command = run_flask("tick", env={**env, "DATABASE_URL": database}, cwd=work)
    assert command.returncode == 0, command.stderr
    assert list(work.iterdir()) == []
    subprocess.run(
        [sys.executable, "-c", COUNT_IN_A_PROCESS.format(moves=1)], env=env, cwd=work, check=True
    )
    assert list(work.iterdir()) == []
