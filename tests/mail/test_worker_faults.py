"""What goes wrong with one message stays with that message; a lost database costs at most
the message in flight; the worker says what it does in its log."""

from __future__ import annotations

import logging
import os
import random
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select, text

from service import create_app, games
from service.admin.auth import create_admin
from service.computer import ComputerMoves
from service.games import Seating, create_game
from service.mail import queue, worker
from service.mail.compose import Email
from service.models import Game, OutboxMessage, WorkerHeartbeat, db
from service.rules import to_act
from service.unit_of_work import transaction

from ..admin.conftest import csrf_token, sign_in
from ..conftest import base_config
from ..helpers import pick_action, wait_until
from ..smtp import Received, SMTPServer, free_port
from .test_worker import _ids, outbox, queue_games, worker_thread

# A fullwidth v: it reads as victim@example.com, and only SMTPUTF8 can carry it.
WIDE_V = "\uff56ictim@example.com"


def poison(app: Flask) -> list[int]:
    """Queue messages no SMTP library can write out, as rows from an older release may be."""
    with app.app_context():
        before = db.session.scalar(select(func.max(OutboxMessage.id))) or 0
        queue(Email("Hello", "Hello", "<p>Hello</p>"), kind="link", recipient=WIDE_V)
        # A line break in the subject would start a header of its own.
        queue(
            Email("Hello\r\nBcc: eve@example.com", "Hello", "<p>Hello</p>"),
            kind="link",
            recipient="kim@example.com",
        )
        db.session.commit()
        return list(
            db.session.scalars(
                select(OutboxMessage.id).where(OutboxMessage.id > before).order_by(OutboxMessage.id)
            )
        )


def test_a_message_that_cannot_be_written_out_fails_alone(
    app: Flask, smtp_server: SMTPServer
) -> None:
    """Its row says why; the messages around it go out once each, now and after a restart."""
    queue_games(app, 1)
    bad = poison(app)
    queue_games(app, 1)
    result = app.test_cli_runner().invoke(args=["mail", "worker", "--once"])
    assert (result.exit_code, result.stdout) == (0, "handled 6 message(s)\n"), result.exception
    rows = {m.id: m for m in outbox(app)}
    assert [(rows[i].status, rows[i].attempts) for i in bad] == [("failed", 1)] * 2
    assert "Internationalized characters before the @-sign" in rows[bad[0]].last_error
    assert rows[bad[1]].last_error.startswith("BadHeaderError")
    assert {m.status for i, m in rows.items() if i not in bad} == {"sent"}
    # Started again, the worker sends nothing twice and stops at nothing.
    result = app.test_cli_runner().invoke(args=["mail", "worker", "--once"])
    assert (result.exit_code, result.stdout) == (0, "handled 0 message(s)\n")
    ids = _ids(smtp_server)
    assert len(ids) == 4 and set(ids.values()) == {1}
    assert all(m.envelope_to != [WIDE_V] for m in smtp_server.received)


def test_a_message_of_a_kind_no_longer_registered_fails_alone(
    pg_app: Flask, smtp_server: SMTPServer
) -> None:
    """A row of a kind this release does not send (queued by a newer one) says why it failed."""
    with pg_app.app_context():
        for recipient in ("kim@example.com", "sam@example.com"):
            queue(Email("Hi", "Hi", "<p>Hi</p>"), kind="link", recipient=recipient)
        stray = db.session.scalars(
            select(OutboxMessage).where(OutboxMessage.recipient == "kim@example.com")
        ).one()
        stray.kind = "postcard"
        db.session.commit()
        assert worker.drain() == 2
    rows = {m.recipient: m for m in outbox(pg_app)}
    assert (rows["kim@example.com"].status, rows["kim@example.com"].last_error) == (
        "failed",
        "LookupError: no email kind 'postcard'",
    )
    assert rows["sam@example.com"].status == "sent"
    assert [m.envelope_to for m in smtp_server.received] == [["sam@example.com"]]


