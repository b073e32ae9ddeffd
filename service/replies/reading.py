"""Reading a reply: is it a person's answer, what did they write above the quote, what move is it.

Pure: an email message in, plain data out; no Flask, no database. The service
(:mod:`.inbound`) decides what to do with what is read here.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from email.message import EmailMessage, Message
from email.utils import getaddresses, parseaddr
from html.parser import HTMLParser
from typing import Any

from ..rules.cards import HAND_SIZE
from ..storable import storable

# How many lines of the reply, above any quote or signature, are read for a move.
MOVE_LINES = 10
# How many different cards of a reply are read, at most: one more than a hand, the most a move
# gives, so that a reply naming too many is still refused as such; the answer lists what was
# read, which stays short whatever the reply holds.
MOVE_CARDS = HAND_SIZE + 1
# How much of a reply's body is read, in characters: a reply is a few lines, above or below a
# quoted email of a few kB.
READ_CHARS = 100_000
# How much of the reply the answer quotes back.
QUOTE_CHARS = 200

# --- auto-replies and bounces (RFC 3834, RFC 3464) ------------------------------

# The subjects auto-replies are sent under, in the languages mail clients and servers write
# them in (Exchange writes "Automatic reply:" in the mailbox's language).
AUTO_SUBJECT = re.compile(
    r"^\s*(auto(matic)?[ -]?(reply|response)|auto:|out of (the )?office|vacation|away from|"
    r"r[ée]ponse automatique|absence|abwesenheit|automatische antwort|risposta automatica|"
    r"fuori ufficio|respuesta autom[áa]tica|fuera de la oficina|resposta autom[áa]tica|"
    r"automatisch antwoord|afwezig|automatiskt? svar|autosvar|automaattinen vastaus|"
    r"automatyczna odpowied[zź]|odpowied[zź] automatyczna|automatick[áa] odpov[ěe][dď]|"
    r"otomatik yan[ıi]t|автоматический ответ|自動応答|自動返信|自动回复|自動回覆)",
    re.IGNORECASE,
)
# The senders' names (before the @) of mail that no person writes: bounces, notifications.
DAEMONS = (
    "mailer-daemon",
    "mailer_daemon",
    "postmaster",
    "noreply",
    "no-reply",
    "no_reply",
    "donotreply",
    "do-not-reply",
    "do_not_reply",
)
# The Precedence values of mail sent to many or by a machine: "auto_reply" is an auto-reply's.
MACHINE_PRECEDENCE = ("bulk", "junk", "list", "auto_reply")


def sender_of(message: Message) -> str:
    """The address in the message's From header; empty if it holds none the parser can read
    (comments nested past its depth, say)."""
    try:
        return parseaddr(str(message.get("From", "")))[1]
    except RecursionError:
        return ""


def addresses_in(values: list[Any]) -> list[tuple[str, str]]:
    """The names and addresses in these header values (:func:`email.utils.getaddresses`);
    none from a value nested past the parser's depth."""
    try:
        return getaddresses([str(value) for value in values])
    except RecursionError:
        return []


# Headers that mark an automatic reply by being there.
AUTO_REPLY_HEADERS = ("X-Autoreply", "X-Autorespond", "X-Auto-Response")
# Every header :func:`automatic` reads besides From.
AUTOMATIC_HEADERS = ("Auto-Submitted", "Precedence", "Subject", "Return-Path", *AUTO_REPLY_HEADERS)


def automatic(message: Message, envelope_from: str | None = None) -> str | None:
    """Why a message is no person's reply (an auto-reply, a bounce), or ``None`` if it may be.

    ``envelope_from`` is the SMTP ``MAIL FROM`` when known: empty for a bounce. Read from
    a mailbox, the message has none: the ``Return-Path`` its server wrote on delivering it
    (the first, above any the sender wrote) holds it, empty too for an auto-reply as
    RFC 3834 sends one.
    """
    if envelope_from is None and message.get("Return-Path") is not None:
        envelope_from = str(message.get("Return-Path"))
    if envelope_from is not None and envelope_from.strip("<> ") == "":
        return "bounce: null sender"
    if message.get_content_type() == "multipart/report":
        return "bounce: delivery report"
    sender = sender_of(message).lower()
    if sender.partition("@")[0] in DAEMONS or not sender:
        return f"bounce: from {sender or 'nobody'}"
    # Each header read here is one inbound.PARSED_HEADERS holds to a length first.
    submitted = str(message.get("Auto-Submitted", "no")).strip().lower()
    if submitted.split(";")[0].strip() != "no":
        return f"auto-reply: Auto-Submitted {submitted}"
    if str(message.get("Precedence", "")).strip().lower() in MACHINE_PRECEDENCE:
        return "auto-reply: Precedence"
    for header in AUTO_REPLY_HEADERS:
        if message.get(header) is not None:
            return f"auto-reply: {header}"
    if AUTO_SUBJECT.match(str(message.get("Subject", ""))):
        return "auto-reply: vacation subject"
    return None


