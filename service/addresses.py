"""What an address chose on its home page, read where emails and deadlines need it.

The home page writes these choices (:mod:`service.homes`); the game service
reads an address's vacation here when it sets a deadline, and the outbox its
email policy when a turn email is about to go. The mail worker records here
that an address bounces, and the dashboard reads it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta, tzinfo
from functools import cache
from zoneinfo import ZoneInfo, available_timezones

from email_validator import EmailNotValidError, validate_email
from sqlalchemy import Executable, Select, bindparam, select, update
from sqlalchemy.orm import undefer

from .language import DEFAULT_LANGUAGE
from .links import new_link_key
from .logs import redact
from .models import (
    Address,
    AddressSettings,
    Game,
    Invitation,
    Player,
    db,
    insert_new,
    utcnow,
)


def in_ascii(address: str) -> str:
    """The address as mail carries it without SMTPUTF8: its domain in IDNA (``faß.de`` is
    ``xn--fa-hia.de``, not ``fass.de``). Raises ``EmailNotValidError`` for an address
    whose local part is not ASCII, which no such mail can carry.

    It is also how a person is shown another's address: a look-alike of a familiar
    domain (``exаmple.com``, its ``а`` Cyrillic) shows for what it is.
    """
    found = validate_email(address, check_deliverability=False, allow_smtputf8=False)
    assert found.ascii_email is not None  # without SMTPUTF8, every valid address has one
    return found.ascii_email


def as_stored(address: str) -> str:
    """The address as the service stores a player's or a message's (as
    :func:`service.games.clean_email` writes it), for a lookup: any case, spaces around it,
    its domain in IDNA or not (``Sam@xn--bcher-kva.example`` is ``sam@bücher.example``).
    Text that is no address is only trimmed and lowercased: it finds nothing."""
    text = address.strip()
    try:
        return validate_email(text, check_deliverability=False).normalized.lower()
    except EmailNotValidError:
        return text.lower()


# The domains of Gmail, whose inboxes ignore the full stops of an address's first part:
# ``k.i.m@gmail.com`` and ``kim@googlemail.com`` reach ``kim@gmail.com``.
GMAIL_DOMAINS = frozenset({"gmail.com", "googlemail.com"})


def inbox(address: str) -> str:
    """The inbox a normalised address reaches: ``kim+games@example.com`` reaches
    ``kim@example.com`` (a sub-address, as most mail servers read a ``+``), and
    ``k.i.m@googlemail.com`` reaches ``kim@gmail.com`` (:data:`GMAIL_DOMAINS`)."""
    local, _, domain = address.rpartition("@")
    local = local.split("+", 1)[0] or local
    if domain in GMAIL_DOMAINS:
        return f"{local.replace('.', '') or local}@gmail.com"
    return f"{local}@{domain}"


def with_inbox(address: str) -> list[str]:
    """The address and the inbox it reaches (:func:`inbox`), once if it is its own inbox: what
    a stop, a decline or its undoing is recorded on, and what a check of them reads."""
    return sorted({address, inbox(address)})


def settings_for(email: str) -> AddressSettings | None:
    """The address's choices, or ``None`` for one that has made none (the defaults)."""
    return db.session.get(AddressSettings, email)


def settings_row(email: str) -> AddressSettings:
    """The address's row of choices, locked until the transaction ends and written first if
    there is none (caller's transaction).

    The row is re-read under the lock, never taken from the session's copy: a
    change that reads the row first (a vacation counts the days already taken)
    sees what the request before it committed, so requests at the same instant
    apply one after the other. Two requests may write a new row at the same
    instant: the second insert waits for the first and then skips, and both go
    on with the one row.
    """
    settings = db.session.scalars(_settings_locked(email)).one_or_none()
    if settings is None:
        db.session.execute(insert_new(AddressSettings).values(email=email))
        settings = db.session.scalars(_settings_locked(email)).one()
    return settings


def lock_settings(emails: Iterable[str | None]) -> None:
    """Lock the rows of these addresses' choices (:func:`settings_row`), in the addresses'
    order, until the transaction ends; a seat without an address (the computer's) has none."""
    for email in sorted({email for email in emails if email is not None}):
        settings_row(email)


def give_home_key(email: str) -> None:
    """Give the address a random home key unless it has one (caller's transaction): every
    address that takes a seat has a home link (:mod:`service.links`). Callers giving keys to
    several addresses give them in the addresses' order, as rows are locked."""
    # Most addresses have one already: a plain read, no row locked (a match's second game is
    # made with its first game locked, and a vacation locks the row before the games).
    if db.session.scalar(select(AddressSettings.home_key).where(AddressSettings.email == email)):
        return
    settings = settings_row(email)
    if not settings.home_key:
        settings.home_key = new_link_key()


