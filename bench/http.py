"""Print the service's HTTP rates and latencies next to the floor's, as ratios.

The service runs under gunicorn (its own gunicorn.conf.py) and so does the
floor (bench/floor.py: Flask and psycopg, one JSON row per game), with the same
worker count, each on a throwaway PostgreSQL database that is dropped at the
end, also after an error or an interrupt. In each round both play the same
games to the end through the JSON API, from several client processes of
several threads each (read both seats, post one legal move, repeat), the first
app of a round alternating. Then each is read for a fixed time: the service's
player page (HTML), its API view and a poll of an unchanged game (the page's
live update, with the ``If-None-Match`` of the last answer), and the floor's
API view, which every read is compared with.

    python bench/http.py [--games 48] [--rounds 2] [--seconds 10] [--workers 2]
                         [--processes 2] [--threads 8] [--postgres URL]

The last line printed is the whole result as JSON.
"""

from __future__ import annotations

import sys
from pathlib import Path

# This file is named like the standard library's http package, so the repository's
# root, not bench/, is where imports look.
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != HERE]

import argparse  # noqa: E402
import contextlib  # noqa: E402
import http.client  # noqa: E402
import json  # noqa: E402
import multiprocessing  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any  # noqa: E402

from bench import floor  # noqa: E402
from bench.random_play import pick_action  # noqa: E402
from bench.scratch import deal_games, scratch_app  # noqa: E402

SEATS = ("keeper", "shadow")
SECRET_KEY = "bench-" + "k" * 40
# Reads go to games in play, each advanced this many moves first.
READ_GAMES = 16
READ_MOVES = 12
# Give up a game after this many failed requests.
MAX_FAILURES = 5

# --- the client (runs in the client processes) --------------------------------


@dataclass
class Samples:
    """Latencies (seconds) and errors by request kind, and the moves applied."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    moves: int = 0
    not_modified: int = 0
    problems: list[str] = field(default_factory=list)

    def add(self, other: Samples) -> None:
        """Fold another process's or thread's samples into these."""
        for kind, values in other.latencies.items():
            self.latencies[kind].extend(values)
        for kind, count in other.errors.items():
            self.errors[kind] += count
        self.moves += other.moves
        self.not_modified += other.not_modified
        self.problems.extend(other.problems[: 5 - len(self.problems)])


class Client:
    """One thread's HTTP/1.1 connection to one app (reopened after each ``close``)."""

    def __init__(self, base: str, samples: Samples) -> None:
        host, port = base.removeprefix("http://").split(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=60)
        self.samples = samples

    def request(
        self, kind: str, method: str, path: str, body: bytes | None = None, **headers: str
    ) -> tuple[int, http.client.HTTPResponse | None, bytes]:
        """Send one request, record its latency under ``kind``; status 0 for no answer."""
        started = time.perf_counter()
        try:
            self.connection.request(method, path, body=body, headers=headers)
            response = self.connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as exc:
            self.connection.close()
            self._failed(kind, f"{method} {kind}: {exc!r}")
            return 0, None, b""
        self.samples.latencies[kind].append(time.perf_counter() - started)
        if response.status not in (200, 304):
            self._failed(kind, f"{method} {kind}: {response.status} {data[:200]!r}")
        return response.status, response, data

    def _failed(self, kind: str, problem: str) -> None:
        self.samples.errors[kind] += 1
        if len(self.samples.problems) < 5:
            self.samples.problems.append(problem)


def play(client: Client, seed: int, tokens: dict[str, str], limit: int | None) -> None:
    """Play one game through the API (to the end, or ``limit`` moves), the same way each time."""
    rng = random.Random(seed)
    failures = moves = 0
    while (limit is None or moves < limit) and failures < MAX_FAILURES:
        views = {}
        for seat in SEATS:
            status, _, data = client.request("get", "GET", f"/api/play/{tokens[seat]}")
            if status != 200:
                break
            views[seat] = json.loads(data)
        if len(views) < 2:
            failures += 1
            continue
        acting = [seat for seat in SEATS if views[seat]["your_turn"]]
        if views["keeper"]["phase"] == "over" or not acting:
            return
        seat = rng.choice(acting)
        body = {"version": views[seat]["version"], **pick_action(views[seat], rng)}
        status, _, _ = client.request(
            "post",
            "POST",
            f"/api/play/{tokens[seat]}",
            json.dumps(body).encode(),
            **{"Content-Type": "application/json"},
        )
        if status == 200:
            moves += 1
            client.samples.moves += 1
        else:
            failures += 1


