"""Helpers for tests that play games: pick legal moves, read the move page's form, run
requests at the same instant."""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from typing import Any

import psycopg
from flask import Flask
from flask.testing import FlaskClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import event, select

from bench.random_play import pick_action, random_cards
from service import games, invitations
from service.api.routes import api_view
from service.links import player_for
from service.mail import queue
from service.mail.compose import Email, with_headers
from service.mail.kinds import written
from service.models import Game, Invitation, OutboxMessage, Player, db
from service.rules import SEATS, Variant, new_game
from service.unit_of_work import transaction


def waits_on_a_lock(database_url: str) -> Callable[[], bool]:
    """Whether a connection to the database at ``database_url`` waits for a lock, asked anew
    at each call."""

    def check() -> bool:
        with psycopg.connect(database_url) as conn:
            found = conn.execute(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND wait_event_type = 'Lock'"
            ).fetchone()
        return bool(found and found[0])

    return check


def wait_until(condition: Callable[[], object], seconds: float = 30) -> None:
    """Return once ``condition()`` holds; fail if it has not within ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def second_behind_first(
    app: Flask,
    database: str,
    first: Callable[[], object],
    second: Callable[[], object],
    *,
    first_ends: Callable[[], object] = lambda: None,
) -> list[BaseException]:
    """Run ``first`` in a transaction of its own, in a thread, and while it holds what it
    locked, ``second`` in another thread, until ``second`` waits on a lock; then let the
    first end (``first_ends``, in the same transaction) and commit, and wait for both.
    Returns what either raised."""
    errors: list[BaseException] = []
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with app.app_context(), transaction():
                first()
                holding.set()
                release.wait(30)
                first_ends()
        except BaseException as exc:  # noqa: BLE001 - returned to the test
            errors.append(exc)
            holding.set()

    def follow() -> None:
        try:
            second()
        except BaseException as exc:  # noqa: BLE001 - returned to the test
            errors.append(exc)

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(30)
    follower = threading.Thread(target=follow)
    follower.start()
    wait_until(waits_on_a_lock(database))
    release.set()
    holder.join(30)
    follower.join(30)
    return errors


@contextmanager
def statements_run(app: Flask) -> Iterator[list[tuple[str, Any]]]:
    """Every SQL statement (with its parameters) the app's engine runs inside the block."""
    statements: list[tuple[str, Any]] = []

    def record(conn, cursor, statement, parameters, *args) -> None:
        statements.append((statement, parameters))

    with app.app_context():
        engine = db.engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", record)


def failed_turn_behind_a_newer_one(player: Player, error: str | None = None) -> OutboxMessage:
    """Queue a turn email for ``player`` that failed, then a newer one; the failed one."""
    queue(Email("old", "old", "<p>old</p>"), kind="turn", recipient=player.email, player=player)
    failed = queued_turn(player)
    failed.status, failed.last_error = "failed", error
    db.session.flush()
    queue(Email("new", "new", "<p>new</p>"), kind="turn", recipient=player.email, player=player)
    return failed


def queued_turn(player: Player) -> OutboxMessage:
    """The player's unsent turn email: a newer one replaces it, so at most one waits."""
    return db.session.scalars(
        select(OutboxMessage).where(
            OutboxMessage.player_id == player.id,
            OutboxMessage.kind == "turn",
            OutboxMessage.status == "queued",
        )
    ).one()


def write_queued(app: Flask) -> None:
    """Write each queued email not written yet into its row, as the worker would send it now.

    The worker writes an email when it sends it (:func:`service.mail.kinds.written`);
    a test that reads the emails a change caused calls this right after the
    change, as if the worker had sent them then. They stay queued: the worker
    writes them again when it does send them.
    """
    with app.app_context():
        with transaction():
            unwritten = select(OutboxMessage).where(
                OutboxMessage.status == "queued", OutboxMessage.subject.is_(None)
            )
            for message in db.session.scalars(unwritten):
                email = written(message)
                if email is not None:
                    message.subject, message.text_body = email.subject, email.text
                    message.html_body = email.html
                    if email.headers:
                        message.headers = with_headers(message.headers, email.headers)
        db.session.remove()


def redeal(app: Flask, game_id: int, variant: Variant) -> None:
    """Deal a new game again, from its seed, under ``variant`` (the service deals printed games)."""
    with app.app_context():
        game = db.session.get(Game, game_id)
        assert game is not None and game.version == 0
        game.state = new_game(seed=game.state["seed"], variant=variant)
        db.session.commit()


def random_move(
    client: FlaskClient, tokens: dict[str, Any], rng: random.Random, *, api: bool = False
) -> tuple[str, dict[str, Any]]:
    """Make one random legal move; returns the mover and their view before it.

    The move goes through the service layer as the API's POST does (one transaction,
    the same emails), without the HTTP round trips; ``api=True`` sends it through
    the JSON API instead. Both pick the same move for the same ``rng``.
    """
    if api:
        views = {seat: client.get(f"/api/play/{tokens[seat]}").get_json() for seat in SEATS}
    else:
        views = _service_views(client.application, tokens)
    seat = rng.choice([s for s in SEATS if views[s]["your_turn"]])
    body = {"version": views[seat]["version"], **pick_action(views[seat], rng)}
    if api:
        response = client.post(f"/api/play/{tokens[seat]}", json=body)
        assert response.status_code == 200, response.get_json()
        assert response.get_json()["version"] == body["version"] + 1
    else:
        _service_move(client.application, tokens[seat], body)
    return seat, views[seat]


