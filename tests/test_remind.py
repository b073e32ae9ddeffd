"""Reminding: a player waiting on their opponent's move asks the service to email them."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from html import unescape
from typing import Any

import pytest
import time_machine
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select, update

from service import homes
from service.game_text import from_text
from service.models import Event, Game, OutboxMessage, db, utcnow
from service.unit_of_work import transaction

from .helpers import pick_action
from .test_safe_methods import snapshot


def view(client: FlaskClient, token: str) -> dict[str, Any]:
    return client.get(f"/api/play/{token}").get_json()


def remind(client: FlaskClient, token: str, version: object) -> Any:
    return client.post(f"/api/play/{token}/remind", json={"version": version})


def kim_waits(app: Flask, client: FlaskClient, game: dict[str, Any], days: float = 2) -> int:
    """Kim gives her half of the opening exchange; Sam's half has waited ``days`` since.
    Returns the game's version."""
    seen = view(client, game["keeper"])
    move = {"version": seen["version"], **pick_action(seen, random.Random(1))}
    assert client.post(f"/api/play/{game['keeper']}", json=move).status_code == 200
    last_move_ago(app, game["id"], days)
    return view(client, game["keeper"])["version"]


def last_move_ago(app: Flask, game_id: int, days: float) -> None:
    """Set the game's last move ``days`` back."""
    with app.app_context(), transaction():
        since = utcnow() - timedelta(days=days)
        db.session.execute(update(Game).where(Game.id == game_id).values(updated_at=since))


def reminders(app: Flask) -> list[tuple[str, str]]:
    with app.app_context():
        rows = db.session.execute(
            select(OutboxMessage.kind, OutboxMessage.recipient).where(
                OutboxMessage.kind == "reminded"
            )
        )
        return [(kind, recipient) for kind, recipient in rows]


def reminder_status(app: Flask) -> str | None:
    """The status of the one reminder queued."""
    with app.app_context():
        return db.session.scalar(
            select(OutboxMessage.status).where(OutboxMessage.kind == "reminded")
        )


def test_a_move_awaited_a_day_may_be_reminded_of_once(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver, mail_config
) -> None:
    game = make_game(seed=3)
    version = kim_waits(app, client, game)
    answer = remind(client, game["keeper"], version)
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["version"] == version  # the game itself is as it was
    assert reminders(app) == [("reminded", "sam@example.com")]
    with app.app_context():
        event = db.session.scalars(select(Event).where(Event.kind == "reminded")).one()
        assert (event.seat, event.version) == ("keeper", version)
    deliver()
    received = smtp_server.handler.to("sam@example.com")
    (email,) = [each for each in received if "awaits" in str(each.message["Subject"])]
    assert email.message["Subject"] == f"Split Mind, game {game['id']}: Kim awaits your move"
    assert f"Kim is waiting for your move in game {game['id']}" in email.text
    before = snapshot(app)
    again = remind(client, game["keeper"], version)
    assert (again.status_code, again.get_json()["error"]["code"]) == (409, "refused")
    assert "reminded of this move already" in again.get_json()["error"]["message"]
    assert snapshot(app) == before