def read(client: Client, kind: str, tokens: dict[str, str], until: float, offset: int) -> None:
    """Read ``kind`` (page, view or poll) of the tokens in turn until ``until``.

    ``tokens`` maps each token to the ETag its view last had (or ""): a poll sends it.
    """
    links = list(tokens)
    n = offset
    while time.perf_counter() < until:
        token = links[n % len(links)]
        n += 1
        if kind == "page":
            client.request("page", "GET", f"/play/{token}", Accept="text/html")
        elif kind == "view":
            client.request("view", "GET", f"/api/play/{token}")
        else:
            headers = {"If-None-Match": tokens[token]} if tokens[token] else {}
            status, _, _ = client.request("poll", "GET", f"/api/play/{token}", **headers)
            client.samples.not_modified += status == 304


def etags(base: str, tokens: list[str]) -> dict[str, str]:
    """Each token with the ETag of its view ("" for none), as the page's script holds it."""
    client = Client(base, Samples())
    found = {}
    for token in tokens:
        _, response, _ = client.request("prime", "GET", f"/api/play/{token}")
        found[token] = (response.getheader("ETag") if response else None) or ""
    return found


def client_process(task: dict[str, Any]) -> Samples:
    """One client process: ``task["threads"]`` threads playing games or reading pages."""
    total = Samples()
    lock = threading.Lock()

    def thread(work: Callable[[Client], None]) -> None:
        samples = Samples()
        work(Client(task["base"], samples))
        with lock:
            total.add(samples)

    jobs: list[Callable[[Client], None]]
    if task["kind"] == "play":
        games = task["games"]
        queue = iter(games)
        queue_lock = threading.Lock()

        def player(client: Client) -> None:
            while True:
                with queue_lock:
                    game = next(queue, None)
                if game is None:
                    return
                play(client, game["seed"], game["tokens"], task.get("limit"))

        jobs = [player] * task["threads"]
    else:
        until = time.perf_counter() + task["seconds"]
        jobs = [
            lambda client, n=n: read(client, task["kind"], task["tokens"], until, n)
            for n in range(task["threads"])
        ]
    with ThreadPoolExecutor(len(jobs)) as pool:
        for future in [pool.submit(thread, job) for job in jobs]:
            future.result()
    return total


# --- the servers ---------------------------------------------------------------


@dataclass
class App:
    """One app under gunicorn: where it listens and the games dealt on it."""

    name: str
    base: str
    deal: Callable[[list[int]], list[dict[str, Any]]]
    reads: tuple[str, ...]
    played: Samples = field(default_factory=Samples)
    play_seconds: float = 0.0
    read: dict[str, Samples] = field(default_factory=dict)
    read_seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))


