"""Take a reply as a move: check it, apply it as the page would, answer it through the outbox.

:func:`receive` is the one door: the LMTP/SMTP server and the IMAP reader hand
it each message. A message that no person wrote (an auto-reply, a bounce) or
to no valid tag is dropped without an answer. Every other reply is answered
once, in the game's thread: what was played and what happened, or why
nothing was (a reply with no text to read too: an attachment alone, a body
that cannot be decoded; one from another address than the player's, whose
answer goes to the player's own address) and which moves are legal. The
lines written with the move are its note to the opponent
(:class:`.reading.Reply`). A reply is read once (its Message-ID is stored),
and the answers a player gets are limited per hour
(``REPLY_ANSWERS_PER_HOUR``) and, for refusals, while the game stays as it is
(:data:`REFUSALS_ANSWERED_BETWEEN_MOVES`), so that no mail loop can go on.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import EmailPolicy
from typing import Any

from flask import current_app
from markupsafe import escape
from sqlalchemy import delete, func, select

from .. import games, notes, notify
from ..addresses import inbox
from ..mail.compose import flowed
from ..models import InboundReply, OutboxMessage, Player, db, insert_new, utcnow
from ..rules import EXCHANGE, PLAY, SWAP, to_act
from ..rules.cards import DECK_SET
from ..storable import storable
from ..unit_of_work import transaction
from . import answers
from .headers import plain_message_id
from .reading import (
    AUTOMATIC_HEADERS,
    REST,
    Reply,
    Understood,
    addresses_in,
    asks_the_page,
    automatic,
    body_text,
    html_to_text,
    only_cards,
    read_move,
    read_reply,
    sender_of,
)
from .tags import read_tag, tag_in

log = logging.getLogger(__name__)

# Headers that may name the tagged address a reply was delivered to, most telling first.
ADDRESS_HEADERS = ("Delivered-To", "X-Original-To", "To", "Cc")
LINE_BREAK = re.compile(r"\r\n|\r|\n")


class LenientHeaders(EmailPolicy):
    """The standard library's default policy, except that a header its parser fails on reads
    as its raw text, unfolded.

    That parser raises (``IndexError``, ``AttributeError``, ``TypeError``) on some
    garbled headers, such as ``Cc: =?utf-8?q?x?= <``: a header no reply needs must
    not cost a player their move. Every header of a reply is read through this
    policy, here and in :func:`.reading.automatic` alike.
    """

    def header_fetch_parse(self, name: str, value: str) -> Any:
        """The parsed header, or its raw text if the parser fails on it."""
        try:
            return super().header_fetch_parse(name, value)
        except Exception:  # the parser's own bugs: whatever they raise
            return LINE_BREAK.sub("", value)


READING_POLICY = LenientHeaders()

# A reply is a few lines; this leaves room for a phone's HTML, a quoted email or two and a
# picture in a signature. A larger one is not read: its player is told so.
MAX_MESSAGE_BYTES = 1024 * 1024
# What the LMTP server takes, as most mail servers let a message through: a reply with a
# photo attached is answered "too large" by the service, in the player's words, rather than
# bounced by their mail server with the LMTP server's 552. A larger one is refused at DATA.
MAX_TAKEN_BYTES = 25 * 1024 * 1024
# Where the headers of a message over that are looked for: its first bytes.
HEAD_BYTES = 64 * 1024
# A reply has a few MIME parts (its text, its HTML, a picture, a quoted email), each with its
# Content-Type. Parsing slows with the square of the parts' nesting, so a message with more
# parts than this is not parsed: a stranger's small message could hold the server for minutes.
MAX_MIME_PARTS = 20
# The parser takes a lone CR for a line's end too.
CONTENT_TYPE_LINE = re.compile(rb"(?:^|\r)content-type[ \t]*:", re.IGNORECASE | re.MULTILINE)
# The parser cuts parts at boundary lines ("--" and the boundary), Content-Type or none: a
# megabyte of parts with no headers took it seconds. Such lines are counted too, each part's
# and each multipart's closing one; a "-- " signature is none (a space after the dashes), nor
# is a client's "-----Original Message-----" more than once a copy.
BOUNDARY_LINE = re.compile(rb"(?:^|\r)--\S", re.MULTILINE)
# A part's MIME header (``Content-Type``, ``Content-Disposition``...) with its folded lines,
# wherever it ends its lines: the parser reads each part's as it reads the message's, and
# the time it takes grows as fast (:data:`MAX_HEADER_CHARS`).
PART_HEADER = re.compile(
    rb"(?:^|\r)content-[a-z-]*[ \t]*:([^\r\n]*(?:(?:\r\n?|\n)[ \t][^\r\n]*)*)",
    re.IGNORECASE | re.MULTILINE,
)
# The headers read with the standard library's structured parsers, whose time grows faster
# than the square of a header's length, and the most of each read: a message with a longer
# one is dropped before any is parsed. A reply's own are a few addresses long.
PARSED_HEADERS = (
    "From",
    *ADDRESS_HEADERS,
    "Content-Type",
    "Message-ID",
    *AUTOMATIC_HEADERS,
)
MAX_HEADER_CHARS = 2_000
# The most of all those headers read together, each counted with its name: every address
# header is read for a tag, and each is parsed however short it is. A megabyte of
# "Cc: a@b.c" lines held the reader for half a minute, a stranger's message too.
MAX_HEADERS_CHARS = 5 * MAX_HEADER_CHARS


# Why a message is dropped, when it is for no automatic sender (:func:`.reading.automatic`).
NO_TAG = "no valid reply tag"
HEADER_TOO_LONG = "header too long"


@dataclass(frozen=True)
class Outcome:
    """What became of one message: ``applied``, ``refused``, ``dropped`` or ``duplicate``."""

    status: str
    reason: str = ""
    answered: bool = False

    @property
    def counted_as(self) -> str:
        """The outcome as the metrics count it (:data:`service.metrics.REPLY_OUTCOMES`): a
        drop by what dropped it, never by its reason, which may name the sender."""
        if self.status != "dropped":
            return self.status
        return {NO_TAG: "not_ours", HEADER_TOO_LONG: "overlong"}.get(self.reason, "automatic")


@dataclass
class Refusal(Exception):
    """A reply that cannot be applied: ``code`` says why, ``error`` is the game's refusal."""

    code: str
    understood: Understood
    written: str
    error: games.MoveError | None = None
    sentence: str = ""