# --- the text the person wrote ---------------------------------------------------


class _Text(HTMLParser):
    """The text of an HTML body, one line per block, without quotes, scripts or styles.

    A quote (``blockquote``, Gmail's, Thunderbird's, Yahoo's) is left out and
    the text after it read; Outlook puts the email answered after a marker,
    not inside one, so nothing after its marker is read.
    """

    BLOCKS = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "table"}
    # What always breaks a line: a <br> (once, however written: <br/> is no second one), and a
    # paragraph's start and end, which leave an empty line between paragraphs as a browser
    # shows them. The other blocks break it only where it is not broken already:
    # <div>7D</div><div>Nice lead.</div>, as iOS Mail, Outlook on the web and webmail write
    # lines, is two lines, not two paragraphs; <div><br></div> and <div>&nbsp;</div> are an
    # empty line. Outlook on the desktop writes each line as a paragraph of LINE_PARAGRAPH.
    BREAKS = {"p", "br"}
    LINE_PARAGRAPH = "MsoNormal"
    SKIPPED = {"script", "style", "head", "title", "blockquote"}
    VOID = {"br", "img", "hr", "meta", "link", "input", "wbr"}
    QUOTES = ("gmail_quote", "moz-cite-prefix", "yahoo_quoted")
    THE_REST = ("divRplyFwdMsg", "appendonsend", "OutlookMessageHeader")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        # Each open element, whether it is skipped, and whether its edges always break a line.
        self.open: list[tuple[str, bool, bool]] = []
        # Counted as they open and close, so that neither a tag nor its end looks through
        # the whole stack: unclosed elements by the thousand would make it quadratic.
        self.skipped = 0  # open elements that are skipped
        self.opened: Counter[str] = Counter()  # open elements by tag
        self.done = False
        self.line_start = True  # nothing but white space written since the last line break

    def _skipping(self) -> bool:
        return self.done or self.skipped > 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        marks = " ".join(value or "" for name, value in attrs if name in ("class", "id"))
        if any(mark in marks for mark in self.THE_REST):
            self.done = True
        breaks = tag in self.BREAKS and self.LINE_PARAGRAPH not in marks
        self._block(tag, breaks)
        if tag in self.VOID:
            return
        skipped = tag in self.SKIPPED or any(mark in marks for mark in self.QUOTES)
        self.open.append((tag, skipped, breaks))
        self.skipped += skipped
        self.opened[tag] += 1

    def handle_endtag(self, tag: str) -> None:
        breaks = tag in self.BREAKS
        if self.opened[tag]:  # else a stray end tag, which closes nothing
            while True:
                name, skipped, breaks = self.open.pop()
                self.skipped -= skipped
                self.opened[name] -= 1
                if name == tag:
                    break
        if tag not in self.VOID:  # </br> of a <br/> breaks nothing more
            self._block(tag, breaks)

    def _block(self, tag: str, breaks: bool) -> None:
        """Break the line at a block's edge (see :data:`BREAKS`)."""
        if tag not in self.BLOCKS or self._skipping():
            return
        if breaks or not self.line_start:
            self.parts.append("\n")
            self.line_start = True

    def handle_data(self, data: str) -> None:
        if self._skipping():
            return
        if self.opened["pre"]:  # preformatted: its line breaks are lines, as a browser shows
            text = re.sub(r"\r\n?", "\n", data)
            _, newline, last_line = text.rpartition("\n")
            self.line_start = self.line_start or bool(newline)
        else:
            text = last_line = re.sub(r"[ \t\r\n]+", " ", data)
        self.parts.append(text)
        # A no-break space makes a line of its own, as a browser shows it.
        self.line_start = self.line_start and not last_line.strip(" \t")


# A "<" that another "<" follows before any ">" (or nothing does) opens no tag. The standard
# library's parser looks for each such tag's end to the end of the text: a text of them costs
# it the square of its length.
UNCLOSED_TAG = re.compile(r"<(?=[^<>]*(?:<|$))")


def html_to_text(html: str) -> str:
    """The text of an HTML email: quoted parts (``blockquote``, a client's quote) left out."""
    parser = _Text()
    parser.feed(UNCLOSED_TAG.sub("&lt;", html))
    parser.close()
    lines = (line.strip() for line in "".join(parser.parts).splitlines())
    return "\n".join(lines)


