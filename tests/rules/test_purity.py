"""The engine and the computer players stay pure: no web or database framework, only the
standard library, and the computer players do no input or output either."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import REPO

RULES_PACKAGE = REPO / "service" / "rules"
BOTS_PACKAGE = REPO / "service" / "bots"
FRAMEWORKS = ["flask", "sqlalchemy", "werkzeug", "flask_sqlalchemy", "psycopg", "click"]
# What a computer player must not touch: files, the console, processes, the network.
IO_MODULES = {"io", "os", "pathlib", "shutil", "socket", "subprocess", "sys", "tempfile", "urllib"}
IO_CALLS = {"open", "print", "input", "breakpoint"}


def test_importing_the_engine_loads_no_framework() -> None:
    """The engine, the computer players and the playtest simulation are pure."""
    code = (
        "import json, sys, service.rules, service.replay, service.bots, "
        "service.playtest.simulate, service.playtest.compare, service.playtest.report; "
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


def called_names(path: Path) -> list[str]:
    """The plain names a module calls, such as ``open`` in ``open(path)``."""
    return [
        node.func.id
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    ]


ENGINE_FILES = sorted(RULES_PACKAGE.glob("*.py"))
BOTS_FILES = sorted(BOTS_PACKAGE.glob("*.py"))
PURE_FILES = ENGINE_FILES + BOTS_FILES


def test_engine_files_are_found() -> None:
    assert {path.name for path in ENGINE_FILES} >= {"__init__.py", "engine.py", "seat_view.py"}
    assert {path.name for path in BOTS_FILES} >= {"__init__.py", "cardsense.py"}


def is_pure(name: str) -> bool:
    """Whether an imported module is the standard library, the engine or the computer players."""
    return name.split(".")[0] in sys.stdlib_module_names or any(
        name == package or name.startswith(package + ".")
        for package in ("service.rules", "service.bots")
    )


@pytest.mark.parametrize(
    "path", PURE_FILES, ids=[f"{path.parent.name}/{path.name}" for path in PURE_FILES]
)
def test_engine_imports_only_the_standard_library(path: Path) -> None:
    outside = [name for name in imported_modules(path) if not is_pure(name)]
    assert outside == [], f"{path.name} imports {outside}"


@pytest.mark.parametrize("path", BOTS_FILES, ids=[path.name for path in BOTS_FILES])
def test_computer_players_do_no_input_or_output(path: Path) -> None:
    io = [name for name in imported_modules(path) if name.split(".")[0] in IO_MODULES]
    io += [name for name in called_names(path) if name in IO_CALLS]
    assert io == [], f"{path.name} uses {io}"


def test_the_engine_may_not_use_the_computer_players() -> None:
    for path in ENGINE_FILES:
        assert not [name for name in imported_modules(path) if name.startswith("service.bots")]


def test_the_scan_sees_a_framework_import(tmp_path: Path) -> None:
    module = tmp_path / "impure.py"
    module.write_text("from __future__ import annotations\nimport flask\nfrom .cards import DECK\n")
    assert imported_modules(module) == ["__future__", "flask"]
    assert not is_pure("flask") and is_pure("service.bots.search") and is_pure("random")


def test_the_scan_sees_input_and_output(tmp_path: Path) -> None:
    module = tmp_path / "noisy.py"
    module.write_text("import os.path\nprint(open('x').read())\nsorted([])\n")
    assert imported_modules(module) == ["os.path"]
    assert sorted(called_names(module)) == ["open", "print", "sorted"]


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
