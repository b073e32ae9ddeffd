"""Queue emails in the outbox, inside the caller's transaction, to be written when sent."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from email.utils import make_msgid, parseaddr
from functools import cache
from typing import Any, cast

from flask import current_app
from sqlalchemy import Table, Update, bindparam, case, delete, exists, select, text, update
from sqlalchemy.dialects import postgresql, sqlite

from ..models import OPEN_STATUSES, Game, OutboxMessage, Player, db, upsert, utcnow
from ..writes import Write
from . import kinds
from .compose import Email, with_headers

log = logging.getLogger(__name__)


# Every email the service sends is automatic (RFC 3834): vacation responders stay quiet.
AUTO_SUBMITTED = {"Auto-Submitted": "auto-generated"}


def message_domain() -> str:
    """The domain of the service's Message-IDs: the sender's."""
    return _domain_of(current_app.config["MAIL_DEFAULT_SENDER"])


@cache
def _domain_of(sender: str) -> str:
    """The domain of a sender's address, worked out once: each email of a move asks for it
    twice (its Message-ID, its thread's), and parsing an address costs more than queueing."""
    return parseaddr(sender)[1].rpartition("@")[2] or "splitmind.invalid"


def queue(email: Email | None = None, **what: Any) -> None:
    """Add an email to the outbox; it is sent only if the caller's transaction commits.

    Without ``email``, the worker writes it when it sends it, with the kind's
    writer (:func:`.kinds.written`), from its player and game and the JSON
    ``params``: a move pays for no template, and the links in the email are
    those valid when it goes. With ``email``, it goes as written now, with the
    headers its writer set (:attr:`.compose.Email.headers`, its language).
    ``headers`` go out with it as they are.

    An email of a kind that replaces a queued one (a turn email) replaces the
    player's unsent one of that kind, so a player never has two waiting: the
    newest says everything the older one did. (The player's own move withdraws
    their turn email, see :func:`withdrawal`; one is still here if an admin
    queued it again.) An email a worker is sending is no longer queued: the new
    one is another email, and queuing it does not wait for the SMTP server.
    ``message_id`` fixes the Message-ID (the first email of a game's thread).
    The row is written at once, and the session holds no object of it: read it
    back with a query. Raises ``LookupError`` for a kind that is not registered
    (:mod:`.kinds`). ``what`` are the keywords of :func:`queued`, which makes the statement.
    """
    write = queued(email, **what)
    db.session.execute(write.statement, write.params)


def queued(
    email: Email | None = None,
    *,
    kind: str,
    recipient: str,
    game: Game | None = None,
    player: Player | None = None,
    headers: dict[str, Any] | None = None,
    message_id: str | None = None,
    params: dict[str, Any] | None = None,
    prefix: str = "",
) -> Write:
    """The one statement of :func:`queue`, to be written with others (a move writes its
    emails with its own writes, :func:`service.games._record`), its parameters named
    ``prefix`` and the column's name."""
    entry = kinds.kind(kind)
    if email is None and entry.write is None:
        raise ValueError(f"a {kind} email has no writer: queue it written")
    # A replaced email is a new message: the old one may already have gone out once
    # (a worker killed before its commit), and a receiving server that de-duplicates
    # by Message-ID must not drop the new content.
    now = utcnow()
    content = {
        "message_id": message_id or make_msgid(domain=message_domain()),
        "recipient": recipient,
        "game_id": game.id if game is not None else None,
        "player_id": player.id if player is not None else None,
        "subject": email.subject if email is not None else None,
        "text_body": email.text if email is not None else None,
        "html_body": email.html if email is not None else None,
        "params": (params or {}) if email is None else None,
        "headers": {
            **AUTO_SUBMITTED,
            **with_headers({}, email.headers if email is not None else {}),
            **(headers or {}),
        },
        "status": "queued",
        "attempts": 0,
        "last_error": None,
        "next_attempt_at": now,
        "created_at": now,
    }
    key = _replace_key(entry, player.id if player is not None else None)
    dialect = db.session.get_bind().dialect.name
    statement = _queue_statement(dialect, tuple(content), key is not None, prefix)
    values = {"kind": kind, "replace_key": key, **content}
    return Write(statement, {f"{prefix}{name}": value for name, value in values.items()})


@cache
def _queue_statement(
    dialect: str, columns: tuple[str, ...], replaces: bool, prefix: str
) -> postgresql.Insert | sqlite.Insert:
    """The statement of :func:`queue`, built once for each database, columns, whether the
    email replaces a queued one and its parameters' prefix: building it costs more than
    running it.

    Core, not ORM-enabled: the ORM's insert, returning the row as an object, cost a move
    some 650 of its 5,500 function calls (``bench/calls.py``), for an object no caller
    used. No caller has loaded the email replaced either: the session is not synchronised.
    Inline: nor does any caller read the row's id, and returning it cost each email queued
    some 30 calls.

    An email that replaces is an upsert on ``uq_outbox_queued_replace_key``: the player's
    unsent one of its kind becomes it, or it is new. A worker marks an email ``sending``
    and commits before it talks to the SMTP server, so the index no longer covers it then,
    and the upsert inserts a new one; a worker claiming the email holds its row lock only
    while it writes it: the upsert waits for that, then finds it ``sending`` (and inserts).
    Two requests queueing the same key at once do not collide: the second rewrites the
    first's row.
    """
    table = cast(Table, OutboxMessage.__table__)
    insert = (
        upsert(table, dialect)
        .values({name: bindparam(f"{prefix}{name}") for name in ("kind", "replace_key", *columns)})
        .inline()
    )
    if not replaces:
        return insert
    return insert.on_conflict_do_update(
        index_elements=[table.c.replace_key],
        index_where=text("status = 'queued'"),
        # The row keeps when it was first queued: the mail page lists it by its id, newest
        # first, and finds it on the day it was queued, as it did its predecessor.
        set_={column: insert.excluded[column] for column in columns if column != "created_at"},
    )


def _replace_key(kind: kinds.Kind, player_id: int | None) -> str | None:
    """What an email shares with the unsent one it replaces: its kind and player.

    ``None`` for a kind that replaces none, and for an email to no player.
    """
    if not kind.replaces_queued or player_id is None:
        return None
    return f"{kind.name}:{player_id}"


def _queued(key: str) -> OutboxMessage | None:
    """The unsent email with this replace key, locked until the caller's transaction ends."""
    return db.session.scalars(
        select(OutboxMessage)
        .where(OutboxMessage.replace_key == key, OutboxMessage.status == "queued")
        .with_for_update()
    ).first()


def to_go(kind: str, recipient: str) -> OutboxMessage | None:
    """The oldest email of ``kind`` to ``recipient`` still to go: queued, or being sent (a
    worker cut off from the database sends it once it is back)."""
    return db.session.scalars(
        select(OutboxMessage)
        .where(
            OutboxMessage.kind == kind,
            OutboxMessage.recipient == recipient,
            OutboxMessage.status.in_(("queued", "sending")),
        )
        .order_by(OutboxMessage.id)
        .limit(1)
    ).first()


def withdraw(kind: str, player_id: int) -> None:
    """Withdraw the player's unsent email of ``kind`` (a kind that replaces): it is out of date.

    Inside the caller's transaction. An email a worker has claimed (locked while it
    is written, then ``sending``) is too late to stop: it is passed over rather than
    waited for. Raises ``ValueError`` for a kind that replaces none.
    """
    write = withdrawal(kind, player_id)
    db.session.execute(write.statement, write.params)


def withdrawal(kind: str, player_id: int) -> Write:
    """The one statement of :func:`withdraw`, to be written with others: a move withdraws the
    mover's turn email with its own writes (:func:`service.games._record`), whether an email
    waited or not, and pays no round trip of its own for it."""
    key = _replace_key(kinds.kind(kind), player_id)
    if key is None:
        raise ValueError(f"a {kind} email does not replace an unsent one")
    return Write(_withdraw_statement(), {"withdrawn_key": key})


@cache
def _withdraw_statement() -> Update:
    """The statement of :func:`withdraw`, built once: building it costs more than running it.

    Core, not ORM-enabled: the session is not synchronised, as no caller has loaded the
    email it withdraws in the same transaction.
    """
    note = skip_note(WITHDRAWN)
    table = cast(Table, OutboxMessage.__table__)
    return (
        update(table)
        .where(
            table.c.id.in_(
                select(table.c.id)
                .where(
                    table.c.replace_key == bindparam("withdrawn_key"), table.c.status == "queued"
                )
                .with_for_update(skip_locked=True)
            )
        )
        .values(
            status="skipped",
            last_error=case(
                (table.c.last_error.is_(None), note),
                else_=note + " (after: " + table.c.last_error + ")",
            ),
        )
    )


def release(kind: str, player_id: int) -> bool:
    """Make the player's unsent email of ``kind``, held back by its kind, due now; whether
    there was one. Inside the caller's transaction.

    An email a worker has claimed is waited for, not passed over as :func:`withdraw`
    passes it: the worker holds its claim for a moment (it writes the email, or holds it
    back a second while the game changes), and an email released takes the place of
    another (:func:`service.notify.moved`), which one passed over would not."""
    table = cast(Table, OutboxMessage.__table__)
    waiting = (
        select(table.c.id)
        .where(table.c.kind == kind, table.c.player_id == player_id, table.c.status == "queued")
        .with_for_update()
    )
    made_due = (
        update(table)
        .where(table.c.id.in_(waiting))
        .values(next_attempt_at=utcnow())
        .returning(table.c.id)
    )
    return db.session.execute(made_due).first() is not None


def hold_game(message: OutboxMessage) -> bool:
    """Lock the row of the message's game against change until the transaction ends (a
    shared lock), unless a change to the game holds it now: whether it is held. A message
    about no game, or about one no longer there, holds none and is held.

    What the worker then reads of the game to decide whether the email is still wanted
    and to write it is one state of the game: a move made meanwhile waits for the
    worker's commit, then withdraws the message or finds it on its way, written as of
    the game before it. A move holding the game is not waited for: the worker waits on
    nothing a move may wait on in turn (the move's email may replace this one).
    """
    if message.game_id is None:
        return True
    held = db.session.scalar(
        select(Game.id)
        .where(Game.id == message.game_id)
        .with_for_update(read=True, skip_locked=True)
    )
    return held is not None or db.session.get(Game, message.game_id) is None


# Why a message was skipped, as its row keeps it for the admins (see :func:`skip`).
WITHDRAWN = "the player moved before it went"
REPLACED = "a newer email of its kind to the player replaced it"


def skip_note(why: str) -> str:
    """What a skipped message's ``last_error`` says: why it was not sent."""
    return f"skipped: {why}"


def skip(message: OutboxMessage, why: str) -> None:
    """Leave a message unsent for good, saying why on its row (the dashboard shows it), after
    the error of an earlier attempt if it had one."""
    message.status = "skipped"
    earlier = f" (after: {message.last_error})" if message.last_error else ""
    message.last_error = (skip_note(why) + earlier)[:1000]


def put_back(message: OutboxMessage) -> None:
    """Queue again a message a worker was sending, or skip it if a newer one replaced it.

    For a message the SMTP server did not take (to be tried again, or not
    reached at all). While it was being sent, a newer email of its kind to its
    player may have been queued (:func:`queue`): that one says more, and a
    player never has two waiting.
    """
    # A newer one queued at this very moment, not committed yet, is not seen here: the
    # unique index then refuses this one, and the worker skips it (:func:`replaced`).
    if not skip_if_replaced(message):
        message.status = "queued"


def skip_if_replaced(message: OutboxMessage) -> bool:
    """Skip the message if a newer email of its kind replaced it (:func:`replaced`); whether
    it did."""
    if not replaced(message):
        return False
    skip(message, REPLACED)
    return True


def replaced(message: OutboxMessage) -> bool:
    """Whether a newer email of a kind that replaces is queued in place of ``message``."""
    if message.replace_key is None:
        return False
    queued = _queued(message.replace_key)
    return queued is not None and queued.id != message.id


def _locked_in(status: str, message_id: int) -> OutboxMessage:
    """The message, read afresh and locked until the transaction ends, if it is in ``status``:
    ``LookupError`` for no such message, ``ValueError`` for one in another status."""
    message = db.session.get(
        OutboxMessage, message_id, with_for_update=True, populate_existing=True
    )
    if message is None:
        raise LookupError(f"no message {message_id}")
    if message.status != status:
        raise ValueError(f"message {message_id} is {message.status}, not {status}")
    return message


def withdraw_queued(message_id: int, why: str) -> OutboxMessage:
    """Leave a queued message unsent for good, saying ``why`` on its row (an admin asked).

    Raises ``LookupError`` for no such message, ``ValueError`` for one that is not
    queued: sent, failed, skipped, or being sent now. The row is locked as it is
    read: a worker writing the message holds its lock until it has marked it
    ``sending``, and this waits for that and then refuses.
    """
    message = _locked_in("queued", message_id)
    skip(message, why)
    db.session.flush()
    log.info("mail %d withdrawn", message.id)
    return message


def try_now(message_id: int) -> OutboxMessage:
    """Have a queued message tried at the worker's next pass, not at its next attempt's time
    (an admin asked: what refused it for now is mended), its attempts kept.

    Raises ``LookupError`` for no such message, ``ValueError`` for one that is not
    queued (see :func:`withdraw_queued`).
    """
    message = _locked_in("queued", message_id)
    message.next_attempt_at = min(message.next_attempt_at, utcnow())
    db.session.flush()
    log.info("mail %d to be tried now", message.id)
    return message


def requeue(message_id: int) -> OutboxMessage:
    """Put a failed message back in the queue, with a fresh count of attempts.

    Raises ``LookupError`` for no such message, ``ValueError`` for one that did
    not fail, or for one that a newer email of its kind to its player replaces
    (a turn email: the newer says more, and a player never has two waiting).
    The row is locked as it is read: of two requeues at once (a double click, two
    admins), the second sees the first's and is refused, rather than putting back a
    message the worker has sent since.
    """
    message = _locked_in("failed", message_id)
    if message.replace_key is not None and _queued(message.replace_key) is not None:
        raise ValueError(f"A newer {message.kind} email for this player is already queued.")
    message.status = "queued"
    message.attempts = 0
    message.next_attempt_at = utcnow()
    db.session.flush()
    log.info("mail %d queued again", message.id)
    return message


# The emails the worker is done with: sent, skipped, or failed for good.
DONE = ("sent", "skipped", "failed")
# The most emails one sweep deletes: a backlog (the first sweep after an upgrade, or after a
# long pause) goes a batch a sweep, each statement well within the statement timeout.
PRUNED_AT_ONCE = 1000


def prune(now: datetime, days: int) -> int:
    """Delete the emails done with (:data:`DONE`) that were queued more than ``days`` days
    before ``now``, at most :data:`PRUNED_AT_ONCE`; how many. ``days`` 0 keeps them all.

    A written email holds its recipient's links, credentials to their games: kept
    forever, a copy of the database would open every game. The emails of a game
    still in play stay while it lasts: a reply read is told from the copies of
    them it quotes (:class:`service.replies.inbound.OurText`). A failure re-queued
    by an admin is queued again, no longer done with. The audit trail's entries
    on a message deleted keep their note (PostgreSQL sets their message to NULL).
    """
    if not days:
        return 0
    in_play = exists().where(Game.id == OutboxMessage.game_id, Game.status.in_(OPEN_STATUSES))
    done_with = (
        OutboxMessage.created_at < now - timedelta(days=days),
        OutboxMessage.status.in_(DONE),
    )
    old = select(OutboxMessage.id).where(*done_with, ~in_play).limit(PRUNED_AT_ONCE)
    # Said again of the row deleted: a message requeued meanwhile is waited for, then read
    # again as it is now (PostgreSQL checks again only the conditions on the row it deletes).
    deleted = db.session.execute(
        delete(OutboxMessage).where(OutboxMessage.id.in_(old.scalar_subquery()), *done_with)
    )
    return int(deleted.rowcount or 0)  # type: ignore[attr-defined]
