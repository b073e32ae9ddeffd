"""The mail worker: deliver queued emails, one row lock at a time.

Each message is claimed with ``SELECT ... FOR UPDATE SKIP LOCKED`` (so workers
on several machines split the queue), written (:func:`.kinds.written`) and
marked ``sending`` in one transaction; then locked again, sent while its row
stays locked, and its outcome committed right after the SMTP reply, before the
next is claimed. Marked ``sending``, it is out of reach of the moves: a newer
turn email is a new message, and no move waits for an SMTP server. A database
that goes away, or a worker killed, before the outcome's commit leaves that one
message ``sending`` with no lock on it: the next claim takes it, and sends it
once more as it was written, with the same Message-ID; but a worker that had
handed it to the SMTP server when the database went away records it as sent
once the database is back, before it claims anything. Whatever goes wrong
with one message (a refusal, an address or a header that cannot be written
out) is that message's failure, never the queue's. A connection that drops or
times out while one message is sent is that message's temporary failure too:
it is tried again later, then given up on, and the next message goes out on a
new connection, so a message the server hangs up on every time cannot hold up
the others. An SMTP server or database
that is down delays the queue; it loses nothing.

Each pass also makes the moves the computer owes (:mod:`service.computer`)
before it sends the mail, and again between its batches (a long queue holds
no move back), so the turn email a computer's move causes leaves in the same
pass; a move that fails is logged, and the mail goes on.
"""

from __future__ import annotations

import logging
import os
import re
import smtplib
import socket
import ssl
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from email import charset
from email.header import Header
from email.mime.text import MIMEText
from email.policy import SMTP, EmailPolicy, compat32
from email.utils import formataddr, parseaddr
from functools import partial
from typing import TYPE_CHECKING

from flask import Flask, current_app
from flask_mail import Connection, Mail, Message
from sqlalchemy import select, update
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from .. import addresses, metrics, schema
from ..errors import is_outage, outage_reason
from ..logs import redact, without_addresses
from ..models import (
    ImapReaderHeartbeat,
    InboundServerHeartbeat,
    OutboxMessage,
    WorkerHeartbeat,
    db,
    upsert,
    utcnow,
)
from ..storable import storable
from ..unit_of_work import after_commit, transaction
from . import kinds, outbox
from .compose import flowed, with_headers

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

log = logging.getLogger(__name__)

# Seconds to wait after each temporary failure (4xx): growing, then give up.
RETRY_DELAYS = (60, 300, 900, 3600, 4 * 3600, 12 * 3600)
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1


class ServerUnavailable(smtplib.SMTPException):
    """The SMTP server cannot be reached, or refused the session before any message.

    Raised for a failure while connecting, greeting (EHLO/HELO), starting TLS
    or logging in, and for a refusal of the service itself under a message
    (:func:`refuses_the_service`): it says nothing about the messages, so none
    counts it as an attempt. The worker leaves them queued and waits for the
    server.
    """


# How long the end of a message's data waits for the server's reply, at least: RFC 5321
# (4.5.3.2.6) asks ten minutes, as a server may scan or relay a message before it answers. A
# client that gives up sooner takes for lost a message the server then takes, and sends it again.
DATA_REPLY_TIMEOUT = 600.0


class PatientSMTP(smtplib.SMTP):
    """An SMTP client that waits :data:`DATA_REPLY_TIMEOUT` for the reply to a message's data.

    Every other reply, the greeting's and the one to ``DATA`` itself among them, is waited
    for the connection's own timeout.
    """

    _in_data = False

    def data(self, msg: ReadableBuffer | str) -> tuple[int, bytes]:
        """Send the message's data (see :meth:`smtplib.SMTP.data`); the wait for its reply is
        the long one."""
        self._in_data = True
        try:
            return super().data(msg)
        finally:
            self._in_data = False
            if self.sock is not None:
                self.sock.settimeout(self.timeout)

    def send(self, s: ReadableBuffer | str) -> None:
        """Send ``s``; once it is the message's data (the one thing ``data`` sends as bytes),
        the server's reply is waited for the long timeout."""
        super().send(s)
        if self._in_data and not isinstance(s, str) and self.sock is not None:
            self.sock.settimeout(max(self.timeout, DATA_REPLY_TIMEOUT))


class PatientSMTPSSL(PatientSMTP, smtplib.SMTP_SSL):
    """:class:`PatientSMTP` over TLS from the start."""


