"""The admin games search is served by the players' trigram indexes on PostgreSQL; SQLite,
which has none, reads the table."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask, current_app
from sqlalchemy import func, literal, select, text

from service.admin import listing
from service.models import db, folded
from service.unit_of_work import transaction

from ..helpers import statements_run

pytestmark = pytest.mark.postgres

GAMES = 5000


def many_games() -> None:
    """``GAMES`` finished games of two players each, and Zelda Quux's among them."""
    with transaction():
        db.session.execute(
            text(
                "INSERT INTO games (status, state, version, look, to_act, reminded,"
                " created_at, updated_at)"
                " SELECT 'finished', '{}', 0, 'standard', '', false, now() - n * interval '1 hour',"
                " now() - n * interval '1 hour' FROM generate_series(1, :games) AS n"
            ),
            {"games": GAMES},
        )
        db.session.execute(
            text(
                "INSERT INTO players (game_id, seat, email, name, notify, history_mark, created_at)"
                " SELECT games.id, seats.seat, 'p' || games.id || seats.seat || '@example.com',"
                " 'Player ' || games.id, true, 0, now()"
                " FROM games CROSS JOIN (VALUES ('keeper'), ('shadow')) AS seats (seat)"
            )
        )
        db.session.execute(
            text(
                "UPDATE players SET email = 'zelda@example.org', name = 'Zelda Quux'"
                " WHERE id = (SELECT max(id) FROM players)"
            )
        )
    db.session.remove()
    # As autovacuum would: the statistics, and the rows the GIN indexes keep pending merged in.
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text("VACUUM ANALYZE players"))


def search_plan(search: str) -> tuple[str, list[Any]]:
    """The plan PostgreSQL chooses for the games page's query with this search, and its rows."""
    with statements_run(current_app) as executed:
        page = listing.games_page(listing.GameFilter(search=search))
    statement, parameters = next(
        (statement, parameters) for statement, parameters in executed if "FROM games" in statement
    )
    rows = db.session.connection().exec_driver_sql("EXPLAIN " + statement, parameters)
    return "\n".join(row[0] for row in rows), page.rows


def test_the_search_reads_the_trigram_indexes_not_the_players_table(app: Flask) -> None:
    with app.app_context():
        many_games()
        plan, rows = search_plan("quux")
        assert len(rows) == 1 and "Zelda Quux" in [player.name for player in rows[0].players]
        assert "ix_players_folded_name_trgm" in plan and "ix_players_lower_email_trgm" in plan, plan
        assert "Seq Scan on players" not in plan, plan
        # Part of an address is found the same way.
        plan, rows = search_plan("ZELDA@example")
        assert len(rows) == 1 and "Seq Scan on players" not in plan, plan


@pytest.mark.parametrize("app", ["sqlite"], indirect=True)
def test_sqlite_searches_without_the_index(app: Flask, make_game) -> None:
    make_game(seed=1, shadow_name="Zelda Quux")
    make_game(seed=2)
    with app.app_context():
        rows = listing.games_page(listing.GameFilter(search="QUUX")).rows
        assert len(rows) == 1 and rows[0].player("shadow").name == "Zelda Quux"
        index = db.session.execute(text("SELECT name FROM sqlite_master WHERE name LIKE '%trgm'"))
        assert index.all() == []


@pytest.mark.both_backends
@pytest.mark.parametrize(
    ("name", "typed"),
    [
        ("Élodie Martin", "elodie"),
        ("Léa Dupré", "LEA DUPRE"),
        ("Renée", "renee"),
        ("Jürgen Straße", "strasse"),
        ("Renee Plain", "renée"),  # accents typed that the name lacks
        ("Zoë 50%_off/x", "zoe 50%_off/x"),  # LIKE's own characters are letters here
        ("Zoë 5% off", "zoe 5\uff05 off"),  # a full-width "%" folds to a letter too
    ],
)
def test_a_name_is_found_with_or_without_its_accents(
    app: Flask, make_game, name: str, typed: str
) -> None:
    make_game(seed=1, shadow_name=name)
    make_game(seed=2, shadow_name="Zoe 5000 off x")
    with app.app_context():
        rows = listing.games_page(listing.GameFilter(search=typed)).rows
        assert [row.player("shadow").name for row in rows] == [name]
        assert folded(name) is not None and folded(typed) in (folded(name) or "")


def test_postgresql_and_python_fold_alike(app: Flask) -> None:
    names = ["Élodie", "Straße", "Œuvre", "Łukasz", "Ørsted", "Æsa", "Đorđe", "Ñandú", "ÇA"]
    names += ["Guðrún", "ÐÓRA", "Þórunn", "STRAẞE", "Ħal", "Ŧ", "Ŋ"]
    with app.app_context():
        fold = db.session.execute(
            select(*(func.splitmind_fold(literal(name)) for name in names))
        ).one()
    assert list(fold) == [folded(name) for name in names]