def receive(
    raw: bytes,
    *,
    envelope_from: str | None = None,
    recipients: tuple[str, ...] = (),
    size: int | None = None,
) -> Outcome:
    """Handle one incoming message (its bytes, and the SMTP envelope when there is one).

    ``size`` is the whole message's when ``raw`` is only its first bytes: a message
    over :data:`MAX_MESSAGE_BYTES` is not read past its headers, so a reader that
    knows its size beforehand (the IMAP reader) need not fetch the rest.

    Only the headers are read until the tag and the sender are known to be the
    player's; the body is parsed last, and only if it has few parts, with short
    headers. Each outcome is committed on its own: an applied move with its answer
    and the turn email it causes, or a refusal with its answer and nothing else.
    """
    # Over the limit, only the headers are read (from the message's first bytes): the
    # player's own reply is answered, a stranger's dropped as any other. The LMTP server
    # refuses such a message before it is sent; the IMAP reader finds it in the mailbox.
    # The larger of the two: a server's size is what it says, the bytes are what it sent.
    too_large = max(len(raw), size or 0) > MAX_MESSAGE_BYTES
    head = _parse(raw[:HEAD_BYTES] if too_large else raw, headers_only=True)
    overlong = _overlong_headers(head)
    if overlong is not None:
        log.warning("reply dropped: %s", overlong)
        return Outcome("dropped", HEADER_TOO_LONG)
    why = automatic(head, envelope_from)
    if why is not None:
        log.info("reply dropped: %s", why)
        return Outcome("dropped", why)
    message_id = _message_id(head, raw)
    tag = _tag(head, recipients)
    try:
        with transaction():
            return _apply(raw, head, message_id, tag, too_large=too_large)
    except Refusal as refusal:
        with transaction():
            return _refuse(message_id, tag, refusal)


def _parse(raw: bytes, *, headers_only: bool = False) -> EmailMessage:
    """The message read from its bytes: its headers only, or its headers and parts."""
    message = BytesParser(policy=READING_POLICY).parsebytes(raw, headersonly=headers_only)
    assert isinstance(message, EmailMessage)
    return message


