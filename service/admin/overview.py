"""The dashboard's landing page: what needs an operator's attention now.

Games stalled for days, mail that failed today, the outbox's most overdue
message, whether the mail worker is passing and the reply readers that ran are
alive, addresses that bounce, games whose deadline is near, and games whose
computer move is late. Each is a small query on an index; the page is read fresh
on every visit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Select, exists, func, select
from sqlalchemy.orm import defer, selectinload

from ..computer import late_before, owes_since
from ..models import (
    Address,
    Game,
    Heartbeat,
    ImapReaderHeartbeat,
    InboundServerHeartbeat,
    OutboxMessage,
    Player,
    WorkerHeartbeat,
    db,
)

# A worker passes every few seconds; one silent for this long is shown as down. So is a
# reply reader, which writes its sign of life every few seconds too.
WORKER_DOWN_AFTER = timedelta(minutes=5)
# How many games or addresses each part lists (the lists link to the rest).
SHOWN = 20
# Stalled games are counted up to this many: past it the page says "more than", and the
# count costs the same however many games are stalled (the games list has them all).
COUNTED_UP_TO = 1000


@dataclass(frozen=True)
class Worker:
    """A mail worker's last pass, and whether that is recent enough to call it up."""

    host: str
    pid: int
    beat_at: datetime
    up: bool


@dataclass(frozen=True)
class Reader:
    """The last sign of life of one kind of reply reader: what the page calls it, and the id
    of its line."""

    label: str
    element_id: str
    last: Worker


@dataclass(frozen=True)
class Overview:
    """What the landing page shows; ``stalled_days`` and ``near_hours`` are its settings."""

    stalled_days: int
    stalled: list[Game]
    stalled_count: int
    today: date  # in UTC, the day failed_today counts
    failed_today: int
    queued: int
    most_overdue: OutboxMessage | None  # queued and due longest ago: how far the worker is behind
    workers: list[Worker]
    readers: list[Reader]  # each kind that has run
    bouncing: list[Address]
    bouncing_count: int
    near_hours: int
    near_deadline: list[Game]
    near_count: int
    computer_late: list[Game]  # the computer owes a move past its delay and margin
    computer_late_count: int

    @property
    def computer_late_total(self) -> str:
        """How many games wait for a late move of the computer, as the page says it."""
        return said(self.computer_late_count)

    @property
    def near_total(self) -> str:
        """How many games have a deadline that near, as the page says it."""
        return said(self.near_count)

    @property
    def stalled_total(self) -> str:
        """How many games are stalled, as the page says it."""
        return said(self.stalled_count)

    @property
    def bouncing_total(self) -> str:
        """How many addresses in play bounce, as the page says it."""
        return said(self.bouncing_count)

    @property
    def worker_up(self) -> bool:
        """Whether any worker passed lately."""
        return any(worker.up for worker in self.workers)


# The reply readers' heartbeats, with what the page calls each and the id of its line: a
# site reads replies with one kind, or none; only a kind that has run is shown.
READERS: tuple[tuple[str, str, type[InboundServerHeartbeat | ImapReaderHeartbeat]], ...] = (
    ("Reply server (mail inbound)", "inbound-server-status", InboundServerHeartbeat),
    ("IMAP reader (mail fetch)", "imap-reader-status", ImapReaderHeartbeat),
)


def _alive(row: Heartbeat, now: datetime) -> Worker:
    """A process's last sign of life, up if it is recent."""
    return Worker(row.host, row.pid, row.beat_at, now - row.beat_at < WORKER_DOWN_AFTER)


def _readers(now: datetime) -> list[Reader]:
    """The last sign of life of each kind of reply reader that has run."""
    found: list[Reader] = []
    for label, element_id, heartbeat in READERS:
        latest = select(heartbeat).order_by(heartbeat.beat_at.desc()).limit(1)
        row = db.session.scalars(latest).first()
        if isinstance(row, Heartbeat):  # None until one has run
            found.append(Reader(label, element_id, _alive(row, now)))
    return found


