"""Where replies come in: an LMTP (or SMTP) server for the site's mail server to hand them to,
and an IMAP reader for a site with only a mailbox. Both hand each message to
:func:`.inbound.receive`.

The LMTP server refuses at once (550) a recipient that is no reply address
whose tag is valid now, so that a reply to a forged or dead tag bounces to its
sender rather than vanish; it answers a message once it is handled, per
recipient as LMTP wants; a database that is unavailable gets a temporary refusal (451), so the
mail server tries again later (a reply handled before is known by its
Message-ID and not applied twice), and a message that cannot be read at all
a permanent one (554), which the mail server reports to its sender: a
database error that is no outage counts as that, as it would recur.
"""

from __future__ import annotations

import asyncio
import imaplib
import logging
import re
import ssl
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from functools import partial
from typing import Any

import click
from aiosmtpd.controller import Controller
from aiosmtpd.lmtp import LMTP
from aiosmtpd.smtp import SMTP
from flask import Flask
from imap_tools import (
    BaseMailBox,
    MailBox,
    MailboxFetchError,
    MailboxFolderCreateError,
    MailboxFolderSelectError,
    MailboxLoginError,
    MailBoxUnencrypted,
    UnexpectedCommandStatusError,
)
from imap_tools.utils import check_command_status
from sqlalchemy.exc import SQLAlchemyError

from ..config import ConfigError
from ..errors import is_outage, outage_reason
from ..mail.worker import beat
from ..metrics import count_reply
from ..models import ImapReaderHeartbeat, InboundServerHeartbeat, db
from .inbound import HEAD_BYTES, MAX_MESSAGE_BYTES, MAX_TAKEN_BYTES, Outcome, receive
from .tags import read_tag, tag_in

log = logging.getLogger(__name__)


class Delivery:
    """The aiosmtpd handler: accepts mail to tagged reply addresses, and reads each message."""

    def __init__(self, app: Flask, lmtp: bool) -> None:
        self.app = app
        self.lmtp = lmtp

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, options: list[str]
    ) -> str:
        """Only reply addresses whose tag is valid now receive mail here: the rest is refused
        at once, so that the sender's mail server tells the sender. A tag is signed over the
        player's link, so it is checked against the database (in a thread, as it is not
        asynchronous): a forged tag, one of a rotated key or a replaced link is refused.

        A message is read for one reply address: a second one is refused for good, so that
        its sender hears it was not read for that one (the same Message-ID, sent again to
        it alone, would be known as read)."""
        if envelope.rcpt_tos and address.casefold() not in (
            taken.casefold() for taken in envelope.rcpt_tos
        ):
            return "550 5.5.3 One reply address a message: send a reply to each"
        check = partial(self.valid_tag, address)
        try:
            valid = await asyncio.get_running_loop().run_in_executor(None, check)
        except Exception as exc:
            return _refusal(exc, "550 5.3.0 The reply address could not be read")
        if not valid:
            count_reply("not_ours")
            if address.casefold() == str(self.app.config["REPLY_ADDRESS"]).casefold():
                # A reply to an email with no reply address of its own (the digest, the end of
                # a game), which went to the sender's: the sender's bounce says where to move.
                return (
                    "550 5.1.1 Moves are made by replying to an email that asks for a move, "
                    "or on the game's page"
                )
            return "550 5.1.1 No such reply address"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        """Read the message (in a thread: the database is not asynchronous), then answer."""
        read = partial(
            self.read, envelope.original_content, envelope.mail_from, tuple(envelope.rcpt_tos)
        )
        try:
            outcome = await asyncio.get_running_loop().run_in_executor(None, read)
        except Exception as exc:
            reply = _refusal(exc, "554 5.6.0 The reply could not be read")
        else:
            count_reply(outcome.counted_as)
            reply = "250 2.0.0 OK"
        if self.lmtp:  # one reply per recipient
            return "\r\n".join([reply] * max(1, len(envelope.rcpt_tos)))
        return reply

    def valid_tag(self, address: str) -> bool:
        """Whether ``address`` is a reply address whose tag is valid under the current keys."""
        with self.app.app_context():
            try:
                tag = tag_in(address)
                return tag is not None and read_tag(tag) is not None
            finally:
                db.session.remove()

    def read(self, raw: bytes, mail_from: str | None, recipients: tuple[str, ...]) -> Outcome:
        """Hand one message to the service, in an application context of its own."""
        with self.app.app_context():
            try:
                return receive(raw, envelope_from=mail_from, recipients=recipients)
            finally:
                db.session.remove()


