"""The landing page: stalled games, failed mail, the queue, the worker's heartbeat, bounces,
deadlines; and the games list's search, idle filter, oldest-first order and ages."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import update

from service import games
from service.addresses import record_bounce
from service.admin import overview
from service.computer import late_from
from service.mail.worker import beat, run
from service.models import (
    Game,
    ImapReaderHeartbeat,
    InboundServerHeartbeat,
    OutboxMessage,
    WorkerHeartbeat,
    db,
    utcnow,
)
from service.unit_of_work import transaction

from ..smtp import SMTPServer
from .test_games import listed, new_game


@pytest.fixture
def app_config(mail_config: dict[str, Any]) -> dict[str, Any]:
    return mail_config


def section(html: str, element_id: str) -> str:
    """The text of the element with this id (a table, a list, a definition)."""
    found = re.search(rf'id="{element_id}">(.*?)</(table|ul|dd)>', html, re.S)
    assert found is not None, element_id
    return " ".join(unescape(re.sub(r"<[^>]+>", "", found.group(1))).split())


def age_games(app: Flask, days: dict[int, float]) -> None:
    """Put each game's last activity so many days back."""
    with app.app_context(), transaction():
        for game_id, back in days.items():
            moment = utcnow() - timedelta(days=back)
            db.session.execute(update(Game).where(Game.id == game_id).values(updated_at=moment))