def _overlong_headers(message: EmailMessage) -> str | None:
    """Which headers read parsed are too long to be (read unparsed): one of them, or all of
    them together; ``None`` if none is."""
    parsed = {name.lower() for name in PARSED_HEADERS}
    together = 0
    for name, value in message.raw_items():
        if name.lower() not in parsed:
            continue
        if len(value) > MAX_HEADER_CHARS:
            return f"a {name} header over {MAX_HEADER_CHARS} characters"
        together += len(name) + len(value)
        if together > MAX_HEADERS_CHARS:
            return f"headers read over {MAX_HEADERS_CHARS} characters together"
    return None


def _message_id(message: EmailMessage, raw: bytes) -> str:
    """The message's Message-ID if it is of plain shape, else a digest of the message: the same
    message is known again either way, and the answer's headers hold no text of the sender's."""
    given = plain_message_id(storable(str(message.get("Message-ID", ""))).strip())
    return given or f"<sha256:{hashlib.sha256(raw).hexdigest()}>"


def _tag(message: EmailMessage, recipients: tuple[str, ...]) -> str | None:
    """The first reply tag among the envelope's recipients, else among the address headers
    (read only when the envelope has none)."""
    for recipient in recipients:
        tag = tag_in(recipient)
        if tag is not None:
            return tag
    for header in ADDRESS_HEADERS:
        for _, address in addresses_in(message.get_all(header, [])):
            tag = tag_in(address)
            if tag is not None:
                return tag
    return None


def _player(tag: str | None) -> tuple[Player, int] | None:
    found = read_tag(tag) if tag else None
    if found is None:
        log.warning("reply dropped: no valid reply tag")
    return found


def _first_reading(message_id: str, player: Player) -> InboundReply | None:
    """Store that the message was read; ``None`` if it was read before (then nothing is done).

    Two copies arriving at once meet in the unique index: the second waits for
    the first's transaction, then finds its row.
    """
    row_id = db.session.execute(
        insert_new(InboundReply)
        .values(
            message_id=message_id,
            player_id=player.id,
            outcome="read",
            answered=False,
            received_at=utcnow(),
        )
        .returning(InboundReply.id)
    ).scalar()
    if row_id is None:
        log.info("reply %s for player %d was read before", message_id, player.id)
        return None
    return db.session.get_one(InboundReply, row_id)


def _apply(
    raw: bytes, head: EmailMessage, message_id: str, tag: str | None, *, too_large: bool = False
) -> Outcome:
    """Apply the reply's move, or refuse it; ``too_large``: its body is not read at all."""
    found = _player(tag)
    if found is None:
        return Outcome("dropped", NO_TAG)
    player, version = found
    key = player.link_key  # the tag's, as read: the move checks it again under the lock
    row = _first_reading(message_id, player)
    if row is None:
        return Outcome("duplicate", "read before")
    if not _sent_by(player, sender_of(head)):
        # Whoever sent it held the tag, which is the player's: the player hears of it, at their
        # own address (never the sender's), and nothing of the reply is read.
        log.warning("reply for player %d not read: sent from another address", player.id)
        raise Refusal("other_address", Understood(), "")
    if too_large:
        log.warning("reply for player %d not read: over %d bytes", player.id, MAX_MESSAGE_BYTES)
        raise _unread(player, "too_large")
    if (
        len(CONTENT_TYPE_LINE.findall(raw)) > MAX_MIME_PARTS
        or len(BOUNDARY_LINE.findall(raw)) > 2 * MAX_MIME_PARTS
    ):
        log.warning("reply for player %d not read: over %d MIME parts", player.id, MAX_MIME_PARTS)
        raise _unread(player, "too_many_parts")
    if any(len(value) > MAX_HEADER_CHARS for value in PART_HEADER.findall(raw)):
        log.warning(
            "reply for player %d not read: a MIME header over %d characters",
            player.id,
            MAX_HEADER_CHARS,
        )
        raise _unread(player)
    try:
        message = _parse(raw)
    except RecursionError:  # parts nested deeper than the parser goes
        log.warning("reply for player %d not read: parts nested too deep", player.id)
        raise _unread(player) from None
    ours = OurText.sent_to(player)
    reply = read_reply(ours.without_our_lines(body_text(message)))
    written = reply.written
    if not written.strip():
        log.info("reply for player %d not read: no text", player.id)
        raise _unread(player)
    understood = read_move(reply.move)
    game = games.lock_game(player.game_id)
    if game.status == "active" and version != game.version and game.state["phase"] == PLAY:
        # Only the second half of an exchange or swap may answer an older version.
        stale = games.stale_move(game, player.seat, version)
        raise Refusal(_stale_code(stale), understood, written, stale)
    action = _action(understood, player, reply)
    # What the player wrote next to the move goes to the opponent as the move's note, as from
    # the page (:class:`.reading.Reply` says which lines).
    note = notes.from_reply([line for line in reply.note if not ours.holds(line)])
    try:
        game = games.apply_move(player.id, version, action, note, link_key=key)
    except games.UnknownLink:  # rotated or corrected since the tag was read
        log.warning("reply for player %d dropped: its link was replaced meanwhile", player.id)
        return _close(row, "dropped", NO_TAG)
    except games.StaleVersion as exc:
        raise Refusal(_stale_code(exc), understood, written, exc) from None
    except games.DeadlinePassed as exc:  # until the sweep ends the game by timeout
        raise Refusal("late", understood, written, exc) from None
    except games.MoveError as exc:
        raise Refusal(exc.code, understood, written, exc) from None
    answered = _answer(
        player, message_id, "applied", understood=understood, written=written, action=action
    )
    if not answered and player.seat in to_act(game.state):
        # The answer would have said it is the player's move again; the turn email says it.
        notify.your_move(player)
    log.info("reply for player %d applied as a move", player.id)
    return _close(row, "applied", "", answered)