def _refusal(exc: Exception, permanent: str) -> str:
    """The answer when reading an address or a message failed: a temporary refusal (451) for
    a database outage, so the mail server tries again later, else ``permanent``: reading it
    again would fail again (a database error that is no outage too), and the mail server
    tells the sender instead. Counted either way."""
    if is_outage(exc):
        count_reply("deferred")
        log.warning("reply put off, the database is unavailable: %s", outage_reason(exc))
        return "451 4.3.0 Try again later"
    count_reply("failed")
    log.exception("reply could not be read")
    return permanent


class InboundController(Controller):
    """aiosmtpd in a thread, speaking LMTP (the default) or SMTP."""

    def __init__(self, app: Flask, host: str, port: int, *, smtp: bool = False) -> None:
        self.lmtp = not smtp
        super().__init__(
            Delivery(app, self.lmtp), hostname=host, port=port, data_size_limit=MAX_TAKEN_BYTES
        )

    def factory(self) -> SMTP:
        """An LMTP or SMTP session for each connection."""
        server_class = LMTP if self.lmtp else SMTP
        return server_class(self.handler, **self.SMTP_kwargs)


def serve(
    app: Flask,
    host: str,
    port: int,
    *,
    smtp: bool,
    should_stop: Callable[[], bool],
    started: Callable[[], None] = lambda: None,
) -> None:
    """Run the inbound server until ``should_stop`` says so, calling ``started`` once it
    listens, and writing its heartbeat every :data:`LISTENING_BEAT` seconds while it does
    (:func:`listening`). An address it cannot listen on (a port in use, a host of another
    machine or none) is a :class:`click.ClickException` naming it, in one line."""
    controller = InboundController(app, host, port, smtp=smtp)
    try:
        controller.start()
    except OSError as exc:
        # aiosmtpd leaves the event loop of a server that never listened open.
        controller.loop.close()
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise click.ClickException(f"cannot listen on {host}:{port}: {reason}") from None
    log.info("reading replies by %s on %s:%d", "SMTP" if smtp else "LMTP", host, port)
    started()
    database_down = False
    try:
        while not should_stop():
            if controller.loop.is_running():
                database_down = listening(app, database_down)
            _sleep(LISTENING_BEAT, should_stop)
    finally:
        controller.stop()
    log.info("stopped reading replies by %s on %s:%d", "SMTP" if smtp else "LMTP", host, port)


# Seconds between two heartbeats of the inbound server while it listens.
LISTENING_BEAT = 5.0


def listening(app: Flask, database_down: bool) -> bool:
    """Write that this machine's inbound server listens: ``/metrics`` serves its age, which
    grows while the server is down (the mail server queues its replies, silently) or the
    database cannot be written. Returns whether it could not be written: the server listens
    on (each reply put off until the database is back), and the log says so once as the
    database goes (``database_down`` tells it was gone already) and once as it comes back."""
    with app.app_context():
        try:
            beat(InboundServerHeartbeat)
        except SQLAlchemyError as exc:
            if not database_down:
                log.warning("heartbeat not written, the server listens on: %s", outage_reason(exc))
            return True
        finally:
            db.session.remove()
    if database_down:
        log.info("heartbeat written again")
    return False


# --- IMAP ----------------------------------------------------------------------------


# What the IMAP server being unreachable, lost or refusing a command for now raises: the
# reader waits and tries again (imap_tools' own errors for a refused command included).
IMAP_UNAVAILABLE = (OSError, imaplib.IMAP4.error, UnexpectedCommandStatusError)
# A message's size in the server's answer to FETCH (RFC822.SIZE).
SIZE = re.compile(rb"RFC822\.SIZE (\d+)")

# Seconds of each IDLE before the reader checks whether it is asked to stop.
IDLE_SPELL = 5.0


