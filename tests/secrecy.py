"""Finding hidden cards in what a player receives."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from flask import Flask
from flask_babel import Babel, force_locale

from service import game_text, language
from service.rules import DECK, State, other

TRANSLATIONS = Path(language.__file__).resolve().parent / "translations"


def hidden_cards(state: State, seat: str) -> set[str]:
    """The cards ``seat`` may not know where they are: the opponent's hand and choice, the aside.

    Cards the seat itself gave the opponent in an exchange or swap are known to it.
    Cards named in the record of earlier rounds (tricks played, cards passed) are
    public history, though they were dealt again since: they are left out here,
    and the interference test covers them.
    """
    opponent = other(seat)
    now = state["round"]
    given = {card for t in state["transfers"] for card in t[seat]}
    earlier = {e["card"] for t in state["history"] if t["round"] < now for e in t["cards"]}
    earlier |= {
        c for t in state["transfers"] if t["round"] < now for c in t["keeper"] + t["shadow"]
    }
    secret = (
        set(state["hands"][opponent]) | set(state["pending"][opponent] or ()) | set(state["aside"])
    )
    return secret - given - earlier


@cache
def translated_forms() -> dict[str, tuple[str, ...]]:
    """Each card's names in every language and look of the service, as players read them.

    Worked out once, in an application of their own, so a test can look for them
    with or without an application context of its own.
    """
    app = Flask(__name__)
    app.config["BABEL_TRANSLATION_DIRECTORIES"] = str(TRANSLATIONS)
    Babel(app)
    forms: dict[str, list[str]] = {card: [] for card in DECK}
    with app.app_context():
        for code in language.LANGUAGES:
            with force_locale(code):
                for card in DECK:
                    for look in game_text.LOOKS:
                        forms[card] += [
                            game_text.card_name(card, look),
                            game_text.card_words(card, look),
                        ]
    return {card: tuple(dict.fromkeys(names)) for card, names in forms.items()}


def forms_of(card: str) -> list[str]:
    """Every way a page, JSON or email may write a card, in English or French."""
    forms = [card, *translated_forms()[card]]
    return list(dict.fromkeys(forms))


@cache
def _written(card: str) -> re.Pattern[str]:
    """Any of the card's forms, standing alone (not inside a longer word or number).

    The longest forms come first, so a match names the whole form found.
    """
    forms = sorted(forms_of(card), key=len, reverse=True)
    either = "|".join(re.escape(form) for form in forms)
    return re.compile(rf"(?<![0-9A-Za-z])(?:{either})(?![0-9A-Za-z½+])")


# A run of letters, digits and ``_-.`` this long is random material: a signed token, a CSRF
# token, a reply address's tag. "…_7D_…" inside one is chance, not a card.
RANDOM_RUN = re.compile(r"[A-Za-z0-9_.\-]{16,}")


def leaks(text: str, cards: set[str], tokens: tuple[str, ...] = ()) -> list[str]:
    """The hidden cards that ``text`` mentions (links and other random runs are removed first)."""
    for token in tokens:
        text = text.replace(token, "")
    text = RANDOM_RUN.sub(" ", text)
    found = []
    for card in sorted(cards):
        for match in _written(card).finditer(text):
            found.append(f"{card} as {match.group()!r}")
    return list(dict.fromkeys(found))
