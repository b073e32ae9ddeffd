"""The mail worker against a real SMTP server: retries, failures, parallel workers, crashes."""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from flask import Flask
from sqlalchemy import select

from service.deadlines import sweep
from service.games import Seating, apply_move, cancel_game, create_game
from service.mail import requeue
from service.mail.worker import MAX_ATTEMPTS, ServerUnavailable, drain
from service.models import Address, Game, OutboxMessage, Player, db, utcnow
from service.perspective import player_view
from service.rules import SEATS, to_act
from service.unit_of_work import transaction

from ..conftest import base_config
from ..helpers import pick_action, wait_until, waits_on_a_lock
from ..smtp import SMTPServer, free_port

pytestmark = pytest.mark.both_backends


ROOT = Path(__file__).resolve().parents[2]


def queue_games(app: Flask, count: int) -> None:
    """Create games: each queues two invitation emails."""
    with app.app_context(), transaction():
        for n in range(count):
            create_game(
                Seating(f"k{n}@example.com", f"K{n}"), Seating(f"s{n}@example.com", f"S{n}")
            )


def outbox(app: Flask) -> list[OutboxMessage]:
    with app.app_context():
        rows = db.session.scalars(db.select(OutboxMessage).order_by(OutboxMessage.id)).all()
        db.session.expunge_all()
        return list(rows)


def test_temporary_failures_are_retried_then_delivered(app: Flask, smtp_server: SMTPServer) -> None:
    smtp_server.handler.replies = ["451 4.3.0 Try again later", "451 4.3.0 Try again later"]
    queue_games(app, 1)
    with app.app_context():
        drain()
    rows = outbox(app)
    assert {m.status for m in rows} == {"sent"}
    assert sum(m.attempts for m in rows) == 4  # two 451 replies, then two deliveries
    assert all(m.last_error is None for m in rows)
    assert len(smtp_server.received) == 2


def test_growing_delays_between_retries(app: Flask, smtp_server: SMTPServer) -> None:
    app.config["MAIL_RETRY_SCALE"] = 1.0
    smtp_server.handler.replies = ["451 Try again later"]
    queue_games(app, 1)
    with app.app_context():
        drain()
    retried = next(m for m in outbox(app) if m.status == "queued")
    assert retried.attempts == 1 and "451" in retried.last_error
    wait = (retried.next_attempt_at - retried.created_at).total_seconds()
    assert 55 < wait < 120
    from service.mail.worker import retry_delay

    with app.app_context():
        delays = [retry_delay(n) for n in range(1, MAX_ATTEMPTS)]
    assert delays == sorted(delays) and len(set(delays)) == len(delays)


def test_permanent_failure_is_marked_failed_and_can_be_requeued(
    app: Flask, smtp_server: SMTPServer
) -> None:
    smtp_server.handler.replies = ["550 5.1.1 No such user"]
    queue_games(app, 1)
    with app.app_context():
        drain()
    failed = [m for m in outbox(app) if m.status == "failed"]
    assert len(failed) == 1 and failed[0].last_error.startswith("550")
    assert len(smtp_server.received) == 1
    with app.app_context():
        with transaction():
            requeue(failed[0].id)
        drain()
    assert {m.status for m in outbox(app)} == {"sent"}
    assert len(smtp_server.received) == 2


@pytest.mark.parametrize("app", ["postgres"], indirect=True)
def test_of_two_requeues_at_once_the_second_is_refused(
    app: Flask, smtp_server: SMTPServer, postgres_database: str
) -> None:
    """A double click, or two admins: the second requeue waits for the first and sees it,
    rather than putting back a message the worker may have sent meanwhile."""
    smtp_server.handler.replies = ["550 5.1.1 No such user"]
    queue_games(app, 1)
    with app.app_context():
        drain()
    (failed,) = [m.id for m in outbox(app) if m.status == "failed"]
    locked, seen_waiting = threading.Event(), threading.Event()
    second_waits = waits_on_a_lock(postgres_database)

    def first() -> None:
        with app.app_context(), transaction():
            requeue(failed)
            locked.set()
            for _ in range(300):  # until the second requeue waits on the row
                if second_waits():
                    seen_waiting.set()
                    break
                time.sleep(0.05)

    thread = threading.Thread(target=first)
    thread.start()
    assert locked.wait(30)
    with app.app_context():
        try:
            with transaction():
                requeue(failed)
            answer = "queued again"
        except ValueError as refused:
            answer = str(refused)
    thread.join(30)
    assert seen_waiting.is_set()
    assert answer == f"message {failed} is queued, not failed"


