"""The game's words: in English outside any request, as the admin pages use them, and in French."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask import Flask
from flask_babel import Babel, force_locale

from service.game_text import (
    card_name,
    card_words,
    deadline_text,
    effect_name,
    effect_text,
    poses_as_computer,
    rules_summary,
    seat_name,
    suit_name,
    suit_symbol,
    trick_effect,
)
from service.mail.compose import result
from service.rules import apply

from .rules.helpers import play, playing
from .secrecy import TRANSLATIONS


@pytest.mark.parametrize(
    ("card", "standard", "classic"),
    [
        ("4H", "4♥", "red 4"),
        ("7D", "7♦", "green 7"),
        ("1C", "1♣", "purple 1"),
        ("4S", "♠4½", "potion 4+"),
        ("2S", "♠2½", "potion 2+"),
    ],
)
def test_card_names(card: str, standard: str, classic: str) -> None:
    assert card_name(card) == standard
    assert card_name(card, "standard") == standard
    assert card_name(card, "classic") == classic


def test_an_elixir_reads_alike_to_the_eye_and_the_ear() -> None:
    """The words a screen reader reads say what the look shows: ``♠3½`` is ``elixir 3½``,
    ``potion 3+`` is ``potion 3+``."""
    assert [card_name("3S"), card_words("3S")] == ["♠3½", "elixir 3½"]
    assert [card_name("3S", "classic"), card_words("3S", "classic")] == ["potion 3+"] * 2


def test_seat_and_suit_names() -> None:
    assert [seat_name("keeper"), seat_name("shadow")] == ["Keeper", "Shadow"]
    assert [seat_name("keeper", "classic"), seat_name("shadow", "classic")] == ["Jekyll", "Hyde"]
    assert [suit_name(suit) for suit in "HDC"] == ["hearts", "diamonds", "clubs"]
    assert [suit_name(suit, "classic") for suit in "HDC"] == ["red", "green", "purple"]
    assert [suit_symbol(suit) for suit in "HDCS"] == ["♥", "♦", "♣", "♠"]


ELIXIR_AND_CLUBS = ("4S 1D 2D 3D 4D 5D 6D 7D 1H 2H", "5S 1C 2C 3C 4C 5C 3H 4H 5H 6H")


@pytest.mark.parametrize(
    ("moves", "standard", "classic"),
    [
        (
            [("keeper", "1H"), ("shadow", "3H"), ("shadow", "2C"), ("keeper", "4S")],
            "Steal: Keeper took a trick from Shadow",
            "Steal: Jekyll took a trick from Hyde",
        ),
        (
            [("keeper", "4S", "C"), ("shadow", "5C")],
            "Steal: nothing to take from Keeper",
            "Steal: nothing to take from Jekyll",
        ),
        (
            [("keeper", "4S", "D"), ("shadow", "5S")],
            "Two elixirs: no effect",
            "Two potions: no effect",
        ),
        (
            [("keeper", "1H"), ("shadow", "3H")],
            "",
            "",
        ),
    ],
)
def test_effect_texts(moves: list[tuple[str, ...]], standard: str, classic: str) -> None:
    entry = play(playing(*ELIXIR_AND_CLUBS), *moves)["history"][-1]
    assert effect_text(entry) == standard
    assert effect_text(entry, look="classic") == classic


@pytest.fixture
def french() -> Iterator[None]:
    """French, from the service's catalogue, in an application of its own."""
    app = Flask(__name__)
    app.config["BABEL_TRANSLATION_DIRECTORIES"] = str(TRANSLATIONS)
    Babel(app)
    with app.app_context(), force_locale("fr"):
        yield


def test_effect_names() -> None:
    effects = ("reset", "swap", "steal", "none")
    assert [effect_name(effect) for effect in effects] == [
        "Reset",
        "Swap",
        "Steal",
        "Two elixirs: no effect",
    ]
    assert effect_name("none", "classic") == "Two potions: no effect"


def test_effect_names_in_french(french: None) -> None:
    assert [effect_name(effect) for effect in ("reset", "swap", "steal", "none")] == [
        "Remise à zéro",
        "Troc",
        "Vol",
        "Deux élixirs\u00a0: aucun effet",
    ]