class TimeoutConnection(Connection):
    """A Flask-Mail connection whose socket gives up after ``MAIL_TIMEOUT`` seconds."""

    def configure_host(self) -> smtplib.SMTP:
        """Connect, greet, start TLS and log in; raises :class:`ServerUnavailable` on failure.

        TLS checks the server's certificate and name, as a browser does (smtplib's own
        context checks neither): one in the middle would read the login and every link.
        """
        timeout = current_app.config["MAIL_TIMEOUT"]
        mail = self.mail
        context = ssl.create_default_context()
        host: smtplib.SMTP
        try:
            if mail.use_ssl:
                host = PatientSMTPSSL(mail.server, mail.port, timeout=timeout, context=context)
            else:
                host = PatientSMTP(mail.server, mail.port, timeout=timeout)
        except (smtplib.SMTPException, OSError) as exc:
            raise ServerUnavailable(
                f"connecting to {mail.server}:{mail.port}: {_describe(exc)}"
            ) from exc
        step = "greeting"
        try:
            # Greet now, not before the first MAIL FROM: a refusal there would read as a
            # reply to that message.
            host.ehlo_or_helo_if_needed()
            if mail.use_tls:
                step = "STARTTLS"
                host.starttls(context=context)
                host.ehlo_or_helo_if_needed()
            if mail.username and mail.password:
                step = "login"
                host.login(mail.username, mail.password)
        except (smtplib.SMTPException, OSError) as exc:
            host.close()
            raise ServerUnavailable(f"{step}: {_describe(exc)}") from exc
        return host


def _describe(exc: Exception) -> str:
    if isinstance(exc, smtplib.SMTPResponseException):
        return f"{exc.smtp_code} {_text(exc.smtp_error)}"
    return str(exc) or type(exc).__name__


def _text(reply: bytes | str) -> str:
    """A server's reply as text the outbox can keep (a NUL in it would fail the commit)."""
    return storable(reply.decode(errors="replace") if isinstance(reply, bytes) else str(reply))


class Transport:
    """Where messages go: an SMTP server through Flask-Mail, or the local mailbox.

    The SMTP connection is opened on first use and kept for the next messages.
    A kept connection is checked (NOOP) before it carries another message: one
    the server closed meanwhile is replaced, and not blamed on the message.
    """

    def __init__(self) -> None:
        self.local = current_app.config["LOCAL_MAILBOX"]
        self.connection: TimeoutConnection | None = None

    def send(self, message: OutboxMessage) -> None:
        """Deliver one message, written (:func:`.kinds.written`).

        Raises :class:`ServerUnavailable` if no session could be opened, an
        ``smtplib`` error for a reply to the message itself (MAIL FROM, RCPT,
        DATA), ``SMTPServerDisconnected`` or a socket error if the connection
        drops or times out while the message is sent, and whatever stops the
        message being written out (an address that needs SMTPUTF8, say).
        """
        assert message.subject is not None, "a message is written before it is sent"
        mail = Outgoing(
            subject=message.subject,
            # Not Flask-Mail's encoding of the domain, by the older IDNA rules.
            recipients=[addresses.in_ascii(message.recipient)],
            body=message.text_body,
            html=message.html_body,
            extra_headers=dict(message.headers or {}),
        )
        mail.msgId = message.message_id
        if self.local:
            return  # the local mailbox page reads sent messages from the outbox
        if self.connection is not None and not self._alive():
            self.close()
        self.open()
        assert self.connection is not None
        try:
            self.connection.send(mail)
        except Exception:
            self.close()
            raise

    def open(self) -> None:
        """Open the SMTP session (connect, greet, start TLS, log in) unless one is open or
        the mail goes to the local mailbox; raises :class:`ServerUnavailable` on failure."""
        if self.local or self.connection is not None:
            return
        self.connection = TimeoutConnection(current_app.extensions["mail"]).__enter__()

    def _alive(self) -> bool:
        """Whether the kept connection still answers."""
        assert self.connection is not None and self.connection.host is not None
        try:
            code, _ = self.connection.host.noop()
        except (smtplib.SMTPException, OSError):
            return False
        return code == 250

    def close(self) -> None:
        """Close the SMTP connection, if any (quietly: it may be broken)."""
        if self.connection is not None and self.connection.host is not None:
            try:
                self.connection.host.quit()
            except (smtplib.SMTPException, OSError):
                self.connection.host.close()
        self.connection = None


# A header's line: 78 characters where it can be folded at white space, 998 at most (RFC 5322).
FOLD_WIDTH, MAX_LINE = 78, 998
# A line break that folds a header: the break goes, its white space stays.
FOLD = re.compile(r"\r?\n(?=[ \t])")
# A word of a header with the white space before it, where a fold may go.
SPACED_WORD = re.compile(r"[ \t]*[^ \t]+")