def free_port() -> int:
    """A TCP port nothing listens on at the moment."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def gunicorn(app: str, workers: int, env: dict[str, str], log: Path) -> Iterator[str]:
    """Serve ``app`` under gunicorn from the repository; yields its base URL; stops it after."""
    port = free_port()
    command = [
        sys.executable, "-m", "gunicorn", "--workers", str(workers),
        "--bind", f"127.0.0.1:{port}", app,
    ]  # fmt: skip
    if app.startswith("service"):
        command[3:3] = ["--config", "gunicorn.conf.py"]
    else:
        command[3:3] = ["--access-logfile", "-"]  # the service logs each request too
    with log.open("w") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{app} did not start:\n{log.read_text()[-2000:]}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{app} did not listen within 60 s")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def project_app(postgres: str, workers: int, logs: Path) -> Iterator[App]:
    """The service on a migrated throwaway database, under gunicorn."""
    with scratch_app(postgres, SECRET_KEY=SECRET_KEY) as (flask_app, url):

        def deal(seeds: list[int]) -> list[dict[str, Any]]:
            return [
                {"seed": seed, "tokens": tokens}
                for seed, tokens in zip(seeds, deal_games(flask_app, seeds), strict=True)
            ]

        env = {
            "SPLITMIND_ENV": "development",
            "DATABASE_URL": url,
            "SECRET_KEY": SECRET_KEY,
            "LOG_LEVEL": "WARNING",
            "PROMETHEUS_MULTIPROC_DIR": tempfile.mkdtemp(prefix="metrics-", dir=logs),
        }
        with gunicorn("service:create_app()", workers, env, logs / "project.log") as base:
            yield App("project", base, deal, ("page", "view", "poll"))


@contextlib.contextmanager
def floor_app(postgres: str, workers: int, logs: Path) -> Iterator[App]:
    """The floor on a throwaway database of its own, under gunicorn."""
    with floor.throwaway_database(postgres, SECRET_KEY) as (url, deal_tokens):

        def deal(seeds: list[int]) -> list[dict[str, Any]]:
            return [
                {"seed": seed, "tokens": tokens}
                for seed, tokens in zip(seeds, deal_tokens(seeds), strict=True)
            ]

        env = {"FLOOR_DATABASE_URL": url, "FLOOR_SECRET_KEY": SECRET_KEY}
        with gunicorn("bench.floor:create_app()", workers, env, logs / "floor.log") as base:
            yield App("floor", base, deal, ("view",))


# --- the run -------------------------------------------------------------------


def run_clients(pool: ProcessPoolExecutor, tasks: list[dict[str, Any]]) -> tuple[Samples, float]:
    """Run one task per client process at once; their samples and the wall time."""
    started = time.perf_counter()
    total = Samples()
    for samples in pool.map(client_process, tasks):
        total.add(samples)
    return total, time.perf_counter() - started


def split(items: list[Any], parts: int) -> list[list[Any]]:
    """``items`` dealt into ``parts`` lists in turn."""
    return [items[n::parts] for n in range(parts)]


def measure(args: argparse.Namespace, apps: list[App], pool: ProcessPoolExecutor) -> None:
    """Play the rounds, then read each kind of page, alternating which app goes first."""
    play_task = {"kind": "play", "threads": args.threads}
    for round_number in range(args.rounds):
        order = apps if round_number % 2 == 0 else apps[::-1]
        seeds = [1000 * (round_number + 1) + n for n in range(args.games)]
        dealt = {app.name: app.deal(seeds) for app in apps}
        for app in order:
            tasks = [
                {**play_task, "base": app.base, "games": part}
                for part in split(dealt[app.name], args.processes)
            ]
            samples, seconds = run_clients(pool, tasks)
            app.played.add(samples)
            app.play_seconds += seconds
            print(f"round {round_number + 1}: {app.name} played {samples.moves} moves "
                  f"in {seconds:.1f} s", file=sys.stderr)  # fmt: skip

    readers = {}
    for app in apps:
        games = app.deal([10**6 + n for n in range(READ_GAMES)])
        tasks = [
            {**play_task, "base": app.base, "games": part, "limit": READ_MOVES}
            for part in split(games, args.processes)
        ]
        run_clients(pool, tasks)
        tokens = [game["tokens"][seat] for game in games for seat in SEATS]
        readers[app.name] = etags(app.base, tokens)
    threads = max(1, args.read_threads // args.processes)
    for round_number in range(args.rounds):
        order = apps if round_number % 2 == 0 else apps[::-1]
        for app in order:
            for kind in app.reads:
                task = {"kind": kind, "base": app.base, "threads": threads}
                tasks = [
                    {**task, "tokens": readers[app.name], "seconds": args.seconds}
                    for _ in range(args.processes)
                ]
                samples, seconds = run_clients(pool, tasks)
                app.read.setdefault(kind, Samples()).add(samples)
                app.read_seconds[kind] += seconds


def percentile(values: list[float], share: float) -> float:
    """The ``share`` quantile of ``values`` (nearest rank), in milliseconds."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def figures(app: App) -> dict[str, Any]:
    """An app's rates, latencies and errors."""
    played = app.played
    requests = sum(len(values) for values in played.latencies.values())
    result: dict[str, Any] = {
        "moves_per_s": played.moves / app.play_seconds,
        "requests_per_s": requests / app.play_seconds,
        "errors": sum(played.errors.values()),
        "kinds": {},
    }
    for kind in ("get", "post"):
        values = played.latencies[kind]
        result["kinds"][kind] = {
            "count": len(values),
            "per_s": len(values) / app.play_seconds,
            "p50_ms": percentile(values, 0.5),
            "p99_ms": percentile(values, 0.99),
            "errors": played.errors[kind],
        }
    for kind, samples in app.read.items():
        values = samples.latencies[kind]
        result["kinds"][kind] = {
            "count": len(values),
            "per_s": len(values) / app.read_seconds[kind],
            "p50_ms": percentile(values, 0.5),
            "p99_ms": percentile(values, 0.99),
            "errors": samples.errors[kind],
        }
        result["errors"] += samples.errors[kind]
        if kind == "poll":
            result["kinds"][kind]["not_modified"] = samples.not_modified
    return result


