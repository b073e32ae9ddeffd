"""Emails that a change to the game made untrue by the time they go are dropped, not failed.

Each test queues an email, changes the game before the worker runs, then runs the worker
against the test's SMTP server: what no longer holds is skipped, what says the change goes.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import timedelta

import psycopg
import pytest
from flask import Flask
from sqlalchemy import select, update

from service import games
from service.deadlines import sweep
from service.games import Seating
from service.mail import kinds
from service.mail.kinds import written
from service.models import Game, OutboxMessage, db, utcnow
from service.unit_of_work import transaction

from ..factories import apply_moves, planned_moves, played
from ..smtp import SMTPServer

KIM = "kim@example.com"


def outcomes(app: Flask, smtp_server: SMTPServer, game_id: int) -> dict[str, list[str]]:
    """The statuses of the game's emails, by kind; only the ones sent reached the server."""
    with app.app_context():
        rows = db.session.scalars(
            select(OutboxMessage).where(OutboxMessage.game_id == game_id).order_by(OutboxMessage.id)
        ).all()
        found: dict[str, list[str]] = {}
        for row in rows:
            found.setdefault(row.kind, []).append(row.status)
        sent = {row.message_id for row in rows if row.status == "sent"}
    received = {str(r.message["Message-ID"]) for r in smtp_server.received}
    assert received & {row.message_id for row in rows} == sent
    return found


def extend(app: Flask, game_id: int) -> None:
    """An admin gives the move that is due two more days."""
    with app.app_context(), transaction():
        games.extend_deadline(game_id, 2, "admin")


def test_a_deadline_extended_before_the_computer_came_to_owe_is_dropped(
    app: Flask, smtp_server: SMTPServer, deliver
) -> None:
    """Kim chooses her cards before the email about her new deadline goes: the computer owes
    its half of the exchange now, and the computer has no deadline."""
    with app.app_context(), transaction():
        game = games.create_game(
            Seating(KIM, "Kim"), Seating.the_computer("easy"), seed=3, days_per_move=3
        )
        game_id, state = game.id, game.state
    deliver()
    extend(app, game_id)
    apply_moves(app, game_id, [next(m for m in planned_moves(state, 3) if m[0] == "keeper")])
    with app.app_context():
        assert db.session.get_one(Game, game_id).deadline is None
    deliver()
    found = outcomes(app, smtp_server, game_id)
    assert found["deadline_extended"] == ["skipped"]
    assert "failed" not in {status for statuses in found.values() for status in statuses}


@pytest.mark.parametrize("end", ["cancel", "timeout"])
def test_a_deadline_extended_before_the_game_ended_is_dropped(
    app: Flask, make_game, smtp_server: SMTPServer, deliver, end: str
) -> None:
    """The game ends before the email about its new deadline goes: the end's email goes."""
    game = make_game(seed=3, days_per_move=3)
    deliver()
    extend(app, game["id"])
    with app.app_context():
        if end == "cancel":
            with transaction():
                games.cancel_game(game["id"], "admin", "a test")
        else:
            deadline = db.session.get_one(Game, game["id"]).deadline
            assert deadline is not None
            assert sweep(deadline + timedelta(hours=1)).expired == [game["id"]]
    deliver()
    found = outcomes(app, smtp_server, game["id"])
    assert found["deadline_extended"] == ["skipped", "skipped"]
    assert found["game_ended"] == ["sent", "sent"]
    assert "failed" not in {status for statuses in found.values() for status in statuses}


def test_a_deadline_that_changed_again_before_its_email_went_is_not_told(
    app: Flask, make_game, smtp_server: SMTPServer, deliver
) -> None:
    """Two extensions before the worker runs: only the last deadline is told of."""
    game = make_game(seed=3, days_per_move=3)
    deliver()
    extend(app, game["id"])
    extend(app, game["id"])
    deliver()
    found = outcomes(app, smtp_server, game["id"])
    assert found["deadline_extended"] == ["skipped", "skipped", "sent", "sent"]


def test_a_deadline_brought_forward_is_told_until_it_changes_again(
    app: Flask, make_game, smtp_server: SMTPServer, deliver
) -> None:
    """Kim comes back from vacation early, then goes away again before the email goes: the
    deadline it gave is no longer the game's."""
    from service import homes

    game = make_game(seed=3, days_per_move=3)  # both owe the exchange
    deliver()
    with app.app_context(), transaction():
        homes.take_vacation(KIM, 5)
    with app.app_context(), transaction():
        homes.end_vacation(KIM, utcnow() + timedelta(days=1))
    with app.app_context(), transaction():
        homes.take_vacation(KIM, 1, utcnow() + timedelta(days=1, hours=1))
    deliver()
    found = outcomes(app, smtp_server, game["id"])
    assert found["deadline_extended"] == ["skipped", "skipped"]


