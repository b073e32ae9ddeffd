"""The game service: the one place where games are created and moves are applied.

The pages, the JSON API, the command line, the admin dashboard and the
deadline sweep all call these functions. Each one flushes what it changed and
logs it; it never commits. Whoever calls it owns the transaction
(:func:`service.unit_of_work.transaction`), so calls compose: a second move
can follow a first inside one transaction, under the same locks and checks.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import cache, lru_cache
from typing import Any, Literal, cast

from email_validator import EmailNotValidError, validate_email
from flask import current_app
from sqlalchemy import (
    ColumnElement,
    Insert,
    Integer,
    Select,
    Table,
    Update,
    and_,
    bindparam,
    exists,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.orm import joinedload
from sqlalchemy.orm.attributes import instance_state
from sqlalchemy.orm.exc import StaleDataError

from . import audit, bots, figures, metrics, notes, notify
from .addresses import give_home_key, lock_settings, vacation_end
from .addresses import language as address_language
from .errors import NOT_FOUND
from .game_text import LOOKS, holds_an_address, poses_as_computer, seat_name, the_seat, upfirst
from .links import key_matches, new_link_key
from .logs import without_addresses
from .models import (
    NAME_LENGTH,
    OPEN_INVITATIONS,
    OPEN_STATUSES,
    AddressSettings,
    Event,
    Game,
    Invitation,
    Match,
    Player,
    db,
    utcnow,
)
from .perspective import describe_status
from .perspective import player_view as player_view  # the view pages and emails render
from .rules import (
    CHOICE_PHASES,
    OVER,
    ActionError,
    RuleError,
    State,
    apply,
    export,
    new_game,
    other,
    to_act,
)
from .rules.names import Seat, is_seat
from .rules.review import Step, review
from .unit_of_work import after_commit
from .writes import Write, write_together

log = logging.getLogger(__name__)


class MoveError(Exception):
    """A move the service refuses; ``status`` is its HTTP status, ``code`` a stable name."""

    status = 400
    code = "bad_request"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code:
            self.code = code


class BadMove(MoveError):
    """The request does not hold a well-formed move."""

    status = 400
    code = "malformed"


class NoteRefused(BadMove):
    """The move's note cannot be kept (:func:`service.notes.clean` says why, in English);
    ``invisible`` when it holds invisible formatting characters. The move is not made."""

    def __init__(self, message: str, *, invisible: bool = False) -> None:
        super().__init__(message)
        self.invisible = invisible


class StaleVersion(MoveError):
    """The move was made against an older version of the game: nothing applied.

    ``already_moved`` when the mover had moved since that version (a second tap, the back
    button, another tab): their own move came first, whoever moves now.
    """

    status = 409
    code = "stale"

    def __init__(self, message: str, *, already_moved: bool = False) -> None:
        super().__init__(message)
        self.already_moved = already_moved


class GameClosed(MoveError):
    """The game no longer takes moves (finished, timed out, abandoned or cancelled)."""

    status = 409
    code = "closed"


class DeadlinePassed(GameClosed):
    """A move owed is past its deadline: the sweep ends the game, and nothing else may."""


class ReminderRefused(MoveError):
    """The opponent cannot be reminded now; ``reason`` says why (:data:`REMINDER_REFUSALS`),
    and for one too soon, ``ready`` when it no longer is."""

    status = 409
    code = "refused"

    def __init__(self, reason: str, ready: datetime | None = None) -> None:
        said = REMINDER_REFUSALS[reason]
        if ready is not None:
            said += f" It may be from {ready.isoformat(timespec='seconds')}."
        super().__init__(said)
        self.reason = reason
        self.ready = ready


# Why a player cannot remind their opponent of the move the opponent owes, in the API's
# English (pages say it in their own words, by the reason's key).
REMINDER_REFUSALS = {
    "not_owed": "Your opponent owes no move now: there is nothing to remind them of.",
    "yours_first": "You owe a move too: make yours before reminding your opponent of theirs.",
    "computer": "The computer owes no reminder: it moves within seconds.",
    "too_soon": "A move may be reminded of once it has waited a day.",
    "reminded": "Your opponent has been reminded of this move already.",
    "away": "Your opponent is on vacation: their deadlines wait for them, and so does this.",
    "late": "The move's deadline has passed: the game ends by timeout.",
}
# How long a move must have waited before the player waiting for it may remind the
# opponent who owes it, once per move (a game without deadlines reminds no one by itself).
REMIND_AFTER = timedelta(days=1)


class AlreadyResigned(GameClosed):
    """The player resigned the game before (a second click, another tab): nothing more to do."""


class UnknownLink(MoveError):
    """The link is not the player's (revoked or replaced), or names no player."""

    status = 404
    code = "not_found"


class IllegalMove(MoveError):
    """A move the rules forbid; the message says which rule and what is allowed."""

    status = 422
    code = "illegal"

    def __init__(self, error: RuleError) -> None:
        super().__init__(error.message, "illegal")
        self.rule = error.code
        self.params = error.params


class InvalidGame(ValueError):
    """Game settings that cannot make a game (bad address, same player twice...)."""


class ComputerName(InvalidGame):
    """A person's name that reads as the computer's, which would let them pass for it."""

    def __init__(self, name: str) -> None:
        super().__init__(f"{name!r} is how this service names the computer: choose another name")
        self.name = name


class NameWithAddress(InvalidGame):
    """A person's name that holds a web or email address: a stranger's link in the subject
    and greeting of an email to someone who never asked for one."""

    def __init__(self, name: str) -> None:
        super().__init__(f"{name!r}: a name cannot hold a web or email address")
        self.name = name


@dataclass(frozen=True)
class Seating:
    """Who sits in a seat when a game is created: a person, or the computer at a level."""

    email: str
    name: str
    language: str | None = None
    computer: str | None = None
    # Whether the person takes the game's emails from its start (the computer takes none).
    emails: bool = True

    @classmethod
    def the_computer(cls, level: str) -> Seating:
        """The computer at ``level`` (one of :data:`service.bots.LEVELS`): no address, no link."""
        return cls(email="", name=f"the computer, {level}", computer=level)


def clean_email(address: str) -> str:
    """A normalised email address, or :class:`InvalidGame` saying why it is not one.

    The part before the @ must be ASCII: any other needs SMTPUTF8, which the
    service's SMTP server need not speak, so mail to it could never leave.
    """
    try:
        found = validate_email(address, check_deliverability=False, allow_smtputf8=False)
    except EmailNotValidError as exc:
        raise InvalidGame(f"{address!r} is not an email address: {exc}") from None
    return found.normalized.lower()


