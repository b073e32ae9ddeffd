"""Print how many random full games per second the rules engine plays on one core.

Every step generates the acting seat's legal actions, applies one, and builds
the acting seat's view, as the service does for each move.

    python bench/engine.py [--games N] [--seed S]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from service.rules import apply, is_elixir, legal_actions, new_game, seat_view, to_act  # noqa: E402


def random_choice(
    rng: random.Random, hand: list[str], choose: int, needs_elixir: bool
) -> list[str]:
    """A random legal set of cards to give."""
    if needs_elixir:
        elixir = rng.choice([card for card in hand if is_elixir(card)])
        rest = [card for card in hand if card != elixir]
        return [elixir, *rng.sample(rest, choose - 1)]
    return rng.sample(hand, choose)


def play_game(seed: int) -> int:
    """Play one random game to the end; returns the number of actions taken."""
    rng = random.Random(seed)
    state = new_game(seed=seed)
    steps = 0
    while state["phase"] != "over":
        seat = rng.choice(to_act(state))
        legal = legal_actions(state, seat)
        if isinstance(legal, dict):
            hand = state["hands"][seat]
            action = {
                state["phase"]: random_choice(
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
    parser.add_argument("--games", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    started = time.perf_counter()
    steps = sum(play_game(args.seed + n) for n in range(args.games))
    elapsed = time.perf_counter() - started
    print(f"games:           {args.games}")
    print(f"actions:         {steps} ({steps / args.games:.1f} a game)")
    print(f"seconds:         {elapsed:.2f}")
    print(f"games/second:    {args.games / elapsed:,.0f}")
    print(f"actions/second:  {steps / elapsed:,.0f}")


if __name__ == "__main__":
    main()
