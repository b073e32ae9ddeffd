"""A game the factory plays on (:mod:`tests.factories`) is the game the players would have made.

Each test plays games dealt from the same seed, one move by move as
:func:`helpers.play_to_end` does and the others by the factory, and compares
every row the service keeps about them, but for ids, moments and Message-IDs
(and the emails of the moves, which :func:`factories.written` does not queue).
"""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service import games
from service.links import token_for
from service.models import Event, Game, GameFigures, OutboxMessage, db
from service.unit_of_work import transaction

from .factories import played, written
from .helpers import play_to_end


def rows(app: Flask, game_id: int) -> dict[str, Any]:
    """What the service keeps of a game, with its ids and moments left out (or made relative)."""
    with app.app_context():
        game = db.session.get_one(Game, game_id)
        seat_of = {player.id: player.seat for player in game.players}
        figures = db.session.scalars(select(GameFigures).where(GameFigures.game_id == game_id))
        events = db.session.scalars(
            select(Event).where(Event.game_id == game_id).order_by(Event.id)
        )
        outbox = db.session.scalars(
            select(OutboxMessage).where(OutboxMessage.game_id == game_id).order_by(OutboxMessage.id)
        )
        return {
            "game": {
                "status": game.status,
                "state": game.state,
                "version": game.version,
                "look": game.look,
                "to_act": game.to_act,
                "reminded": game.reminded,
                "winner": game.winner,
                "has_deadline": game.deadline is not None,
                "finished": game.finished_at is not None,
                "match_game": game.match_game,
            },
            "players": [
                (p.seat, p.email, p.name, p.history_mark, p.notify, p.seen_at is None)
                for p in sorted(game.players, key=lambda p: p.seat)
            ],
            "events": [(e.kind, e.seat, e.action, e.version, e.note, e.actor) for e in events],
            "figures": [
                {
                    column.name: getattr(row, column.name)
                    for column in GameFigures.__table__.columns
                    if column.name not in ("id", "game_id", "finished_at")
                }
                for row in figures
            ],
            "outbox": [
                (
                    m.kind,
                    m.status,
                    m.recipient,
                    seat_of.get(m.player_id or 0),
                    m.params,
                    m.replace_key is not None,
                    sorted(m.headers),
                    m.subject,
                    m.attempts,
                )
                for m in outbox
            ],
        }


def tokens(app: Flask, game_id: int) -> dict[str, Any]:
    with app.app_context():
        game = db.session.get_one(Game, game_id)
        return {"id": game_id, **{p.seat: token_for(p) for p in game.players}}


def test_a_game_in_mid_play_is_the_one_played_move_by_move(
    app: Flask, client: FlaskClient, make_game
) -> None:
    by_moves, by_factory, by_writing = [
        make_game(seed=13, days_per_move=3)["id"]  # with deadlines
        for _ in range(3)
    ]
    dealt = rows(app, by_writing)

    def until(view: dict[str, Any]) -> bool:
        return len(view["rounds"]) == 1 and view["trick"] >= 4

    final = play_to_end(client, tokens(app, by_moves), 13, until=until)
    view = played(app, by_factory, 13, until=until)
    assert (view["round"], view["trick"], view["version"]) == (
        final["round"],
        final["trick"],
        final["version"],
    )
    assert written(app, by_writing, 13, until=until) == view
    played_rows = rows(app, by_moves)
    assert played_rows["game"]["status"] == "active" and not played_rows["figures"]
    assert rows(app, by_factory) == played_rows
    # Written at once, the game has every row but the emails of its moves.
    assert rows(app, by_writing) == {**played_rows, "outbox": dealt["outbox"]}


def test_a_finished_game_is_the_one_played_move_by_move(app: Flask, client: FlaskClient) -> None:
    """The first game of a return match: its end also deals the second game."""
    ids = []
    with app.app_context(), transaction():
        for _ in range(3):
            ids.append(
                games.create_match(
                    games.Seating("kim@example.com", "Kim"),
                    games.Seating("sam@example.com", "Sam"),
                    seed=40,
                ).id
            )
    dealt = rows(app, ids[2])
    final = play_to_end(client, tokens(app, ids[0]), seed=40)
    view = played(app, ids[1], seed=40)
    assert written(app, ids[2], seed=40) == view
    assert view["phase"] == final["phase"] == "over"
    # The API's view adds each trick's effect in words.
    assert view["history"] == [
        {key: value for key, value in entry.items() if key != "text"} for entry in final["history"]
    ]
    with app.app_context():
        seconds = db.session.scalars(
            select(Game.id).where(Game.match_game == 2).order_by(Game.id)
        ).all()
    assert len(seconds) == 3
    played_rows = rows(app, ids[0])
    assert played_rows["figures"] and played_rows["outbox"]
    assert rows(app, ids[1]) == played_rows
    # Written at once, the game has every row but the emails of its moves.
    assert rows(app, ids[2]) == {**played_rows, "outbox": dealt["outbox"]}
    # The second game is dealt from a new seed of its own: all else is alike.
    second, *others = [rows(app, game_id) for game_id in seconds]
    for kept in (second, *others):
        kept["game"].pop("state")
        kept["events"] = [event[:4] for event in kept["events"]]
    assert others == [second, second]
