"""The game's words in the reader's language and the game's look.

Cards, suits, seats, what an elixir did, deadlines and the messages of the
rules the engine enforces (keyed by ``RuleError.code``, so the engine keeps its
own English) are written here, in the locale in use (:mod:`service.language`
chooses it) and in the look of the game: ``standard`` (♥ ♦ ♣ with ♠ elixirs,
Keeper and Shadow) or ``classic`` (red, green and purple cards, potions 2+ to
5+, Jekyll and Hyde).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from functools import cache, lru_cache
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from babel import Locale
from babel.dates import get_timezone_gmt
from confusable_homoglyphs import confusables
from flask_babel import format_datetime, get_locale

from .addresses import is_time_zone
from .language import DEFAULT_LANGUAGE, LANGUAGES, LOCALES, gettext, ngettext, recipient_locale
from .language import lazy_gettext as _l
from .rules import ELIXIRS, EXCHANGE, PLAY, SWAP, is_elixir, other
from .rules.cards import suit_of
from .rules.engine import Played

LOOKS: tuple[str, ...] = ("standard", "classic")

SUITS = {
    "standard": {"H": _l("hearts"), "D": _l("diamonds"), "C": _l("clubs")},
    "classic": {"H": _l("red"), "D": _l("green"), "C": _l("purple")},
}
SEATS = {
    "standard": {"keeper": _l("Keeper"), "shadow": _l("Shadow")},
    "classic": {"keeper": "Jekyll", "shadow": "Hyde"},
}
# The seats inside a sentence: "the Keeper wins", but "Jekyll wins".
THE_SEATS = {
    "standard": {"keeper": _l("the Keeper"), "shadow": _l("the Shadow")},
    "classic": {"keeper": "Jekyll", "shadow": "Hyde"},
}
SYMBOLS = {"H": "♥", "D": "♦", "C": "♣", "S": "♠"}
# An elixir's effect on a trick, after the suit it meets: ♥ Reset, ♦ Swap, ♣ Steal.
EFFECT_NAMES = {"reset": _l("Reset"), "swap": _l("Swap"), "steal": _l("Steal")}
WORDS = {
    "standard": {
        "elixir": _l("elixir"),
        "elixirs": _l("elixirs"),
        "two": _l("Two elixirs: no effect"),
    },
    "classic": {
        "elixir": _l("potion"),
        "elixirs": _l("potions"),
        "two": _l("Two potions: no effect"),
    },
}


# The computer's levels (service.bots.LEVELS) as players read them.
LEVEL_NAMES = {
    "random": _l("random"),
    "easy": _l("easy"),
    "medium": _l("medium"),
    "hard": _l("hard"),
}


def level_name(level: str) -> str:
    """A computer level in words: ``hard`` (``difficile`` in French)."""
    return str(LEVEL_NAMES[level])


def computer_name(level: str) -> str:
    """The computer at a level, as it is named wherever a player's name goes."""
    return gettext("the computer (%(level)s)", level=level_name(level))


def _name_key(name: str) -> str:
    """A name reduced to what a reader tells apart at a glance: its letters and digits,
    without case or accents, each letter of another script that looks like a Latin one
    read as that one (``The Cοmputer - HARD``, its ``ο`` Greek, reads as ``thecomputerhard``)."""
    latin = "".join(map(_as_latin, name))
    return "".join(ch for ch in unicodedata.normalize("NFKD", latin).casefold() if ch.isalnum())


@lru_cache(maxsize=4096)
def _as_latin(ch: str) -> str:
    """The ASCII character that ``ch``, of another script, is mistaken for (Unicode's
    confusables, :mod:`confusable_homoglyphs`), or ``ch`` itself."""
    if ch.isascii():
        return ch
    for entry in confusables.is_confusable(ch, preferred_aliases=["latin"]) or ():
        for glyph in entry["homoglyphs"]:
            if glyph["c"].isascii():
                return str(glyph["c"])
    return ch


# The articles the computer's name begins with, in the service's languages ("the",
# "l’"), as name keys: a name without it reads as the computer's just the same.
ARTICLES = ("the", "l")


