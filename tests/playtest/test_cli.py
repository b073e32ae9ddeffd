"""``flask --app service playtest simulate`` and ``compare``: reports, JSON, variants, runs."""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
from pathlib import Path
from select import select as wait_for

import pytest
from sqlalchemy import select

from service import create_app
from service.models import PlaytestRun, db
from service.playtest import compare as compare_module
from service.playtest import simulate as simulate_module
from service.playtest.simulate import players_digest
from service.rules import PRINTED, Variant

from ..conftest import base_config

KEYS = {
    "games",
    "keeper",
    "shadow",
    "variant",
    "seed",
    "players",
    "keeper_wins",
    "shadow_wins",
    "keeper_win_rate",
    "keeper_win_rate_ci",
    "track",
    "track_mean",
    "rounds",
    "rounds_mean",
    "keeper_win_rate_by_rounds",
    "trick_difference",
    "effects",
    "leaders",
    "track_by",
    "shadow_wins_by",
}
COMPARE_KEYS = {
    "games",
    "keeper",
    "shadow",
    "seed",
    "players",
    "variant",
    "against",
    "deals",
    "agree",
    "same_games",
    "agree_rate",
    "difference",
    "difference_ci",
    "p_mid",
    "p_exact",
    "target",
    "nearer_even",
    "distance_change",
    "distance_change_ci",
    "nearer_even_beyond_noise",
}


def playtest(runner, command: str, *args: str):
    """``playtest COMMAND`` on 6 games (or deals), easy as the Keeper, random as the Shadow."""
    return runner.invoke(
        args=["playtest", command, "--games", "6", "--keeper", "easy", "--shadow", "random", *args]
    )


def simulate(runner, *args: str):
    return playtest(runner, "simulate", *args)


def compare(runner, *args: str):
    return playtest(runner, "compare", *args)


def test_simulate_prints_the_figures(runner) -> None:
    result = simulate(runner, "--seed", "3")
    assert result.exit_code == 0, result.output
    for words in (
        "6 games: easy as the Keeper, random as the Shadow, printed rules, seed 3",
        "95% Wilson interval",
        "Final track",
        "Rounds a game lasts",
        "Steal (club)",
        "Round 2:",
        "Shadow wins mostly by taking",
    ):
        assert words in result.stdout
    # Each effect's win rates with the games they come from, which add up to the games.
    figures = json.loads(simulate(runner, "--seed", "3", "--json").stdout.splitlines()[-1])
    for effect, name in (("steal", "Steal (club)"), ("swap", "Swap (diamond)")):
        with_ = figures["effects"][effect]["games_with"]
        (line,) = [line for line in result.stdout.splitlines() if line.startswith(f"  {name}")]
        assert line.endswith(f"({with_:,} / {6 - with_:,})"), line


