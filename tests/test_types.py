"""The service's type annotations hold: mypy, configured in pyproject.toml, finds no error.

mypy shares its cache with ``make lint`` (.mypy_cache), so a run after a small
change checks only what changed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.xdist_group("mypy")


@pytest.mark.slow
def test_mypy_finds_no_error_in_the_service() -> None:
    report, errors, status = api.run(
        [
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            str(ROOT / "service"),
        ]
    )
    assert status == 0, report + errors
