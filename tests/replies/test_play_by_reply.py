"""A whole game played only by replying to the emails, through the service's LMTP server."""

from __future__ import annotations

import random

import pytest
from flask import Flask

from service.models import Game, OutboxMessage, db
from service.perspective import player_view
from service.rules import SEATS, to_act

from ..helpers import pick_action
from ..secrecy import hidden_cards, leaks
from ..smtp import Received
from .helpers import move_text, reply_message, send

EMAILS = {"keeper": "kim@example.com", "shadow": "sam@example.com"}


def newest_asking(smtp_server, seat: str) -> Received:
    """The newest email to the seat's player that asks for a move (it has a Reply-To)."""
    asking = [r for r in smtp_server.handler.to(EMAILS[seat]) if r.message["Reply-To"]]
    assert asking, f"no email asks the {seat} for a move"
    return asking[-1]


@pytest.mark.slow
def test_a_whole_game_by_replies(app: Flask, make_game, smtp_server, deliver, inbound) -> None:
    game_id = make_game(seed=2026)["id"]
    deliver()
    rng = random.Random(2026)
    seen = replies = 0
    for _ in range(300):
        with app.app_context():
            game = db.session.get_one(Game, game_id)
            state = game.state
            views = {seat: player_view(game.player(seat)) for seat in SEATS}
            version = game.version
        for received in smtp_server.received[seen:]:
            seat = next(s for s in SEATS if EMAILS[s] in received.envelope_to)
            body = received.text + received.html + str(received.message["Subject"])
            assert not leaks(body, hidden_cards(state, seat)), body
        seen = len(smtp_server.received)
        if state["phase"] == "over":
            break
        seat = rng.choice(to_act(state))
        asking = newest_asking(smtp_server, seat)
        message = reply_message(asking, move_text(pick_action(views[seat], rng), rng))
        send(inbound, message)
        replies += 1
        deliver()
        with app.app_context():
            assert db.session.get_one(Game, game_id).version == version + 1, message.get_content()
        answer = next(
            r
            for r in smtp_server.handler.to(EMAILS[seat])[::-1]
            if r.message["In-Reply-To"] == message["Message-ID"]
        )
        assert message["Message-ID"] in str(answer.message["References"])
        assert answer.message["Auto-Submitted"] == "auto-generated"
    else:
        raise AssertionError("the game did not end in 300 replies")
    assert replies > 40
    with app.app_context():
        assert db.session.get_one(Game, game_id).status == "finished"
        kinds = {m.kind for m in db.session.query(OutboxMessage)}
    assert "answer" in kinds