def ratios(project: dict[str, Any], floor_figures: dict[str, Any]) -> dict[str, float]:
    """The service's figures over the floor's; reads are over the floor's API view."""
    kinds, floor_kinds = project["kinds"], floor_figures["kinds"]
    floor_read = floor_kinds["view"]["per_s"]
    return {
        "moves_per_s": project["moves_per_s"] / floor_figures["moves_per_s"],
        "requests_per_s": project["requests_per_s"] / floor_figures["requests_per_s"],
        "get_p99": kinds["get"]["p99_ms"] / floor_kinds["get"]["p99_ms"],
        "post_p99": kinds["post"]["p99_ms"] / floor_kinds["post"]["p99_ms"],
        "page_per_s": kinds["page"]["per_s"] / floor_read,
        "view_per_s": kinds["view"]["per_s"] / floor_read,
        "poll_per_s": kinds["poll"]["per_s"] / floor_read,
        "poll_p50": kinds["poll"]["p50_ms"] / floor_kinds["view"]["p50_ms"],
    }


def targets(ratio: dict[str, float], errors: int) -> dict[str, bool]:
    """Which of the targets this run meets."""
    return {
        "moves_per_s >= 0.7": ratio["moves_per_s"] >= 0.7,
        "get_p99 <= 2": ratio["get_p99"] <= 2,
        "post_p99 <= 2": ratio["post_p99"] <= 2,
        "no errors": errors == 0,
        "page_per_s >= 0.5": ratio["page_per_s"] >= 0.5,
        "view_per_s >= 0.7": ratio["view_per_s"] >= 0.7,
        "poll_per_s >= 1": ratio["poll_per_s"] >= 1,
    }


def report(args: argparse.Namespace, apps: list[App]) -> None:
    """The table, then the JSON line."""
    results = {app.name: figures(app) for app in apps}
    print(f"{'app':8} {'request':8} {'count':>7} {'per s':>8} {'p50 ms':>8} "
          f"{'p99 ms':>8} {'errors':>6}")  # fmt: skip
    for name, result in results.items():
        for kind, row in result["kinds"].items():
            print(f"{name:8} {kind:8} {row['count']:7d} {row['per_s']:8.1f} "
                  f"{row['p50_ms']:8.1f} {row['p99_ms']:8.1f} {row['errors']:6d}")  # fmt: skip
        print(f"{name:8} {'moves':8} {'':7} {result['moves_per_s']:8.1f}")
    ratio = ratios(results["project"], results["floor"])
    errors = results["project"]["errors"]
    met = targets(ratio, errors)
    print("project/floor: " + ", ".join(f"{name} {value:.2f}" for name, value in ratio.items()))
    verdicts = (f"{name} {'met' if ok else 'MISSED'}" for name, ok in met.items())
    print("targets: " + ", ".join(verdicts))
    for app in apps:
        problems = app.played.problems + [p for s in app.read.values() for p in s.problems]
        for problem in problems[:5]:
            print(f"{app.name} error: {problem}", file=sys.stderr)
    settings = {
        key: getattr(args, key)
        for key in ("games", "rounds", "seconds", "workers", "processes", "threads", "read_threads")
    }
    print(json.dumps({"settings": settings, **results, "ratios": ratio, "targets": met}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=48, help="games each app plays a round")
    parser.add_argument("--rounds", type=int, default=2, help="rounds; the first app alternates")
    parser.add_argument("--seconds", type=float, default=10, help="each read, each round")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers of each app")
    parser.add_argument("--processes", type=int, default=2, help="client processes")
    parser.add_argument("--threads", type=int, default=8, help="threads per client process")
    parser.add_argument("--read-threads", type=int, default=8, help="reading threads in all")
    parser.add_argument("--postgres", default="postgresql://root@127.0.0.1:5432/postgres")
    args = parser.parse_args()
    # A terminated run cleans up as an interrupted one does: servers stopped, databases dropped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with contextlib.ExitStack() as stack:
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-http-")))
        apps = [
            stack.enter_context(project_app(args.postgres, args.workers, logs)),
            stack.enter_context(floor_app(args.postgres, args.workers, logs)),
        ]
        context = multiprocessing.get_context("spawn")
        pool = stack.enter_context(ProcessPoolExecutor(args.processes, mp_context=context))
        measure(args, apps, pool)
        report(args, apps)


if __name__ == "__main__":
    main()
