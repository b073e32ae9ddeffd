"""What one request may hold: a few kilobytes of body, short fields; a form, on a page.

A request over a limit is refused before anything reads it as a form or a
move, with 413 and a message that says so: JSON under ``/api/``, the error
page elsewhere. A JSON body sent to a page is refused with 415. Nothing changes.
"""

from __future__ import annotations

import io
import json
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask, url_for
from flask.testing import FlaskClient
from sqlalchemy import select
from werkzeug.test import TestResponse

from service import address_change, create_app, invitations
from service.addresses import settings_for
from service.admin.auth import create_admin
from service.links import home_token
from service.mail import compose
from service.models import AdminUser, OutboxMessage, Player, db
from service.request_limits import UNREADABLE_CHUNKS
from service.unit_of_work import transaction

from .admin.conftest import sign_in
from .conftest import base_config, load_game
from .helpers import csrf_token, request_invitation
from .servers import gunicorn_env, run_gunicorn
from .test_safe_methods import snapshot

EIGHT_MB = 8 * 1024 * 1024


def outbox_size(app: Flask) -> int:
    with app.app_context():
        return len(db.session.scalars(db.select(OutboxMessage)).all())


def post_links(client: FlaskClient, email: str, **options: Any) -> TestResponse:
    """The lost-links form, sent with its CSRF token."""
    token = csrf_token(client.get("/links").get_data(as_text=True))
    return client.post("/links", data={"email": email, "csrf_token": token}, **options)


def test_an_eight_megabyte_address_is_refused_unread(app: Flask, client: FlaskClient) -> None:
    response = post_links(client, "a" * EIGHT_MB + "@example.com")
    assert response.status_code == 413
    page = response.get_data(as_text=True)
    assert "This request is larger than the service accepts: nothing was saved." in page
    assert "Invalid email address" not in page
    assert outbox_size(app) == 0


def test_a_long_address_is_refused_as_too_long_before_any_address_check(
    client: FlaskClient,
) -> None:
    """The length check comes first and stops there: the address check never runs."""
    response = post_links(client, "a" * 300 + "@example.com")
    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert "Field cannot be longer than 254 characters." in page
    assert "Invalid email address" not in page


def test_the_page_says_it_in_the_visitors_language(client: FlaskClient) -> None:
    response = post_links(client, "a" * 9000 + "@example.com", headers={"Accept-Language": "fr"})
    assert response.status_code == 413
    assert "Cette requête est plus grande" in response.get_data(as_text=True)


def test_an_oversized_move_is_refused_in_json_and_changes_nothing(
    app: Flask, client: FlaskClient, make_game: Callable[..., dict[str, Any]]
) -> None:
    game = make_game()
    body = b'{"version": 0, "exchange": ["' + b"x" * 90_000 + b'"]}'
    response = client.post(
        f"/api/play/{game['keeper']}", data=body, content_type="application/json"
    )
    assert response.status_code == 413
    assert response.get_json() == {
        "error": {
            "code": "request_entity_too_large",
            "message": "The request is larger than the 8192 bytes the service reads.",
        }
    }
    assert load_game(app, game["id"]).version == 0


def chunked_post(port: int, path: str, chunks: bytes, content_type: str) -> tuple[int, str]:
    """A POST whose chunked body is sent as written, malformed or not; its status and body."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(
            f"POST {path} HTTP/1.1\r\nHost: splitmind.test\r\nConnection: close\r\n"
            f"Content-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
            + chunks
        )
        answer = b""
        while data := connection.recv(65536):
            answer += data
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode(errors="replace")


@pytest.mark.slow
def test_chunks_gunicorn_cannot_read_are_a_bad_request(tmp_path: Path) -> None:
    """A chunk's size that is no number, a chunk longer than it says, a bad trailer: 400,
    with the API's error for the API, and no error in the log."""
    env = gunicorn_env(tmp_path, DATABASE_URL=f"sqlite:///{tmp_path / 'empty.sqlite'}")
    with run_gunicorn("service:create_app()", env, tmp_path) as server:
        for chunks in (b"zz\r\nabc\r\n0\r\n\r\n", b"3\r\nabcXY\r\n0\r\n\r\n"):
            status, body = chunked_post(server.port, "/api/play/x", chunks, "application/json")
            assert status == 400, body
            assert json.loads(body)["error"]["message"] == UNREADABLE_CHUNKS
            status, body = chunked_post(
                server.port, "/links", chunks, "application/x-www-form-urlencoded"
            )
            assert status == 400 and "body cannot be read." in body
    assert "Exception on" not in server.stderr() and "Traceback" not in server.stderr()


