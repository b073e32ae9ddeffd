"""Log lines have one format everywhere and never carry a link's token.

A token in a path is a player's (or an inviter's) credential: a 500 on
``/api/play/<token>`` must not write it to the error log, in Flask's line, in
the traceback, or in gunicorn's own lines.
"""

from __future__ import annotations

import json
import logging
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from flask import url_for
from itsdangerous import URLSafeSerializer
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from service import create_app
from service.links import SALT
from service.logs import REDACTED, redact
from service.models import db

from .conftest import base_config
from .servers import (
    ROOT,
    clean_env,
    gunicorn_command,
    gunicorn_env,
    http_get,
    run_flask,
    run_gunicorn,
)
from .smtp import free_port

pytestmark = pytest.mark.both_backends


SECRET = "test-secret-key"
TEXT_LINE = re.compile(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (?P<level>[A-Z]+) \[(?P<pid>\d+)\] "
    r"(?P<logger>[\w.]+): (?P<message>.*)$"
)


def signed_token(player_id: int = 1) -> str:
    """A well-signed player token, so the request reaches the database."""
    return URLSafeSerializer(SECRET, salt=SALT).dumps([player_id, "k" * 43])


@pytest.fixture
def broken_app_config(tmp_path: Path) -> dict:
    """Settings of an app whose database has no tables (as if it went away)."""
    config = base_config(f"sqlite:///{tmp_path / 'empty.sqlite'}", tmp_path / "instance")
    return {**config, "TESTING": False}


def test_every_token_route_is_redacted(app) -> None:
    token = "Wzk5LCJrZXkiXQ.abc-DEF_123"
    with app.test_request_context():
        routes = [rule for rule in app.url_map.iter_rules() if "token" in rule.arguments]
        urls = [url_for(rule.endpoint, token=token, _external=True) for rule in routes]
    assert len(urls) >= 6
    for url in urls:
        assert token not in redact(f"Exception on {url} [GET]"), url
        assert REDACTED in redact(url)
    assert redact("/play/abc/language and /api/play/def") == (
        f"/play/{REDACTED}/language and /api/play/{REDACTED}"
    )
    assert redact("/display/abc /admin/games/3") == "/display/abc /admin/games/3"


def test_a_mangled_path_s_token_is_redacted_too() -> None:
    """Doubled slashes, a quote before the token, capitals: no route matches such a path, but
    gunicorn and the app's error lines write it as it came."""
    token = "LEAKCHECKQQQQ.sigXYZ"
    for path in (
        f"/api/play//{token}",
        f"/play///{token}/review",
        f"/api/play/'{token}",
        f'/api/play/"{token}',
        f"/API/PLAY/{token}",
        f"/Me/{token}",
    ):
        line = f"Invalid HTTP request line: 'GET {path} HTTP/1.1'"
        assert token not in redact(line), path
        assert REDACTED in redact(line), path


def test_a_reply_tag_is_redacted() -> None:
    """A reply address's tag is the player's credential, as their link is."""
    tag = f"12.3.{'k' * 26}"
    assert redact(f"rcpt TO:<play+{tag}@a.org>") == f"rcpt TO:<play+{REDACTED}@a.org>"
    assert redact(f"TO:<PLAY+{tag.upper()}@A.ORG>") == f"TO:<PLAY+{REDACTED}@A.ORG>"
    assert redact("kim+news@example.org") == "kim+news@example.org"


