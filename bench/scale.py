"""Print how the hot paths' times grow from 1,000 finished games to 1,000,000, as ratios.

Fills a temporary PostgreSQL database for each size: 10,000 games in play,
then that many finished games (states and event logs copied from games really
played by the engine, with COPY, as ``bench/dashboard.py`` does). Once all are
filled, it times on each database in turn, for ``--rounds`` rounds (the order
of the sizes reversed every other round, so that the machine's drift falls on
all of them alike): a player's page, the API view, a move through the API, the
deadline sweep (nothing due, and 20 games due), a player's home page, the
dashboard's overview, and the admin games list (first and last page). It
prints each path's median at each size (the median of the rounds' medians),
the ratio of the largest size to the smallest (target: at most 1.5), what each
database takes on disk, and a JSON line. The databases are dropped at the end,
unless ``--keep``.

    python bench/scale.py [--sizes 1000,100000,1000000] [--rounds 5] [--active N]
                          [--postgres URL] [--keep]

Each round's sweep ends some 860 games in play by timeout, so ``--active``
needs to be a few thousand per round.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import itertools
import json
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from sqlalchemy import select

# The repository's root, not bench/ (whose http.py would hide the standard library's).
HERE = Path(__file__).resolve().parent
sys.path[:] = [str(HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != HERE]

from bench.dashboard import (  # noqa: E402
    PASSWORD,
    REGULAR,
    TEMPLATES,
    Filler,
    median_ms,
    ok,
    played_games,
)
from bench.scratch import scratch_app  # noqa: E402
from service import deadlines  # noqa: E402
from service.admin.auth import create_admin  # noqa: E402
from service.admin.listing import PAGE_SIZE  # noqa: E402
from service.links import home_token, token_for  # noqa: E402
from service.models import Game, Player, db, utcnow  # noqa: E402
from service.unit_of_work import transaction  # noqa: E402

REQUESTS = 40
timed = functools.partial(median_ms, count=REQUESTS)
SIZES_TABLES = ("games", "players", "events", "outbox")


def sign_in(client: Any) -> None:
    page = client.get("/admin/login").get_data(as_text=True)
    token = page.split('name="csrf_token" type="hidden" value="', 1)[1].split('"', 1)[0]
    signed_in = client.post(
        "/admin/login", data={"csrf_token": token, "name": "bench", "password": PASSWORD}
    )
    assert signed_in.status_code == 303, signed_in.status_code


def active_tokens(app: Any, count: int) -> list[str]:
    """Links of both seats in the first ``count`` games in play."""
    with app.app_context():
        players = db.session.scalars(
            select(Player)
            .join(Game)
            .where(Game.status == "active")
            .order_by(Game.id, Player.id)
            .limit(2 * count)
        )
        return [token_for(player) for player in players]


def last_page_position(url: str) -> str:
    """The admin list's position just before its last page (newest first, by activity)."""
    with psycopg.connect(url) as conn:
        count = conn.execute("SELECT count(*) FROM games").fetchone()[0]
        row = conn.execute(
            "SELECT updated_at, id FROM games ORDER BY updated_at DESC, id DESC OFFSET %s LIMIT 1",
            (max(count - PAGE_SIZE - 1, 0),),
        ).fetchone()
    return f"{row[0].isoformat()}_{row[1]}"


def spread_deadlines(url: str) -> None:
    """Every game in play due in three to seven days: nothing for the sweep yet."""
    with psycopg.connect(url) as conn:
        conn.execute(
            "UPDATE games SET deadline = now() + interval '3 days' + (id % 96) * interval '1 hour',"
            " reminded = false WHERE status = 'active'"
        )


def make_due(url: str, count: int) -> None:
    """``count`` games in play whose deadline has just passed."""
    with psycopg.connect(url) as conn:
        conn.execute(
            "UPDATE games SET deadline = now() - interval '1 minute' WHERE id IN "
            "(SELECT id FROM games WHERE status = 'active' ORDER BY random() LIMIT %s)",
            (count,),
        )


def measure(app: Any, url: str, tokens: list[str], movers: list[str]) -> dict[str, float]:
    """Each path's median time, in milliseconds."""
    player = app.test_client()
    admin = app.test_client()
    sign_in(admin)
    with app.app_context():
        home = f"/me/{home_token(REGULAR)}"
    pages = itertools.cycle(tokens)
    last = last_page_position(url)
    move: dict[str, Any] = {}
    spare = iter(movers)

    def next_move() -> None:
        for token in spare:
            view = player.get(f"/api/play/{token}").get_json()
            if view["your_turn"] and view["status"] == "active":
                move["token"] = token
                move["body"] = {"version": view["version"], **_legal(view)}
                return
        raise SystemExit("ran out of games in play to move in: raise --active")

    def post_move() -> None:
        ok(player.post(f"/api/play/{move['token']}", json=move["body"]))

    def sweep() -> None:
        with app.app_context():
            deadlines.sweep(utcnow())
            db.session.remove()

    spread_deadlines(url)
    results = {
        "player page (HTML)": timed(lambda: ok(player.get(f"/play/{next(pages)}"))),
        "API view": timed(lambda: ok(player.get(f"/api/play/{next(pages)}"))),
        "a move through the API": timed(post_move, before=next_move),
        "deadline sweep, nothing due": timed(sweep),
        "deadline sweep, 20 games due": timed(sweep, before=lambda: make_due(url, 20)),
        "home page, 30 games": timed(lambda: ok(player.get(home))),
        "admin overview": timed(lambda: ok(admin.get("/admin/"))),
        "admin games list, first page": timed(lambda: ok(admin.get("/admin/games"))),
        "admin games list, last page": timed(
            lambda: ok(admin.get("/admin/games", query_string={"after": last}))
        ),
    }
    spread_deadlines(url)
    return results


