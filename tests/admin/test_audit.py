"""The audit trail of admin actions across games, and the lists exported as CSV."""

from __future__ import annotations

import csv
import gc
import io
import re
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service.admin import export
from service.admin.auth import create_admin
from service.models import Game, OutboxMessage, db
from service.unit_of_work import transaction

from .conftest import ADMIN, PASSWORD, shown_version, sign_in, submit


def player_id(app: Flask, game_id: int, seat: str) -> int:
    with app.app_context():
        return db.session.get_one(Game, game_id).player(seat).id


def rows(response: Any) -> list[list[str]]:
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert "attachment" in response.headers["Content-Disposition"]
    return list(csv.reader(io.StringIO(response.get_data(as_text=True))))


def listed(client: FlaskClient, **query: Any) -> list[str]:
    """The audit page's rows as ``admin action game``."""
    html = client.get("/admin/audit", query_string=query).get_data(as_text=True)
    table = re.search(r'<table class="list audit">.*?</table>', html, re.S)
    if table is None:
        return []
    found = re.findall(r"<tr>(.*?)</tr>", table.group(0), re.S)[1:]
    cells = [re.findall(r"<td>(.*?)</td>", row, re.S) for row in found]
    return [
        " ".join(re.sub(r"<[^>]+>", "", cell).strip() for cell in row[1:4]).strip() for row in cells
    ]


def test_every_admin_action_is_in_the_trail(app: Flask, admin: FlaskClient, make_game) -> None:
    first, second = make_game(seed=1)["id"], make_game(seed=2)["id"]
    with app.app_context(), transaction():
        create_admin("bob", PASSWORD)
    bob = app.test_client()
    assert sign_in(bob, "bob").status_code == 303
    page = f"/admin/games/{first}"
    submit(admin, page, f"{page}/players/{player_id(app, first, 'keeper')}/rotate", confirm="y")
    submit(bob, page, f"{page}/players/{player_id(app, first, 'shadow')}/resend")
    other = f"/admin/games/{second}"
    submit(bob, other, f"{other}/cancel", confirm="y", version=shown_version(bob, second))
    with app.app_context():
        message = db.session.scalars(
            select(OutboxMessage).where(OutboxMessage.game_id == first)
        ).first()
        message.status, message.last_error = "failed", "421 try later"
        db.session.commit()
        message_id = message.id
    submit(admin, "/admin/mail", f"/admin/mail/{message_id}/requeue")

    assert listed(admin) == [
        f"{ADMIN} requeue #{first}",
        f"bob cancel #{second}",
        f"bob resend #{first}",
        f"{ADMIN} rotate #{first}",
        "the command line create admin",  # bob
        "the command line create admin",  # ada
    ]
    assert listed(admin, admin="bob") == [f"bob cancel #{second}", f"bob resend #{first}"]
    assert listed(admin, game=second) == [f"bob cancel #{second}"]
    assert listed(admin, admin=ADMIN, game=second) == []

    exported = rows(admin.get("/admin/audit.csv", query_string={"admin": ADMIN}))
    assert exported[0] == ["id", "created_at", "admin", "action", "game_id", "message_id", "note"]
    assert [(row[2], row[3], row[4], row[5]) for row in exported[1:]] == [
        (ADMIN, "requeue", str(first), str(message_id)),
        (ADMIN, "rotate", str(first), ""),
    ]
    assert exported[2][6] == "rotated the keeper's link"


def test_the_audit_filters_refuse_what_they_do_not_know(admin: FlaskClient) -> None:
    assert admin.get("/admin/audit", query_string={"admin": "nobody"}).status_code == 400
    assert admin.get("/admin/audit", query_string={"game": "x"}).status_code == 400
    assert admin.get("/admin/audit.csv", query_string={"game": "0"}).status_code == 400
    nothing = admin.get("/admin/audit", query_string={"game": "1"})
    assert "No admin action matches." in nothing.get_data(as_text=True)


def test_the_games_and_mail_lists_export_as_csv(app: Flask, admin: FlaskClient, make_game) -> None:
    first = make_game(seed=1, keeper_name="=HYPERLINK(1)")["id"]
    second = make_game(seed=2)["id"]
    page = f"/admin/games/{second}"
    submit(admin, page, f"{page}/cancel", confirm="y", version=shown_version(admin, second))

    games = rows(admin.get("/admin/games.csv"))
    assert games[0][:6] == ["game", "status", "keeper", "keeper_email", "shadow", "shadow_email"]
    assert [(row[0], row[1]) for row in games[1:]] == [
        (str(second), "cancelled"),
        (str(first), "active"),
    ]
    assert games[2][2] == "'=HYPERLINK(1)"  # a spreadsheet reads it as text, not a formula
    cancelled = rows(admin.get("/admin/games.csv", query_string={"status": "cancelled"}))
    assert [row[0] for row in cancelled[1:]] == [str(second)]

    mail = rows(admin.get("/admin/mail.csv", query_string={"recipient": "kim@example.com"}))
    assert mail[0][:4] == ["id", "status", "kind", "recipient"]
    assert mail[1:] and {row[3] for row in mail[1:]} == {"kim@example.com"}
    ids = [int(row[0]) for row in mail[1:]]
    assert ids == sorted(ids, reverse=True)
    assert admin.get("/admin/mail.csv", query_string={"status": "lost"}).status_code == 400


def test_an_export_is_written_as_it_is_read_up_to_its_limit(
    app: Flask, admin: FlaskClient, make_game, monkeypatch
) -> None:
    made = [make_game(seed=seed)["id"] for seed in range(5)]
    monkeypatch.setattr(export, "BATCH", 2)
    monkeypatch.setattr(export, "EXPORT_LIMIT", 3)
    response = admin.get("/admin/games.csv")
    assert response.is_streamed
    assert [int(row[0]) for row in rows(response)[1:]] == made[::-1][:3]  # newest first
    assert "Export these games as CSV (the first 3)" in admin.get("/admin/games").text
    # A client gone after the first rows: the file stops there, and its cursor is closed.
    gone = admin.get("/admin/games.csv", buffered=False)
    assert next(iter(gone.response)).startswith(b"game,status")
    gone.close()
    gc.collect()  # a cursor still open would warn as it is collected, failing the test