# A reply's line this long or longer found anywhere in the text of an email sent is a piece
# of a copy of it (a line a client wrapped again): too long to be the player's by chance.
COPIED_PIECE = 12


class OurText:
    """The text of the emails this service wrote a player about their game, both parts, for
    telling a copy of one in a reply, however a mail client marked it (``>`` or nothing)."""

    def __init__(self, texts: list[str], htmls: list[str]) -> None:
        self._lines = {_line_key(line) for text in texts for line in text.splitlines()}
        self._lines.discard("")
        # The text part as it went (format=flowed), in the pieces a client that does not join
        # its lines shows and pastes: a piece that names a card is ours only inside a copy.
        sent = [flowed(text) for text in texts]
        rendered = [*texts, *sent, *(html_to_text(html) for html in htmls)]
        listed = {_listed_key(line) for text in rendered for line in text.splitlines()}
        listed.discard("")
        self._listed = listed
        self._all = "\n".join(sorted(listed))

    @classmethod
    def sent_to(cls, player: Player) -> OurText:
        """The emails sent to the player, without the player's own words an answer quoted back
        (``You wrote: “…”``): a note sent again is the player's all the same."""
        rows = db.session.execute(
            select(OutboxMessage.text_body, OutboxMessage.html_body, OutboxMessage.params).where(
                OutboxMessage.player_id == player.id
            )
        ).all()
        texts: list[str] = []
        htmls: list[str] = []
        for text, html, params in rows:
            theirs = _their_words(params)
            if text:
                texts.append(_without(text, theirs))
            if html:
                htmls.append(_without(html, [str(escape(words)) for words in theirs]))
        return cls(texts, htmls)

    def without_our_lines(self, body: str) -> str:
        """``body`` without the lines of the emails sent, as they are, quoted, or rendered from
        either part with or without list marks: neither read as the move (the hand listed in
        a turn email) nor passed on as a note.

        Whole lines only. A line of the text part as it was written, list mark and all,
        is ours wherever it stands. A line naming a card that is ours only once its list
        mark is dropped (the HTML part's ``<li>5♥</li>``, pasted unmarked) is ours only
        under another line of ours, inside a copy: a player's move line (``5H``) may be one
        of the legal moves an email listed. A line that ends the person's text
        (:data:`.reading.REST`) stays, though our footers hold one (``--``): a signature's
        ``-- `` under the move must still end it."""
        kept: list[str] = []
        in_copy = False  # whether the last line that is not empty was ours
        for line in body.splitlines():
            if not line.strip():
                kept.append(line)
                continue
            ours = not REST.match(line) and (
                _line_key(line) in self._lines
                or (_listed_key(line) in self._listed and (in_copy or not read_move(line).cards))
            )
            if not ours:
                kept.append(line)
            in_copy = ours
        return "\n".join(kept)

    def holds(self, line: str) -> bool:
        """Whether a line of a note is a piece of an email sent: a line of either part with
        any list mark (``• 5H`` pasted from the HTML part's list), or a piece of one (a copy
        wrapped again) that is long or only cards. A note goes to the opponent: the hand and
        the legal moves in a copy tell of the player's hand."""
        key = _listed_key(line)
        if not key:
            return False
        if key in self._listed:
            return True
        return (len(key) >= COPIED_PIECE or only_cards(line)) and key in self._all


