"""Split Mind by Mail: play Split Mind by email.

``flask --app service`` finds :func:`create_app`. Importing the package loads
nothing else, so ``service.rules`` and ``service.replay`` stay free of Flask.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flask import Flask


def create_app(test_config: Mapping[str, Any] | None = None) -> Flask:
    """The application factory; ``test_config`` overrides settings (tests only)."""
    from .app import create_app as build

    return build(test_config)