def _settings_locked(email: str) -> Select[AddressSettings]:
    """The statement reading the address's row afresh and locking it for update."""
    return (
        select(AddressSettings)
        .where(AddressSettings.email == email)
        .with_for_update()
        .execution_options(populate_existing=True)
    )


def vacation_end(emails: Iterable[str | None], now: datetime) -> datetime | None:
    """When the last of these addresses comes back from vacation; ``None`` if none is away.

    A seat without an address (the computer's) takes no vacation.
    """
    addresses = [email for email in emails if email is not None]
    ends = db.session.scalars(_vacations_query(), {"emails": addresses, "now": now}).all()
    return max((end for end in ends if end is not None), default=None)


@cache
def _vacations_query() -> Executable:
    """The statement of :func:`vacation_end`, built once: building it costs more than
    running it."""
    return select(AddressSettings.vacation_until).where(
        AddressSettings.email.in_(bindparam("emails", expanding=True)),
        AddressSettings.vacation_until > bindparam("now"),
    )


def addresses_away(emails: Iterable[str | None], now: datetime) -> set[str]:
    """Which of these addresses are on vacation now, in one statement."""
    wanted = {email for email in emails if email is not None}
    if not wanted:
        return set()
    return set(
        db.session.scalars(
            select(AddressSettings.email).where(
                AddressSettings.email.in_(wanted), AddressSettings.vacation_until > now
            )
        )
    )


def language(email: str | None) -> str | None:
    """The language the address chose on its home page, or ``None`` while it chose none."""
    settings = settings_for(email) if email else None
    return settings.language if settings is not None else None


def emails_language(email: str) -> str | None:
    """The language the address's emails are in: the one it chose, else that of the last game
    it played (English where that game has none); ``None`` for an address that never played
    here (a seat in a game that never started is no game played)."""
    chosen = language(email)
    if chosen is not None:
        return chosen
    last = db.session.execute(
        select(Player.language)
        .join(Game)
        .where(Player.email == email, Game.started_at.is_not(None))
        .order_by(Player.id.desc())
        .limit(1)
    ).first()
    return None if last is None else last.language or DEFAULT_LANGUAGE


def time_zone(email: str | None) -> str | None:
    """The address's time zone (an IANA name), or ``None`` while it is unknown."""
    settings = settings_for(email) if email else None
    return settings.time_zone if settings is not None else None


def known_time_zone(name: str | None) -> str | None:
    """``name`` if it is a time zone this machine knows, else ``None``: times are then given
    in UTC (a zone stored on a machine whose zone list differs, say)."""
    return name if name is not None and is_time_zone(name) else None


def is_time_zone(name: str) -> bool:
    """Whether ``name`` is an IANA time zone this machine knows (``Europe/Paris``).

    Only a name of the list of zones: loading any file of the zone tree would take
    ``localtime`` (the server's own zone, whatever it is) and the trees of other
    conventions (``right/UTC``, which counts leap seconds).
    """
    return name in _time_zones()


# Files of a zone tree that are no IANA time zone: the machine's own zone, the template
# of POSIX rules and a placeholder; and the trees of the same zones under other conventions.
NOT_ZONES = frozenset({"localtime", "posixrules", "Factory"})
NOT_ZONE_TREES = ("posix/", "right/")


@cache
def _time_zones() -> frozenset[str]:
    """The IANA time zones this machine knows, listed once a process: listing them opens
    every file of the zone tree."""
    return frozenset(
        name
        for name in available_timezones()
        if name not in NOT_ZONES and not name.startswith(NOT_ZONE_TREES)
    )


def zone_of(name: str | None) -> tzinfo:
    """The zone an address's times are read in: its own (``name``), or UTC while none is
    known, or for a name this machine does not know as a time zone."""
    return ZoneInfo(name) if name and is_time_zone(name) else UTC