# The longest reason an admin may give the players for ending their game.
MAX_REASON = 300


def clean_reason(reason: str) -> str:
    """An admin's reason for ending a game, on one line; :class:`InvalidGame` if too long."""
    printable = "".join(ch if ch.isprintable() else " " for ch in reason)
    cleaned = " ".join(printable.split())
    if len(cleaned) > MAX_REASON:
        raise InvalidGame(f"A reason is at most {MAX_REASON} characters.")
    return cleaned


def clean_name(name: str, fallback: str) -> str:
    """A display name on one line, at most ``NAME_LENGTH`` characters (no control characters)."""
    printable = "".join(ch if ch.isprintable() else " " for ch in name)
    return " ".join(printable.split())[:NAME_LENGTH] or fallback


def person_name(name: str) -> str:
    """``name`` (cleaned already, :func:`clean_name`) if a person may go by it;
    :class:`ComputerName` if it reads as the computer's, :class:`NameWithAddress` if it
    holds a web or email address."""
    if poses_as_computer(name):
        raise ComputerName(name)
    if holds_an_address(name):
        raise NameWithAddress(name)
    return name


def create_game(
    keeper: Seating,
    shadow: Seating,
    *,
    seed: int | None = None,
    look: str = "standard",
    days_per_move: int | None = None,
    match: Match | None = None,
    match_game: int | None = None,
    waiting: bool = False,
) -> Game:
    """Deal a new game, seat both players with fresh links, and queue the invitations.

    A ``waiting`` game is dealt but not started: no emails, no deadline, until
    :func:`start_waiting_game` (the public page waits for the opponent to accept).
    A seat the computer plays gets no address, no link and no email; at least
    one seat is a person's, and no person's name reads as the computer's
    (:class:`ComputerName`).
    """
    if look not in LOOKS:
        raise InvalidGame(f"unknown look {look!r}; choose {' or '.join(LOOKS)}")
    seats = {"keeper": keeper, "shadow": shadow}
    for seating in seats.values():
        if seating.computer is not None and seating.computer not in bots.LEVELS:
            raise InvalidGame(
                f"no computer level {seating.computer!r}; choose {', '.join(bots.LEVELS)}"
            )
    emails = {
        seat: clean_email(seating.email)
        for seat, seating in seats.items()
        if seating.computer is None
    }
    if not emails:
        raise InvalidGame("a person must play at least one seat")
    if len(set(emails.values())) < len(emails):
        raise InvalidGame("the Keeper and the Shadow need two different email addresses")
    names = {seat: clean_name(seating.name, seat.capitalize()) for seat, seating in seats.items()}
    for seat, name in names.items():
        # A match's second game copies the names of its first, which may predate this check.
        if seat in emails and match_game != 2:
            person_name(name)
    if days_per_move is None:
        days_per_move = current_app.config["DEFAULT_DAYS_PER_MOVE"]
    if days_per_move < 0:
        raise InvalidGame("days per move cannot be negative")
    # Each address has a home link (given before the game is made: that locks rows, and a
    # read would flush the game half built).
    for email in sorted(emails.values()):  # locked in one order: games made at once wait
        give_home_key(email)
    # Read before the game is made: a read would flush it half built.
    languages = {
        seat: seating.language or address_language(emails.get(seat))
        for seat, seating in seats.items()
    }
    state = new_game(seed=secrets.randbits(63) if seed is None else seed)
    game = Game(
        status="waiting" if waiting else "active",
        state=state,
        version=0,
        look=look,
        days_per_move=days_per_move or None,
        match=match,
        match_game=match_game,
    )
    for seat, seating in seats.items():
        person = seating.computer is None
        game.players.append(
            Player(
                seat=seat,
                email=emails.get(seat),
                name=names[seat],
                computer_level=seating.computer,
                link_key=new_link_key() if person else None,
                notify=person and seating.emails,
                language=languages[seat],
            )
        )
    game.events.add(Event(kind="created", version=0, note=f"seed {state['seed']}"))
    db.session.add(game)
    if not waiting:
        _start(game)
    db.session.flush()
    log.info("game %d dealt: %s", game.id, "waiting for its players" if waiting else "started")
    return game


def _start(game: Game) -> None:
    game.status = "active"
    game.started_at = utcnow()
    _refresh(game, previous=[], mover=None)
    db.session.flush()
    notify.game_started(game)


def start_waiting_game(game_id: int) -> Game:
    """Start a game that waited for its players: deadlines run and invitations go out."""
    game = lock_game(game_id)
    if game.status != "waiting":
        raise GameClosed(f"This game is {describe_status(game.status)}.")
    # A vacation taken as the game starts locks its address's row, then the games in play
    # (not this one, waiting until the commit): the first deadline is counted from the
    # vacations read under those rows' locks, the game and its players read again.
    lock_settings(player.email for player in game.players)
    game = lock_game(game_id)
    # Starting is a change: a page shown while the game waited (an admin's) is stale after it.
    game.version += 1
    _start(game)
    game.events.add(Event(kind="started", version=game.version))
    db.session.flush()
    log.info("game %d started", game.id)
    return game


def drop_waiting_game(game_id: int, reason: str) -> None:
    """Cancel a game that never started (in the caller's transaction)."""
    game = lock_game(game_id)
    if game.status == "waiting":
        _close(game, "cancelled", None)
        game.events.add(Event(kind="cancelled", version=game.version, note=reason))
        db.session.flush()
        log.info("game %d cancelled before it started: %s", game.id, reason)


def create_match(keeper: Seating, shadow: Seating, **options: Any) -> Game:
    """Start a return match: this first game, and a second with roles swapped once it ends."""
    match = Match()
    db.session.add(match)
    return create_game(keeper, shadow, match=match, match_game=1, **options)


