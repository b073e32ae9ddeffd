"""The match script runs and prints its table and its JSON line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.rules.helpers import REPO


def test_the_match_script_runs() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "bench/bots.py",
            "--pairs",
            "2",
            "--workers",
            "1",
            "--match",
            "easy:random",
            "--match",
            "medium:easy",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert "| easy vs random | 4 |" in result.stdout
    assert "| medium vs easy | 4 |" in result.stdout
    figures = json.loads(lines[-1])
    assert [(match["challenger"], match["games"]) for match in figures["matches"]] == [
        ("easy", 4),
        ("medium", 4),
    ]
    for match in figures["matches"]:
        low, high = match["win_rate_ci"]
        assert 0 <= low <= match["win_rate"] <= high + 1e-9 <= 1 + 1e-9
        assert match["time"]["challenger"]["moves"] > 0


def test_runs_with_other_seeds_share_no_deals() -> None:
    from bench.bots import match_jobs

    def deals(seed: int) -> list[int]:
        jobs = match_jobs([("easy", "random")], 200, 40, seed)
        # The two games of a pair are dealt alike: the challenger plays each seat on one deal.
        assert [job[3] for job in jobs[::2]] == [job[3] for job in jobs[1::2]]
        return [job[3] for job in jobs[::2]]

    first, second = deals(1), deals(2)
    assert len(set(first)) == len(first) == 200
    assert not set(first) & set(second)
    assert deals(1) == first


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--pairs", "0"], "argument --pairs: must be at least 1, not 0"),
        (["--hard-pairs", "-1"], "argument --hard-pairs: must be at least 1, not -1"),
        (["--workers", "0"], "argument --workers: must be at least 1, not 0"),
        (["--match", "hard"], "argument --match: 'hard' is not CHALLENGER:OPPONENT"),
        (["--match", "foo:easy"], "argument --match: no level 'foo' in 'foo:easy'"),
    ],
)
def test_bad_arguments_are_refused_with_a_message(arguments: list[str], message: str) -> None:
    result = run_script(*arguments)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def run_script(*arguments: str) -> subprocess.CompletedProcess[str]:
    """``bench/bots.py`` run with ``arguments``, as from the repository's root."""
    return subprocess.run(
        [sys.executable, "bench/bots.py", *arguments],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        check=False,
    )


def test_a_match_given_twice_is_played_once() -> None:
    """Its games would be counted twice: the same deals, a narrower interval than they give."""
    result = run_script(
        "--pairs", "2", "--workers", "1", "--match", "easy:random", "--match", "easy:random"
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert [(match["challenger"], match["games"]) for match in figures["matches"]] == [("easy", 4)]
    assert result.stdout.count("| easy vs random |") == 1


def test_no_more_processes_start_than_processors_or_games() -> None:
    result = run_script("--pairs", "1", "--workers", "64", "--match", "easy:random")
    assert result.returncode == 0, result.stderr
    processes = int(result.stdout.split(" processes on ")[0].rsplit(" ", 1)[1])
    assert processes == min(2, os.cpu_count() or 1)