def test_too_many_temporary_failures_end_as_failed(app: Flask, smtp_server: SMTPServer) -> None:
    smtp_server.handler.replies = ["451 busy"] * (2 * MAX_ATTEMPTS)
    with app.app_context():
        with transaction():
            create_game(Seating("a@example.com", "A"), Seating("b@example.com", "B"))
        drain()
    rows = outbox(app)
    assert [(m.status, m.attempts) for m in rows] == [("failed", MAX_ATTEMPTS)] * 2
    assert smtp_server.received == []


def test_smtp_server_down_delays_and_loses_nothing(app: Flask, smtp_server: SMTPServer) -> None:
    smtp_server.stop()
    queue_games(app, 2)
    with app.app_context(), pytest.raises(ServerUnavailable, match="connecting to 127.0.0.1"):
        drain()
    assert {m.status for m in outbox(app)} == {"queued"}
    assert {m.attempts for m in outbox(app)} == {0}
    smtp_server.restart()
    with app.app_context():
        assert drain() == 4
    assert len(smtp_server.received) == 4


def refuse_the_session(app: Flask, smtp_server: SMTPServer, refusal: str) -> None:
    """Configure a login, and have the server refuse it (535) or refuse every greeting (421)."""
    mail = app.extensions["mail"]
    mail.username, mail.password = "worker", "secret"
    if refusal == "login":
        smtp_server.handler.logins = False
    else:
        smtp_server.handler.greeting = "421 4.3.2 Too busy, try again later"


def behave(smtp_server: SMTPServer) -> None:
    smtp_server.handler.logins, smtp_server.handler.greeting = True, None


@pytest.mark.parametrize("refusal", ["login", "greeting"])
def test_a_server_refusing_the_session_delays_mail_and_counts_no_attempt(
    app: Flask, smtp_server: SMTPServer, refusal: str
) -> None:
    """A 535 to the login or a 421 to EHLO is about the server, not about any message."""
    refuse_the_session(app, smtp_server, refusal)
    queue_games(app, 2)
    with app.app_context(), pytest.raises(ServerUnavailable):
        drain()
    rows = outbox(app)
    assert [(m.status, m.attempts) for m in rows] == [("queued", 0)] * 4
    # The message in hand says why it waits, for the admins; no attempt of its own is counted.
    (error,) = [m.last_error for m in rows if m.last_error]
    assert error.startswith(f"not sent yet: the SMTP server was unavailable ({refusal}: ")
    behave(smtp_server)
    with app.app_context():
        assert drain() == 4
    assert {(m.status, m.attempts, m.last_error) for m in outbox(app)} == {("sent", 1, None)}
    assert len(smtp_server.received) == 4


@pytest.mark.parametrize(
    ("sender", "recipient"),
    [
        (None, "554 5.7.1 <k0@example.com>: Relay access denied"),
        (None, "550 5.7.0 Authentication required"),
        ("530 5.7.0 Must issue a STARTTLS command first", None),
        ("530 Authentication required", None),
    ],
)
def test_a_server_refusing_the_service_delays_mail_and_marks_no_bounce(
    app: Flask, smtp_server: SMTPServer, sender: str | None, recipient: str | None
) -> None:
    """A server that relays nothing for the service, or wants a login, refuses each message
    at MAIL FROM or RCPT TO: a setting to fix, not an address bouncing. Every message
    waits, no attempt counted, until the server takes mail again."""
    smtp_server.handler.refuse_sender, smtp_server.handler.refuse_every = sender, recipient
    queue_games(app, 2)
    with app.app_context(), pytest.raises(ServerUnavailable):
        drain()
    assert [(m.status, m.attempts) for m in outbox(app)] == [("queued", 0)] * 4
    with app.app_context():
        assert db.session.scalars(select(Address.bounced_at)).all() == []  # no row written
    smtp_server.handler.refuse_sender = smtp_server.handler.refuse_every = None
    with app.app_context():
        assert drain() == 4
    assert {m.status for m in outbox(app)} == {"sent"}