@pytest.mark.parametrize(
    "name",
    [
        "the computer, hard",
        "  The Computer HARD!",
        "the computer - easy",
        "THE COMPUTER, RANDOM",
        "l’ordinateur, difficile",
        "L'ORDINATEUR  MOYEN",
        "l’ordinateur, au hasard",
        "the\u00a0cómputer, medium",
        "Computer, hard",
        "ordinateur difficile",
        "The Computer",
        "l’ordinateur",
        "Computer",
        "  ordinateur ",
        "Ordinateur",
        "the c\u043emputer (hard)",  # its o Cyrillic
        "The C\u03bfmputer",  # its o Greek
        "l\u2019\u043erdinateur",
        "\u0441omputer",  # its c Cyrillic
    ],
)
def test_a_name_that_reads_as_the_computers(french: None, name: str) -> None:
    assert poses_as_computer(name)


def test_a_deadline_in_a_zone_this_machine_does_not_know_reads_in_utc(app: Flask) -> None:
    """A stored name may be none the machine knows (another host's tzdata, ``localtime``)."""
    with app.app_context():
        paris = deadline_text("2026-03-05T09:30:00+00:00", "Europe/Paris")
        unknown = [
            deadline_text("2026-03-05T09:30:00+00:00", name) for name in ("Mars/X", "localtime")
        ]
    assert paris.endswith("10:30\u202fAM Europe/Paris")
    assert all(text.endswith("9:30\u202fAM UTC") for text in unknown)


def test_a_deadline_in_an_hour_the_clocks_repeat_says_which(app: Flask) -> None:
    """1:30 comes twice in New York on 1 November 2026 (05:30 and 06:30 UTC), and 1:45 twice
    at Lord Howe on 5 April 2026, half an hour apart: each deadline names its offset, which
    tells the two apart. One the clocks do not repeat is named by its zone alone."""
    with app.app_context():
        first, second = (
            deadline_text(f"2026-11-01T0{hour}:30:00+00:00", "America/New_York") for hour in (5, 6)
        )
        howe = [
            deadline_text(f"2026-04-04T{moment}:00+00:00", "Australia/Lord_Howe")
            for moment in ("14:45", "15:15")
        ]
        plain = deadline_text("2026-11-01T07:30:00+00:00", "America/New_York")
    assert first == "Nov 1, 2026, 1:30\u202fAM America/New_York (GMT-04:00)"
    assert second == "Nov 1, 2026, 1:30\u202fAM America/New_York (GMT-05:00)"
    assert howe[0].endswith("1:45\u202fAM Australia/Lord_Howe (GMT+11:00)")
    assert howe[1].endswith("1:45\u202fAM Australia/Lord_Howe (GMT+10:30)")
    assert plain == "Nov 1, 2026, 2:30\u202fAM America/New_York"


def test_a_french_deadline_in_an_hour_the_clocks_repeat_says_which(french: None) -> None:
    """Paris's 2:30 comes twice on 25 October 2026: the French text names the offset too."""
    assert deadline_text("2026-10-25T00:30:00+00:00", "Europe/Paris") == (
        "25 oct. 2026, 02:30 Europe/Paris (UTC+02:00)"
    )


def test_a_french_deadline_on_the_first_of_a_month_reads_1er(french: None) -> None:
    """French writes the first day of a month as an ordinal, "1er avril"; the others as
    numbers. In the zone the date is given in: 1 April at 00:30 in Paris is 31 March in UTC."""
    assert deadline_text("2026-04-01T09:30:00+00:00").startswith("1er avr. 2026")
    assert deadline_text("2026-03-31T22:30:00+00:00", "Europe/Paris").startswith("1er avr. 2026")
    assert deadline_text("2026-03-31T22:30:00+00:00") == "31 mars 2026, 22:30 UTC"
    assert deadline_text("2026-04-11T09:30:00+00:00").startswith("11 avr. 2026")
    with force_locale("en"):
        assert deadline_text("2026-04-01T09:30:00+00:00").startswith("Apr 1, 2026")


