"""Browser fixtures: the real app served from a thread, and Debian's Chromium driven by Playwright.

Chromium is ``/usr/bin/chromium`` (``apt-get install chromium``); Playwright never
downloads a browser here. Without it the browser tests are skipped, except under
``CI=true``, where they fail. Screenshots go to ``tests/artifacts/``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from service.links import token_for
from service.unit_of_work import transaction

from ..conftest import IN_CI, create_kim_and_sam

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
PHONE = {"width": 390, "height": 844}


class QuietHandler(WSGIRequestHandler):
    """Serve requests without logging each one."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        return None


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Chromium, headless, for the whole test session (skipped or failed when missing)."""
    if not Path(CHROMIUM).exists():
        message = f"Chromium not found at {CHROMIUM}: install it with `apt-get install chromium`"
        if IN_CI:
            pytest.fail(message + " (required when CI=true)", pytrace=False)
        pytest.skip(message + " to run the browser tests")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


class Gate:
    """The live server's way into the app: it counts the requests inside, and once closed lets
    no more in and waits for those inside to leave.

    A page left open polls its game every fifth of a second, so a request may be
    inside the app as the test ends. Its database connection would go back to
    the pool after the test's teardown had emptied the tables and disposed of
    the pool, and be left for the garbage collector, whose warning the suite
    then reports against whichever test is running.
    """

    def __init__(self) -> None:
        self.inside = 0
        self.closed = False
        self.changed = threading.Condition()

    def enter(self) -> bool:
        with self.changed:
            if not self.closed:
                self.inside += 1
            return not self.closed

    def leave(self) -> None:
        with self.changed:
            self.inside -= 1
            self.changed.notify_all()

    def close(self, timeout: float = 10.0) -> None:
        with self.changed:
            self.closed = True
            if not self.changed.wait_for(lambda: self.inside == 0, timeout):
                raise AssertionError(f"{self.inside} request(s) still inside the app")


def buffered(app: Flask, gate: Gate) -> Callable[..., Any]:
    """The app behind ``gate``, each answer read whole (and its file closed) before the server
    writes it; once the gate is closed, a 503 without the app.

    werkzeug's development server closes an answer's iterable only after draining
    the request's socket, in the same ``finally``; when the browser has dropped
    the connection (a page left while its icon loads), draining raises first and
    a static file is left open, which the suite's warnings-as-errors then reports
    against whichever test collects it.
    """

    def serve(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        if not gate.enter():
            start_response("503 Service Unavailable", [("Content-Length", "0")])
            return [b""]
        try:
            answer = app(environ, start_response)
            try:
                return [b"".join(answer)]
            finally:
                close = getattr(answer, "close", None)
                if close is not None:
                    close()
        finally:
            gate.leave()

    return serve


@pytest.fixture
def live_server(pg_app: Flask) -> Iterator[str]:
    """The app on PostgreSQL, served on a free local port; ``BASE_URL`` is its address (with
    the path of the ``BASE_URL`` the app was made with, if it has one)."""
    gate = Gate()
    server: BaseWSGIServer = make_server(
        "127.0.0.1", 0, buffered(pg_app, gate), threaded=True, request_handler=QuietHandler
    )
    base_url = f"http://127.0.0.1:{server.server_port}{pg_app.config['APPLICATION_ROOT']}".rstrip(
        "/"
    )
    pg_app.config["BASE_URL"] = base_url
    # The server looks for a shutdown between requests every poll_interval (0.5 s by default),
    # which each test's end waited for.
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield base_url
    finally:
        server.shutdown()
        thread.join()
        gate.close()  # before the app's teardown empties the tables and disposes of the pool


@pytest.fixture
def new_game(pg_app: Flask, live_server: str) -> Callable[..., dict[str, Any]]:
    """Create a game on the live server; returns its id and each seat's page address."""

    def make(seed: int, **options: Any) -> dict[str, Any]:
        with pg_app.app_context(), transaction():
            game = create_kim_and_sam(seed, options)
            return {
                "id": game.id,
                "keeper": f"{live_server}/play/{token_for(game.player('keeper'))}",
                "shadow": f"{live_server}/play/{token_for(game.player('shadow'))}",
                "api": {
                    seat: f"{live_server}/api/play/{token_for(game.player(seat))}"
                    for seat in ("keeper", "shadow")
                },
            }

    return make


@pytest.fixture
def phone(browser: Any) -> Callable[..., Any]:
    """Open a new phone-sized browser context (English unless ``locale`` says otherwise;
    any option of ``new_context``, a ``viewport`` too, overrides the phone's)."""
    contexts = []

    def open_context(**options: Any) -> Any:
        phone_like = {"viewport": PHONE, "device_scale_factor": 2, "is_mobile": True}
        context = browser.new_context(
            **{"has_touch": True, "locale": "en-GB", **phone_like, **options}
        )
        context.set_default_timeout(10_000)
        contexts.append(context)
        return context

    yield open_context
    for context in contexts:
        context.close()


def screenshot(page: Any, name: str, full_page: bool = True) -> None:
    """Save the whole page (or only its first screen) under ``tests/artifacts/``."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=full_page)
