"""The migrations build exactly the schema the models describe, on both databases."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from flask import Flask

from service.models import db


def test_migrated_schema_matches_the_models(app: Flask) -> None:
    with app.app_context(), db.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, db.metadata) == []


def test_one_head(app: Flask) -> None:
    with app.app_context():
        config = app.extensions["migrate"].migrate.get_config()
    assert len(ScriptDirectory.from_config(config).get_heads()) == 1
