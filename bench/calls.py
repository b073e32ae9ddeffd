"""Print the Python function calls one request costs, the service's next to the floor's.

Counts do not depend on the machine's load, as the rates of bench/http.py do.
Each app runs in this process on a throwaway PostgreSQL database, dropped at
the end: the service migrated (bench/scratch.py), the floor (bench/floor.py)
with its own two tables. Both deal the same games and play them with the same
random legal moves through the JSON API; cProfile counts the calls of the WSGI
call of each request measured (its body read to the end), after a warm-up:

- ``page``: the player's page, ``GET /play/<token>`` (HTML; the service only), the first
  read of the game as it stands (rendered),
- ``page again``: the same page read again, the game unchanged (kept, ``service/players/kept.py``),
- ``view``: ``GET /api/play/<token>``,
- ``poll``: the same with the ``If-None-Match`` of the last answer, a 304 (the service only),
- ``move``: ``POST /api/play/<token>``, one legal move.

    python bench/calls.py [--games 4] [--moves 12] [--top 0] [--postgres URL]

``--top N`` adds, for each request of the service, the N functions it calls most.
The last line printed is the whole result as JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import json
import logging
import os
import pstats
import random
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The repository, in place of bench/ (whose http.py would shadow the standard library's).
sys.path[0] = str(Path(__file__).resolve().parent.parent)

from werkzeug.test import EnvironBuilder  # noqa: E402

from bench import floor  # noqa: E402
from bench.random_play import pick_action  # noqa: E402
from bench.scratch import deal_games, scratch_app  # noqa: E402

SEATS = ("keeper", "shadow")
SECRET_KEY = "bench-" + "k" * 40
KINDS = ("page", "page again", "view", "poll", "move")


@dataclass
class Counts:
    """Function calls by request kind, summed, with the requests counted."""

    calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    requests: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    profiles: dict[str, pstats.Stats] = field(default_factory=dict)

    def per_request(self) -> dict[str, float]:
        """The mean calls of one request of each kind measured."""
        return {
            kind: self.calls[kind] / self.requests[kind] for kind in KINDS if kind in self.calls
        }


@dataclass
class Answer:
    """What a WSGI call answered."""

    status: int
    headers: dict[str, str]
    body: bytes


class Requester:
    """Calls a WSGI app in this process, counting the calls of the requests it is told to."""

    def __init__(self, app: Callable[..., Any], counts: Counts) -> None:
        self.app = app
        self.counts = counts
        self.measuring = False

    def request(self, kind: str, method: str, path: str, **options: Any) -> Answer:
        """One request; counted under ``kind`` while :attr:`measuring`."""
        environ = EnvironBuilder(
            path=path,
            method=method,
            base_url="http://bench.test",
            environ_base={"REMOTE_ADDR": "127.0.0.1"},
            **options,
        ).get_environ()
        started: list[Any] = []

        def start_response(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Any:
            started[:] = [status, headers]
            return lambda data: None

        profile = cProfile.Profile() if self.measuring else None
        if profile is not None:
            profile.enable()
        chunks = self.app(environ, start_response)
        try:
            body = b"".join(chunks)
        finally:
            if hasattr(chunks, "close"):
                chunks.close()
            if profile is not None:
                profile.disable()
        if profile is not None:
            stats = pstats.Stats(profile)
            self.counts.calls[kind] += stats.total_calls  # type: ignore[attr-defined]
            self.counts.requests[kind] += 1
            if kind in self.counts.profiles:
                self.counts.profiles[kind].add(stats)
            else:
                self.counts.profiles[kind] = stats
        status, headers = started
        return Answer(int(status.split()[0]), dict(headers), body)


def play(
    requester: Requester, seed: int, tokens: dict[str, str], moves: int, reads: tuple[str, ...]
) -> None:
    """Read each seat (every kind in ``reads``) and post one random legal move, ``moves`` times."""
    rng = random.Random(seed)
    for _ in range(moves):
        views = {}
        for seat in SEATS:
            path = f"/api/play/{tokens[seat]}"
            answer = requester.request("view", "GET", path)
            assert answer.status == 200, answer
            views[seat] = json.loads(answer.body)
            if "poll" in reads:
                etag = answer.headers["ETag"]
                polled = requester.request("poll", "GET", path, headers={"If-None-Match": etag})
                assert polled.status == 304, polled
            if "page" in reads:
                for kind in ("page", "page again"):
                    page = requester.request(
                        kind, "GET", f"/play/{tokens[seat]}", headers={"Accept": "text/html"}
                    )
                    assert page.status == 200, page
        acting = [seat for seat in SEATS if views[seat]["your_turn"]]
        if views["keeper"]["phase"] == "over" or not acting:
            return
        seat = rng.choice(acting)
        body = {"version": views[seat]["version"], **pick_action(views[seat], rng)}
        answer = requester.request("move", "POST", f"/api/play/{tokens[seat]}", json=body)
        assert answer.status == 200, answer


def measure(
    app: Callable[..., Any],
    deal: Callable[[list[int]], list[dict[str, str]]],
    args: argparse.Namespace,
    reads: tuple[str, ...],
) -> Counts:
    """Warm the app up on one game, then count the requests of ``args.games`` others."""
    counts = Counts()
    requester = Requester(app, counts)
    seeds = [7000 + n for n in range(args.games + 1)]
    games = deal(seeds)
    play(requester, seeds[0], games[0], args.moves, reads)
    requester.measuring = True
    for seed, tokens in zip(seeds[1:], games[1:], strict=True):
        play(requester, seed, tokens, args.moves, reads)
    return counts


@contextlib.contextmanager
def project(
    postgres: str,
) -> Iterator[tuple[Callable[..., Any], Callable[[list[int]], list[dict[str, str]]]]]:
    """The service on a migrated throwaway database, and how to deal games on it."""
    with scratch_app(postgres, SECRET_KEY=SECRET_KEY, LOG_LEVEL="WARNING") as (app, _):
        deal = functools.partial(deal_games, app)
        yield app, deal


@contextlib.contextmanager
def floor_app(
    postgres: str,
) -> Iterator[tuple[Callable[..., Any], Callable[[list[int]], list[dict[str, str]]]]]:
    """The floor on a throwaway database, and how to deal games on it."""
    with floor.throwaway_database(postgres, SECRET_KEY) as (url, deal):
        os.environ.update(FLOOR_DATABASE_URL=url, FLOOR_SECRET_KEY=SECRET_KEY)
        yield floor.create_app(), deal


def top(stats: pstats.Stats, requests: int, n: int) -> list[tuple[str, float]]:
    """The ``n`` functions called most, with their calls per request."""
    entries = stats.stats  # type: ignore[attr-defined]
    ranked = sorted(entries.items(), key=lambda item: item[1][1], reverse=True)[:n]
    return [
        (f"{Path(file).name}:{line}({func})", calls / requests)
        for (file, line, func), (_, calls, *_) in ranked
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4, help="games measured (after one warm-up)")
    parser.add_argument("--moves", type=int, default=12, help="moves played in each game")
    parser.add_argument("--top", type=int, default=0, help="list the functions called most")
    parser.add_argument("--postgres", default="postgresql://root@127.0.0.1:5432/postgres")
    args = parser.parse_args()
    logging.disable(logging.INFO)  # a log line per move would be counted too
    results = {}
    with project(args.postgres) as (app, deal):
        counts = measure(app, deal, args, ("view", "poll", "page"))
        results["project"] = counts.per_request()
        for kind, stats in counts.profiles.items() if args.top else ():
            print(f"project {kind}: the functions called most, calls per request")
            for name, calls in top(stats, counts.requests[kind], args.top):
                print(f"  {calls:8.1f} {name}")
    with floor_app(args.postgres) as (app, deal):
        results["floor"] = measure(app, deal, args, ("view",)).per_request()
    # Like bench/http.py, every read is compared with the floor's API view.
    print(f"{'request':10} {'project':>9} {'floor':>9} {'ratio':>6}")
    for kind in KINDS:
        mine = results["project"][kind]
        theirs = results["floor"]["move" if kind == "move" else "view"]
        shown = f"{results['floor'][kind]:9.0f}" if kind in results["floor"] else f"{'':9}"
        print(f"{kind:10} {mine:9.0f} {shown} {mine / theirs:6.2f}")
    print(json.dumps({"settings": vars(args), **results}))


if __name__ == "__main__":
    main()