def moves_delivered(
    client: FlaskClient, tokens: dict[str, Any], deliver: Callable[[], int], moves: int
) -> None:
    """``moves`` random legal moves (:func:`random_move`, the same ones for the same game),
    the emails each one causes delivered after it."""
    rng = random.Random(3)
    for _ in range(moves):
        random_move(client, tokens, rng)
        deliver()


def kim_owes_after_sam_wrote(
    client: FlaskClient, tokens: dict[str, Any], rng: random.Random, notes: list[str]
) -> None:
    """From the start of a game, random moves until Kim owes one after a trick was played and
    Sam moved last: Sam first while both owe (the exchange), each of Sam's moves with the next
    of ``notes`` (none once they run out). What Kim hears of next has an exchange done, a
    trick and Sam's last note at least."""
    written, last = iter(notes), None
    for _ in range(40):
        views = {seat: client.get(f"/api/play/{tokens[seat]}").get_json() for seat in SEATS}
        keeper, shadow = views["keeper"], views["shadow"]
        if last == "shadow" and keeper["your_turn"] and keeper["history"]:
            return
        seat = last = "shadow" if shadow["your_turn"] else "keeper"
        body = {"version": views[seat]["version"], **pick_action(views[seat], rng)}
        if seat == "shadow":
            body["note"] = next(written, None)
        response = client.post(f"/api/play/{tokens[seat]}", json=body)
        assert response.status_code == 200, response.get_json()
    raise AssertionError("Kim never owed a move after a trick")