def test_json_is_the_last_line_with_stable_keys(runner) -> None:
    result = simulate(
        runner, "--json", "--variant", "halfway=6", "--variant", "exchange_sizes=1,2,2"
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(figures) == KEYS
    assert figures["games"] == 6
    assert figures["variant"] == {"halfway": "6", "exchange_sizes": "1,2,2"}
    assert figures["keeper_wins"] + figures["shadow_wins"] == 6
    assert len(figures["keeper_win_rate_ci"]) == 2
    again = simulate(
        runner, "--json", "--variant", "halfway=6", "--variant", "exchange_sizes=1,2,2"
    )
    assert again.stdout == result.stdout


def test_bad_variants_are_usage_errors(runner) -> None:
    for option, message in (
        ("colour=red", "unknown variant parameter 'colour'"),
        ("halfway=six", "halfway is a whole number"),
        ("halfway=11", "halfway is 0 to the track length 10"),
        ("rounds=11", "rounds=11 needs exchange_sizes too"),
        ("track_length=1", "track_length=1 needs halfway too"),
        ("exchange_sizes=1,x", "exchange_sizes is whole numbers separated by commas"),
        ("halfway", "'halfway' is not KEY=VALUE"),
    ):
        result = simulate(runner, "--variant", option)
        assert result.exit_code == 2, option
        assert "Invalid value for '--variant'" in result.output
        assert message in result.output, result.output
    twice = simulate(runner, "--variant", "halfway=4", "--variant", "halfway=6")
    assert twice.exit_code == 2 and "halfway is given twice" in twice.output
    level = runner.invoke(args=["playtest", "simulate", "--keeper", "genius", "--shadow", "easy"])
    assert level.exit_code == 2 and "'genius' is not one of" in level.output


def test_numbers_too_large_to_play_are_usage_errors(runner) -> None:
    for option, value, message in (
        ("--games", "1000000000000", "1000000000000 is not in the range 1<=x<=1000000"),
        ("--variant", "rounds=1000000000000", "rounds is 1 to 1000, not 1000000000000"),
    ):
        result = simulate(runner, option, value)
        assert result.exit_code == 2, result.output
        assert message in result.output, result.output


def test_more_workers_than_games_play_in_one_process(runner) -> None:
    result = simulate(runner, "--games", "1", "--workers", "500", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout.strip().splitlines()[-1])["games"] == 1


def test_save_stores_the_run(app, runner) -> None:
    result = simulate(runner, "--json", "--save", "--variant", "swap_size=1")
    assert result.exit_code == 0, result.output
    assert "Stored as run 1." in result.stderr
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    with app.app_context():
        run = db.session.scalars(select(PlaytestRun)).one()
        assert run.figures == figures
        assert (run.keeper_level, run.shadow_level, run.variant) == (
            "easy",
            "random",
            "swap_size=1",
        )
        assert (run.games, run.keeper_wins) == (6, figures["keeper_wins"])
        assert run.settings == {
            "games": 6,
            "keeper": "easy",
            "shadow": "random",
            "variant": {"swap_size": "1"},
            "seed": 1,
            "players": players_digest(),
        }


def test_a_long_variant_is_stored_with_its_label_cut_short(app, runner) -> None:
    sizes = ",".join(["0"] * 150)
    result = simulate(runner, "--json", "--save", "--variant", f"exchange_sizes={sizes}")
    assert result.exit_code == 0, result.output
    # The figures are printed before they are stored, should storing them fail.
    assert result.output.index('"keeper_wins"') < result.output.index("Stored as run 1.")
    with app.app_context():
        run = db.session.scalars(select(PlaytestRun)).one()
        assert run.figures == json.loads(result.stdout.strip().splitlines()[-1])
        assert run.variant == f"exchange_sizes={sizes}"[:199] + "…"  # the column's 200
        assert run.settings["variant"] == {"exchange_sizes": sizes, "rounds": "150"}


def test_save_is_refused_before_playing_where_runs_cannot_be_stored(tmp_path) -> None:
    """A database not upgraded (no table of runs): refused at once, not after the run."""
    app = create_app(base_config(f"sqlite:///{tmp_path / 'new.db'}", tmp_path))
    result = simulate(app.test_cli_runner(), "--json", "--save")
    assert result.exit_code == 1
    assert "runs cannot be stored (no such table: playtest_runs)" in result.stderr
    assert "nothing was played" in result.stderr
    assert "Playing" not in result.stderr and result.stdout == ""


def test_without_save_nothing_is_stored(app, runner) -> None:
    assert simulate(runner).exit_code == 0
    with app.app_context():
        assert db.session.scalars(select(PlaytestRun)).all() == []


def test_compare_prints_both_rule_sets_and_the_difference(runner) -> None:
    result = compare(runner, "--variant", "halfway=0", "--seed", "3")
    assert result.exit_code == 0, result.output
    for words in (
        "6 deals, each played under both rule sets: easy as the Keeper, random as the Shadow, "
        "seed 3",
        "  halfway=0 ",
        "  printed rules ",
        "95% Wilson interval",
        "Deals the Keeper won under both:",
        "Difference in the Keeper's win rate, halfway=0 minus printed rules:",
        "95% Newcombe paired interval",
        "McNemar test of no difference: mid-p",
        "Distance from an even game (the Keeper winning 50%), in points, and the designers' "
        "band of 48.0% to 52.0%:",
        "is nearer an even game than",
    ):
        assert words in result.stdout, result.stdout


def test_compare_json_is_the_last_line_with_stable_keys(runner) -> None:
    args = ("--json", "--variant", "halfway=0", "--against", "swap_size=1", "--workers", "2")
    result = compare(runner, *args)
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(figures) == COMPARE_KEYS
    assert figures["variant"]["rules"] == {"halfway": "0"}
    assert figures["against"]["rules"] == {"swap_size": "1"}
    assert figures["games"] == sum(figures["deals"].values()) == 6
    assert figures["players"] == players_digest()
    assert compare(runner, *args).stdout == result.stdout


def test_compare_refuses_the_same_rules_on_both_sides(runner) -> None:
    for args in (
        (),
        ("--variant", "exchange_sizes=1,2,3"),
        ("--variant", "halfway=6", "--against", "halfway=6"),
    ):
        result = compare(runner, *args)
        assert result.exit_code == 2, args
        assert "--variant and --against give the same rules" in result.output, result.output


def test_compare_refuses_bad_options(runner) -> None:
    for args, message in (
        (("--against", "colour=red"), "Invalid value for '--against': unknown variant parameter"),
        (("--variant", "halfway"), "'halfway' is not KEY=VALUE"),
        (("--variant", "halfway=6", "--games", "0"), "0 is not in the range 1<=x<=1000000"),
        (("--variant", "halfway=6", "--keeper", "genius"), "'genius' is not one of"),
        (("--variant", "halfway=6", "--workers", "0"), "0 is not in the range x>=1"),
    ):
        result = compare(runner, *args)
        assert result.exit_code == 2, args
        assert message in result.output, result.output


# The longest wait for a command's progress bar to move before a test gives up on it.
PROGRESS_WAIT = 120


def interrupted(command: str, workers: int, tmp_path: Path) -> tuple[int, str, str]:
    """``playtest COMMAND`` of 100,000 games (random against random) in a process of its own,
    interrupted as Ctrl-C does (every process of its group) once it has played some: its exit
    status, standard output and standard error."""
    extra = ["--variant", "halfway=0"] if command == "compare" else []
    arguments = ["--games", "100000", "--keeper", "random", "--shadow", "random", *extra]
    environment = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'unused.db'}",
        "SECRET_KEY": "test-secret-key",
        "SPLITMIND_ENV": "development",
    }
    # Standard error is a terminal, so the progress bar shows the games played.
    terminal, progress = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "flask", "--app", "service", "playtest", command, *arguments]
        + ["--workers", str(workers), "--json"],
        stdout=subprocess.PIPE,
        stderr=progress,
        env=environment,
        start_new_session=True,
    )
    os.close(progress)
    seen = b""
    try:
        while not re.search(rb" [1-9][0-9]*/100000", seen):
            # A bound on the wait, not on the speed: the first games take a few seconds.
            ready, _, _ = wait_for([terminal], [], [], PROGRESS_WAIT)
            assert ready, f"no game played in {PROGRESS_WAIT} s: {seen!r}"
            seen += os.read(terminal, 4096)
        os.killpg(process.pid, signal.SIGINT)
        stdout, _ = process.communicate(timeout=120)
        while True:
            try:
                more = os.read(terminal, 4096)
            except OSError:
                break
            if not more:
                break
            seen += more
    finally:
        if process.poll() is None:
            process.kill()
        os.close(terminal)
    return process.returncode, stdout.decode(), seen.decode(errors="replace")


@pytest.mark.parametrize(("command", "workers"), [("simulate", 2), ("compare", 1)])
def test_an_interrupted_run_prints_the_figures_of_the_games_it_played(
    command: str, workers: int, tmp_path
) -> None:
    status, stdout, stderr = interrupted(command, workers, tmp_path)
    assert status == 130, stderr
    printed = json.loads(stdout.splitlines()[-1])
    played = printed["games"]
    thing = "game" if command == "simulate" else "deal"
    assert f"Interrupted after {played:,} {thing}" in stderr, stderr
    assert f"as the same command with --games {played} plays them" in stderr
    assert "Traceback" not in stderr, stderr
    # The figures are those of a run of as many games with the same seed.
    if command == "simulate":
        settings = simulate_module.Settings(games=played, keeper="random", shadow="random")
        expected = simulate_module.figures(settings, simulate_module.simulate(settings))
    else:
        comparison = compare_module.Comparison(
            games=played, keeper="random", shadow="random", variant=Variant(halfway=0)
        )
        deals = compare_module.compare(comparison)
        expected = compare_module.comparison_figures(comparison, deals)
        assert comparison.against == PRINTED
    assert printed == json.loads(json.dumps(expected))
