"""Deadlines in emails are in the player's own time zone, once their browser has said it."""

from __future__ import annotations

import itertools

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service.addresses import is_time_zone, time_zone
from service.links import home_token
from service.models import OutboxMessage, db

from ..factories import one_by_one
from ..helpers import csrf_token, statements_run, write_queued


def zone_of(app: Flask, email: str) -> str | None:
    with app.app_context():
        return time_zone(email)


def test_the_first_zone_a_browser_reports_is_kept(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game()
    url = f"/play/{game['keeper']}/time-zone"
    assert client.get(url).status_code == 405
    assert zone_of(app, "kim@example.com") is None
    for wrong in ("", "Mars/Olympus", "../../etc/passwd", "/etc/localtime", "x" * 65):
        assert client.post(url, data={"zone": wrong}).status_code == 400, wrong
    assert zone_of(app, "kim@example.com") is None
    assert client.post(url, data={"zone": "Europe/Paris"}).status_code == 204
    assert client.post(url, data={"zone": "Asia/Tokyo"}).status_code == 204
    assert zone_of(app, "kim@example.com") == "Europe/Paris"
    assert zone_of(app, "sam@example.com") is None
    assert client.post("/play/nonsense/time-zone", data={"zone": "UTC"}).status_code == 404


# Names that load from the zone tree but are no IANA time zone: the server's own zone, the
# POSIX rules template, a placeholder, and the trees of other conventions.
NOT_ZONES = ["localtime", "posixrules", "Factory", "right/UTC", "posix/Europe/Paris"]


@pytest.mark.parametrize("name", NOT_ZONES)
def test_a_file_of_the_zone_tree_that_is_no_zone_is_refused(
    app: Flask, client: FlaskClient, make_game, name: str
) -> None:
    """By the move page's report and by the home page's form alike."""
    game = make_game()
    assert client.post(f"/play/{game['keeper']}/time-zone", data={"zone": name}).status_code == 400
    with app.app_context():
        home = f"/me/{home_token('kim@example.com')}"
    token = csrf_token(client.get(home).get_data(as_text=True))
    refused = client.post(f"{home}/time-zone", data={"csrf_token": token, "zone": name})
    assert refused.status_code == 400
    assert zone_of(app, "kim@example.com") is None
    with app.app_context():
        assert not is_time_zone(name)
        assert all(map(is_time_zone, ["UTC", "Europe/Paris", "America/Argentina/Buenos_Aires"]))


def test_a_zone_already_known_is_read_not_locked(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """The page reports its zone on every load: once the zone is kept, the report locks no
    row (a vacation being taken holds the address's row while it moves the deadlines)."""
    url = f"/play/{make_game()['keeper']}/time-zone"
    with statements_run(app) as first:
        assert client.post(url, data={"zone": "Europe/Paris"}).status_code == 204
    with statements_run(app) as again:
        assert client.post(url, data={"zone": "Europe/Paris"}).status_code == 204
    if app.config["SQLALCHEMY_DATABASE_URI"].startswith("postgresql"):
        assert any("FOR UPDATE" in statement for statement, _ in first)
    assert not any("FOR UPDATE" in statement for statement, _ in again)


def test_turn_emails_give_the_deadline_in_the_known_zone_else_in_utc(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game(seed=5, days_per_move=3)
    client.post(f"/play/{game['keeper']}/time-zone", data={"zone": "America/New_York"})
    for _ in itertools.islice(one_by_one(app, game["id"], 5), 40):
        write_queued(app)
    with app.app_context():
        rows = db.session.scalars(select(OutboxMessage).where(OutboxMessage.kind == "turn")).all()
        bodies = {row.recipient: row.text_body for row in rows}
    assert "America/New_York" in bodies["kim@example.com"]
    assert " UTC." not in bodies["kim@example.com"]
    assert " UTC." in bodies["sam@example.com"]
    assert "America/New_York" not in bodies["sam@example.com"]