def _service_views(app: Flask, tokens: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each seat's view, as ``GET /api/play/<token>`` gives it."""
    with app.app_context():
        views = {}
        for seat in SEATS:
            player = player_for(tokens[seat])
            assert player is not None, f"no player for the {seat}'s link"
            views[seat] = json.loads(json.dumps(api_view(player)))
        db.session.remove()
    return views


def _service_move(app: Flask, token: str, body: dict[str, Any]) -> None:
    """Apply ``body`` for the link's player, as ``POST /api/play/<token>`` does."""
    version = body["version"]
    action = {key: value for key, value in body.items() if key != "version"}
    with app.app_context():
        player = player_for(token)
        assert player is not None
        with transaction():
            game = games.apply_move(player.id, version, action)
        assert game.version == version + 1
        db.session.remove()


def play_to_end(
    client: FlaskClient,
    tokens: dict[str, Any],
    seed: int,
    until: Any = None,
    *,
    api: bool = False,
    after_move: Callable[[], object] | None = None,
) -> dict[str, Any]:
    """Play random legal moves until the game is over (or ``until(keeper_view)``).

    Returns the Keeper's view at that point. ``api=True`` plays through the JSON API.
    ``after_move`` is called after each move (:func:`write_queued`, say).
    """
    rng = random.Random(seed)
    done = until or (lambda view: view["phase"] == "over")
    for _ in range(300):
        if api:
            view = client.get(f"/api/play/{tokens['keeper']}").get_json()
        else:
            view = _service_views(client.application, tokens)["keeper"]
        if done(view):
            return view
        random_move(client, tokens, rng, api=api)
        if after_move is not None:
            after_move()
    raise AssertionError("the game did not get there in 300 moves")


class MoveForm(HTMLParser):
    """What the move page offers: its hidden fields, the play buttons, the card checkboxes.

    For a choice of cards (exchange, swap): how many to choose, and whether the
    page states the elixir rule (one of them must be an elixir).
    """

    def __init__(self, html: str) -> None:
        super().__init__()
        self.hidden: dict[str, str] = {}
        self.plays: list[str] = []
        self.disabled: list[str] = []
        self.checkboxes: list[str] = []
        self.choose = 0
        self.elixir_rule = False
        self._choosing = False
        self._elsewhere = False  # inside a form that is no move: resigning, reminding
        self.feed(html)

    @property
    def offers_a_move(self) -> bool:
        """Whether the page has a form for the player's next move."""
        return "version" in self.hidden

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        classes = (attr.get("class") or "").split()
        if tag == "form":
            self._elsewhere = (attr.get("action") or "").endswith(("/resign", "/remind"))
        if tag == "form" and "choose" in classes:
            self._choosing = True
            self.choose = int(attr.get("data-choose") or 0)
        elif tag == "p" and self._choosing and classes == ["rule"]:
            self.elixir_rule = True
        elif tag == "input" and attr.get("type") == "hidden" and attr.get("name"):
            if not self._elsewhere:
                self.hidden[attr["name"] or ""] = attr.get("value") or ""
        elif tag == "input" and attr.get("type") == "checkbox" and attr.get("name") == "cards":
            self.checkboxes.append(attr.get("value") or "")
        elif tag == "button" and attr.get("name") == "play":
            self.plays.append(attr.get("value") or "")
        elif tag == "button" and "disabled" in attr:
            self.disabled.append(attr.get("aria-label") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._choosing = self._elsewhere = False


def page_action(form: MoveForm, rng: random.Random) -> dict[str, Any]:
    """A random move among those the page offers, found from the page alone."""
    if form.plays:
        card, _, suit = rng.choice(form.plays).partition(":")
        return {"play": card, "name": suit} if suit else {"play": card}
    cards = random_cards(rng, list(form.checkboxes), form.choose, form.elixir_rule)
    return {form.hidden["kind"]: cards}


def form_data(form: MoveForm, action: dict[str, Any]) -> dict[str, Any]:
    """The POST body the page would send for ``action``, checking the page offers it."""
    data: dict[str, Any] = dict(form.hidden)
    if "play" in action:
        value = action["play"] + (f":{action['name']}" if "name" in action else "")
        assert value in form.plays, f"the page does not offer {value}: {form.plays}"
        data["play"] = value
    else:
        kind = next(iter(action))
        assert data.get("kind") == kind
        assert set(action[kind]) <= set(form.checkboxes)
        data["cards"] = action[kind]
    return data


class Spoken(HTMLParser):
    """The words of an HTML fragment as assistive technology reads them: an element of
    role ``img`` is its ``aria-label``, one hidden with ``aria-hidden`` is not read."""

    VOID = frozenset({"area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "wbr"})

    def __init__(self, html: str) -> None:
        super().__init__()
        self.words: list[str] = []
        self.labels: list[str] = []  # the names of the role="img" elements, in order
        self._skipping = 0  # depth inside an element whose content is not read
        self.feed(html)
        self.close()

    @property
    def text(self) -> str:
        """The words read, their white space collapsed (a no-break space is kept)."""
        return re.sub(r"[ \t\r\n]+", " ", "".join(self.words)).strip()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.VOID:
            return
        if self._skipping:
            self._skipping += 1
            return
        attr = dict(attrs)
        if attr.get("aria-hidden") == "true":
            self._skipping = 1
        elif attr.get("role") == "img":
            label = attr.get("aria-label") or ""
            self.labels.append(label)
            self.words.append(label)
            self._skipping = 1

    def handle_endtag(self, tag: str) -> None:
        if self._skipping and tag not in self.VOID:
            self._skipping -= 1

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.words.append(data)


def error_text(html: str) -> str:
    """The page's error message, or empty."""
    found = re.search(r'<p class="error" role="alert"[^>]*>(.*?)</p>', html, re.S)
    return found.group(1).strip() if found else ""


def from_elsewhere(app: Flask, number: int) -> FlaskClient:
    """A client on a machine of its own, with an allowance per IP address of its own."""
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = f"10.0.0.{number}"
    return client


def at_once(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run the calls in threads released together; return their results in order."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(index: int) -> None:
        barrier.wait()
        results[index] = calls[index]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


NEW_GAME_FORM = {
    "name": "Ann",
    "email": "ann@example.com",
    "opponent_name": "Bob",
    "opponent_email": "bob@example.com",
    "role": "keeper",
    "format": "single",
    "look": "standard",
    "days": "5",
}


def csrf_token(html: str) -> str:
    """The CSRF token of the (first) form on a page."""
    found = re.search(r'name="csrf_token"[^>]*?value="([^"]+)"', html)
    assert found, "the page has no CSRF token"
    return found.group(1)


def ask_for_game(client: FlaskClient, headers: dict[str, str] | None = None, **changes: str) -> Any:
    """Post the public new-game form (Ann against Bob, unless ``changes`` say otherwise)."""
    token = csrf_token(client.get("/new", headers=headers).get_data(as_text=True))
    data = {**NEW_GAME_FORM, **changes, "csrf_token": token}
    return client.post("/new", data=data, headers=headers)


def request_invitation(opponent: str, creator: str = "ann@example.com") -> Invitation:
    """``creator`` asks for a game against ``opponent`` (in an app context, in a transaction)."""
    with transaction():
        return invitations.request_game(
            invitations.Request(
                name=creator.split("@")[0].capitalize(),
                email=creator,
                opponent_name=opponent.split("@")[0].capitalize(),
                opponent_email=opponent,
                role="keeper",
                match=False,
                days_per_move=5,
            )
        )


# The METRICS_TOKEN of the tests that read /metrics.
TOKEN = "metrics-token-for-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def scrape(client: FlaskClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a scrape, by name and labels."""
    response = client.get("/metrics", headers=AUTH)
    assert response.status_code == 200
    assert response.content_type.startswith("text/plain; version=")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.get_data(as_text=True))
        for sample in family.samples
    }


def value(samples: dict, name: str, **labels: str) -> float:
    """The sample of ``name`` with ``labels`` in a :func:`scrape`; 0 if there is none."""
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)
