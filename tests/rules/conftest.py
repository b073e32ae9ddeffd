"""Fixtures for the rules engine tests (plain helpers live in helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import RULES_DIR_VARIABLE, examples_dir


@pytest.fixture(scope="session")
def examples() -> Path:
    """The examples directory; a missing or empty one fails the test, never skips it."""
    path = examples_dir()
    if not path.is_dir() or not any(path.glob("*.json")):
        pytest.fail(
            f"no rule examples at {path}: restore tests/rules/examples/ "
            f"or set {RULES_DIR_VARIABLE} to a directory holding examples/"
        )
    return path
