"""The database: games with their engine state, players and their links, the event log."""

from __future__ import annotations

import secrets
import unicodedata
from datetime import UTC, datetime
from typing import Any

from flask_login import UserMixin
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import (
    JSON,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    exists,
    select,
    text,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    WriteOnlyMapped,
    column_property,
    mapped_column,
    relationship,
)

from .rules import OVER, Seat, State


def utcnow() -> datetime:
    """The current time, timezone-aware, in UTC."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp stored in UTC and always read back timezone-aware, on SQLite too."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("timestamps must be timezone-aware")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


JSONDocument = JSON().with_variant(JSONB(), "postgresql")


class Base(DeclarativeBase):
    metadata = MetaData(
        naming_convention={
            "ix": "ix_%(table_name)s_%(column_0_N_name)s",
            "uq": "uq_%(table_name)s_%(column_0_N_name)s",
            "ck": "ck_%(table_name)s_%(constraint_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
            "pk": "pk_%(table_name)s",
        }
    )


# The models subclass Base itself, which Flask-SQLAlchemy binds to the same metadata: a type
# checker reads SQLAlchemy's declarative types there, where ``db.Model`` is only known at run time.
db = SQLAlchemy(model_class=Base)


def insert_new(model: type[Base]) -> postgresql.Insert | sqlite.Insert:
    """An INSERT of ``model`` rows that skips any whose key is already stored (ON CONFLICT DO
    NOTHING): requests writing the same new row at once each find it, none fails."""
    return upsert(model).on_conflict_do_nothing()


def upsert(
    model: type[Base] | Table, dialect: str | None = None
) -> postgresql.Insert | sqlite.Insert:
    """An INSERT of ``model`` rows (or of a table's, for a Core statement) in the database's
    own dialect (``dialect``, or the session's), which has ON CONFLICT."""
    name = dialect or db.session.get_bind().dialect.name
    return (postgresql if name == "postgresql" else sqlite).insert(model)


# The largest id an integer primary key holds (PostgreSQL's integer has 32 bits).
MAX_ID = 2**31 - 1


def is_row_id(value: int) -> bool:
    """Whether ``value`` could be a row's id: one outside this range is no row's, and the
    database could not even compare it (a query with it would fail, not find nothing)."""
    return 1 <= value <= MAX_ID


GAME_STATUSES = (
    "waiting",
    "active",
    "finished",
    "resigned",
    "timed_out",
    "abandoned",
    "cancelled",
)
OPEN_STATUSES = ("waiting", "active")
CLOSED_STATUSES = tuple(status for status in GAME_STATUSES if status not in OPEN_STATUSES)
# The characters of the name the game log and the audit trail give an admin (or a CLI user).
ADMIN_NAME_LENGTH = 80
# The characters of an email address (RFC 5321's path, less its brackets) and of a player's name.
EMAIL_LENGTH = 254
NAME_LENGTH = 80
# An invitation still to be answered: by its creator's confirmation, then by the opponent.
OPEN_INVITATIONS = ("unconfirmed", "invited")
# The characters of a stored playtest run's variant label.
RUN_VARIANT_LABEL = 200


class Match(Base):
    """A return match: two games with the roles swapped."""

    __tablename__ = "matches"

    id: Mapped[int] = mapped_column(primary_key=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    games: Mapped[list[Game]] = relationship(back_populates="match", order_by="Game.match_game")

    def game(self, number: int) -> Game | None:
        """The match's game ``number`` (1 or 2), if it has been dealt."""
        return next((game for game in self.games if game.match_game == number), None)


class Game(Base):
    """One game of Split Mind: its engine state and where it stands.

    ``version`` counts the actions applied; a move names the version it was
    made against, and no write goes over a newer one (the ORM's version check, and
    that of :func:`service.games.apply_move`, which writes the row by Core).
    """

    __tablename__ = "games"

    id: Mapped[int] = mapped_column(primary_key=True)
    status: Mapped[str] = mapped_column(String(16), default="active")
    state: Mapped[State] = mapped_column(JSONDocument)
    version: Mapped[int] = mapped_column(default=0)
    look: Mapped[str] = mapped_column(String(16), default="standard")
    # Seats that owe an action: "keeper", "shadow", "both" or "" (none).
    to_act: Mapped[str] = mapped_column(String(8), default="")
    days_per_move: Mapped[int | None]
    deadline: Mapped[datetime | None] = mapped_column(UTCDateTime())
    reminded: Mapped[bool] = mapped_column(default=False)
    winner: Mapped[Seat | None] = mapped_column(String(8))
    match_id: Mapped[int | None] = mapped_column(ForeignKey("matches.id"))
    match_game: Mapped[int | None]
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # When play began; None for a game that waited for its players and never started.
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # A digest of what the public page's form asked for, on the game it made (None for any
    # other game): the same form sent again finds it (service.invitations.take_request).
    request_key: Mapped[str | None] = mapped_column(String(64))

    match: Mapped[Match | None] = relationship(back_populates="games")
    players: Mapped[list[Player]] = relationship(
        back_populates="game", order_by="Player.seat", cascade="all, delete-orphan"
    )
    # Written to, never loaded whole: a game's log is read with an explicit query.
    events: WriteOnlyMapped[Event] = relationship(
        back_populates="game", order_by="Event.id", cascade="all, delete-orphan"
    )

    __mapper_args__ = {"version_id_col": version, "version_id_generator": False}
    __table_args__ = (
        # The deadline sweep, and games waiting on a player.
        Index(None, "status", "deadline"),
        Index(None, "status", "to_act"),
        Index(None, "match_id"),
        # The dashboard's games list seeks on (sort key, id); its statistics count by week.
        Index(None, "updated_at", "id"),
        Index(None, "status", "updated_at", "id"),
        Index(None, "to_act", "updated_at", "id"),
        Index(None, "deadline", "id"),
        Index(None, "started_at"),
        Index(None, "finished_at", "status", "started_at"),
        Index(None, "request_key"),
    )

    def player(self, seat: Seat) -> Player:
        """The player in ``seat``."""
        return next(player for player in self.players if player.seat == seat)

    @property
    def second_game_follows(self) -> bool:
        """Whether this is the first game of a return match that ended by play, which deals
        the second: no rematch follows it. One cut short (a timeout, a forfeit) ended the
        match."""
        return self.match_game == 1 and self.state["phase"] == OVER

    def has_moved(self, seat: Seat, since: int | None = None) -> bool:
        """Whether ``seat`` has made a move in this game, or since its version ``since``
        (one statement)."""
        moved = exists().where(Event.game_id == self.id, Event.kind == "move", Event.seat == seat)
        if since is not None:
            moved = moved.where(Event.version > since)
        return bool(db.session.scalar(select(moved)))


# When an address wants a "your move" email (see :mod:`service.homes`).
EMAIL_POLICIES = ("every_move", "when_away", "digest", "reminders")
# What an address that chose nothing on its home page gets: a turn email at every move, and
# the digest (once chosen) at this hour, in the address's time zone (UTC while unknown).
DEFAULT_EMAIL_POLICY = "every_move"
DEFAULT_DIGEST_HOUR = 8


class AddressSettings(Base):
    """What an address chose on its home page: its link, its emails, its language, its vacation;
    and the time zone its browser reported.

    An address without a row has the defaults; the row is written by the first
    form it posts, or when the address first takes a seat: ``home_key`` is the random
    half of the home link, given then (:func:`service.addresses.give_home_key`), so a GET
    can build the link without writing.
    """

    __tablename__ = "address_settings"

    email: Mapped[str] = mapped_column(String(EMAIL_LENGTH), primary_key=True)
    home_key: Mapped[str | None] = mapped_column(String(64))
    email_policy: Mapped[str] = mapped_column(String(16), default=DEFAULT_EMAIL_POLICY)
    # The hour of the daily digest, for the "digest" policy, where the address is: in its
    # ``time_zone``, or UTC while that is unknown.
    digest_hour: Mapped[int] = mapped_column(default=DEFAULT_DIGEST_HOUR)
    last_digest_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    language: Mapped[str | None] = mapped_column(String(8))
    vacation_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # The whole days of vacation taken in ``vacation_year`` (a calendar year, UTC).
    vacation_year: Mapped[int | None]
    vacation_days_used: Mapped[int] = mapped_column(default=0)
    # The IANA time zone of the address's browser (``Europe/Paris``), learnt on its first
    # visit to a move page; emails give deadlines in it, or in UTC while it is unknown.
    time_zone: Mapped[str | None] = mapped_column(String(64))

    __table_args__ = (Index(None, "email_policy", "digest_hour"),)


class Invitation(Base):
    """A game asked for on the public page, waiting for its creator and then its opponent."""

    __tablename__ = "invitations"

    id: Mapped[int] = mapped_column(primary_key=True)
    status: Mapped[str] = mapped_column(String(16), default="unconfirmed")
    creator_email: Mapped[str] = mapped_column(String(EMAIL_LENGTH))
    creator_name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    opponent_email: Mapped[str] = mapped_column(String(EMAIL_LENGTH))
    opponent_name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    creator_role: Mapped[str] = mapped_column(String(8))
    match: Mapped[bool] = mapped_column(default=False)
    days_per_move: Mapped[int | None]
    look: Mapped[str] = mapped_column(String(16), default="standard")
    language: Mapped[str | None] = mapped_column(String(8))
    key: Mapped[str] = mapped_column(String(64))
    game_id: Mapped[int | None] = mapped_column(ForeignKey("games.id"))
    # A rematch's: the game it follows, which its page names as its email does.
    follows_game_id: Mapped[int | None] = mapped_column(ForeignKey("games.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # The invitee's vacation_until (past or not), which holds the invitation's end
    # (:func:`service.invitations.expires_at`). Read only where asked for: the pages that
    # list invitations read it with them, not in a statement for each.
    invitee_vacation_until: Mapped[datetime | None] = column_property(
        select(AddressSettings.vacation_until)
        .where(AddressSettings.email == opponent_email)
        .correlate_except(AddressSettings)
        .scalar_subquery(),
        deferred=True,
    )

    __table_args__ = (
        Index(None, "creator_email"),
        Index(None, "opponent_email"),
        Index(None, "game_id"),  # a game's invitation: its pages ask whether a rematch waits
        Index(None, "follows_game_id"),
        # The sweep's invitations left unanswered: the open ones only, however many ended.
        Index(
            "ix_invitations_open_updated_at",
            "updated_at",
            sqlite_where=text("status IN ('unconfirmed', 'invited')"),
            postgresql_where=text("status IN ('unconfirmed', 'invited')"),
        ),
    )


# --- The admin dashboard -------------------------------------------------------


def new_session_key() -> str:
    """A fresh random session key for an admin (256 bits)."""
    return secrets.token_urlsafe(32)


class AdminUser(UserMixin, Base):
    """A person who may use the admin dashboard; the password is kept only as a hash."""

    __tablename__ = "admin_users"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(40), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    # In every session cookie of this admin: a new value signs all of them out.
    session_key: Mapped[str] = mapped_column(String(64), default=new_session_key)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_login_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # A disabled admin cannot sign in, and their sessions stop at the next request.
    disabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # Part of the key that counts this name's failed sign-ins: a new value lifts a lockout.
    lockout_key: Mapped[str | None] = mapped_column(String(64))
    # The latest lockout after failed sign-ins: when it ends, and the address it holds off
    # (the admins page shows it while it lasts; lifting the lockout clears it).
    locked_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    locked_from: Mapped[str | None] = mapped_column(String(64))
    # The authenticator's shared secret (base32), set when enrolment starts; two-factor
    # sign-in is on once a first code confirmed it. Never logged, never shown again.
    totp_secret: Mapped[str | None] = mapped_column(String(64))
    totp_enabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # The time step of the last code accepted: a code works once.
    totp_last_step: Mapped[int | None]

    # Deleted with the admin by SQLAlchemy too: SQLite does not enforce the foreign key, and
    # may give a removed admin's id to the next one.
    recovery_codes: Mapped[list[AdminRecoveryCode]] = relationship(
        back_populates="admin", cascade="all, delete-orphan"
    )

    def get_id(self) -> str:
        """What Flask-Login keeps in the session: the id with the session key."""
        return f"{self.id}:{self.session_key}"

    @property
    def is_active(self) -> bool:
        """Flask-Login's word for an account that may sign in: not disabled."""
        return self.disabled_at is None

    @property
    def two_factor(self) -> bool:
        """Whether signing in asks for a code from the admin's authenticator."""
        return self.totp_enabled_at is not None

    def locked_out(self, now: datetime) -> bool:
        """Whether failed sign-ins hold the admin off at ``now`` (from the address noted)."""
        return self.locked_until is not None and self.locked_until > now


class AdminRecoveryCode(Base):
    """A one-time code that stands in for the authenticator, kept only as a SHA-256 hash."""

    __tablename__ = "admin_recovery_codes"

    id: Mapped[int] = mapped_column(primary_key=True)
    admin_id: Mapped[int] = mapped_column(
        ForeignKey("admin_users.id", ondelete="CASCADE"), index=True
    )
    code_hash: Mapped[str] = mapped_column(String(64))
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())

    admin: Mapped[AdminUser] = relationship(back_populates="recovery_codes")


class AdminAction(Base):
    """One entry of the audit trail: what an admin did, to which game or message, and when.

    Every action taken on the dashboard or by an admin command is written here
    in the transaction that makes it; a game's own log (:class:`Event`) keeps
    the same action beside the moves. ``admin`` is a name, not a key: the
    trail outlives a removed admin.
    """

    __tablename__ = "admin_actions"

    id: Mapped[int] = mapped_column(primary_key=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    admin: Mapped[str] = mapped_column(String(ADMIN_NAME_LENGTH))
    # What was done, in one word: ``cancel``, ``forfeit``, ``requeue``, ``correct_address``...
    action: Mapped[str] = mapped_column(String(24))
    game_id: Mapped[int | None] = mapped_column(ForeignKey("games.id", ondelete="SET NULL"))
    message_id: Mapped[int | None] = mapped_column(ForeignKey("outbox.id", ondelete="SET NULL"))
    note: Mapped[str] = mapped_column(Text)

    # The audit page seeks on id, newest first, over everything or one admin or one game.
    __table_args__ = (Index(None, "admin", "id"), Index(None, "game_id", "id"))


class GameFigures(Base):
    """Playtest figures of a finished game, derived once from its final state.

    Finished games never change, so the statistics page reads these small rows
    instead of every game's state. A game against the computer says so here,
    so that its figures never mix with those of games between people.
    """

    __tablename__ = "game_figures"

    game_id: Mapped[int] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    # Played to the end of the rules (not ended by a forfeit).
    complete: Mapped[bool]
    winner: Mapped[str | None] = mapped_column(String(8))
    track: Mapped[int]
    tricks: Mapped[int]
    reset: Mapped[int]
    swap: Mapped[int]
    steal: Mapped[int]
    two_elixirs: Mapped[int]
    # Who led the first trick of rounds 2 and 3; None for a round not played.
    round2_leader: Mapped[str | None] = mapped_column(String(8))
    round3_leader: Mapped[str | None] = mapped_column(String(8))
    # The seat the computer played and its level; None in a game between people.
    computer_seat: Mapped[str | None] = mapped_column(String(8))
    computer_level: Mapped[str | None] = mapped_column(String(8))
    # The game's end, so that the next summary starts from the latest one.
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())

    __table_args__ = (Index(None, "finished_at"),)


class Player(Base):
    """A seat in a game, held by an email address, reached through a signed link.

    ``link_key`` is the random half of the link: rotating it kills the old link,
    clearing it revokes the seat's link altogether. A seat the computer plays
    has a ``computer_level`` (a level of :mod:`service.bots`) instead of an
    address and a link: it gets no email, and the mail worker makes its moves.
    """

    __tablename__ = "players"

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    seat: Mapped[Seat] = mapped_column(String(8))
    # None for the computer, which no email can reach.
    email: Mapped[str | None] = mapped_column(String(EMAIL_LENGTH))
    name: Mapped[str] = mapped_column(String(NAME_LENGTH))
    computer_level: Mapped[str | None] = mapped_column(String(8))
    link_key: Mapped[str | None] = mapped_column(String(64))
    notify: Mapped[bool] = mapped_column(default=True)
    language: Mapped[str | None] = mapped_column(String(8))
    # How many tricks of the history the player had seen when they last moved.
    history_mark: Mapped[int] = mapped_column(default=0)
    # When the player's page for this game last said it was open (its script POSTs it).
    seen_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # The address's vacation_until (past or not; None for the computer and for an address
    # that never went away). Read only where asked for: a change to the game reads it with
    # the game, after its lock (:func:`service.games.lock_game`), not in a statement of its own.
    vacation_until: Mapped[datetime | None] = column_property(
        select(AddressSettings.vacation_until)
        .where(AddressSettings.email == email)
        .correlate_except(AddressSettings)
        .scalar_subquery(),
        deferred=True,
    )

    game: Mapped[Game] = relationship(back_populates="players")

    __table_args__ = (
        Index(None, "game_id", "seat", unique=True),
        Index(None, "email"),
        # The mail worker's search for games where the computer owes a move.
        Index(
            "ix_players_computer_game_id",
            "game_id",
            sqlite_where=text("computer_level IS NOT NULL"),
            postgresql_where=text("computer_level IS NOT NULL"),
        ),
        # A person has an address; the computer has none.
        CheckConstraint(
            "(email IS NULL) = (computer_level IS NOT NULL)", name="person_or_computer"
        ),
    )

    @property
    def is_computer(self) -> bool:
        """Whether the computer plays this seat."""
        return self.computer_level is not None


# Indexes the migrations make on PostgreSQL alone, so not described here (autogenerate leaves
# them out: service.extensions.compared): trigram (pg_trgm) GIN indexes on lower(email) and
# on the folded name (FOLD) of players, which serve the admin games search,
# ``LIKE '%part%'``. SQLite has no such index and reads the table.
POSTGRESQL_ONLY_INDEXES = frozenset({"ix_players_lower_email_trgm", "ix_players_folded_name_trgm"})

# The SQL function that folds a name as the admin games search compares it: lower case,
# without accents ("Élodie" is "elodie", "Straße" "strasse"). On PostgreSQL a migration makes
# it, over the unaccent extension; each SQLite connection is given :func:`folded`.
FOLD = "splitmind_fold"
# What unaccent writes as two letters, or as another letter than the base of a decomposition.
_UNACCENT_LETTERS = str.maketrans(
    {"ß": "ss", "œ": "oe", "Œ": "OE", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "ł": "l"}
    | {"Ł": "L", "đ": "d", "Đ": "D", "ı": "i", "ð": "d", "Ð": "D", "þ": "th", "Þ": "TH"}
    | {"ẞ": "SS", "ħ": "h", "Ħ": "H", "ŧ": "t", "Ŧ": "T", "ŋ": "n", "Ŋ": "N"}
)


def folded(text: str | None) -> str | None:
    """``text`` as :data:`FOLD` folds it on PostgreSQL, for the letters names are written in."""
    if text is None:
        return None
    decomposed = unicodedata.normalize("NFKD", text.translate(_UNACCENT_LETTERS))
    return "".join(char for char in decomposed if not unicodedata.combining(char)).lower()


class Event(Base):
    """One entry of a game's append-only log: a move, a timeout, an admin's action."""

    __tablename__ = "events"

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(24))
    seat: Mapped[Seat | None] = mapped_column(String(8))
    action: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument)
    version: Mapped[int]
    actor: Mapped[str | None] = mapped_column(String(ADMIN_NAME_LENGTH))
    note: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    game: Mapped[Game] = relationship(back_populates="events")

    __table_args__ = (Index(None, "game_id", "id"),)


MAIL_STATUSES = ("queued", "sending", "sent", "failed", "skipped")


class OutboxMessage(Base):
    """An email, queued in the same transaction as the change that causes it.

    It is queued as what to write (its kind, player, game and ``params``) and
    written by the mail worker when it sends it, in the recipient's language
    then, with the links valid then (see :mod:`service.mail.kinds`); the worker
    keeps what it wrote in ``subject``, ``text_body`` and ``html_body``, empty
    until then. A message queued with ``params`` ``None`` was written when it
    was queued, and is sent as it is. ``message_id`` stays the same across
    retries so a message sent twice after a crash is recognisably one message.
    The worker marks a message ``sending`` once written, before it talks to the
    SMTP server; one left so by a worker that stopped is sent again as written.
    """

    __tablename__ = "outbox"

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(24))
    # Its kind and player, for a kind whose newer email replaces an unsent one (a turn email).
    replace_key: Mapped[str | None] = mapped_column(String(48))
    status: Mapped[str] = mapped_column(String(12), default="queued")
    game_id: Mapped[int | None] = mapped_column(ForeignKey("games.id", ondelete="SET NULL"))
    player_id: Mapped[int | None] = mapped_column(ForeignKey("players.id", ondelete="SET NULL"))
    recipient: Mapped[str] = mapped_column(String(EMAIL_LENGTH))
    subject: Mapped[str | None] = mapped_column(String(255))
    text_body: Mapped[str | None] = mapped_column(Text)
    html_body: Mapped[str | None] = mapped_column(Text)
    headers: Mapped[dict[str, Any]] = mapped_column(JSONDocument, default=dict)
    # What the kind's writer needs besides the player and game (a round's number, say).
    params: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument)
    message_id: Mapped[str] = mapped_column(String(255), unique=True)
    attempts: Mapped[int] = mapped_column(default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # When the worker last gave up on it; the dashboard lists and counts failures by it.
    failed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())

    __table_args__ = (
        Index(None, "status", "next_attempt_at"),
        Index(None, "status", "id"),  # the mail page: one status, newest first
        Index(None, "game_id"),
        Index(None, "player_id"),  # what was sent to a player, which a reply may quote
        Index(None, "recipient"),
        Index(None, "created_at"),  # the mail page's day, as failed_at
        Index(None, "failed_at"),
        # At most one unsent email per replace key: a newer one replaces it.
        Index(
            "uq_outbox_queued_replace_key",
            "replace_key",
            unique=True,
            sqlite_where=text("status = 'queued'"),
            postgresql_where=text("status = 'queued'"),
        ),
    )