# The top-level domains that links in unwanted mail most often end in, those of link
# shorteners and new ones that read as files or words ("evil.zip", "login.dev"), and the
# reserved ones: "evil.test" and "bit.ly/x" are addresses, "ann.lee" (a name made of an
# address's first part) and "J.Smith" are names.
LINK_DOMAINS = (
    "com|net|org|info|biz|io|co|me|ly|app|xyz|top|site|online|club|link|click|shop|live|"
    "ru|cn|uk|de|fr|eu|us|tk|cc|ca|au|nl|es|pl|br|jp|ws|pw|su|ai|gg|tv|ch|se|dk|fi|cz|kr|vn|"
    "mx|za|nz|ir|vip|win|bid|loan|work|dev|zip|mov|page|gl|to|gd|is|im|sh|fm|am|nu|ml|ga|cf|"
    "gq|icu|cam|rest|buzz|fun|store|tech|pro|space|website|today|email|"
    "example|test|invalid|localhost"
)
# The full stops IDNA reads as one (RFC 3490), besides those NFKC makes one: "evil。com".
FULL_STOPS = str.maketrans({"\u3002": "."})
# A web or email address in a name: a scheme, "www.", an @, a domain (its first word of
# two letters or more: "J.Page", "V.To" and "S.Im" are an initial and a name), or a path
# after a dotted word of any ending ("goo.gl/abc").
ADDRESS_IN_NAME = re.compile(
    rf"://|\bwww\.|@|\b[\w-]{{2,}}(?:\.[\w-]+)*\.(?:{LINK_DOMAINS})(?![\w-])"
    r"|\b[\w-]+(?:\.[\w-]+)+/",
    re.IGNORECASE,
)


def holds_an_address(name: str) -> bool:
    """Whether a person's name holds a web or email address, which would carry a link into
    the subject and greeting of an email to someone who never asked for one."""
    # Wide letters and stops read as a domain's: "ｅｖｉｌ．ｃｏｍ" is "evil.com"; and letters of
    # another script as the Latin ones they pass for: "evil.cоm", its "о" Cyrillic.
    read = unicodedata.normalize("NFKC", name).translate(FULL_STOPS)
    return ADDRESS_IN_NAME.search("".join(map(_as_latin, read))) is not None


def poses_as_computer(name: str) -> bool:
    """Whether a person's name reads as the computer's (:func:`computer_name`) at some level
    in some language of the service, with or without its article, or as the computer with
    no level: shown beside a person's, it would pass for the computer."""
    key = _name_key(name)
    return bool(key) and key in _computer_keys()


@cache
def _computer_keys() -> frozenset[str]:
    """The name keys of the computer's names, made once: the catalogues do not change."""
    keys = set()
    for language in LANGUAGES:
        with recipient_locale(language):
            named = [computer_name(level) for level in LEVEL_NAMES]
            bare = gettext("the computer (%(level)s)", level="")
        for key in map(_name_key, [bare, *named]):
            keys.add(key)
            keys.update(key.removeprefix(article) for article in ARTICLES)
    return frozenset(keys)


class Named(Protocol):
    """A player as :func:`player_name` reads it (a :class:`~service.models.Player`)."""

    @property
    def name(self) -> str: ...

    @property
    def computer_level(self) -> str | None: ...


def player_name(player: Named) -> str:
    """What a player is called: a person's own name, or the computer with its level,
    in the reader's language."""
    if player.computer_level is not None:
        return computer_name(player.computer_level)
    return str(player.name)


def suit_name(suit: str, look: str = "standard") -> str:
    """A suit's name: ``hearts`` or ``red`` (``cœur``, ``rouge`` in French)."""
    return str(SUITS[look][suit])


def suit_symbol(suit: str) -> str:
    """The standard look's symbol of a suit letter: ``♥``, ``♦``, ``♣``, and ``♠`` for elixirs."""
    return SYMBOLS[suit]


def seat_name(seat: str, look: str = "standard") -> str:
    """A seat's name: Keeper and Shadow, or Jekyll and Hyde."""
    return str(SEATS[look][seat])