def unflowed(text: str, delsp: bool = False) -> str:
    """The text of a ``format=flowed`` part (RFC 3676, as Thunderbird writes by default) with
    its soft line breaks joined: a line that ends in a space goes on on the next line of the
    same quote depth ("the seven of " then "diamonds"). The space a sender stuffed before a
    line is dropped, and with ``delsp`` the one ending a soft break too; a signature's "-- "
    line is a line of its own. Quoted lines keep their marks."""
    lines: list[str] = []
    soft_at: int | None = None  # the quote depth of a line that ended soft, if the last did
    for line in text.split("\n"):
        line = line.removesuffix("\r")
        depth = len(line) - len(line.lstrip(">"))
        content = line[depth:].removeprefix(" ")
        soft = content.endswith(" ") and content != "-- "
        if soft and delsp:
            content = content[:-1]
        if soft_at is not None and soft_at == depth:
            lines[-1] += content
        else:
            lines.append(("> " * depth) + content if depth else content)
        soft_at = depth if soft else None
    return "\n".join(lines)


def body_text(message: EmailMessage) -> str:
    """The reply's text: its plain-text part, or its HTML converted when it has no other (or
    a blank one, as some clients send beside the HTML); of either, the first
    :data:`READ_CHARS` characters only."""
    part = _body(message, "plain")
    text = _content(part)[:READ_CHARS] if part is not None else ""
    if part is not None and str(part.get_param("format", "")).lower() == "flowed":
        text = unflowed(text, delsp=str(part.get_param("delsp", "")).lower() == "yes")
    if text.strip():
        return text
    part = _body(message, "html")
    return html_to_text(_content(part)[:READ_CHARS]) if part is not None else text


def _body(message: EmailMessage, subtype: str) -> Message | None:
    """The message's body part of this text subtype, as :meth:`~EmailMessage.get_body` finds
    it; of a structure it fails on (a ``multipart/related`` part holding no parts, whose
    text it takes for parts), the first such part that is no attachment; else ``None``."""
    try:
        return message.get_body(preferencelist=(subtype,))
    except Exception:  # the standard library's own bugs on a malformed structure
        try:
            return next(
                (
                    part
                    for part in message.walk()
                    if part.get_content_type() == f"text/{subtype}"
                    and part.get_content_disposition() != "attachment"
                ),
                None,
            )
        except Exception:
            return None


def _content(part: Message) -> str:
    """The part's text, as well as it can be decoded (an unknown charset reads as UTF-8)."""
    try:
        content = part.get_content()  # type: ignore[attr-defined]
    except (LookupError, ValueError, TypeError):  # a charset unknown or unreadable, say
        payload = part.get_payload(decode=True)
        content = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
    return storable(content) if isinstance(content, str) else ""


# Where the rest of a reply is no longer the person's: a signature, a rule or a divider above a
# client's copy of the email answered (Outlook, Apple Mail, Gmail's forward), or a phone's or
# client's signature, in the common client languages (English, French, German, Italian, Dutch,
# Spanish).
REST = re.compile(
    r"^\s*(--\s*$|__{4,}|-{3,}\s*(original message|message d.origine|forwarded message"
    r"|message transf[ée]r[ée]|urspr[üu]ngliche nachricht|weitergeleitete nachricht"
    r"|messaggio originale|messaggio inoltrato|oorspronkelijk bericht|doorgestuurd bericht"
    r"|mensaje original|mensaje reenviado)"
    r"|(from|de|sent|envoy[ée]|to|à)\s*:.*@"
    r"|sent from (my|yahoo mail|mail for windows|outlook)\b"
    r"|envoy[ée] (de|depuis|[àa] partir de) (mon|yahoo mail|courrier pour windows|outlook)\b"
    r"|von meinem\b.*\bgesendet\b|get outlook for\b"
    r"|inviato da\w*\s|verstuurd vanaf\b|enviado desde\b)",
    re.IGNORECASE,
)
# A line of a client's header block above its copy of the email answered: "Von: …",
# "Oggetto: …". Such a line ends the person's text only as part of a block (see
# :func:`_header_block`), so that a sentence of theirs starting "Da:" or "A:" is read.
HEADER = re.compile(
    r"^\s*\*?(from|de|von|da|van|sent|envoy[ée]|gesendet|inviato|verzonden|enviado|date|datum"
    r"|data|fecha|to|à|a|an|aan|para|cc|subject|objet|betreff|oggetto|onderwerp|asunto)"
    r"\s*(?:\*\s*)?:",
    re.IGNORECASE,
)
FROM = re.compile(r"^\s*\*?(from|de|von|da|van)\s*(?:\*\s*)?:", re.IGNORECASE)
ADDRESS = re.compile(r"<[^<>\s]+@[^<>\s]+>")
# "On Tue, 1 Dec 2026, Split Mind <x@y> wrote:", "Am … schrieb Split Mind <x@y>:",
# "Il giorno … ha scritto:", "Op … schreef …:", "El … escribió:", often wrapped over two lines.
ATTRIBUTION_START = re.compile(r"^\s*(on|le|am|il|op|el)\b", re.IGNORECASE)
ATTRIBUTION_VERB = re.compile(
    r"\b(wrote|a\s+[ée]crit|schrieb|ha\s+scritto|schreef|escribi[óo])\b", re.IGNORECASE
)
# The characters of a line that are read: a person's line is shorter, and every pattern
# above then costs little whatever a stranger sends.
LINE_CHARS = 1_000


