"""Every email that asks for a move shows the reader's hand, the suit order and their legal moves.

A player can play a whole game from the inbox: each email that asks for a
move says what they hold and what they may do, in their language and the
game's look, from their seat view only.
"""

from __future__ import annotations

import html

import pytest
from flask import Flask
from sqlalchemy import select

from service.game_text import card_name, suit_name
from service.language import recipient_locale
from service.models import Game, OutboxMessage, db
from service.move_text import hand_text, legal_moves, suit_order_text
from service.perspective import player_view
from service.rules import PLAY, State, legal_actions, to_act

from ..factories import one_by_one
from ..helpers import write_queued
from ..secrecy import hidden_cards, leaks

ASKING = ("invitation", "turn", "round_end")
SEATS_BY_ADDRESS = {"kim@example.com": "keeper", "sam@example.com": "shadow"}
HAND = {"en": "Your hand: ", "fr": "Votre main\u00a0: "}


def new_emails(app: Flask, game_id: int, seen: set[int]) -> list[OutboxMessage]:
    """The emails of ``game_id`` that ask for a move, written now, not looked at before."""
    write_queued(app)
    with app.app_context():
        rows = db.session.scalars(
            select(OutboxMessage).where(
                OutboxMessage.game_id == game_id, OutboxMessage.kind.in_(ASKING)
            )
        ).all()
        db.session.expunge_all()
    fresh = [row for row in rows if row.id not in seen]
    seen.update(row.id for row in fresh)
    return fresh


def check(app: Flask, message: OutboxMessage, state: State, look: str, language: str) -> int:
    """The email shows its reader's hand, the suit order and legal moves, and no hidden card;
    returns how many cards its hand line names."""
    seat = SEATS_BY_ADDRESS[message.recipient]
    assert seat in to_act(state), (message.kind, message.subject)
    bodies = (message.text_body, html.unescape(message.html_body))
    for body in bodies:
        assert not leaks(body, hidden_cards(state, seat)), body
    with app.app_context(), recipient_locale(language):
        view = player_view(db.session.get_one(Game, message.game_id).player(seat))
        hand_line = HAND[language] + hand_text(view)
        names = [card_name(card, look) for card in state["hands"][seat]]
        order = suit_order_text(view)
        suits = [suit_name(suit, look) for suit in state["suit_order"]]
        moves = legal_moves(view)
        legal = legal_actions(state, seat, to_act(state))
        playable = (
            [card_name(action[PLAY], look) for action in legal] if isinstance(legal, list) else []
        )
    assert all(name in hand_line for name in names), (hand_line, names)
    assert moves and all(name in " ".join(moves) for name in playable), (moves, playable)
    assert bool(order) == bool(suits) and all(suit in order for suit in suits), order
    for body in bodies:
        assert hand_line in body, body
        assert order in body, body
        for line in moves:
            assert line in body, (line, body)
    return len(names)


@pytest.mark.slow
@pytest.mark.parametrize(("look", "language"), [("standard", "en"), ("classic", "fr")])
def test_each_email_asking_for_a_move_shows_the_hand_order_and_legal_moves(
    app: Flask, make_game, look: str, language: str
) -> None:
    game = make_game(seed=11, look=look, keeper_language=language, shadow_language=language)
    seen: set[int] = set()
    with app.app_context():
        state = db.session.get_one(Game, game["id"]).state
    checked = {kind: 0 for kind in ASKING}
    ordered = 0
    for message in new_emails(app, game["id"], seen):
        check(app, message, state, look, language)
        checked[message.kind] += 1
    for _, _, state in one_by_one(app, game["id"], 11):
        for message in new_emails(app, game["id"], seen):
            check(app, message, state, look, language)
            checked[message.kind] += 1
            ordered += bool(state["suit_order"])
    assert checked["invitation"] == 2 and checked["round_end"] >= 2 and checked["turn"] > 10
    assert ordered, "no email was written while the suits had an order"
