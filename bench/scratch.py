"""A throwaway PostgreSQL database with the app migrated onto it, for the benchmarks."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from flask import Flask
from psycopg import sql

from service import create_app
from service.models import db


@contextmanager
def scratch_app(postgres: str, *, keep: bool = False, **config: Any) -> Iterator[tuple[Flask, str]]:
    """Create a database next to ``postgres``, migrate the app onto it, drop it afterwards
    (unless ``keep``: then its URL is printed, for a look at what was measured).

    Yields the app and the database URL.
    """
    name = f"splitmind_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = postgres.rsplit("/", 1)[0] + "/" + name
    try:
        with tempfile.TemporaryDirectory() as instance:
            app = create_app(
                {
                    "DATABASE_URL": url,
                    "SECRET_KEY": "bench",
                    "BASE_URL": "http://bench.test",
                    "instance_path": instance,
                    **config,
                }
            )
            with app.app_context():
                from flask_migrate import upgrade

                upgrade()
            try:
                yield app, url
            finally:
                with app.app_context():
                    db.engine.dispose()
    finally:
        if keep:
            print(f"the database is kept: {url}", flush=True)
        else:
            with psycopg.connect(postgres, autocommit=True) as conn:
                conn.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )


def deal_games(app: Flask, seeds: list[int]) -> list[dict[str, str]]:
    """Deal a game on the app's database for each seed, between ``keeper<seed>@example.com``
    and ``shadow<seed>@example.com``; returns each game's seats' link tokens."""
    from service.games import Seating, create_game
    from service.links import token_for
    from service.unit_of_work import transaction

    dealt = []
    with app.app_context():
        for seed in seeds:
            with transaction():
                game = create_game(
                    Seating(f"keeper{seed}@example.com", "Keeper"),
                    Seating(f"shadow{seed}@example.com", "Shadow"),
                    seed=seed,
                )
            dealt.append({seat: token_for(game.player(seat)) for seat in ("keeper", "shadow")})
    return dealt
