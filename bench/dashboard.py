"""Print the admin dashboard's response times with 100,000 games next to 1,000, as ratios.

Fills a temporary PostgreSQL database with games whose states and event logs
come from a few hundred games really played by the engine, replicated with
other players, times and outcomes: finished (some by forfeit), in play,
waiting, timed out, abandoned and cancelled. It measures each page through the
Flask test client, signed in, with 1,000 games, then fills the rest and
measures again. The database is dropped at the end.

    python bench/dashboard.py [--games N] [--small N] [--postgres URL]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg

# The repository's root, not bench/ (whose http.py would hide the standard library's).
HERE = Path(__file__).resolve().parent
sys.path[:] = [str(HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != HERE]

from bench.random_play import random_cards  # noqa: E402
from bench.scratch import scratch_app  # noqa: E402
from service.admin import cache, stats  # noqa: E402
from service.admin.auth import create_admin  # noqa: E402
from service.models import db  # noqa: E402
from service.rules import apply, legal_actions, new_game, other, to_act  # noqa: E402
from service.unit_of_work import transaction  # noqa: E402

TEMPLATES = 400
REQUESTS = 25
CHUNK = 5_000
NOW = datetime.now(UTC)
# What becomes of a game, with its share of all games.
FATES = {
    "finished": 0.66,
    "forfeit": 0.02,
    "active": 0.18,
    "waiting": 0.02,
    "timed_out": 0.06,
    "abandoned": 0.02,
    "cancelled": 0.04,
}
PASSWORD = "benchmark password"
# One player sits in every 33rd of the first 1,000 games: the same 30 games at both sizes.
REGULAR = "regular@example.com"


@dataclass(frozen=True)
class Template:
    """A game played by the engine: its states after each action, ready to copy."""

    actions: list[tuple[str, str]]  # (seat, action as JSON)
    states: list[str]  # the state after 0, 1, ... actions, as JSON
    to_act: list[str]  # who owed a move after 0, 1, ... actions


def played_games(count: int) -> list[Template]:
    """Random games played to the end by the engine, with every intermediate state."""
    templates = []
    for seed in range(count):
        rng = random.Random(seed)
        state = new_game(seed=seed)
        actions, states, owing = [], [json.dumps(state)], [_owing(state)]
        while state["phase"] != "over":
            seat = rng.choice(to_act(state))
            legal = legal_actions(state, seat)
            if isinstance(legal, dict):
                hand = state["hands"][seat]
                cards = random_cards(rng, hand, legal["choose"], legal["must_include_elixir"])
                action = {state["phase"]: cards}
            else:
                action = rng.choice(legal)
            state = apply(state, seat, action)
            actions.append((seat, json.dumps(action)))
            states.append(json.dumps(state))
            owing.append(_owing(state))
        templates.append(Template(actions, states, owing))
    return templates


def _owing(state: dict[str, Any]) -> str:
    acting = to_act(state)
    return "both" if len(acting) == 2 else (acting[0] if acting else "")


class Filler:
    """Writes games, players and events with COPY, numbering rows on from the last fill."""

    def __init__(self, url: str, templates: list[Template]) -> None:
        self.url = url
        self.templates = templates
        self.games = self.players = self.events = 0
        self.rng = random.Random(7)
        self.fates = FATES
        self.addresses = 20_000  # players' addresses, each in about games / 10,000 games

    def fill(self, count: int, fates: dict[str, float] | None = None) -> None:
        """Add ``count`` games with their players and event logs (``fates``: what becomes of
        them, with their shares; :data:`FATES` unless given)."""
        self.fates = fates or FATES
        with psycopg.connect(self.url) as conn:
            conn.execute("SET synchronous_commit = off")
            # Go on from the rows there: requests between two fills add events too.
            self.games, self.players, self.events = (
                conn.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0]
                for table in ("games", "players", "events")
            )
            with conn.cursor() as cur:
                for start in range(self.games, self.games + count, CHUNK):
                    end = min(start + CHUNK, self.games + count)
                    rows = [self._game(game_id) for game_id in range(start + 1, end + 1)]
                    self._copy(cur, "games", GAME_COLUMNS, (row[0] for row in rows))
                    self._copy(cur, "players", PLAYER_COLUMNS, (p for row in rows for p in row[1]))
                    self._copy(cur, "events", EVENT_COLUMNS, (e for row in rows for e in row[2]))
            for table in ("games", "players", "events"):
                conn.execute(f"SELECT setval('{table}_id_seq', (SELECT max(id) FROM {table}))")
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")
        self.games += count

    @staticmethod
    def _copy(cur: psycopg.Cursor, table: str, columns: str, rows: Iterator[tuple]) -> None:
        with cur.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    def _game(self, game_id: int) -> tuple[tuple, list[tuple], list[tuple]]:
        rng = self.rng
        template = self.templates[game_id % len(self.templates)]
        fate = rng.choices(list(self.fates), weights=list(self.fates.values()))[0]
        moves = len(template.actions)
        if fate == "finished":
            done = moves
        elif fate == "waiting":
            done = 0
        else:
            done = rng.randrange(1, moves)
        created = NOW - timedelta(days=rng.uniform(0, 365), seconds=game_id % 3600)
        # Players answer within minutes to days: a long tail.
        gaps = [timedelta(minutes=rng.lognormvariate(4.5, 1.5)) for _ in range(done)]
        moments = [created]
        for gap in gaps:
            moments.append(moments[-1] + gap)
        last = moments[-1]
        state = template.states[done]
        owing = template.to_act[done]
        status, winner, deadline, finished_at = "active", None, None, None
        events = [(game_id, "created", None, None, 0, None, "seed 0", created)]
        if fate == "finished":
            status, winner, finished_at = "finished", json.loads(state)["winner"], last
        elif fate == "active":
            deadline = last + timedelta(days=7)
        elif fate == "waiting":
            status = "waiting"
        else:
            finished_at = last + timedelta(days=7 if fate in ("timed_out", "abandoned") else 1)
            status = "finished" if fate == "forfeit" else fate
            if fate == "timed_out":
                owing = owing if owing in ("keeper", "shadow") else "keeper"
                winner = other(owing)
            elif fate == "forfeit":
                winner = rng.choice(("keeper", "shadow"))
        if status != "active":
            owing = ""
        event_id = self.events
        rows = [(event_id + n + 1, *event) for n, event in enumerate(events)]
        for n, (seat, action) in enumerate(template.actions[:done]):
            rows.append(
                (event_id + len(rows) + 1, game_id, "move", seat, action, n + 1, None, None,
                 moments[n + 1])
            )  # fmt: skip
        if finished_at is not None and fate != "finished":
            kind = {"forfeit": "forfeit", "cancelled": "admin"}.get(fate, "timeout")
            rows.append(
                (event_id + len(rows) + 1, game_id, kind, None, None, done, "bench", fate,
                 finished_at)
            )  # fmt: skip
        self.events += len(rows)
        player = rng.randrange(self.addresses)
        opponent = (player + 1 + rng.randrange(self.addresses - 1)) % self.addresses
        emails = [f"p{player}@example.com", f"p{opponent}@example.com"]
        if game_id <= 1_000 and game_id % 33 == 0:
            emails[0] = REGULAR
        players = []
        for offset, (seat, email) in enumerate(zip(("keeper", "shadow"), emails, strict=True)):
            self.players += 1
            players.append(
                (self.players, game_id, seat, email, email.split("@")[0], uuid.uuid4().hex,
                 True, 0, created + timedelta(seconds=offset))
            )  # fmt: skip
        updated = finished_at or last
        started = None if status == "waiting" else created
        game = (
            game_id, status, state, done, "standard", owing, 7, deadline, False, winner,
            created, updated, started, finished_at,
        )  # fmt: skip
        return game, players, rows


GAME_COLUMNS = (
    "id, status, state, version, look, to_act, days_per_move, deadline, reminded, winner, "
    "created_at, updated_at, started_at, finished_at"
)
PLAYER_COLUMNS = "id, game_id, seat, email, name, link_key, notify, history_mark, created_at"
EVENT_COLUMNS = "id, game_id, kind, seat, action, version, actor, note, created_at"


def median_ms(
    request: Callable[[], Any], before: Callable[[], None] = lambda: None, count: int = REQUESTS
) -> float:
    """The median time of ``request``, in milliseconds, after a few warm-up calls."""
    for _ in range(3):
        before()
        request()
    times = []
    for _ in range(count):
        before()
        started = time.perf_counter()
        request()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def ok(response: Any) -> Any:
    """The response, which must be a 200."""
    assert response.status_code == 200, response.status_code
    return response


def measure(app: Any, client: Any, url: str) -> dict[str, float]:
    """Each page's median time with 1,000 or 100,000 games in the database."""
    with psycopg.connect(url) as conn:
        count = conn.execute("SELECT count(*) FROM games").fetchone()[0]
        middle = conn.execute(
            "SELECT updated_at, id FROM games ORDER BY updated_at DESC, id DESC OFFSET %s LIMIT 1",
            (count // 2,),
        ).fetchone()
    # The list's position format: the sort key, then the id.
    deep = f"{middle[0].astimezone(UTC).isoformat()}_{middle[1]}"

    def forget() -> None:
        with app.app_context():
            cache.forget()

    def get(path: str, **query: str) -> Callable[[], Any]:
        return lambda: ok(client.get(path, query_string=query))

    return {
        "overview": median_ms(get("/admin/")),
        "games, first page": median_ms(get("/admin/games")),
        "games, status finished": median_ms(get("/admin/games", status="finished")),
        "games, Keeper owes a move": median_ms(get("/admin/games", to_act="keeper")),
        "games, one player's 30 games": median_ms(get("/admin/games", email=REGULAR)),
        "games, search part of an address": median_ms(get("/admin/games", q="p123@")),
        "games, idle for 30 days, oldest first": median_ms(
            get("/admin/games", idle="30", sort="oldest")
        ),
        "games, by deadline": median_ms(get("/admin/games", sort="deadline")),
        "games, deep page (middle)": median_ms(get("/admin/games", after=deep)),
        "games, first page, counts not kept": median_ms(get("/admin/games"), before=forget),
        "audit trail": median_ms(get("/admin/audit")),
        "statistics": median_ms(get("/admin/stats")),
        "statistics, computed afresh": median_ms(get("/admin/stats"), before=forget),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--postgres", default="postgresql://root@127.0.0.1:5432/postgres")
    args = parser.parse_args()

    started = time.perf_counter()
    templates = played_games(TEMPLATES)
    with scratch_app(args.postgres, MAIL_SERVER="127.0.0.1") as (app, url):
        with app.app_context(), transaction():
            create_admin("bench", PASSWORD)
        client = app.test_client()
        page = client.get("/admin/login").get_data(as_text=True)
        token = page.split('name="csrf_token" type="hidden" value="', 1)[1].split('"', 1)[0]
        signed_in = client.post(
            "/admin/login", data={"csrf_token": token, "name": "bench", "password": PASSWORD}
        )
        assert signed_in.status_code == 303, signed_in.status_code

        filler = Filler(url, templates)
        results = {}
        for size in (args.small, args.games):
            filling = time.perf_counter()
            filler.fill(size - filler.games)
            filled = time.perf_counter() - filling
            with app.app_context():
                summarizing = time.perf_counter()
                summarized, _ = stats.summarize_finished()
                summary = time.perf_counter() - summarizing
                db.session.remove()
            print(
                f"{size:,} games: filled in {filled:.0f} s; playtest figures of "
                f"{summarized:,} finished games derived in {summary:.1f} s",
                file=sys.stderr,
            )
            results[size] = measure(app, client, url)

    small, large = results[args.small], results[args.games]
    print(f"median of {REQUESTS} requests, milliseconds")
    print(f"{'page':<38}{args.small:>10,}{args.games:>10,}   ratio (target: at most 2)")
    for label, base in small.items():
        ratio = large[label] / base
        print(f"{label:<38}{base:>10.1f}{large[label]:>10.1f}   {ratio:.2f}")
    print(f"total run time: {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