def imap_mailbox(config: Mapping[str, Any]) -> BaseMailBox:
    """Log in to ``IMAP_SERVER``: TLS from the start on port 993, else STARTTLS. A server
    that offers no STARTTLS gets no password (a :class:`ConfigError`: one in the middle may
    have taken the offer out) unless ``IMAP_PLAINTEXT_LOGIN`` says it may.

    The connection gives up on a server silent for ``IMAP_TIMEOUT`` seconds, to connect,
    greet or answer (a :class:`TimeoutError`, an outage like any other): without it, a
    server that accepts and never answers would hold the reader for ever, deaf to a stop.
    """
    host, port, timeout = config["IMAP_SERVER"], config["IMAP_PORT"], config["IMAP_TIMEOUT"]
    if not host:
        raise click.ClickException("IMAP_SERVER is not set")
    box: BaseMailBox
    if port == 993:
        box = MailBox(host, port, timeout=timeout, ssl_context=ssl.create_default_context())
    else:
        box = MailBoxUnencrypted(host, port, timeout=timeout)
        if "STARTTLS" in box.client.capabilities:
            box.client.starttls(ssl.create_default_context())
        elif not config["IMAP_PLAINTEXT_LOGIN"]:
            box.client.shutdown()
            raise ConfigError(
                f"the IMAP server {host}:{port} offers no STARTTLS, so the password would cross "
                "the network in clear: use port 993, or set IMAP_PLAINTEXT_LOGIN=true for a "
                "server on this machine or a private network"
            )
    user = config["IMAP_USERNAME"] or ""
    try:
        # No folder yet: fetch_once opens IMAP_FOLDER, and says so if it cannot.
        box.login(user, config["IMAP_PASSWORD"] or "", initial_folder=None)
    except MailboxLoginError as exc:
        box.client.shutdown()
        said = server_said(exc)
        if any(code in said for code in TEMPORARY_REFUSALS):
            raise imaplib.IMAP4.error(f"login refused for now: {said}") from None
        raise ConfigError(
            f"the IMAP server refused the login of IMAP_USERNAME {user!r}: {said}"
        ) from None
    return box


# RFC 5530 codes of a login refused for now: the reader tries again, as for an outage.
TEMPORARY_REFUSALS = ("[UNAVAILABLE]", "[INUSE]")


def server_said(exc: UnexpectedCommandStatusError) -> str:
    """What the IMAP server answered to a command it refused, in one line."""
    data = exc.command_result[1] if len(exc.command_result) > 1 else []
    said = " ".join(
        item.decode(errors="replace") if isinstance(item, bytes) else str(item)
        for item in data or []
        if item is not None
    )
    return " ".join(said.split()) or str(exc.command_result[0])


@contextmanager
def connected(config: Mapping[str, Any]) -> Iterator[BaseMailBox]:
    """:func:`imap_mailbox`, logged out of at the end. After an error the logout's own
    failure (the connection is most likely gone) is dropped: the first error tells why."""
    box = imap_mailbox(config)
    try:
        yield box
    except BaseException:
        with suppress(*IMAP_UNAVAILABLE):
            box.logout()
        raise
    box.logout()


# Times the server may fail to hand over one message before the reader sets it aside.
READ_TRIES = 3


class MessageLost(Exception):
    """The IMAP server dropped the connection as it handed over one message (Dovecot does,
    with ``BYE``, when it cannot read the message's file): the reader connects again at
    once, and the message counts one failure more in its :class:`Unreadable`."""


class Unreadable:
    """The messages the IMAP server failed to hand over, by folder UIDVALIDITY and UID,
    counted over the passes of one process.

    The server failing on one message would otherwise stop every pass at it, as the
    passes read the folder from its lowest UID on: the replies behind it would wait for
    ever. One that failed ``READ_TRIES`` times is set aside, moved unread with the others
    the reader cannot read; if the server refuses that move too, it is passed over until
    the process ends.
    """

    def __init__(self) -> None:
        self.failures: dict[str, int] = {}
        self.passed_over: set[str] = set()

    def failed(self, key: str) -> int:
        """Count one more failure to hand over ``key``; returns how many there were."""
        self.failures[key] = self.failures.get(key, 0) + 1
        return self.failures[key]

    def set_aside(self, key: str) -> bool:
        """Whether ``key`` is no more to be read: it failed ``READ_TRIES`` times."""
        return key in self.passed_over or self.failures.get(key, 0) >= READ_TRIES


