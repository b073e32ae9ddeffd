"""The games and mail lists: filters, counts, and seek pagination.

A page is found by seeking past the last row shown, on an index over
(sort key, id), never by counting rows off with OFFSET: the 1,000th page
costs what the first does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Generic, TypeVar

from sqlalchemy import (
    ColumnElement,
    ColumnExpressionArgument,
    Select,
    String,
    func,
    literal,
    or_,
    select,
    tuple_,
)
from sqlalchemy.orm import InstrumentedAttribute, defer, selectinload

from ..addresses import as_stored
from ..models import (
    FOLD,
    GAME_STATUSES,
    MAIL_STATUSES,
    OPEN_STATUSES,
    Address,
    AdminAction,
    Game,
    OutboxMessage,
    Player,
    UTCDateTime,
    db,
    is_row_id,
)

PAGE_SIZE = 50
Row = TypeVar("Row")


class BadCursor(ValueError):
    """A page position that this list did not write."""


@dataclass(frozen=True)
class Page(Generic[Row]):
    """One page of a list, with the positions of the pages before and after it."""

    rows: list[Row]
    previous: str | None
    next: str | None


@dataclass(frozen=True)
class GameFilter:
    """Which games to list and in which order.

    ``email`` is one player's whole address; ``search`` is part of a player's
    address or name, or a game's number; ``idle`` keeps the games with no activity
    for that many days. ``to_act`` is ``keeper``, ``shadow``, ``both``, ``none`` or
    empty for any; ``bouncing`` keeps the games with a player whose address bounces
    (the server refused its mail for good); ``sort`` is ``activity`` (newest first),
    ``oldest`` (oldest activity first) or ``deadline`` (soonest first, only games that
    have one).
    """

    status: str = ""
    email: str = ""
    search: str = ""
    idle: int | None = None
    to_act: str = ""
    bouncing: bool = False
    sort: str = "activity"


def _encode(row: Any, order: tuple[InstrumentedAttribute[Any], ...]) -> str:
    values = (getattr(row, column.key) for column in order)
    return "_".join(v.isoformat() if isinstance(v, datetime) else str(v) for v in values)


def _decode(text: str, order: tuple[InstrumentedAttribute[Any], ...]) -> tuple[Any, ...]:
    """The values of a position, or :class:`BadCursor` for one the database could not compare."""
    parts = text.split("_")
    if len(parts) != len(order):
        raise BadCursor(text)
    values: list[Any] = []
    try:
        for part, column in zip(parts, order, strict=True):
            if isinstance(column.type, UTCDateTime):
                moment = datetime.fromisoformat(part)
                if moment.tzinfo is None:
                    raise BadCursor(text)
                # In UTC, as it is stored: a moment near year 1 or 9999 may fall outside.
                values.append(moment.astimezone(UTC))
            else:
                value = int(part)
                if not is_row_id(value):
                    raise BadCursor(text)
                values.append(value)
    except (ValueError, OverflowError):
        raise BadCursor(text) from None
    return tuple(values)


def seek(
    query: Select[Any],
    order: tuple[InstrumentedAttribute[Any], ...],
    *,
    descending: bool,
    after: str = "",
    before: str = "",
    size: int,
) -> Page[Any]:
    """The page of ``query`` just after the position ``after`` (or just before ``before``).

    ``order`` is the sort key followed by the id, matching an index; the
    positions in the returned page are opaque strings for the next request.
    """
    backwards = bool(before)
    cursor = _decode(before or after, order) if before or after else None
    # Reading backwards from ``before`` walks the index the other way, then turns the rows round.
    newest_first = descending != backwards
    seeking = query
    if cursor is not None:
        position = tuple_(*order)
        bound = tuple_(
            *(literal(value, column.type) for value, column in zip(cursor, order, strict=True))
        )
        seeking = seeking.where(position < bound if newest_first else position > bound)
    seeking = seeking.order_by(*(c.desc() if newest_first else c.asc() for c in order))
    rows = list(db.session.scalars(seeking.limit(size + 1)))
    more = len(rows) > size
    rows = rows[:size]
    if backwards:
        if not more:
            return seek(query, order, descending=descending, size=size)
        rows.reverse()
    has_previous = more if backwards else cursor is not None
    has_next = True if backwards else more
    return Page(
        rows=rows,
        previous=_encode(rows[0], order) if has_previous and rows else None,
        next=_encode(rows[-1], order) if has_next and rows else None,
    )


def _fold(value: ColumnExpressionArgument[str] | str) -> ColumnElement[str]:
    """``value`` folded by the database's :data:`~service.models.FOLD`."""
    folding: ColumnElement[str] = getattr(func, FOLD)(value, type_=String)
    return folding