def _attribution(line: str) -> bool:
    """Whether a line introduces a quote: it starts as one, names the writing and ends in
    ``:`` (tested in three steps, each in a time that grows with the line's length only)."""
    start = ATTRIBUTION_START.match(line)
    return (
        start is not None
        and line.rstrip().endswith(":")
        and ATTRIBUTION_VERB.search(line, start.end()) is not None
    )


def _header_block(lines: list[str], index: int) -> bool:
    """Whether ``lines[index]`` starts a client's header block: a header line holding an
    address in ``<…>``, or a "From:" line with another header line within the next two."""
    line = lines[index]
    if not HEADER.match(line):
        return False
    if ADDRESS.search(line):
        return True
    return bool(FROM.match(line)) and any(
        HEADER.match(next_) for next_ in lines[index + 1 : index + 3]
    )


def _intro(lines: list[str], index: int) -> int:
    """How many lines, from ``lines[index]``, introduce a quote ("On … wrote:"): 0, 1 or 2."""
    line = lines[index]
    if _attribution(line):
        return 1
    following = lines[index + 1] if index + 1 < len(lines) else ""
    if (
        ATTRIBUTION_START.match(line)
        and not _attribution(following)
        and _attribution(f"{line} {following.strip()}")
    ):
        return 2
    return 0


def _quoted_below(lines: list[str], index: int) -> bool:
    """Whether the first line from ``lines[index]`` that is not empty is quoted with ``>``."""
    for line in lines[index:]:
        if line.strip():
            return line.lstrip().startswith(">")
    return False


def _cut(line: str) -> str:
    """The first :data:`LINE_CHARS` characters of a line, cut after its last whole word: a
    piece of a word ("7" of "7s") is no word the line holds."""
    if len(line) <= LINE_CHARS:
        return line
    cut = line[: LINE_CHARS + 1]
    return cut[: cut.rfind(" ")] if " " in cut else cut[:LINE_CHARS]


def _own_lines(text: str) -> list[str | None]:
    """The lines the person wrote, each stripped, in order; an empty line between paragraphs,
    and ``None`` where a quote (``>`` lines, their intro) stood.

    Reading stops at a signature, a client's header block or divider above its copy of the
    email answered, and at a quote intro with no ``>`` quote under it (that copy, unmarked);
    at most :data:`MOVE_LINES` lines that are not empty are read.
    """
    lines = [_cut(line) for line in text.replace("\r\n", "\n").split("\n")]
    kept: list[str | None] = []
    written = 0
    index = 0
    while index < len(lines) and written < MOVE_LINES:
        line = lines[index]
        if REST.match(line) or _header_block(lines, index):
            break
        intro = _intro(lines, index)
        if intro:
            if not _quoted_below(lines, index + intro):
                break
            kept.append(None)
            index += intro
            continue
        if line.lstrip().startswith(">"):
            if not kept or kept[-1] is not None:
                kept.append(None)
        elif line.strip():
            kept.append(line.strip())
            written += 1
        else:
            kept.append("")
        index += 1
    return kept


def only_cards(line: str) -> bool:
    """Whether a line holds only cards and suits ("5C", "and 3H", "hearts"), no other word:
    under a move's line, more of the move."""
    rest = TOKEN.sub(" ", normalise(line))
    return not re.sub(r"\b(and|et|&)\b|[\s,;:.!+&/-]", "", rest)