@pytest.mark.parametrize(
    ("sender", "recipient"),
    [("421 4.7.0 Try again later, closing connection", None), (None, "421 4.7.0 Too busy")],
)
def test_a_server_closing_the_session_before_data_delays_mail(
    app: Flask, smtp_server: SMTPServer, sender: str | None, recipient: str | None
) -> None:
    """421 is the server closing the session, whatever command it answers (RFC 5321), as a
    server throttling the service does: every message waits for it, no attempt counted,
    rather than each being tried at once on a new session of its own and giving up."""
    smtp_server.handler.refuse_sender, smtp_server.handler.refuse_every = sender, recipient
    queue_games(app, 2)
    with app.app_context(), pytest.raises(ServerUnavailable):
        drain()
    assert [(m.status, m.attempts) for m in outbox(app)] == [("queued", 0)] * 4
    smtp_server.handler.refuse_sender = smtp_server.handler.refuse_every = None
    with app.app_context():
        assert drain() == 4
    assert {m.status for m in outbox(app)} == {"sent"}


def test_a_recipient_refused_by_policy_is_a_bounce(app: Flask, smtp_server: SMTPServer) -> None:
    """A 5.7.1 that names no relaying is the recipient's own server's policy: a bounce."""
    smtp_server.handler.refuse_every = "550 5.7.1 Message rejected by the recipient's policy"
    queue_games(app, 1)
    with app.app_context():
        drain()
    assert {m.status for m in outbox(app)} == {"failed"}
    with app.app_context():
        assert db.session.scalars(select(Address.bounce_code)).all() == [550, 550]


def test_an_unknown_user_of_a_relayed_domain_is_a_bounce_not_an_outage(
    app: Flask, smtp_server: SMTPServer
) -> None:
    """Postfix refuses an unknown user of a domain it relays for "in relay recipient table":
    an address status (5.1.1), that one address's bounce; the other messages go out."""
    smtp_server.handler.refuse["k0@example.com"] = (
        "550 5.1.1 <k0@example.com>: Recipient address rejected: "
        "User unknown in relay recipient table"
    )
    queue_games(app, 1)
    with app.app_context():
        assert drain() == 2
    assert {(m.recipient, m.status) for m in outbox(app)} == {
        ("k0@example.com", "failed"),
        ("s0@example.com", "sent"),
    }
    with app.app_context():
        assert db.session.scalars(select(Address.email)).all() == ["k0@example.com"]


def test_a_message_refused_for_its_content_fails_alone(app: Flask, smtp_server: SMTPServer) -> None:
    """A refusal after DATA is about that message: the server took the sender and the
    recipient, so it relays for the service and wants no login, whatever the code says
    (Gmail's "552-5.7.0" for content it blocks). The other messages go out."""
    smtp_server.handler.replies = [
        "552 5.7.0 This message was blocked because its content presents a potential security issue"
    ]
    queue_games(app, 1)
    with app.app_context():
        assert drain() == 2
    assert sorted((m.status, m.attempts) for m in outbox(app)) == [("failed", 1), ("sent", 1)]
    assert len(smtp_server.received) == 1


def test_starttls_to_a_server_it_cannot_trust_sends_no_password(
    app: Flask, smtp_server: SMTPServer, tmp_path: Path
) -> None:
    """Whoever sits between the worker and the SMTP server, showing a certificate of their
    own, must read neither the login nor the emails and their links: the session ends at
    STARTTLS, and the mail waits."""
    smtp_server.use_tls(tmp_path)
    mail = app.extensions["mail"]
    mail.use_tls, mail.username, mail.password = True, "worker", "secret"
    queue_games(app, 1)
    with (
        app.app_context(),
        pytest.raises(ServerUnavailable, match="^STARTTLS: .*certificate verify failed"),
    ):
        drain()
    assert [(m.status, m.attempts) for m in outbox(app)] == [("queued", 0)] * 2
    assert smtp_server.received == []


