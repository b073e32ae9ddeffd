"""Every URL that names a row by its id: an id past what the database holds is not found.
A path with doubled slashes is not found either, never redirected. No route takes OPTIONS."""

from __future__ import annotations

import pytest
from flask import Flask, url_for

from service.admin.auth import create_admin
from service.models import MAX_ID
from service.unit_of_work import transaction

from .admin.conftest import ADMIN, PASSWORD, csrf_token, sign_in

pytestmark = pytest.mark.both_backends


def id_urls(app: Flask, value: int) -> list[tuple[str, str]]:
    """(method, URL) for every route with a row id in its path, each id set to ``value``."""
    urls = []
    with app.test_request_context():
        for rule in app.url_map.iter_rules():
            if not any(name.endswith("_id") for name in rule.arguments):
                continue
            url = url_for(rule.endpoint, **dict.fromkeys(rule.arguments, value))
            for method in sorted((rule.methods or set()) & {"GET", "POST"}):
                urls.append((method, url))
    return urls


def test_ids_the_database_cannot_hold_are_not_found(app: Flask) -> None:
    assert app.config["LOCAL_MAILBOX"]  # its pages are checked too
    with app.app_context(), transaction():
        create_admin(ADMIN, PASSWORD)
    client = app.test_client()
    token = csrf_token(client.get("/admin/login").get_data(as_text=True))
    assert sign_in(client, ADMIN, PASSWORD).status_code == 303
    urls = id_urls(app, MAX_ID + 1) + id_urls(app, 3_000_000_000)
    assert any("/mailbox/" in url for _, url in urls) and any("/admin/" in url for _, url in urls)
    for method, url in urls:
        response = client.open(url, method=method, data={"csrf_token": token})
        assert response.status_code == 404, (method, url, response.status_code)


@pytest.mark.parametrize(
    "path",
    ["//play/{token}", "/api/play//{token}", "/play//{token}", "//api/play/{token}", "//new"],
)
def test_a_path_with_doubled_slashes_is_not_found(app: Flask, make_game, path: str) -> None:
    """Not redirected to the path with the slashes merged: the redirect's address would be
    the request's Host, not BASE_URL, and would carry the link's token there."""
    path = path.format(token=make_game()["keeper"])
    for method in ("GET", "POST"):
        response = app.test_client().open(
            "/",
            method=method,
            environ_overrides={"PATH_INFO": path},
            headers={"Host": "evil.example"},
        )
        assert response.status_code == 404, (method, path, response.headers.get("Location"))
        assert "Location" not in response.headers


def test_a_path_missing_its_last_slash_is_redirected_by_path_alone(app: Flask) -> None:
    """``/admin`` leads to ``/admin/`` on this site, whatever Host the request named."""
    response = app.test_client().get("/admin?x=1", headers={"Host": "evil.example"})
    assert response.status_code == 308
    assert response.headers["Location"] == "/admin/?x=1"


def test_no_route_answers_options(app: Flask) -> None:
    """Flask would answer OPTIONS on every route with an empty 200: here it is a method the
    path does not take, 405 with the methods it does (the API says so in JSON)."""
    client = app.test_client()
    with app.test_request_context():
        urls = {
            rule.endpoint: (url_for(rule.endpoint, **dict.fromkeys(rule.arguments, "1")), rule)
            for rule in app.url_map.iter_rules()
        }
    assert {"api.view", "players.play", "lobby.new_game", "static"} <= set(urls)
    for url, rule in urls.values():
        assert "OPTIONS" not in (rule.methods or ()), rule
        response = client.options(url)
        assert response.status_code == 405, (url, response.status_code)
        allowed = set(response.headers["Allow"].split(", "))
        assert allowed and "OPTIONS" not in allowed, url
        assert "Access-Control-Allow-Origin" not in response.headers
        if url.startswith("/api/"):
            assert response.get_json()["error"]["code"] == "method_not_allowed"


def test_a_json_client_gets_its_errors_in_json_and_a_browser_in_html(app: Flask, make_game) -> None:
    """Outside ``/api/`` too: a client that asks for JSON alone (a script fetching a game's
    replay, a mistyped API address) reads the error's code, not a page; a browser, or a
    client that takes anything, gets the page."""
    token = make_game()["keeper"]
    client = app.test_client()
    as_json = {"Accept": "application/json"}
    browser = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
    for method, path, status, code in (
        ("GET", "/nothing", 404, "not_found"),
        ("GET", "/api", 404, "not_found"),
        ("GET", "/play/bad.token/replay.json", 404, "not_found"),
        ("PUT", f"/play/{token}", 405, "method_not_allowed"),
    ):
        with client.open(path, method=method, headers=as_json) as response:
            assert response.status_code == status, path
            assert response.mimetype == "application/json", path
            assert response.get_json()["error"]["code"] == code, path
            if status == 405:
                assert "GET" in response.headers["Allow"]
        for headers in (browser, {"Accept": "*/*"}, {}):
            with client.open(path, method=method, headers=headers) as response:
                assert response.status_code == status, (path, headers)
                assert response.mimetype == "text/html", (path, headers)