def apply_move(
    player_id: int,
    version: object,
    action: object,
    note: object = None,
    *,
    link_key: str | None = None,
) -> Game:
    """Apply one player's move under a row lock on its game, with its event row.

    ``version`` is the game version the player saw; ``action`` is in the replay
    notation without the seat; ``note`` is an optional note to the opponent
    (:mod:`service.notes`), dropped while the game's notes are off. Raises a
    :class:`MoveError` and changes nothing when the move is malformed, stale,
    illegal or the game is closed. With ``link_key``, the key a link signs, the
    move is refused (:class:`UnknownLink`) unless the link is the player's: a
    caller that has not read the player checks the link under the same lock.
    """
    if not isinstance(version, int) or isinstance(version, bool):
        raise BadMove('"version" must be the integer version of the game you saw')
    try:
        text = notes.clean(note)
    except notes.BadNote as exc:
        invisible = isinstance(exc, notes.InvisibleCharacter)
        raise NoteRefused(str(exc), invisible=invisible) from None
    try:
        game, player = _lock(player_id)
        if link_key is not None and not key_matches(player.link_key, link_key):
            raise UnknownLink(NOT_FOUND)
        if game.status == "waiting":
            raise GameClosed("This game has not started: it takes moves once both players join.")
        if game.status != "active":
            raise GameClosed(
                f"This game is {describe_status(game.status)}: it takes no more moves."
            )
        if _late(game, player):
            raise DeadlinePassed(
                "The deadline of this move has passed: the game ends by timeout, and takes "
                "no more moves."
            )
        # The second half of an exchange or swap is made against the version of the first.
        if version != game.version and not _opponent_chose_since(game, player.seat, version):
            raise stale_move(game, player.seat, version)
        action = _own_action(action, player.seat)
        try:
            state = apply(game.state, player.seat, action)
        except ActionError as exc:
            raise BadMove(str(exc)) from None
        except RuleError as exc:
            raise IllegalMove(exc) from None
        # The mover has seen the history up to their own move. Set before the game's
        # changes so that they are written together (:func:`_write_changes`). Set only
        # when it moved (a lead after the mover's own trick does not): there is nothing
        # to write otherwise.
        if player.history_mark != len(state["history"]):
            player.history_mark = len(state["history"])
        # A note is kept while the game's notes are on; a move without one need not ask.
        _record(game, player.seat, action, state, text if text and notes.are_on(game) else None)
        db.session.flush()
    except StaleDataError:
        raise StaleVersion(
            "Another move was applied at the same moment: reload and try again."
        ) from None
    log.info("game %d: the %s moved (version %d)", game.id, player.seat, game.version)
    after_commit(metrics.MOVES.inc)
    return game


def resign(player_id: int, version: object, *, link_key: str | None = None) -> Game:
    """The player gives the game up: their opponent wins it, and is told.

    ``version`` is the game version the player saw: one that has moved on since
    (:class:`StaleVersion`) changes nothing, as the game may no longer be the one
    they meant to give up. A closed game (:class:`GameClosed`) has nothing to
    resign. ``link_key`` as for :func:`apply_move`. A player may resign whoever
    owes the move, the game's first of a return match too, which ends the match,
    as a forfeit does.
    """
    game, player = _lock_linked(player_id, version, link_key)
    if game.status == "resigned" and game.winner != player.seat:
        raise AlreadyResigned("You have resigned this game already: nothing more was changed.")
    if game.status == "waiting":
        raise GameClosed("This game has not started: there is nothing to resign yet.")
    if game.status != "active":
        raise GameClosed("This game is over: there is nothing to resign.")
    if _overdue(game):
        raise DeadlinePassed(
            "The deadline of the move owed has passed: the game ends by timeout, and can no "
            "longer be resigned."
        )
    if version != game.version:  # not echoed: JSON's 1e300 is a version too
        raise StaleVersion(
            f"The game is at version {game.version}, not the one you sent: nothing was "
            "changed. Look at the game again, then resign if you still mean to."
        )
    _close(game, "resigned", other(player.seat))
    _seat_event(game, "resign", player.seat, f"the {player.seat} resigned")
    figures.record(game)
    notify.resigned(game, player.seat)
    db.session.flush()
    log.info("game %d: the %s resigned (version %d)", game.id, player.seat, game.version)
    return game


def remind_opponent(player_id: int, version: object, *, link_key: str | None = None) -> Game:
    """Email the player's opponent that their move is awaited: once per move, once it has
    waited :data:`REMIND_AFTER`; :class:`ReminderRefused` says why not, and changes nothing.

    ``version`` is the game version the player saw, as for a move: one the game has
    moved on from (the opponent has moved) reminds of nothing. ``link_key`` as for
    :func:`apply_move`.
    """
    game, player = _lock_linked(player_id, version, link_key)
    if game.status != "active":
        raise GameClosed("This game is not in play: there is no move to remind anyone of.")
    if version != game.version:
        raise StaleVersion(
            f"The game is at version {game.version}, not the one you sent: nothing was sent. "
            "Look at the game again."
        )
    refused = reminder_refusal(game, player.seat, utcnow())
    if refused == "too_soon":
        raise ReminderRefused(refused, ready=game.updated_at + REMIND_AFTER)
    if refused is not None:
        raise ReminderRefused(refused)
    opponent = other(player.seat)
    _seat_event(game, "reminded", player.seat, f"the {player.seat} reminded the {opponent}")
    notify.reminded(game.player(opponent))
    db.session.flush()
    log.info("game %d: the %s reminded the %s", game.id, player.seat, opponent)
    return game


def reminded(game: Game) -> bool:
    """Whether the move the game awaits at its version was reminded of already."""
    found = select(Event.id).where(
        Event.game_id == game.id, Event.kind == "reminded", Event.version == game.version
    )
    return db.session.scalar(found.limit(1)) is not None


def remind_ready(changed: datetime, now: datetime) -> bool:
    """Whether a move awaited since the game last ``changed`` has waited long enough to be
    reminded of (:data:`REMIND_AFTER`)."""
    return changed + REMIND_AFTER <= now


def past_deadline(deadline: datetime | None, now: datetime) -> bool:
    """Whether the move due by ``deadline`` is late at ``now``: the sweep ends its game at
    its next pass, and a reminder of it is refused ("late")."""
    return deadline is not None and deadline <= now


def reminder_offer(
    changed: datetime, deadline: datetime | None, now: datetime, reminded: Callable[[], bool]
) -> dict[str, bool]:
    """What the move page says of reminding the opponent of a move awaited since the game
    last ``changed``, due by ``deadline``: whether one may be sent yet (``remind_ready``),
    whether the deadline has passed (``remind_late``) and, once one may, whether it was
    (``reminded``, asked only then: before, the page says from when, whatever was sent)."""
    ready = remind_ready(changed, now)
    return {
        "remind_ready": ready,
        "remind_late": past_deadline(deadline, now),
        "reminded": ready and reminded(),
    }