def test_no_reminder_too_soon_by_the_one_who_owes_or_against_a_stale_version(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game(seed=3)
    both_owe = view(client, game["keeper"])["version"]
    owed = remind(client, game["keeper"], both_owe)
    assert (owed.status_code, owed.get_json()["error"]["code"]) == (409, "refused")
    assert owed.get_json()["error"]["message"] == (
        "You owe a move too: make yours before reminding your opponent of theirs."
    )
    page = client.post(f"/play/{game['keeper']}/remind", data={"version": both_owe})
    assert page.status_code == 409
    assert "You owe a move too: make yours before reminding Sam of theirs." in unescape(
        page.get_data(as_text=True)
    )
    version = kim_waits(app, client, game, days=0.5)
    before = snapshot(app)
    soon = remind(client, game["keeper"], version)
    assert soon.status_code == 409
    said = soon.get_json()["error"]["message"]
    assert said.startswith("A move may be reminded of once it has waited a day. It may be from ")
    with app.app_context():
        ready = db.session.get_one(Game, game["id"]).updated_at + timedelta(days=1)
    assert said.endswith(f"from {ready.isoformat(timespec='seconds')}.")
    sam_owes = remind(client, game["shadow"], version)
    assert "owes no move now" in sam_owes.get_json()["error"]["message"]
    stale = remind(client, game["keeper"], version - 1)
    assert (stale.status_code, stale.get_json()["error"]["code"]) == (409, "stale")
    for body in ({}, {"version": "1"}, {"version": version, "note": "hurry"}):
        malformed = client.post(f"/api/play/{game['keeper']}/remind", json=body)
        assert malformed.status_code == 400
    assert remind(client, game["keeper"] + "x", version).status_code == 404
    assert snapshot(app) == before
    assert reminders(app) == []


def test_no_reminder_once_the_deadline_has_passed(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """The game is the deadline sweep's to end, as for a resignation."""
    game = make_game(seed=3, days_per_move=3)
    version = kim_waits(app, client, game)
    with app.app_context(), transaction():
        db.session.get_one(Game, game["id"]).deadline = utcnow() - timedelta(hours=1)
    late = remind(client, game["keeper"], version)
    assert late.status_code == 409
    said = late.get_json()["error"]["message"]
    assert said == "The move's deadline has passed: the game ends by timeout."
    assert reminders(app) == []


def test_an_opponent_who_stopped_the_game_s_emails_gets_none_and_nobody_is_told(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """The one who asked is answered as if it went: a person's choice of emails is theirs."""
    game = make_game(seed=3)
    version = kim_waits(app, client, game)
    with app.app_context(), transaction():
        db.session.get_one(Game, game["id"]).player("shadow").notify = False
    assert remind(client, game["keeper"], version).status_code == 200
    assert reminders(app) == []
    again = remind(client, game["keeper"], version)
    assert "reminded of this move already" in again.get_json()["error"]["message"]


def test_a_reminder_held_back_is_dropped_once_a_later_move_is_owed(
    app: Flask, client: FlaskClient, make_game, deliver
) -> None:
    """Sam moves, and owes again at a later version before the reminder went (the mail
    held back by an outage): it was about a move made, and goes no more."""
    game = make_game(seed=3)
    version = kim_waits(app, client, game)
    assert remind(client, game["keeper"], version).status_code == 200
    rng = random.Random(5)
    while True:
        views = {seat: view(client, game[seat]) for seat in ("keeper", "shadow")}
        if views["shadow"]["your_turn"] and views["shadow"]["version"] > version:
            break
        seat = next(seat for seat, seen in views.items() if seen["your_turn"])
        move = {"version": views[seat]["version"], **pick_action(views[seat], rng)}
        assert client.post(f"/api/play/{game[seat]}", json=move).status_code == 200
    deliver()
    assert reminder_status(app) == "skipped"


def test_an_opponent_on_vacation_is_not_reminded(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game(seed=3)
    version = kim_waits(app, client, game)
    with app.app_context(), transaction():
        homes.take_vacation("sam@example.com", 5)
    version = view(client, game["keeper"])["version"]
    away = remind(client, game["keeper"], version)
    assert away.status_code == 409 and "on vacation" in away.get_json()["error"]["message"]
    assert reminders(app) == []
    assert "Remind Sam of their move" not in client.get(f"/play/{game['keeper']}").text


def test_the_reminder_is_dropped_once_the_move_is_made(
    app: Flask, client: FlaskClient, make_game, deliver
) -> None:
    game = make_game(seed=3)
    version = kim_waits(app, client, game)
    assert remind(client, game["keeper"], version).status_code == 200
    seen = view(client, game["shadow"])
    move = {"version": seen["version"], **pick_action(seen, random.Random(2))}
    assert client.post(f"/api/play/{game['shadow']}", json=move).status_code == 200
    deliver()
    assert reminder_status(app) == "skipped"


def test_the_page_offers_the_reminder_while_waiting_and_says_what_it_did(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game(seed=3)
    assert "Remind Sam of their move" not in client.get(f"/play/{game['keeper']}").text
    version = kim_waits(app, client, game, days=0.5)
    page = client.get(f"/play/{game['keeper']}").text
    with app.test_request_context():  # the page says from when, in UTC as no zone is known
        ready = db.session.get_one(Game, game["id"]).updated_at + timedelta(days=1)
        when = from_text(ready)
    assert f"You may remind Sam of their move from {when}: a day after the last move." in (
        unescape(page)
    )
    assert "Remind Kim" not in client.get(f"/play/{game['shadow']}").text  # Sam owes it
    path = f"/play/{game['keeper']}/remind"
    soon = client.post(path, data={"version": version})  # from a page read earlier, say
    assert soon.status_code == 409
    assert "A move may be reminded of once it has waited a day: nothing was sent yet." in soon.text
    assert "You may remind Sam from " in soon.text and " UTC." in soon.text
    last_move_ago(app, game["id"], 2)
    page = client.get(f"/play/{game['keeper']}").text
    assert "Remind Sam of their move" in page
    assert "once per move, from " in page
    sent = client.post(path, data={"version": version})
    assert sent.status_code == 303 and sent.headers["Location"].endswith(f"/play/{game['keeper']}")
    assert "Sam is reminded of the move they owe." in unescape(client.get(sent.location).text)
    again = client.post(path, data={"version": version})
    assert again.status_code == 409
    assert "Sam has been reminded of this move already: nothing more was sent." in again.text
    assert client.post(path, data={}).status_code == 400
    assert reminders(app) == [("reminded", "sam@example.com")]


@pytest.fixture
def app_config(mail_config: dict[str, Any]) -> dict[str, Any]:
    return mail_config


def test_the_page_offers_the_reminder_only_when_it_may_be_sent(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """Before the day has passed the page says from when, with no button; once reminded it
    says so, with no button, however often it is read (and kept as rendered)."""
    game = make_game(seed=3)
    page = f"/play/{game['keeper']}"
    version = kim_waits(app, client, game, days=0.5)
    for _ in range(2):  # the second read is the page kept as rendered
        soon = unescape(client.get(page).text)
        assert "You may remind Sam of their move from " in soon
        assert "Send the reminder" not in soon
    last_move_ago(app, game["id"], 2)  # the game's version is the same: the time is not
    for _ in range(2):
        ready = unescape(client.get(page).text)
        assert "Send the reminder" in ready and "Sam is reminded" not in ready
    assert client.post(f"{page}/remind", data={"version": version}).status_code == 303
    for _ in range(2):
        done = unescape(client.get(page).text)
        assert "Sam is reminded of the move they owe." in done
        assert "Send the reminder" not in done and "You may remind Sam" not in done
    # Reminded through the API: the page read next says so too.
    other = make_game(seed=4)
    other_version = kim_waits(app, client, other, days=2)
    assert "Send the reminder" in client.get(f"/play/{other['keeper']}").text
    assert remind(client, other["keeper"], other_version).status_code == 200
    assert "Send the reminder" not in client.get(f"/play/{other['keeper']}").text


def test_the_page_offers_no_reminder_once_the_deadline_has_passed(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """The game is the sweep's to end: the page says so in the refusal's words, with no
    button, also as kept from before the deadline (the time passes, not the game)."""
    game = make_game(seed=3, days_per_move=3)
    page = f"/play/{game['keeper']}"
    version = kim_waits(app, client, game)
    assert "Send the reminder" in client.get(page).text
    with app.app_context():
        due = db.session.get_one(Game, game["id"]).deadline
    assert due is not None
    with time_machine.travel(due + timedelta(minutes=1), tick=False):
        for _ in range(2):  # the second read is the page kept as rendered
            late = unescape(client.get(page).text)
            assert "The deadline of the move owed has passed: the game ends by timeout." in late
            assert "Send the reminder" not in late and "Remind Sam" not in late
        refused = client.post(f"{page}/remind", data={"version": version})
        assert refused.status_code == 409 and "nothing was sent" in refused.text
        # Said once, in the refusal's words.
        assert unescape(refused.text).count("The deadline of the move owed has passed") == 1
    assert reminders(app) == []


def test_the_time_a_reminder_may_be_sent_from_is_a_minute_it_may(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """Sam's move has waited since 10:30:45 on 1 June: it may be reminded of from 10:30:45 the
    next day. The page and the refusal name 10:31, the first minute that has come by then,
    not 10:30, when a reminder asked for is refused."""
    game = make_game(seed=3)
    moved = datetime(2026, 6, 1, 10, 30, 45, tzinfo=UTC)
    with time_machine.travel(moved, tick=False):
        version = kim_waits(app, client, game, days=0)
    with time_machine.travel(moved + timedelta(days=1, seconds=-25), tick=False):
        page = unescape(client.get(f"/play/{game['keeper']}").text)
        soon = client.post(f"/play/{game['keeper']}/remind", data={"version": version})
    assert "from Jun 2, 2026, 10:31\u202fAM UTC: a day after the last move." in page
    assert soon.status_code == 409
    assert "You may remind Sam from Jun 2, 2026, 10:31\u202fAM UTC." in unescape(soon.text)