def the_seat(seat: str, look: str = "standard") -> str:
    """A seat's name inside a sentence: ``the Keeper``, or ``Jekyll``."""
    return str(THE_SEATS[look][seat])


def upfirst(text: str) -> str:
    """``text`` with its first letter in capitals (``the Keeper`` starting a sentence)."""
    return text[:1].upper() + text[1:]


def elixir_word(look: str = "standard", plural: bool = False) -> str:
    """What the look calls an elixir: ``elixir`` or ``potion``."""
    return str(WORDS[look]["elixirs" if plural else "elixir"])


def card_name(card: str, look: str = "standard") -> str:
    """A card as a player reads it: ``7♥`` and ``♠4½``, or ``red 7`` and ``potion 4+``.

    An elixir is worth its number and a half: the standard look writes the half, the
    classic look's ``+`` says it. A spade the game does not have (``♠7``, read in a
    reply) is worth nothing, so no half.
    """
    rank, suit = card[0], suit_of(card)
    if look == "standard" and is_elixir(card):
        return f"{SYMBOLS[suit]}{rank}½" if card in ELIXIRS else f"{SYMBOLS[suit]}{rank}"
    if look == "standard":
        return f"{rank}{SYMBOLS[suit]}"
    if is_elixir(card):
        return gettext("potion %(rank)s+", rank=rank)
    return gettext("%(colour)s %(rank)s", colour=suit_name(suit, look), rank=rank)


def card_list(cards: list[str], look: str) -> str:
    """Cards as the player reads them, one after the other: ``3♥, 5♥, ♠4½``."""
    return ", ".join(card_name(card, look) for card in cards)


def card_words(card: str, look: str = "standard") -> str:
    """A card in words, for screen readers: ``7 of hearts``, ``1 (ace) of hearts``,
    ``elixir 4½``.

    The ace reads as its face shows it, ``1``, first: a voice command says what it sees.
    A classic potion reads as it is printed, ``potion 4+``."""
    rank = card[0]
    if is_elixir(card) and look == "classic":
        return card_name(card, look)
    if is_elixir(card):
        return f"{elixir_word(look)} {rank}½"
    word = gettext("1 (ace)") if rank == "1" else rank
    suit = suit_name(suit_of(card), look)
    if look == "classic":
        return gettext("%(colour)s %(rank)s", colour=suit, rank=word)
    return gettext("%(rank)s of %(suit)s", rank=word, suit=suit)


def effect_name(effect: str, look: str = "standard") -> str:
    """An effect's name: ``Reset``, ``Swap``, ``Steal``; two elixirs: ``Two elixirs: no effect``."""
    if effect == "none":
        return str(WORDS[look]["two"])
    return str(EFFECT_NAMES[effect])


def effect_text(
    entry: Mapping[str, Any],
    names: Mapping[str, str] | None = None,
    look: str = "standard",
    reader: str | None = None,
    *,
    pending: bool = False,
) -> str:
    """What a trick's elixir did: ``Steal: Sam took a trick from Kim``; empty without one.

    ``entry`` is a history entry of the engine, whose facts (``effect``,
    ``outcome``, ``winner``) are all this reads. ``names`` maps seats to the
    players' names; without it the seats are named in the look:
    ``Steal: Keeper took a trick from Shadow``. ``reader``, the seat of the
    player reading, is "you": ``Steal: you took a trick from Sam``. ``pending``
    says a Swap the players have yet to choose: ``Swap: each gives 2 cards``.
    """
    names = names or {seat: seat_name(seat, look) for seat in ("keeper", "shadow")}
    effect, outcome = entry["effect"], entry["outcome"]
    won = entry["winner"]
    lost = "shadow" if won == "keeper" else "keeper"
    winner, loser = names[won], names[lost]
    if effect == "steal" and outcome == "took" and reader == won:
        return gettext("Steal: you took a trick from %(loser)s", loser=loser)
    if effect == "steal" and outcome == "took" and reader == lost:
        return gettext("Steal: %(winner)s took a trick from you", winner=winner)
    if effect == "steal" and outcome == "took":
        return gettext("Steal: %(winner)s took a trick from %(loser)s", winner=winner, loser=loser)
    if effect == "steal" and reader == lost:
        return gettext("Steal: nothing to take from you")
    if effect == "steal":
        return gettext("Steal: nothing to take from %(loser)s", loser=loser)
    if effect == "swap" and int(outcome) and pending:
        return ngettext(
            "Swap: each gives %(num)d card", "Swap: each gives %(num)d cards", int(outcome)
        )
    if effect == "swap" and int(outcome):
        count = int(outcome)
        return ngettext("Swap: each gave %(num)d card", "Swap: each gave %(num)d cards", count)
    if effect == "swap":
        return gettext("Swap: no cards left to give")
    if effect == "reset" and look == "classic":
        return gettext("Reset: colour order cleared")
    if effect == "reset":
        return gettext("Reset: suit order cleared")
    if effect == "none":
        return str(WORDS[look]["two"])
    return ""