def reminder_refusal(game: Game, seat: Seat, now: datetime) -> str | None:
    """Why the player in ``seat`` cannot remind their opponent now (a key of
    :data:`REMINDER_REFUSALS`), or ``None``."""
    opponent = game.player(other(seat))
    acting = to_act(game.state)
    if opponent.seat not in acting:
        return "not_owed"
    if seat in acting:  # both owe their half of an exchange or swap
        return "yours_first"
    if opponent.is_computer:
        return "computer"
    if _overdue(game):
        return "late"
    if not remind_ready(game.updated_at, now):
        return "too_soon"
    if reminded(game):
        return "reminded"
    assert opponent.email is not None  # a person
    with db.session.no_autoflush:
        if vacation_end([opponent.email], now) is not None:
            return "away"
    return None


def _seat_event(game: Game, kind: str, seat: Seat, note: str) -> None:
    """Log what the player in ``seat`` did to ``game`` other than a move, at its version."""
    game.events.add(Event(kind=kind, seat=seat, version=game.version, note=note))


def _lock_linked(player_id: int, version: object, link_key: str | None) -> tuple[Game, Player]:
    """The player's game, locked, and the player, for a change asked for against the game's
    ``version`` through a link signed with ``link_key`` (``None``: the caller read the
    player): :class:`BadMove` for a version that is no whole number, :class:`UnknownLink`
    for a link that is not the player's."""
    if not isinstance(version, int) or isinstance(version, bool):
        raise BadMove('"version" must be the integer version of the game you saw')
    game, player = _lock(player_id)
    if link_key is not None and not key_matches(player.link_key, link_key):
        raise UnknownLink(NOT_FOUND)
    return game, player


def _overdue(game: Game) -> bool:
    """Whether a person owes a move of ``game`` whose deadline has passed: the sweep ends it
    at its next pass, by a timeout or abandoned, and nothing a player sends changes that."""
    people = any(not game.player(seat).is_computer for seat in to_act(game.state))
    return past_deadline(game.deadline, utcnow()) and people


def _late(game: Game, player: Player) -> bool:
    """Whether the person in ``player`` owes a move of ``game`` whose deadline has passed:
    the sweep ends such a game at its next pass, whoever sends a move meanwhile."""
    owes = player.seat in to_act(game.state) and not player.is_computer
    return owes and past_deadline(game.deadline, utcnow())


def _lock(player_id: int) -> tuple[Game, Player]:
    """The player's game, locked for update until the transaction ends, and the player.

    From the player's id alone: the lock finds the game by it (:func:`_locked`).
    """
    game = _locked("player", player_id)
    if game is None:
        raise UnknownLink(NOT_FOUND)
    return game, next(player for player in game.players if player.id == player_id)


def turn_notes_off(player: Player) -> None:
    """Turn the notes of the player's game off, for both players, for good.

    Under the game's lock, as every change to a game: two players turning them
    off at the same moment write one event, at the version the game is at.
    """
    game = lock_game(player.game_id)
    if notes.are_on(game):
        _seat_event(game, "notes_off", player.seat, f"the {player.seat} turned notes off")
        db.session.flush()


def lock_game(game_id: int) -> Game:
    """The game, re-read with its players and locked for update until the transaction ends."""
    game = _locked("game", game_id)
    if game is None:
        raise InvalidGame(f"no game {game_id}")
    return game


def _locked(by: Literal["game", "player"], key: int) -> Game | None:
    """The game of id ``key``, or of the player of id ``key``, locked for update, then read
    again with its players, each with the vacation of its address (a deadline given then
    counts from its end, :func:`_vacation_end`).

    Two statements, the lock and then the read. At READ COMMITTED a statement that
    waits for a row's lock reads that row again once it holds it, but every other row
    as it was when the statement began: read with the lock, the players and their
    vacations would miss what the transaction that held the lock committed (an
    address corrected and its link revoked, a vacation taken), and a move would be
    taken through a dead link, or given a deadline that runs through a vacation.
    """
    # By Core on the session's connection: the ORM's execution of a statement that loads no
    # object cost a move some 65 calls (bench/calls.py).
    game_id = (
        db.session.connection().execute(_lock_statement(by), {"key": key}).scalar_one_or_none()
    )
    if game_id is None:
        return None
    return db.session.scalars(_read_statement(), {"game_id": game_id}).unique().one()


@cache
def _lock_statement(by: Literal["game", "player"]) -> Select[int]:
    """The lock of :func:`_locked`, built once: building it costs more than running it."""
    key = bindparam("key", type_=Integer)
    which: ColumnElement[int] = (
        select(Player.game_id).where(Player.id == key).scalar_subquery() if by == "player" else key
    )
    return select(Game.id).where(Game.id == which).with_for_update(of=Game)


@cache
def _read_statement() -> Select[Game]:
    """The read of :func:`_locked`, built once."""
    return (
        select(Game)
        .where(Game.id == bindparam("game_id", type_=Integer))
        .options(joinedload(Game.players).undefer(Player.vacation_until))
        .execution_options(populate_existing=True)
    )


def _check_version(game: Game, seen: int, again: str) -> None:
    """Refuse a change asked for against version ``seen`` of the game, locked by the caller,
    if it has moved on since (:class:`StaleVersion`): nothing of the change is applied.

    ``again`` ends the refusal's message: what to do now.
    """
    if seen != game.version:
        raise StaleVersion(
            f"The game has moved on (version {game.version}, you sent {seen}): {again}"
        )


def stale_move(game: Game, seat: Seat, seen: int) -> StaleVersion:
    """The refusal of a move by ``seat`` made against version ``seen`` of ``game`` (locked),
    which has moved on: saying whether the mover's own move came first."""
    if seen > game.version:  # not echoed: JSON's 1e300 is a version too
        return StaleVersion(
            f"The game has not reached the version you sent (it is at version {game.version}): "
            "reload it and make your move again."
        )
    if 0 <= seen < game.version and game.has_moved(seat, since=seen):
        return StaleVersion(
            f"You have moved since version {seen} of the game (it is at version "
            f"{game.version}): nothing more was changed. Reload it to see the game now.",
            already_moved=True,
        )
    return StaleVersion(
        f"The game has moved on (version {game.version}, you sent {seen}): "
        "reload it and make your move again."
    )


