"""An address's owner asks what is kept of it: the command line and the dashboard export it."""

from __future__ import annotations

import json
import logging
import re
from html import unescape
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import select

from service import audit
from service.addresses import give_home_key
from service.models import AddressSettings, AdminAction, Game, Player, db
from service.unit_of_work import transaction

from ..helpers import request_invitation
from ..test_erasure import KIM, finished_with_traces, rows_naming
from .conftest import ADMIN, submit

PAGE = "/admin/address"
# What a game's entry may hold: its seats and results, never its cards.
GAME_KEYS = {
    "game", "status", "seat", "name", "opponent", "look", "days_per_move", "return_match",
    "created_at", "started_at", "finished_at", "result", "track", "rounds", "link_live",
    "emails", "language", "last_seen_at",
}  # fmt: skip


def kim_in_three_games(app: Flask, make_game: Any) -> dict[str, Any]:
    """Kim's finished game with its traces (:func:`finished_with_traces`), a game she plays
    now, and an invitation she sent (a game waiting for its answer); the keys of her links."""
    finished = finished_with_traces(app, make_game)
    playing = make_game(seed=5)
    with app.app_context():
        waiting = request_invitation("zoe@example.com", creator=KIM).game_id
        with transaction():
            give_home_key(KIM)
        keys = [db.session.get_one(AddressSettings, KIM).home_key]
        keys += db.session.scalars(select(Player.link_key).where(Player.email == KIM)).all()
    assert all(keys)
    return {"finished": finished, "playing": playing, "waiting": waiting, "keys": keys}


def exported(admin: FlaskClient, address: str) -> Any:
    """The document the address page's download gives."""
    response = submit(admin, f"{PAGE}?email={address}", f"{PAGE}/export", email=address)
    assert response.status_code == 200, response.text
    assert response.mimetype == "application/json"
    assert response.headers["Content-Disposition"].startswith("attachment;")
    assert "@" not in response.headers["Content-Disposition"]
    assert response.headers["Cache-Control"] == "no-store"
    return response.json


def test_the_dashboard_exports_what_is_kept_of_an_address(
    app: Flask, admin: FlaskClient, make_game: Any, caplog: pytest.LogCaptureFixture
) -> None:
    kim = kim_in_three_games(app, make_game)
    finished, playing = kim["finished"]["id"], kim["playing"]["id"]
    html = unescape(admin.get(PAGE, query_string={"email": " Kim@Example.COM "}).text)
    assert "3 games" in html and "1 invitation" in html
    with caplog.at_level(logging.DEBUG):
        kept = exported(admin, "Kim@Example.com")
    assert kept["address"] == KIM
    assert kept["settings"]["language"] == "fr" and kept["settings"]["home_link"] is True
    games = {entry["game"]: entry for entry in kept["games"]}
    assert {game: entry["status"] for game, entry in games.items()} == {
        finished: "finished",
        playing: "active",
        kim["waiting"]: "waiting",
    }
    assert games[finished]["seat"] == "keeper" and games[finished]["name"] == "Kimberly"
    assert games[finished]["result"] in ("won", "lost")
    assert games[finished]["notes"][0]["note"] == "see you Tuesday, Kimberly"
    # A game still waiting or in play: its seats and results, no card and no note.
    assert set(games[playing]) == GAME_KEYS == set(games[kim["waiting"]])
    assert games[playing]["opponent"] == "Sam" and games[playing]["link_live"]
    (invitation,) = kept["invitations"]
    assert invitation["asked_by_this_address"] and invitation["other_name"] == "Zoe"
    assert "zoe@example.com" not in json.dumps(kept)  # the other person's address
    sent = [email for email in kept["emails"] if email["subject"] == "s"]
    assert sent and sent[0]["status"] == "sent" and "text_body" not in sent[0]
    assert [reply["outcome"] for reply in kept["replies"]] == ["applied"]
    assert [entry["action"] for entry in kept["audit"]] == ["correct_address"]
    # No credential: neither a seat's link nor the home link.
    text = json.dumps(kept)
    assert not [key for key in kim["keys"] if key in text]
    # In the audit trail, by the admin, naming the address; never in the log.
    with app.app_context():
        entry = db.session.scalars(
            select(AdminAction).where(AdminAction.action == "export_address")
        ).one()
        assert entry.admin == ADMIN and KIM in entry.note
    assert not [r.getMessage() for r in caplog.records if KIM in r.getMessage().lower()]
    assert "export address" in admin.get("/admin/audit").text


def test_the_command_line_prints_what_is_kept_of_an_address(
    app: Flask, runner: FlaskCliRunner, make_game: Any
) -> None:
    game = make_game(seed=5)
    done = runner.invoke(args=["games", "export-address", "KIM@example.com", "--by", "ops"])
    assert done.exit_code == 0, done.output
    kept = json.loads(done.stdout)
    assert kept["address"] == KIM and [entry["game"] for entry in kept["games"]] == [game["id"]]
    with app.app_context():
        entry = db.session.scalars(select(AdminAction)).one()
        assert (entry.admin, entry.action) == ("the command line (ops)", "export_address")
    nobody = runner.invoke(args=["games", "export-address", "no@example.com", "--by", "ops"])
    assert nobody.exit_code == 0 and json.loads(nobody.stdout)["games"] == []
    assert "Nothing is kept of that address" in nobody.stderr
    erased = runner.invoke(args=["games", "export-address", "erased@erased.invalid", "--by", "ops"])
    assert erased.exit_code != 0 and "no one's address" in erased.output
    assert runner.invoke(args=["games", "export-address", KIM]).exit_code != 0  # --by