def folded_at_spaces(name: str, value: str, linesep: str) -> str | None:
    """The header ``name: value`` folded at its white space, or ``None`` if it cannot be so.

    Each line holds 78 characters where it can; a longer word (a link in angle
    brackets, say) stays whole on a line of its own, after the name on the
    first. ``None`` for a value that is not ASCII, holds a line break that is
    not a fold, or has a word no line of 998 characters can hold.
    """
    text = FOLD.sub("", f"{name}: {value}")
    if not text.isascii() or "\r" in text or "\n" in text:
        return None
    first, *words = SPACED_WORD.findall(text)
    lines = [first]
    for word in words:
        if len(lines[-1]) + len(word) > FOLD_WIDTH and lines[-1] != first:
            lines.append(word)
        else:
            lines[-1] += word
    if any(len(line) > MAX_LINE for line in lines):
        return None
    return linesep.join(lines) + linesep


class AsciiHeaders(EmailPolicy):
    """``policy.SMTP``, except that a header in ASCII goes out as written, folded at its spaces.

    The standard library folds a header longer than a line by encoding it
    (RFC 2047), even one in plain ASCII: the link of a ``List-Unsubscribe``
    would go out as encoded words, which no mail client reads as a link (RFC
    2369 and 8058 want it as written). A header object (a subject or a sender
    that is not ASCII, see :class:`Outgoing`), and a value that cannot be folded
    at its spaces, are the standard library's to write, except a subject.

    A subject that is not ASCII, or holds ``=?``, goes out as encoded words each holding its own
    spaces (:class:`email.header.Header`): where the library folds between two
    encoded words it may leave a space of the text in the fold, which readers
    drop (RFC 2047), so that "le pli 6 :" reads "le pli6 :".
    """

    def fold(self, name: str, value: str) -> str:
        """The header as text, with this policy's line ends."""
        folded = self._folded(name, value)
        return folded if folded is not None else super().fold(name, value)

    def fold_binary(self, name: str, value: str) -> bytes:
        """The header as bytes, with this policy's line ends."""
        folded = self._folded(name, value)
        return folded.encode("ascii") if folded is not None else super().fold_binary(name, value)

    def _folded(self, name: str, value: str) -> str | None:
        """The header folded here, or ``None`` to leave it to the standard library."""
        if name.lower() == "subject" and _encoded(str(value)):
            words = Header(str(value), "utf-8", header_name=name).encode(linesep=self.linesep)
            return f"{name}: {words}{self.linesep}"
        if not hasattr(value, "name"):
            return folded_at_spaces(name, value, self.linesep)
        return None


def _encoded(subject: str) -> bool:
    """Whether a subject goes out as encoded words: one not in ASCII, and one holding what
    reads as an encoded word (``=?``), as a player's name may, which a reader would decode
    into other words (a link, the computer's name) if it went out as written."""
    return not subject.isascii() or "=?" in subject


ASCII_HEADERS = AsciiHeaders() + SMTP


class Outgoing(Message):
    """A Flask-Mail message written out with its ASCII headers as they are (:class:`AsciiHeaders`).

    Flask-Mail encodes every sender's name, ``Split Mind`` as
    ``=?utf-8?q?Split_Mind?=``, and a subject that is not ASCII in encoded words
    too long for the line that starts with ``Subject:``: the standard library
    writes both instead, encoding only what is not ASCII. Its plain text goes
    ``format=flowed``, in lines that fit (:func:`flowed`).
    """

    def _mimetext(self, text: str | None, subtype: str = "plain") -> MIMEText:
        """A part of the message: the plain text one ``format=flowed`` (:func:`flowed`)."""
        if subtype != "plain" or text is None:
            return super()._mimetext(text, subtype)
        part = super()._mimetext(flowed(text), subtype)
        part.set_param("format", "flowed")
        return part

    def as_bytes(self) -> bytes:
        """The message as SMTP carries it."""
        message = self._message()
        if self.subject:
            # Stored as written (compat32 parses nothing), to be encoded by AsciiHeaders as it
            # goes out: the standard library's policies parse a value set, decoding whatever
            # in it reads as an encoded word.
            message.policy = compat32
            message.replace_header("Subject", self.subject)
        message.policy = ASCII_HEADERS  # headers set from now on are the standard library's
        sender = self.sender if isinstance(self.sender, str) else formataddr(self.sender)
        if parseaddr(sender)[1].isascii():  # Flask-Mail writes a domain that is not in IDNA
            message.replace_header("From", sender)
        return message.as_bytes()