def _opponent_chose_since(game: Game, seat: Seat, version: int) -> bool:
    """Whether the only change since ``version`` is the opponent's half of this exchange or swap.

    Both halves of a simultaneous choice are made against the same version and
    may arrive in either order; the second one is not stale. A move that began
    a new exchange or swap (the end of a round, a swap trick) is a change.
    """
    state = game.state
    if game.version != version + 1 or state["phase"] not in CHOICE_PHASES:
        return False
    opponent = other(seat)
    if seat not in to_act(state) or state["pending"][opponent] is None:
        return False
    last = db.session.scalars(
        select(Event)
        .where(Event.game_id == game.id, Event.kind == "move")
        .order_by(Event.id.desc())
        .limit(1)
    ).first()
    return last is not None and last.seat == opponent and state["phase"] in (last.action or {})


def _own_action(action: object, seat: Seat) -> dict[str, Any]:
    if not isinstance(action, dict):
        raise BadMove('a move is an object such as {"play": "4S", "name": "H"}')
    if action.get("seat", seat) != seat:
        raise BadMove(f"this link plays for the {seat}, not the {action['seat']}")
    return {key: value for key, value in action.items() if key != "seat"}


def _record(
    game: Game,
    seat: Seat | None,
    action: dict[str, Any] | None,
    state: State,
    note: str | None = None,
) -> None:
    """Store a new engine state, its event row (with the mover's note) and the emails it causes."""
    before = game.state
    game.state = state
    game.version += 1
    _refresh(game, previous=to_act(before), mover=seat)
    event: dict[str, Any] = {"kind": "move", "seat": seat, "action": action, "note": note}
    event.update(game_id=game.id, version=game.version, created_at=game.updated_at)
    params = {f"event_{key}": value for key, value in event.items()}
    writes = [Write(_move_event_statement(), params)]
    if seat is not None:
        writes.append(notify.turn_withdrawn(game.player(seat)))
    _write_changes(game, writes + notify.moved(game, before, seat))
    if game.status == "finished" and game.match_id is not None and game.match_game == 1:
        _start_second_game(game)


@cache
def _move_event_statement() -> Insert:
    """The INSERT of a move's event row (:func:`_record`), its parameters named ``event_``
    and the column's name; built once: building it costs more than running it.

    Core, not an :class:`Event` added to the session: no move reads the object, and the
    unit of work's insert cost a move some 470 of its 4,700 function calls
    (``bench/calls.py``). Inline: nothing reads the new row's id, and returning it cost a
    move some 30 calls.
    """
    table = cast(Table, Event.__table__)
    columns = ("game_id", "kind", "seat", "action", "version", "note", "created_at")
    values = {name: bindparam(f"event_{name}", type_=table.c[name].type) for name in columns}
    return insert(table).values(values).inline()


def _write_changes(game: Game, writes: list[Write]) -> None:
    """Write what changed of the game's row (locked) and of its players' rows, by Core, the
    game's against the version it was read at, as the ORM's flush would have, with the
    move's other ``writes``: one statement (:mod:`service.writes`), one round trip. Raises
    :class:`StaleDataError`, as that flush does, when the game's row is at another version.

    Not the ORM's flush: its unit of work cost a move some 1,000 of its 4,200 function
    calls (``bench/calls.py``) for one or two UPDATEs. The objects read as written
    afterwards, with their new values: nothing is written twice, and whatever reads them
    next sees what the rows hold. An object with a change to something other than a
    column (a relationship) is left to the flush, whole.
    """
    # The game's row last: the statement's row count is its own.
    rows: list[Game | Player] = [*game.players, game]
    changed = [(row, _changed_columns(row)) for row in rows]
    writes = writes + [_row_write(row, values) for row, values in changed if values]
    if writes:
        done = write_together(writes)
        if changed[-1][1] and done.rowcount != 1:
            raise StaleDataError(
                f"UPDATE statement on table games expected to update 1 row(s); "
                f"{done.rowcount} were matched."
            )
    for row, values in changed:
        state = instance_state(row)
        if values is not None and state.modified:
            # What the ORM's flush does with an object it has written: nothing left to flush.
            state._commit_all(state.dict, db.session.identity_map)


def _changed_columns(row: Game | Player) -> dict[str, Any] | None:
    """The columns of one loaded object's row whose values changed since it was read, by
    name; ``None`` for an object with a change to something other than a column, left to
    the flush (see :func:`_write_changes`)."""
    state = instance_state(row)
    columns = state.mapper.columns
    values = {}
    for key, before in state.committed_state.items():
        if key not in columns:
            return None
        now = state.dict[key]
        if now != before:
            values[key] = now
    return values


def _row_write(row: Game | Player, values: dict[str, Any]) -> Write:
    """The UPDATE of ``values`` in one object's row (see :func:`_write_changes`), a game's
    only over the version it was read at; its parameters named after the row (``game_``, or
    the player's seat), as a move writes several rows at once."""
    is_game = isinstance(row, Game)
    prefix = "game_" if isinstance(row, Game) else f"{row.seat}_"
    params = {f"{prefix}{key}": value for key, value in values.items()}
    params[f"{prefix}row_id"] = row.id
    if is_game:
        state = instance_state(row)
        params["game_seen"] = state.committed_state.get("version", state.dict["version"])
    statement = _update_statement("games" if is_game else "players", prefix, tuple(values))
    return Write(statement, params)


@lru_cache(maxsize=128)
def _update_statement(
    table: Literal["games", "players"], prefix: str, columns: tuple[str, ...]
) -> Update:
    """The UPDATE of ``columns`` in one row of ``table`` by :func:`_row_write`, its
    parameters named ``prefix`` and the column's name; games' only over the version it was
    read at. Built once for each."""
    table_ = cast(Table, (Game if table == "games" else Player).__table__)
    statement = update(table_).where(table_.c.id == bindparam(f"{prefix}row_id", type_=Integer))
    if table == "games":
        statement = statement.where(table_.c.version == bindparam(f"{prefix}seen", type_=Integer))
    values = {name: bindparam(f"{prefix}{name}", type_=table_.c[name].type) for name in columns}
    return statement.values(values)


def _refresh(game: Game, *, previous: list[Seat], mover: Seat | None) -> None:
    """Derive the indexed columns (who owes a move, deadline, status) from the state."""
    state = game.state
    now = utcnow()
    acting = to_act(state)
    game.updated_at = now
    game.to_act = "both" if len(acting) == 2 else (acting[0] if acting else "")
    if state["phase"] == OVER:
        game.status = "finished"
        game.winner = state["winner"]
        game.finished_at = now
        game.deadline = None
        figures.record(game)
        return
    # Deadlines are for people: the computer's turns have none (the mail worker makes them).
    people = [seat for seat in acting if not game.player(seat).is_computer]
    # The second half of an exchange or swap keeps the deadline both seats were given.
    still_waiting = bool(people) and set(people) <= set(previous) - {mover}
    if not still_waiting:
        game.deadline = _deadline(game, people, now)
        game.reminded = False