def _legal(view: dict[str, Any]) -> dict[str, Any]:
    legal = view["legal"]
    if isinstance(legal, list):
        return dict(legal[0])
    hand = view["hand"]
    elixirs = [card for card in hand if card.endswith("S") and card[0] in "2345"]
    if legal["must_include_elixir"] and elixirs:
        first = elixirs[0]
        return {view["phase"]: [first, *[c for c in hand if c != first][: legal["choose"] - 1]]}
    return {view["phase"]: hand[: legal["choose"]]}


def disk(url: str) -> dict[str, int]:
    """Bytes on disk: the database and each big table with its indexes and TOAST."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        database = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        sizes = {"database": database[0]}
        for table in SIZES_TABLES:
            sizes[table] = conn.execute("SELECT pg_total_relation_size(%s)", (table,)).fetchone()[0]
    return sizes


@dataclass
class Stand:
    """One size's database, its app, and the links its measurements use."""

    size: int
    app: Any
    url: str
    tokens: list[str]
    movers: list[str]


def fill(stack: contextlib.ExitStack, args: argparse.Namespace, size: int, templates: Any) -> Stand:
    """A database of ``args.active`` games in play and ``size`` finished ones, with its app."""
    filling = time.perf_counter()
    app, url = stack.enter_context(
        scratch_app(args.postgres, keep=args.keep, MAIL_SERVER="127.0.0.1", LOG_LEVEL="WARNING")
    )
    with app.app_context(), transaction():
        create_admin("bench", PASSWORD)
    filler = Filler(url, templates)
    filler.addresses = max(20_000, (size + args.active) // 5)
    filler.fill(args.active, {"active": 1.0})
    tokens = active_tokens(app, 200)
    movers = active_tokens(app, args.active)[400:]
    random.Random(2).shuffle(movers)
    filler.fill(size, {"finished": 1.0})
    print(f"{size:,} finished games: filled in {time.perf_counter() - filling:.0f} s", flush=True)
    return Stand(size, app, url, tokens, movers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        default="1000,100000,1000000",
        help="finished games in each database, smallest first (default: %(default)s)",
    )
    parser.add_argument("--rounds", type=int, default=5, help="measurements of each database")
    parser.add_argument("--active", type=int, default=10_000)
    parser.add_argument("--postgres", default="postgresql://root@127.0.0.1:5432/postgres")
    parser.add_argument("--keep", action="store_true", help="keep the databases afterwards")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]

    started = time.perf_counter()
    templates = played_games(TEMPLATES)
    with contextlib.ExitStack() as stack:
        stands = [fill(stack, args, size, templates) for size in sizes]
        disks = {stand.size: disk(stand.url) for stand in stands}
        rounds: dict[int, list[dict[str, float]]] = {size: [] for size in sizes}
        for number in range(args.rounds):
            for stand in stands if number % 2 == 0 else reversed(stands):
                share = len(stand.movers) // args.rounds
                movers = stand.movers[number * share : (number + 1) * share]
                rounds[stand.size].append(measure(stand.app, stand.url, stand.tokens, movers))
            print(f"round {number + 1} of {args.rounds} measured", flush=True)
        results = {
            size: {path: statistics.median(r[path] for r in measured) for path in measured[0]}
            for size, measured in rounds.items()
        }
        report(args.active, results, disks)
    print(f"total run time: {time.perf_counter() - started:.0f} s")


def report(
    active: int, results: dict[int, dict[str, float]], disks: dict[int, dict[str, int]]
) -> None:
    """The table: each path's median at each size, and the largest against the smallest."""
    sizes = list(results)
    small, large = sizes[0], sizes[-1]
    print(f"with {active:,} games in play; median of {REQUESTS}, milliseconds")
    columns = "".join(f"{size:>12,}" for size in sizes)
    print(f"{'path':<32}{columns}   ratio {large:,}/{small:,} (target: at most 1.5)")
    ratios = {}
    for label in results[small]:
        ratios[label] = results[large][label] / results[small][label]
        times = "".join(f"{results[size][label]:>12.2f}" for size in sizes)
        print(f"{label:<32}{times}   {ratios[label]:.2f}")
    print("on disk, MB")
    for part in ("database", *SIZES_TABLES):
        print(f"{part:<32}" + "".join(f"{disks[size][part] / 1e6:>12.0f}" for size in sizes))
    per_game = 0.0
    if large != small:
        per_game = (disks[large]["database"] - disks[small]["database"]) / (large - small)
        print(f"per finished game: {per_game / 1000:.1f} kB")
    summary = {
        "active": active,
        "sizes": sizes,
        "median_ms": {label: [results[size][label] for size in sizes] for label in results[small]},
        "ratios": ratios,
        "bytes_per_finished_game": round(per_game),
    }
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