# The verbs of a move, English and French, accents dropped as :func:`normalise` drops them: a
# line naming a card right after one ("I play 5C", "je donne le 7 de trefle") is a move's line.
MOVE_VERBS = frozenset(
    [
        "play",
        "plays",
        "playing",
        "lead",
        "leads",
        "leading",
        "give",
        "gives",
        "giving",
        "name",
        "names",
        "naming",
        "swap",
        "swaps",
        "swapping",
        "exchange",
        "joue",
        "joues",
        "jouez",
        "jouer",
        "donne",
        "donnes",
        "donnez",
        "donner",
        "nomme",
        "nommes",
        "nommez",
        "nommer",
        "annonce",
        "annoncer",
        "annoncant",
        "echange",
        "echanger",
        "mets",
        "mettre",
        "pose",
        "poser",
    ]
)
# The words a move's line may hold besides its cards, its suits and the verbs above; one
# phrase a line, its words as :func:`_words` splits them. A line naming a card with any other
# word on it and no verb right before the card ("I hold 2 elixirs", "vers 7h") is a sentence.
FILLERS = (
    "my move",
    "move",
    "mon coup",
    "coup",
    "please",
    "thanks",
    "thank you",
    "ok",
    "okay",
    "then",
    "and",
    "now",
    "the",
    "my",
    "i",
    "merci",
    "svp",
    "stp",
    "s'il te plait",
    "s'il vous plait",
    "d'accord",
    "c'est tout",
    "et",
    "puis",
    "alors",
    "le",
    "la",
    "les",
    "l'",
    "mon",
    "ma",
    "mes",
    "je",
)
_FILLER = re.compile(
    r"(?<!\S)(?:" + "|".join(re.escape(f) for f in sorted(FILLERS, key=len, reverse=True)) + r")"
    r"(?!\S)"
)
# Words that deny or take back a move ("I won't play 5H", "no wait, 6H"): no move's line holds
# one, and one under the move makes the reply unclear.
DENIALS = frozenset(
    [
        "no",
        "not",
        "never",
        "don't",
        "won't",
        "can't",
        "cannot",
        "wait",
        "oops",
        "sorry",
        "instead",
        "actually",
        "non",
        "ne",
        "n'",
        "pas",
        "jamais",
        "attends",
        "oups",
        "pardon",
        "plutot",
        "finalement",
        "cote",  # "je mets le 7 de côté": set aside, kept
        # "give 3H, keep 5C": the card kept is named as the cards given are
        "keep",
        "keeps",
        "keeping",
        "kept",
        "garde",
        "gardes",
        "gardez",
        "garder",
        "gardant",
        # "give 3H or 5C": cards offered as alternatives, not all of them given
        "or",
        "ou",
    ]
)
CARD, SUIT = "#", "~"  # what stands for a card and for a suit in :func:`_words`


# The French past participles of the verbs above: what was done, no move ("tu m'as donné le 3
# de cœur", "bien joué, le 5 de cœur !", "Sam a joué 5♥"), as "played" and "gave" are none.
# Only their accent tells them from the verb's other forms ("joue", "donne"), and
# :func:`normalise` drops it: each is read as a word of :data:`PAST` first.
PAST_PARTICIPLE = re.compile(
    r"(?<!\w)(?:jou|donn|nomm|annonc|[ée]chang|pos)(?:é|ée|és|ées)(?!\w)", re.IGNORECASE
)
PAST = "done"

# Words that make a move's verb right after them a remark on a move made ("thanks for giving
# the 3H", "nice lead, 5H!", "bravo pour donner le 3H"): the verb is read as :data:`PAST`, and
# the line is a sentence. A move's line read as a sentence costs an answer asking for the
# move alone; a sentence read as a move's line, a move that cannot be taken back.
PRAISE = frozenset(
    [
        "for",
        "nice",
        "good",
        "great",
        "well",
        "lovely",
        "neat",
        "clever",
        "smart",
        "excellent",
        "brilliant",
        "cool",
        "pour",
        "bravo",
        "beau",
        "belle",
        "joli",
        "jolie",
        "super",
    ]
)


def _words(line: str) -> list[str]:
    """A line's words, normalised, with :data:`CARD` for each card and :data:`SUIT` for each
    suit it names on its own; a French past participle (:data:`PAST_PARTICIPLE`) and a verb
    right after a word of :data:`PRAISE` are no verb."""
    line = PAST_PARTICIPLE.sub(f" {PAST} ", unicodedata.normalize("NFC", line))
    marked = TOKEN.sub(
        lambda token: f" {SUIT if token['named'] or token['letter'] else CARD} ", normalise(line)
    )
    words = re.findall(rf"[a-z0-9]+'?[a-z0-9]*|[{CARD}{SUIT}]", marked)
    return [
        PAST if word in MOVE_VERBS and before in PRAISE else word
        for before, word in zip(["", *words], words, strict=False)
    ]


def _denies(words: list[str]) -> bool:
    return any(word in DENIALS or word.endswith("n't") for word in words)


def move_line(line: str) -> bool:
    """Whether a line naming a card is a move's line, not a sentence that happens to name one.

    It is no question (no ``?``), denies nothing (:data:`DENIALS`), and either holds a
    move's verb right before a card, with only fillers between ("I am going to play the
    seven of diamonds now"), or holds nothing but cards, suits, verbs and
    :data:`FILLERS` ("5H, c'est tout", "4S then c"). "Tu as cœur ?", "je joue ce soir
    vers 7h" and "I hold 2 elixirs" are sentences: a move read from one could not be
    taken back.
    """
    if "?" in line or not read_move(line).cards:
        return False
    words = _FILLER.sub(" ", " ".join(_words(line))).split()
    if _denies(words):
        return False
    if all(word in (CARD, SUIT) or word in MOVE_VERBS for word in words):
        return True
    return any(
        verb in MOVE_VERBS and next_ == CARD for verb, next_ in zip(words, words[1:], strict=False)
    )


