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
def scratch_app(postgres: str, **config: Any) -> Iterator[tuple[Flask, str]]:
    """Create a database next to ``postgres``, migrate the app onto it, drop it afterwards.

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
        with psycopg.connect(postgres, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
