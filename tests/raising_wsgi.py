"""A WSGI app that fails every request, to make gunicorn log an error on the request's path."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """Raise, naming the path, as a broken app would."""
    raise RuntimeError(f"cannot answer {environ['PATH_INFO']}")