def _move_span(lines: list[str | None]) -> tuple[int, int] | None:
    """Where the move is in :func:`_own_lines`: from the first :func:`move_line`, through the
    lines right under it holding only cards, and the line under those when it names the suit
    of an elixir they name none for (:func:`_names_the_elixir`); ``None`` when no line is
    one."""
    for first, line in enumerate(lines):
        if line and move_line(line):
            end = first + 1
            while end < len(lines) and (line_ := lines[end]) and only_cards(line_):
                end += 1
            if end < len(lines) and _names_the_elixir(lines[first:end], lines[end]):
                end += 1
            return first, end
    return None


def _names_the_elixir(move: list[str | None], under: str | None) -> bool:
    """Whether ``under``, the line right under a move's lines, names the suit of the elixir
    they lead but do not name it for ("4S", then "hearts please"): it names a suit on its
    own, no card, and is no question nor denial ("no hearts", "hearts?")."""
    led = read_move("\n".join(line or "" for line in move))
    if not under or led.name is not None or led.two_suits or not led.cards[-1].endswith("S"):
        return False
    if "?" in under or read_move(under).cards or _denies(_words(under)):
        return False
    return any(found["named"] for found in TOKEN.finditer(normalise(under)))


def _unclear(lines: list[str | None], span: tuple[int, int]) -> bool:
    """Whether a line under the move names a card that may be a move too: a second move's
    line, a line naming a card in another paragraph ("5H", then "no wait, 6H" apart), or a
    line of the move's paragraph taking it back ("no, 6H"). A line of the paragraph naming
    a card in a sentence ("nice 5H!") is its note."""
    first, end = span
    paragraph = True  # no empty line or quote yet between the move and the line
    for line in lines[end:]:
        if not line:
            paragraph = False
            continue
        if not read_move(line).cards:
            continue
        if move_line(line) or not paragraph or _denies(_words(line)):
            return True
    return False


# What a reply may ask that only the game's page does, English and French, accents dropped.
PAGE_ONLY = re.compile(
    r"\b(resign\w*|give up|forfeit|abandon\w*|j'abandonne|remind\w*|rappel\w*|relanc\w*)\b"
)


def asks_the_page(text: str) -> bool:
    """Whether a reply asks to resign or to remind the opponent ("I resign", "j'abandonne",
    "remind Sam"): neither is done by reply."""
    return PAGE_ONLY.search(normalise(text)) is not None


def _sentence(lines: list[str | None]) -> str:
    """The first line naming a card, when it is no move's line: what the answer quotes."""
    return next((line for line in lines if line and read_move(line).cards), "")


@dataclass(frozen=True)
class Reply:
    """A reply's text read for what the person wrote (:func:`read_reply`)."""

    written: str
    """The lines the person wrote: not the quoted lines (``>``) nor the line introducing
    them, and nothing from their signature or a copy of the email answered on (see
    :func:`_own_lines`). Text above the quote (top posting) and below it (bottom posting)
    is read alike; at most :data:`MOVE_LINES` lines."""
    move: str
    """The lines that are its move (:func:`_move_span`), for :func:`read_move`: empty when
    the person wrote no card above a signature or a copy of the email answered."""
    note: list[str]
    """The lines that speak to the opponent: the other lines of the move's paragraph, when
    it is above any quote (:func:`_note_lines`)."""
    sentence: str = ""
    """With no move, the first line naming a card in a sentence ("Tu as cœur ?"): the answer
    says that no card named so is played."""
    unclear: bool = False
    """Whether a line under the move names a card that may be the move instead (see
    :func:`_unclear`): then nothing is played."""


def read_reply(text: str) -> Reply:
    """The parts of a reply's text: what the person wrote, their move, their note."""
    lines = _own_lines(text)
    span = _move_span(lines)
    return Reply(
        written="\n".join(line for line in lines if line),
        move="" if span is None else "\n".join(line or "" for line in lines[span[0] : span[1]]),
        note=_note_lines(lines, span),
        sentence=_sentence(lines) if span is None else "",
        unclear=span is not None and _unclear(lines, span),
    )


def _note_lines(lines: list[str | None], span: tuple[int, int] | None) -> list[str]:
    """The note of :func:`_own_lines`' ``lines`` whose move is at ``span``.

    Only the paragraph of the move (lines with no empty line between them): a
    greeting or a sign-off set apart by an empty line, a signature, text below
    the quote or a copy of the email, and the move's own lines are left out; a
    line under the move naming a card in a sentence ("nice 5H!") is the note's,
    not the move's. Empty when there is no move, or it is below the quote.
    """
    if span is None or None in lines[: span[0]]:
        return []
    first, end = span
    while first > 0 and lines[first - 1]:
        first -= 1
    while end < len(lines) and lines[end]:
        end += 1
    return [
        line
        for i, line in enumerate(lines[first:end], first)
        if line and not span[0] <= i < span[1]
    ]


# --- the move in it ----------------------------------------------------------------

