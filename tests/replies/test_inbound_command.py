"""``flask mail inbound`` run as its own process: a reply handed to it by LMTP or SMTP is a move."""

from __future__ import annotations

import random
import signal
import smtplib
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from flask import Flask
from sqlalchemy import text, update
from sqlalchemy.exc import OperationalError

from service import create_app
from service.models import Game, InboundServerHeartbeat, db, utcnow
from service.perspective import player_view
from service.replies import servers
from service.replies.servers import InboundController
from service.replies.tags import reply_address
from service.unit_of_work import transaction

from ..conftest import BASE_URL, STARTED_SMTP, base_config
from ..helpers import TOKEN, pick_action, scrape, wait_until
from ..servers import FLASK, ROOT, clean_env
from ..smtp import free_port
from .conftest import REPLY_ADDRESS
from .helpers import replies_counted, reply_message


def wait_for(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(
                    f"the inbound server did not start: {process.stderr}"
                ) from None
            time.sleep(0.1)


@pytest.mark.parametrize("smtp", [False, True], ids=["lmtp", "smtp"])
def test_the_inbound_command_applies_a_reply(
    app: Flask, make_game, smtp_server, deliver, smtp: bool
) -> None:
    game_id = make_game(seed=3)["id"]
    deliver()
    with app.app_context():
        view = player_view(db.session.get_one(Game, game_id).player("keeper"))
        url = app.config["SQLALCHEMY_DATABASE_URI"]
    cards = pick_action(view, random.Random(3))["exchange"]
    (invitation,) = smtp_server.handler.to("kim@example.com")
    message = reply_message(invitation, " ".join(cards))
    port = free_port()
    env = clean_env(
        DATABASE_URL=url,
        SECRET_KEY="test-secret-key",
        BASE_URL=BASE_URL,
        REPLY_ADDRESS=REPLY_ADDRESS,
        MAIL_SERVER="127.0.0.1",
        MAIL_PORT=str(smtp_server.port),
    )
    command = [*FLASK, "mail", "inbound", "--port", str(port), *(["--smtp"] if smtp else [])]
    process = subprocess.Popen(
        command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    STARTED_SMTP.add(("127.0.0.1", port))
    try:
        wait_for(port, process)
        # The command's own heartbeat, read from the database as a scrape reads it.
        wait_until(lambda: last_beat_age(app) is not None)
        client_class = smtplib.SMTP if smtp else smtplib.LMTP
        with client_class("127.0.0.1", port) as client:
            refused = client.sendmail(
                "kim@example.com",
                [str(message["To"])],
                message.as_bytes(policy=message.policy.clone(linesep="\r\n")),
            )
            assert refused == {}
            with pytest.raises(smtplib.SMTPRecipientsRefused):
                client.sendmail(
                    "kim@example.com", ["someone@splitmind.test"], b"Subject: x\r\n\r\nx"
                )
    finally:
        STARTED_SMTP.discard(("127.0.0.1", port))
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert f"reading replies by {'SMTP' if smtp else 'LMTP'}" in out
    assert f"stopped reading replies by {'SMTP' if smtp else 'LMTP'} on 127.0.0.1:{port}" in err
    tag = str(message["To"]).partition("+")[2].partition("@")[0]
    assert tag not in out + err  # a credential, as the player's link is
    with app.app_context():
        assert db.session.get_one(Game, game_id).version == 1


@pytest.mark.parametrize("command", ["inbound", "fetch"])
def test_reading_replies_needs_a_reply_address(app: Flask, runner, command: str) -> None:
    app.config["REPLY_ADDRESS"] = None
    result = runner.invoke(args=["mail", command])
    assert result.exit_code == 1
    assert "REPLY_ADDRESS is not set" in result.output


def test_a_reply_is_put_off_while_the_database_is_down(
    tmp_path, caplog: pytest.LogCaptureFixture
) -> None:
    """A temporary refusal (451) of the address, whose tag is checked against the player's
    link: the mail server keeps the reply and tries again later. The log says why in one line."""
    config = {
        **base_config("postgresql://root@127.0.0.1:1/nowhere", tmp_path / "instance"),
        "REPLY_ADDRESS": REPLY_ADDRESS,
    }
    app = create_app(config)
    port = free_port()
    controller = InboundController(app, "127.0.0.1", port)
    controller.start()
    STARTED_SMTP.add(("127.0.0.1", port))

    def put_off() -> None:
        with smtplib.LMTP("127.0.0.1", port) as client:
            client.ehlo()
            client.mail("kim@example.com")
            assert client.rcpt(f"play+1.0.{'a' * 26}@splitmind.test")[0] == 451

    try:
        counted = replies_counted(app, put_off)
    finally:
        STARTED_SMTP.discard(("127.0.0.1", port))
        controller.stop()
    assert counted == {"deferred": 1}
    (put_off,) = [r.getMessage() for r in caplog.records if r.name == servers.__name__]
    assert put_off.startswith("reply put off, the database is unavailable: ")
    assert "\n" not in put_off and put_off.endswith("Connection refused")


def test_a_reply_the_database_refuses_is_refused_for_good(
    app: Flask, make_game, inbound: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database error that is no outage would recur on every attempt: a permanent refusal
    (554), not a temporary one that has the mail server retry for days."""
    game_id = make_game(seed=3)["id"]
    with app.app_context():
        address = reply_address(db.session.get_one(Game, game_id).player("keeper"), 0)
    assert address is not None

    def refused(raw: bytes, **_: object) -> None:
        db.session.execute(text("SELECT 1 / 0"))  # a real error from the database, no outage

    monkeypatch.setattr(servers, "receive", refused)

    def refused_for_good() -> None:
        with (
            smtplib.LMTP("127.0.0.1", inbound) as client,
            pytest.raises(smtplib.SMTPDataError) as refused_data,
        ):
            client.sendmail(
                "kim@example.com",
                [address],
                b"From: kim@example.com\r\nMessage-ID: <x@example.com>\r\n\r\n5H\r\n",
            )
        assert refused_data.value.smtp_code == 554

    assert replies_counted(app, refused_for_good) == {"failed": 1}


def test_an_address_it_cannot_listen_on_is_refused_in_one_line(app: Flask, runner) -> None:
    """A port taken (another reader, the mail server itself) stops the command with one line
    naming the address, and nothing says it reads replies."""
    app.config["REPLY_ADDRESS"] = REPLY_ADDRESS
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = runner.invoke(args=["mail", "inbound", "--port", str(port)])
    assert result.exit_code == 1, result.output
    (line,) = result.output.splitlines()
    assert line.startswith(f"Error: cannot listen on 127.0.0.1:{port}: "), line
    assert "reading replies" not in result.output


LAST_BEAT = "splitmind_inbound_server_last_beat_age_seconds"


def last_beat_age(app: Flask) -> float | None:
    """The inbound server's last heartbeat's age, as a scrape of /metrics says; ``None`` if
    absent."""
    app.config["METRICS_TOKEN"] = TOKEN
    return scrape(app.test_client()).get((LAST_BEAT, ()))


@pytest.fixture
def short_beats(monkeypatch: pytest.MonkeyPatch) -> None:
    """Heartbeats closer than the service's 5 s: the test hears them, and its stop, sooner."""
    monkeypatch.setattr(servers, "LISTENING_BEAT", 0.2)


@contextmanager
def serving(app: Flask, port: int) -> Iterator[None]:
    """``flask mail inbound``'s server loop, in a thread, until the block ends."""
    stop = threading.Event()
    thread = threading.Thread(
        target=servers.serve,
        args=(app, "127.0.0.1", port),
        kwargs={"smtp": False, "should_stop": stop.is_set},
    )
    STARTED_SMTP.add(("127.0.0.1", port))
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(60)
        STARTED_SMTP.discard(("127.0.0.1", port))
    assert not thread.is_alive()


def test_a_listening_server_keeps_its_heartbeat_fresh(app: Flask, short_beats) -> None:
    """No reply for hours is no failure: the server writes its heartbeat from its own loop
    while it listens, not per message. The gauge is absent until it has; an alert on its age
    tells a server that is down, whose replies the mail server queues without a word."""
    assert last_beat_age(app) is None
    port = free_port()
    with serving(app, port):
        wait_until(lambda: last_beat_age(app) is not None)
        with smtplib.LMTP("127.0.0.1", port) as client:
            assert client.noop()[0] == 250
        with app.app_context(), transaction():
            back = utcnow() - timedelta(minutes=7)
            db.session.execute(update(InboundServerHeartbeat).values(beat_at=back))
        wait_until(lambda: (last_beat_age(app) or 600) < 60)


def test_a_server_without_its_database_listens_on_and_says_so_once(
    tmp_path, short_beats, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The heartbeat cannot be written while the database is down: the server still
    listens (each reply put off with a 451), and the log says so in one line, not one a beat."""
    config = {
        **base_config(f"postgresql://root@127.0.0.1:{free_port()}/nowhere", tmp_path / "i"),
        "REPLY_ADDRESS": REPLY_ADDRESS,
    }
    app = create_app(config)
    tried: list[None] = []
    beat = servers.beat

    def counted(*args: object) -> None:
        tried.append(None)
        beat(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(servers, "beat", counted)
    port = free_port()
    with serving(app, port):
        wait_until(lambda: len(tried) >= 3)
        with smtplib.LMTP("127.0.0.1", port) as client:
            client.ehlo()
            client.mail("kim@example.com")
            assert client.rcpt(f"play+1.0.{'a' * 26}@splitmind.test")[0] == 451
    with app.app_context():
        db.engine.dispose()
    said = [
        r.getMessage()
        for r in caplog.records
        if r.name == servers.__name__ and "heartbeat" in r.getMessage()
    ]
    assert len(said) == 1, said
    assert "\n" not in said[0] and said[0].endswith("Connection refused")


def test_a_heartbeat_comes_back_with_the_database(
    app: Flask, short_beats, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Beats lost to an outage leave the gauge absent, then the first one written once the
    database is back sets it; the log says each once."""
    beat = servers.beat
    lost = [OperationalError("INSERT", {}, ConnectionRefusedError("Connection refused"))] * 3

    def outage_then_back(*args: object) -> None:
        if lost:
            raise lost.pop()
        beat(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(servers, "beat", outage_then_back)
    with serving(app, free_port()):
        wait_until(lambda: last_beat_age(app) is not None)
    assert not lost
    said = [r.getMessage() for r in caplog.records if "heartbeat" in r.getMessage()]
    assert said == [
        "heartbeat not written, the server listens on: Connection refused",
        "heartbeat written again",
    ]
