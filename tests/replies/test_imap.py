"""Replies read from an IMAP folder of a real Dovecot server, one pass or waiting with IDLE."""

from __future__ import annotations

import imaplib
import logging
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from email.message import EmailMessage
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskCliRunner
from imap_tools import (
    BaseMailBox,
    MailboxFetchError,
    MailboxLoginError,
    MailboxMoveError,
    MailBoxUnencrypted,
    MailMessageFlags,
)
from imap_tools.folder import MailBoxFolderManager
from imap_tools.idle import IdleManager
from sqlalchemy import update

from service import create_app
from service.models import Game, ImapReaderHeartbeat, db, utcnow
from service.perspective import player_view
from service.replies import servers
from service.replies.inbound import HEAD_BYTES, MAX_MESSAGE_BYTES
from service.unit_of_work import transaction

from ..conftest import IN_CI, base_config
from ..helpers import TOKEN, pick_action, scrape, wait_until
from ..imap import IMAPServer, dovecot
from ..smtp import free_port
from .conftest import REPLY_ADDRESS
from .helpers import replies_counted, reply_message


@pytest.fixture
def imap_server() -> Iterator[IMAPServer]:
    if dovecot() is None:
        message = "Debian's dovecot-imapd is not installed (apt-get install dovecot-imapd)"
        if IN_CI:
            pytest.fail(message + " (required when CI=true)", pytrace=False)
        pytest.skip(message)
    server = IMAPServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def app_config(mail_config: dict[str, Any], imap_server: IMAPServer) -> dict[str, Any]:
    return {
        **mail_config,
        "REPLY_ADDRESS": REPLY_ADDRESS,
        "IMAP_SERVER": "127.0.0.1",
        "IMAP_PORT": str(imap_server.port),
        "IMAP_USERNAME": imap_server.user,
        "IMAP_PASSWORD": imap_server.password,
        "IMAP_PLAINTEXT_LOGIN": "true",  # the tests' Dovecot, on this machine, has no TLS
    }


def mailbox(server: IMAPServer) -> MailBoxUnencrypted:
    return MailBoxUnencrypted("127.0.0.1", server.port).login(server.user, server.password)


def warned_by_reader(record: logging.LogRecord) -> bool:
    """Whether ``record`` is a warning (or worse) of the IMAP reader's."""
    return record.name == servers.__name__ and record.levelno >= logging.WARNING


def a_reply(app: Flask, game_id: int, smtp_server, attached: int = 0) -> bytes:
    """The keeper's reply to their invitation, with the cards they give in the exchange (and
    a file of ``attached`` bytes, if any)."""
    with app.app_context():
        view = player_view(db.session.get_one(Game, game_id).player("keeper"))
    cards = pick_action(view, random.Random(1))["exchange"]
    (invitation,) = smtp_server.handler.to("kim@example.com")
    message = reply_message(invitation, " ".join(cards))
    message["Delivered-To"] = str(message["To"])
    if attached:
        message.add_attachment(b"x" * attached, maintype="application", subtype="octet-stream")
    return message.as_bytes(policy=message.policy.clone(linesep="\r\n"))


def version(app: Flask, game_id: int) -> int:
    with app.app_context():
        return db.session.get_one(Game, game_id).version


def test_one_pass_reads_the_folder_and_moves_what_it_handled(
    app: Flask, runner, make_game, smtp_server, deliver, imap_server
) -> None:
    game_id = make_game(seed=12)["id"]
    deliver()
    with mailbox(imap_server) as box:
        box.append(a_reply(app, game_id, smtp_server), "INBOX")
    result = runner.invoke(args=["mail", "fetch", "--once"])
    assert result.exit_code == 0, result.output
    assert "handled 1 message(s)" in result.output
    assert version(app, game_id) == 1
    deliver()
    assert any("You gave" in r.text for r in smtp_server.handler.to("kim@example.com"))
    with mailbox(imap_server) as box:
        assert list(box.uids()) == []
        box.folder.set("Handled")
        assert len(list(box.uids())) == 1
    result = runner.invoke(args=["mail", "fetch", "--once"])
    assert "handled 0 message(s)" in result.output