class InboundReply(Base):
    """A reply a player sent to a tagged address, once read: each Message-ID is handled once.

    ``answered`` says whether the service answered it; the answers of the last
    hour are counted per player, so that a mail loop cannot form.
    """

    __tablename__ = "inbound_replies"

    id: Mapped[int] = mapped_column(primary_key=True)
    # The reply's Message-ID, or a digest of the whole message when it has none.
    message_id: Mapped[str] = mapped_column(String(255), unique=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id", ondelete="CASCADE"))
    # applied, refused or dropped (no text, a wrong sender)
    outcome: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(String(255))
    answered: Mapped[bool] = mapped_column(default=False)
    received_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    __table_args__ = (
        Index(None, "player_id", "received_at"),
        Index(None, "received_at"),  # the sweep forgets the replies read long ago, every minute
    )


class Heartbeat:
    """The columns of a long-running process's last sign of life, one row per machine
    (its host name), written by :func:`service.mail.worker.beat`."""

    host: Mapped[str] = mapped_column(String(255), primary_key=True)
    pid: Mapped[int]
    beat_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class WorkerHeartbeat(Heartbeat, Base):
    """The last pass of a mail worker: the dashboard shows a worker that has not passed for
    minutes as down."""

    __tablename__ = "worker_heartbeats"


class ImapReaderHeartbeat(Heartbeat, Base):
    """The last read of an IMAP reply reader (``flask mail fetch``): a pass over its folder,
    or a spell of IDLE the server ended as asked. ``/metrics`` serves its age, which grows
    while the server refuses the reader or cannot be reached."""

    __tablename__ = "imap_reader_heartbeats"


class InboundServerHeartbeat(Heartbeat, Base):
    """The last sign of life of a reply server (``flask mail inbound``, LMTP or SMTP),
    written every few seconds while it listens, whether or not replies come: ``/metrics``
    serves its age. The mail server queues the replies of one that is down, silently."""

    __tablename__ = "inbound_server_heartbeats"


class Address(Base):
    """What an email address has told us: confirmed, declined an invitation, unsubscribed;
    and whether its mail bounces.

    A permanent refusal (an SMTP 5xx reply) of a message to the address keeps
    the reply and its time in ``bounce_code``, ``bounce_reply`` and
    ``bounced_at``; the next message it accepts clears them.
    """

    __tablename__ = "addresses"

    email: Mapped[str] = mapped_column(String(EMAIL_LENGTH), primary_key=True)
    confirmed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    declined_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    unsubscribed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    bounce_code: Mapped[int | None]
    bounce_reply: Mapped[str | None] = mapped_column(String(500))
    bounced_at: Mapped[datetime | None] = mapped_column(UTCDateTime())

    # The dashboard's overview lists the bouncing addresses, latest first.
    __table_args__ = (
        Index(
            "ix_addresses_bounced_at",
            "bounced_at",
            sqlite_where=text("bounced_at IS NOT NULL"),
            postgresql_where=text("bounced_at IS NOT NULL"),
        ),
    )


class PlaytestRun(Base):
    """A stored simulation run (``flask --app service playtest simulate --save``).

    ``settings`` are what was played (games, levels, variant options, seed, and
    as ``players`` the digest of the computer players' code, which runs stored
    before it was kept lack) and ``figures`` the run's figures as the command
    prints them with ``--json``; the dashboard shows them beside the figures
    of real games.
    """

    __tablename__ = "playtest_runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    keeper_level: Mapped[str] = mapped_column(String(16))
    shadow_level: Mapped[str] = mapped_column(String(16))
    # The variant as ``halfway=6 swap_size=1``, cut short past RUN_VARIANT_LABEL characters (the
    # settings hold it in full); empty for the printed rules.
    variant: Mapped[str] = mapped_column(String(RUN_VARIANT_LABEL))
    games: Mapped[int]
    keeper_wins: Mapped[int]
    settings: Mapped[dict[str, Any]] = mapped_column(JSONDocument)
    figures: Mapped[dict[str, Any]] = mapped_column(JSONDocument)

    __table_args__ = (Index(None, "created_at"),)