BATCH = 20

# What says the database failed a pass: an error of its driver, or no connection left in the
# pool (not a DBAPIError: a thread of `flask serve` may hold the pool's connections).
DATABASE_ERRORS = (DBAPIError, PoolTimeout)


def _claim_due(now: datetime) -> OutboxMessage | None:
    """The next message due, or one left ``sending``, locked until the transaction ends.

    Other workers skip it. A message ``sending`` that no worker holds locked was
    left so by a worker killed or cut off from the database while it sent it.
    """
    return db.session.scalars(
        select(OutboxMessage)
        .where(
            OutboxMessage.status.in_(("queued", "sending")),
            OutboxMessage.next_attempt_at <= now,
        )
        .order_by(OutboxMessage.next_attempt_at, OutboxMessage.id)
        .limit(1)
        .with_for_update(skip_locked=True)
    ).first()


def _sending(message_id: int) -> OutboxMessage | None:
    """The claimed message, locked while it is sent; ``None`` if another worker took it over
    between the claim's commit and this lock (and sends it, or has)."""
    return db.session.scalars(
        select(OutboxMessage)
        .where(OutboxMessage.id == message_id, OutboxMessage.status == "sending")
        .with_for_update(skip_locked=True)
    ).first()


def deliver_batch(
    transport: Transport, size: int = BATCH, should_stop: Callable[[], bool] = lambda: False
) -> int:
    """Deliver up to ``size`` due messages, fewer once ``should_stop`` says so (it is asked
    before each); returns how many were handled.

    Each message takes two transactions. The first claims it under its row lock,
    writes it and marks it ``sending``: from its commit on, a newer email that
    replaces it (:func:`.outbox.queue`) is a new row, and a move never waits for
    the SMTP server. The second locks it again (no other worker takes it), sends
    it and commits the outcome at once. If the SMTP server becomes unreachable or
    refuses the session (:class:`ServerUnavailable`), the message in hand goes
    back to the queue as it was, and if the database fails it stays ``sending``
    (the next claim sends it); either error is raised so the caller can wait. A
    message the SMTP server took whose ``sent`` the database lost with it is
    marked sent first thing once the database is back (:data:`_HANDED_OVER`), not
    sent again.
    """
    outcomes: Counter[str] = Counter()
    try:
        if recorded := _record_handed_over():  # no count at all while there is none
            outcomes["sent"] += recorded
        for _ in range(size):
            if should_stop():
                break
            claimed: int | None = None
            try:
                # An error rolls back: the claim of a message left as it was ends.
                with transaction():
                    message = _claim_due(utcnow())
                    if message is None:
                        break
                    claimed = message.id
                    outcome = _write(message)
                    if outcome not in ("sending", "held"):
                        after_commit(partial(metrics.count_mail, message.status))
                if outcome == "sending":
                    with transaction():
                        message = _sending(claimed)
                        if message is None:
                            continue
                        outcome = _send(transport, message)
                        after_commit(partial(metrics.count_mail, message.status))
                    _HANDED_OVER.pop(claimed, None)  # its outcome is on its row
            except ServerUnavailable as exc:
                _put_back(claimed, f"not sent yet: the SMTP server was unavailable ({exc})")
                raise
            except DBAPIError as exc:
                if is_outage(exc) or claimed is None:
                    raise
                if claimed in _HANDED_OVER:  # it went out: what failed came after
                    outcome = "sent" if _record_handed_over() else "skipped"
                else:
                    outcome = (
                        "skipped" if _skipped_if_replaced(claimed) else _set_aside(claimed, exc)
                    )
            outcomes[outcome] += 1
    finally:
        if outcomes:
            log.info(
                "mail batch: %d sent, %d retried, %d failed, %d skipped",
                *(outcomes[outcome] for outcome in ("sent", "retried", "failed", "skipped")),
            )
    return outcomes.total()


# The messages this process handed to the SMTP server whose "sent" the database did not take
# (it went away at that moment), by id, with when they went: recorded before anything is
# claimed once it is back, so that the next claim does not send them again.
_HANDED_OVER: dict[int, datetime] = {}