SYMBOLS = {"♥": "h", "♡": "h", "♦": "d", "♢": "d", "♣": "c", "♧": "c", "♠": "s", "♤": "s"}
# Not "one", "un" nor "une": "je joue un carreau" is "I play a diamond", no card named, and a
# move read from it could not be taken back.
RANKS = {
    "ace": "1",
    "as": "1",
    "two": "2",
    "deux": "2",
    "three": "3",
    "trois": "3",
    "four": "4",
    "quatre": "4",
    "five": "5",
    "cinq": "5",
    "six": "6",
    "seven": "7",
    "sept": "7",
}
# Suit words of both looks, English and French, singular and plural, without accents.
SUIT_WORDS = {
    "H": ("hearts", "heart", "coeurs", "coeur", "red", "rouges", "rouge"),
    "D": (
        "diamonds",
        "diamond",
        "carreaux",
        "carreau",
        "green",
        "verts",
        "vert",
        "vertes",
        "verte",
    ),
    "C": (
        "clubs",
        "club",
        "trefles",
        "trefle",
        "purple",
        "violets",
        "violet",
        "violettes",
        "violette",
    ),
    "S": ("spades", "spade", "piques", "pique", "elixirs", "elixir", "potions", "potion"),
}
SUIT_OF_WORD = {word: suit for suit, words in SUIT_WORDS.items() for word in words}
_WORDS = "|".join(sorted(SUIT_OF_WORD, key=len, reverse=True))
# The French ace only before "de", "du" or "d'" ("l'as de cœur"): "as" is an English word
# too, and "play 4S as hearts" names a suit, no ace.
_RANK = (
    r"(?P<rank>[1-7]|"
    + "|".join(sorted(set(RANKS) - {"as"}, key=len, reverse=True))
    + r"|as(?=\s*(?:de|du|d')))"
)
_SUIT = rf"(?P<suit>{_WORDS})"
_ELIXIR_WORDS = "|".join(sorted(SUIT_WORDS["S"], key=len, reverse=True))
_BOUND_L, _BOUND_R = r"(?<![a-z0-9])", r"(?![a-z0-9])"
TOKEN = re.compile(
    "|".join(
        (
            # 5h, 5 h, 4s, 4+ (an elixir written as the classic look's potion); not "4 d'élixir"
            rf"{_BOUND_L}(?P<short_rank>[1-7])\s?(?P<short_suit>[hdcs])(?![a-z0-9'])",
            # 4½ of spades, 4,5 de pique, 5½S (:func:`normalise` writes each half as a +): a
            # rank with its half is an elixir's, never a colour card's ("4½ de cœur" is none)
            rf"{_BOUND_L}(?P<half_rank>[2-5])\+\s*(?:(?:of|de|du|d')\s*)?(?:(?:the|la|le|les)\s+)?"
            rf"(?:{_ELIXIR_WORDS}|s)(?![a-z0-9'])",
            # five of hearts, 5 de coeur, 7 rouge, 4 d'elixir
            rf"{_BOUND_L}{_RANK}\s*(?:(?:of|de|du|d')\s*)?(?:(?:the|la|le|les)\s+)?{_SUIT}"
            rf"{_BOUND_R}",
            # red 5, elixir 4, potion 4+, pique 4
            rf"{_BOUND_L}(?P<suit_first>{_WORDS})\s*(?P<rank_after>[1-7])\+?(?![0-9])",
            # a suit on its own: the suit an elixir names
            rf"{_BOUND_L}(?P<named>{_WORDS}){_BOUND_R}",
            # or its letter, not the letter of a word ("I'd", "c'est", "d'accord")
            r"(?<![a-z0-9'])(?P<letter>[hdc])(?![a-z0-9'])",
        )
    )
)
# What may stand between a card (or a suit) and the letter of a suit after it: "4S H", "4S, H".
# Not a line break: a letter alone under the card ("4S", then "H.") is an initial signing the
# reply, and a suit read from it a move the player never wrote.
LETTER_AFTER = re.compile(r"(?:[^\S\r\n]|[,:])*")


@dataclass(frozen=True)
class Understood:
    """What a reply says: the cards it names, in order, and the suit it names, if any;
    ``two_suits`` when it names more than one for the elixir (then ``name`` is ``None``)."""

    cards: list[str] = field(default_factory=list)
    name: str | None = None
    two_suits: bool = False


# A card written with a suit symbol: the rank then the symbol, or the symbol then the rank.
# A rank written with its half ("4½") is an elixir's: only a spade's symbol after it is its
# own ("4½♠"); another is the suit the elixir names ("elixir 4½ ♥"), never a colour card's.
SYMBOL_CARD = re.compile(
    rf"(?P<rank>[1-7])(?:½(?=\s?[♠♤]))?\s?(?P<symbol>[{''.join(SYMBOLS)}])"
    rf"|(?P<symbol_first>[{''.join(SYMBOLS)}])\s?(?P<rank_after>[1-7])½?"
)