def _deadline(game: Game, acting: list[Seat], now: datetime) -> datetime | None:
    """The deadline of a move owed from now by the people in ``acting`` (none: no deadline).

    Its days count from the end of a vacation that a player who owes it is on
    (a vacation pauses the player's deadlines).
    """
    if not game.days_per_move or not acting:
        return None
    return deadline_after_vacations(game, acting, now) or now + timedelta(days=game.days_per_move)


def deadline_after_vacations(game: Game, acting: list[Seat], now: datetime) -> datetime | None:
    """The deadline that the vacations running now give a move owed by the people in
    ``acting``: its days counted from the end of the last one. ``None`` when none of them
    is away, or the game has no days per move.
    """
    if not game.days_per_move or not acting:
        return None
    away = _vacation_end([game.player(seat) for seat in acting], now)
    if away is None:
        return None
    return max(now, away) + timedelta(days=game.days_per_move)


def pause_deadline(game: Game, seat: Seat, start: datetime, until: datetime, now: datetime) -> None:
    """The player in ``seat``, who owes a move of ``game`` (locked), is away from ``start``
    to ``until``: the move's deadline moves back by that much, and the log says so.

    A deadline passed by ``now`` stays passed: the sweep ends the game, whoever goes away.
    Time already paused for an opponent who owes the move too and is away then counts
    once: the deadline moves back by the part of the vacation theirs does not cover.
    """
    if game.deadline is not None and game.deadline > now:
        covered = _covered_by_others(game, seat, start, until)
        game.deadline = max(game.deadline, start) + (until - start) - covered
        game.reminded = False
    note = f"the {seat} is on vacation until {until.isoformat(timespec='minutes')}"
    game.events.add(Event(kind="vacation", version=game.version, seat=seat, note=note))


def _covered_by_others(game: Game, seat: Seat, start: datetime, until: datetime) -> timedelta:
    """How much of ``start`` to ``until`` the vacations of the others who owe the move (away
    at ``start``) already pause: a time paused counts once, however many are away."""
    others = [game.player(owing) for owing in to_act(game.state) if owing != seat]
    theirs = _vacation_end(others, start)
    return max(min(until, theirs) - start, timedelta(0)) if theirs else timedelta(0)


def _vacation_end(players: list[Player], now: datetime) -> datetime | None:
    """When the last of these players comes back from a vacation running at ``now``; ``None``
    when none of them is away.

    From what was read with them after the game's lock (:func:`_read_statement`); a player
    not read so (a new game's), or whose address has changed since, is asked for in one
    statement.
    """
    if not all(_vacation_read(player) for player in players):
        # Nothing to flush for this read: the game's row is written once, deadline and all.
        with db.session.no_autoflush:
            return vacation_end((player.email for player in players), now)
    ends = (player.vacation_until for player in players)
    return max((end for end in ends if end is not None and end > now), default=None)


def _vacation_read(player: Player) -> bool:
    """Whether the player's ``vacation_until`` was read with them, for the address they have."""
    state = instance_state(player)
    return "vacation_until" not in state.unloaded and "email" not in state.committed_state


def end_pause(game: Game, seat: Seat, unused: timedelta, now: datetime) -> None:
    """The player in ``seat``, who owes a move of ``game`` (locked), is back ``unused``
    early: the deadline loses the pause not used, but for the part of it that the
    opponent's own vacation, still running, pauses a move both owe; and the log says so.

    A deadline brought forward is emailed to both players: the opponent may have been
    told the later one, and the player reads in their own zone what they owe by when.
    One already as near as a reminder's is reminded of by that email, as an admin's
    extension is (:func:`extend_deadline`): the sweep sends no second one about it."""
    if game.deadline is not None:
        kept = _covered_by_others(game, seat, now, now + unused)
        # Earlier by the unused pause the opponent's does not cover: never later.
        earlier = min(game.deadline, max(game.deadline - unused + kept, now))
        if earlier != game.deadline:
            # A reminder sent during the vacation gave the later deadline: another is due,
            # unless the email of the earlier one is as near as a reminder.
            game.deadline = earlier
            game.reminded = earlier - now <= reminder_before(game.days_per_move or 0)
            notify.deadline_brought_forward(game, seat)
    game.events.add(
        Event(kind="vacation", version=game.version, seat=seat, note="back from vacation")
    )


def _start_second_game(first: Game) -> Game:
    """Deal the return match's second game, with the roles swapped.

    Each person takes its emails as they took the first game's: a stop of theirs (that
    game's, or every email) holds for the whole match, and emails the first withheld
    from its start are withheld from the second's too, until invitations are taken again.
    """
    from .invitations import withheld_since_start, withhold_emails  # it imports this module

    keeper, shadow = first.player("keeper"), first.player("shadow")
    second = create_game(
        replace(seating_of(shadow), emails=shadow.notify),
        replace(seating_of(keeper), emails=keeper.notify),
        look=first.look,
        days_per_move=first.days_per_move or 0,
        match=first.match,
        match_game=2,
    )
    for player in (keeper, shadow):
        if not player.is_computer and withheld_since_start(player):
            withhold_emails(second, other(player.seat))
    return second


def seating_of(player: Player) -> Seating:
    """The seating that puts this player in a new game: the same person, or the same computer."""
    if player.computer_level is not None:
        return Seating.the_computer(player.computer_level)
    assert player.email is not None  # a person has an address
    return Seating(player.email, player.name, player.language)


def _admin_event(game: Game, actor: str, note: str, kind: str = "admin") -> None:
    """Log a change made other than by a move, in the game's log and the service's."""
    game.events.add(Event(kind=kind, version=game.version, actor=actor, note=note))
    log.info("game %d: %s (%s)", game.id, without_addresses(note), actor)


def _named(seat: str, game: Game) -> str:
    """A seat as the log (in English) names it: ``the keeper``, or ``Jekyll`` in a classic
    game. (A message to an admin names it as the pages do: :func:`.game_text.the_seat`.)"""
    return f"the {seat}" if game.look == "standard" else seat_name(seat, game.look)