def test_starttls_to_a_server_it_trusts_delivers(
    app: Flask, smtp_server: SMTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server whose certificate the machine trusts (here by ``SSL_CERT_FILE``) takes the
    login and the mail."""
    monkeypatch.setenv("SSL_CERT_FILE", str(smtp_server.use_tls(tmp_path)))
    mail = app.extensions["mail"]
    mail.use_tls, mail.username, mail.password = True, "worker", "secret"
    queue_games(app, 1)
    with app.app_context():
        assert drain() == 2
    assert len(smtp_server.received) == 2


def test_the_worker_waits_out_a_refused_login_with_a_growing_pause(
    app: Flask, smtp_server: SMTPServer, monkeypatch: pytest.MonkeyPatch, caplog
) -> None:
    """The mail is tried again after 1, then 2 seconds, passes going on each second."""
    from service.mail import worker

    pauses: list[float] = []

    def sleep(seconds: float, should_stop: Any) -> None:
        pauses.append(seconds)
        if len(pauses) == 3:
            behave(smtp_server)

    monkeypatch.setattr(worker, "_sleep", sleep)
    refuse_the_session(app, smtp_server, "login")
    queue_games(app, 1)
    with app.app_context():
        handled = worker.run(
            poll=1,
            should_stop=lambda: len(smtp_server.received) == 2 or len(pauses) > 5,
            clock=lambda: float(len(pauses)),
        )
    assert handled == 2 and pauses == [1, 1, 1, 1]
    said = [r.getMessage() for r in caplog.records]
    waits = [m.partition(":")[0] for m in said if m.startswith("SMTP server unavailable")]
    assert waits == ["SMTP server unavailable, waiting 1s", "SMTP server unavailable, waiting 2s"]
    assert {(m.status, m.attempts) for m in outbox(app)} == {("sent", 1)}


def test_a_pass_that_made_computer_moves_is_followed_at_once_by_the_next(
    app: Flask, smtp_server: SMTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass makes a few seconds of the computer's moves: while it makes some, more may be
    due, so the worker waits only after a pass that made none."""
    from service.mail import worker

    made = iter([3, 1, 0, 2, 0])
    passes: list[str] = []

    def moves() -> int:
        count = next(made)
        passes.append(f"moves {count}")
        return count

    def sleep(seconds: float, should_stop: Any) -> None:
        passes.append("sleep")

    monkeypatch.setattr(worker, "_sleep", sleep)
    with app.app_context():
        worker.run(poll=1, moves=moves, should_stop=lambda: len(passes) >= 7)
    assert passes == ["moves 3", "moves 1", "moves 0", "sleep", "moves 2", "moves 0", "sleep"]


def test_worker_once_gives_up_when_the_smtp_server_refuses_the_login(
    app: Flask, smtp_server: SMTPServer
) -> None:
    refuse_the_session(app, smtp_server, "login")
    queue_games(app, 1)
    result = app.test_cli_runner().invoke(args=["mail", "worker", "--once"])
    assert result.exit_code == 1
    assert "the SMTP server is unavailable" in result.output and "535" in result.output
    assert {(m.status, m.attempts) for m in outbox(app)} == {("queued", 0)}


@pytest.mark.parametrize("moot", ["moved", "cancelled"])
def test_a_reminder_held_back_by_retries_is_dropped_once_it_is_moot(
    app: Flask, smtp_server: SMTPServer, moot: str
) -> None:
    """A reminder retried after a 451 is not sent once its player has moved or the game ended."""
    app.config["MAIL_RETRY_SCALE"] = 1.0
    rng = random.Random(3)
    with app.app_context():
        with transaction():
            game = create_game(
                Seating("kim@example.com", "Kim"),
                Seating("sam@example.com", "Sam"),
                seed=3,
                days_per_move=3,
            )
            for seat in SEATS:  # the exchange: then one seat leads
                move(game.player(seat), rng)
        drain()
        assert sweep(game.deadline - timedelta(hours=23)).reminded == [game.id]
    smtp_server.handler.replies = ["451 4.3.0 Try again later"]
    with app.app_context():
        drain()
    (reminder,) = [m for m in outbox(app) if m.kind == "reminder"]
    assert (reminder.status, reminder.attempts) == ("queued", 1)
    with app.app_context():
        game = db.session.get(Game, game.id)
        with transaction():
            if moot == "moved":
                (leader,) = to_act(game.state)
                move(game.player(leader), rng)
            else:
                cancel_game(game.id, "ada")
            # The retry is due.
            db.session.get(OutboxMessage, reminder.id).next_attempt_at = utcnow()
        drain()
    (reminder,) = [m for m in outbox(app) if m.kind == "reminder"]
    assert reminder.status == "skipped"
    assert reminder.message_id not in {r.message["Message-ID"] for r in smtp_server.received}


def move(player: Player, rng: random.Random) -> None:
    """A random legal move for ``player``, through the service layer."""
    view = player_view(player)
    apply_move(player.id, view["version"], pick_action(view, rng))


def test_worker_once_says_how_many_messages_it_handled(app: Flask, smtp_server: SMTPServer) -> None:
    queue_games(app, 2)
    result = app.test_cli_runner().invoke(args=["mail", "worker", "--once"])
    assert (result.exit_code, result.stdout) == (0, "handled 4 message(s)\n")
    assert len(smtp_server.received) == 4


def test_worker_once_gives_up_when_the_smtp_server_is_down(
    app: Flask, smtp_server: SMTPServer
) -> None:
    smtp_server.stop()
    queue_games(app, 1)
    result = app.test_cli_runner().invoke(args=["mail", "worker", "--once"])
    assert result.exit_code == 1
    assert "the SMTP server is unavailable" in result.output
    assert {m.status for m in outbox(app)} == {"queued"}
    smtp_server.restart()


@pytest.mark.parametrize("fault", ["down", "login"])
def test_worker_once_checks_the_smtp_server_with_nothing_to_send(
    app: Flask, smtp_server: SMTPServer, fault: str
) -> None:
    """An empty queue sends nothing, but --once still connects (and logs in): a check cron or
    an operator can trust, whatever is queued."""
    if fault == "down":
        smtp_server.stop()  # its port closed
    else:
        refuse_the_session(app, smtp_server, "login")
    result = app.test_cli_runner().invoke(args=["mail", "worker", "--once"])
    if fault == "down":
        smtp_server.restart()
    assert result.exit_code == 1
    said = result.output.splitlines()[-1]
    assert said.startswith("Error: the SMTP server is unavailable: ")
    assert ("Connection refused" if fault == "down" else "535") in said


def test_worker_once_checks_a_live_smtp_server_and_quits(
    app: Flask, smtp_server: SMTPServer
) -> None:
    result = app.test_cli_runner().invoke(args=["mail", "worker", "--once"])
    assert (result.exit_code, result.stdout) == (0, "handled 0 message(s)\n")
    assert smtp_server.received == []


def test_worker_once_gives_up_when_the_database_is_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from service import create_app
    from service.mail import worker

    def wait(*args: Any) -> None:
        raise AssertionError("--once waited for the database instead of giving up")

    monkeypatch.setattr(worker, "_sleep", wait)
    app = create_app(base_config(f"postgresql://root@127.0.0.1:{free_port()}/absent", tmp_path))
    result = app.test_cli_runner().invoke(args=["mail", "worker", "--once"])
    assert result.exit_code == 1, result.exception
    assert "Error: the database is unavailable" in result.output


def worker_env(database_url: str, smtp_port: int, instance: Path) -> dict[str, str]:
    config = base_config(database_url, instance)
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "SECRET_KEY": config["SECRET_KEY"],
        "BASE_URL": config["BASE_URL"],
        "MAIL_SERVER": "127.0.0.1",
        "MAIL_PORT": str(smtp_port),
        "PYTHONPATH": str(ROOT),
    }