def _their_words(params: dict[str, Any] | None) -> list[str]:
    """The player's words an answer quoted back, from its params (:func:`.answers.facts`)."""
    answer = (params or {}).get("answer") or {}
    return [words for words in (answer.get("wrote"), answer.get("sentence")) if words]


def _without(body: str, pieces: list[str]) -> str:
    for piece in pieces:
        body = body.replace(piece, "")
    return body


def _line_key(line: str) -> str:
    """A line as a quote may write it: without the quote marks, spaces made one."""
    return " ".join(line.lstrip("> \t").split()).casefold()


def _listed_key(line: str) -> str:
    """A line as any list may write it: :func:`_line_key` without a list item's mark."""
    return _line_key(line).lstrip("-*•·◦▪–— ")


def _sent_by(player: Player, sender: str) -> bool:
    """Whether ``sender`` is the player's address, normalised as it was when stored (a domain
    the mail system wrote in ASCII, ``xn--bcher-kva.de``, is the player's ``bücher.de``), or
    another of the same inbox's (:func:`.addresses.inbox`): a player who gave
    ``kim+games@gmail.com`` writes from ``kim@gmail.com``, as Gmail sends every reply."""
    if player.email is None:
        return False
    try:
        address = games.clean_email(sender)
    except games.InvalidGame:
        return False
    return address == player.email or inbox(address) == inbox(player.email)


def _action(understood: Understood, player: Player, reply: Reply) -> dict[str, Any]:
    """The move a reply's cards make in the game's phase, or the :class:`Refusal` saying why not."""
    cards, written = understood.cards, reply.written
    if player.game.status != "active":
        raise Refusal("closed", understood, written)
    if reply.unclear:
        raise Refusal("unclear", understood, written)
    if not cards:
        if asks_the_page(written):
            raise Refusal("page_only", understood, written)
        if reply.sentence:
            raise Refusal("in_sentence", understood, written, sentence=reply.sentence)
        raise Refusal("nothing_read", understood, written)
    if any(card not in DECK_SET for card in cards):
        raise Refusal("no_such_card", understood, written)
    phase = player.game.state["phase"]
    if phase == PLAY:
        if len(cards) != 1:
            raise Refusal("one_card", understood, written)
        if understood.two_suits:
            raise Refusal("two_suits", understood, written)
        action: dict[str, Any] = {"play": cards[0]}
        if understood.name is not None:
            action["name"] = understood.name
        return action
    if phase in (EXCHANGE, SWAP):
        return {phase: list(cards)}
    return {PLAY: cards[0]}  # the game is over, which the game service says


def _unread(player: Player, code: str = "no_text") -> Refusal:
    """The refusal of the player's reply with no text to read (``no_text``: write the move in
    the body), too large to read (``too_large``) or of too many parts (``too_many_parts``),
    or, for a game that takes no more moves, that."""
    game = games.lock_game(player.game_id)
    return Refusal(code if game.status == "active" else "closed", Understood(), "")


def _stale_code(stale: games.StaleVersion) -> str:
    """Why a reply to an older email is refused: the player moved since it, or the game did."""
    return "already_moved" if stale.already_moved else "stale"


