"""Erasing an email address, at its owner's request: nothing of it is kept but a stop.

The games it played stay, for their opponents' history and the statistics:
its seats are held by :data:`ERASED_ADDRESS` under :data:`ERASED_NAME`, with
no link, and the engine states, which name nobody, and the games' figures are
as they were. Everything else the service keeps of the address goes: its
settings and home link, what it told the service (confirmed, bounced), the
notes its player wrote, the replies read from it, the emails sent to it or
naming it, and the address wherever an admin's note wrote it, or a game's log
noted its games moving to another address. Only a stop of its emails, or a
decline, is kept, on the address alone: without it, anyone could invite the
address again. What it erases is what :mod:`service.admin.address_data` gives
the address's owner who asks for it.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from email_validator import EmailNotValidError, validate_email
from sqlalchemy import ColumnElement, delete, or_, select, text, update

from . import audit
from .address_change import MOVE_ADDRESS
from .addresses import as_stored, in_ascii, lock_address
from .models import (
    OPEN_STATUSES,
    Address,
    AddressSettings,
    AdminAction,
    Event,
    Game,
    InboundReply,
    Invitation,
    OutboxMessage,
    Player,
    db,
    insert_new,
    utcnow,
)

log = logging.getLogger(__name__)

# What holds an erased address's seats and invitations: a domain reserved never to exist
# (RFC 6761), which no form takes, and which takes no email (:func:`erase_address` stops it).
ERASED_ADDRESS = "erased@erased.invalid"
# The name an erased address's seats are shown under, in any language.
ERASED_NAME = "—"
# The audit trail's word for an erasure.
ERASE_ADDRESS = "erase_address"


class StillPlaying(Exception):
    """The address holds a seat of a game not over: its opponent still needs it."""

    def __init__(self, games: list[int]) -> None:
        self.games = games
        numbers = ", ".join(str(game) for game in games)
        super().__init__(
            f"the address plays game {numbers}, not over: end it first (cancel it, say)"
        )


@dataclass(frozen=True)
class Erased:
    """What an erasure found of the address."""

    games: int
    invitations: int
    emails: int
    found: bool


def erase_address(address: str, actor: str) -> Erased:
    """Erase ``address`` (caller's transaction), recorded in the audit trail as ``actor``'s.

    Refused (:class:`StillPlaying`, nothing changed) while the address holds a
    seat in a game in play or waiting for its invitation's answer. Taken under
    the address's lock, as every request in its name. An email that a worker is
    sending at this moment stays until it is sent: erase the address again then.
    """
    email = owned_address(address)
    if db.session.get_bind().dialect.name == "postgresql":
        # The emails' text is read whole, at an operator's hand, once in a while: no limit.
        db.session.execute(text("SET LOCAL statement_timeout = 0"))
    known = db.session.get(Address, email) is not None
    address_row = lock_address(email)
    playing = db.session.scalars(
        select(Game.id)
        .join(Player)
        .where(Player.email == email, Game.status.in_(OPEN_STATUSES))
        .order_by(Game.id)
    ).all()
    if playing:
        raise StillPlaying(list(playing))
    seats = db.session.execute(
        select(Player.id, Player.game_id, Player.seat).where(Player.email == email)
    ).all()
    seat_ids = [seat.id for seat in seats]
    for seat in seats:  # the notes the player wrote to their opponent
        db.session.execute(
            update(Event)
            .where(Event.game_id == seat.game_id, Event.seat == seat.seat, Event.kind == "move")
            .values(note=None)
        )
    db.session.execute(
        update(Player)
        .where(Player.email == email)
        .values(
            email=ERASED_ADDRESS,
            name=ERASED_NAME,
            link_key=None,
            notify=False,
            language=None,
            seen_at=None,
        )
    )
    games = {seat.game_id for seat in seats}
    db.session.execute(update(Game).where(Game.id.in_(games)).values(request_key=None))
    invitations = 0
    for column, name in (
        (Invitation.creator_email, "creator"),
        (Invitation.opponent_email, "opponent"),
    ):
        done = db.session.execute(
            update(Invitation)
            .where(column == email)
            .values({f"{name}_email": ERASED_ADDRESS, f"{name}_name": ERASED_NAME})
        )
        invitations += done.rowcount  # type: ignore[attr-defined]
    db.session.execute(delete(InboundReply).where(InboundReply.player_id.in_(seat_ids)))
    written = as_written(email)
    whole = _written_whole(written)
    naming = [
        row.id
        for row in db.session.execute(
            select(OutboxMessage.id, *_BODIES).where(_holding(written, *_BODIES))
        )
        if any(whole.search(value or "") for value in row[1:])
    ]
    emails = db.session.execute(
        delete(OutboxMessage).where(
            OutboxMessage.status != "sending",
            or_(
                OutboxMessage.recipient == email,
                OutboxMessage.player_id.in_(seat_ids),
                OutboxMessage.id.in_(naming),
            ),
        )
    ).rowcount  # type: ignore[attr-defined]
    # An admin's note: "corrected the Keeper's address from … to …", in the audit trail and
    # in the log of its game, which the address may no longer play; and the note of a move
    # to another address in the log of each game that moved, which it no longer plays.
    noted = {
        game_id
        for _, game_id, _ in notes_naming(AdminAction, email, AdminAction.game_id.is_not(None))
    } | {game_id for _, game_id, _ in notes_naming(Event, email, Event.kind == MOVE_ADDRESS)}
    for model, where in (
        (AdminAction, AdminAction.id.is_not(None)),
        (Event, Event.game_id.in_(games | noted)),
    ):
        for row_id, _, note in notes_naming(model, email, where):
            rewritten = whole.sub(ERASED_ADDRESS, note)
            db.session.execute(update(model).where(model.id == row_id).values(note=rewritten))
    settings = db.session.execute(delete(AddressSettings).where(AddressSettings.email == email))
    if address_row.unsubscribed_at is None and address_row.declined_at is None:
        db.session.delete(address_row)
    else:
        address_row.confirmed_at = None
        address_row.bounce_code = address_row.bounce_reply = address_row.bounced_at = None
    _stop_erased()
    found = bool(known or seats or invitations or emails or settings.rowcount)  # type: ignore[attr-defined]
    erased = Erased(len(games), invitations, emails, found)
    audit.record(
        actor,
        ERASE_ADDRESS,
        f"erased an address: {erased.games} finished game(s) and {erased.invitations} "
        f"invitation(s) kept without it, {erased.emails} email(s) deleted",
    )
    db.session.flush()
    return erased


def owned_address(address: str) -> str:
    """``address`` as it is stored, for its owner's erasure or export; ``ValueError`` for
    text that is no email address (part of one would match every email and note that holds
    it: ``example.com``) and for :data:`ERASED_ADDRESS`, which holds every erased seat."""
    email = as_stored(address)
    if email == ERASED_ADDRESS:  # on a domain reserved never to exist: no valid address
        raise ValueError(f"{ERASED_ADDRESS} holds erased seats: it is no one's address")
    try:
        validate_email(address.strip(), check_deliverability=False)
    except EmailNotValidError as exc:
        raise ValueError(f"{address.strip()!r} is not an email address: {exc}") from None
    return email


# The parts of an email that may name an address: an invitation names its creator's.
_BODIES = (OutboxMessage.subject, OutboxMessage.text_body, OutboxMessage.html_body)


def as_written(email: str) -> list[str]:
    """The address as it is stored, and as an email shows it to another person (its domain
    in IDNA: :func:`.addresses.in_ascii`)."""
    try:
        return sorted({email, in_ascii(email)})
    except EmailNotValidError:
        return [email]


def notes_naming(
    model: type[AdminAction] | type[Event], email: str, *where: ColumnElement[bool]
) -> list[tuple[int, int | None, str]]:
    """The id, game and note of each row of the audit trail or the games' logs (``model``)
    whose note names the address written whole (:func:`_written_whole`), of those ``where``
    picks: what erasure rewrites, and what an export gives its owner."""
    written = as_written(email)
    whole = _written_whole(written)
    found = db.session.execute(
        select(model.id, model.game_id, model.note).where(*where, _holding(written, model.note))
    )
    return [
        (row_id, game_id, note)
        for row_id, game_id, note in found
        if note is not None and whole.search(note)
    ]


def _holding(written: list[str], *columns: Any) -> ColumnElement[bool]:
    """Rows whose ``columns`` hold one of the forms, in any case, perhaps inside a longer
    address: what :func:`_written_whole` then reads."""
    return or_(*(column.icontains(form, autoescape=True) for form in written for column in columns))


def _written_whole(written: list[str]) -> re.Pattern[str]:
    """The address in any of its forms and any case, written whole: not inside a longer
    one (``joakim@example.com``, ``kim@example.com.au``), which is another person's."""
    forms = "|".join(re.escape(form) for form in written)
    before = r"(?<![\w.!#$%&'*+/=?^`{|}~-])"
    after = r"(?![\w-]|\.[\w-])"
    return re.compile(f"{before}(?:{forms}){after}", re.IGNORECASE)


def _stop_erased() -> None:
    """Stop every email to :data:`ERASED_ADDRESS`: a rematch asked for against an erased seat
    waits, its email withheld, as for any address that stopped emails."""
    db.session.execute(insert_new(Address).values(email=ERASED_ADDRESS))
    db.session.execute(
        update(Address)
        .where(Address.email == ERASED_ADDRESS, Address.unsubscribed_at.is_(None))
        .values(unsubscribed_at=utcnow())
    )