def _search(text: str) -> ColumnElement[bool]:
    """Games with a player whose address holds ``text`` (any case) or whose name does (any
    case, with or without accents: "elodie" finds Élodie), or whose number it is."""
    part = text.lower()
    # The name's pattern folded by the database's own function, as its index is, then
    # escaped: folding makes "%", "_" and "/" of their full-width forms ("％" is "%").
    escaped: ColumnElement[str] = _fold(part)
    for char in "/%_":
        escaped = func.replace(escaped, char, "/" + char, type_=String)
    players = select(Player.game_id).where(
        or_(
            func.lower(Player.email).contains(part, autoescape=True),
            _fold(Player.name).like("%" + escaped + "%", escape="/"),
        )
    )
    found: ColumnElement[bool] = Game.id.in_(players)
    number = text.removeprefix("#")
    if number.isascii() and number.isdigit() and is_row_id(int(number)):
        found = or_(found, Game.id == int(number))
    return found


def games_query(filters: GameFilter, now: datetime | None = None) -> Select[Any]:
    """The games the filters keep, with their players (not their states), in no order."""
    query = select(Game).options(defer(Game.state), selectinload(Game.players))
    if filters.search:
        query = query.where(_search(filters.search))
    if filters.idle:
        query = query.where(
            Game.updated_at < (now or datetime.now(UTC)) - timedelta(days=filters.idle)
        )
    if filters.status:
        query = query.where(Game.status == filters.status)
    if filters.to_act:
        query = query.where(Game.to_act == ("" if filters.to_act == "none" else filters.to_act))
    if filters.email:
        address = as_stored(filters.email)
        query = query.where(Game.id.in_(select(Player.game_id).where(Player.email == address)))
    if filters.bouncing:
        bounced = select(Player.game_id).join(Address, Address.email == Player.email)
        query = query.where(Game.id.in_(bounced.where(Address.bounced_at.is_not(None))))
    return query


def games_in_order(filters: GameFilter) -> Select[Any]:
    """The games the filters keep, in the list's order, unpaged (for an export, which takes
    the first :data:`.export.EXPORT_LIMIT`)."""
    query = games_query(filters)
    if filters.sort == "deadline":
        return query.where(Game.deadline.is_not(None)).order_by(Game.deadline, Game.id)
    if filters.sort == "oldest":
        return query.order_by(Game.updated_at, Game.id)
    return query.order_by(Game.updated_at.desc(), Game.id.desc())


def games_page(filters: GameFilter, *, after: str = "", before: str = "") -> Page[Game]:
    """A page of games with their players (not their states)."""
    query = games_query(filters)
    if filters.sort == "deadline":
        return seek(
            query.where(Game.deadline.is_not(None)),
            (Game.deadline, Game.id),
            descending=False,
            after=after,
            before=before,
            size=PAGE_SIZE,
        )
    return seek(
        query,
        (Game.updated_at, Game.id),
        descending=filters.sort != "oldest",
        after=after,
        before=before,
        size=PAGE_SIZE,
    )


def game_counts() -> dict[str, int]:
    """How many games there are in each status."""
    counts = dict(db.session.execute(select(Game.status, func.count()).group_by(Game.status)).all())
    return {status: counts.get(status, 0) for status in GAME_STATUSES}


