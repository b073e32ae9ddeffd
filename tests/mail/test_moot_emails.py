"""Emails that a change to the game made untrue by the time they go are dropped, not failed.

Each test queues an email, changes the game before the worker runs, then runs the worker
against the test's SMTP server: what no longer holds is skipped, what says the change goes.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from flask import Flask
from sqlalchemy import select

from service import games
from service.deadlines import sweep
from service.games import Seating
from service.mail.kinds import written
from service.models import Game, OutboxMessage, db
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