def hour_in_zone(hour: int, zone: str, now: datetime) -> int:
    """The hour of ``zone`` at which hour ``hour`` of UTC falls today (``now``); a zone off the
    whole hour rounds up, never earlier (8 UTC is 13:30 in Kolkata: 14)."""
    offset = now.astimezone(zone_of(zone)).utcoffset()
    minutes = hour * 60 + (offset.total_seconds() // 60 if offset is not None else 0)
    return math.ceil(minutes / 60) % 24


def learn_time_zone(email: str, name: str, now: datetime | None = None) -> bool:
    """Keep the time zone a browser reported for the address, unless one is known already
    (one stored that this machine does not know is none: its times are in UTC).

    Returns whether it was kept; a name that is no time zone raises ``ValueError``.
    Caller's transaction. The page reports its zone on every load: once one is
    known, that is a plain read, and the row is locked only to write the first.
    A digest hour the address chose while its hour was read in UTC keeps its moment:
    it becomes the same moment's hour in the zone learnt.
    """
    if not is_time_zone(name):
        raise ValueError(f"no time zone {name!r}")
    if known_time_zone(time_zone(email)) is not None:
        return False
    settings = settings_row(email)
    if known_time_zone(settings.time_zone) is not None:
        return False
    choose_time_zone(settings, name, now)
    db.session.flush()
    return True


def choose_time_zone(settings: AddressSettings, name: str, now: datetime | None = None) -> None:
    """Give the address's times in the IANA zone ``name`` from now on (its row, locked or new).

    A digest hour chosen while the address's hours were read in UTC (no zone
    known, or one this machine does not know) keeps its moment: it becomes the
    same moment's hour in ``name``. One chosen in a zone keeps its number in the
    next: eight in the morning where the player now is.
    """
    if known_time_zone(settings.time_zone) is None and settings.email_policy == "digest":
        now = now or utcnow()
        hour = hour_in_zone(settings.digest_hour, name, now)
        # Off the whole hour, the moment moves up to an hour later: a digest sent today at
        # the UTC hour already served the new one's day.
        slot = now.replace(hour=settings.digest_hour, minute=0, second=0, microsecond=0)
        if slot > now:
            slot -= timedelta(days=1)
        last = settings.last_digest_at
        if last is not None and last >= slot:
            later = slot.astimezone(zone_of(name))
            moved = later.replace(minute=0, second=0) + timedelta(hours=1 if later.minute else 0)
            settings.last_digest_at = max(last, moved.astimezone(UTC))
        settings.digest_hour = hour
    settings.time_zone = name


def invitations_waiting(email: str) -> list[Invitation]:
    """The invitations waiting for the address's answer, the newest first: those their
    creators confirmed (a request still to be confirmed may name any address)."""
    return list(
        db.session.scalars(
            select(Invitation)
            .where(Invitation.opponent_email == email, Invitation.status == "invited")
            .options(undefer(Invitation.invitee_vacation_until))
            .order_by(Invitation.id.desc())
        )
    )


def address_row(email: str) -> Address:
    """What the address has told us, its row written first if there is none (caller's
    transaction).

    Two requests may write a new address at the same instant (a creator confirming
    two invitations, an unsubscribe racing a confirmation): the second insert waits
    for the first and then skips, and both go on with the one row.
    """
    address = db.session.get(Address, email)
    if address is None:
        db.session.execute(insert_new(Address).values(email=email))
        address = db.session.get_one(Address, email)
    return address


def lock_address(email: str) -> Address:
    """The address's row, written first if there is none, locked until the transaction ends
    (caller's transaction).

    What is asked in the address's name is then done one request at a time:
    another request that locks it waits for this one's commit, then sees what
    it did. A row an erasure deleted while this waited for it
    (:func:`service.erasure.erase_address`) is written again: the request is the
    first in the name of an address new here.
    """
    locked = select(Address).where(Address.email == email).with_for_update()
    while True:
        db.session.execute(insert_new(Address).values(email=email))
        found = db.session.scalars(locked.execution_options(populate_existing=True)).one_or_none()
        if found is not None:
            return found


def record_bounce(email: str, code: int, reply: str) -> None:
    """Remember that the address's mail was refused for good (an SMTP 5xx reply), and when."""
    address = address_row(email)
    address.bounce_code = code
    address.bounce_reply = redact(reply)[:500]  # shown on the dashboard: no link in it
    address.bounced_at = utcnow()
    db.session.flush()


def clear_bounce(email: str) -> None:
    """Forget that the address bounced: a message to it was just accepted."""
    db.session.execute(
        update(Address)
        .where(Address.email == email, Address.bounced_at.is_not(None))
        .values(bounce_code=None, bounce_reply=None, bounced_at=None)
    )


def bounces(emails: Iterable[str | None]) -> dict[str, Address]:
    """The addresses among ``emails`` whose mail bounces, by address."""
    wanted = [email for email in emails if email is not None]
    if not wanted:
        return {}
    found = db.session.scalars(
        select(Address).where(Address.email.in_(wanted), Address.bounced_at.is_not(None))
    )
    return {address.email: address for address in found}
