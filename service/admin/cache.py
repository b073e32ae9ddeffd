"""Figures that cost a scan of many rows, kept for a minute in each web process."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from flask import current_app

from ..models import utcnow

SECONDS = 60
Value = TypeVar("Value")


def _store() -> dict[str, tuple[float, datetime, Any]]:
    return current_app.extensions.setdefault("splitmind_admin_cache", {})


def cached(
    name: str, compute: Callable[[], Value], *, refresh: bool = False
) -> tuple[Value, datetime]:
    """``compute()``, or its result from the last minute; also returns when it was computed."""
    store = _store()
    kept = store.get(name)
    if kept is not None and not refresh and kept[0] > time.monotonic():
        return kept[2], kept[1]
    value, moment = compute(), utcnow()
    store[name] = (time.monotonic() + SECONDS, moment, value)
    return value, moment


def forget() -> None:
    """Drop every kept figure (after an admin action changed some)."""
    _store().clear()
