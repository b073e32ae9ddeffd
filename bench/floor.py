"""The floor: the least a correct implementation of the JSON API can do.

Flask and psycopg without an ORM. A game is one row holding the engine's state
as JSON, its version and each seat's link key; a move is one row of ``events``.
``GET /api/play/<token>`` verifies the signed token, reads the row and answers
the engine's seat view; ``POST`` locks the row ``FOR UPDATE``, applies the move
with the project's engine, updates the row, inserts the event and commits.
bench/http.py serves it under gunicorn beside the service and compares them.

    FLOOR_DATABASE_URL=postgresql://... FLOOR_SECRET_KEY=... gunicorn 'bench.floor:create_app()'
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
from flask import Flask, jsonify, request
from itsdangerous import BadSignature, URLSafeSerializer
from psycopg import sql
from psycopg.types.json import Jsonb

from service.rules import (
    CHOICE_PHASES,
    OVER,
    SEATS,
    ActionError,
    RuleError,
    apply,
    new_game,
    other,
    parse_action,
    seat_view,
    to_act,
)

SALT = "floor.play-link"
SCHEMA = """
CREATE TABLE games (
    id serial PRIMARY KEY,
    version integer NOT NULL DEFAULT 0,
    state jsonb NOT NULL,
    keeper_key text NOT NULL,
    shadow_key text NOT NULL
);
CREATE TABLE events (
    id bigserial PRIMARY KEY,
    game_id integer NOT NULL REFERENCES games (id),
    seat text NOT NULL,
    action jsonb NOT NULL,
    version integer NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ix_events_game_id_id ON events (game_id, id);
"""


def create_schema(conn: psycopg.Connection) -> None:
    """Create the floor's two tables on an empty database."""
    conn.execute(SCHEMA)


def insert_game(conn: psycopg.Connection, seed: int, keys: tuple[str, str]) -> int:
    """Deal a game from ``seed`` with the seats' link keys; returns its id."""
    row = conn.execute(
        "INSERT INTO games (state, keeper_key, shadow_key) VALUES (%s, %s, %s) RETURNING id",
        (Jsonb(new_game(seed=seed)), *keys),
    ).fetchone()
    assert row is not None
    return row[0]


def sign(secret: str, game_id: int, seat: str, key: str) -> str:
    """The token of a seat's link."""
    return URLSafeSerializer(secret, salt=SALT).dumps([game_id, seat, key])


@contextlib.contextmanager
def throwaway_database(
    postgres: str, secret: str
) -> Iterator[tuple[str, Callable[[list[int]], list[dict[str, str]]]]]:
    """A database of the floor's own on the server of ``postgres`` (dropped at the end, also
    after an error), and how to deal games on it: each seed's game as its seats' tokens."""
    name = f"splitmind_bench_floor_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = postgres.rsplit("/", 1)[0] + "/" + name
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            create_schema(conn)

        def deal(seeds: list[int]) -> list[dict[str, str]]:
            dealt = []
            with psycopg.connect(url, autocommit=True) as conn:
                for seed in seeds:
                    keys = {seat: secrets.token_urlsafe(32) for seat in SEATS}
                    game_id = insert_game(conn, seed, (keys["keeper"], keys["shadow"]))
                    dealt.append({seat: sign(secret, game_id, seat, keys[seat]) for seat in SEATS})
            return dealt

        yield url, deal
    finally:
        with psycopg.connect(postgres, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def create_app() -> Flask:
    """The floor app, configured from FLOOR_DATABASE_URL and FLOOR_SECRET_KEY."""
    app = Flask("floor")
    url = os.environ["FLOOR_DATABASE_URL"]
    signer = URLSafeSerializer(os.environ["FLOOR_SECRET_KEY"], salt=SALT)
    # One connection per process, opened after gunicorn forks (a sync worker serves one
    # request at a time), and opened again if the server dropped it.
    held: list[psycopg.Connection] = []

    def connection() -> psycopg.Connection:
        if not held or held[0].closed or held[0].broken:
            held[:] = [psycopg.connect(url)]
        return held[0]

    def seat_of(token: str) -> tuple[int, str, str] | None:
        try:
            game_id, seat, key = signer.loads(token)
        except (BadSignature, ValueError, TypeError):
            return None
        if not isinstance(game_id, int) or seat not in ("keeper", "shadow"):
            return None
        return game_id, seat, key

    def answer(game_id: int, seat: str, version: int, state: dict[str, Any]) -> Any:
        view = seat_view(state, seat)
        status = "over" if state["phase"] == OVER else "active"
        view.update(game=game_id, version=version, status=status)
        return jsonify(view)

    def error(status: int, message: str) -> Any:
        return jsonify({"error": message}), status

    @app.get("/api/play/<token>")
    def view(token: str) -> Any:
        found = seat_of(token)
        if found is None:
            return error(404, "not found")
        game_id, seat, key = found
        conn = connection()
        with conn.transaction():
            row = conn.execute(
                "SELECT version, state, keeper_key, shadow_key FROM games WHERE id = %s",
                (game_id,),
            ).fetchone()
        if row is None or not _key_matches(row, seat, key):
            return error(404, "not found")
        return answer(game_id, seat, row[0], row[1])

    @app.post("/api/play/<token>")
    def move(token: str) -> Any:
        found = seat_of(token)
        if found is None:
            return error(404, "not found")
        game_id, seat, key = found
        body = request.get_json(silent=True)
        if not isinstance(body, dict) or not isinstance(body.get("version"), int):
            return error(400, 'send {"version": V, ...move}')
        action = {name: value for name, value in body.items() if name != "version"}
        try:
            parse_action(action)
        except ActionError as exc:
            return error(400, str(exc))
        conn = connection()
        with conn.transaction():
            row = conn.execute(
                "SELECT version, state, keeper_key, shadow_key FROM games WHERE id = %s FOR UPDATE",
                (game_id,),
            ).fetchone()
            if row is None or not _key_matches(row, seat, key):
                return error(404, "not found")
            version, state = row[0], row[1]
            if state["phase"] == OVER:
                return error(409, "the game is over")
            seen = body["version"]
            if seen != version and not _opponent_chose_since(state, seat, version, seen):
                return error(409, "stale version")
            try:
                state = apply(state, seat, action)
            except ActionError as exc:
                return error(400, str(exc))
            except RuleError as exc:
                return error(422, str(exc))
            conn.execute(
                "UPDATE games SET state = %s, version = %s WHERE id = %s",
                (Jsonb(state), version + 1, game_id),
            )
            conn.execute(
                "INSERT INTO events (game_id, seat, action, version) VALUES (%s, %s, %s, %s)",
                (game_id, seat, Jsonb(action), version + 1),
            )
        return answer(game_id, seat, version + 1, state)

    return app


def _key_matches(row: tuple[Any, ...], seat: str, key: object) -> bool:
    stored = row[2] if seat == "keeper" else row[3]
    return isinstance(key, str) and hmac.compare_digest(stored.encode(), key.encode())


def _opponent_chose_since(state: dict[str, Any], seat: str, version: int, seen: object) -> bool:
    """The second half of an exchange or swap, made against the version before the first."""
    return (
        seen == version - 1
        and state["phase"] in CHOICE_PHASES
        and seat in to_act(state)
        and state["pending"][other(seat)] is not None
    )