# An elixir's half written as a decimal, with French's comma or a point, or as a fraction:
# "4,5", "4.5" and "4 1/2" are the elixir 4½, written as "4½" is, never the 5 after the
# comma or the 2 under the bar (a list of ranks has a space: "4, 5").
HALF = re.compile(r"(?<![\d.,/])([2-5])(?:[.,]5|\s*1/2)(?![\d/])")
# The ace as the pages and emails name it in words, its face first ("1 (ace) of hearts",
# "red 1 (ace)", "1 (as) de cœur", :func:`service.game_text.card_words`), or a player's
# "1 ace of hearts": the 1 it is, so that the rank is read once and the line holds no other
# word. The French "as" only before "de", as :data:`_RANK` reads it.
ACE_IN_WORDS = re.compile(
    r"(?<![a-z0-9.,/])1\s*(?:\(\s*(?:ace|as)\s*\)|ace(?![a-z0-9])|as(?=\s*(?:de|du|d')))"
)


def normalise(text: str) -> str:
    """Lower case, accents and ligatures dropped, suit symbols written as letters (5♥ → 5h),
    an elixir's half written as the classic look's + however it is written (4½, 4,5 and
    4 1/2 → 4+), the ace's rank written once (1 (ace) → 1)."""
    text = text.replace("œ", "oe").replace("Œ", "oe").replace("’", "'")
    text = HALF.sub(r"\1½", text)
    # ♠4 is the standard look's elixir 4: rank first, like the notation. Read left to right,
    # each rank goes with the symbol right beside it, before or after: 3♥ 5♣, ♠3 ♠4, 5♥ ♠4;
    # and each card so written is a word of its own, written together or not: 4♦6♦.
    text = SYMBOL_CARD.sub(
        lambda card: (
            (card["rank"] or card["rank_after"])
            + SYMBOLS[card["symbol"] or card["symbol_first"]]
            + " "
        ),
        text,
    )
    # A symbol on its own is its suit's word, as a suit is named: "♠2½, I name ♣".
    for symbol, letter in SYMBOLS.items():
        text = text.replace(symbol, f" {SUIT_WORDS[letter.upper()][0]} ")
    # The half left is a rank's, written as the classic look writes it ("potion 4+").
    text = text.replace("½", "+")
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()
    return ACE_IN_WORDS.sub("1", bare)


def read_move(text: str) -> Understood:
    """The cards and named suit a reply's text gives, in the replay notation's letters.

    ``5H``, ``4S H`` and ``3H 5C``; ``5♥`` and ``♠4``; ``play the 5 of hearts``,
    ``jouer 4♠ cœur``, ``give 3H and 5C``, ``donner le 7 de trèfle et l'as de
    carreau``; the classic look's ``red 5`` and ``potion 4+``. A suit word after
    an elixir is the suit it names, and so is a suit's letter right after it
    (``4S H``, never the letter of a word such as "I'd"); two suits named are
    ``two_suits``, neither of them the name. Each card is read once, and at most
    :data:`MOVE_CARDS` of them. What it is as a move, and whether it is legal,
    is the game's question.
    """
    cards: list[str] = []
    names: list[str] = []
    read_end = 0  # where the last card or suit read ends
    normalised = normalise(text)
    for found in TOKEN.finditer(normalised):
        groups = found.groupdict()
        if groups["short_rank"]:
            card = f"{groups['short_rank']}{groups['short_suit']}".upper()
        elif groups["half_rank"]:
            card = f"{groups['half_rank']}S"
        elif groups["rank"]:
            card = f"{RANKS.get(groups['rank'], groups['rank'])}{SUIT_OF_WORD[groups['suit']]}"
        elif groups["suit_first"]:
            card = f"{groups['rank_after']}{SUIT_OF_WORD[groups['suit_first']]}"
        else:
            if groups["named"]:
                suit = SUIT_OF_WORD[groups["named"]]
            elif LETTER_AFTER.fullmatch(normalised, read_end, found.start()):
                suit = groups["letter"].upper()
            else:
                continue  # a lone letter away from the cards is no suit ("a b c")
            read_end = found.end()
            # Only after an elixir does a suit on its own name one ("4S H"): elsewhere it is
            # a word of the sentence ("5H, c'est tout").
            if cards and cards[-1].endswith("S") and suit != "S" and suit not in names:
                names.append(suit)
            continue
        read_end = found.end()
        if card not in cards:  # 7S, 1S too: not cards of the game, which the answer says
            cards.append(card)
        if len(cards) == MOVE_CARDS:
            break
    if len(names) > 1:
        return Understood(cards, None, two_suits=True)
    return Understood(cards, names[0] if names else None)


def quoted(text: str, limit: int = QUOTE_CHARS) -> str:
    """The start of what the person wrote, on one line, for the answer to quote back: at most
    ``limit`` characters."""
    shown = "".join(char for char in text if char.isspace() or unicodedata.category(char) != "Cc")
    line = " ".join(shown.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
