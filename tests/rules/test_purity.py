"""The engine stays pure: no web or database framework, only the standard library."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import REPO

RULES_PACKAGE = REPO / "service" / "rules"
FRAMEWORKS = ["flask", "sqlalchemy", "werkzeug", "flask_sqlalchemy", "psycopg"]


def test_importing_the_engine_loads_no_framework() -> None:
    code = (
        "import json, sys, service.rules, service.replay; "
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {FRAMEWORKS!r})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def imported_modules(path: Path) -> list[str]:
    """Top-level names of the absolute imports in a module; relative imports are skipped."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


ENGINE_FILES = sorted(RULES_PACKAGE.glob("*.py"))


def test_engine_files_are_found() -> None:
    assert {path.name for path in ENGINE_FILES} >= {"__init__.py", "engine.py", "seat_view.py"}


@pytest.mark.parametrize("path", ENGINE_FILES, ids=[path.name for path in ENGINE_FILES])
def test_engine_imports_only_the_standard_library(path: Path) -> None:
    outside = [
        name
        for name in imported_modules(path)
        if name.split(".")[0] not in sys.stdlib_module_names
        and not (name == "service.rules" or name.startswith("service.rules."))
    ]
    assert outside == [], f"{path.name} imports {outside}"


def test_the_scan_sees_a_framework_import(tmp_path: Path) -> None:
    module = tmp_path / "impure.py"
    module.write_text("from __future__ import annotations\nimport flask\nfrom .cards import DECK\n")
    assert imported_modules(module) == ["__future__", "flask"]


def test_engine_benchmark_runs() -> None:
    result = subprocess.run(
        [sys.executable, "bench/engine.py", "--games", "5", "--runs", "2"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "games/second" in result.stdout
    assert "games per run:   5" in result.stdout
    assert "(median of 2 runs)" in result.stdout