@dataclass(frozen=True)
class MailFilter:
    """Which messages to list: a status, one recipient, one game, and a day (UTC) on which
    they were queued or failed."""

    status: str = ""
    recipient: str = ""
    game: int | None = None
    day: date | None = None


def mail_query(filters: MailFilter) -> Select[Any]:
    """The messages the filters keep, without their bodies, in no order."""
    query = select(OutboxMessage).options(
        defer(OutboxMessage.text_body), defer(OutboxMessage.html_body)
    )
    if filters.status:
        query = query.where(OutboxMessage.status == filters.status)
    if filters.recipient:
        query = query.where(OutboxMessage.recipient == as_stored(filters.recipient))
    if filters.game is not None:
        query = query.where(OutboxMessage.game_id == filters.game)
    if filters.day is not None:
        # The day's last moment, not the next day's first: the next day of 9999-12-31 is none.
        start, end = (datetime.combine(filters.day, at, tzinfo=UTC) for at in (time(), time.max))
        query = query.where(
            or_(
                OutboxMessage.created_at.between(start, end),
                OutboxMessage.failed_at.between(start, end),
            )
        )
    return query


def mail_page(filters: MailFilter, *, after: str = "", before: str = "") -> Page[OutboxMessage]:
    """A page of the outbox, newest first, without the bodies."""
    query = mail_query(filters)
    return seek(
        query, (OutboxMessage.id,), descending=True, after=after, before=before, size=PAGE_SIZE
    )


# Kinds of email whose subject may name a card a live game keeps secret: the answer to a
# reply names the move it read, the cards chosen for an exchange or a swap included.
SUBJECT_NAMES_CARDS = frozenset({"answer"})
SUBJECT_WITHHELD = "(subject withheld while its game is live)"


class Subjects:
    """The subjects of messages as the dashboard shows them: of a live game (waiting or in
    play), the subject of a kind in :data:`SUBJECT_NAMES_CARDS` is withheld, as its body is.

    Each game's status is read once, when a message of such a kind first needs it.
    """

    def __init__(self) -> None:
        self._live: dict[int, bool] = {}

    def __call__(self, message: OutboxMessage) -> str | None:
        """The message's subject as shown (``None``: not written yet)."""
        if message.subject is None or message.kind not in SUBJECT_NAMES_CARDS:
            return message.subject
        if message.game_id is None or not self.live(message.game_id):
            return message.subject
        return SUBJECT_WITHHELD

    def live(self, game_id: int) -> bool:
        """Whether the game keeps secrets: waiting for its players or in play."""
        if game_id not in self._live:
            status = db.session.scalar(select(Game.status).where(Game.id == game_id))
            self._live[game_id] = status in OPEN_STATUSES
        return self._live[game_id]


def mail_counts() -> dict[str, int]:
    """How many messages there are in each status."""
    counts = dict(
        db.session.execute(
            select(OutboxMessage.status, func.count()).group_by(OutboxMessage.status)
        ).all()
    )
    return {status: counts.get(status, 0) for status in MAIL_STATUSES}


def audit_query(admin: str = "", game_id: int | None = None) -> Select[Any]:
    """The audit trail's entries by ``admin`` and on game ``game_id`` (each if given)."""
    query = select(AdminAction)
    if admin:
        query = query.where(AdminAction.admin == admin)
    if game_id is not None:
        query = query.where(AdminAction.game_id == game_id)
    return query


def audit_page(
    admin: str = "", game_id: int | None = None, *, after: str = "", before: str = ""
) -> Page[AdminAction]:
    """A page of the audit trail, newest first."""
    return seek(
        audit_query(admin, game_id),
        (AdminAction.id,),
        descending=True,
        after=after,
        before=before,
        size=PAGE_SIZE,
    )


def audit_admins() -> list[str]:
    """The names in the audit trail, for its filter."""
    return list(
        db.session.scalars(select(AdminAction.admin).distinct().order_by(AdminAction.admin))
    )
