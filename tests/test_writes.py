"""Writes sent together: one statement on PostgreSQL, one after another on SQLite, all or none."""

from __future__ import annotations

import random
from typing import Any, cast

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import Table, bindparam, insert, select, update
from sqlalchemy.exc import IntegrityError

from service.mail import queue
from service.mail.compose import Email
from service.mail.outbox import WITHDRAWN, skip_note
from service.models import Address, Event, Game, Match, OutboxMessage, db, utcnow
from service.rules import to_act
from service.unit_of_work import transaction
from service.writes import Write, write_together

from .helpers import pick_action, statements_run

pytestmark = pytest.mark.both_backends

ADDRESSES = cast(Table, Address.__table__)
INSERT_KIM = insert(ADDRESSES).values(email=bindparam("kim_email"))
INSERT_SAM = insert(ADDRESSES).values(email=bindparam("sam_email"))
DECLINE = (
    update(ADDRESSES)
    .where(ADDRESSES.c.email == bindparam("declined_email"))
    .values(declined_at=bindparam("declined_when", type_=ADDRESSES.c.declined_at.type))
)


def stored() -> dict[str, bool]:
    """Each stored address, and whether it declined."""
    rows = db.session.execute(select(Address.email, Address.declined_at))
    return {email: declined is not None for email, declined in rows}


def test_writes_go_as_one_statement_on_postgresql_one_after_another_elsewhere(
    app: Flask,
) -> None:
    with app.app_context(), transaction():
        db.session.add(Address(email="ann@example.com"))
        db.session.flush()
        writes = [
            Write(INSERT_KIM, {"kim_email": "kim@example.com"}),
            Write(INSERT_SAM, {"sam_email": "sam@example.com"}),
            Write(DECLINE, {"declined_email": "ann@example.com", "declined_when": utcnow()}),
        ]
        with statements_run(app) as run:
            result = write_together(writes)
        assert result.rowcount == 1  # the last write's
        postgres = db.session.get_bind().dialect.name == "postgresql"
        assert len(run) == (1 if postgres else 3)
        assert run[0][0].startswith("WITH") == postgres
    with app.app_context():
        assert stored() == {
            "ann@example.com": True,
            "kim@example.com": False,
            "sam@example.com": False,
        }


def test_the_row_count_is_the_last_writes_alone(app: Flask) -> None:
    with app.app_context(), transaction():
        writes = [
            Write(INSERT_KIM, {"kim_email": "kim@example.com"}),
            Write(DECLINE, {"declined_email": "nobody@example.com", "declined_when": utcnow()}),
        ]
        assert write_together(writes).rowcount == 0
        assert stored() == {"kim@example.com": False}


def test_a_write_that_fails_leaves_none_written(app: Flask) -> None:
    with app.app_context():
        with transaction():
            db.session.add(Address(email="sam@example.com"))
        writes = [
            Write(INSERT_KIM, {"kim_email": "kim@example.com"}),
            Write(INSERT_SAM, {"sam_email": "sam@example.com"}),  # already stored
        ]
        with pytest.raises(IntegrityError), transaction():
            write_together(writes)
        assert stored() == {"sam@example.com": False}


def test_nothing_to_write_is_refused(app: Flask) -> None:
    with app.app_context(), pytest.raises(ValueError, match="nothing to write"):
        write_together([])


MATCHES = cast(Table, Match.__table__)


@pytest.mark.parametrize(
    ("statements", "refusal"),
    [
        ([INSERT_KIM, insert(ADDRESSES).values(email=bindparam("kim_email"))], "kim_email"),
        # SQLAlchemy would give its value to that column of every INSERT in the statement.
        (
            [INSERT_KIM, update(ADDRESSES).values(declined_at=bindparam("declined_at"))],
            "declined_at",
        ),
        # A column default computed in Python is not computed inside the WITH clause.
        ([insert(MATCHES).values(id=bindparam("match_id")), INSERT_KIM], "created_at"),
    ],
    ids=["a parameter named twice", "a parameter named as a column", "a Python default left"],
)
def test_writes_that_cannot_go_together_are_refused_before_anything_is_sent(
    pg_app: Flask, statements: list[Any], refusal: str
) -> None:
    with (
        pg_app.app_context(),
        statements_run(pg_app) as run,
        pytest.raises(ValueError, match=refusal),
    ):
        write_together([Write(statement, {}) for statement in statements])
    assert run == []


def test_a_move_writes_in_one_statement_on_postgresql(
    app: Flask, client: FlaskClient, make_game: Any
) -> None:
    """The move's event, its game's and mover's rows and the withdrawal of the mover's turn
    email: written together, after the statements that lock the game and read it."""
    game = make_game()
    with app.app_context(), transaction():
        played = db.session.get(Game, game["id"])
        seat = to_act(played.state)[0]
        mover = played.player(seat)
        queue(Email("old", "old", "<p>old</p>"), kind="turn", recipient=mover.email, player=mover)
    view = client.get(f"/api/play/{game[seat]}").get_json()
    with statements_run(app) as run:
        answer = client.post(
            f"/api/play/{game[seat]}",
            json={"version": view["version"], **pick_action(view, random.Random(7))},
        )
    assert answer.status_code == 200, answer.get_json()
    with app.app_context():
        if db.session.get_bind().dialect.name == "postgresql":
            assert len(run) == 3
            assert "FOR UPDATE" in run[0][0] and run[2][0].startswith("WITH")
        (event,) = db.session.scalars(select(Event).where(Event.kind == "move"))
        played = db.session.get(Game, game["id"])
        assert (event.seat, event.version) == (seat, played.version) == (seat, 1)
        assert event.created_at == played.updated_at  # the move's instant
        (turn,) = db.session.scalars(select(OutboxMessage).where(OutboxMessage.kind == "turn"))
        assert (turn.status, turn.last_error) == ("skipped", skip_note(WITHDRAWN))