def _refuse(message_id: str, tag: str | None, refusal: Refusal) -> Outcome:
    found = _player(tag)
    if found is None:  # the link was rotated meanwhile
        return Outcome("dropped", NO_TAG)
    player, _ = found
    row = _first_reading(message_id, player)
    if row is None:
        return Outcome("duplicate", "read before")
    games.lock_game(player.game_id)
    elsewhere = refusal.code == "other_address"
    if elsewhere and not _may_tell_of_another_address(player):
        log.info("reply for player %d refused: %s, not told", player.id, refusal.code)
        return _close(row, "refused", refusal.code)
    if _refusals_answered_since_the_game_changed(player) >= REFUSALS_ANSWERED_BETWEEN_MOVES:
        log.warning(
            "reply for player %d refused: %s, not answered: %d refusals answered since the "
            "game last changed",
            player.id,
            refusal.code,
            REFUSALS_ANSWERED_BETWEEN_MOVES,
        )
        return _close(row, "refused", refusal.code)
    answered = _answer(
        player,
        # The player never had the reply from another address: told in the game's thread.
        None if elsewhere else message_id,
        "refused",
        understood=refusal.understood,
        written=refusal.written,
        code=refusal.code,
        error=refusal.error,
        sentence=refusal.sentence,
    )
    log.info("reply for player %d refused: %s", player.id, refusal.code)
    return _close(row, "refused", refusal.code, answered)


# How long a reply's Message-ID is kept once read: a mail server retries a delivery for a few
# days (RFC 5321 suggests four or five), and a message the IMAP reader failed to move away is
# read again at its next pass; the answers of the last hour are counted from these rows too.
# A copy older than this is read again, and refused as out of date: a move is never made twice.
READ_REPLIES_KEPT = timedelta(days=30)


def prune(now: datetime) -> int:
    """Forget the replies read more than :data:`READ_REPLIES_KEPT` before ``now``; how many."""
    deleted = db.session.execute(
        delete(InboundReply).where(InboundReply.received_at < now - READ_REPLIES_KEPT)
    )
    return int(deleted.rowcount or 0)  # type: ignore[attr-defined]


def _close(row: InboundReply, outcome: str, reason: str, answered: bool = False) -> Outcome:
    row.outcome, row.reason, row.answered = outcome, reason[:255] or None, answered
    db.session.flush()
    return Outcome(outcome, reason, answered)


# How many refused replies of a player are answered while their game stays as it is, at most.
# A refusal changes nothing and its answer, while the player owes a move, has a Reply-To of
# its own: a responder that answers every email, marks its mail as no automatic one and
# writes no move would otherwise be answered again and again, up to the hourly limit, for as
# long as the move waits. A move or the game's end (a change) starts the count again.
REFUSALS_ANSWERED_BETWEEN_MOVES = 10


def _refusals_answered_since_the_game_changed(player: Player) -> int:
    """How many of the player's replies were refused and answered since their game's last
    change (a move, its end)."""
    return (
        db.session.scalar(
            select(func.count())
            .select_from(InboundReply)
            .where(
                InboundReply.player_id == player.id,
                InboundReply.outcome == "refused",
                InboundReply.answered,
                InboundReply.received_at > player.game.updated_at,
            )
        )
        or 0
    )


# How often a player is told of replies for their game from another address, at most.
ANOTHER_ADDRESS_TOLD_EVERY = timedelta(days=1)


def _may_tell_of_another_address(player: Player) -> bool:
    """Whether the player is told of a reply for their game from another address: the player
    wrote nothing, so only while they take the game's emails, and once a day at most,
    however many such replies a stranger holding the game's reply address sends."""
    if not player.notify:
        return False
    since = utcnow() - ANOTHER_ADDRESS_TOLD_EVERY
    told = db.session.scalar(
        select(func.count())
        .select_from(InboundReply)
        .where(
            InboundReply.player_id == player.id,
            InboundReply.received_at > since,
            InboundReply.reason == "other_address",
            InboundReply.answered,
        )
    )
    return not told


def _answer(player: Player, message_id: str | None, outcome: str, **context: Any) -> bool:
    """Queue the answer to a reply, unless the player had their answers for the hour."""
    since = utcnow() - timedelta(hours=1)
    recent = db.session.scalar(
        select(func.count())
        .select_from(InboundReply)
        .where(
            InboundReply.player_id == player.id,
            InboundReply.answered,
            InboundReply.received_at > since,
        )
    )
    if (recent or 0) >= current_app.config["REPLY_ANSWERS_PER_HOUR"]:
        log.warning("reply for player %d not answered: too many answers this hour", player.id)
        return False
    notify.answer(player, message_id, answer=answers.facts(outcome, **context))
    return True
