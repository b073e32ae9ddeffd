"""The example reply an email shows is written in the reader's words, and read back as its move.

In either look and language: ``play 5♥``, ``give red 3 and potion 2+``,
``je joue potion 4+, en annonçant rouge``; never the replay notation, which the
reader does not see in their game.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask import Flask

from service.game_text import card_name
from service.language import recipient_locale
from service.models import Game, db
from service.move_text import reply_example
from service.perspective import player_view
from service.replies.reading import read_move

from .helpers import reply_message, send

LOOKS_AND_LANGUAGES = [("standard", "en"), ("standard", "fr"), ("classic", "en"), ("classic", "fr")]
HAND = ["1H", "3H", "6D", "2C", "5C", "7C", "2S", "4S", "5S"]
# Seat views of each kind of move, as far as an example reads them.
VIEWS: dict[str, dict[str, Any]] = {
    "follow": {"legal": [{"play": "3H"}, {"play": "2S"}], "table": [{"card": "6H"}]},
    "elixir lead": {"legal": [{"play": "4S", "name": "H"}, {"play": "4S", "name": "C"}]},
    "give two": {"legal": {"choose": 2, "must_include_elixir": True}},
    "give three": {"legal": {"choose": 3, "must_include_elixir": False}},
}
MOVES = {
    "follow": (["3H"], None),
    "elixir lead": (["4S"], "H"),
    "give two": (["2S", "4S"], None),
    "give three": (["1H", "3H", "6D"], None),
}
APPLIED = {"en": "Your move is in: ", "fr": "Votre coup est joué\u00a0: "}
EXAMPLE = re.compile(r"(?:for example “|par exemple «\u00a0)(?P<move>[^”»]+?)(?:”|\u00a0»)")


@pytest.mark.parametrize(("look", "language"), LOOKS_AND_LANGUAGES)
@pytest.mark.parametrize("kind", list(VIEWS))
def test_an_example_is_read_back_as_its_move(
    app: Flask, look: str, language: str, kind: str
) -> None:
    view = {"your_turn": True, "look": look, "hand": HAND, "table": [], **VIEWS[kind]}
    with app.app_context(), recipient_locale(language):
        example = reply_example(view)
        names = [card_name(card, look) for card in MOVES[kind][0]]
    understood = read_move(example)
    assert (understood.cards, understood.name) == MOVES[kind], example
    assert all(name in example for name in names), example
    assert not re.search(r"\b[1-7][HDCS]\b", example), example  # no notation


@pytest.mark.parametrize(("look", "language"), LOOKS_AND_LANGUAGES)
def test_the_example_of_an_email_played_back_is_its_move(
    app: Flask, make_game, smtp_server, deliver, inbound, look: str, language: str
) -> None:
    """The invitation's example, sent back as the reply, is applied as the move it shows."""
    game_id = make_game(seed=31, look=look, keeper_language=language)["id"]
    deliver()
    (invitation,) = smtp_server.handler.to("kim@example.com")
    with app.app_context(), recipient_locale(language):
        shown = reply_example(player_view(db.session.get_one(Game, game_id).player("keeper")))
    for body in (invitation.text, invitation.html):
        found = EXAMPLE.search(body)
        assert found and found.group("move") == shown, body
    send(inbound, reply_message(invitation, shown))
    deliver()
    answer = smtp_server.handler.to("kim@example.com")[-1]
    assert str(answer.message["Subject"]).startswith(APPLIED[language]), answer.text
    with app.app_context():
        given = db.session.get_one(Game, game_id).state["pending"]["keeper"]
    assert given == read_move(shown).cards
