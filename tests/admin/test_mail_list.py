"""The mail list: failure times and errors, a day filter, and failures queued again in bulk."""

from __future__ import annotations

import random
import re
from datetime import timedelta
from html import unescape

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service import games, notify
from service.mail.worker import drain
from service.models import AdminAction, Game, OutboxMessage, db, utcnow
from service.unit_of_work import transaction

from ..helpers import csrf_token, random_move
from .conftest import ADMIN


def listed(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<td><a href="/admin/mail/(\d+)">', html)]


def fail(app: Flask, errors: dict[int, str], days_ago: int = 0) -> None:
    """Mark messages failed with these errors, ``days_ago`` days back."""
    with app.app_context():
        for message_id, error in errors.items():
            message = db.session.get_one(OutboxMessage, message_id)
            message.status, message.last_error = "failed", error
            message.failed_at = utcnow() - timedelta(days=days_ago)
            message.created_at = utcnow() - timedelta(days=days_ago)
        db.session.commit()


def message_ids(app: Flask) -> list[int]:
    with app.app_context():
        return list(db.session.scalars(select(OutboxMessage.id).order_by(OutboxMessage.id)))


def statuses(app: Flask) -> dict[int, str]:
    with app.app_context():
        return dict(db.session.execute(select(OutboxMessage.id, OutboxMessage.status)).all())


def test_failures_show_when_and_why_and_filter_by_day(
    app: Flask, admin: FlaskClient, make_game
) -> None:
    make_game(seed=1)
    make_game(seed=2)
    first, second, third, _ = message_ids(app)
    fail(app, {first: "550 5.1.1 User unknown"}, days_ago=3)
    fail(app, {second: "SMTPUTF8Error: cannot be written"})
    html = admin.get("/admin/mail", query_string={"status": "failed"}).get_data(as_text=True)
    assert listed(html) == [second, first]
    rows = [
        " ".join(unescape(re.sub(r"<[^>]+>", "", row)).split())
        for row in re.findall(r"<tr>(.*?)</tr>", html, re.S)[1:]
    ]
    assert rows[1].endswith("3 days ago 550 5.1.1 User unknown")
    assert rows[0].endswith("just now SMTPUTF8Error: cannot be written")
    three_days_ago = (utcnow() - timedelta(days=3)).date().isoformat()
    assert listed(admin.get(f"/admin/mail?day={three_days_ago}").get_data(as_text=True)) == [first]
    today = utcnow().date().isoformat()
    assert sorted(listed(admin.get(f"/admin/mail?day={today}").get_data(as_text=True))) == [
        m for m in message_ids(app) if m != first
    ]
    assert admin.get("/admin/mail?day=yesterday").status_code == 400
    assert third not in listed(admin.get(f"/admin/mail?day={three_days_ago}").text)


def test_selected_failures_are_queued_again_in_bulk(
    app: Flask, admin: FlaskClient, make_game
) -> None:
    make_game(seed=1)
    make_game(seed=2)
    first, second, third, fourth = message_ids(app)
    fail(app, {first: "550 5.1.1 User unknown", second: "451 try later", third: "boom"})
    page = admin.get("/admin/mail", query_string={"status": "failed"}).get_data(as_text=True)
    assert f'name="message" value="{first}" id="pick-{first}"' in page
    assert f'value="{fourth}"' not in page  # a queued message has no box
    token = csrf_token(page)

    # A permanent refusal among them: nothing is queued until the admin confirms. The list it
    # was sent from shows again, with its filter and its ticks.
    assert 'action="/admin/mail/requeue?status=failed"' in page
    response = admin.post(
        "/admin/mail/requeue?status=failed",
        data={"csrf_token": token, "message": [first, second]},
    )
    assert response.status_code == 400
    again = response.get_data(as_text=True)
    assert "refused 1 of these for good" in again
    assert listed(again) == [third, second, first]  # the failures only, as filtered
    for ticked in (first, second):
        assert f'id="pick-{ticked}" aria-label="Queue message {ticked} again"' in again
        assert re.search(rf'id="pick-{ticked}"[^>]*checked>', again), ticked
    assert not re.search(rf'id="pick-{third}"[^>]*checked>', again)
    assert statuses(app)[first] == statuses(app)[second] == "failed"
    confirmed = admin.post(
        "/admin/mail/requeue?status=failed&day=2000-01-01",
        data={"csrf_token": token, "message": [second]},
    )
    assert confirmed.status_code == 303
    assert confirmed.headers["Location"] == "/admin/mail?status=failed&day=2000-01-01"
    fail(app, {second: "451 try later"})

    admin.post("/admin/mail/requeue", data={"csrf_token": token, "message": [second, third]})
    assert "2 messages are queued again." in admin.get("/admin/mail").get_data(as_text=True)
    assert (statuses(app)[second], statuses(app)[third], statuses(app)[first]) == (
        "queued",
        "queued",
        "failed",
    )
    admin.post(
        "/admin/mail/requeue", data={"csrf_token": token, "message": [first], "confirm": "y"}
    )
    assert statuses(app)[first] == "queued"
    with app.app_context():
        by_admin = select(AdminAction).where(AdminAction.admin == ADMIN)
        trail = db.session.scalars(by_admin.order_by(AdminAction.id)).all()
        assert [(row.admin, row.action, row.message_id) for row in trail] == [
            (ADMIN, "requeue", second),  # alone, from the filtered list
            (ADMIN, "requeue", third),  # newest first, as the mail page lists them
            (ADMIN, "requeue", second),
            (ADMIN, "requeue", first),
        ]

    # Nothing ticked, or a message that is not there.
    admin.post("/admin/mail/requeue", data={"csrf_token": token})
    assert "Tick the failed messages" in admin.get("/admin/mail").get_data(as_text=True)
    for number in (999, 3_000_000_000, -1):
        missing = admin.post("/admin/mail/requeue", data={"csrf_token": token, "message": [number]})
        assert missing.status_code == 404, number
    # One that is no longer failed is named, the others go.
    fail(app, {second: "451 try later"})
    admin.post("/admin/mail/requeue", data={"csrf_token": token, "message": [second, fourth]})
    html = unescape(admin.get("/admin/mail").get_data(as_text=True))
    assert "1 message is queued again." in html
    assert f"#{fourth}: message {fourth} is queued, not failed" in html


def test_of_two_failed_emails_one_replaces_the_newer_is_queued_again(
    app: Flask, admin: FlaskClient, make_game
) -> None:
    """Two link emails to one player, both failed: the newer says more, and a player never
    has two waiting."""
    game = make_game(seed=1)
    failed = []
    for _ in range(2):
        with app.app_context(), transaction():
            notify.link(db.session.get_one(Game, game["id"]).player("keeper"))
        (newest,) = [m for m in message_ids(app) if m not in failed][-1:]
        fail(app, {newest: "451 try later"})
        failed.append(newest)
    older, newer = failed
    token = csrf_token(admin.get("/admin/mail", query_string={"status": "failed"}).text)
    admin.post("/admin/mail/requeue", data={"csrf_token": token, "message": [older, newer]})
    html = unescape(admin.get("/admin/mail").get_data(as_text=True))
    assert "1 message is queued again." in html
    assert f"#{older}: A newer link email for this player is already queued." in html
    assert (statuses(app)[newer], statuses(app)[older]) == ("queued", "failed")


def skipped(app: Flask) -> list[OutboxMessage]:
    with app.app_context():
        query = select(OutboxMessage).where(OutboxMessage.status == "skipped")
        return list(db.session.scalars(query.order_by(OutboxMessage.id)))


def test_a_skipped_email_says_why(app: Flask, admin: FlaskClient, client, make_game) -> None:
    """Withdrawn by the player's move, or found moot by its kind when the worker came to it:
    the row says which, and the message's page shows it."""
    game = make_game(seed=1)
    rng = random.Random(1)
    while not skipped(app):
        random_move(client, game, rng)
    (withdrawn,) = skipped(app)
    assert withdrawn.kind == "turn"
    assert withdrawn.last_error == "skipped: the player moved before it went"
    page = unescape(admin.get(f"/admin/mail/{withdrawn.id}").get_data(as_text=True))
    assert "Why" in page and "the player moved before it went" in page
    assert "Never written" in page and "Written when it is sent" not in page
    listed = unescape(admin.get("/admin/mail?status=skipped").get_data(as_text=True))
    assert "(turn, never written)" in listed and "written when sent" not in listed

    other = make_game(seed=2)
    with app.app_context():
        with transaction():
            games.cancel_game(other["id"], "ada")
        drain()
    moot = [m for m in skipped(app) if m.game_id == other["id"]]
    assert [m.kind for m in moot] == ["invitation", "invitation"]
    assert {m.last_error for m in moot} == {"skipped: its game was no longer in play"}


def test_a_games_emails_are_listed_from_its_page(app: Flask, admin: FlaskClient, make_game) -> None:
    one, other = make_game(seed=1), make_game(seed=2)
    with app.app_context():
        of_game = dict(db.session.execute(select(OutboxMessage.id, OutboxMessage.game_id)).all())
    page = admin.get(f"/admin/games/{one['id']}").get_data(as_text=True)
    link = f"/admin/mail?game={one['id']}"
    assert f'href="{link}"' in page
    html = admin.get(link).get_data(as_text=True)
    assert sorted(listed(html)) == sorted(m for m, game in of_game.items() if game == one["id"])
    assert other["id"] != one["id"] and listed(html)
    assert f'name="game" type="number" value="{one["id"]}"' in html
    csv = admin.get(f"/admin/mail.csv?game={other['id']}").get_data(as_text=True)
    assert len(csv.splitlines()) == 1 + sum(game == other["id"] for game in of_game.values())
    assert admin.get("/admin/mail?game=abc").status_code == 400


def test_ticks_pushed_off_the_page_are_kept(app: Flask, admin: FlaskClient, make_game) -> None:
    for seed in range(26):
        make_game(seed=seed)
    ids = message_ids(app)
    fail(app, {m: "451 try later" for m in ids[1:51]} | {ids[1]: "550 5.1.1 User unknown"})
    page = admin.get("/admin/mail?status=failed").get_data(as_text=True)
    assert ids[1] in listed(page)
    fail(app, {ids[51]: "451 try later"})  # a newer failure pushes the oldest to page two
    response = admin.post(
        "/admin/mail/requeue?status=failed",
        data={"csrf_token": csrf_token(page), "message": [ids[1], ids[2]]},
    )
    assert response.status_code == 400
    again = response.get_data(as_text=True)
    assert ids[1] not in listed(again)
    assert f'<input type="hidden" name="message" value="{ids[1]}">' in again
    assert re.search(rf'id="pick-{ids[2]}"[^>]*checked>', again)
    confirmed = admin.post(
        "/admin/mail/requeue?status=failed",
        data={"csrf_token": csrf_token(again), "message": [ids[1], ids[2]], "confirm": "y"},
    )
    assert confirmed.status_code == 303
    assert statuses(app)[ids[1]] == statuses(app)[ids[2]] == "queued"


def test_a_requeue_from_a_list_address_that_is_no_list_changes_nothing(
    app: Flask, admin: FlaskClient, make_game
) -> None:
    make_game(seed=1)
    first = message_ids(app)[0]
    fail(app, {first: "451 try later"})
    token = csrf_token(admin.get("/admin/mail").get_data(as_text=True))
    refused = admin.post(
        "/admin/mail/requeue?status=failed&after=garbage",
        data={"csrf_token": token, "message": [first]},
    )
    assert refused.status_code == 400
    assert statuses(app)[first] == "failed"
