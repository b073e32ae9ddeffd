"""A turn email says what happened: its subject names the move, its body everything since."""

from __future__ import annotations

import random

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service.models import Game, OutboxMessage, db

from ..helpers import random_move, write_queued
from ..secrecy import hidden_cards, leaks


def turn_emails_of_a_game(app: Flask, client: FlaskClient, game: dict, seed: int) -> dict:
    """Every turn email queued while a game is played at random, by id, as first written.

    A turn email replaces the player's unsent one, so each is read as soon as it is queued;
    its body is checked then for the cards its reader may not know.
    """
    rng = random.Random(seed)
    found: dict[int, OutboxMessage] = {}
    while True:
        with app.app_context():
            if db.session.get_one(Game, game["id"]).status != "active":
                return found
        random_move(client, game, rng)
        write_queued(app)
        with app.app_context():
            state = db.session.get_one(Game, game["id"]).state
            rows = db.session.scalars(
                select(OutboxMessage).where(
                    OutboxMessage.kind == "turn", OutboxMessage.game_id == game["id"]
                )
            ).all()
            db.session.expunge_all()
        for row in rows:
            if row.id in found:
                continue
            found[row.id] = row
            seat = "keeper" if row.recipient == "kim@example.com" else "shadow"
            assert not leaks(row.text_body, hidden_cards(state, seat), ()), row.text_body


def test_turn_subjects_name_the_move_and_bodies_tell_the_news(
    app: Flask, client: FlaskClient, make_game
) -> None:
    found = {}
    for seed in (3, 4, 5):
        game = make_game(seed=seed)
        found.update(
            {(seed, k): v for k, v in turn_emails_of_a_game(app, client, game, seed).items()}
        )
    subjects = [m.subject for m in found.values()]
    assert any(": your answer, round " in s for s in subjects), subjects
    assert any(", you won trick " in s for s in subjects), subjects
    assert not any(s.startswith("Your move") for s in subjects), subjects
    for message in found.values():
        assert message.subject.endswith(")") and "(Split Mind, game " in message.subject
        if "Exchange done: your lead" in message.subject:
            assert "Exchange done: you gave " in message.text_body, message.text_body
        if "Swap done: your lead" in message.subject:
            assert "Swap done: you gave " in message.text_body, message.text_body
        if ": your answer, round " in message.subject:
            assert "Since your last move:" in message.text_body