def trick_effect(entry: Mapping[str, Any], view: Mapping[str, Any]) -> str:
    """:func:`effect_text` of a trick for the reader of a seat view (page or email): the
    reader is "you", and the Swap of the view's last trick "gives" until both have chosen."""
    pending = swap_pending(entry, view)
    return effect_text(entry, view["names"], view["look"], view["seat"], pending=pending)


def swap_pending(entry: Mapping[str, Any], view: Mapping[str, Any]) -> bool:
    """Whether ``entry`` is the trick of the Swap that a seat view's players are choosing."""
    last = view["history"][-1] if view["history"] else None
    return (
        view["phase"] == SWAP
        and last is not None
        and (last["round"], last["trick"]) == (entry["round"], entry["trick"])
    )


def deadline_text(moment: str, zone: str | None = None) -> str:
    """A deadline (an ISO date and time in UTC) in words, to the minute: ``Mar 5, 2026,
    9:30 AM UTC``.

    With ``zone``, an IANA time zone, in that zone and named by it:
    ``Mar 5, 2026, 10:30 AM Europe/Paris``; without one, plainly in UTC. A time the
    zone's clocks read twice, the night they go back, names its offset too:
    ``Nov 1, 2026, 1:30 AM America/New_York (GMT-05:00)``. The page's script writes it
    again in the browser's zone, in the same style.
    """
    when = datetime.fromisoformat(moment)
    if when.tzinfo is None:  # stored without its zone: UTC, as every moment of the service
        when = when.replace(tzinfo=UTC)
    locale = get_locale() or LOCALES[DEFAULT_LANGUAGE]
    if zone is None or not is_time_zone(zone):  # none known, or none this machine knows
        utc = when.astimezone(UTC)
        return format_datetime(utc, _to_the_minute(locale, utc.day), rebase=False) + " UTC"
    local = when.astimezone(ZoneInfo(zone))
    text = format_datetime(local, _to_the_minute(locale, local.day), rebase=False) + f" {zone}"
    if local.replace(fold=1 - local.fold).utcoffset() != local.utcoffset():
        # A time the clocks turned back read twice that night: its offset says which of the two.
        text += f" ({get_timezone_gmt(local, 'long', locale)})"
    return text


def from_text(moment: datetime, zone: str | None = None) -> str:
    """The moment from which something may be done (a reminder), in words as
    :func:`deadline_text` says a deadline, but rounded up to the minute: the minute it
    names has come by then, where a deadline's has not passed."""
    if moment.second or moment.microsecond:
        moment = moment.replace(second=0, microsecond=0) + timedelta(minutes=1)
    return deadline_text(moment.isoformat(), zone)


@cache
def _to_the_minute(locale: Locale, day: int = 0) -> str:
    """The locale's pattern of a medium date with a short time (``MMM d, y, h:mm a``): its
    medium date and time, without the seconds, as the page's script writes one. French
    writes the first ``day`` of a month as an ordinal: "1er avr. 2026"."""
    date = locale.date_formats["medium"].pattern
    if locale.language == "fr" and day == 1:
        date = re.sub(r"(?<![d'])d(?![d'])", "d'er'", date, count=1)
    return str(locale.datetime_formats["medium"]).format(locale.time_formats["short"].pattern, date)