def test_a_done_folder_the_server_says_exists_already_is_taken_as_it_is(
    app: Flask, runner, make_game, smtp_server, deliver, imap_server, monkeypatch
) -> None:
    """A LIST read amiss (an untagged answer left over from IDLE before it) misses the
    folder; the server's [ALREADYEXISTS] to its creation says it is there: the reader reads
    on, rather than stopping as if the setting were wrong."""
    game_id = make_game(seed=12)["id"]
    deliver()
    with mailbox(imap_server) as box:
        box.folder.create("Handled")
        box.append(a_reply(app, game_id, smtp_server), "INBOX")
    monkeypatch.setattr(MailBoxFolderManager, "exists", lambda self, folder: False)
    result = runner.invoke(args=["mail", "fetch", "--once"])
    assert result.exit_code == 0, result.output
    assert "handled 1 message(s)" in result.output
    assert version(app, game_id) == 1


def test_a_message_over_a_megabyte_is_fetched_no_further_than_its_headers(
    app: Flask, runner, make_game, smtp_server, deliver, imap_server, monkeypatch
) -> None:
    """Its size says it is too large to read: the player is told so, as for one that came
    over LMTP, and the reader is not held while the server sends the rest of it."""
    game_id = make_game(seed=12)["id"]
    deliver()
    with mailbox(imap_server) as box:
        box.append(a_reply(app, game_id, smtp_server, attached=3 * MAX_MESSAGE_BYTES), "INBOX")
    fetched: list[int] = []
    uid = imaplib.IMAP4.uid

    def counted(client: imaplib.IMAP4, command: str, *args: str) -> tuple[str, list[Any]]:
        answer = uid(client, command, *args)
        for item in answer[1] or []:
            parts = item if isinstance(item, tuple) else (item,)
            fetched.extend(len(part) for part in parts if isinstance(part, bytes))
        return answer

    monkeypatch.setattr(imaplib.IMAP4, "uid", counted)
    result = runner.invoke(args=["mail", "fetch", "--once"])
    assert result.exit_code == 0, result.output
    assert "handled 1 message(s)" in result.output
    assert version(app, game_id) == 0
    assert 0 < sum(fetched) < 2 * HEAD_BYTES
    deliver()
    answers = smtp_server.handler.to("kim@example.com")
    assert any("Your reply was too large to read (over 1 MB)" in a.text for a in answers)


def test_a_flag_another_client_set_meanwhile_does_not_hide_a_messages_size(
    app: Flask, runner, make_game, smtp_server, deliver, imap_server, monkeypatch
) -> None:
    """Someone reading the mailbox marks a message while the reader has it open: the
    server tells the reader so in a FETCH answer of its own, which imaplib hands back with
    the next FETCH, ahead of the size asked for. The reply is read in this pass all the
    same, not put off as one the server would not hand over."""
    game_id = make_game(seed=12)["id"]
    deliver()
    with mailbox(imap_server) as box:
        box.append(a_reply(app, game_id, smtp_server), "INBOX")
        box.append(stranger_message(), "INBOX")
        second = box.uids()[1]
    search = BaseMailBox.uids

    def then_seen_elsewhere(self: BaseMailBox, *args: Any, **kwargs: Any) -> list[str]:
        with mailbox(imap_server) as other:
            other.flag(second, MailMessageFlags.FLAGGED, True)
        return search(self, *args, **kwargs)

    monkeypatch.setattr(BaseMailBox, "uids", then_seen_elsewhere)
    result = runner.invoke(args=["mail", "fetch", "--once"])
    assert result.exit_code == 0, result.output
    assert "handled 2 message(s)" in result.output
    assert version(app, game_id) == 1


