"""Print how many random full games per second the rules engine plays on one core.

Every step generates the acting seat's legal actions, applies one, and builds
the acting seat's view, as the service does for each move.

    python bench/engine.py [--games N] [--runs R] [--seed S]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

# The repository's root, not bench/ (whose http.py would hide the standard library's).
HERE = Path(__file__).resolve().parent
sys.path[:] = [str(HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != HERE]

from bench.random_play import random_cards  # noqa: E402
from service.rules import apply, legal_actions, new_game, seat_view, to_act  # noqa: E402


def play_game(seed: int) -> int:
    """Play one random game to the end; returns the number of actions taken."""
    rng = random.Random(seed)
    state = new_game(seed=seed)
    steps = 0
    while state["phase"] != "over":
        acting = to_act(state)
        seat = rng.choice(acting)
        legal = legal_actions(state, seat, acting)
        if isinstance(legal, dict):
            hand = state["hands"][seat]
            action = {
                state["phase"]: random_cards(
                    rng, hand, legal["choose"], legal["must_include_elixir"]
                )
            }
        else:
            action = rng.choice(legal)
        state = apply(state, seat, action)
        seat_view(state, seat)
        steps += 1
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000, help="games in each run")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rates = []
    steps = 0
    for run in range(args.runs):
        first = args.seed + run * args.games
        started = time.perf_counter()
        steps = sum(play_game(first + n) for n in range(args.games))
        rates.append(args.games / (time.perf_counter() - started))
    print(f"games per run:   {args.games} ({steps / args.games:.1f} actions a game)")
    print(f"runs:            {', '.join(f'{rate:,.0f}' for rate in rates)} games/second")
    print(f"games/second:    {statistics.median(rates):,.0f} (median of {args.runs} runs)")


if __name__ == "__main__":
    main()