def _owing(view: Mapping[str, Any]) -> str:
    """Who owes the next move by its deadline, as the reader sees it: ``you``, ``them`` or
    ``both``. The computer has no deadline: its half of a choice is never due."""
    acting = view["to_act"]
    if len(acting) > 1:
        return "you" if view["opponent_computer"] else "both"
    return "you" if view["seat"] in acting else "them"


def invitee_role(creator_role: str, look: str) -> str:
    """What an invitation tells its invitee of the seat they would play, the one its creator
    left (page and email)."""
    seat = other(creator_role)  # type: ignore[arg-type]
    if seat == "keeper":
        return gettext(
            "You would play %(seat)s: you want the tricks shared evenly, so that the track"
            " does not reach its end in three rounds.",
            seat=the_seat(seat, look),
        )
    return gettext(
        "You would play %(seat)s: you want the tricks lopsided, either way, until the whole"
        " track is face up.",
        seat=the_seat(seat, look),
    )


def rematch_line(match: bool, game_id: int, winner: str | None, requester: str) -> str:
    """What a rematch's invitation follows, as its email and its page say it: the game
    ``game_id`` (or the return match it ended, for a ``match``), and who won it, ``winner``
    (``invitee``, ``requester``, named ``requester``, or ``None`` for no one)."""
    if match and winner == "invitee":
        return gettext(
            "It is a rematch of the return match that ended with game %(id)s, which you won, "
            "with the roles swapped.",
            id=game_id,
        )
    if match and winner == "requester":
        return gettext(
            "It is a rematch of the return match that ended with game %(id)s, which %(name)s "
            "won, with the roles swapped.",
            id=game_id,
            name=requester,
        )
    if match:
        return gettext(
            "It is a rematch of the return match that ended with game %(id)s, with the roles "
            "swapped.",
            id=game_id,
        )
    if winner == "invitee":
        return gettext(
            "It is a rematch of game %(id)s, which you won, with the roles swapped.", id=game_id
        )
    if winner == "requester":
        return gettext(
            "It is a rematch of game %(id)s, which %(name)s won, with the roles swapped.",
            id=game_id,
            name=requester,
        )
    return gettext("It is a rematch of game %(id)s, with the roles swapped.", id=game_id)


def days_per_move_text(days: int | None) -> str:
    """How long each move of a game may take, as an invitation says it."""
    if days:
        return ngettext(
            "You have %(num)d day for each move.", "You have %(num)d days for each move.", days
        )
    return gettext("There is no deadline for moves.")


def move_due(view: Mapping[str, Any], left: str, *, late: bool = False) -> str:
    """Whose move is due and how soon, before the date on the move page:
    ``Sam's move is due in 3 days:``, ``Your move was due 2 hours ago:``, or both
    players' when both owe a choice (an exchange or swap)."""
    owing, name = _owing(view), view["opponent"]
    if owing == "both":
        if late:
            return gettext("Your move and %(name)s's were due %(left)s:", name=name, left=left)
        return gettext("Your move and %(name)s's are due %(left)s:", name=name, left=left)
    if owing == "you":
        if late:
            return gettext("Your move was due %(left)s:", left=left)
        return gettext("Your move is due %(left)s:", left=left)
    if late:
        return upfirst(gettext("%(name)s's move was due %(left)s:", name=name, left=left))
    return upfirst(gettext("%(name)s's move is due %(left)s:", name=name, left=left))


def move_due_on(view: Mapping[str, Any], zone: str | None = None) -> str:
    """Whose move is due and by when, as the home page lists a game:
    ``Sam's move is due Dec 9, 2025, 9:30 AM UTC.`` (in ``zone``, if known), or was
    due, once that has passed (the sweep ends the game at its next pass)."""
    owing, name = _owing(view), view["opponent"]
    when = deadline_text(view["deadline"], zone)
    late = datetime.fromisoformat(view["deadline"]) <= datetime.now(UTC)
    if owing == "both":
        if late:
            return gettext("Your move and %(name)s's were due %(when)s.", name=name, when=when)
        return gettext("Your move and %(name)s's are due %(when)s.", name=name, when=when)
    if owing == "you":
        if late:
            return gettext("Your move was due %(when)s.", when=when)
        return gettext("Your move is due %(when)s.", when=when)
    if late:
        return upfirst(gettext("%(name)s's move was due %(when)s.", name=name, when=when))
    return upfirst(gettext("%(name)s's move is due %(when)s.", name=name, when=when))


