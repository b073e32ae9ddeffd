"""Every way the service writes a card, a suit or a move is read back by the reply reader.

A player answers an email by copying what it, or the game's page, says: a card
as the eye reads it (``6♥``, ``♠5½``, ``red 6``, ``potion 5+``), as a screen
reader reads it (``1 (ace) of hearts``, ``elixir 5½``, ``1 (as) de cœur``), a
suit by its name or its symbol, the lists of an exchange or a swap. The words
here are the service's own (:mod:`service.game_text`, :mod:`service.move_text`),
in each language and look, with the accents and capitals a player may drop or
add: never a copy of them, so that a word the service starts writing is a word
this test reads.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

import pytest
from flask import Flask
from flask_babel import Babel, force_locale

from service.game_text import LOOKS, card_list, card_name, card_words, suit_name, suit_symbol
from service.language import LANGUAGES, gettext
from service.move_text import naming, reply_example
from service.replies.reading import Understood, move_line, read_move, read_reply
from service.rules.cards import DECK, ELIXIRS, HAND_SIZE, SUITS

from ..secrecy import TRANSLATIONS

QUOTE = "On Tue, 1 Dec 2026, Split Mind <play@example.org> wrote:\n> Your move.\n> 5H or 7D\n"
Speaking = Callable[[str], AbstractContextManager[None]]


@pytest.fixture(scope="module")
def speaking() -> Iterator[Speaking]:
    """Render in a language of the service, from its catalogues, in an application of its own."""
    app = Flask(__name__)
    app.config["BABEL_TRANSLATION_DIRECTORIES"] = str(TRANSLATIONS)
    Babel(app)
    with app.app_context():
        yield force_locale


def typed(text: str) -> list[str]:
    """``text`` as a player may type it again: as written, without accents (``coeur``,
    ``elixir``), in capitals, and starting with one."""
    bare = "".join(
        char
        for char in unicodedata.normalize("NFD", text.replace("œ", "oe"))
        if not unicodedata.combining(char)
    )
    return list(dict.fromkeys([text, bare, text.upper(), text[:1].upper() + text[1:]]))


def assert_read(text: str, cards: list[str], name: str | None = None) -> None:
    """``text``, on its own and as a reply above the quote, is read as this move."""
    for written in typed(text):
        assert read_move(written) == Understood(cards, name), written
        assert move_line(written.split("\n")[0]), written
        reply = read_reply(f"{written}\n\n{QUOTE}")
        assert read_move(reply.move) == Understood(cards, name), written
        assert not reply.unclear and reply.note == [], written


@pytest.mark.parametrize("look", LOOKS)
@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("card", DECK)
def test_every_card_as_the_service_writes_it_is_read_back(
    speaking: Speaking, language: str, look: str, card: str
) -> None:
    with speaking(language):
        written = [card_name(card, look), card_words(card, look)]
        played = [gettext("play %(card)s", card=words) for words in written]
    for text in written + played:
        assert_read(text, [card])


# The forms a suit's word takes in a sentence, besides the one the service names it by: the
# English suits one card at a time, the French agreeing with a card or with several.
AGREED = {
    "hearts": ("heart",),
    "diamonds": ("diamond",),
    "clubs": ("club",),
    "cœur": ("cœurs",),
    "carreau": ("carreaux",),
    "trèfle": ("trèfles",),
    "rouge": ("rouges",),
    "vert": ("verts", "verte", "vertes"),
    "violet": ("violets", "violette", "violettes"),
}


@pytest.mark.parametrize("look", LOOKS)
@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("suit", SUITS)
def test_every_suit_an_elixir_names_is_read_back(
    speaking: Speaking, language: str, look: str, suit: str
) -> None:
    with speaking(language):
        name = suit_name(suit, look)
        names = [name, *AGREED.get(name, ()), suit_symbol(suit)]
        for elixir in ELIXIRS:
            led = [card_name(elixir, look), card_words(elixir, look)]
            assert_read(gettext("play %(card)s", card=naming(led[0], suit, look)), [elixir], suit)
            assert_read(gettext("play %(card)s", card=naming(led[1], suit, look)), [elixir], suit)
            for card in led:
                for named in names:
                    assert_read(f"{card} {named}", [elixir], suit)
                    assert_read(f"{card}, {named}", [elixir], suit)
                    assert_read(f"{card}\n{named}", [elixir], suit)


@pytest.mark.parametrize("look", LOOKS)
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_lists_of_an_exchange_or_swap_are_read_back(
    speaking: Speaking, language: str, look: str
) -> None:
    """The hand as the emails list it, and the example of a move giving cards, read back in
    order: the whole deck, a hand's worth at a time."""
    for start in range(0, len(DECK), HAND_SIZE):
        hand = list(DECK[start : start + HAND_SIZE])
        view = {
            "your_turn": True,
            "look": look,
            "hand": hand,
            "legal": {"choose": len(hand), "must_include_elixir": False},
        }
        with speaking(language):
            listed = [card_list(hand, look), ", ".join(card_words(card, look) for card in hand)]
            example = reply_example(view)
        for text in [*listed, example, "\n".join(listed[0].split(", "))]:
            assert_read(text, hand)


# What a player writes around a move: greetings, thanks, small talk with numbers and times
# that look like cards ("7h", "a 1"), a sign-off with an initial.
AROUND = [
    "I had a 1 in my hand",
    "I had a 1 (ace) in my hand",
    "thanks, nice game",
    "Merci, bonne partie !",
    "See you in 2 days",
    "back at 7 h",
    "à demain 7h",
    "je te laisse 2 h pour répondre",
    "I had 2 hearts left",
    "as de cœur ce tour, bien joué",
    "Bonne journée :D",
    "Cheers,\nH.",
    "D.",
]
MOVES_AROUND = [
    ("5H", ["5H"], None),
    ("play 5♥", ["5H"], None),
    ("je joue ♠4½, en annonçant cœur", ["4S"], "H"),
    ("elixir 4½ ♦", ["4S"], "D"),
    ("4S", ["4S"], None),
    ("give 3H and 5C", ["3H", "5C"], None),
    ("1 (as) de trèfle", ["1C"], None),
]


@pytest.mark.parametrize("sentence", AROUND)
@pytest.mark.parametrize(("move", "cards", "name"), MOVES_AROUND)
def test_a_sentence_around_a_move_is_read_as_no_other_card(
    sentence: str, move: str, cards: list[str], name: str | None
) -> None:
    """Above the move or under it, in its paragraph or apart: the move read is the move
    written, or the reply is unclear and nothing is played; never another card."""
    for text in (f"{sentence}\n{move}", f"{move}\n{sentence}", f"{sentence}\n\n{move}"):
        reply = read_reply(f"{text}\n\n{QUOTE}")
        assert reply.unclear or read_move(reply.move) == Understood(cards, name), text