def fetch_once(
    app: Flask,
    box: BaseMailBox,
    unreadable: Unreadable | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> int:
    """Read every message in ``IMAP_FOLDER``, hand each to the service, then move it to
    ``IMAP_DONE_FOLDER`` (created if missing); returns how many were handled.

    A message is moved only once it has been handled: one that fails for a
    database outage, or while the IMAP server is lost, stays to be read again (a
    reply read before is known by its Message-ID and not applied twice). One that
    fails for anything else, the bytes of a stranger's message included, would
    fail again on every pass: it is logged and moved too, so that it holds up no
    reply behind it. So is one the server failed to hand over ``READ_TRIES`` times
    (counted in ``unreadable``), unread. The pass ends early, between two messages,
    once ``should_stop`` says so: a backlog would outlast a service manager's wait
    after SIGTERM, and the rest is read on the next start.
    """
    if unreadable is None:
        unreadable = Unreadable()
    folder, done = app.config["IMAP_FOLDER"], app.config["IMAP_DONE_FOLDER"]
    if not box.folder.exists(done):
        try:
            box.folder.create(done)
        except MailboxFolderCreateError as exc:
            # The folder there after all (an untagged answer left over from IDLE can hide it
            # from the LIST before): RFC 5530's ALREADYEXISTS is what was wanted.
            if "[ALREADYEXISTS]" not in server_said(exc):
                raise ConfigError(
                    f"IMAP_DONE_FOLDER {done!r} could not be created on the IMAP server: "
                    f"{server_said(exc)}"
                ) from None
    try:
        box.folder.set(folder)
    except MailboxFolderSelectError as exc:
        raise ConfigError(
            f"IMAP_FOLDER {folder!r} could not be opened on the IMAP server: {server_said(exc)}"
        ) from None
    # A UID names the same message only while the folder keeps its UIDVALIDITY.
    validity = (box.client.untagged_responses.get("UIDVALIDITY") or [b""])[-1]
    handled = 0
    for uid in box.uids():
        if should_stop():
            break
        key = f"{validity!r}/{uid}"
        if unreadable.set_aside(key):
            if key in unreadable.passed_over:
                continue
            # Marked first: a move that loses the connection too is not tried again.
            unreadable.passed_over.add(key)
            count_reply("failed")
        else:
            try:
                raw, size = _raw_message(box, uid)
            except (OSError, imaplib.IMAP4.error, MailboxFetchError, LookupError) as exc:
                tries = unreadable.failed(key)
                log.warning(
                    "reply %s could not be fetched (%d of %d tries%s): %s",
                    uid,
                    tries,
                    READ_TRIES,
                    f", set aside in {done}" if tries >= READ_TRIES else "",
                    unavailable_reason(exc, app.config),
                )
                if isinstance(exc, MailboxFetchError | LookupError):
                    if tries < READ_TRIES:
                        continue  # refused, the connection kept: tried again next pass
                    unreadable.passed_over.add(key)
                    count_reply("failed")
                else:
                    raise MessageLost(uid) from exc
            else:
                _handle(app, uid, raw, size)
        try:
            box.move(uid, done)
        except UnexpectedCommandStatusError as exc:
            # Refused for this message (gone meanwhile, say): it is read again on the next
            # pass, and known then by its Message-ID.
            log.warning("reply %s could not be moved to %s: %s", uid, done, exc)
        handled += 1
    return handled


def _handle(app: Flask, uid: str, raw: bytes, size: int) -> None:
    """Hand the message ``uid`` (of ``size`` bytes, ``raw`` its first bytes or all of them)
    to the service; raises only for an outage, which leaves it in the folder."""
    with app.app_context():
        try:
            # The bytes as they came, as the LMTP server hands them over: a message is
            # parsed only by the service, here where what it raises stays this message's.
            outcome = receive(raw, size=size)
        except Exception as exc:
            if is_outage(exc):
                count_reply("deferred")
                raise  # the message stays, to be read once the database is back
            count_reply("failed")
            log.exception("reply %s could not be read", uid)
        else:
            count_reply(outcome.counted_as)
        finally:
            db.session.remove()


def _raw_message(box: BaseMailBox, uid: str) -> tuple[bytes, int]:
    """The bytes of the message ``uid``, unparsed, without marking it read, and its size.

    Of a message over :data:`MAX_MESSAGE_BYTES` (a photo attached), only its first
    :data:`HEAD_BYTES`, where its headers are: the service reads no more of it, and its
    size alone says it is too large to read. Fetching all of it would hold the reader
    for as long as the server takes to send it, however large it is.
    """
    result = box.client.uid("FETCH", uid, "(RFC822.SIZE)")
    check_command_status(result, MailboxFetchError)
    # imaplib hands back every FETCH answer the server gave since the last FETCH: a flag
    # another client changed meanwhile may come first, without a size.
    found = next(
        (
            match
            for item in result[1]
            if isinstance(item, bytes) and (match := SIZE.search(item)) is not None
        ),
        None,
    )
    if found is None:
        raise LookupError(f"the IMAP server gave no size of message {uid}")
    size = int(found.group(1))
    part = "BODY.PEEK[]" if size <= MAX_MESSAGE_BYTES else f"BODY.PEEK[]<0.{HEAD_BYTES}>"
    result = box.client.uid("FETCH", uid, f"({part})")
    check_command_status(result, MailboxFetchError)
    for item in result[1]:
        if isinstance(item, tuple) and isinstance(item[1], bytes):
            return item[1], size
    raise LookupError(f"the IMAP server gave no message {uid}")


def left_after_pass(box: BaseMailBox, left_before: set[str]) -> tuple[bool, set[str]]:
    """After a pass: whether mail came during it, after its search, and the messages left.

    The message counts the server gave during the pass are of the pass's own doing (it
    selected the folder and moved mail) and are dropped, but one may have been of mail
    that came after the pass's search, which IDLE would not announce again: the folder
    is searched once more. A pass moves every message it reads, so what is left is new,
    but for one whose move the server refused, left again after each pass
    (``left_before``): that one is not news.
    """
    box.client.untagged_responses.pop("EXISTS", None)
    left = set(box.uids())
    return bool(left - left_before), left


def news_in_idle(box: BaseMailBox) -> bool:
    """Wait one spell of IDLE; whether the server said anything that may be new mail.

    Counted: what it said during the spell, what it said as the spell ended, and a
    message count it gave as the spell began or since :func:`left_after_pass`. imap_tools'
    ``idle.wait`` returns only the first: mail arriving between the last pass and the
    spell, or as a spell ends, would wait unread until more mail came.
    """
    box.idle.start()
    try:
        said = box.idle.poll(timeout=IDLE_SPELL)
    finally:
        _, ending = box.idle.stop()
    return bool(said or ending or box.client.untagged_responses.pop("EXISTS", None))


def fetch(
    app: Flask, *, once: bool, poll: float = 60.0, should_stop: Callable[[], bool] = lambda: False
) -> int:
    """Read replies from IMAP: one pass with ``once``; else until stopped, waiting for new mail
    between passes (IDLE where the server has it, else every ``poll`` seconds) and through
    outages. Returns how many messages were handled."""
    handled = 0
    unreadable = Unreadable()
    if not once:
        log.info(
            "reading replies from IMAP %s:%d, folder %s, as %s",
            app.config["IMAP_SERVER"],
            app.config["IMAP_PORT"],
            app.config["IMAP_FOLDER"],
            app.config["IMAP_USERNAME"],
        )
    while True:
        try:
            with connected(app.config) as box:
                handled += fetch_once(app, box, unreadable, should_stop)
                read(app)
                if once:
                    return handled
                idle = "IDLE" in box.client.capabilities
                passed, left = True, set[str]()
                while not should_stop():
                    if not idle:
                        _sleep(poll, should_stop)
                        handled += fetch_once(app, box, unreadable, should_stop)
                        read(app)
                        continue
                    if passed:
                        passed, left = left_after_pass(box, left)
                    # IDLE in short spells, so that a stop is heard; a pass only when told.
                    if passed or news_in_idle(box):
                        handled += fetch_once(app, box, unreadable, should_stop)
                        passed = True
                    read(app)  # a pass, or a spell the server ended as asked
        except MessageLost:
            continue  # at once: the server is there, it failed on one message, now counted
        except (*IMAP_UNAVAILABLE, SQLAlchemyError) as exc:
            if once:
                raise
            log.warning(
                "IMAP reading paused, waiting %.0fs: %s", poll, unavailable_reason(exc, app.config)
            )
        if should_stop():
            log.info("stopped reading replies from IMAP: %d message(s) handled", handled)
            return handled
        _sleep(poll, should_stop)


def read(app: Flask) -> None:
    """Write that this machine's reader has just read its folder (a pass, a spell of IDLE):
    ``/metrics`` serves its age, which grows while the server refuses the reader or cannot
    be reached, and the reader only logs it."""
    with app.app_context():
        try:
            beat(ImapReaderHeartbeat)
        finally:
            db.session.remove()


def unavailable_reason(exc: BaseException, config: Mapping[str, Any]) -> str:
    """What made the IMAP server (or the database) unavailable, in one line: a timeout
    says how long the server was silent, where the socket says only ``timed out``."""
    if isinstance(exc, TimeoutError):
        return f"no answer from {config['IMAP_SERVER']} in {config['IMAP_TIMEOUT']:g}s"
    if isinstance(exc, UnexpectedCommandStatusError):
        return server_said(exc)
    return outage_reason(exc)


def _sleep(seconds: float, should_stop: Callable[[], bool]) -> None:
    end = time.monotonic() + seconds
    while not should_stop() and time.monotonic() < end:
        time.sleep(min(0.5, end - time.monotonic()))