def rules_summary(look: str = "standard") -> list[str]:
    """The rules in six lines, for the move page, the front page and the invitation email."""
    keeper, shadow = the_seat("keeper", look), the_seat("shadow", look)
    seats = gettext(
        "%(Keeper)s wants balance, %(shadow)s imbalance: after each round the track moves by"
        " the difference in tricks. At 10 %(shadow)s wins; after round 3 below 10"
        " %(keeper)s wins.",
        Keeper=upfirst(keeper),
        keeper=keeper,
        shadow=shadow,
    )
    first, second, third = (suit_name(suit, look) for suit in "HDC")
    if look == "classic":
        return [
            gettext(
                "Two players, 25 cards: %(red)s, %(green)s and %(purple)s cards from 1 to 7, and"
                " four potions worth 2+ to 5+ (a potion beats the same number). Each round 10"
                " cards each, 5 aside unseen.",
                red=first,
                green=second,
                purple=third,
            ),
            seats,
            gettext(
                "Exchange: in round r each player gives r cards; holding two or more potions,"
                " give at least one."
            ),
            gettext(
                "Follow a coloured lead with that colour or a potion; with neither, anything."
                " Leading a potion, name a colour: the follower must play it if able, and not"
                " with a potion."
            ),
            gettext(
                "Colour order: the first colour played in a round is weakest, the second middle,"
                " the third strongest. Same colour: higher wins; different colours: stronger"
                " colour wins."
            ),
            gettext(
                "One potion in a trick: against %(red)s Reset (colour order cleared), %(green)s"
                " Swap (each gives two cards), %(purple)s Steal (the winner takes a trick from"
                " the loser); then the higher number wins. Two potions: no effect, higher wins.",
                red=first,
                green=second,
                purple=third,
            ),
        ]
    return [
        gettext(
            "Two players, 25 cards: %(hearts)s, %(diamonds)s and %(clubs)s from 1 to 7, and four"
            " elixirs (small spades) worth 2½ to 5½. Each round 10 cards each, 5 aside unseen.",
            hearts=first,
            diamonds=second,
            clubs=third,
        ),
        seats,
        gettext(
            "Exchange: in round r each player gives r cards; holding two or more elixirs, give"
            " at least one."
        ),
        gettext(
            "Follow a suit lead with that suit or an elixir; with neither, anything. Leading an"
            " elixir, name a suit: the follower must play it if able, and not with an elixir."
        ),
        gettext(
            "Suit order: the first suit played in a round is weakest, the second middle, the"
            " third strongest. Same suit: higher wins; different suits: stronger suit wins."
        ),
        gettext(
            "One elixir in a trick: against %(hearts)s Reset (suit order cleared), %(diamonds)s"
            " Swap (each gives two cards), %(clubs)s Steal (the winner takes a trick from the"
            " loser); then the higher number wins. Two elixirs: no effect, higher wins.",
            hearts=first,
            diamonds=second,
            clubs=third,
        ),
    ]


# --- the rules' messages ---------------------------------------------------------


def follow_reason(lead: Played, hand: list[str], look: str) -> str:
    """Why a card of ``hand`` that is not offered may not follow ``lead`` (the first card)."""
    if is_elixir(lead["card"]):
        return rule_message("follow_named", {"suit": lead["name"]}, look=look)
    suit = suit_of(lead["card"])
    code = "follow_suit" if any(suit_of(card) == suit for card in hand) else "follow_elixir"
    return rule_message(code, {"suit": suit}, look=look)