def _record_handed_over() -> int:
    """Mark sent the messages of :data:`_HANDED_OVER` still ``sending``; returns how many.
    Raises while the database is unavailable: they are kept for the next try."""
    recorded = 0
    for message_id, sent_at in list(_HANDED_OVER.items()):
        with transaction():
            done = db.session.execute(
                update(OutboxMessage)
                .where(OutboxMessage.id == message_id, OutboxMessage.status == "sending")
                .values(
                    status="sent",
                    sent_at=sent_at,
                    attempts=OutboxMessage.attempts + 1,
                    last_error=None,
                    failed_at=None,
                )
            )
        del _HANDED_OVER[message_id]
        if done.rowcount:  # type: ignore[attr-defined]
            log.info("mail %s was sent before the database went away: recorded now", message_id)
            metrics.count_mail("sent")
            recorded += 1
    return recorded


def _set_aside(message_id: int, exc: DBAPIError) -> str:
    """Fail a message for good when the database refused its handling, though it is up.

    Left queued it would be claimed first again, fail the same way, and hold up
    every message behind it. The admins see it failed, and may queue it again.
    """
    log.error("mail %s set aside: the database refused its handling", message_id, exc_info=exc)
    with transaction():
        message = db.session.get(OutboxMessage, message_id, with_for_update=True)
        if message is None or message.status not in ("queued", "sending"):
            return "skipped"
        _give_up(message, f"the database refused it: {exc.orig}")
        after_commit(partial(metrics.count_mail, message.status))
    return "failed"


def _put_back(message_id: int | None, why: str) -> None:
    """Queue again a message the SMTP server could not take for want of a session, saying
    ``why`` on its row for the admins (no attempt of its own is counted)."""
    if message_id is None:
        return
    try:
        with transaction():
            message = _sending(message_id)
            if message is not None:
                message.last_error = _error_text(why)
                outbox.put_back(message)
    except IntegrityError:
        _skipped_if_replaced(message_id)


def _skipped_if_replaced(message_id: int) -> bool:
    """Skip the message if a newer email replaced it; whether it did.

    For a message the database refused to queue again: a newer email with its
    replace key was queued at the very moment it was put back, and the unique
    index of the queued ones kept the newer, which says more.
    """
    with transaction():
        message = _sending(message_id)
        if message is None or not outbox.skip_if_replaced(message):
            return False
        after_commit(partial(metrics.count_mail, message.status))
    return True


# How long a message waits when a change to its game is being made as the worker claims it.
GAME_CHANGING = timedelta(seconds=1)


def _write(message: OutboxMessage) -> str:
    """Write a claimed message and mark it ``sending``; returns ``sending``, or the outcome.

    The email is written now (:func:`.kinds.written`) and kept on the row, as it
    goes. A message already ``sending`` was written by the worker that left it
    so, and goes again as it was written then, unless a newer email replaced it
    (the player's move withdraws only a queued one) or its kind says it no longer
    matters.

    What it reads of its game to check and write it is one state of the game, a
    change to it waiting for the commit (:func:`.outbox.hold_game`): an email
    never says "your move" above the game after that move.

    ``skipped`` if its kind says it no longer matters, or that there is nothing
    to send (see :mod:`.kinds`); ``held``, still queued and due later, if its kind
    says it must wait, or a change to its game is being made. Raises what says the
    database is unavailable.
    Any other error while the message is checked or written (a kind no longer
    registered, say) is this message's failure, kept on its row for the admins,
    who may queue it again.
    """
    try:
        # Left sending by a worker that stopped, perhaps once sent: it goes again as written,
        # unless a newer email replaced it meanwhile or its kind says it no longer matters.
        left_sending = message.status == "sending"
        if left_sending and outbox.skip_if_replaced(message):
            return "skipped"
        kind = kinds.kind(message.kind)
        if not left_sending and not outbox.hold_game(message):
            # A change to its game is being made: the email is asked about after it.
            message.next_attempt_at = utcnow() + GAME_CHANGING
            return "held"
        if not kind.still_wanted(message):
            outbox.skip(message, kind.unwanted)
            return "skipped"
        if left_sending:
            return "sending"
        held_until = kind.held_until(message)
        if held_until is not None:
            message.next_attempt_at = held_until
            return "held"
        email = kinds.written(message)
    except DBAPIError:
        raise
    except Exception as exc:
        return _failed(message, exc)
    if email is None:
        outbox.skip(message, kind.unwritten)
        return "skipped"
    message.subject, message.text_body = email.subject, email.text
    message.html_body = email.html
    if email.headers:
        message.headers = with_headers(message.headers, email.headers)
    message.status = "sending"
    return "sending"


