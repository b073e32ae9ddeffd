"""A view answered ahead of the app (service.api.shortcut) is answered as the app answers it."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from flask import Flask
from sqlalchemy.exc import OperationalError
from werkzeug.test import Client, EnvironBuilder, TestResponse

from service import games
from service.api.shortcut import ViewShortcut
from service.links import player_for, token_for
from service.unit_of_work import transaction

from .conftest import BASE_URL
from .helpers import pick_action, statements_run

# SQLite too: it is what ``make run`` serves on, and the shortcut opens its own connection.
pytestmark = pytest.mark.both_backends

# What a poll's answer is compared by: all of its headers but the date, and its body.
Answer = tuple[int, dict[str, str], bytes]


def shortcut(app: Flask) -> ViewShortcut:
    """The shortcut in front of ``app`` (no proxy in the tests' settings)."""
    found = app.wsgi_app
    assert isinstance(found, ViewShortcut)
    return found


def answered_ahead(short: ViewShortcut, environ: dict[str, Any]) -> bool:
    """Whether the shortcut answers the request of ``environ``."""
    token = short.token(environ)
    return token is not None and short.answer(environ, token) is not None


def answered(response: TestResponse) -> Answer:
    headers = {name: value for name, value in response.headers if name != "Date"}
    return response.status_code, headers, response.get_data()


def both_ways(app: Flask, path: str, method: str = "GET", **options: Any) -> tuple[Answer, bool]:
    """The answer of ``app`` with its shortcut, checked equal to the app's own (the normal
    path's), and whether the shortcut gave it."""
    short = shortcut(app)
    environ = EnvironBuilder(path=path, method=method, base_url=BASE_URL, **options).get_environ()
    took = answered_ahead(short, environ)
    with_it = Client(app, use_cookies=False).open(path, method=method, base_url=BASE_URL, **options)
    without = Client(short.wsgi_app, use_cookies=False).open(
        path, method=method, base_url=BASE_URL, **options
    )
    assert answered(with_it) == answered(without)
    assert header_order(with_it) == header_order(without)
    return answered(with_it), took


def header_order(response: TestResponse) -> list[str]:
    return [name for name, _ in response.headers if name != "Date"]


def etag_of(app: Flask, path: str, **options: Any) -> str:
    etag: str = (
        Client(app, use_cookies=False).get(path, base_url=BASE_URL, **options).headers["ETag"]
    )
    return etag


@pytest.fixture
def poll(app: Flask, make_game: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """A game's keeper's view path and that view's ETag in English."""
    game = make_game(keeper_language="fr")
    path = f"/api/play/{game['keeper']}"
    return {**game, "path": path, "etag": etag_of(app, path)}


@pytest.mark.parametrize(
    ("headers", "method", "base_url"),
    [
        ({}, "GET", BASE_URL),
        ({}, "HEAD", BASE_URL),
        ({}, "GET", BASE_URL.replace("http:", "https:")),  # with HSTS
        ({"Accept-Language": "fr-FR,fr;q=0.9"}, "GET", BASE_URL),
        ({"Cookie": "lang=fr"}, "GET", BASE_URL),
        ({"Cookie": "lang=fr", "Accept-Language": "en"}, "GET", BASE_URL),
        ({"Cookie": "lang=xx", "Accept-Language": "fr"}, "GET", BASE_URL),
    ],
)
def test_a_poll_of_an_unchanged_game_is_answered_ahead(
    app: Flask, poll: dict[str, Any], headers: dict[str, str], method: str, base_url: str
) -> None:
    """304 with the view's ETag in the request's language, and every header of the app's."""
    etag = etag_of(app, poll["path"], headers=headers)
    asked = {**headers, "If-None-Match": etag}
    short = shortcut(app)
    environ = EnvironBuilder(
        path=poll["path"], method=method, base_url=base_url, headers=asked
    ).get_environ()
    assert answered_ahead(short, environ)
    with_it = Client(app, use_cookies=False).open(
        poll["path"], method=method, base_url=base_url, headers=asked
    )
    without = Client(short.wsgi_app, use_cookies=False).open(
        poll["path"], method=method, base_url=base_url, headers=asked
    )
    assert answered(with_it) == answered(without)
    assert with_it.status_code == 304
    assert with_it.headers["ETag"] == etag
    assert with_it.headers["Cache-Control"] == "no-store"
    assert ("Strict-Transport-Security" in with_it.headers) == base_url.startswith("https:")


@pytest.mark.parametrize("sent", ["W/{etag}", '"other", {etag}', "*"])
def test_if_none_match_is_compared_as_the_view_compares_it(
    app: Flask, poll: dict[str, Any], sent: str
) -> None:
    answer, took = both_ways(
        app, poll["path"], headers={"If-None-Match": sent.format(etag=poll["etag"])}
    )
    assert (answer[0], took) == (304, True)


def test_the_poll_reads_one_statement(app: Flask, poll: dict[str, Any]) -> None:
    with statements_run(app) as statements:
        answer, took = both_ways(app, poll["path"], headers={"If-None-Match": poll["etag"]})
    assert (answer[0], took) == (304, True)
    assert len(statements) == 3  # the shortcut's, the app's behind it, and the app's alone


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"If-None-Match": '"other"'},  # a tag the view no longer has
        {"Accept-Language": "fr"},
        {"Cookie": "lang=fr", "If-None-Match": '"other", W/"another"'},
    ],
)
@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_a_view_is_answered_ahead(
    app: Flask, poll: dict[str, Any], headers: dict[str, str], method: str
) -> None:
    """The whole view, with its ETag and every header of the app's."""
    answer, took = both_ways(app, poll["path"], method, headers=headers)
    assert (answer[0], took) == (200, True)
    assert answer[1]["ETag"] == etag_of(app, poll["path"], headers=headers)
    assert answer[1]["Content-Type"] == "application/json"
    if method == "GET":
        assert json.loads(answer[2])["version"] == 0