def exchange_elixir_reason(held: int, look: str) -> str:
    """The exchange rule for a player dealt ``held`` elixirs (two or more)."""
    if look == "classic":
        return ngettext(
            "You hold %(num)d potion: give at least one of them.",
            "You hold %(num)d potions: give at least one of them.",
            held,
        )
    return ngettext(
        "You hold %(num)d elixir: give at least one of them.",
        "You hold %(num)d elixirs: give at least one of them.",
        held,
    )


def rule_message(
    code: str,
    params: Mapping[str, Any],
    *,
    look: str = "standard",
    phase: str = PLAY,
    round_number: int = 1,
    opponent: str = "",
    fallback: str = "",
) -> str:
    """The message of a :class:`~service.rules.RuleError` in the current language and look.

    ``code`` and ``params`` come from the error; ``phase``, ``round_number`` and
    ``opponent`` (the opponent's seat) describe the game it was refused in.
    An unknown code gives ``fallback``, the engine's own message.
    """
    classic = look == "classic"
    seat = the_seat(opponent, look) if opponent else ""
    suit = suit_name(params["suit"], look) if "suit" in params else ""
    if code == "game_over":
        return gettext("The game is over: no more moves.")
    if code == "wrong_phase" and phase == PLAY:
        return gettext("This is the time to play a card.")
    if code == "wrong_phase":
        return gettext("Choose the cards to give first.")
    if code == "not_your_turn" and phase == PLAY:
        return gettext("It is not your turn: %(seat)s plays next.", seat=seat)
    if code == "not_your_turn":
        return gettext("You have already chosen your cards; waiting for %(seat)s.", seat=seat)
    if code == "choose_count" and phase == EXCHANGE:
        return ngettext(
            "Give exactly %(num)d different card in the round %(round)d exchange.",
            "Give exactly %(num)d different cards in the round %(round)d exchange.",
            params["size"],
            round=round_number,
        )
    if code == "choose_count":
        return ngettext(
            "Give exactly %(num)d different card in the swap.",
            "Give exactly %(num)d different cards in the swap.",
            params["size"],
        )
    if code == "not_held":
        return gettext("You do not hold %(card)s.", card=card_name(params["card"], look))
    if code == "exchange_elixir":
        return exchange_elixir_reason(params["held"], look)
    if code == "name_required" and classic:
        return gettext("Leading a potion, name a colour.")
    if code == "name_required":
        return gettext("Leading an elixir, name a suit.")
    if code == "name_not_allowed" and classic:
        return gettext("Name a colour only when leading a potion.")
    if code == "name_not_allowed":
        return gettext("Name a suit only when leading an elixir.")
    if code == "follow_named" and classic:
        return gettext(
            "The leader named %(suit)s and you hold %(suit)s: play it (a potion may not answer).",
            suit=suit,
        )
    if code == "follow_named":
        return gettext(
            "The leader named %(suit)s and you hold %(suit)s: play one (an elixir may not answer).",
            suit=suit,
        )
    if code == "follow_suit" and classic:
        return gettext("You hold %(suit)s: play %(suit)s or a potion.", suit=suit)
    if code == "follow_suit":
        return gettext("You hold %(suit)s: follow with %(suit)s or play an elixir.", suit=suit)
    if code == "follow_elixir" and classic:
        return gettext("You hold no %(suit)s but you hold a potion: play a potion.", suit=suit)
    if code == "follow_elixir":
        return gettext("You hold no %(suit)s but you hold an elixir: play an elixir.", suit=suit)
    return fallback


def rule_message_in(
    view: Mapping[str, Any], code: str, params: Mapping[str, Any], fallback: str = ""
) -> str:
    """:func:`rule_message` for a move refused in the game a seat view shows (page or email)."""
    return rule_message(
        code,
        params,
        look=view["look"],
        phase=view["phase"],
        round_number=view["round"],
        opponent=other(view["seat"]),
        fallback=fallback,
    )


def early_match_winner(name: str) -> str:
    """Who wins a return match that a game ended before its last trick ended (a timeout, a
    resignation): its winner, whatever the score, which may say otherwise."""
    return gettext(
        "A game of a return match that ends early ends the match, whatever the score: "
        "%(name)s wins it.",
        name=name,
    )