def _send(transport: Transport, message: OutboxMessage) -> str:
    """Send a message marked ``sending`` and record the outcome on its row; returns which.

    ``sent``, ``retried`` (a temporary refusal, or the connection lost while
    sending it: it is queued again), ``failed``, or ``skipped`` (refused for now
    while a newer email replaced it). Raises what says the SMTP server
    (:class:`ServerUnavailable`: no session could be opened) or the database is
    unavailable. Any other error while the message is written out or sent (an
    address that needs SMTPUTF8, say) is this message's failure.
    """
    try:
        transport.send(message)
        # Gone: if the database loses its row's "sent" below, it is recorded once it is back.
        _HANDED_OVER[message.id] = utcnow()
    except (ServerUnavailable, DBAPIError):
        raise
    except smtplib.SMTPSenderRefused as exc:
        code, said = exc.smtp_code, _text(exc.smtp_error)
        if refuses_the_service(code, said):
            raise ServerUnavailable(f"sender refused: {code} {said}") from exc
        # The sender (or the message's size) refused, not the recipient: no bounce is theirs.
        return _failed_attempt(message, f"sender refused: {code} {said}", 400 <= code < 500)
    except smtplib.SMTPResponseException as exc:
        return _refused(message, exc.smtp_code, _text(exc.smtp_error), after_data=True)
    except smtplib.SMTPRecipientsRefused as exc:
        code, reply = next(iter(exc.recipients.values()))
        return _refused(message, code, _text(reply))
    except Exception as exc:
        if _connection_lost(exc):
            return _failed_attempt(message, f"connection lost: {_describe(exc)}", temporary=True)
        return _failed(message, exc)
    message.attempts += 1
    message.status = "sent"
    message.sent_at = utcnow()
    message.last_error = None
    message.failed_at = None
    addresses.clear_bounce(message.recipient)
    return "sent"


def _failed(message: OutboxMessage, exc: Exception) -> str:
    """Fail a message for an error of its own, with the reason for the admins."""
    log.warning("mail %s cannot be sent", message.id, exc_info=exc)
    _give_up(message, f"{type(exc).__name__}: {exc}")
    return "failed"


def _give_up(message: OutboxMessage, error: str) -> None:
    """Count one more attempt and fail the message for good, keeping the error for the admins
    (with no link in it: the dashboard shows it)."""
    message.attempts += 1
    message.status = "failed"
    message.failed_at = utcnow()
    message.last_error = _error_text(error)


def _error_text(error: str) -> str:
    """An error as a message's row keeps it: storable, without links or tags, at most 1,000
    characters."""
    return redact(storable(error))[:1000]


# What a server says when it will not take mail from this service for anyone, rather than
# refusing one recipient: relaying denied (the service not allowed to send through it), or a
# login wanted (530, or the enhanced codes 5.7.0, 5.7.8 and 5.7.9 of RFC 3463 and 4954).
# A 421 closes the session, whatever command it answers (RFC 5321): the server going down,
# or throttling the service.
REFUSES_THE_SERVICE = re.compile(r"\brelay|^5\.7\.[089]\b", re.IGNORECASE)
SESSION_CLOSED = 421
# An enhanced code of addressing status (X.1.XXX, RFC 3463): a recipient's refusal is that
# address's, whatever the words after it say ("User unknown in relay recipient table",
# Postfix's for a domain it relays for).
ADDRESS_STATUS = re.compile(r"^[45]\.1\.\d{1,3}\b")
# An enhanced code of addressing or mailbox status (X.1.XXX, X.2.XXX): the one refusal at the
# end of the data that is the address's (its mailbox full, say), the recipient having been
# taken before the content; any other is the message's (its content, a filter's verdict).
RECIPIENT_STATUS = re.compile(r"^[45]\.[12]\.\d{1,3}\b")


def refuses_the_service(code: int, reply: str) -> bool:
    """Whether a refusal of a recipient is the server refusing the service itself (see
    :data:`REFUSES_THE_SERVICE`): a setting to fix, every message waiting for it, not a
    bounce of each address in turn."""
    if code in (SESSION_CLOSED, 530):
        return True
    return code >= 500 and REFUSES_THE_SERVICE.search(reply) is not None


def _refused(message: OutboxMessage, code: int, reply: str, after_data: bool = False) -> str:
    """Count the server's refusal of a message; a permanent one (5xx) marks the address as
    bouncing, for the dashboard, except one ``after_data`` whose status is not the
    recipient's (:data:`RECIPIENT_STATUS`): content refused is no address to correct. One
    that refuses the service itself (:func:`refuses_the_service`) is the server's:
    :class:`ServerUnavailable`, and the message waits, as every other does, with no
    attempt counted; never one with an addressing status (:data:`ADDRESS_STATUS`), nor one
    ``after_data`` (the server took the sender and the recipient: it relays for the
    service, logged in), each of which is the message's own and, taken for the server's,
    would hold up the whole queue."""
    service = not after_data and not ADDRESS_STATUS.match(reply)
    if service and refuses_the_service(code, reply):
        raise ServerUnavailable(f"refused: {code} {reply}")
    temporary = 400 <= code < 500
    if code >= 500 and (not after_data or RECIPIENT_STATUS.match(reply)):
        addresses.record_bounce(message.recipient, code, reply)
    return _failed_attempt(message, f"{code} {reply}", temporary)