def test_a_view_reads_one_statement_and_a_poll_of_a_changed_game_two(
    app: Flask, poll: dict[str, Any]
) -> None:
    with statements_run(app) as statements:
        assert answered_ahead(shortcut(app), EnvironBuilder(path=poll["path"]).get_environ())
    assert len(statements) == 1
    environ = EnvironBuilder(path=poll["path"], headers={"If-None-Match": '"other"'})
    with statements_run(app) as statements:
        assert answered_ahead(shortcut(app), environ.get_environ())
    assert len(statements) == 2  # the tag first, as a poll reads; then the view


@pytest.mark.parametrize("language", ["en", "fr"])
def test_a_view_of_a_game_against_the_computer_names_it_in_the_request_language(
    app: Flask, language: str
) -> None:
    with app.app_context(), transaction():
        game = games.create_game(
            games.Seating("kim@example.com", "Kim"), games.Seating.the_computer("random")
        )
        path = f"/api/play/{token_for(game.player('keeper'))}"
    answer, took = both_ways(app, path, headers={"Accept-Language": language})
    assert (answer[0], took) == (200, True)
    opponent = json.loads(answer[2])["opponent"]
    english = both_ways(app, path, headers={"Accept-Language": "en"})[0]
    assert (opponent == json.loads(english[2])["opponent"]) == (language == "en")


@pytest.mark.parametrize(
    ("change", "status"),
    [
        ("query", 304),
        ("language", 304),
        ("nul", 400),
        ("session", 304),
        ("body", 304),
        ("slash", 404),
        ("notes", 200),
        ("long token", 404),
        ("tampered", 404),
        ("DELETE", 405),
        ("OPTIONS", 405),
    ],
)
def test_any_other_request_goes_the_normal_way(
    app: Flask, poll: dict[str, Any], change: str, status: int
) -> None:
    path, token = poll["path"], poll["keeper"]
    method = change if change.isupper() else "GET"
    headers = {"If-None-Match": poll["etag"]}
    options: dict[str, Any] = {}
    if change == "query":
        path += "?seen=1"
    elif change == "language":
        path += "?lang=fr"  # sets the language's cookie: another tag, another answer
        headers["If-None-Match"] = etag_of(app, poll["path"], headers={"Cookie": "lang=fr"})
    elif change == "nul":
        path += "?x=%00"
    elif change == "session":
        headers["Cookie"] = "session=anything; lang=en"
    elif change == "body":
        options["data"] = b"{}"
    elif change == "slash":
        path += "/"
    elif change == "notes":
        path += "/notes"
    elif change == "long token":
        path = f"/api/play/{token}{'A' * 600}"
    elif change == "tampered":
        path = f"/api/play/{token[:-2]}{'AA' if token[-2:] != 'AA' else 'BB'}"
    answer, took = both_ways(app, path, method, headers=headers, **options)
    assert (answer[0], took) == (status, False)


def test_a_poll_of_a_changed_game_is_answered_with_the_view(
    app: Flask, poll: dict[str, Any]
) -> None:
    client = Client(app, use_cookies=False)
    view = client.get(poll["path"], base_url=BASE_URL).get_json()
    action = pick_action(view, random.Random(1))
    assert client.post(poll["path"], json={"version": view["version"], **action}).status_code == 200
    answer, took = both_ways(app, poll["path"], headers={"If-None-Match": poll["etag"]})
    assert (answer[0], took) == (200, True)
    assert answer[1]["ETag"] != poll["etag"]
    assert json.loads(answer[2])["version"] == view["version"] + 1


