"""A player moving to another email address: every game, invitation and setting follows.

An address's home page asks for it (:func:`ask`): the new address is emailed a
link to confirm, signed, expiring after :data:`CONFIRM_WITHIN`, and naming the
home key the asking page had (replacing the home link kills it). Its page shows
what would move and a button; only that POST moves anything (:func:`move`), in
one transaction under the locks of each game waiting for an answer, of both
addresses and then of each game in play (the order an answer to an invitation
and a vacation take them in):

- every seat of the old address, in play, waiting or finished, is the new
  address's, with its link: the person is the same, so their game links, reply
  tags and unsubscribe links keep working (an admin's correction of a wrong
  address kills them instead, :func:`service.games.correct_address`);
- the invitations it sent (once confirmed) or waits to answer, and the emails
  still queued to it, follow it; a request in its name never confirmed stays
  (anyone may have typed the address);
- its choices follow it: all of them to an address new here, the language and
  time zone it lacks to an address that has choices of its own; the vacation days
  both used this year add up; a stop of every email, or a decline, holds at
  the new address too (the old address keeps its own);
- the old home link stops working (its key is replaced), but for the browser that
  confirmed, which it leads to the new page; the old address is told, the game
  logs and the audit trail record it.

Refused (:class:`MoveRefused`) while both addresses hold the two seats of a game
not over, or an invitation between them waits (one person would play against
themselves), and while either is on vacation. A finished game between them stays
as it is (the new address's page lists it already), and so does a request between
them never confirmed (anyone may type both addresses).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import timedelta

from flask import current_app
from itsdangerous import BadSignature
from sqlalchemy import ColumnElement, and_, or_, select, update

from . import audit, games, links
from .addresses import (
    addresses_away,
    emails_language,
    give_home_key,
    lock_address,
    lock_settings,
    settings_for,
    settings_row,
)
from .mail import compose, kinds, queue, to_go
from .mail.compose import Email
from .mail.kinds import Kind
from .models import (
    OPEN_STATUSES,
    Address,
    AddressSettings,
    Event,
    Game,
    Invitation,
    OutboxMessage,
    Player,
    db,
    utcnow,
)
from .rematch_rules import blocked

log = logging.getLogger(__name__)

SALT = "splitmind.address-change"
# How long the link emailed to the new address confirms the move.
CONFIRM_WITHIN = timedelta(hours=48)
# The audit trail's and the game log's word for it, and who it names as having done it.
MOVE_ADDRESS = "move_address"
BY_ITS_PLAYER = "its player (home page)"
# Emails to the old address that stay with it: about a request in its name never confirmed,
# its lost links, and the move itself.
STAY = ("confirm_address", "your_games", "confirm_move", "address_moved")


class MoveRefused(ValueError):
    """A move that cannot be made; ``reason`` is one word the pages word in the reader's
    language (``same``, ``shared``, ``vacation``), ``games`` the games it is about."""

    def __init__(self, reason: str, games: list[int] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.games = games or []


@dataclass(frozen=True)
class Confirmation:
    """What a confirmation link signs: the move from ``old`` to ``new`` asked from the home
    page whose key was ``key``, at ``issued`` (seconds since the epoch)."""

    old: str
    new: str
    key: str
    issued: int

    @property
    def expired(self) -> bool:
        """Whether the link is older than :data:`CONFIRM_WITHIN`."""
        return time.time() - self.issued > CONFIRM_WITHIN.total_seconds()


@dataclass(frozen=True)
class Moved:
    """What a move moves: the address's games (in play and finished), and the invitations
    waiting."""

    games: int
    invitations: int


def ask(old: str, new: str, language: str | None) -> bool:
    """Email ``new`` a link to confirm that ``old``'s games move to it (caller's transaction).

    ``new`` is an address as typed (:class:`service.games.InvalidGame` if it is none);
    :class:`MoveRefused` ``same`` if it is ``old``. Asked again while the email to the
    same address is still to go (a double click), nothing more is queued. Under the
    old address's lock, so two requests at the same instant queue one. Returns whether
    this one queued an email (the view then draws on the allowances).
    """
    new = games.clean_email(new)
    if new == old:
        raise MoveRefused("same")
    lock_address(old)
    waiting = to_go("confirm_move", new)
    if waiting is not None and (waiting.params or {}).get("old") == old:
        log.info("a move of an address is asked for again before its email went")
        return False
    key = settings_row(old).home_key
    if not key:
        raise LookupError("the address has no home link")
    queue(
        kind="confirm_move",
        recipient=new,
        headers=compose.unsubscribe_headers(compose.stop_all_url(new)),
        params={"old": old, "key": key, "issued": int(time.time()), "language": language},
    )
    db.session.flush()
    log.info("a move of an address to another is to be confirmed")
    return True


def token(confirmation: Confirmation) -> str:
    """The signed token of a confirmation link."""
    value = [confirmation.old, confirmation.new, confirmation.key, confirmation.issued]
    return links.serializer(SALT).dumps(value)


def url(confirmation: Confirmation) -> str:
    """The full confirmation link, built from ``BASE_URL``."""
    return f"{current_app.config['BASE_URL']}/moving/{token(confirmation)}"


def from_token(value: str) -> Confirmation | None:
    """The move a token asks for, while the home page that asked it has the key it had;
    ``None`` for a bad link, or one whose move was made or whose home link was replaced."""
    try:
        payload = links.serializer(SALT).loads(value)
    except BadSignature:
        return None
    if not (
        isinstance(payload, list)
        and len(payload) == 4
        and all(isinstance(part, str) for part in payload[:3])
        and isinstance(payload[3], int)
    ):
        return None
    confirmation = Confirmation(*payload)
    settings = settings_for(confirmation.old)
    if settings is None or not links.key_matches(settings.home_key, confirmation.key):
        return None
    return confirmation


def refusal(confirmation: Confirmation) -> MoveRefused | None:
    """Why the move cannot be made now, or ``None``: reads only (the page's GET)."""
    old, new = confirmation.old, confirmation.new
    shared = _shared_games(old, new)
    if shared:
        return MoveRefused("shared", shared)
    if addresses_away([old, new], utcnow()):
        return MoveRefused("vacation")
    return None


def counts(confirmation: Confirmation) -> Moved:
    """How many games (in play and finished) and invitations waiting the move would move."""
    old, new = confirmation.old, confirmation.new
    played = db.session.scalars(select(Player.id).where(_seats_moving(old, new))).all()
    waiting = db.session.scalars(select(Invitation.id).where(_invitations_moving(old))).all()
    return Moved(len(played), len(waiting))


def move(confirmation: Confirmation) -> Moved:
    """Move every game, invitation and setting of ``confirmation.old`` to ``confirmation.new``
    (caller's transaction), as the module says; :class:`MoveRefused` and nothing changed
    when it cannot be made, or :class:`LookupError` when the link no longer holds (made
    already, its home link replaced: read again under the lock)."""
    old, new = confirmation.old, confirmation.new
    # An answer to an invitation locks its waiting game, then the address's row and its
    # settings (:func:`.invitations.respond`): the waiting games come first here too, else
    # each would wait for the other. A game in play comes after the settings, as a vacation
    # takes them.
    waiting = db.session.scalars(
        select(Game.id)
        .join(Player)
        .where(Player.email == old, Game.status == "waiting")
        .order_by(Game.id)
    ).all()
    for game_id in waiting:
        games.lock_game(game_id)
    for each in sorted({old, new}):  # every request in either address's name waits
        lock_address(each)
    lock_settings([old, new])
    before = settings_row(old)
    if not links.key_matches(before.home_key, confirmation.key) or confirmation.expired:
        raise LookupError("the confirmation link no longer holds")
    refused = refusal(confirmation)
    if refused is not None:
        raise refused
    seats = db.session.scalars(
        select(Player.id).where(_seats_moving(old, new)).order_by(Player.game_id)
    ).all()
    in_play = db.session.scalars(
        select(Game.id)
        .join(Player)
        .where(Player.id.in_(seats), Game.status.in_(OPEN_STATUSES))
        .order_by(Game.id)
    ).all()
    for game_id in in_play:  # a move, a correction or a sweep of the game waits, or went first
        games.lock_game(game_id)
    language = emails_language(old)  # the old address's, read before its seats move
    moved_invitations = _move_invitations(old, new)
    db.session.execute(
        update(OutboxMessage)
        .where(
            OutboxMessage.status == "queued",
            OutboxMessage.recipient == old,
            or_(
                OutboxMessage.player_id.in_(seats),
                and_(OutboxMessage.player_id.is_(None), OutboxMessage.kind.not_in(STAY)),
            ),
        )
        .values(recipient=new)
    )
    # A seat an admin gave another address before its game's lock was taken is not moved.
    db.session.execute(
        update(Player).where(Player.id.in_(seats), Player.email == old).values(email=new)
    )
    _merge_settings(before, new)
    _carry_stops(old, new)
    before.home_key = links.new_link_key()  # the old home link stops working
    give_home_key(new)
    note = f"moved the seats of {old} to {new}, confirmed at {new}"
    for game_id in in_play:
        seat = db.session.scalars(
            select(Player.seat).where(Player.game_id == game_id, Player.email == new)
        ).first()
        game = db.session.get_one(Game, game_id)
        game.events.add(
            Event(
                kind=MOVE_ADDRESS, seat=seat, version=game.version, actor=BY_ITS_PLAYER, note=note
            )
        )
    moved = Moved(len(seats), moved_invitations)
    audit.record(
        BY_ITS_PLAYER,
        MOVE_ADDRESS,
        f"{note}: {moved.games} game(s), {moved.invitations} invitation(s)",
    )
    queue(
        kind="address_moved",
        recipient=old,
        params={"new": new, "language": language},
    )
    db.session.flush()
    log.info("an address moved %d games and %d invitations", moved.games, moved.invitations)
    return moved


def _shared_games(old: str, new: str) -> list[int]:
    """The games not over whose two seats the two addresses hold, but for a request never
    confirmed (anyone may type both addresses), which stays as it is."""
    other = select(Player.game_id).where(Player.email == new)
    unconfirmed = select(Invitation.game_id).where(
        Invitation.status == "unconfirmed", Invitation.game_id.is_not(None)
    )
    return list(
        db.session.scalars(
            select(Game.id)
            .join(Player)
            .where(
                Player.email == old,
                Game.status.in_(OPEN_STATUSES),
                Game.id.in_(other.scalar_subquery()),
                Game.id.not_in(unconfirmed.scalar_subquery()),
            )
            .order_by(Game.id)
        )
    )


def _seats_moving(old: str, new: str) -> ColumnElement[bool]:
    """Of a player's row: a seat of ``old`` that moves, not one in a game against ``new``
    (which lists it already), nor one in a request never confirmed."""
    unconfirmed = select(Invitation.game_id).where(
        Invitation.status == "unconfirmed", Invitation.creator_email == old
    )
    against = select(Player.game_id).where(Player.email == new)
    return and_(
        Player.email == old,
        Player.game_id.not_in(unconfirmed.scalar_subquery()),
        Player.game_id.not_in(against.scalar_subquery()),
    )


def _invitations_moving(email: str) -> ColumnElement[bool]:
    """Of an invitation's row: one waiting for the address's answer, or sent by it and
    confirmed, which its page lists."""
    return and_(
        Invitation.status == "invited",
        or_(Invitation.opponent_email == email, Invitation.creator_email == email),
    )


def _move_invitations(old: str, new: str) -> int:
    """Every invitation of ``old`` but a request never confirmed is ``new``'s, answered or
    not (a finished game's invitation names its players as its seats do). Returns how many
    of them were waiting."""
    waiting = len(db.session.scalars(select(Invitation.id).where(_invitations_moving(old))).all())
    db.session.execute(
        update(Invitation)
        .where(
            Invitation.creator_email == old,
            Invitation.status != "unconfirmed",
            Invitation.opponent_email != new,
        )
        .values(creator_email=new)
    )
    db.session.execute(
        update(Invitation)
        .where(Invitation.opponent_email == old, Invitation.creator_email != new)
        .values(opponent_email=new)
    )
    return waiting


# The choices an address makes on its home page, which a move carries.
CHOICES = (
    "email_policy",
    "digest_hour",
    "last_digest_at",
    "language",
    "time_zone",
)


def _merge_settings(before: AddressSettings, new: str) -> None:
    """Carry ``before``'s choices to ``new``'s row (locked): all of them to an address new
    here (no home link yet), else the language and time zone it has none of; the vacation
    days used this year add up, as one person took them."""
    after = settings_row(new)
    fresh = not after.home_key
    for name in CHOICES:
        if fresh or (name in ("language", "time_zone") and getattr(after, name) is None):
            setattr(after, name, getattr(before, name))
    year = utcnow().year
    used = sum(row.vacation_days_used for row in (before, after) if row.vacation_year == year)
    if used:
        allowance: int = current_app.config["VACATION_DAYS_PER_YEAR"]
        after.vacation_year, after.vacation_days_used = year, min(allowance, used)


def _carry_stops(old: str, new: str) -> None:
    """A stop of every email, or a decline, of ``old`` holds at ``new`` too; ``new`` is
    confirmed, as the link it was sent proved it."""
    before = db.session.get_one(Address, old)
    after = db.session.get_one(Address, new)
    after.unsubscribed_at = after.unsubscribed_at or before.unsubscribed_at
    after.declined_at = after.declined_at or before.declined_at
    after.confirmed_at = after.confirmed_at or utcnow()


# --- the two emails ----------------------------------------------------------


def _write_confirmation(message: OutboxMessage) -> Email | None:
    """The link to confirm the move, while the home link that asked has its key."""
    params = message.params or {}
    confirmation = Confirmation(params["old"], message.recipient, params["key"], params["issued"])
    settings = settings_for(confirmation.old)
    if settings is None or not links.key_matches(settings.home_key, confirmation.key):
        return None
    return compose.render(
        "confirm_move",
        settings.language or params.get("language"),
        old=confirmation.old,
        url=url(confirmation),
        hours=int(CONFIRM_WITHIN.total_seconds() // 3600),
        stop_all=compose.stop_all_url(message.recipient),
    )


def _write_notice(message: OutboxMessage) -> Email:
    """The old address is told where its games went."""
    params = message.params or {}
    return compose.render("address_moved", params.get("language"), new=params["new"])


def _not_stopped(message: OutboxMessage) -> bool:
    """Whether the old address still takes email: not once it stopped every email."""
    address = db.session.get(Address, message.recipient)
    return address is None or address.unsubscribed_at is None


kinds.register(
    Kind(
        "confirm_move",
        still_wanted=lambda message: not blocked(message.recipient),
        unwanted="the address had stopped emails or declined an invitation",
        write=_write_confirmation,
        unwritten="the move was made, or its home link replaced, before it went",
    ),
    Kind(
        "address_moved",
        still_wanted=_not_stopped,
        unwanted="the address had stopped every email",
        write=_write_notice,
    ),
)