def _connection_lost(exc: Exception) -> bool:
    """Whether the connection dropped or timed out under a message, rather than refused it.

    smtplib's errors are OSErrors too; of them, only ``SMTPServerDisconnected`` says so.
    """
    if isinstance(exc, smtplib.SMTPException):
        return isinstance(exc, smtplib.SMTPServerDisconnected)
    return isinstance(exc, OSError)


def _failed_attempt(message: OutboxMessage, error: str, temporary: bool) -> str:
    """Count a failed attempt: tried again later if ``temporary`` and attempts are left."""
    message.attempts += 1
    # A refusal may quote the email's link (a URL filter's): it is shown on the dashboard.
    message.last_error = _error_text(error)
    log.warning("mail %s: %s", message.id, without_addresses(error))
    if temporary and message.attempts < MAX_ATTEMPTS:
        message.next_attempt_at = utcnow() + timedelta(seconds=retry_delay(message.attempts))
        outbox.put_back(message)
        return "retried" if message.status == "queued" else "skipped"
    message.status = "failed"
    message.failed_at = utcnow()
    return "failed"


def retry_delay(attempts: int) -> float:
    """Seconds to wait after the ``attempts``-th temporary failure; a test's app config may
    scale them (``MAIL_RETRY_SCALE``, no setting of the environment)."""
    base = RETRY_DELAYS[min(attempts, len(RETRY_DELAYS)) - 1]
    return base * current_app.config.get("MAIL_RETRY_SCALE", 1.0)


def drain(
    transport: Transport | None = None,
    *,
    should_stop: Callable[[], bool] = lambda: False,
    after_batch: Callable[[], object] = lambda: None,
) -> int:
    """Deliver every message that is due now, until ``should_stop`` says so (between two
    messages), calling ``after_batch`` after each batch; returns how many were handled."""
    own = transport is None
    transport = transport or Transport()
    handled = 0
    try:
        while batch := deliver_batch(transport, should_stop=should_stop):
            handled += batch
            after_batch()
    finally:
        if own:
            transport.close()
    return handled