def test_a_body_sent_without_a_length_is_read_no_further_than_the_limit(
    app: Flask, client: FlaskClient, make_game: Callable[..., dict[str, Any]]
) -> None:
    """Chunked, as gunicorn hands it on: Werkzeug stops reading past the limit."""
    game = make_game()
    endless = io.BytesIO(b'{"version": 0, "play": "' + b"x" * EIGHT_MB + b'"}')
    response = client.post(
        f"/api/play/{game['keeper']}",
        input_stream=endless,
        content_type="application/json",
        headers={"Transfer-Encoding": "chunked"},
        environ_overrides={"wsgi.input_terminated": True},
    )
    assert response.status_code == 413
    assert endless.tell() < EIGHT_MB
    assert load_game(app, game["id"]).version == 0


@pytest.mark.parametrize("chunked", [False, True])
def test_a_body_of_exactly_the_limit_is_read_however_it_is_sent(
    app: Flask, client: FlaskClient, make_game: Callable[..., dict[str, Any]], chunked: bool
) -> None:
    """The limit is the bytes a body may hold: one that ends there is read, with or without
    a length (a stale move here: 409, not 413)."""
    game = make_game()
    start = b'{"version": 99, "play": "1H"'
    body = start + b" " * (app.config["MAX_CONTENT_LENGTH"] - len(start) - 1) + b"}"
    sent = {"input_stream": io.BytesIO(body)} if chunked else {"data": body}
    response = client.post(
        f"/api/play/{game['keeper']}",
        content_type="application/json",
        headers={"Transfer-Encoding": "chunked"} if chunked else {},
        environ_overrides={"wsgi.input_terminated": True},
        **sent,
    )
    assert response.status_code == 409, response.get_json()
    assert load_game(app, game["id"]).version == 0


def test_multipart_forms_hold_short_fields_and_few_of_them(
    client: FlaskClient, make_game: Callable[..., dict[str, Any]]
) -> None:
    """Within the body's limit, a long field or many fields are refused all the same."""
    game = make_game()
    url = f"/play/{game['keeper']}"
    long_field = client.post(
        url,
        data={"kind": "play", "version": "0", "play": "x" * 4000},
        content_type="multipart/form-data",
    )
    assert long_field.status_code == 413
    many = client.post(
        url, data={f"field{n}": "" for n in range(60)}, content_type="multipart/form-data"
    )
    assert many.status_code == 413


BOUNDARY = "----WebKitFormBoundary7MA4YWxkTrZu0gW"  # as a browser writes one


def post_multipart(
    client: FlaskClient, url: str, fields: list[tuple[str, str]], file: bytes | None = None
) -> tuple[int, int]:
    """Post ``fields`` (and a file part) as multipart/form-data: the answer's status, and the
    body's size."""
    parts = [
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields
    ]
    if file is not None:
        disposition = 'Content-Disposition: form-data; name="upload"; filename="a.txt"'
        parts.append(f"--{BOUNDARY}\r\n{disposition}\r\n\r\n".encode() + file + b"\r\n")
    body = b"".join(parts) + f"--{BOUNDARY}--\r\n".encode()
    content_type = f"multipart/form-data; boundary={BOUNDARY}"
    return client.post(url, data=body, content_type=content_type).status_code, len(body)


@pytest.mark.parametrize(
    "fields",
    [
        # A move with a note and a few more fields: more than a kilobyte in all.
        [
            ("kind", "play"),
            ("version", "0"),
            ("play", "QS"),
            *((f"f{n}", "n" * 200) for n in range(3)),
        ],
        [(f"field{n}", "") for n in range(12)],  # tiny parts, a kilobyte of their headers
    ],
    ids=["six_small_parts", "twelve_tiny_parts"],
)
def test_a_multipart_form_of_short_fields_is_read_as_the_same_form_urlencoded(
    fields: list[tuple[str, str]], client: FlaskClient, make_game: Callable[..., dict[str, Any]]
) -> None:
    """The 1 KB limit is each field's, never the whole form's."""
    url = f"/play/{make_game()['keeper']}"
    urlencoded = client.post(url, data=dict(fields)).status_code
    status, size = post_multipart(client, url, fields)
    assert size > 1024 and status == urlencoded != 413


def test_multipart_limits_are_a_kilobyte_a_field_and_fifty_parts(
    client: FlaskClient, make_game: Callable[..., dict[str, Any]]
) -> None:
    url = f"/play/{make_game()['keeper']}"
    move = [("kind", "play"), ("version", "0")]
    assert post_multipart(client, url, [*move, ("note", "n" * 1024)])[0] != 413
    assert post_multipart(client, url, [*move, ("note", "n" * 1025)])[0] == 413
    assert post_multipart(client, url, [*move, ("note", "\u00e9" * 513)])[0] == 413  # bytes
    assert post_multipart(client, url, move, file=b"x" * 1024)[0] != 413
    assert post_multipart(client, url, move, file=b"x" * 1025)[0] == 413
    assert post_multipart(client, url, [(f"f{n}", "") for n in range(50)])[0] != 413
    assert post_multipart(client, url, [(f"f{n}", "") for n in range(51)])[0] == 413
    # Every field short, the body over MAX_CONTENT_LENGTH (8 KB).
    status, size = post_multipart(client, url, [(f"f{n}", "n" * 1000) for n in range(9)])
    assert size > 8192 and status == 413


