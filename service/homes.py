"""A player's home page, ``/me/<token>``: every game and invitation of one address, and
what the address chose (its emails, its language, its vacation).

:func:`overview` only reads. The other functions change what the address
chose; each flushes and logs what it did, and the home page's routes own the
transaction (:func:`service.unit_of_work.transaction`).

What each stop does, as the page says it:

- "Stop emails about game N", the page's button, stops that game's emails.
- The unsubscribe link in every email about a game stops that game's emails,
  and also marks the address, and the inbox it reaches, as one that takes no invitation
  (:func:`service.invitations.stop_emails`): an email may reach others than its
  player, and a stranger's invitations are what an unsubscribing address least wants.
- Declining an invitation marks the address the same way, for good.
- "Stop all emails" stops every game's emails and every invitation.

Each is undone here: :func:`resume_game_emails` for one game,
:func:`accept_invitations` for invitations, :func:`resume_all_emails` for all.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from flask import current_app
from sqlalchemy import ColumnElement, Select, and_, or_, select, update
from sqlalchemy.orm import undefer

from . import games, invitations, notify, rematch_rules
from .addresses import (
    addresses_away,
    choose_time_zone,
    invitations_waiting,
    is_time_zone,
    known_time_zone,
    settings_for,
    settings_row,
    with_inbox,
    zone_of,
)
from .language import LANGUAGES
from .links import new_link_key
from .models import (
    CLOSED_STATUSES,
    DEFAULT_DIGEST_HOUR,
    DEFAULT_EMAIL_POLICY,
    EMAIL_POLICIES,
    Address,
    AddressSettings,
    Game,
    Invitation,
    OutboxMessage,
    Player,
    db,
    is_row_id,
    utcnow,
)
from .perspective import PlayerView, due_first, player_view, with_seats_and_match
from .rules import Seat, other, to_act

log = logging.getLogger(__name__)

# Finished games a home page lists at a time, the newest first; a link leads to older ones.
FINISHED_SHOWN = 20


class SettingError(ValueError):
    """A choice the home page refuses; the message says why, in English (the page words its
    own refusal in the reader's language)."""


class VacationChanged(SettingError):
    """A vacation asked for from a page that showed another end than the vacation has now:
    the same form sent twice, or another page's since."""


@dataclass
class GameLine:
    """One game of the address, as its home page lists it: never a card of anyone's hand."""

    player: Player
    view: PlayerView
    away_until: str | None = None
    rematch: int | None = None  # the id of the game that follows it as its rematch
    rematch_refusal: str | None = None


@dataclass
class Home:
    """Everything the home page of one address shows."""

    email: str
    settings: AddressSettings | None
    address: Address | None
    live: list[GameLine] = field(default_factory=list)
    # The address's finished games, newest first, FINISHED_SHOWN at a time: ``before`` is the
    # game these come after (None: the newest), ``older`` the last shown when more follow.
    finished: list[GameLine] = field(default_factory=list)
    before: int | None = None
    older: int | None = None
    invited: list[Invitation] = field(default_factory=list)
    sent: list[Invitation] = field(default_factory=list)
    stopped: list[Player] = field(default_factory=list)
    # The games in play whose emails were withheld from their start, as the address took no
    # invitations then (:func:`service.invitations.withheld_from`): not the player's stop.
    withheld: list[Player] = field(default_factory=list)
    # Every email stopped: the invitations and each game's (invitations.stopped_all_emails).
    emails_stopped: bool = False
    vacation_left: int = 0
    on_vacation_until: datetime | None = None
    # Whether coming back now gives the unused whole days back: not to a vacation taken in
    # an earlier year, whose days were that year's.
    days_come_back: bool = False

    # Whether the address, or the inbox it reaches, declined an invitation or stopped emails
    # (:func:`service.rematch_rules.blocked`): then nothing asked on the new-game page is
    # emailed to it either.
    takes_no_invitations: bool = False
    # Whether that is because the address, or its inbox, declined an invitation.
    declined_an_invitation: bool = False

    @property
    def time_zone(self) -> str | None:
        """The address's time zone, once a move page has told it: the page's times are in it.
        ``None`` for one this machine does not know (its times are in UTC), as for none."""
        return known_time_zone(self.settings.time_zone) if self.settings is not None else None

    @property
    def policy(self) -> str:
        """The address's turn-email policy (the default for an address that chose none)."""
        return self.settings.email_policy if self.settings is not None else DEFAULT_EMAIL_POLICY

    @property
    def digest_hour(self) -> int:
        """The hour of the address's digest, in its time zone (the default if it chose none)."""
        return self.settings.digest_hour if self.settings is not None else DEFAULT_DIGEST_HOUR

    @property
    def name(self) -> str:
        """The name the address last played under, for the new-game form."""
        games = self.live + self.finished
        return max(games, key=lambda line: line.player.id).player.name if games else ""


def overview(email: str, now: datetime | None = None, before: int | None = None) -> Home:
    """The address's home page: reads only, so a GET can show it.

    Every game in play, and :data:`FINISHED_SHOWN` finished games: the newest, or with
    ``before``, the id of one of the address's finished games, those that finished before it.
    An id that is not one of them shows the newest.
    """
    now = now or utcnow()
    settings = settings_for(email)
    home = Home(email=email, settings=settings, address=db.session.get(Address, email))
    # Asked only of an address that stopped emails (the read of no Address is not kept).
    unsubscribed = home.address is not None and home.address.unsubscribed_at is not None
    home.emails_stopped = unsubscribed and invitations.stopped_all_emails(email)
    home.takes_no_invitations = rematch_rules.blocked(email)
    if home.takes_no_invitations:  # said of the address, or of its inbox (kim@ for kim+x@)
        rows = [db.session.get(Address, each) for each in with_inbox(email)]
        home.declined_an_invitation = any(row and row.declined_at for row in rows)
    # Each line reads its game and both its players, and a return match's line both games of
    # the match with their players: loaded here in five statements, however many games.
    # A game that never started (an invitation declined or left to expire) was not played.
    played = (Player.email == email, Game.started_at.is_not(None))
    shown, after = _finished_shown(played, before)
    players = list(
        db.session.scalars(
            select(Player)
            .join(Game)
            .where(*played, or_(Game.status == "active", Player.id.in_(shown.scalar_subquery())))
            .order_by(Game.updated_at.desc(), Game.id.desc())
            .options(*with_seats_and_match())
        )
    )
    opponents = (p.game.player(other(p.seat)).email for p in players if p.game.status == "active")
    away = addresses_away(opponents, now)
    # Each finished game's rematch, or why it can have none: a few statements for all of them.
    finished = [player for player in players if player.game.status in CLOSED_STATUSES]
    if len(finished) > FINISHED_SHOWN:  # one more than shown was read: more follow
        players.remove(finished.pop())
        home.older = finished[-1].game_id
    home.before = after
    rematches = invitations.rematch_games_of([player.game for player in finished])
    refusals = rematch_rules.rematch_refusals(
        [player for player in finished if player.game_id not in rematches]
    )
    for player in players:
        line = GameLine(player=player, view=player_view(player))
        if player.game.status == "active":
            if player.game.player(other(player.seat)).email in away:
                line.away_until = notify.opponent_away_until(player, now)
            home.live.append(line)
        elif player.game.status in CLOSED_STATUSES:
            line.rematch = rematches.get(player.game_id)
            if line.rematch is None:
                line.rematch_refusal = refusals[player.id]
            home.finished.append(line)
        if not player.notify and player.game.status == "active":  # a game over sends none
            home.stopped.append(player)
    home.live.sort(key=lambda line: due_first(line.view))  # stable: the latest played first
    # Not stopped by the player: started while the address took no invitations.
    home.withheld = invitations.withheld_from(email) if home.stopped else []
    home.stopped = [player for player in home.stopped if player not in home.withheld]
    home.invited = invitations_waiting(email)
    # Not a request still to be confirmed: anyone may type the address on the new-game page,
    # with any name and opponent, and only its email's link says it was the address's own.
    home.sent = list(
        db.session.scalars(
            select(Invitation)
            .where(Invitation.creator_email == email, Invitation.status == "invited")
            .options(undefer(Invitation.invitee_vacation_until))
            .order_by(Invitation.id.desc())
        )
    )
    home.vacation_left = vacation_left(settings, now)
    home.on_vacation_until = vacation_ends(settings, now)
    if settings is not None and home.on_vacation_until:
        home.days_come_back = settings.vacation_year == now.year
    return home


def _finished_shown(
    played: tuple[ColumnElement[bool], ...], before: int | None
) -> tuple[Select[int], int | None]:
    """The ids of the address's players of the finished games to show, and one more to tell
    whether more follow; with the game they come after: ``before``, if it is one of the
    address's finished games (``played`` picks the address's games)."""
    finished = (*played, Game.status.in_(CLOSED_STATUSES))
    query = (
        select(Player.id)
        .join(Game)
        .where(*finished)
        .order_by(Game.updated_at.desc(), Game.id.desc())
        .limit(FINISHED_SHOWN + 1)
    )
    if before is None or not is_row_id(before):
        return query, None
    last = db.session.execute(
        select(Game.updated_at, Game.id).join(Player).where(*finished, Game.id == before)
    ).first()
    if last is None:
        return query, None
    older = or_(
        Game.updated_at < last.updated_at,
        and_(Game.updated_at == last.updated_at, Game.id < last.id),
    )
    return query.where(older), before


def invitation_link(invitation: Invitation, email: str) -> str:
    """The link of the invitation's stage that is the address's to act on."""
    stage = "confirm" if invitation.creator_email == email else "respond"
    return invitations.url(invitation, stage)


# --- emails -------------------------------------------------------------------


def set_email_policy(email: str, policy: str, digest_hour: int | None = None) -> None:
    """Choose when a "your move" email goes out; ``digest_hour`` for the digest, in the
    address's time zone (UTC while none is known)."""
    if policy not in EMAIL_POLICIES:
        raise ValueError(f"no email policy {policy!r}")
    settings = settings_row(email)
    settings.email_policy = policy
    if digest_hour is not None:
        if not 0 <= digest_hour <= 23:
            raise ValueError("a digest hour is 0 to 23")
        if digest_hour != settings.digest_hour:
            _day_served(settings, digest_hour, utcnow())
        settings.digest_hour = digest_hour
    db.session.flush()
    log.info("an address chose the email policy %s", policy)


def set_language(email: str, language: str) -> None:
    """The language of the address's pages and emails, for every game it plays."""
    if language not in LANGUAGES:
        raise ValueError(f"no language {language!r}")
    settings_row(email).language = language
    db.session.execute(update(Player).where(Player.email == email).values(language=language))
    db.session.flush()
    log.info("an address reads %s", language)


def _own_player(email: str, game_id: int) -> Player:
    if not is_row_id(game_id):
        raise LookupError(f"the address plays no game {game_id}")
    player = db.session.scalars(
        select(Player).where(Player.email == email, Player.game_id == game_id)
    ).one_or_none()
    if player is None:
        raise LookupError(f"the address plays no game {game_id}")
    return player


def set_time_zone(email: str, name: str) -> None:
    """Give the address's times in this IANA time zone from now on (a move page learns one
    only while none is chosen; :func:`.addresses.choose_time_zone` says what becomes of the
    digest's hour); :class:`SettingError` for a name that is none."""
    if not is_time_zone(name):
        raise SettingError(f"{name!r} is no time zone")
    settings = settings_row(email)
    known = known_time_zone(settings.time_zone) is not None
    choose_time_zone(settings, name)
    if known:  # the hour keeps its number, and so moves: as a new hour, it serves today
        _day_served(settings, settings.digest_hour, utcnow())
    db.session.flush()
    log.info("an address chose its time zone")


def stop_game_emails(email: str, game_id: int) -> None:
    """Stop the emails about one game; invitations still come (the page's own choice, which
    its owner makes: the unsubscribe link in an email, which anyone holding the email may
    follow, turns them away too)."""
    player = _own_player(email, game_id)
    player.notify = False
    db.session.flush()
    log.info("game %d: the %s stopped its emails on its home page", game_id, player.seat)


def resume_game_emails(email: str, game_id: int) -> None:
    """Send the emails about one game again; invitations stay as they are."""
    player = _own_player(email, game_id)
    if player in invitations.withheld_from(email):
        invitations.take_withheld_emails(player)  # once taken, a later stop is the player's
    player.notify = True
    db.session.flush()
    log.info("game %d: the %s takes its emails again", game_id, player.seat)


def stop_all_emails(email: str) -> None:
    """Stop every email to the address (see :func:`service.invitations.stop_all_emails`)."""
    invitations.stop_all_emails(email)


def accept_invitations(email: str) -> None:
    """Take invitations again: undo a decline and the invitations a stop turned away, the
    address's and the inbox's it reaches (``bob+x@`` reaches ``bob@``, whose stop holds for
    it: :func:`service.rematch_rules.blocked`); and the emails of the games against the
    computer that started without them for that reason (:func:`.invitations.withheld_from`),
    which the player never chose to stop: those of every address that reaches the inbox and
    takes invitations now (:func:`.invitations.withheld_reaching`), as the stop lifted held
    for them all."""
    for each in with_inbox(email):
        address = db.session.get(Address, each)
        if address is not None:
            address.declined_at = None
            address.unsubscribed_at = None
    db.session.flush()  # what follows reads who takes invitations now
    for player in invitations.withheld_reaching(email):
        invitations.take_withheld_emails(player)
    db.session.flush()
    log.info("an address takes invitations again")


def resume_all_emails(email: str) -> None:
    """Undo every stop: each game's emails and the invitations (first, so the games that
    withheld their emails are marked as taken: :func:`accept_invitations`)."""
    accept_invitations(email)
    db.session.execute(update(Player).where(Player.email == email).values(notify=True))


def replace_home_link(email: str) -> str:
    """A new home link for the address: every copy of the old one stops working. Returns
    its new key.

    Whoever had the old link could open every game the page lists, by the links it
    shows: each of the address's games gets a new link too, and the old ones stop
    working (as an admin's rotation does, the unsubscribe links of the emails sent
    before with them). A link an admin revoked stays revoked. Under the address's
    row lock, taken first, as every change to the address's rows.

    Each seat is given its key only if it is still the address's, with a link, as
    its row is written: an admin who corrects a seat's address locks the game, not
    the address, and a seat moved to another address at this moment keeps the link
    the admin emailed there.
    """
    key = settings_row(email).home_key = new_link_key()
    seats = db.session.scalars(
        select(Player.id).where(Player.email == email, Player.link_key.is_not(None))
    ).all()
    replaced = 0
    for seat in seats:
        done = db.session.execute(
            update(Player)
            .where(Player.id == seat, Player.email == email, Player.link_key.is_not(None))
            .values(link_key=new_link_key())
        )
        replaced += done.rowcount  # type: ignore[attr-defined]
    db.session.flush()
    log.info("an address replaced its home link and the links of its %d games", replaced)
    return key


def record_presence(player: Player, now: datetime | None = None) -> None:
    """The player's page for this game is open: a turn email may wait (``when_away``)."""
    player.seen_at = now or utcnow()
    db.session.flush()


# --- vacation ----------------------------------------------------------------


def vacation_left(settings: AddressSettings | None, now: datetime) -> int:
    """Whole days of vacation the address may still take this calendar year (UTC)."""
    allowance: int = current_app.config["VACATION_DAYS_PER_YEAR"]
    if settings is None or settings.vacation_year != now.year:
        return allowance
    return max(0, allowance - settings.vacation_days_used)


def vacation_ends(settings: AddressSettings | None, now: datetime) -> datetime | None:
    """When the address's vacation running at ``now`` ends; ``None`` when it is not away."""
    if settings is None or settings.vacation_until is None or settings.vacation_until <= now:
        return None
    return settings.vacation_until


def vacation_seen(ends: datetime | None) -> str:
    """The end of a running vacation as a form says it was shown (``""`` for none)."""
    return ends.isoformat() if ends else ""


def take_vacation(
    email: str, days: int, now: datetime | None = None, *, seen: str | None = None
) -> datetime:
    """Go on vacation for ``days`` whole days (from now, or from the end of the current one).

    Each deadline of a move the address owes moves back by that much; a move
    owed later counts its days from the vacation's end (:func:`service.games`).
    Returns when the vacation ends. Raises :class:`SettingError` past the year's allowance.
    The address's row stays locked to the end of the transaction, so requests at
    the same instant take their days one after the other, each from what is left.
    With ``seen``, the end of the vacation the asker was shown (ISO, ``""`` for none),
    raises :class:`VacationChanged` if the vacation ends otherwise now: the same form
    sent twice takes its days once.
    """
    now = now or utcnow()
    if days < 1:
        raise SettingError("a vacation lasts one day at least")
    settings = settings_row(email)
    if seen is not None and seen != vacation_seen(vacation_ends(settings, now)):
        raise VacationChanged("the vacation changed since the page was loaded")
    left = vacation_left(settings, now)
    if days > left:
        raise SettingError(f"only {left} days of vacation are left this year")
    if settings.vacation_year != now.year:
        settings.vacation_year, settings.vacation_days_used = now.year, 0
    start = max(now, settings.vacation_until or now)
    until = start + timedelta(days=days)
    settings.vacation_until = until
    settings.vacation_days_used += days
    for game, seat in _moves_owed(email):
        games.pause_deadline(game, seat, start, until, now)
    db.session.flush()
    log.info("an address is on vacation for %d days", days)
    return until


def end_vacation(email: str, now: datetime | None = None) -> None:
    """Come back early: the unused whole days return to the year's allowance, and each
    deadline of a move the address owes loses the pause it had not used yet, but never
    more than the opponent's own vacation leaves it: a move both owe keeps the deadline
    that the opponent's vacation, still running, gives it.

    Under the lock of the address's row: of two requests at the same instant, the
    second finds the vacation over and changes nothing.
    """
    settings = settings_row(email)
    now = now or utcnow()  # read under the lock: never before the end the first one wrote
    if settings.vacation_until is None or settings.vacation_until <= now:
        return
    unused = settings.vacation_until - now
    if settings.vacation_year == now.year:
        settings.vacation_days_used = max(0, settings.vacation_days_used - unused.days)
    settings.vacation_until = now
    for game, seat in _moves_owed(email):
        games.end_pause(game, seat, unused, now)
    db.session.flush()
    log.info("an address came back from vacation early")


def _moves_owed(email: str) -> Iterator[tuple[Game, Seat]]:
    """Each game in play where the address owes a move, locked, with the address's seat.

    Every game the address plays is locked and read again, not only those it owed
    a move in when first read: an opponent's move that makes it owe one, made at the
    same moment, is waited for (it read the address's vacation before this one).
    """
    for game_id in _games_in_play(email):
        game = games.lock_game(game_id)
        seats = [p.seat for p in game.players if p.email == email]
        if game.status == "active" and set(seats) & set(to_act(game.state)):
            yield game, seats[0]


def _games_in_play(email: str) -> list[int]:
    return list(
        db.session.scalars(
            select(Game.id)
            .join(Player)
            .where(Player.email == email, Game.status == "active")
            .order_by(Game.id)
        )
    )


# --- the daily digest --------------------------------------------------------


def _digest_due(hour: int, zone: str | None, last: datetime | None, now: datetime) -> bool:
    """Whether an address's digest is due at ``now``: its ``hour`` has come today where the
    address is (``zone``, UTC while unknown) and none went since (``last``)."""
    if now.astimezone(zone_of(zone)).hour < hour:
        return False
    return last is None or last < _slot(hour, zone, now)


def _slot(hour: int, zone: str | None, now: datetime) -> datetime:
    """The moment ``hour`` comes today where the address is (``zone``, UTC while unknown)."""
    local = now.astimezone(zone_of(zone))
    # Read with the offset before the change where clocks change (fold 0): the first of the
    # two a clock turned back repeats, or, where it jumps past it, the moment the jump began
    # (one digest that day). The offset after it would put a skipped midnight on the eve.
    start = local.replace(hour=hour, minute=0, second=0, microsecond=0, fold=0)
    return start.astimezone(UTC)


def _day_served(settings: AddressSettings, hour: int, now: datetime) -> None:
    """A digest that went today where the address is serves the day of the ``hour`` chosen
    now instead of its own: one chosen later that day comes from the next day on, never a
    second time the same day."""
    last = settings.last_digest_at
    zone = zone_of(settings.time_zone)
    if last is not None and last.astimezone(zone).date() == now.astimezone(zone).date():
        settings.last_digest_at = max(last, _slot(hour, settings.time_zone, now))


def _digest_waiting(email: str) -> OutboxMessage | None:
    """The address's digest still queued, locked until the transaction ends, if any.

    Locked, and read again once its lock is held: the mail worker writes a digest
    under its row lock, then marks it ``sending``, and one written since this sweep
    began takes no more moves. A digest ``sending`` was written before today's
    moves, which then go in one of their own.
    """
    return db.session.scalars(
        select(OutboxMessage)
        .where(
            OutboxMessage.kind == "digest",
            OutboxMessage.recipient == email,
            OutboxMessage.status == "queued",
        )
        .order_by(OutboxMessage.id)
        .limit(1)
        .with_for_update()
        .execution_options(populate_existing=True)
    ).first()


def _list_too(digest: OutboxMessage, players: list[Player]) -> None:
    """Add ``players``, the moves owed now, to a digest that waited (the mail server down
    since yesterday), if it is still queued: it is written from its list when it goes, and
    stands for the digest not queued beside it. Its list only grows, as what it names is
    what an admin may not read of it while those games are live."""
    if digest.status == "queued":
        params = digest.params or {}
        listed = {*params.get("players", []), *(player.id for player in players)}
        digest.params = {**params, "players": sorted(listed)}


def send_digests(now: datetime | None = None) -> list[str]:
    """Queue the digest of each address that asked for one and whose hour has come today.

    Sent once a day, at the first sweep from the chosen hour on, the hour where
    the address is (its time zone; UTC while none is known), and only when the
    address owes a move in a game whose emails it takes. A digest still queued
    (the mail server down since yesterday) is not joined by another: it lists
    today's moves too, and is written when it goes, saying what today's would;
    one the mail worker has written already is joined by today's. Returns the
    addresses sent one.
    """
    now = now or utcnow()
    sent = []
    # Which digests are due is read without a lock; only those are locked, then read again.
    chosen = db.session.execute(
        select(
            AddressSettings.email,
            AddressSettings.digest_hour,
            AddressSettings.time_zone,
            AddressSettings.last_digest_at,
        ).where(AddressSettings.email_policy == "digest")
    ).all()
    due = [row.email for row in chosen if _digest_due(*row[1:], now)]
    candidates = db.session.scalars(
        select(AddressSettings)
        .where(AddressSettings.email.in_(due), AddressSettings.email_policy == "digest")
        .order_by(AddressSettings.email)
        .with_for_update(skip_locked=True)
    ).all()
    for settings in candidates:
        if not _digest_due(settings.digest_hour, settings.time_zone, settings.last_digest_at, now):
            continue  # sent by another sweep meanwhile, or chosen again
        settings.last_digest_at = now
        players = [
            player
            for player in db.session.scalars(
                select(Player)
                .join(Game)
                .where(Player.email == settings.email, Game.status == "active", Player.notify)
                .order_by(Game.id)
            )
            if notify.in_digest(player)
        ]
        if not players or invitations.stopped_all_emails(settings.email):
            continue
        waiting = _digest_waiting(settings.email)
        if waiting is not None:
            _list_too(waiting, players)
            continue
        language = settings.language or players[-1].language
        notify.digest(settings.email, players, language)
        sent.append(settings.email)
    db.session.flush()
    log.info("%d digests queued", len(sent))
    return sent