def run(
    *,
    once: bool = False,
    poll: float = 2.0,
    sweep_every: float = 60.0,
    sweep: Callable[[], object] | None = None,
    moves: Callable[[], int] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """The worker loop: make the computer's ``moves``, drain the queue, run the deadline
    sweep now and then, wait, repeat.

    ``moves`` returns how many it made: after a pass that made some, the next one
    starts at once, as a pass makes only a few seconds of them and more may be due.
    They are made between the batches of mail too, so that a long queue holds none
    back.
    An SMTP server that cannot be reached holds back the mail alone: it is tried again
    after a growing pause, while every pass still makes the computer's moves (a person
    playing the computer on the page needs no email). ``clock`` tells when (monotonic).

    With ``once``, make the moves, drain the queue, open an SMTP session if sending opened
    none (so that an empty queue checks the server too) and return; a database or SMTP
    server that cannot be reached, or refuses the session, is raised instead of waited
    for. Otherwise outages are logged and waited out with a growing pause, and so is their
    end. Returns how many messages were handled (sent, skipped, failed or put off for a
    retry).
    """
    log.info("mail worker started: %s, batch %d, poll %gs", _settings(), BATCH, poll)
    transport = Transport()
    pause = mail_pause = poll
    mail_at = 0.0  # when the mail is tried next: later while the SMTP server is down
    last_sweep = 0.0
    handled = 0
    moved = 0
    down: dict[str, float] = {}  # what is unavailable, since when
    try:
        while not should_stop():
            try:
                # Alive, whatever the pass then meets: an SMTP server down is said on the
                # messages it holds back, a long queue by the beats between its batches.
                beat()
                if sweep is not None and clock() - last_sweep >= sweep_every:
                    last_sweep = clock()
                    _sweep(sweep)
                moved = _moves(moves) if moves is not None else 0

                def between_batches() -> None:
                    # A long queue, or a slow SMTP server, holds back no computer's move
                    # longer than a batch takes.
                    nonlocal moved
                    beat()
                    if moves is not None:
                        moved += _moves(moves)

                if clock() >= mail_at:
                    try:
                        handled += drain(
                            transport, should_stop=should_stop, after_batch=between_batches
                        )
                        if once:
                            # A check even with nothing to send: the server answers, takes
                            # the login.
                            transport.open()
                    except (smtplib.SMTPException, OSError) as exc:
                        if once:
                            raise
                        down.setdefault("SMTP server", clock())
                        reason = outage_reason(exc)
                        log.warning(
                            "SMTP server unavailable, waiting %.0fs: %s", mail_pause, reason
                        )
                        mail_at = clock() + mail_pause
                        mail_pause = min(mail_pause * 2, 60)
                    else:
                        # Back only once the server answered: a drain that found nothing to
                        # send (the message held back was withdrawn meanwhile) asked nothing.
                        if transport.local or transport.connection is not None:
                            mail_pause, mail_at = poll, 0.0
                            _back("SMTP server", down, clock())
            except DATABASE_ERRORS as exc:
                db.session.rollback()
                if once:
                    raise
                down.setdefault("database", clock())
                app = current_app._get_current_object()  # type: ignore[attr-defined]
                said = schema.behind(app) if schema.missing(getattr(exc, "orig", None)) else None
                if is_outage(exc):
                    reason = outage_reason(exc)
                    log.warning("database unavailable, waiting %.0fs: %s", pause, reason)
                elif said:
                    log.error("worker pass failed, waiting %.0fs: %s", pause, said)
                else:
                    log.error("worker pass failed, waiting %.0fs", pause, exc_info=exc)
            else:
                if once:
                    return handled
                _back("database", down, clock())
                pause = poll
                if not moved:
                    _sleep(pause, should_stop)
                continue
            # The pause the log line said, then a longer one each time, up to a minute.
            _sleep(pause, should_stop)
            pause = min(pause * 2, 60)
        log.info("mail worker stopped: %d message(s) handled", handled)
    finally:
        transport.close()
        db.session.remove()
    return handled


def _back(what: str, down: dict[str, float], now: float) -> None:
    """Log that ``what`` is available again, if it was down (``down``: since when)."""
    since = down.pop(what, None)
    if since is not None:
        log.info("%s available again after %.0fs", what, now - since)


def beat(
    heartbeat: type[
        WorkerHeartbeat | ImapReaderHeartbeat | InboundServerHeartbeat
    ] = WorkerHeartbeat,
) -> None:
    """Write that this machine's worker has just made a pass, or another long-running
    process (``heartbeat``) its own sign of life (its own transaction)."""
    now = {"host": socket.gethostname()[:255], "pid": os.getpid(), "beat_at": utcnow()}
    with transaction():
        db.session.execute(
            upsert(heartbeat).values(now).on_conflict_do_update(index_elements=["host"], set_=now)
        )


def _settings() -> str:
    """Where the worker sends mail, in words for the log: never the password."""
    if current_app.config["LOCAL_MAILBOX"]:
        return "the local mailbox"
    mail = current_app.extensions["mail"]
    return (
        f"SMTP server {mail.server}:{mail.port}, STARTTLS {'on' if mail.use_tls else 'off'}, "
        f"SSL {'on' if mail.use_ssl else 'off'}, login {mail.username or 'none'}, "
        f"timeout {current_app.config['MAIL_TIMEOUT']:g}s"
    )


def _sweep(sweep: Callable[[], object]) -> None:
    """Run the deadline sweep; a fault in it is logged, and the mail goes on."""
    try:
        sweep()
    except DATABASE_ERRORS:
        raise
    except Exception:
        db.session.rollback()
        log.exception("the deadline sweep failed; the mail goes on")


def _moves(moves: Callable[[], int]) -> int:
    """Make the computer's moves, and say how many; a fault in them is logged, and the mail
    goes on."""
    try:
        return moves()
    except DATABASE_ERRORS:
        raise
    except Exception:
        db.session.rollback()
        log.exception("the computer's moves failed; the mail goes on")
        return 0


def _sleep(seconds: float, should_stop: Callable[[], bool]) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end and not should_stop():
        time.sleep(min(0.2, end - time.monotonic()))


def init_app(app: Flask) -> None:
    """Bind Flask-Mail to the app, with bodies that respect SMTP's line length."""
    Mail(app)
    # Flask-Mail sends UTF-8 bodies unencoded, so an HTML line over 998 bytes is
    # refused by a strict server (RFC 5321): quoted-printable wraps them.
    charset.add_charset("utf-8", charset.SHORTEST, charset.QP, "utf-8")