@pytest.mark.parametrize(
    "name", ["Kim", "Computers", "Ordi", "Hard", "the computer, hardly", "Theodore", "Lou"]
)
def test_a_name_that_does_not(french: None, name: str) -> None:
    assert not poses_as_computer(name)


STEAL_MOVES = [("keeper", "1H"), ("shadow", "3H"), ("shadow", "2C"), ("keeper", "4S")]
NOBODY_TO_STEAL_FROM = [("keeper", "4S", "C"), ("shadow", "5C")]
NAMES = {"keeper": "Kim", "shadow": "Sam"}


def test_effect_texts_call_the_reader_you() -> None:
    """The reader's own seat is "you", the other player's name stays; no reader keeps names."""
    took = play(playing(*ELIXIR_AND_CLUBS), *STEAL_MOVES)["history"][-1]
    nothing = play(playing(*ELIXIR_AND_CLUBS), *NOBODY_TO_STEAL_FROM)["history"][-1]
    assert effect_text(took, NAMES, reader="keeper") == "Steal: you took a trick from Sam"
    assert effect_text(took, NAMES, reader="shadow") == "Steal: Kim took a trick from you"
    assert effect_text(took, NAMES) == "Steal: Kim took a trick from Sam"
    assert effect_text(nothing, NAMES, reader="keeper") == "Steal: nothing to take from you"
    assert effect_text(nothing, NAMES, reader="shadow") == "Steal: nothing to take from Kim"


def test_effect_texts_call_the_reader_vous_in_french(french: None) -> None:
    took = play(playing(*ELIXIR_AND_CLUBS), *STEAL_MOVES)["history"][-1]
    nothing = play(playing(*ELIXIR_AND_CLUBS), *NOBODY_TO_STEAL_FROM)["history"][-1]
    assert effect_text(took, NAMES, reader="keeper") == "Vol\u00a0: vous prenez un pli à Sam"
    assert effect_text(took, NAMES, reader="shadow") == "Vol\u00a0: Kim vous prend un pli"
    assert effect_text(nothing, NAMES, reader="keeper") == ("Vol\u00a0: rien à vous prendre")


def test_a_swap_gives_until_both_have_chosen_then_gave(french: None) -> None:
    """The Swap of the last trick is to come while the players choose, done once they have."""
    state = play(playing(*ELIXIR_AND_CLUBS), ("keeper", "1D"), ("shadow", "5S"))
    entry = state["history"][-1]

    def view_of(state: dict) -> dict:
        return {"history": state["history"], "phase": state["phase"], "names": NAMES}

    choosing = {**view_of(state), "look": "standard", "seat": "keeper"}
    assert trick_effect(entry, choosing) == "Troc\u00a0: chacun donne 2 cartes"
    state = apply(state, "keeper", {"swap": ["2D", "3D"]})
    assert (
        trick_effect(entry, {**choosing, **view_of(state)}) == "Troc\u00a0: chacun donne 2 cartes"
    )
    state = apply(state, "shadow", {"swap": ["1C", "2C"]})
    assert (
        trick_effect(entry, {**choosing, **view_of(state)}) == "Troc\u00a0: chacun a donné 2 cartes"
    )
    with force_locale("en"):
        assert trick_effect(entry, choosing) == "Swap: each gives 2 cards"
        assert trick_effect(entry, {**choosing, **view_of(state)}) == "Swap: each gave 2 cards"


def test_the_classic_colours_agree_with_cards_in_french(french: None) -> None:
    assert "des cartes rouges, vertes et violettes de 1 à 7" in rules_summary("classic")[0]


def test_an_ending_that_starts_with_the_computers_name_starts_with_a_capital(
    french: None,
) -> None:
    view = {
        "status": "finished", "opponent": "l’ordinateur (difficile)", "winner": "shadow",
        "seat": "keeper", "look": "standard", "track": 10, "track_length": 10,
        "phase": "over", "last_round": 2,
    }  # fmt: skip
    assert result(view).startswith("L’ordinateur (difficile) a gagné")
    with force_locale("en"):
        english = {**view, "opponent": "the computer (hard)"}
        assert result(english) == "The computer (hard) won: the Shadow wins with the track at 10."
