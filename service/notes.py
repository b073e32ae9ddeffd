"""Table talk: a short note a player may add to a move, for the opponent to read.

A note is stored on its move's event row (``Event.note``). Either player may
turn notes off for a game: an event of kind ``notes_off`` says so, and from
then on nobody sees the game's notes and no move takes one. An admin reads a
game's notes only once the game is over.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

from sqlalchemy import Executable, bindparam, func, select

from .models import OPEN_STATUSES, Event, Game, Player, db
from .rules import CHOICE_PHASES, Seat, other

MAX_LENGTH = 280
# What the page and the turn email show: the opponent's latest notes.
SHOWN = 3


class BadNote(ValueError):
    """A note the service refuses: too long, not text, or holding control characters."""


class InvisibleCharacter(BadNote):
    """A note holding an invisible format character, which could change how it reads."""


# The invisible characters that can make a note read other than it was written: the bidi
# embeddings and overrides, isolates and marks (the Arabic letter mark too), the zero
# width space and byte order mark, which hide inside words, the invisible mathematical
# operators, and the Hangul fillers, letters that draw nothing.
# The other format characters stay: the joiner and non-joiner (emoji sequences, Persian
# and Urdu words), the soft hyphen, the word joiner, and the tags of subdivision flags.
MISLEADING = frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u200b\ufeff"
    "\u2061\u2062\u2063\u2064\u115f\u1160\u3164\uffa0"
)
# Tag characters draw nothing: they belong only in a subdivision flag (a black flag, the
# tag letters and digits of a subdivision's code, three to six of them, a cancel tag), and
# anywhere else could carry text no one sees. They are dropped there: a note reads the same
# without them.
STRAY_TAG = re.compile(
    "(\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{3,6}\U000e007f)"
    "|[\U000e0000-\U000e007f]"
)


def _without_stray_tags(text: str) -> str:
    """``text`` without the tag characters that are not part of a flag."""
    return STRAY_TAG.sub(lambda found: found.group(1) or "", text)


def clean(note: object) -> str | None:
    """The note as stored, ``None`` for none, or :class:`BadNote` with the reason."""
    if note is None:
        return None
    if not isinstance(note, str):
        raise BadNote('"note" must be a string')
    if len(note) > MAX_LENGTH:
        raise BadNote(f"a note holds at most {MAX_LENGTH} characters")
    # Cc: the control characters; Zl and Zp: the line and paragraph separators, line breaks
    # all the same; Cs: a lone surrogate, which JSON can write and no text holds.
    categories = {unicodedata.category(char) for char in note}
    if not categories.isdisjoint(("Cc", "Zl", "Zp")):
        raise BadNote("a note cannot hold control characters such as line breaks")
    if "Cs" in categories:
        raise BadNote(
            'a note cannot hold a lone surrogate ("\\ud800" to "\\udfff"), half a character'
        )
    # On the opponent's page and in the turn email, these would change how the note reads.
    if not MISLEADING.isdisjoint(note):
        raise InvisibleCharacter(
            "a note cannot hold invisible formatting characters such as direction marks"
        )
    return _without_stray_tags(note).strip() or None


def from_reply(lines: list[str]) -> str | None:
    """The note a reply's lines make (:attr:`service.replies.reading.Reply.note`), as
    :func:`clean` takes it; ``None`` for none.

    The lines are joined on one line, tabs and other spaces made one space;
    other control characters and the invisible ones of :data:`MISLEADING` are
    dropped, as a mail client may put them in without the person seeing them; a
    note longer than :data:`MAX_LENGTH` is cut, with an ellipsis, rather than
    lost with the move.
    """
    text = "".join(
        " " if char.isspace() else char
        for char in " ".join(lines)
        if char.isspace()
        or (unicodedata.category(char) not in ("Cc", "Cs") and char not in MISLEADING)
    )
    note = " ".join(_without_stray_tags(text).split())
    if len(note) > MAX_LENGTH:
        note = note[: MAX_LENGTH - 1].rstrip() + "…"
    return note or None


def are_on(game: Game) -> bool:
    """Whether the game's notes are on: until either player turns them off, and never against
    the computer, which neither reads nor writes any (a note sent to it is dropped)."""
    if any(player.is_computer for player in game.players):
        return False
    return (
        db.session.scalars(
            select(Event.id).where(Event.game_id == game.id, Event.kind == "notes_off").limit(1)
        ).first()
        is None
    )


def from_opponent(player: Player, *, since_own_move: bool = False) -> list[str] | None:
    """The opponent's latest notes, oldest first, or ``None`` while the game's notes are off
    or the opponent is the computer, which neither reads nor writes any.

    ``since_own_move`` keeps only those the player's last move did not answer
    (:func:`_news_after`: the turn email). No note is stored once notes are off,
    so a ``notes_off`` event is newer than every note and comes first.
    """
    game = player.game
    if game.player(other(player.seat)).is_computer:
        return None
    after = _news_after(game.id, player.seat) if since_own_move else 0
    found = db.session.execute(
        _notes_query(), {"game_id": game.id, "opponent": other(player.seat), "after": after}
    ).all()
    if any(kind == "notes_off" for kind, _ in found):
        return None
    return [note for _, note in reversed(found) if note]


@cache
def _notes_query() -> Executable:
    """The statement of :func:`from_opponent`, built once: building it costs more than
    running it."""
    query = select(Event.kind, Event.note).where(
        Event.game_id == bindparam("game_id"),
        Event.id > bindparam("after"),
        (Event.kind == "notes_off")
        | (
            (Event.kind == "move") & (Event.seat == bindparam("opponent")) & Event.note.is_not(None)
        ),
    )
    return query.order_by(Event.id.desc()).limit(SHOWN)


def _news_after(game_id: int, seat: Seat) -> int:
    """The event after which the opponent's notes are news to ``seat``: its last move, or
    the one before the opponent's half of the exchange or swap that move completed.

    Both halves of a simultaneous choice are made against the same version, so
    the second may be made without the first (and its note) ever shown: by a
    reply to the email both got, say. ``0`` before the seat's first move.
    """
    own = (
        select(func.max(Event.id))
        .where(Event.game_id == game_id, Event.kind == "move", Event.seat == seat)
        .scalar_subquery()
    )
    rows = db.session.execute(
        select(Event.id, Event.seat, Event.action)
        .where(Event.game_id == game_id, Event.kind == "move", Event.id <= own)
        .order_by(Event.id.desc())
        .limit(2)
    ).all()
    if not rows:
        return 0
    last, before = rows[0], rows[1:]
    choice = _choice(last.action)
    if before and before[0].seat != seat and choice and _choice(before[0].action) == choice:
        return int(before[0].id) - 1
    return int(last.id)


def last_sent(player: Player) -> str | None:
    """The note of the player's latest move, if it carried one."""
    return db.session.scalars(
        select(Event.note)
        .where(Event.game_id == player.game_id, Event.kind == "move", Event.seat == player.seat)
        .order_by(Event.id.desc())
        .limit(1)
    ).first()


def _choice(action: dict[str, object] | None) -> str | None:
    """The exchange or swap an event's action chose cards for, if it was one."""
    return next((phase for phase in CHOICE_PHASES if phase in (action or {})), None)


def of_finished_game(game: Game) -> list[Event]:
    """Every note of a game that is over, for the admin; none while the game is live."""
    if game.status in OPEN_STATUSES:
        return []
    return list(
        db.session.scalars(
            select(Event)
            .where(Event.game_id == game.id, Event.kind == "move", Event.note.is_not(None))
            .order_by(Event.id)
        )
    )