def test_a_message_whose_handling_the_database_refuses_fails_alone(
    pg_app: Flask, smtp_server: SMTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database error that is no outage would recur at every claim: the message is set aside
    (failed, with the database's words), and the queue goes on behind it."""
    from service.mail import kinds

    written = kinds.written

    def refused_for_kim(message: Any) -> Any:
        if message.recipient == "kim@example.com":
            db.session.execute(text("SELECT 1 / 0"))  # a real error of the database, no outage
        return written(message)

    monkeypatch.setattr(kinds, "written", refused_for_kim)
    with pg_app.app_context():
        for recipient in ("kim@example.com", "sam@example.com"):
            queue(Email("Hi", "Hi", "<p>Hi</p>"), kind="link", recipient=recipient)
        db.session.commit()
        assert worker.drain() == 2
        assert worker.drain() == 0
    rows = {m.recipient: m for m in outbox(pg_app)}
    assert (rows["kim@example.com"].status, rows["kim@example.com"].attempts) == ("failed", 1)
    assert rows["kim@example.com"].last_error.startswith(
        "the database refused it: division by zero"
    )
    assert rows["sam@example.com"].status == "sent"
    assert [m.envelope_to for m in smtp_server.received] == [["sam@example.com"]]


def test_an_admin_sees_why_a_message_failed_and_queues_it_again(
    app: Flask, client: FlaskClient, smtp_server: SMTPServer
) -> None:
    bad, _ = poison(app)
    with app.app_context():
        worker.drain()
        with transaction():
            create_admin("ada", "correct horse battery staple")
    assert sign_in(client).status_code == 303
    page = client.get(f"/admin/mail/{bad}").get_data(as_text=True)
    assert "Last error" in page and "Internationalized characters before the @-sign" in page
    token = csrf_token(page)
    response = client.post(f"/admin/mail/{bad}/requeue", data={"csrf_token": token})
    assert response.status_code == 303
    assert next(m for m in outbox(app) if m.id == bad).status == "queued"
    with app.app_context():
        assert worker.drain() == 1
    assert next(m for m in outbox(app) if m.id == bad).status == "failed"
    assert smtp_server.received == []


def test_the_worker_loop_outlives_a_message_that_cannot_be_sent(
    app: Flask, smtp_server: SMTPServer
) -> None:
    poison(app)
    queue_games(app, 1)
    with app.app_context():
        handled = worker.run(poll=0.05, should_stop=lambda: len(smtp_server.received) == 2)
    assert handled == 4
    assert sorted(m.status for m in outbox(app)) == ["failed", "failed", "sent", "sent"]


def test_an_international_domain_is_written_in_idna_2008(
    app: Flask, smtp_server: SMTPServer, deliver
) -> None:
    """``faß.de`` is its own domain, ``xn--fa-hia.de``; the older rules would mail ``fass.de``."""
    with app.app_context(), transaction():
        create_game(Seating("kim@faß.de", "Kim"), Seating("sam@example.com", "Sam"))
    deliver()
    envelopes = sorted(m.envelope_to for m in smtp_server.received)
    assert envelopes == [["kim@xn--fa-hia.de"], ["sam@example.com"]]


@pytest.mark.postgres
def test_a_database_connection_lost_mid_batch_sends_nothing_twice(
    pg_app: Flask,
    postgres_database: str,
    smtp_server: SMTPServer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The worker's connection is terminated while the server takes the fourth of ten messages:
    its "sent" is lost with the connection, and recorded once the database is back, before
    anything is claimed, so the next claim does not send it again."""
    caplog.set_level(logging.INFO, logger=worker.__name__)
    queue_games(pg_app, 5)
    name = "splitmind-mail-worker-under-test"
    terminated: list[Any] = []

    def terminate(received: Received) -> None:
        if len(smtp_server.received) == 4 and not terminated:
            with psycopg.connect(postgres_database, autocommit=True) as conn:
                terminated.extend(
                    conn.execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                        " WHERE application_name = %s",
                        [name],
                    ).fetchall()
                )

    smtp_server.handler.on_data = terminate
    url = f"{postgres_database}?application_name={name}"
    with worker_thread(url, smtp_server.port, tmp_path):
        wait_until(
            lambda: len(_ids(smtp_server)) == 10 and {m.status for m in outbox(pg_app)} == {"sent"}
        )
    assert terminated and all(row == (True,) for row in terminated)
    assert sorted(_ids(smtp_server).values()) == [1] * 10
    assert "was sent before the database went away: recorded now" in caplog.text
    assert "database unavailable" in caplog.text
    assert "database available again after" in caplog.text


def test_a_pool_with_no_connection_free_is_waited_out_like_an_outage(
    pg_app: Flask,
    postgres_database: str,
    smtp_server: SMTPServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Under `flask serve` the worker shares the web's pool: a request holding its last
    connection times out the worker's checkout, an outage the worker waits out."""
    caplog.set_level(logging.INFO, logger=worker.__name__)
    queue_games(pg_app, 1)
    app = create_app(
        {
            **base_config(postgres_database, tmp_path / "pooled"),
            "MAIL_SERVER": "127.0.0.1",
            "MAIL_PORT": str(smtp_server.port),
            "SQLALCHEMY_ENGINE_OPTIONS": {"pool_size": 1, "max_overflow": 0, "pool_timeout": 0.1},
        }
    )
    held, release, released = threading.Event(), threading.Event(), threading.Event()

    def hold_the_only_connection() -> None:
        with app.app_context(), db.engine.connect():
            held.set()
            release.wait(30)
        released.set()

    holder = threading.Thread(target=hold_the_only_connection)
    holder.start()
    assert held.wait(30)
    pauses: list[float] = []

    def sleep(seconds: float, should_stop: Any) -> None:
        pauses.append(seconds)
        release.set()
        assert released.wait(30)

    monkeypatch.setattr(worker, "_sleep", sleep)
    try:
        with app.app_context():
            handled = worker.run(
                poll=1, should_stop=lambda: len(smtp_server.received) == 2 or len(pauses) > 3
            )
    finally:
        release.set()
        holder.join(30)
        with app.app_context():
            db.engine.dispose()
    assert handled == 2
    warnings = [
        r.getMessage()
        for r in caplog.records
        if r.name == worker.__name__ and r.levelno >= logging.WARNING
    ]
    assert len(warnings) == 1 and warnings[0].startswith("database unavailable, waiting 1s:")
    assert {m.status for m in outbox(pg_app)} == {"sent"}


def test_the_worker_logs_its_settings_batches_and_outages(
    app: Flask,
    smtp_server: SMTPServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=worker.__name__)
    mail = app.extensions["mail"]
    mail.username, mail.password = "postmaster", "hunter2-secret"
    smtp_server.stop()
    pauses: list[float] = []

    def sleep(seconds: float, should_stop: Any) -> None:
        pauses.append(seconds)
        if len(pauses) == 2:
            smtp_server.restart()

    monkeypatch.setattr(worker, "_sleep", sleep)
    queue_games(app, 1)
    # The first message is put off once, the second refused for good.
    smtp_server.handler.replies = ["451 4.3.0 Try again later", "550 5.1.1 No such user"]
    with app.app_context():
        # Passes a second apart; the mail is tried at 0 and 1, then 3, once the server is back.
        clock = lambda: float(len(pauses))  # noqa: E731
        worker.run(poll=1, should_stop=lambda: len(pauses) == 4, clock=clock)
    port = smtp_server.port
    messages = [r.getMessage() for r in caplog.records if r.name == worker.__name__]
    assert messages[0] == (
        f"mail worker started: SMTP server 127.0.0.1:{port}, STARTTLS off, SSL off,"
        " login postmaster, timeout 30s, batch 20, poll 1s"
    )
    assert [m for m in messages if "unavailable" in m] == [
        f"SMTP server unavailable, waiting {pause}s: connecting to 127.0.0.1:{port}: "
        "[Errno 111] Connection refused"
        for pause in (1, 2)
    ]
    assert "mail batch: 1 sent, 1 retried, 1 failed, 0 skipped" in messages
    assert any(m.startswith("SMTP server available again after") for m in messages)
    assert "hunter2" not in caplog.text
    assert Counter(m.status for m in outbox(app)) == {"sent": 1, "failed": 1}


def test_an_smtp_server_down_is_said_on_the_messages_it_holds_back(
    app: Flask, smtp_server: SMTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker is alive (it beats every pass) while the server is down, and the messages
    it could not send say why they wait, until one goes."""
    smtp_server.stop()
    passes: list[float] = []
    monkeypatch.setattr(worker, "_sleep", lambda seconds, should_stop: passes.append(seconds))
    queue_games(app, 1)
    with app.app_context():
        worker.run(poll=1, should_stop=lambda: len(passes) == 2)
        beats = db.session.scalars(select(WorkerHeartbeat)).all()
    assert len(beats) == 1 and beats[0].pid == os.getpid()
    waiting = [m for m in outbox(app) if m.last_error]
    assert len(waiting) == 1 and waiting[0].status == "queued" and waiting[0].attempts == 0
    assert waiting[0].last_error.startswith(
        "not sent yet: the SMTP server was unavailable (connecting to 127.0.0.1:"
    )
    smtp_server.restart()
    with app.app_context():
        assert worker.drain() == 2
    assert {(m.status, m.last_error) for m in outbox(app)} == {("sent", None)}


def test_a_fault_in_the_deadline_sweep_does_not_stop_the_mail(
    app: Flask, smtp_server: SMTPServer, caplog: pytest.LogCaptureFixture
) -> None:
    def sweep() -> None:
        raise RuntimeError("a fault in the sweep")

    queue_games(app, 1)
    with app.app_context():
        handled = worker.run(
            poll=0.05, sweep=sweep, should_stop=lambda: len(smtp_server.received) == 2
        )
    assert handled == 2
    assert "the deadline sweep failed; the mail goes on" in caplog.text


def test_a_message_the_server_hangs_up_on_fails_alone_after_its_retries(
    app: Flask, smtp_server: SMTPServer
) -> None:
    """Each try of it drops the connection: it is retried, then failed; the others go out."""
    smtp_server.handler.hang_up_on = {"k0@example.com"}
    queue_games(app, 2)
    with app.app_context():
        handled = worker.drain()
    assert handled == 3 + worker.MAX_ATTEMPTS
    (dropped,) = [m for m in outbox(app) if m.recipient == "k0@example.com"]
    assert (dropped.status, dropped.attempts) == ("failed", worker.MAX_ATTEMPTS)
    assert dropped.last_error.startswith("connection lost: ")
    assert sorted(m.status for m in outbox(app) if m.id != dropped.id) == ["sent"] * 3
    ids = _ids(smtp_server)
    assert len(ids) == 3 and set(ids.values()) == {1}


def test_a_message_the_server_hangs_up_on_waits_its_turn_again(
    app: Flask, smtp_server: SMTPServer
) -> None:
    """With the real delays: one attempt counted, the next in a minute, the queue moves on."""
    app.config["MAIL_RETRY_SCALE"] = 1.0
    smtp_server.handler.hang_up_on = {"k0@example.com"}
    queue_games(app, 1)
    with app.app_context():
        assert worker.drain() == 2
    rows = {m.recipient: m for m in outbox(app)}
    dropped = rows["k0@example.com"]
    assert (dropped.status, dropped.attempts) == ("queued", 1)
    assert 55 < (dropped.next_attempt_at - dropped.created_at).total_seconds() < 120
    assert (rows["s0@example.com"].status, rows["s0@example.com"].attempts) == ("sent", 1)


def test_the_worker_loop_keeps_sending_past_a_message_the_server_hangs_up_on(
    app: Flask, smtp_server: SMTPServer, caplog: pytest.LogCaptureFixture
) -> None:
    """The loop neither stops nor waits for a server that is there."""
    smtp_server.handler.hang_up_on = {"k0@example.com"}
    queue_games(app, 2)

    def done() -> bool:  # asked between messages: once the hung-up one has failed too
        return len(smtp_server.received) == 3 and "queued" not in {m.status for m in outbox(app)}

    with app.app_context():
        worker.run(poll=0.05, should_stop=done)
    assert "SMTP server unavailable" not in caplog.text
    assert Counter(m.status for m in outbox(app)) == {"sent": 3, "failed": 1}


@pytest.mark.parametrize("use_ssl", [False, True], ids=["plain", "ssl"])
def test_a_server_slow_to_take_a_message_is_waited_for_not_sent_it_again(
    app: Flask,
    smtp_server: SMTPServer,
    use_ssl: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server may scan a message before it answers the end of its data: RFC 5321 asks a
    client to wait ten minutes for that reply. Given up on after ``MAIL_TIMEOUT``, the
    message was taken for lost and sent again, and the player had it twice."""
    if use_ssl:  # TLS from the start (MAIL_USE_SSL), with a certificate the machine trusts
        trusted = smtp_server.use_tls(tmp_path, from_the_start=True)
        monkeypatch.setenv("SSL_CERT_FILE", str(trusted))
        app.extensions["mail"].use_ssl = True
    app.config["MAIL_TIMEOUT"] = 1
    smtp_server.handler.data_delays = [3]
    queue_games(app, 1)
    with app.app_context():
        assert worker.drain() == 2
    assert [(m.status, m.attempts, m.last_error) for m in outbox(app)] == [("sent", 1, None)] * 2
    ids = _ids(smtp_server)
    assert len(ids) == 2 and set(ids.values()) == {1}


def test_a_kept_connection_the_server_closed_is_replaced_not_blamed(
    app: Flask, smtp_server: SMTPServer
) -> None:
    """The server restarts between two batches: the next message goes out at its first try."""
    with app.app_context():
        transport = worker.Transport()
        try:
            queue_games(app, 1)
            assert worker.drain(transport) == 2
            smtp_server.stop()
            smtp_server.restart()
            queue_games(app, 1)
            assert worker.drain(transport) == 2
        finally:
            transport.close()
    assert [(m.status, m.attempts) for m in outbox(app)] == [("sent", 1)] * 4


def test_the_worker_waits_the_pauses_it_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A database that stays down: each pause is the one its log line gave, each twice the
    one before."""
    caplog.set_level(logging.INFO, logger=worker.__name__)
    nowhere = f"postgresql://root@127.0.0.1:{free_port()}/splitmind"
    app = create_app({**base_config(nowhere, tmp_path), "DATABASE_CONNECT_TIMEOUT": "1"})
    pauses: list[float] = []
    monkeypatch.setattr(worker, "_sleep", lambda seconds, should_stop: pauses.append(seconds))
    with app.app_context():
        worker.run(poll=1, should_stop=lambda: len(pauses) == 4)
        db.engine.dispose()
    outages = [
        r.getMessage()
        for r in caplog.records
        if r.getMessage().startswith("database unavailable, waiting")
    ]
    said = [float(message.split("waiting ")[1].split("s:")[0]) for message in outages]
    assert said == pauses == [1, 2, 4, 8]
    # One line each: libpq's hint on a line of its own ("Is the server running...") is left out.
    assert all("\n" not in m and m.endswith("Connection refused") for m in outages), outages


def test_one_pass_with_no_connection_free_ends_with_one_line(
    postgres_database: str, tmp_path: Path
) -> None:
    """``mail worker --once`` says the database is unavailable, as for one that is down."""
    app = create_app(
        {
            **base_config(postgres_database, tmp_path),
            "SQLALCHEMY_ENGINE_OPTIONS": {"pool_size": 1, "max_overflow": 0, "pool_timeout": 0.1},
        }
    )
    with app.app_context(), db.engine.connect():
        result = app.test_cli_runner().invoke(args=["mail", "worker", "--once"])
    with app.app_context():
        db.engine.dispose()
    assert result.exit_code == 1
    last = result.output.splitlines()[-1]
    assert last.startswith("Error: the database is unavailable: QueuePool limit"), result.output
    assert "Traceback" not in result.output


def test_the_computer_moves_on_while_the_smtp_server_is_down(
    app: Flask, smtp_server: SMTPServer, monkeypatch: pytest.MonkeyPatch, caplog
) -> None:
    """A person playing the computer on the page needs no email: the mail waits out the
    outage with a growing pause, and every pass still makes the computer's moves."""
    with app.app_context(), transaction():
        game = create_game(Seating("kim@example.com", "Kim"), Seating.the_computer("easy"))
        game_id = game.id
    smtp_server.stop()
    pauses: list[float] = []
    made: list[int] = []
    computer = ComputerMoves()
    rng = random.Random(5)

    def moves() -> int:
        made.append(computer())
        if made[-1] == 0:  # Kim plays her part as soon as the computer has played its own
            with transaction():
                kim = db.session.get_one(Game, game_id).player("keeper")
                if kim.seat in to_act(kim.game.state):
                    action = pick_action(games.player_view(kim), rng)
                    games.apply_move(kim.id, kim.game.version, action)
        return made[-1]

    monkeypatch.setattr(worker, "_sleep", lambda seconds, stop: pauses.append(seconds))
    with app.app_context():
        clock = lambda: float(len(pauses))  # noqa: E731
        try:
            worker.run(poll=1, moves=moves, should_stop=lambda: len(pauses) == 8, clock=clock)
        finally:
            smtp_server.restart()
        version = db.session.get_one(Game, game_id).version
    assert sum(made) >= 4 and version >= 8  # the computer's moves, one a pass or more
    assert pauses == [1.0] * 8
    said = [r.getMessage() for r in caplog.records]
    waits = [m.partition(":")[0] for m in said if m.startswith("SMTP server unavailable")]
    # Tried at 0, 1, 3 and 7 seconds: the pause doubles, the passes go on each second.
    assert waits == [f"SMTP server unavailable, waiting {s}s" for s in (1, 2, 4, 8)]
    # Nothing went out: the emails wait for the server (or were withdrawn as Kim moved).
    assert "queued" in {m.status for m in outbox(app)} and smtp_server.received == []


def test_an_smtp_server_is_back_only_once_it_answers(
    app: Flask, smtp_server: SMTPServer, monkeypatch: pytest.MonkeyPatch, caplog
) -> None:
    """The email held back is withdrawn meanwhile: a drain with nothing to send asked the
    server nothing, and does not say it is back."""
    caplog.set_level(logging.INFO, logger=worker.__name__)
    queue_games(app, 1)
    smtp_server.stop()
    pauses: list[float] = []

    def sleep(seconds: float, should_stop: Any) -> None:
        pauses.append(seconds)
        if len(pauses) == 1:  # the player moved on the page: the emails are not wanted now
            with app.app_context(), transaction():
                for message in outbox(app):
                    db.session.merge(message).status = "skipped"

    monkeypatch.setattr(worker, "_sleep", sleep)
    with app.app_context():
        try:
            worker.run(poll=1, should_stop=lambda: len(pauses) == 4, clock=lambda: len(pauses))
        finally:
            smtp_server.restart()
    said = [r.getMessage() for r in caplog.records if r.name == worker.__name__]
    assert sum(m.startswith("SMTP server unavailable") for m in said) == 1
    assert not any("available again" in m for m in said), said


def test_a_schema_older_than_the_code_is_one_line_each_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A worker started before ``db upgrade`` (on another machine, say) logs what to do, not
    the traceback of the table it misses, at each pass until the schema is there."""
    app = create_app(base_config(f"sqlite:///{tmp_path / 'new.sqlite'}", tmp_path / "i"))
    passes: list[float] = []
    monkeypatch.setattr(worker, "_sleep", lambda seconds, should_stop: passes.append(seconds))
    caplog.set_level(logging.INFO, logger=worker.__name__)
    try:
        with app.app_context():
            worker.run(poll=1, should_stop=lambda: len(passes) == 2)
    finally:
        with app.app_context():
            db.engine.dispose()
    failed = [r for r in caplog.records if r.name == worker.__name__ and r.levelname == "ERROR"]
    assert [r.getMessage() for r in failed] == [
        f"worker pass failed, waiting {pause}s: the database has none of the service's "
        "tables: run `flask --app service db upgrade` first"
        for pause in (1, 2)
    ]
    assert all(r.exc_info is None for r in failed)
