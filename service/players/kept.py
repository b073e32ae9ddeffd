"""Move pages kept as rendered, in each web process, under everything they show.

Rendering the move page costs several times the reads it is made of. A GET
reads, in one statement by primary key (:func:`kept_page`), what makes its
:class:`PageKey`: the view's ``ETag`` (:func:`service.perspective.tag_of`: the
game's version, status, deadline, look, the player's mark in the history,
both names, the language), the player's home link, the opponent's vacation,
whether the opponent's notes are shown, the deadline in words (which changes
with the time; whose move is due changes with the version, and the names are
in the tag), whether the opponent was reminded of the move at the game's
version, whether the day before a reminder may be sent has passed and whether
the owed move's deadline has (both change with the time), whether a move the
computer owes is late (:func:`service.computer.lateness`), whether the language
is the player's choice rather than the browser's (the page's links then carry
it), and the token the page links with. A page rendered from the same key is the same page: the
engine's state and the notes change only with the game's version. The key
holds nothing a player may not see; a page is kept under its player's own
token, for an open game only (a closed game's page offers a rematch, whose
state is not in the key).

The key of a page that is rendered is made of what it was rendered from
(:func:`keep`), never from a separate read, so a page is never kept under a
key it does not match. Each process keeps :data:`PAGES_KEPT` pages at most,
the least recently read going first.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cache
from typing import Any

from cachetools import LRUCache
from flask import Flask, current_app, g, request
from sqlalchemy import Select, exists
from sqlalchemy.orm import aliased

from .. import driver_reads
from ..addresses import known_time_zone
from ..computer import lateness
from ..games import reminder_offer
from ..language import carried_language
from ..links import signed_home, signed_link
from ..models import AddressSettings, Event, Game, Player, db, utcnow
from ..perspective import (
    OPPONENT,
    PlayerView,
    facts_of,
    facts_statement,
    iso,
    read_in_one,
    tag_of,
)
from .annotations import deadline

# Pages each web process keeps: a page is some 20 to 40 kB.
PAGES_KEPT = 512
EXTENSION = "kept_pages"


@dataclass(frozen=True)
class PageKey:
    """Everything a move page of an open game is rendered from, besides its game's version."""

    token: str
    tag: str
    home_token: str | None
    away_until: str | None
    notes_shown: bool
    reminded: bool
    remind_ready: bool
    remind_late: bool
    computer_late_at: str | None
    computer_late: bool
    deadline: tuple[tuple[str, Any], ...] | None
    time_zone: str | None
    root: str
    # The page's language when the player's choice, not the browser, decided it: its links
    # off the page carry it (service.language.carried_language).
    carried: str | None


class KeptPages:
    """Rendered pages by :class:`PageKey`, least recently read first out; safe across threads."""

    def __init__(self, size: int = PAGES_KEPT) -> None:
        self._pages: LRUCache[PageKey, str] = LRUCache(maxsize=size)
        self._lock = threading.Lock()

    def get(self, key: PageKey) -> str | None:
        with self._lock:
            return self._pages.get(key)

    def put(self, key: PageKey, html: str) -> None:
        with self._lock:
            self._pages[key] = html

    def clear(self) -> None:
        with self._lock:
            self._pages.clear()

    def __len__(self) -> int:
        return len(self._pages)


def init_app(app: Flask) -> None:
    app.extensions[EXTENSION] = KeptPages()


def kept_pages() -> KeptPages:
    """The current app's kept pages."""
    pages: KeptPages = current_app.extensions[EXTENSION]
    return pages


def kept_page(token: str) -> str | None:
    """The kept page of ``token``'s player as it would be rendered now, or ``None``.

    ``None`` as well for a link that is not a player's, or a game that is not
    kept (closed, or of a return match): the page is rendered as usual, and
    answers those. Sets the player's language for the request, as the full read does.
    """
    signed = signed_link(token)
    if signed is None:
        return None
    row = driver_reads.one_or_none(db.session.connection(), _page_query(), {"player_id": signed[0]})
    if not read_in_one(row, signed[1]) or row.status != "active":
        return None
    g.player_language = row.language
    now = utcnow()
    away = row.vacation_until if row.vacation_until and row.vacation_until > now else None
    late = lateness(row.updated_at, now, against_computer=row.their_level is not None)
    key = page_key(
        token,
        tag_of(facts_of(row, None), None),
        home_token=signed_home(row.email, row.home_key) if row.email and row.home_key else None,
        away_until=away.isoformat(timespec="seconds") if away else None,
        notes_shown=row.their_level is None and not row.notes_off,
        **reminder_offer(row.updated_at, row.deadline, now, lambda: bool(row.reminded)),
        computer_late_at=late["computer_late_at"],
        computer_late=late["computer_late"],
        due=deadline(iso(row.deadline), now, known_time_zone(row.time_zone)),
        time_zone=known_time_zone(row.time_zone),
    )
    return kept_pages().get(key)


def keep(view: PlayerView, html: str, key: PageKey) -> None:
    """Keep ``html``, the page of ``view`` rendered from what ``key`` holds, if it may be kept."""
    if view["status"] == "active" and view["match"] is None:
        kept_pages().put(key, html)


def page_key(
    token: str,
    tag: str,
    *,
    home_token: str | None,
    away_until: str | None,
    notes_shown: bool,
    reminded: bool,
    remind_ready: bool,
    remind_late: bool,
    computer_late_at: str | None,
    computer_late: bool,
    due: dict[str, Any] | None,
    time_zone: str | None,
) -> PageKey:
    """The key of a page rendered from these (``due``: its deadline, from
    :func:`~service.players.annotations.deadline`; ``time_zone``: the one its times are in)."""
    return PageKey(
        token=token,
        tag=tag,
        home_token=home_token,
        away_until=away_until,
        notes_shown=notes_shown,
        reminded=reminded,
        remind_ready=remind_ready,
        remind_late=remind_late,
        computer_late_at=computer_late_at,
        computer_late=computer_late,
        deadline=tuple(sorted(due.items())) if due else None,
        time_zone=time_zone,
        root=request.script_root,
        carried=carried_language(),
    )


@cache
def _page_query() -> Select[Any]:
    """The statement of :func:`kept_page`, built once: the view's facts, without the state,
    with the player's address and language, their home key, the opponent's vacation,
    whether the game's notes were turned off, and when the game last changed and whether
    its move was reminded of (:func:`service.games.reminded`)."""
    mine = aliased(AddressSettings)
    theirs = aliased(AddressSettings)
    notes_off = exists().where(Event.game_id == Player.game_id, Event.kind == "notes_off")
    reminded = exists().where(
        Event.game_id == Player.game_id, Event.kind == "reminded", Event.version == Game.version
    )
    return (
        facts_statement(with_state=False)
        .add_columns(
            Player.email,
            Player.language,
            mine.home_key,
            mine.time_zone,
            theirs.vacation_until,
            notes_off.label("notes_off"),
            Game.updated_at,
            reminded.label("reminded"),
        )
        .outerjoin(mine, mine.email == Player.email)
        .outerjoin(theirs, theirs.email == OPPONENT.email)
    )
