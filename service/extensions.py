"""Flask extensions, created unbound and bound to an app in :func:`service.create_app`."""

from __future__ import annotations

from typing import Any

from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_migrate import Migrate
from flask_wtf.csrf import CSRFProtect
from sqlalchemy import JSON

from .models import UTCDateTime, db


def render_type(kind: str, obj: Any, context: Any) -> str | bool:
    """Write the project's column types into migrations as plain SQLAlchemy types."""
    if kind != "type":
        return False
    if isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    if isinstance(obj, JSON):
        context.imports.add("from sqlalchemy.dialects import postgresql")
        return 'sa.JSON().with_variant(postgresql.JSONB(), "postgresql")'
    return False


migrate = Migrate(render_as_batch=True, compare_type=True, render_item=render_type)
csrf = CSRFProtect()
# Storage comes from RATELIMIT_STORAGE_URI, so several web processes can share counts.
limiter = Limiter(key_func=get_remote_address)

__all__ = ["csrf", "db", "limiter", "migrate"]