def test_a_rotated_or_revoked_link_goes_the_normal_way(app: Flask, poll: dict[str, Any]) -> None:
    with app.app_context(), transaction():
        player = player_for(poll["keeper"])
        assert player is not None
        games.rotate_link(player.id, "root")
    answer, took = both_ways(app, poll["path"], headers={"If-None-Match": poll["etag"]})
    assert (answer[0], took) == (404, False)


def test_a_game_of_a_return_match_goes_the_normal_way(app: Flask) -> None:
    with app.app_context(), transaction():
        first = games.create_match(
            games.Seating("kim@example.com", "Kim"), games.Seating("sam@example.com", "Sam")
        )
        path = f"/api/play/{token_for(first.player('keeper'))}"
    answer, took = both_ways(app, path, headers={"If-None-Match": etag_of(app, path)})
    assert (answer[0], took) == (304, False)


def test_a_token_the_shortcut_cannot_answer_is_read_once_by_it(app: Flask) -> None:
    """A return match's score reads the other game, which the view does: from the second
    read on, the shortcut passes such a link on without reading its row first."""
    with app.app_context(), transaction():
        first = games.create_match(
            games.Seating("kim@example.com", "Kim"), games.Seating("sam@example.com", "Sam")
        )
        path = f"/api/play/{token_for(first.player('keeper'))}"
    client = Client(app, use_cookies=False)
    counts, headers = [], {}
    for _ in range(3):
        with statements_run(app) as statements:
            answer = client.get(path, base_url=BASE_URL, headers=headers)
        assert answer.status_code == (304 if headers else 200)
        headers = {"If-None-Match": answer.headers["ETag"]}
        counts.append(len(statements))
    assert counts[1] == counts[2] == counts[0] - 1


def test_an_error_building_the_view_goes_the_normal_way(
    app: Flask, poll: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A view the service cannot build (a bug, a row it cannot read): the app meets it again,
    and answers its own 500, as JSON, with every header of its answers."""

    def failing(*args: Any, **kwargs: Any) -> None:
        raise KeyError("hands")

    monkeypatch.setattr("service.api.routes.view_of", failing)
    monkeypatch.setitem(app.config, "PROPAGATE_EXCEPTIONS", False)  # answered as in production
    answer, took = both_ways(app, poll["path"])
    assert (answer[0], took) == (500, False)
    assert json.loads(answer[2])["error"]["code"] == "internal_server_error"


def test_a_database_error_goes_the_normal_way(
    app: Flask, poll: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The view meets the error itself, and answers it as it answers any."""

    def failing(*args: Any, **kwargs: Any) -> str:
        raise OperationalError("SELECT", {}, Exception("the server closed the connection"))

    monkeypatch.setattr("service.api.routes.stored_view_tag", failing)
    environ = EnvironBuilder(
        path=poll["path"], base_url=BASE_URL, headers={"If-None-Match": poll["etag"]}
    ).get_environ()
    assert not answered_ahead(shortcut(app), environ)


def test_an_outage_met_ahead_is_answered_at_once_not_waited_for_again(
    app: Flask, poll: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database down (a lock or connect timeout): the poll's 503 comes after one wait,
    the app raising what the shortcut met instead of reading again."""

    def down(*args: Any, **kwargs: Any) -> str:
        raise OperationalError("SELECT", {}, psycopg.OperationalError("connection timeout"))

    monkeypatch.setattr("service.api.routes.stored_view_tag", down)
    with statements_run(app) as statements:
        answer = Client(app, use_cookies=False).get(
            poll["path"], base_url=BASE_URL, headers={"If-None-Match": poll["etag"]}
        )
    assert answer.status_code == 503 and answer.headers["Retry-After"]
    assert answer.get_json()["error"]["code"] == "service_unavailable"
    assert statements == []  # the view did not wait on the database again


def test_a_host_routing_refuses_goes_the_normal_way(app: Flask, poll: dict[str, Any]) -> None:
    """A host IDNA cannot write (an empty label, one of 64 characters): Flask's routing
    answers 400, and so does the poll."""
    for host in ("a..b", f"{'x' * 64}.example.org"):
        headers = {"If-None-Match": poll["etag"], "Host": host}
        answer, took = both_ways(app, poll["path"], headers=headers)
        assert (answer[0], took) == (400, False), host
