"""Print what a move costs through the service layer: queries and milliseconds per move.

Plays whole games with random legal moves through :func:`service.games.apply_move`,
one transaction per move as the API's POST makes it (the seat's view, the emails
the move causes, its events), and, apart from that, what the mail worker then
spends per email it writes and sends (to the local mailbox: no SMTP).

    python bench/move.py [--games N] [--seed S] [--postgres URL] [--profile]

``--profile`` adds the moves' top functions by cumulative time (cProfile).
"""

from __future__ import annotations

import argparse
import cProfile
import logging
import pstats
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from sqlalchemy import event

# The repository, in place of bench/ (whose http.py would shadow the standard library's).
sys.path[0] = str(Path(__file__).resolve().parent.parent)

from bench.random_play import pick_action  # noqa: E402
from bench.scratch import scratch_app  # noqa: E402
from service.games import Seating, apply_move, create_game  # noqa: E402
from service.mail.worker import drain  # noqa: E402
from service.models import Game, db  # noqa: E402
from service.perspective import player_view  # noqa: E402
from service.rules import SEATS  # noqa: E402
from service.unit_of_work import transaction  # noqa: E402


class Queries:
    """Counts the statements the engine runs."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, *args: Any) -> None:
        self.count += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--postgres", default="postgresql://root@127.0.0.1:5432/test")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    logging.disable(logging.INFO)  # a log line per move and per batch would drown the figures

    rng = random.Random(args.seed)
    timings: list[float] = []
    queries = Queries()
    profile = cProfile.Profile() if args.profile else None
    mail_seconds, mails, move_queries = 0.0, 0, 0
    with scratch_app(args.postgres, LOCAL_MAILBOX=True) as (app, _), app.app_context():
        event.listen(db.engine, "before_cursor_execute", queries)
        for n in range(args.games):
            with transaction():
                game_id = create_game(
                    Seating(f"k{n}@example.com", "Kim"), Seating(f"s{n}@example.com", "Sam")
                ).id
            drain()
            while True:
                game = db.session.get_one(Game, game_id)
                if game.status != "active":
                    break
                views = {seat: player_view(game.player(seat)) for seat in SEATS}
                seat = rng.choice([s for s in SEATS if views[s]["your_turn"]])
                action = pick_action(views[seat], rng)
                player_id, version = game.player(seat).id, game.version
                db.session.remove()
                before = queries.count
                started = time.perf_counter()
                if profile is not None:
                    profile.enable()
                with transaction():
                    apply_move(player_id, version, action)
                db.session.remove()
                if profile is not None:
                    profile.disable()
                timings.append(time.perf_counter() - started)
                move_queries += queries.count - before
                started = time.perf_counter()
                mails += drain()
                mail_seconds += time.perf_counter() - started
            db.session.remove()
    moves = len(timings)
    print(f"moves:                  {moves} in {args.games} games")
    print(
        f"ms per move:            mean {statistics.mean(timings) * 1000:.2f}, "
        f"median {statistics.median(timings) * 1000:.2f}"
    )
    print(f"queries per move:       {move_queries / moves:.1f}")
    print(f"worker ms per email:    {mail_seconds * 1000 / max(mails, 1):.2f} ({mails} emails)")
    if profile is not None:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
