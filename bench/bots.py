"""Play the computer levels against each other and print how often the stronger one wins.

Each match plays pairs of games on the same deals (the same seed), the
challenger as the Keeper in one and as the Shadow in the other, so both play
each role equally often on the same cards. Pair n is dealt from
``game_seed(seed, n)``, as the playtest lab deals its game n, so runs with
different ``--seed`` play different deals and their figures are independent.
The levels play as in the lab, by their budgets of play-outs without the
time limit that the service adds: the same seed plays the same games on any
machine, however slow or busy.
The table gives the challenger's win rate as the Keeper, as the Shadow and
overall, with the 95% Wilson interval of the overall rate, and the processor
time per move of each level (the time a move takes on one core, however busy
the machine; moves with a single legal choice included). The last line is the
same as JSON, with the wall-clock times as well.

    python bench/bots.py [--pairs N] [--hard-pairs N] [--workers K] [--seed S] [--match A:B ...]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

# The repository's root, not bench/ (whose http.py would hide the standard library's).
HERE = Path(__file__).resolve().parent
sys.path[:] = [str(HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != HERE]

from service.bots import LEVELS, player  # noqa: E402
from service.playtest.simulate import game_seed, wilson  # noqa: E402
from service.rules import SEATS, apply, new_game, seat_view, to_act  # noqa: E402

MATCHES = (("easy", "random"), ("medium", "easy"), ("hard", "medium"))


def play_game(job: tuple[str, str, str, int]) -> dict[str, Any]:
    """One game: ``challenger`` in ``seat``, the other level in the other, dealt from ``seed``."""
    challenger, opponent, seat, seed = job
    sides = {seat: "challenger", ("shadow" if seat == "keeper" else "keeper"): "opponent"}
    levels = {"challenger": challenger, "opponent": opponent}
    players = {each: player(levels[sides[each]], timed=False) for each in SEATS}
    rngs = {each: random.Random(f"{seed}:{each}") for each in SEATS}
    times: dict[str, list[float]] = {side: [] for side in levels}
    walls: dict[str, list[float]] = {side: [] for side in levels}
    state = new_game(seed=seed)
    while state["phase"] != "over":
        each = to_act(state)[0]
        view = seat_view(state, each)
        started, wall = time.thread_time(), time.perf_counter()
        action = players[each].choose(view, rngs[each])
        times[sides[each]].append(time.thread_time() - started)
        walls[sides[each]].append(time.perf_counter() - wall)
        state = apply(state, each, action)
    return {
        "challenger": challenger,
        "opponent": opponent,
        "seat": seat,
        "won": state["winner"] == seat,
        "times": times,
        "walls": walls,
    }


def match_jobs(
    matches: list[tuple[str, str]], pairs: int, hard_pairs: int, seed: int
) -> list[tuple[str, str, str, int]]:
    """The games of the matches, as :func:`play_game` takes them: each pair's two on one deal."""
    jobs = []
    for challenger, opponent in matches:
        count = hard_pairs if "hard" in (challenger, opponent) else pairs
        for pair in range(count):
            for seat in SEATS:
                jobs.append((challenger, opponent, seat, game_seed(seed, pair)))
    return jobs


def summarise(challenger: str, opponent: str, games: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of one match."""
    by_seat = {seat: [game["won"] for game in games if game["seat"] == seat] for seat in SEATS}
    wins = sum(game["won"] for game in games)
    low, high = wilson(wins, len(games))
    timing = {}
    for side, level in (("challenger", challenger), ("opponent", opponent)):
        moves = [moment for game in games for moment in game["times"][side]]
        walls = [moment for game in games for moment in game["walls"][side]]
        timing[side] = {
            "level": level,
            "mean_ms": 1000 * sum(moves) / len(moves),
            "max_ms": 1000 * max(moves),
            "wall_mean_ms": 1000 * sum(walls) / len(walls),
            "wall_max_ms": 1000 * max(walls),
            "moves": len(moves),
        }
    return {
        "challenger": challenger,
        "opponent": opponent,
        "games": len(games),
        "keeper_win_rate": sum(by_seat["keeper"]) / len(by_seat["keeper"]),
        "shadow_win_rate": sum(by_seat["shadow"]) / len(by_seat["shadow"]),
        "win_rate": wins / len(games),
        "win_rate_ci": [low, high],
        "stronger": low > 0.5,
        "time": timing,
    }


def table(results: list[dict[str, Any]]) -> str:
    """The matches as a Markdown table."""
    lines = [
        "| match | games | as Keeper | as Shadow | overall (95% CI) | ms a move: mean, max |",
        "|---|---:|---:|---:|---|---|",
    ]
    for result in results:
        low, high = result["win_rate_ci"]
        times = "; ".join(
            f"{figures['level']} {figures['mean_ms']:.1f}, {figures['max_ms']:.0f}"
            for figures in result["time"].values()
        )
        lines.append(
            f"| {result['challenger']} vs {result['opponent']} | {result['games']} "
            f"| {result['keeper_win_rate']:.1%} | {result['shadow_win_rate']:.1%} "
            f"| {result['win_rate']:.1%} ({low:.1%}–{high:.1%}) | {times} |"
        )
    return "\n".join(lines)


def positive(text: str) -> int:
    """A whole number of at least 1, as argparse takes a ``type``."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {number}")
    return number


def level_pair(text: str) -> tuple[str, str]:
    """``CHALLENGER:OPPONENT`` as two known levels, as argparse takes a ``type``."""
    challenger, colon, opponent = text.partition(":")
    if not colon:
        raise argparse.ArgumentTypeError(f"{text!r} is not CHALLENGER:OPPONENT, e.g. hard:medium")
    for level in (challenger, opponent):
        if level not in LEVELS:
            raise argparse.ArgumentTypeError(
                f"no level {level!r} in {text!r}; the levels are {', '.join(LEVELS)}"
            )
    return challenger, opponent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=positive, default=200, help="pairs of games per match")
    parser.add_argument(
        "--hard-pairs", type=positive, default=40, help="pairs of games in matches with hard"
    )
    parser.add_argument(
        "--workers",
        type=positive,
        default=2,
        help="processes, no more than the processors or the games",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--match",
        type=level_pair,
        action="append",
        help="CHALLENGER:OPPONENT, e.g. hard:medium (repeatable)",
    )
    args = parser.parse_args()
    # A match given twice is played once: its games, counted twice, would be the same deals
    # played alike, and its interval as narrow as twice the games would give.
    matches = list(dict.fromkeys(args.match or MATCHES))
    jobs = match_jobs(matches, args.pairs, args.hard_pairs, args.seed)
    # More processes than processors only take turns on them; more than games sit idle.
    workers = min(args.workers, os.cpu_count() or 1, len(jobs))
    started = time.perf_counter()
    with multiprocessing.Pool(workers) as pool:
        games = pool.map(play_game, jobs, chunksize=1)
    results = [
        summarise(
            challenger,
            opponent,
            [g for g in games if (g["challenger"], g["opponent"]) == (challenger, opponent)],
        )
        for challenger, opponent in matches
    ]
    elapsed = time.perf_counter() - started
    print(f"{len(games)} games in {elapsed:.0f} s, {workers} processes on {os.cpu_count()} cores")
    print(table(results))
    print(json.dumps({"matches": results}))


if __name__ == "__main__":
    main()