def start_worker(env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "flask", "--app", "service", "mail", "worker", "--once"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.mark.postgres
@pytest.mark.slow
def test_three_workers_split_the_queue_and_deliver_each_message_exactly_once(
    pg_app: Flask, postgres_database: str, smtp_server: SMTPServer, tmp_path: Path
) -> None:
    """Each worker sends while the others send: the rows one has claimed, the others skip."""
    queue_games(pg_app, 40)
    original = smtp_server.handler.handle_DATA
    sending = {"now": 0, "most": 0}

    async def slow(server: Any, session: Any, envelope: Any) -> str:
        import asyncio

        sending["now"] += 1
        sending["most"] = max(sending["most"], sending["now"])
        try:
            # Slower than starting a worker takes, so that all three are at work together.
            await asyncio.sleep(0.05)
            return await original(server, session, envelope)
        finally:
            sending["now"] -= 1

    smtp_server.handler.handle_DATA = slow  # type: ignore[method-assign]
    env = worker_env(postgres_database, smtp_server.port, tmp_path)
    workers = [start_worker(env) for _ in range(3)]
    counts = []
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err.decode()
        found = re.fullmatch(r"handled (\d+) message\(s\)\n", out.decode())
        assert found, out.decode()
        counts.append(int(found.group(1)))
    assert sum(counts) == 80
    assert sum(count > 0 for count in counts) >= 2, counts
    assert sending["most"] >= 2, "the workers never sent at the same time"
    ids = Counter(r.message["Message-ID"] for r in smtp_server.received)
    assert len(ids) == 80 and set(ids.values()) == {1}
    rows = outbox(pg_app)
    assert {m.status for m in rows} == {"sent"} and {m.attempts for m in rows} == {1}
    assert {m.message_id for m in rows} == set(ids)


@pytest.mark.postgres
@pytest.mark.slow
def test_a_worker_stopped_by_sigterm_ends_after_the_message_in_hand(
    pg_app: Flask, postgres_database: str, smtp_server: SMTPServer, tmp_path: Path
) -> None:
    """systemctl stop and docker stop send SIGTERM: the worker sends the message in hand,
    records it, and exits, leaving none half sent (which the next worker sends again)."""
    queue_games(pg_app, 5)
    arrived = threading.Event()
    accept = smtp_server.handler.handle_DATA

    async def slow(server: Any, session: Any, envelope: Any) -> str:
        import asyncio

        arrived.set()
        await asyncio.sleep(0.3)
        return await accept(server, session, envelope)

    smtp_server.handler.handle_DATA = slow  # type: ignore[method-assign]
    env = worker_env(postgres_database, smtp_server.port, tmp_path)
    process = subprocess.Popen(
        [sys.executable, "-m", "flask", "--app", "service", "mail", "worker", "--poll", "0.5"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert arrived.wait(60), "the worker sent nothing"
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 0, err.decode()
    statuses = Counter(m.status for m in outbox(pg_app))
    assert "sending" not in statuses and 1 <= statuses["sent"] < 10, statuses
    # The operator's log says it stopped, as it said it started.
    assert f"mail worker stopped: {statuses['sent']} message(s) handled" in err.decode()
    ids = Counter(r.message["Message-ID"] for r in smtp_server.received)
    assert sum(ids.values()) == statuses["sent"] and set(ids.values()) == {1}


@pytest.mark.postgres
@pytest.mark.slow
def test_a_worker_killed_before_its_commit_sends_once_more_with_the_same_id(
    pg_app: Flask, postgres_database: str, smtp_server: SMTPServer, tmp_path: Path
) -> None:
    queue_games(pg_app, 1)
    env = worker_env(postgres_database, smtp_server.port, tmp_path)
    inside, reply = threading.Event(), threading.Event()
    accept = smtp_server.handler.handle_DATA

    async def hold(server: Any, session: Any, envelope: Any) -> str:
        answer = await accept(server, session, envelope)  # the message has arrived
        if not inside.is_set():
            inside.set()
            reply.wait(30)  # only this worker talks to the server: it may wait
        return answer

    smtp_server.handler.handle_DATA = hold  # type: ignore[method-assign]
    worker = start_worker(env)
    try:
        assert inside.wait(30), "the worker did not send"
        # A SHARE lock on the outbox, taken while the server holds its reply: the worker
        # records the outcome after the reply, and its UPDATE waits for the lock, so it is
        # killed after the SMTP reply and before its commit.
        with psycopg.connect(postgres_database) as blocker:
            blocker.execute("LOCK TABLE outbox IN SHARE MODE")
            reply.set()
            wait_until(waits_on_a_lock(postgres_database))
            # One sent and not marked: its commit waits, and the next is not claimed before it.
            assert len(smtp_server.received) == 1
            worker.send_signal(signal.SIGKILL)
            worker.communicate(timeout=10)
            blocker.rollback()
    finally:
        reply.set()
        if worker.poll() is None:
            worker.kill()
            worker.communicate(timeout=10)
    for _ in range(20):  # the killed worker's lock goes when the server notices
        second = start_worker(env)
        _, err = second.communicate(timeout=60)
        assert second.returncode == 0, err.decode()
        if all(m.status == "sent" for m in outbox(pg_app)):
            break
        time.sleep(0.2)
    rows = outbox(pg_app)
    assert {m.status for m in rows} == {"sent"}
    ids = Counter(r.message["Message-ID"] for r in smtp_server.received)
    assert sorted(ids.values()) == [1, 2]  # the one in flight goes out twice, the other once
    assert set(ids) == {m.message_id for m in rows}


class Proxy:
    """A TCP proxy to PostgreSQL that can be cut, as if the database restarted."""

    def __init__(self, target_port: int) -> None:
        import socket

        self.target_port = target_port
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.listener.listen()
        self.connections: list[Any] = []
        self.up = threading.Event()
        self.up.set()
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import socket

        while not self.stopped:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.up.is_set():
                client.close()
                continue
            server = socket.create_connection(("127.0.0.1", self.target_port))
            self.connections += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: Any, sink: Any) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.close()

    def cut(self) -> None:
        """Drop every connection and refuse new ones."""
        self.up.clear()
        for sock in self.connections:
            with contextlib.suppress(OSError):
                sock.shutdown(2)
        self.connections.clear()

    def restore(self) -> None:
        self.up.set()

    def close(self) -> None:
        self.stopped = True
        self.cut()
        self.listener.close()


@contextlib.contextmanager
def worker_thread(database_url: str, smtp_port: int, instance: Path) -> Iterator[Flask]:
    """A mail worker in a thread, on an app (and connections) of its own, for the block."""
    from service import create_app
    from service.mail import worker

    app = create_app(
        {
            **base_config(database_url, instance),
            "MAIL_SERVER": "127.0.0.1",
            "MAIL_PORT": str(smtp_port),
            "MAIL_RETRY_SCALE": 0,
        }
    )
    stop = threading.Event()

    def run() -> None:
        with app.app_context():
            worker.run(poll=0.1, should_stop=stop.is_set)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield app
    finally:
        stop.set()
        thread.join(10)
        with app.app_context():
            db.engine.dispose()


@pytest.mark.postgres
def test_database_restarting_under_the_worker_loses_nothing(
    pg_app: Flask, postgres_database: str, smtp_server: SMTPServer, tmp_path: Path
) -> None:
    target = int(postgres_database.rsplit(":", 1)[1].split("/")[0])
    proxy = Proxy(target)
    proxied = postgres_database.replace(f":{target}/", f":{proxy.port}/")
    try:
        with worker_thread(proxied, smtp_server.port, tmp_path):
            queue_games(pg_app, 3)
            wait_until(lambda: len(smtp_server.received) == 6)
            proxy.cut()
            queue_games(pg_app, 3)  # written straight to the database while the worker is cut off
            time.sleep(1.5)
            proxy.restore()
            wait_until(
                lambda: (
                    len(_ids(smtp_server)) == 12 and {m.status for m in outbox(pg_app)} == {"sent"}
                ),
                seconds=60,
            )
    finally:
        proxy.close()
    # A message in flight at the cut may go out once more, with the same Message-ID.
    ids = _ids(smtp_server)
    assert len(ids) == 12 and sum(ids.values()) <= 13
    assert {m.status for m in outbox(pg_app)} == {"sent"}


def _ids(server: SMTPServer) -> Counter:
    return Counter(r.message["Message-ID"] for r in server.received)


def test_a_pass_that_finds_nothing_to_send_logs_nothing(
    app: Flask, smtp_server: SMTPServer, caplog: pytest.LogCaptureFixture
) -> None:
    """The worker passes every second or two: an empty queue writes no line each time."""
    caplog.set_level("INFO", logger="service.mail.worker")
    with app.app_context():
        for _ in range(3):
            assert drain() == 0
    assert "mail batch" not in caplog.text


def test_the_computer_moves_between_batches_of_a_long_queue(
    app: Flask, smtp_server: SMTPServer
) -> None:
    """A queue of many emails is sent in batches: the computer's moves are made between
    them, not only once the whole queue has gone."""
    from service.mail import worker

    queue_games(app, 25)  # 50 emails: three batches
    sent_before: list[int] = []

    def moves() -> int:
        sent_before.append(len(smtp_server.received))
        return 0

    with app.app_context():
        worker.run(once=True, moves=moves)
    assert len(smtp_server.received) == 50
    assert sent_before == [0, worker.BATCH, 2 * worker.BATCH, 50]