@contextmanager
def reader_running(app: Flask, poll: float = 3600) -> Iterator[None]:
    """The reader, in a thread, until the block ends; by default an hour between polls, so
    only IDLE can bring a reply in while the block waits."""
    stop = threading.Event()
    reader = threading.Thread(
        target=servers.fetch,
        args=(app,),
        kwargs={"once": False, "poll": poll, "should_stop": stop.is_set},
    )
    reader.start()
    try:
        yield
    finally:
        stop.set()
        reader.join(60)
    assert not reader.is_alive()


def applied(app: Flask, game_id: int) -> bool:
    """Whether the reply moved the game, waiting up to 20 s for it."""
    deadline = time.monotonic() + 20
    while version(app, game_id) == 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    return version(app, game_id) == 1


@pytest.fixture
def short_spells(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spells of IDLE shorter than the service's 5 s: the reader hears the test's stop sooner."""
    monkeypatch.setattr(servers, "IDLE_SPELL", 0.5)


@pytest.fixture
def reply_to_come(
    app: Flask, make_game, smtp_server, deliver, imap_server
) -> tuple[int, Callable[[], None]]:
    """A game waiting for the Keeper's reply, and what puts that reply in the IMAP folder."""
    game_id = make_game(seed=12)["id"]
    deliver()
    reply = a_reply(app, game_id, smtp_server)

    def arrive() -> None:
        with mailbox(imap_server) as box:
            box.append(reply, "INBOX")

    return game_id, arrive


def test_the_reader_waits_for_new_mail_with_idle(app: Flask, reply_to_come, short_spells) -> None:
    game_id, arrive = reply_to_come
    with reader_running(app):
        arrive()
        assert applied(app, game_id)


def test_mail_arriving_before_the_first_spell_is_read(
    app: Flask, reply_to_come, short_spells, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reply lands after the reader's first pass, before it starts to IDLE."""
    game_id, arrive = reply_to_come
    passes = []
    first_pass = servers.fetch_once

    def then_mail_comes(app: Flask, box: Any, *args: Any, **kwargs: Any) -> int:
        handled = first_pass(app, box, *args, **kwargs)
        if not passes:
            arrive()
        passes.append(handled)
        return handled

    monkeypatch.setattr(servers, "fetch_once", then_mail_comes)
    with reader_running(app):
        assert applied(app, game_id)
    assert passes[0] == 0 and sum(passes) == 1


def test_mail_arriving_during_a_pass_after_its_search_is_read(
    app: Flask, reply_to_come, short_spells, imap_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reply lands just after a pass searched the folder; the server tells of it while
    the pass moves a message it did find, which the pass made no count of its own."""
    game_id, arrive = reply_to_come
    with mailbox(imap_server) as box:
        box.append(stranger_message(), "INBOX")
    search = BaseMailBox.uids
    searches: list[list[str]] = []

    def then_mail_comes(self: BaseMailBox, *args: Any, **kwargs: Any) -> list[str]:
        found = search(self, *args, **kwargs)
        if not searches:
            arrive()
        searches.append(list(found))
        return found

    monkeypatch.setattr(BaseMailBox, "uids", then_mail_comes)
    with reader_running(app):
        assert applied(app, game_id)
    assert len(searches[0]) == 1  # the stranger's message alone


def test_mail_arriving_as_a_spell_ends_is_read(
    app: Flask, reply_to_come, short_spells, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reply lands after a spell has stopped listening, before the spell is ended."""
    game_id, arrive = reply_to_come
    listen = IdleManager.poll
    spells = []

    def then_mail_comes(self: IdleManager, timeout: float | None) -> list[bytes]:
        said = listen(self, timeout)
        if not spells:
            arrive()
            time.sleep(0.2)  # the server tells the idling reader before it says DONE
        spells.append(said)
        return said

    monkeypatch.setattr(IdleManager, "poll", then_mail_comes)
    with reader_running(app):
        assert applied(app, game_id)
    assert spells[0] == []


def test_without_a_server_one_pass_fails_with_one_line(app: Flask, runner, imap_server) -> None:
    app.config["IMAP_PORT"] = imap_server.port + 1 if imap_server.port < 65535 else 1
    imap_server.stop()
    result = runner.invoke(args=["mail", "fetch", "--once"])
    assert result.exit_code == 1
    assert "the IMAP server is unavailable" in result.output
    assert last_read_age(app) is None


LAST_READ = "splitmind_imap_reader_last_read_age_seconds"


def last_read_age(app: Flask) -> float | None:
    """The IMAP reader's last read's age, as a scrape of /metrics says; ``None`` if absent."""
    app.config["METRICS_TOKEN"] = TOKEN
    return scrape(app.test_client()).get((LAST_READ, ()))


def backdate_last_read(app: Flask) -> None:
    """Make every IMAP reader's last read seven minutes old."""
    with app.app_context(), transaction():
        db.session.execute(
            update(ImapReaderHeartbeat).values(beat_at=utcnow() - timedelta(minutes=7))
        )


def test_a_reader_the_server_refuses_lets_its_last_read_age(
    app: Flask, runner, imap_server: IMAPServer
) -> None:
    """The gauge is absent until a reader has read, and each pass sets it, from whichever
    process (the database holds it). A password changed on the server stops the reader
    with one line: the gauge ages, for an alert to say so."""
    assert last_read_age(app) is None
    assert runner.invoke(args=["mail", "fetch", "--once"]).exit_code == 0
    age = last_read_age(app)
    assert age is not None and 0 <= age < 60
    backdate_last_read(app)
    app.config["IMAP_PASSWORD"] = "changed"
    assert runner.invoke(args=["mail", "fetch", "--once"]).exit_code == 1
    age = last_read_age(app)
    assert age is not None and 420 <= age < 480


def test_an_idle_reader_keeps_its_last_read_fresh(
    app: Flask, imap_server: IMAPServer, short_spells
) -> None:
    """No mail for hours is no failure: each spell of IDLE the server ends as asked is a
    read, with no pass (an hour between polls)."""
    with reader_running(app):
        wait_until(lambda: last_read_age(app) is not None)
        backdate_last_read(app)
        wait_until(lambda: (last_read_age(app) or 600) < 60)


def test_reading_paused_by_a_database_outage_is_one_line_in_the_log(
    app_config: dict[str, Any],
    imap_server: IMAPServer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    nowhere = f"postgresql://root@127.0.0.1:{free_port()}/splitmind"
    app = create_app({**app_config, **base_config(nowhere, tmp_path)})
    reply = EmailMessage()
    reply["From"] = "kim@example.com"
    local, _, domain = REPLY_ADDRESS.partition("@")
    reply["To"] = reply["Delivered-To"] = f"{local}+1.0.{'a' * 26}@{domain}"  # read from the db
    reply.set_content("5H")
    with mailbox(imap_server) as box:
        box.append(reply.as_bytes(policy=reply.policy.clone(linesep="\r\n")), "INBOX")
    end = time.monotonic() + 30

    def warned() -> bool:
        return time.monotonic() > end or any(warned_by_reader(r) for r in caplog.records)

    counted = replies_counted(
        app, partial(servers.fetch, app, once=False, poll=0, should_stop=warned)
    )
    with app.app_context():
        db.engine.dispose()
    assert counted == {"deferred": 1}  # left in the folder, for the next pass
    (paused,) = [r.getMessage() for r in caplog.records if warned_by_reader(r)]
    assert paused.startswith("IMAP reading paused, waiting 0s: ")
    assert "\n" not in paused and paused.endswith("Connection refused")


def test_a_strangers_message_to_a_tag_no_player_can_have_holds_up_no_reply(
    app: Flask, runner, make_game, smtp_server, deliver, imap_server
) -> None:
    """A player number past the database's integers is no tag: the message is set aside, and
    the reply behind it is read in the same pass."""
    game_id = make_game(seed=12)["id"]
    deliver()
    with mailbox(imap_server) as box:
        box.append(stranger_message(), "INBOX")
        box.append(a_reply(app, game_id, smtp_server), "INBOX")
    both_read_in_one_pass(app, runner, imap_server, game_id)


def stranger_message() -> bytes:
    """A stranger's message to a tag no player can have (a player number past the
    database's integers): read, set aside and moved like any other."""
    local, _, domain = REPLY_ADDRESS.partition("@")
    stranger = EmailMessage()
    stranger["From"] = "eve@example.net"
    stranger["To"] = stranger["Delivered-To"] = f"{local}+99999999999.1.{'a' * 26}@{domain}"
    stranger["Subject"] = "Hello"
    stranger["Message-ID"] = "<stranger@example.net>"
    stranger.set_content("4S 5H")
    return stranger.as_bytes(policy=stranger.policy.clone(linesep="\r\n"))


def both_read_in_one_pass(
    app: Flask, runner: FlaskCliRunner, imap_server: IMAPServer, game_id: int
) -> None:
    """``mail fetch --once`` handles the two messages in the inbox, the player's reply among
    them, and leaves the inbox empty."""
    result = runner.invoke(args=["mail", "fetch", "--once"])
    assert result.exit_code == 0, result.output
    assert "handled 2 message(s)" in result.output
    assert version(app, game_id) == 1
    with mailbox(imap_server) as box:
        assert list(box.uids()) == []


def nested_parts(depth: int) -> bytes:
    """A stranger's message of ``depth`` multipart parts, each inside the last: a few dozen kB
    that Python's email parser cannot read without going past its recursion limit."""
    head = b"From: eve@example.net\r\nSubject: Hello\r\nMessage-ID: <nested@example.net>\r\n"
    parts = b"".join(
        b"Content-Type: multipart/mixed; boundary=b%d\r\n\r\n--b%d\r\n" % (i, i)
        for i in range(depth)
    )
    return head + parts + b"Content-Type: text/plain\r\n\r\n4S 5H\r\n"


def test_a_message_that_cannot_be_parsed_is_set_aside_and_the_reader_goes_on(
    app: Flask, runner, make_game, smtp_server, deliver, imap_server
) -> None:
    """Parsing it raises RecursionError: the message is moved with the others, once, and
    the reply behind it read in the same pass."""
    game_id = make_game(seed=12)["id"]
    deliver()
    with mailbox(imap_server) as box:
        box.append(nested_parts(1200), "INBOX")
        box.append(a_reply(app, game_id, smtp_server), "INBOX")
    both_read_in_one_pass(app, runner, imap_server, game_id)
    with mailbox(imap_server) as box:
        box.folder.set("Handled")
        assert len(list(box.uids())) == 2


def test_the_replies_read_are_counted_by_outcome(
    app: Flask, runner, make_game, smtp_server, deliver, imap_server
) -> None:
    """The reader's outcomes, as the LMTP server's: a stranger's message to no tag of ours,
    and the player's move."""
    game_id = make_game(seed=12)["id"]
    deliver()
    with mailbox(imap_server) as box:
        box.append(stranger_message(), "INBOX")
        box.append(a_reply(app, game_id, smtp_server), "INBOX")
    read = partial(both_read_in_one_pass, app, runner, imap_server, game_id)
    assert replies_counted(app, read) == {"not_ours": 1, "applied": 1}


def test_a_message_the_server_will_not_move_holds_up_no_reply(
    app: Flask, runner, make_game, smtp_server, deliver, imap_server, monkeypatch
) -> None:
    """The first message's move is refused: it stays for the next pass, the next is read."""
    game_id = make_game(seed=12)["id"]
    deliver()
    with mailbox(imap_server) as box:
        box.append(nested_parts(2), "INBOX")
        box.append(a_reply(app, game_id, smtp_server), "INBOX")
        first = box.uids()[0]
    move = BaseMailBox.move

    def refused_for_the_first(self: BaseMailBox, uid: str, destination: str) -> Any:
        if uid == first:
            raise MailboxMoveError(("NO", [b"Mailbox is full"]), "OK")
        return move(self, uid, destination)

    monkeypatch.setattr(BaseMailBox, "move", refused_for_the_first)
    result = runner.invoke(args=["mail", "fetch", "--once"])
    assert result.exit_code == 0, result.output
    assert "handled 2 message(s)" in result.output
    assert version(app, game_id) == 1
    with mailbox(imap_server) as box:
        assert box.uids() == [first]


@contextmanager
def silent_server(greeting: bytes) -> Iterator[int]:
    """A server on a free port that accepts each connection, says ``greeting`` and then
    nothing more, until the block ends; yields its port."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:  # closed: the block ended
                return
            connection.sendall(greeting)
            accepted.append(connection)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() waiting in the thread
        listener.close()
        thread.join(5)
        for connection in accepted:
            connection.close()
    assert not thread.is_alive()


@pytest.mark.parametrize("greeting", [b"", b"* OK IMAP4rev1 ready\r\n"], ids=["mute", "greets"])
def test_a_server_that_never_answers_is_given_up_on(
    app: Flask, runner, greeting: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    """Connected, then silent (from the start, or after its greeting): one pass fails with one
    line, and the reader logs an outage and goes on, within seconds of IMAP_TIMEOUT."""
    with silent_server(greeting) as port:
        app.config.update(IMAP_PORT=port, IMAP_TIMEOUT=1)
        start = time.monotonic()
        result = runner.invoke(args=["mail", "fetch", "--once"])
        assert time.monotonic() - start < 10
        assert result.exit_code == 1
        assert result.output.strip().splitlines() == [
            "Error: the IMAP server is unavailable: no answer from 127.0.0.1 in 1s"
        ]
        start = time.monotonic()
        with reader_running(app, poll=0.1):
            while not caplog.records and time.monotonic() - start < 10:
                time.sleep(0.1)
    paused = [r.getMessage() for r in caplog.records if warned_by_reader(r)]
    assert paused[0] == "IMAP reading paused, waiting 0s: no answer from 127.0.0.1 in 1s"


def test_a_message_the_server_cannot_hand_over_holds_up_no_reply(
    app: Flask, runner, make_game, smtp_server, deliver, imap_server, caplog
) -> None:
    """Dovecot cannot read the first message's file: it answers its FETCH with BYE and drops
    the connection. The reader connects again and tries it again; the third time it sets
    it aside, moved unread, and reads the reply behind it in the same run."""
    game_id = make_game(seed=12)["id"]
    deliver()
    with mailbox(imap_server) as box:
        box.append(stranger_message(), "INBOX")
        (unreadable,) = (imap_server.root / "mail").rglob("cur/*")
        unreadable.chmod(0)
        box.append(a_reply(app, game_id, smtp_server), "INBOX")
        first = box.uids()[0]

    def read() -> None:
        result = runner.invoke(args=["mail", "fetch", "--once"])
        assert result.exit_code == 0, result.output
        assert "handled 2 message(s)" in result.output

    assert replies_counted(app, read) == {"failed": 1, "applied": 1}  # once, set aside
    assert version(app, game_id) == 1
    warnings = [r.getMessage() for r in caplog.records if r.name == servers.__name__]
    assert [w.split(":")[0] for w in warnings] == [
        f"reply {first} could not be fetched (1 of 3 tries)",
        f"reply {first} could not be fetched (2 of 3 tries)",
        f"reply {first} could not be fetched (3 of 3 tries, set aside in Handled)",
    ]
    with mailbox(imap_server) as box:
        assert box.uids() == []
        box.folder.set("Handled")
        assert len(box.uids()) == 2


@pytest.mark.parametrize(
    "refusal",
    [MailboxFetchError(("NO", [b"Internal error"]), "OK"), LookupError("no message 1")],
    ids=["no", "nothing"],
)
def test_a_message_whose_fetch_is_refused_is_passed_over_in_the_pass(
    app: Flask, runner, make_game, smtp_server, deliver, imap_server, monkeypatch, refusal
) -> None:
    """The server answers the first message's FETCH with NO, or with no message (gone
    meanwhile), and keeps the connection: the reply behind it is read in the same pass,
    the refused one stays for the next."""
    game_id = make_game(seed=12)["id"]
    deliver()
    with mailbox(imap_server) as box:
        box.append(stranger_message(), "INBOX")
        box.append(a_reply(app, game_id, smtp_server), "INBOX")
        first = box.uids()[0]
    fetch = servers._raw_message

    def refused_for_the_first(box: BaseMailBox, uid: str) -> tuple[bytes, int]:
        if uid == first:
            raise refusal
        return fetch(box, uid)

    monkeypatch.setattr(servers, "_raw_message", refused_for_the_first)
    result = runner.invoke(args=["mail", "fetch", "--once"])
    assert result.exit_code == 0, result.output
    assert "handled 1 message(s)" in result.output
    assert version(app, game_id) == 1
    with mailbox(imap_server) as box:
        assert box.uids() == [first]


@pytest.mark.parametrize(
    ("setting", "value", "error"),
    [
        (
            "IMAP_PASSWORD",
            "wrong",
            "Error: the IMAP server refused the login of IMAP_USERNAME 'replies': "
            "[AUTHENTICATIONFAILED] Authentication failed.",
        ),
        (
            "IMAP_FOLDER",
            "Replies",
            "Error: IMAP_FOLDER 'Replies' could not be opened on the IMAP server: "
            "Mailbox doesn't exist: Replies",
        ),
        (
            "IMAP_DONE_FOLDER",
            "~Handled",
            "Error: IMAP_DONE_FOLDER '~Handled' could not be created on the IMAP server: "
            "[CANNOT] Invalid mailbox name: Begins with '~'",
        ),
    ],
    ids=["login", "folder", "done-folder"],
)
@pytest.mark.parametrize("once", [True, False], ids=["once", "until-stopped"])
def test_settings_the_server_refuses_stop_the_reader_with_one_line(
    app: Flask, runner, setting: str, value: str, error: str, once: bool
) -> None:
    """Waiting would not help: the reader stops, naming the setting (never the password)."""
    app.config[setting] = value
    result = runner.invoke(args=["mail", "fetch", *(["--once"] if once else ["--poll", "1"])])
    assert result.exit_code == 1
    *started, line = result.output.strip().splitlines()
    assert line.startswith(error), line
    assert len(started) == (0 if once else 1)  # the line saying it started
    assert app.config["IMAP_PASSWORD"] not in line


def test_a_login_refused_for_now_is_an_outage(
    app: Flask, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """[UNAVAILABLE] (RFC 5530): the reader logs one line and tries again."""

    def unavailable(self: BaseMailBox, *args: Any, **kwargs: Any) -> BaseMailBox:
        raise MailboxLoginError(("NO", [b"[UNAVAILABLE] Maintenance, try later"]), "OK")

    monkeypatch.setattr(BaseMailBox, "login", unavailable)
    logins = 0

    def twice() -> bool:
        nonlocal logins
        logins = sum(warned_by_reader(r) for r in caplog.records)
        return logins >= 2

    servers.fetch(app, once=False, poll=0, should_stop=twice)
    paused = {r.getMessage() for r in caplog.records if warned_by_reader(r)}
    assert paused == {
        "IMAP reading paused, waiting 0s: login refused for now: "
        "[UNAVAILABLE] Maintenance, try later"
    }


def test_a_stop_ends_a_backlog_between_two_messages(
    app: Flask,
    imap_server: IMAPServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Asked to stop while it reads the first of three messages, the reader ends after it,
    leaving the other two for its next start; it says when it starts and stops."""
    with mailbox(imap_server) as box:
        for _ in range(3):
            box.append(stranger_message(), "INBOX")
    stop = threading.Event()
    receive = servers.receive

    def then_stop(raw: bytes, **given: Any) -> Any:
        stop.set()  # SIGTERM, as the message is read
        return receive(raw, **given)

    monkeypatch.setattr(servers, "receive", then_stop)
    caplog.set_level("INFO", logger=servers.__name__)
    assert servers.fetch(app, once=False, poll=3600, should_stop=stop.is_set) == 1
    with mailbox(imap_server) as box:
        assert len(box.uids()) == 2
    said = [r.getMessage() for r in caplog.records if r.name == servers.__name__]
    server = f"127.0.0.1:{imap_server.port}"
    assert said[0] == f"reading replies from IMAP {server}, folder INBOX, as replies"
    assert said[-1] == "stopped reading replies from IMAP: 1 message(s) handled"
    assert not any(imap_server.password in line for line in said)


@contextmanager
def server_without_tls(heard: list[bytes]) -> Iterator[int]:
    """An IMAP server on a free port whose capabilities hold no STARTTLS (as when one in the
    middle takes it out); every line it hears goes into ``heard``. Yields its port."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        try:
            connection, _ = listener.accept()
        except OSError:  # closed: the block ended
            return
        with connection, connection.makefile("rb") as lines:
            connection.sendall(b"* OK IMAP4rev1 ready\r\n")
            for line in lines:
                heard.append(line)
                tag, _, command = line.decode().partition(" ")
                if command.upper().startswith("CAPABILITY"):
                    connection.sendall(b"* CAPABILITY IMAP4rev1 AUTH=PLAIN\r\n")
                connection.sendall(f"{tag} OK done\r\n".encode())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(5)


def test_no_password_goes_to_a_server_that_offers_no_tls(app: Flask, runner) -> None:
    heard: list[bytes] = []
    with server_without_tls(heard) as port:
        app.config.update(IMAP_PORT=port, IMAP_PLAINTEXT_LOGIN=False)
        result = runner.invoke(args=["mail", "fetch", "--once"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"Error: the IMAP server 127.0.0.1:{port} offers no STARTTLS, so the password would "
        "cross the network in clear: use port 993, or set IMAP_PLAINTEXT_LOGIN=true for a "
        "server on this machine or a private network"
    ]
    assert heard and not any(b"LOGIN" in line.upper() for line in heard)
    assert not any(app.config["IMAP_PASSWORD"].encode() in line for line in heard)


def test_a_message_its_server_marks_as_sent_by_no_one_is_dropped(
    app: Flask, runner, make_game, smtp_server, deliver, imap_server
) -> None:
    """The server that put it in the mailbox wrote its empty envelope sender in
    ``Return-Path: <>``: a bounce or an auto-reply (RFC 3834), which the LMTP server drops
    on its envelope. It is neither played nor answered, nor is the player's reply behind it
    held up."""
    game_id = make_game(seed=12)["id"]
    deliver()
    (invitation,) = smtp_server.handler.to("kim@example.com")
    away = reply_message(invitation, "I am away until 7 December and will answer then.")
    away["Delivered-To"] = str(away["To"])
    away["Return-Path"] = "<>"
    with mailbox(imap_server) as box:
        box.append(away.as_bytes(policy=away.policy.clone(linesep="\r\n")), "INBOX")
        box.append(a_reply(app, game_id, smtp_server), "INBOX")
    both_read_in_one_pass(app, runner, imap_server, game_id)
    deliver()
    answers = [r for r in smtp_server.received if r.message["In-Reply-To"] == away["Message-ID"]]
    assert answers == []