def test_the_overview_shows_what_needs_attention(
    app: Flask, admin: FlaskClient, smtp_server: SMTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    stalled = new_game(app, "ann@example.com", "bob@example.com", seed=1)
    busy = new_game(app, "cat@example.com", "dan@example.com", seed=2, days_per_move=3)
    older = new_game(app, "eve@example.com", "fay@example.com", seed=3)
    age_games(app, {stalled: 9, older: 20, busy: 1})
    with app.app_context(), transaction():
        soon = utcnow() + timedelta(hours=5)
        db.session.execute(update(Game).where(Game.id == busy).values(deadline=soon))
        record_bounce("fay@example.com", 550, "5.1.1 User unknown")  # she plays a game

    html = admin.get("/admin/").get_data(as_text=True)
    assert listed(section_html(html, "stalled-games")) == [older, stalled]
    assert listed(section_html(html, "near-deadline-games")) == [busy]
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert sorted(ids) == sorted(set(ids))  # the stalled days' field is not its table's id
    assert "fay@example.com: 550 5.1.1 User unknown, just now" in section(html, "bouncing")
    # Its games are the address's own, not those of every address holding its text.
    games_of_fay = re.search(r'href="(/admin/games\?[^"]+)">games</a>', html)
    assert games_of_fay is not None
    assert unescape(games_of_fay[1]) == "/admin/games?email=fay@example.com"
    assert section(html, "worker-status").startswith("down no worker has passed yet")
    assert section(html, "most-overdue").startswith("#1, due")
    # Ten days makes one game stalled; two hours leaves no deadline near.
    html = admin.get("/admin/", query_string={"stalled": 10, "hours": 2}).get_data(as_text=True)
    assert listed(section_html(html, "stalled-games")) == [older]
    assert "near-deadline-games" not in html
    # Stalled games are counted up to a bound, not through the whole table.
    assert "or more (2)</h2>" in admin.get("/admin/").get_data(as_text=True)
    monkeypatch.setattr(overview, "COUNTED_UP_TO", 1)
    assert "or more (more than 1)</h2>" in admin.get("/admin/").get_data(as_text=True)
    monkeypatch.undo()
    assert admin.get("/admin/", query_string={"stalled": 0}).status_code == 400

    # The worker passes: the queue empties, the refused message counts as failed today.
    smtp_server.handler.refuse["bob@example.com"] = "550 5.1.1 User unknown"
    with app.app_context():
        run(once=True)
    html = admin.get("/admin/").get_data(as_text=True)
    assert section(html, "worker-status").startswith("up last pass just now")
    assert section(html, "most-overdue") == "—"
    # Its link lists the failures of that day, not every failure ever.
    today = utcnow().date().isoformat()
    link = re.search(r'href="(/admin/mail\?status=failed&amp;day=[0-9-]+)">1</a>', html)
    assert link and link.group(1).endswith(f"day={today}")
    assert "bob@example.com" in admin.get(unescape(link.group(1))).get_data(as_text=True)
    # A worker silent for minutes is down.
    with app.app_context(), transaction():
        back = utcnow() - timedelta(minutes=6)
        db.session.execute(update(WorkerHeartbeat).values(beat_at=back))
        failed = db.session.scalars(
            db.select(OutboxMessage).where(OutboxMessage.status == "failed")
        ).one()
        assert failed.failed_at is not None
        failed.failed_at = utcnow() - timedelta(days=2)
    html = admin.get("/admin/").get_data(as_text=True)
    assert section(html, "worker-status").startswith("down last pass 6 minutes ago")
    assert re.search(r'href="/admin/mail\?status=failed&amp;day=[0-9-]+">0</a>', html)


def test_the_overview_lists_the_reply_readers_that_have_run(app: Flask, admin: FlaskClient) -> None:
    """A site that reads no replies shows no reader; one that does shows each kind's last
    sign of life, down after minutes of silence, as the mail worker's."""
    html = admin.get("/admin/").get_data(as_text=True)
    assert "imap-reader-status" not in html and "inbound-server-status" not in html
    with app.app_context():
        beat(InboundServerHeartbeat)
        beat(ImapReaderHeartbeat)
        with transaction():
            back = utcnow() - timedelta(minutes=6)
            db.session.execute(update(ImapReaderHeartbeat).values(beat_at=back))
    html = admin.get("/admin/").get_data(as_text=True)
    assert section(html, "inbound-server-status").startswith("up last sign of life just now")
    assert section(html, "imap-reader-status").startswith("down last sign of life 6 minutes ago")


def section_html(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}">(.*?)</table>', html, re.S)
    assert found is not None, element_id
    return found.group(1)


def test_the_games_list_searches_one_box_and_finds_idle_games(
    app: Flask, admin: FlaskClient
) -> None:
    first = new_game(app, "ann.lee@example.com", "bob@example.com", seed=1)
    second = new_game(app, "cat@example.com", "ann@example.org", seed=2)
    third = new_game(app, "dan@example.com", "eve_x@example.com", seed=3)
    age_games(app, {first: 25, second: 3, third: 10})

    def ids(**query: Any) -> list[int]:
        response = admin.get("/admin/games", query_string=query)
        assert response.status_code == 200
        return listed(response.get_data(as_text=True))

    assert ids(q="ANN") == [second, first]
    assert ids(q="example.org") == [second]
    assert ids(q="dan") == [third]  # a name
    assert ids(q=f"#{third}") == [third]
    assert ids(q=str(first)) == [first]
    assert ids(q="e_x") == [third] and ids(q="%") == []  # wildcards are plain characters
    assert ids(idle=7) == [third, first]
    assert ids(idle=7, sort="oldest") == [first, third]
    assert ids(sort="oldest") == [first, third, second]
    assert admin.get("/admin/games", query_string={"idle": "0"}).status_code == 400

    html = admin.get("/admin/games").get_data(as_text=True)
    search_box = re.search(r'<input[^>]*name="q"[^>]*>', html)
    assert search_box and 'type="search"' in search_box.group(0)  # part of an address will do
    assert re.search(r">all</a> <strong>3</strong>", html)
    assert re.search(r'title="\d{4}-\d\d-\d\d \d\d:\d\d UTC">3 weeks ago</time>', html)
    assert ">1 week ago</time>" in html


def test_the_overview_counts_the_near_deadlines_it_cannot_list(
    app: Flask, admin: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the games it lists, it says how many more have a deadline that near, and links
    to the games list by deadline."""
    ids = [
        new_game(app, f"a{n}@example.com", f"b{n}@example.com", seed=n, days_per_move=3)
        for n in range(3)
    ]
    with app.app_context(), transaction():
        soon = utcnow() + timedelta(hours=5)
        db.session.execute(update(Game).where(Game.id.in_(ids)).values(deadline=soon))
    html = admin.get("/admin/").get_data(as_text=True)
    assert "Deadline within 24 hours (3)</h2>" in html
    assert "All games in play by deadline" not in html
    monkeypatch.setattr(overview, "SHOWN", 2)
    html = admin.get("/admin/").get_data(as_text=True)
    assert listed(section_html(html, "near-deadline-games")) == ids[:2]
    assert "Deadline within 24 hours (3)</h2>" in html
    assert 'href="/admin/games?status=active&amp;sort=deadline"' in html


def test_the_overview_counts_the_bouncing_addresses_it_cannot_list(
    app: Flask, admin: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the addresses it lists, it says how many bounce, and links to the failed emails."""
    games = [new_game(app, f"a{n}@example.com", f"b{n}@example.com", seed=n) for n in range(3)]
    new_game(app, "a9@example.com", "b9@example.com", seed=9)  # no bounce: not listed
    for n in range(3):  # b2 bounced last
        with app.app_context(), transaction():
            record_bounce(f"b{n}@example.com", 550, "5.1.1 User unknown")
    html = admin.get("/admin/").get_data(as_text=True)
    assert "Addresses that bounce (3)</h2>" in html
    assert "Every game in play with an address that bounces" not in html
    monkeypatch.setattr(overview, "SHOWN", 2)
    html = admin.get("/admin/").get_data(as_text=True)
    assert "Addresses that bounce (3)</h2>" in html
    assert "b2@example.com" in html and "b1@example.com" in html
    assert "b0@example.com" not in html
    link = "/admin/games?status=active&amp;bouncing=y"
    assert f'<a href="{link}">Every game in play with an address that bounces</a>' in html
    bouncing = admin.get(unescape(link)).get_data(as_text=True)
    assert sorted(listed(bouncing)) == sorted(games)
    for off in ("n", "no", "0", "off", "false", ""):
        every = admin.get(f"/admin/games?status=active&bouncing={off}").get_data(as_text=True)
        assert len(listed(every)) == 4, off
    assert "b0@example.com" in bouncing and 'name="bouncing" type="checkbox" value="y"' in bouncing


def against_the_computer(app: Flask, keeper: str) -> int:
    """A game of ``keeper`` against the computer, which owes its half of the first exchange."""
    with app.app_context(), transaction():
        return games.create_game(
            games.Seating(keeper, keeper.split("@")[0]), games.Seating.the_computer("easy")
        ).id


def test_the_overview_lists_the_games_whose_computer_move_is_late(
    app: Flask, admin: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A move the computer owes past BOT_DELAY_SECONDS and its margin says no worker makes it:
    the game is listed, the one waiting longest first; one within the margin is not."""
    app.config["BOT_DELAY_SECONDS"] = 60
    late, later, on_time = (against_the_computer(app, f"p{n}@example.com") for n in range(3))
    people = new_game(app, "ann@example.com", "bob@example.com", seed=1)  # no computer
    with app.app_context(), transaction():
        for game_id, back in ((late, 30), (later, 4), (on_time, 2.5), (people, 60)):
            moment = utcnow() - timedelta(minutes=back)
            db.session.execute(update(Game).where(Game.id == game_id).values(updated_at=moment))
        # The minute of delay and two of margin: late from 3 minutes after its last change.
        assert late_from(utcnow() - timedelta(minutes=3)) <= utcnow()
    html = admin.get("/admin/").get_data(as_text=True)
    assert "The computer's move is late (2)</h2>" in html
    assert listed(section_html(html, "computer-late-games")) == [late, later]
    assert "p0 · the computer (easy) both players" in section(html, "computer-late-games")
    assert "1 min after the game last changed" in html
    # Its move made (the game changed just now), the game is no longer listed.
    with app.app_context(), transaction():
        db.session.execute(update(Game).where(Game.id == late).values(updated_at=utcnow()))
    monkeypatch.setattr(overview, "SHOWN", 0)
    html = admin.get("/admin/").get_data(as_text=True)
    assert "The computer's move is late (1)</h2>" in html


def test_the_overview_says_no_computer_move_is_late(app: Flask, admin: FlaskClient) -> None:
    against_the_computer(app, "kim@example.com")  # owed since just now: not late
    html = admin.get("/admin/").get_data(as_text=True)
    assert "The computer's move is late (0)</h2>" in html
    assert "computer-late-games" not in html
