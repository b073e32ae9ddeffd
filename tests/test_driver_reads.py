"""A read run on the driver's cursor (service.driver_reads) gives what SQLAlchemy's gives."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import Connection, Integer, Select, bindparam, select
from sqlalchemy.exc import DBAPIError, OperationalError

from service import driver_reads, games, homes
from service.games import Seating
from service.models import AddressSettings, Event, Game, Player, db
from service.perspective import _facts_query
from service.players.kept import _page_query
from service.unit_of_work import transaction

from .factories import played
from .helpers import statements_run
from .test_connections import terminate_connections

STATEMENTS = {
    "view": lambda: _facts_query(True),
    "poll": lambda: _facts_query(False),
    "page": _page_query,
}


@pytest.fixture
def reading(app: Flask) -> Iterator[Connection]:
    """A connection of the app's outside any transaction, as the views read."""
    with app.app_context(), db.engine.connect() as connection:
        connection.execution_options(isolation_level="AUTOCOMMIT")
        yield connection


def both(connection: Connection, statement: Select[Any], player_id: int) -> Any:
    """The row read both ways, checked equal value for value and name for name."""
    theirs = connection.execute(statement, {"player_id": player_id}).one_or_none()
    ours = driver_reads.one_or_none(connection, statement, {"player_id": player_id})
    if theirs is None:
        assert ours is None
        return None
    assert ours._asdict() == theirs._asdict()
    assert [type(value) for value in ours] == [type(value) for value in theirs]
    return ours


def _player_ids(app: Flask) -> list[int]:
    with app.app_context():
        return list(db.session.scalars(select(Player.id).order_by(Player.id)))


def test_the_rows_of_games_at_every_stage_are_read_alike(
    app: Flask, make_game: Any, reading: Connection
) -> None:
    # Mid-game with a deadline, finished, against the computer, one player away, notes off
    # and a move reminded of: every column of the three reads takes a value, or none.
    make_game(seed=3, days_per_move=3)
    finished = make_game(seed=4)
    played(app, finished["id"], 4)
    mid = make_game(seed=5, days_per_move=2)
    played(app, mid["id"], 5, until=lambda view: len(view["history"]) >= 4)
    with app.app_context(), transaction():
        games.create_game(games.Seating("ada@example.com", "Ada"), Seating.the_computer("easy"))
        homes.take_vacation("sam@example.com", 4)
        game = db.session.get_one(Game, mid["id"])
        games.turn_notes_off(game.player("keeper"))
        game.events.add(Event(kind="reminded", seat="shadow", version=game.version))
    read = 0
    for player_id in [*_player_ids(app), 10**6]:
        for statement in STATEMENTS.values():
            read += both(reading, statement(), player_id) is not None
    assert read == 3 * 8


def test_a_timestamp_is_read_in_utc_whatever_the_session_time_zone(
    app: Flask, make_game: Any, reading: Connection
) -> None:
    game = make_game(days_per_move=3)
    reading.exec_driver_sql("SET TIME ZONE 'Pacific/Auckland'")
    row = both(reading, _facts_query(False), _player_ids(app)[0])
    assert row.deadline.utcoffset() == timedelta(0) and game["id"] == row.id


def test_the_statement_is_heard_by_whoever_listens(app: Flask, make_game: Any) -> None:
    make_game()
    player_id = _player_ids(app)[0]
    with statements_run(app) as statements, app.app_context(), db.engine.connect() as connection:
        connection.execution_options(isolation_level="AUTOCOMMIT")
        driver_reads.one_or_none(connection, _facts_query(False), {"player_id": player_id})
    assert [parameters for _, parameters in statements] == [{"player_id": player_id}]


def test_inside_a_transaction_sqlalchemy_reads_it(app: Flask, make_game: Any) -> None:
    make_game()
    player_id = _player_ids(app)[0]
    with app.app_context(), db.engine.connect() as connection:
        row = driver_reads.one_or_none(connection, _facts_query(False), {"player_id": player_id})
        assert row is not None and type(row).__module__.startswith("sqlalchemy")
        assert connection.in_transaction()


def test_a_dropped_connection_is_invalidated_and_said_as_sqlalchemy_says_it(
    app: Flask, make_game: Any, reading: Connection, postgres_database: str
) -> None:
    make_game()
    player_id = _player_ids(app)[0]
    assert driver_reads.one_or_none(reading, _facts_query(False), {"player_id": player_id})
    assert terminate_connections(postgres_database) >= 1
    with pytest.raises(OperationalError) as raised:
        driver_reads.one_or_none(reading, _facts_query(False), {"player_id": player_id})
    assert raised.value.connection_invalidated and reading.invalidated
    assert raised.value.params is None  # no parameter kept to be shown, as the engine hides them


def test_a_dropped_connection_has_the_pool_replace_the_others_it_held(
    app: Flask, make_game: Any, postgres_database: str
) -> None:
    # A restarted server ends every pooled connection: the first read to find its own
    # dropped has the pool open new ones, so the next reads do not each meet a dead one.
    make_game()
    player_id = _player_ids(app)[0]
    with app.app_context():
        held = [db.engine.connect() for _ in range(3)]
        for connection in held:
            connection.exec_driver_sql("SELECT 1")
            connection.close()
        assert terminate_connections(postgres_database) >= 3
        for attempt in range(3):
            with db.engine.connect() as connection:
                connection.execution_options(isolation_level="AUTOCOMMIT")
                try:
                    row = driver_reads.one_or_none(
                        connection, _facts_query(False), {"player_id": player_id}
                    )
                except OperationalError as exc:
                    assert attempt == 0 and exc.connection_invalidated
                else:
                    assert row is not None and attempt > 0


def test_a_connection_closed_already_is_said_as_sqlalchemy_says_it(app: Flask) -> None:
    raised = []
    with app.app_context():
        for read in (Connection.execute, driver_reads.one_or_none):
            with db.engine.connect() as connection:
                connection.execution_options(isolation_level="AUTOCOMMIT")
                connection.connection.driver_connection.close()
                with pytest.raises(OperationalError) as error:
                    read(connection, _facts_query(False), {"player_id": 1})
                assert error.value.connection_invalidated and connection.invalidated
                raised.append(error.value)
    assert [type(exc.orig) for exc in raised[1:]] == [type(exc.orig) for exc in raised[:1]]


def test_an_error_is_the_one_sqlalchemy_raises(app: Flask, reading: Connection) -> None:
    statement = select(AddressSettings.email).where(
        AddressSettings.email == bindparam("email", type_=Integer)
    )
    with pytest.raises(DBAPIError) as ours:
        driver_reads.one_or_none(reading, statement, {"email": 1})
    with pytest.raises(DBAPIError) as theirs:
        reading.execute(statement, {"email": 1})
    assert type(ours.value) is type(theirs.value)
    assert type(ours.value.orig) is type(theirs.value.orig)
    assert not ours.value.connection_invalidated


def test_a_parameter_converted_when_sent_is_left_to_sqlalchemy(reading: Connection) -> None:
    statement = select(Player.id).where(Player.id.in_(bindparam("ids", expanding=True)))
    with pytest.raises(ValueError, match="run it by SQLAlchemy"):
        driver_reads.one_or_none(reading, statement, {"ids": [1]})