def test_an_export_holds_no_entry_of_a_longer_address(
    app: Flask, runner: FlaskCliRunner, make_game: Any
) -> None:
    """The audit entries exported are those erasure would rewrite: naming the address whole,
    not joakim@example.com's, which are another person's."""
    make_game(seed=5)
    with app.app_context(), transaction():
        audit.record("ann", "note", f"wrote to {KIM}")
        audit.record("ann", "note", "wrote to joakim@example.com")
    done = runner.invoke(args=["games", "export-address", KIM, "--by", "ops"])
    assert done.exit_code == 0, done.output
    notes = [entry["note"] for entry in json.loads(done.stdout)["audit"]]
    assert notes == [f"wrote to {KIM}"]


def test_the_address_page_asks_for_an_address_and_says_when_nothing_is_kept(
    app: Flask, admin: FlaskClient, make_game: Any
) -> None:
    asking = admin.get(PAGE)
    assert asking.status_code == 200 and 'name="email"' in asking.text
    assert f'action="{PAGE}/export"' not in asking.text
    nothing = admin.get(PAGE, query_string={"email": "nobody@example.com"})
    assert "Nothing is kept of nobody@example.com." in unescape(nothing.text)
    assert admin.get(PAGE, query_string={"email": "x" * 300}).status_code == 400
    refused = admin.get(PAGE, query_string={"email": "erased@erased.invalid"})
    assert refused.status_code == 400 and "no one's address" in unescape(refused.text)
    part = admin.get(PAGE, query_string={"email": "example.com"})
    assert part.status_code == 400 and "is not an email address" in unescape(part.text)
    erased = submit(admin, PAGE, f"{PAGE}/erase", email="example.com", confirm="y")
    assert erased.status_code == 400 and "is not an email address" in unescape(erased.text)
    # A game page's address leads to the games list of that address, which leads here.
    game = make_game()
    games = admin.get("/admin/games", query_string={"email": KIM}).text
    link = re.search(r'href="(/admin/address\?[^"]+)"', games)
    assert link is not None and unescape(link.group(1)) == f"{PAGE}?email={KIM}"
    assert f"/admin/games/{game['id']}" in admin.get(unescape(link.group(1))).text


def test_an_export_sent_without_an_address_exports_nothing(app: Flask, admin: FlaskClient) -> None:
    response = submit(admin, PAGE, f"{PAGE}/export", email="")
    assert response.status_code == 303
    with app.app_context():
        assert db.session.scalars(select(AdminAction.id)).all() == [1]  # the admin's account
        assert db.session.scalars(select(Game.id)).all() == []


def test_the_dashboard_erases_an_address_once_confirmed(
    app: Flask, admin: FlaskClient, make_game: Any
) -> None:
    game = finished_with_traces(app, make_game)
    page = f"{PAGE}?email={KIM}"
    assert f'action="{PAGE}/erase"' in admin.get(page).text
    unticked = submit(admin, page, f"{PAGE}/erase", email=KIM)
    assert unticked.status_code == 303 and unticked.headers["Location"] == page
    assert "Tick the box to confirm" in admin.get(page).text
    assert rows_naming(app, KIM)
    erased = submit(admin, page, f"{PAGE}/erase", email=KIM.upper(), confirm="y")
    assert erased.status_code == 303 and erased.headers["Location"] == PAGE
    said = unescape(admin.get(PAGE).text)
    assert "The address is erased: 1 finished game and 0 invitations kept without it" in said
    assert KIM not in said
    assert rows_naming(app, KIM) == {}
    with app.app_context():
        entry = db.session.scalars(
            select(AdminAction).where(AdminAction.action == "erase_address")
        ).one()
        assert entry.admin == ADMIN and entry.game_id is None
        assert db.session.get_one(Game, game["id"]).status == "finished"
    assert "Nothing is kept of" in admin.get(page).text


def test_an_address_in_a_live_game_is_not_erased_from_the_dashboard(
    app: Flask, admin: FlaskClient, make_game: Any
) -> None:
    """Refused as the command line refuses it, naming the games to end first."""
    playing = make_game(seed=5)["id"]
    with app.app_context():
        waiting = request_invitation("zoe@example.com", creator=KIM).game_id
    page = f"{PAGE}?email={KIM}"
    html = admin.get(page).text
    assert f'action="{PAGE}/erase"' not in html  # nothing to confirm: it would be refused
    named = (
        f"game #{playing} (in play) and game #{waiting} (waiting for its invitation to be "
        "answered): end them first"
    )
    assert named in " ".join(re.sub(r"<[^>]+>", "", unescape(html)).split())
    refused = submit(admin, page, f"{PAGE}/erase", email=KIM, confirm="y")
    assert refused.status_code == 409
    text = " ".join(re.sub(r"<[^>]+>", "", unescape(refused.text)).split())
    assert f"Not erased: the address plays {named}" in text
    assert f'href="/admin/games/{waiting}"' in refused.text
    with app.app_context():
        assert (
            db.session.scalar(select(AdminAction.id).where(AdminAction.action != "create_admin"))
            is None
        )
        assert db.session.get_one(Game, playing).player("keeper").email == KIM
    assert rows_naming(app, KIM)["players"] == 2