def test_a_deadline_extended_email_is_written_without_a_deadline(
    app: Flask, make_game, smtp_server: SMTPServer
) -> None:
    """An admin reads a queued email of a game over as it would be written now: there is no
    deadline to give then."""
    game = make_game(seed=3, days_per_move=3)
    extend(app, game["id"])
    with app.app_context():
        with transaction():
            games.cancel_game(game["id"], "admin", "a test")
        (message, _) = db.session.scalars(
            select(OutboxMessage).where(OutboxMessage.kind == "deadline_extended")
        ).all()
        email = written(message)
    assert email is not None and "due by" not in email.text and "due by" not in email.html


def test_an_invitation_to_a_game_cancelled_before_it_went_is_dropped(
    app: Flask, make_game, smtp_server: SMTPServer, deliver
) -> None:
    """Nobody is asked to play a game already cancelled; both hear that it was."""
    game = make_game(seed=1)
    with app.app_context(), transaction():
        games.cancel_game(game["id"], "admin", "a test")
    deliver()
    found = outcomes(app, smtp_server, game["id"])
    assert found == {"invitation": ["skipped", "skipped"], "game_ended": ["sent", "sent"]}


def test_a_round_end_email_of_a_game_cancelled_before_it_went_is_dropped(
    app: Flask, make_game, smtp_server: SMTPServer, deliver
) -> None:
    """Its button asks for the next exchange, which nobody can make any more."""
    game = make_game(seed=9)
    deliver()
    played(app, game["id"], 9, until=lambda view: len(view["rounds"]) >= 1)
    with app.app_context(), transaction():
        games.cancel_game(game["id"], "admin", "a test")
    deliver()
    found = outcomes(app, smtp_server, game["id"])
    assert found["round_end"] == ["skipped", "skipped"]
    assert found["game_ended"] == ["sent", "sent"]
    assert "failed" not in {status for statuses in found.values() for status in statuses}
    assert not [r for r in smtp_server.received if "Choose your cards" in r.html]


@pytest.mark.parametrize("app", ["postgres"], indirect=True)
def test_a_move_made_while_its_turn_email_is_written_waits_for_it(
    app: Flask, make_game, smtp_server: SMTPServer, deliver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The player moves just as the worker has found their turn email still wanted: the move
    waits for the email to be written, which says the game as it was before the move (the
    player's hand, their legal cards), never the game after it under "your move"."""
    game = make_game(seed=3)
    with app.app_context():
        state = db.session.get_one(Game, game["id"]).state
    moves = planned_moves(state, 3)
    # Both halves of the exchange: then one seat owes the lead, and is emailed its turn.
    exchange = 2
    apply_moves(app, game["id"], moves[:exchange])
    turn = kinds.kind("turn")
    before: list[str] = []
    mover = threading.Thread(target=apply_moves, args=(app, game["id"], moves[exchange:][:1]))

    def asked(message: OutboxMessage) -> bool:
        wanted = turn.still_wanted(message)
        if wanted and not mover.is_alive():
            # Written apart, on a connection of its own: the worker's session reads afresh.
            reader = threading.Thread(target=write_apart, args=(message.id,))
            reader.start()
            reader.join()
            mover.start()  # the lead, made on the page at this moment
            mover.join(timeout=1)
        return wanted

    def write_apart(message_id: int) -> None:
        with app.app_context():
            email = written(db.session.get_one(OutboxMessage, message_id))
            assert email is not None
            before.append(email.text)
            db.session.remove()

    monkeypatch.setitem(kinds.KINDS, "turn", replace(turn, still_wanted=asked))
    deliver()
    mover.join(timeout=10)
    assert not mover.is_alive()
    with app.app_context():
        (sent,) = db.session.scalars(
            select(OutboxMessage).where(
                OutboxMessage.kind == "turn", OutboxMessage.status == "sent"
            )
        ).all()
        assert db.session.get_one(Game, game["id"]).version == exchange + 1  # the move is made
    assert before and sent.text_body == before[0]


@pytest.mark.parametrize("app", ["postgres"], indirect=True)
def test_an_email_of_a_game_being_changed_waits_without_holding_up_the_queue(
    app: Flask, make_game, smtp_server: SMTPServer, deliver, postgres_database: str
) -> None:
    """A change to the game holds its lock as the worker comes to its emails: they wait a
    moment, still queued, and the worker goes on to the next game's, waiting on nothing."""
    busy, other = make_game(seed=3), make_game(seed=4)
    with psycopg.connect(postgres_database) as change:
        change.execute("SELECT id FROM games WHERE id = %s FOR UPDATE", (busy["id"],))
        deliver()
        waiting = outcomes(app, smtp_server, busy["id"])
    assert set(outcomes(app, smtp_server, other["id"])["invitation"]) == {"sent"}
    assert set(waiting["invitation"]) == {"queued"}
    with app.app_context():
        db.session.execute(update(OutboxMessage).values(next_attempt_at=utcnow()))
        db.session.commit()
    deliver()
    assert set(outcomes(app, smtp_server, busy["id"])["invitation"]) == {"sent"}