# The admin actions on a game that give one of its seats a new link key, as the audit trail
# names them (:func:`rotate_link`, :func:`correct_address`).
ROTATE, CORRECT_ADDRESS = "rotate", "correct_address"
NEW_LINK_ACTIONS = (ROTATE, CORRECT_ADDRESS)


def _by_admin(game: Game, actor: str, action: str, note: str, kind: str = "admin") -> None:
    """Log an admin's change in the game's log and in the audit trail (:mod:`service.audit`)."""
    _admin_event(game, actor, note, kind)
    audit.record(actor, action, note, game_id=game.id)


def _close(game: Game, status: str, winner: Seat | None) -> None:
    """End a game other than by play; a new version tells open pages it has ended."""
    now = utcnow()
    game.version += 1
    game.status = status
    game.winner = winner
    game.to_act = ""
    game.deadline = None
    game.finished_at = now
    game.updated_at = now


def _open_game(game_id: int, statuses: tuple[str, ...] = ("active",), why: str = "") -> Game:
    """The game, locked, if its status is one of ``statuses``; else :class:`GameClosed`, whose
    message ``why`` ends."""
    game = lock_game(game_id)
    if game.status not in statuses:
        raise GameClosed(f"This game is {describe_status(game.status)}{why}.")
    return game


def _with_reason(note: str, reason: str) -> str:
    return f"{note}: {reason}" if reason else note


# What an admin shown an older version of a game does about it.
SEEN_AGAIN = "nothing was changed. Here it is now: do it again if you still mean to."


def cancel_game(game_id: int, actor: str, reason: str = "", seen: int | None = None) -> Game:
    """Cancel a game in play (both players are told, with the ``reason`` if one is given), or
    one still waiting for its players.

    ``seen``, if given, is the version of the game the admin was shown: if a move was made
    since, nothing changes (:class:`StaleVersion`).
    """
    game = _open_game(game_id, ("waiting", "active"))
    if seen is not None:
        _check_version(game, seen, SEEN_AGAIN)
    started = game.status == "active"
    reason = clean_reason(reason)
    _close(game, "cancelled", None)
    if not started:  # its invitation is answered no more: its pages and home pages say so
        for invitation in db.session.scalars(
            select(Invitation).where(
                Invitation.game_id == game.id, Invitation.status.in_(OPEN_INVITATIONS)
            )
        ):
            # A creator who confirmed waits for an answer; one who never did is not written to.
            if invitation.status == "invited":
                notify.invitation_email(
                    invitation, "invitation_cancelled", invitation.creator_email, reason=reason
                )
            invitation.status = "closed"
    _by_admin(game, actor, "cancel", _with_reason("cancelled the game", reason))
    if started:
        notify.ended(game, reason=reason)
    db.session.flush()
    return game


def declare_forfeit(
    game_id: int, seat: str, actor: str, reason: str = "", seen: int | None = None
) -> Game:
    """Record that ``seat`` forfeits: the other seat wins; both players are told, with the
    ``reason`` if one is given.

    ``seen``, if given, is the version of the game the admin was shown, as for
    :func:`cancel_game`.
    """
    if not is_seat(seat):
        raise InvalidGame(f"a seat is keeper or shadow, not {seat!r}")
    game = _open_game(game_id)
    if seen is not None:
        _check_version(game, seen, SEEN_AGAIN)
    reason = clean_reason(reason)
    _close(game, "finished", other(seat))
    figures.record(game)
    note = _with_reason(f"declared a forfeit by {_named(seat, game)}", reason)
    _by_admin(game, actor, "forfeit", note, kind="forfeit")
    notify.ended(game, reason=reason)
    db.session.flush()
    return game


def extend_deadline(game_id: int, days: int, actor: str, seen: datetime | None = None) -> Game:
    """Give the player(s) who owe a move ``days`` more days (from now if already late);
    both players are emailed the new deadline.

    ``seen``, if given, is the deadline the admin was shown: if it is no longer the game's
    (the same form sent twice, or a move made meanwhile), nothing changes.
    A game without days per move has no deadline to extend: one made up here
    would get no reminder from the sweep, only a timeout. A new deadline already
    as near as a reminder's (:func:`reminder_before`) is reminded of by the
    email that gives it: the sweep sends no second one about it.
    """
    if not 1 <= days <= 60:
        raise InvalidGame("extend a deadline by 1 to 60 days")
    game = _open_game(game_id)
    if not game.days_per_move or game.deadline is None:
        raise InvalidGame("This game has no deadline to extend.")
    if seen is not None and seen != game.deadline:
        raise StaleVersion(
            "The deadline changed since this page was loaded (extended already, or a move "
            "was made): nothing was changed. Here it is now."
        )
    now = utcnow()
    game.deadline = max(game.deadline, now) + timedelta(days=days)
    game.reminded = game.deadline - now <= reminder_before(game.days_per_move)
    _by_admin(
        game, actor, "extend", f"extended the deadline by {days} day{'s' if days > 1 else ''}"
    )
    notify.deadline_extended(game)
    db.session.flush()
    return game


def _person(player_id: int) -> Player:
    """The player, who must be a person: the computer has no link and no address."""
    player = db.session.get(Player, player_id)
    if player is None:
        raise InvalidGame(f"no player {player_id}")
    if player.is_computer:
        raise InvalidGame(
            f"the computer plays {the_seat(player.seat, player.game.look)}: it has no link"
        )
    return player


# Why a game that is over keeps its links as they are: the dashboard offers no link action
# for it, and its players reach it from their home page, which every email links to.
LINKS_KEPT = ": its links are neither resent nor replaced (its players find it on their home page)"


def _game_for_links(player: Player) -> Game:
    """The player's game, locked, if it is in play: no link goes out before it starts (the
    invitee has not accepted, the creator may not have confirmed their address) or after
    it ends (:data:`LINKS_KEPT`); else :class:`GameClosed`."""
    game = _open_game(player.game_id, OPEN_STATUSES, LINKS_KEPT)
    if game.status == "waiting":
        raise GameClosed("This game is waiting for its players: its links go out when it starts.")
    return game


def rotate_link(player_id: int, actor: str, send: bool = False) -> Player:
    """Give the player of a game in play a new link; the old one stops working at once.
    With ``send``, the new link is emailed to them in the same step."""
    player = _person(player_id)
    game = _game_for_links(player)
    player.link_key = new_link_key()
    db.session.flush()
    note = f"rotated {_named(player.seat, game)}'s link"
    if send:
        notify.link(player)
        note += " and sent the new one"
    _by_admin(game, actor, ROTATE, note)
    db.session.flush()
    return player