def _games() -> Select[Any]:
    return select(Game).options(defer(Game.state), selectinload(Game.players))


def overview(now: datetime, *, stalled_days: int = 7, near_hours: int = 24) -> Overview:
    """What needs attention at ``now``: games with no move for ``stalled_days`` days, games
    whose deadline falls within ``near_hours`` hours, and games whose computer move is late
    (:func:`service.computer.late_from`: no mail worker is making it)."""
    stalled_since = now - timedelta(days=stalled_days)
    stalled = (Game.status == "active", Game.updated_at < stalled_since)
    day_start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    queued = (OutboxMessage.status == "queued",)
    bouncing = (Address.bounced_at.is_not(None), _seated_in_open_game())
    near = (
        Game.status == "active",
        Game.deadline.is_not(None),
        Game.deadline <= now + timedelta(hours=near_hours),
    )
    # The move owed for longest is the game's that changed longest ago.
    computer_late = (exists().where(Player.game_id == Game.id, *owes_since(late_before(now))),)
    workers = db.session.scalars(select(WorkerHeartbeat).order_by(WorkerHeartbeat.beat_at.desc()))
    return Overview(
        stalled_days=stalled_days,
        stalled=list(
            db.session.scalars(_games().where(*stalled).order_by(Game.updated_at).limit(SHOWN))
        ),
        stalled_count=_counted(select(Game.id).where(*stalled)),
        today=day_start.date(),
        failed_today=db.session.scalar(
            select(func.count()).where(
                OutboxMessage.status == "failed", OutboxMessage.failed_at >= day_start
            )
        )
        or 0,
        queued=db.session.scalar(select(func.count()).where(*queued)) or 0,
        most_overdue=db.session.scalars(
            select(OutboxMessage)
            .options(defer(OutboxMessage.text_body), defer(OutboxMessage.html_body))
            .where(*queued, OutboxMessage.next_attempt_at <= now)
            .order_by(OutboxMessage.next_attempt_at, OutboxMessage.id)
            .limit(1)
        ).first(),
        workers=[_alive(row, now) for row in workers],
        readers=_readers(now),
        bouncing=list(
            db.session.scalars(
                select(Address).where(*bouncing).order_by(Address.bounced_at.desc()).limit(SHOWN)
            )
        ),
        bouncing_count=_counted(select(Address.email).where(*bouncing)),
        near_hours=near_hours,
        near_deadline=list(
            db.session.scalars(_games().where(*near).order_by(Game.deadline, Game.id).limit(SHOWN))
        ),
        near_count=_counted(select(Game.id).where(*near)),
        computer_late=list(
            db.session.scalars(
                _games().where(*computer_late).order_by(Game.updated_at, Game.id).limit(SHOWN)
            )
        ),
        computer_late_count=_counted(select(Game.id).where(*computer_late)),
    )


def said(count: int) -> str:
    """A count of :func:`_counted` as the page says it: ``1,204``, or ``more than 1,000``."""
    return f"more than {COUNTED_UP_TO:,}" if count > COUNTED_UP_TO else f"{count:,}"


def _counted(rows: Select[Any]) -> int:
    """How many rows ``rows`` gives, counted up to one more than :data:`COUNTED_UP_TO`: a
    count that reads an index entry for each row stays bounded."""
    bounded = rows.limit(COUNTED_UP_TO + 1).subquery()
    return db.session.scalar(select(func.count()).select_from(bounded)) or 0


def _seated_in_open_game() -> ColumnElement[bool]:
    """Whether the address plays a seat of a game in play: a bounce an admin can mend, by
    correcting the seat's address. One no seat in play holds is history (a game waiting for
    its players sends its invitee nothing an admin can resend)."""
    return exists().where(
        Player.email == Address.email, Player.game_id == Game.id, Game.status == "active"
    )
