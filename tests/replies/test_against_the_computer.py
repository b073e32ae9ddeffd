"""Playing the computer by reply: the answer to a move waits for the computer's, and is the one
email that asks for the next."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
import time_machine
from flask import Flask
from sqlalchemy import select, update

from service import computer, games
from service.computer import ComputerMoves
from service.games import Seating
from service.mail.worker import GAME_CHANGING
from service.models import Game, OutboxMessage, db, utcnow
from service.perspective import player_view
from service.unit_of_work import transaction

from ..helpers import pick_action, second_behind_first
from ..smtp import Received
from .helpers import move_text, reply_message, send

KIM = "kim@example.com"


@pytest.fixture
def kim_owes_the_computer(app: Flask, smtp_server, deliver, inbound):
    """Kim (the Keeper) against the computer, her exchange made by reply and its answer
    delivered: she leads, by reply, and the computer owes the answer. Returns the game's id
    and her reply."""
    with app.app_context(), transaction():
        game = games.create_game(Seating(KIM, "Kim", None), Seating.the_computer("easy"), seed=5)
        game_id = game.id
    rng = random.Random(1)

    def reply() -> Received:
        asking = [r for r in smtp_server.handler.to(KIM) if r.message["Reply-To"]][-1]
        with app.app_context():
            view = player_view(db.session.get_one(Game, game_id).player("keeper"))
        message = reply_message(asking, move_text(pick_action(view, rng), rng))
        send(inbound, message)
        return message

    with app.app_context():
        ComputerMoves()()  # the computer's half of the exchange
    deliver()
    reply()  # Kim's half: she leads the first trick
    deliver()
    led = reply()
    with app.app_context():
        assert db.session.get_one(Game, game_id).to_act == "shadow"
    return game_id, led


def since(smtp_server, message) -> list[Received]:
    """The emails to Kim since the answer to ``message`` (that answer included)."""
    received = smtp_server.handler.to(KIM)
    first = next(
        index
        for index, email in enumerate(received)
        if email.message["In-Reply-To"] == message["Message-ID"]
    )
    return received[first:]


@pytest.mark.parametrize("order", ["delivered first", "the computer first"])
def test_the_answer_waits_for_the_computer_and_is_the_one_email(
    app: Flask, smtp_server, deliver, kim_owes_the_computer, order: str
) -> None:
    """The computer answers within seconds: the answer to the person's reply waits for its
    move, says it and asks for the next, and no turn email says it again."""
    game_id, led = kim_owes_the_computer
    if order == "delivered first":
        deliver()
        answers = [r for r in smtp_server.received if r.message["In-Reply-To"] == led["Message-ID"]]
        assert not answers, "the answer went before the computer moved"
    with app.app_context():
        assert ComputerMoves()() >= 1
        assert db.session.get_one(Game, game_id).to_act == "keeper"
    deliver()
    (answer,) = since(smtp_server, led)
    assert answer.message["Reply-To"], "the answer asks for the next move"
    assert "the computer (easy)" in answer.text


def test_an_answer_goes_once_the_computer_is_late(
    app: Flask, smtp_server, deliver, kim_owes_the_computer
) -> None:
    """With no worker making the computer's moves, the answer goes once its move is late."""
    _, led = kim_owes_the_computer
    deliver()
    assert not any(r.message["In-Reply-To"] == led["Message-ID"] for r in smtp_server.received)
    with time_machine.travel(utcnow() + computer.LATE_AFTER + timedelta(seconds=1)):
        deliver()
    (answer,) = since(smtp_server, led)
    assert "Your move is in" in str(answer.message["Subject"])


def test_an_answer_a_worker_has_in_hand_as_the_computer_moves_is_the_one_email(
    app: Flask, smtp_server, deliver, kim_owes_the_computer, postgres_database
) -> None:
    """A worker that claimed the answer just as the computer's move changes the game holds it
    back a moment (:data:`service.mail.worker.GAME_CHANGING`): the move waits for that claim
    and makes the answer go, rather than passing it over and asking for Kim's move again in a
    turn email."""
    _, led = kim_owes_the_computer
    answer = (
        select(OutboxMessage.id)
        .where(OutboxMessage.kind == "answer", OutboxMessage.status == "queued")
        .with_for_update()
    )

    def claimed() -> None:
        db.session.execute(answer).one()

    def held_a_moment() -> None:
        db.session.execute(
            update(OutboxMessage)
            .where(OutboxMessage.kind == "answer", OutboxMessage.status == "queued")
            .values(next_attempt_at=utcnow() + GAME_CHANGING)
        )

    def the_computer_moves() -> None:
        with app.app_context():
            assert ComputerMoves()() >= 1

    errors = second_behind_first(
        app, postgres_database, claimed, the_computer_moves, first_ends=held_a_moment
    )
    assert errors == []
    with time_machine.travel(utcnow() + GAME_CHANGING + timedelta(seconds=1)):
        deliver()
    (answer_sent,) = since(smtp_server, led)
    assert answer_sent.message["Reply-To"], "the answer asks for the next move"