def test_the_limit_is_a_setting(tmp_path, sqlite_template) -> None:
    app = create_app(
        {**base_config(f"sqlite:///{sqlite_template}", tmp_path), "MAX_CONTENT_LENGTH": "1024"}
    )
    assert app.config["MAX_CONTENT_LENGTH"] == 1024
    response = app.test_client().post("/links", data={"email": "a" * 1024 + "@example.com"})
    assert response.status_code == 413


def nested(depth: int, inner: str = "0") -> str:
    return "[" * depth + inner + "]" * depth


@pytest.mark.parametrize(
    "body",
    [
        nested(1000),
        nested(4000),
        '{"version": 0, "play": ' + nested(1000) + "}",
        '{"version": ' + nested(990) + ', "play": "1H"}',
        '{"version": 0, "exchange": [' + nested(995, '"1H"') + "]}",
        "[" * 3000,
    ],
    ids=["1000", "4000", "play", "version", "exchange", "unclosed"],
)
def test_deeply_nested_json_is_a_malformed_move(
    app: Flask, client: FlaskClient, make_game: Callable[..., dict[str, Any]], body: str
) -> None:
    game = make_game()
    response = client.post(
        f"/api/play/{game['keeper']}", data=body, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.get_json()["error"]["code"] == "malformed"
    assert load_game(app, game["id"]).version == 0


NUL_PAGE = "This request holds a NUL character, which no field takes."


def test_a_nul_in_an_admin_filter_or_sign_in_is_a_bad_request(
    app: Flask, client: FlaskClient
) -> None:
    """PostgreSQL cannot compare text with a NUL in it: the request stops before any query."""
    with app.app_context(), transaction():
        create_admin("ada", "correct horse battery staple")
    token = csrf_token(client.get("/admin/login").get_data(as_text=True))
    refused = client.post(
        "/admin/login", data={"csrf_token": token, "name": "a\0da", "password": "x"}
    )
    assert refused.status_code == 400 and NUL_PAGE in refused.get_data(as_text=True)
    assert sign_in(client).status_code == 303
    for path in (
        "/admin/games?email=%00",
        "/admin/games?email=kim%00@example.com&status=active",
        "/admin/mail?recipient=kim%00",
        "/admin/mail?recipient%00=kim",
    ):
        response = client.get(path)
        assert response.status_code == 400, path
        assert NUL_PAGE in response.get_data(as_text=True)


def test_a_nul_in_a_form_a_query_or_a_path_is_a_bad_request(
    app: Flask, client: FlaskClient, make_game: Callable[..., dict[str, Any]]
) -> None:
    game = make_game()
    queued = outbox_size(app)
    response = post_links(client, "kim\0@example.com")
    assert response.status_code == 400
    assert NUL_PAGE in response.get_data(as_text=True)
    assert outbox_size(app) == queued
    french = client.get("/rules?look=%00", headers={"Accept-Language": "fr"})
    assert french.status_code == 400 and "caractère NUL" in french.get_data(as_text=True)
    assert client.get(f"/play/{game['keeper']}%00").status_code == 400
    moved = client.post(
        f"/play/{game['keeper']}", data={"kind": "exchange", "version": "0", "cards": "1H\0"}
    )
    assert moved.status_code == 400
    assert load_game(app, game["id"]).version == 0


def test_a_nul_in_an_api_query_is_a_bad_request_in_english(
    client: FlaskClient, make_game: Callable[..., dict[str, Any]]
) -> None:
    game = make_game()
    response = client.get(f"/api/play/{game['keeper']}?x=%00", headers={"Accept-Language": "fr"})
    assert response.status_code == 400
    assert response.get_json() == {
        "error": {
            "code": "bad_request",
            "message": "The request holds a NUL character (\\0), which no field or address takes.",
        }
    }


JSON_PAGE = "This page takes a form, not JSON: send its fields as a form"


def post_routes(app: Flask, game: dict[str, Any]) -> dict[str, str]:
    """The URL of every route outside the API that takes a POST, by endpoint, each with a
    working link or id: Kim's game, home page and stop-all link, an invitation to confirm,
    the link confirming a move of her games to another address."""
    with app.test_request_context():
        invitation = request_invitation("bob@example.com")
        player = db.session.scalars(select(Player).where(Player.game_id == game["id"])).first()
        assert player is not None
        settings = settings_for("kim@example.com")
        assert settings is not None and settings.home_key is not None
        moving = address_change.Confirmation(
            "kim@example.com", "kim@newjob.example", settings.home_key, int(time.time())
        )
        tokens = {
            "players": game["keeper"],
            "home": home_token("kim@example.com"),
            "lobby.invitation": invitations.token(invitation, "confirm"),
            "lobby.unsubscribe": compose.stop_all_url("kim@example.com").rpartition("/")[2],
            "lobby.rematch": game["keeper"],
            "lobby.ask_to_move": home_token("kim@example.com"),
            "lobby.confirm_move": address_change.token(moving),
        }
        ids = {
            "admin_id": db.session.scalar(select(AdminUser.id)),
            "game_id": game["id"],
            "player_id": player.id,
            "message_id": db.session.scalar(select(OutboxMessage.id)),
        }
        urls = {}
        for rule in app.url_map.iter_rules():
            if "POST" not in (rule.methods or ()) or rule.rule.startswith("/api/"):
                continue
            blueprint = rule.endpoint.partition(".")[0]
            token = tokens.get(rule.endpoint, tokens.get(blueprint))
            values = {name: ids.get(name, token) for name in rule.arguments}
            urls[rule.endpoint] = url_for(rule.endpoint, **values)
        return urls


def every_form_signed_in(
    app: Flask, client: FlaskClient, game: dict[str, Any]
) -> tuple[dict[str, str], str]:
    """The address of every form's POST, with ``game``'s links (:func:`post_routes`), and a
    CSRF token, the client signed in to the dashboard."""
    with app.app_context(), transaction():
        create_admin("ada", "correct horse battery staple")
    assert sign_in(client).status_code == 303
    urls = post_routes(app, game)
    assert {"lobby.new_game", "lobby.lost_links", "home.vacation", "admin.cancel"} <= set(urls)
    return urls, csrf_token(client.get("/new").get_data(as_text=True))


@pytest.mark.parametrize("body", ['{"email": 5, "days": {"a": 1}}', "[1, 2]", '"x"', "{}"])
def test_a_json_body_sent_to_a_page_is_refused_and_changes_nothing(
    app: Flask, client: FlaskClient, make_game: Callable[..., dict[str, Any]], body: str
) -> None:
    """Every form's page, with a valid link and CSRF token: a form is read from a form only."""
    urls, token = every_form_signed_in(app, client, make_game())

    def send(url: str) -> TestResponse:
        return client.post(
            url, data=body, content_type="application/json", headers={"X-CSRFToken": token}
        )

    every_form_refuses(app, client, urls, send, 415, JSON_PAGE)
    french = client.post(
        urls["lobby.new_game"],
        json={"email": "kim@example.com"},
        headers={"X-CSRFToken": token, "Accept-Language": "fr"},
    )
    assert french.status_code == 415
    assert "Cette page attend un formulaire" in french.get_data(as_text=True)


FILE_PAGE = "This page takes the fields of a form, not files."


def every_form_refuses(
    app: Flask,
    client: FlaskClient,
    urls: dict[str, str],
    send: Callable[[str], TestResponse],
    status: int,
    said: str,
) -> None:
    """``send`` to each form's URL is refused with ``status``, its page saying ``said``, and
    nothing is changed (the signed-in admin stays signed in)."""
    before = snapshot(app)
    for endpoint, url in urls.items():
        response = send(url)
        assert response.status_code == status, (endpoint, response.status_code)
        assert said in response.get_data(as_text=True), endpoint
    assert snapshot(app) == before
    assert client.get("/admin/games").status_code == 200  # the sign-out was refused too


def test_a_file_sent_to_a_page_is_refused_and_changes_nothing(
    app: Flask, client: FlaskClient, make_game: Callable[..., dict[str, Any]]
) -> None:
    """No form takes a file: one sent as a field would reach its checks as the field's text."""
    urls, token = every_form_signed_in(app, client, make_game())

    def send(url: str) -> TestResponse:
        data = {"csrf_token": token, "email": (io.BytesIO(b"kim@example.com"), "email.txt")}
        return client.post(url, data=data, content_type="multipart/form-data")

    every_form_refuses(app, client, urls, send, 400, FILE_PAGE)
    french = client.post(
        urls["lobby.new_game"],
        data={"csrf_token": token, "name": (io.BytesIO(b"Kim"), "name.txt")},
        content_type="multipart/form-data",
        headers={"Accept-Language": "fr"},
    )
    assert french.status_code == 400
    assert "Cette page attend les champs d’un formulaire" in french.get_data(as_text=True)