def test_a_line_break_a_sender_wrote_stays_in_its_log_line(
    app, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reply's headers are a stranger's text, decoded (an encoded word may hold a line
    break): the line that names one is one line, and forges no other."""
    from service.replies.inbound import receive

    forged = "2026-12-07 00:00:00,000 ERROR [1] service.games: game 1 forged"
    encoded = "=?utf-8?q?auto-replied=0A" + forged.replace(" ", "_") + "?="
    raw = (
        "From: kim@example.com\r\nTo: play@splitmind.test\r\n"
        f"Auto-Submitted: {encoded}\r\nSubject: away\r\n\r\nBack soon.\r\n"
    ).encode()
    capsys.readouterr()
    with app.app_context():
        assert receive(raw).status == "dropped"
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and TEXT_LINE.match(lines[0]), lines
    assert lines[0].endswith(f"auto-replied\\n{forged.lower()}")  # read in lower case


def test_a_500_on_a_token_path_logs_no_token(
    broken_app_config: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    app = create_app(broken_app_config)
    token = signed_token()
    response = app.test_client().get(f"/api/play/{token}")
    assert response.status_code == 500
    err = capsys.readouterr().err
    assert token not in err
    first = err.splitlines()[0]
    match = TEXT_LINE.match(first)
    assert match, first
    assert match["level"] == "ERROR" and match["logger"] == "service"
    assert match["message"] == f"Exception on /api/play/{REDACTED} [GET]"
    assert "Traceback" in err and "no such table: players" in err


def test_json_lines_carry_time_level_process_logger_and_message(
    broken_app_config: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    app = create_app({**broken_app_config, "LOG_FORMAT": "json"})
    token = signed_token()
    assert app.test_client().post(f"/play/{token}/language", data={}).status_code == 500
    logging.getLogger("service.test").info("opened /invitations/%s", token)
    err = capsys.readouterr().err
    assert token not in err
    lines = [json.loads(line) for line in err.splitlines()]
    assert [line["logger"] for line in lines] == ["service", "service.test"]
    error, info = lines
    assert {"time", "level", "pid", "logger", "message", "exc_info"} <= set(error)
    assert error["level"] == "ERROR" and isinstance(error["pid"], int)
    assert error["message"] == f"Exception on /play/{REDACTED}/language [POST]"
    assert "no such table" in error["exc_info"]
    assert info["message"] == f"opened /invitations/{REDACTED}" and info["level"] == "INFO"


def test_log_level_leaves_out_lines_below_it(
    broken_app_config: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    create_app({**broken_app_config, "LOG_LEVEL": "warning"})
    logging.getLogger("service.test").info("not written")
    logging.getLogger("service.test").warning("written")
    err = capsys.readouterr().err
    assert "not written" not in err and "WARNING" in err and "written" in err


def test_gunicorn_access_lines_follow_the_log_level(tmp_path: Path) -> None:
    """An access line is an INFO line: LOG_LEVEL=WARNING leaves it out, as every other."""
    port = free_port()
    command = [
        f"127.0.0.1:{port}" if part == "127.0.0.1:0" else part
        for part in gunicorn_command("service:create_app()")
    ]
    env = gunicorn_env(tmp_path, LOG_LEVEL="WARNING")
    process = subprocess.Popen(command, env=env, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                assert http_get(port, "/rules").status == 200
                break
            except ConnectionRefusedError:
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.1)
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    assert " gunicorn.access: " not in err, err
    assert " INFO " not in err, err


def test_gunicorn_logs_the_app_error_without_the_token(tmp_path: Path) -> None:
    """The real app under the project's gunicorn.conf.py, on a database with no tables."""
    token = signed_token()
    env = gunicorn_env(tmp_path, DATABASE_URL=f"sqlite:///{tmp_path / 'empty.sqlite'}")
    with run_gunicorn("service:create_app()", env, tmp_path) as server:
        assert http_get(server.port, f"/api/play/{token}").status == 500
        (access,) = server.logged("gunicorn.access")
    err = server.stderr()
    assert token not in err
    assert server.stdout() == ""  # every line on standard error, the access log's too
    assert f"Exception on /api/play/{REDACTED} [GET]" in err
    assert "no such table: players" in err
    for line in err.splitlines():
        if " gunicorn.error: " in line:
            assert TEXT_LINE.match(line), line  # gunicorn's own lines share the format
    match = TEXT_LINE.match(access)
    assert match and match["logger"] == "gunicorn.access", access
    assert '"GET" 500 ' in match["message"]


def test_gunicorn_own_error_lines_leave_out_the_token(tmp_path: Path) -> None:
    """gunicorn logs "Error handling request <path>" for an app that raises."""
    token = signed_token()
    env = gunicorn_env(tmp_path, LOG_FORMAT="json")
    with run_gunicorn("tests.raising_wsgi:app", env, tmp_path) as server:
        assert http_get(server.port, f"/rematch/{token}").status == 500
    err = server.stderr()
    assert token not in err + server.stdout()
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    errors = [line for line in lines if line["message"].startswith("Error handling request")]
    assert errors, err
    assert errors[0]["message"].endswith(f" /rematch/{REDACTED}")
    assert errors[0]["logger"] == "gunicorn.error"
    assert f"cannot answer /rematch/{REDACTED}" in errors[0]["exc_info"]


def test_migrations_log_in_the_service_format(tmp_path: Path) -> None:
    env = clean_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'x.sqlite'}",
        SECRET_KEY="test-secret-key",
        LOG_FORMAT="json",
    )
    result = run_flask("db", "upgrade", env=env)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stderr.splitlines()]
    assert lines and {line["logger"] for line in lines} == {"alembic.runtime.migration"}
    assert any(line["message"].startswith("Running upgrade") for line in lines)


def test_a_database_error_shows_its_statement_without_the_values(pg_app) -> None:
    """Values may be what a player wrote or a credential an email carries: an error, and the
    log line that reports it, names the statement without them."""
    secret = "play+4.2." + "q" * 26
    with pg_app.app_context(), pytest.raises(DBAPIError) as refused:
        db.session.execute(text("SELECT CAST(:value AS text), 1 / 0"), {"value": secret})
    assert "SELECT CAST" in str(refused.value)
    assert secret not in str(refused.value) and "parameters hidden" in str(refused.value)