def resend_link(player_id: int, actor: str) -> Player:
    """Email the player of a game in play their link again."""
    player = _person(player_id)
    game = _game_for_links(player)
    notify.link(player)
    _by_admin(game, actor, "resend", f"resent {_named(player.seat, game)}'s link")
    db.session.flush()
    return player


def correct_address(player_id: int, address: str, actor: str, seen: str | None = None) -> Player:
    """Put the player's corrected address in the seat: it gets a fresh link by email, and the
    link sent to the old address stops working at once.

    Raises :class:`InvalidGame` for an address that is not one, is the seat's already, or is
    the opponent's (one person would hold both seats and see both hands). ``seen``, if
    given, is the address the admin was shown: if the seat's is no longer that one (another
    admin corrected it since), nothing changes (:class:`StaleVersion`).
    """
    player = _person(player_id)
    game = _open_game(player.game_id)  # re-reads the player too, under the game's lock
    if seen is not None and seen != player.email:
        raise StaleVersion(
            f"{upfirst(the_seat(player.seat, game.look))}'s address was changed to {player.email} "
            f"since this page was loaded: {SEEN_AGAIN}"
        )
    new = clean_email(address.strip())
    if new == player.email:
        raise InvalidGame(f"{new} is {the_seat(player.seat, game.look)}'s address already.")
    opponent = game.player(other(player.seat))
    if new == opponent.email:
        raise InvalidGame(
            f"{new} is {the_seat(opponent.seat, game.look)}'s address: a game needs two different "
            "addresses."
        )
    old = player.email
    player.email = new
    player.link_key = new_link_key()
    give_home_key(new)
    db.session.flush()
    notify.link(player)
    _by_admin(
        game,
        actor,
        CORRECT_ADDRESS,
        f"corrected {_named(player.seat, game)}'s address from {old} to {new}",
    )
    db.session.flush()
    return player


def expire(game_id: int, now: datetime) -> Game | None:
    """Apply a passed deadline: the late player loses; if both were late, the game is abandoned.

    Only people are ever late: a deadline is never the computer's (see :func:`_refresh`).
    Returns ``None`` when the game is not (or no longer) past its deadline.
    """
    game = lock_game(game_id)
    if game.status != "active" or game.deadline is None or game.deadline > now:
        return None
    late = [seat for seat in to_act(game.state) if not game.player(seat).is_computer]
    if not late:
        return None
    if len(late) == 2:
        _close(game, "abandoned", None)
        _admin_event(game, "deadline", "neither player chose in time", kind="timeout")
    else:
        _close(game, "timed_out", other(late[0]))
        _admin_event(game, "deadline", f"the {late[0]} ran out of time", kind="timeout")
    notify.ended(game)
    db.session.flush()
    return game


# A move is reminded of a day before its deadline; with one day per move, every deadline is
# already within a day: halfway instead.
REMINDER_BEFORE = timedelta(hours=24)
SHORT_REMINDER_BEFORE = timedelta(hours=12)


def reminder_before(days_per_move: int) -> timedelta:
    """How long before its deadline a move of a game with ``days_per_move`` is reminded of."""
    return SHORT_REMINDER_BEFORE if days_per_move == 1 else REMINDER_BEFORE


def reminders_due(now: datetime) -> list[int]:
    """The games in play whose deadline is near at ``now`` (:func:`reminder_before`) and
    not yet reminded of, whose move no one on vacation owes: read on the (status,
    deadline) index, each reminded under its lock (:func:`remind`), which reads the window
    and the vacations again."""
    owed_by_one_away = (
        select(Player.id)
        .join(AddressSettings, AddressSettings.email == Player.email)
        .where(
            Player.game_id == Game.id,
            or_(Game.to_act == "both", Game.to_act == Player.seat),
            AddressSettings.vacation_until > now,
        )
    )
    return list(
        db.session.scalars(
            select(Game.id).where(
                Game.status == "active",
                Game.deadline > now,
                Game.reminded.is_(False),
                or_(
                    and_(Game.days_per_move > 1, Game.deadline <= now + REMINDER_BEFORE),
                    and_(Game.days_per_move == 1, Game.deadline <= now + SHORT_REMINDER_BEFORE),
                ),
                ~exists(owed_by_one_away),
            )
        )
    )


def remind(game_id: int, now: datetime) -> Game | None:
    """Remind whoever owes a move that their deadline is near (once per deadline).

    Read again under the game's lock: a move made since the sweep read the game may
    have given a new deadline, days away, which is reminded of in its own time. A
    reminder due while a player who owes the move is on vacation (their deadline paused,
    and with it the move both owe) waits for their return, as the opponent's does
    (:func:`reminder_refusal`): the first sweep after it sends it.
    """
    game = lock_game(game_id)
    if game.status != "active" or game.reminded or game.deadline is None:
        return None
    if not now < game.deadline <= now + reminder_before(game.days_per_move or 0):
        return None
    owing = [game.player(seat) for seat in to_act(game.state)]
    if _vacation_end([player for player in owing if not player.is_computer], now) is not None:
        return None
    game.reminded = True
    notify.reminder(game)
    db.session.flush()
    log.info("game %d: a reminder of the deadline to %s", game.id, game.to_act)
    return game


class GameOpen(Exception):
    """The game is still open: what was asked for shows hidden cards, so it waits for the end."""


def review_game(game: Game) -> list[Step]:
    """Every step of a closed game with all cards shown (:mod:`service.rules.review`).

    Raises :class:`GameOpen` while the game can still be played: the steps
    show both hands and the cards set aside.
    """
    return review(game.state, export_game(game)["actions"])


def replay_filename(game: Game) -> str:
    """The name a game's replay file is downloaded under, by its players and admins alike."""
    return f"split-mind-game-{game.id}.json"


def export_game(game: Game, *, in_play: bool = False) -> dict[str, Any]:
    """The game as a replay scenario: its deals, seed and every move in order.

    Raises :class:`GameOpen` while the game can still be played, as its deals
    are secret then, unless ``in_play`` says the caller may see them (an
    operator at the command line).
    """
    if game.status in OPEN_STATUSES and not in_play:
        raise GameOpen(f"game {game.id} is {describe_status(game.status)}")
    actions = [
        {"seat": event.seat, **(event.action or {})}
        for event in db.session.scalars(
            select(Event).where(Event.game_id == game.id, Event.kind == "move").order_by(Event.id)
        )
    ]
    return export(game.state, actions)
