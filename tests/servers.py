"""Run the real ``flask`` command and gunicorn (with the project's gunicorn.conf.py)."""

from __future__ import annotations

import http.client
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from service.config import SETTINGS

ROOT = Path(__file__).resolve().parents[1]
FLASK = [sys.executable, "-m", "flask", "--app", "service"]
LISTENING = re.compile(r"Listening at: http://127\.0\.0\.1:(\d+)")
START_TIMEOUT = 30.0
# Settings a production service starts with (no mail is sent, no database reached at start).
PRODUCTION = {
    "SPLITMIND_ENV": "production",
    "DATABASE_URL": "postgresql://splitmind@db.example.org/splitmind",
    "SECRET_KEY": "k" * 40,
    "BASE_URL": "https://play.example.org",
    "MAIL_SERVER": "smtp.example.org",
    "MAIL_DEFAULT_SENDER": "Split Mind <play@example.org>",
}


def clean_env(**settings: str) -> dict[str, str]:
    """The environment without the service's settings, plus ``settings``."""
    env = {name: value for name, value in os.environ.items() if name not in SETTINGS}
    env.update(settings)
    return env


def gunicorn_env(tmp_path: Path, **settings: str) -> dict[str, str]:
    """Development settings on a SQLite file in ``tmp_path``, then ``settings``."""
    metrics = tmp_path / "metrics"
    metrics.mkdir(exist_ok=True)
    defaults = {
        "SPLITMIND_ENV": "development",
        "SECRET_KEY": "test-secret-key",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'web.sqlite'}",
        "PROMETHEUS_MULTIPROC_DIR": str(metrics),
    }
    return clean_env(**{**defaults, **settings})


def run_flask(*args: str, env: dict[str, str], cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """``flask --app service ARGS`` in a process of its own."""
    return subprocess.run(
        [*FLASK, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60
    )


def gunicorn_command(app: str, workers: int | None = 1) -> list[str]:
    """gunicorn with the project's configuration on a port the system picks, with one
    worker unless told (``None``: as many as gunicorn.conf.py or GUNICORN_CMD_ARGS say)."""
    return [
        sys.executable,
        "-m",
        "gunicorn",
        "--config",
        str(ROOT / "gunicorn.conf.py"),
        "--bind",
        "127.0.0.1:0",
        *(["--workers", str(workers)] if workers else []),
        app,
    ]


def gunicorn_refusal(env: dict[str, str]) -> list[str]:
    """The lines gunicorn writes on standard error when the service's settings in ``env``
    stop it at start: with exit status 1, and no traceback."""
    result = subprocess.run(
        gunicorn_command("service:create_app()"),
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    return result.stderr.splitlines()


@dataclass
class Server:
    """A running gunicorn: its port and what it wrote."""

    port: int
    out: Path
    err: Path

    def stdout(self) -> str:
        return self.out.read_text()

    def logged(self, logger: str, count: int = 1, seconds: float = 30) -> list[str]:
        """Its text log lines of ``logger`` once there are ``count``: a worker writes a
        request's access line after the response, which the client may read first."""
        deadline = time.monotonic() + seconds
        while True:
            lines = [line for line in self.stderr().splitlines() if f" {logger}: " in line]
            if len(lines) >= count or time.monotonic() > deadline:
                return lines
            time.sleep(0.05)

    def stderr(self) -> str:
        return self.err.read_text()


@contextmanager
def run_gunicorn(app: str, env: dict[str, str], folder: Path, workers: int = 1) -> Iterator[Server]:
    """Serve ``app`` until the block ends, then stop gunicorn and wait for it.

    It serves once all its workers are up. What it writes lands in ``folder``.
    """
    out, err = folder / "gunicorn.out", folder / "gunicorn.err"
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.Popen(
            gunicorn_command(app, workers), env=env, cwd=ROOT, stdout=stdout, stderr=stderr
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not (match := LISTENING.search(err.read_text())) or (
            err.read_text().count("Booting worker") < workers
        ):
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"gunicorn did not start:\n{err.read_text()}")
            time.sleep(0.1)
        yield Server(int(match[1]), out, err)
    finally:
        process.send_signal(signal.SIGINT)  # a quick shutdown
        process.wait(timeout=30)


def http_get(
    port: int, path: str, headers: dict[str, str] | None = None
) -> http.client.HTTPResponse:
    """One GET to the local server; the body is read before returning."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", path, headers=headers or {})
    response = connection.getresponse()
    response.body = response.read()  # type: ignore[attr-defined]
    connection.close()
    return response
