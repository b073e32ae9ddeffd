"""Actions that say what they do: rotation confirmed and sent, reasons told to the players,
the new deadline emailed, a waiting game cancelled, the seats named as the game names them."""

from __future__ import annotations

import random
import re
from html import unescape
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service import games, invitations
from service.models import Event, Game, Invitation, OutboxMessage, db
from service.unit_of_work import transaction

from ..conftest import load_game
from ..helpers import random_move, request_invitation, write_queued
from ..smtp import SMTPServer
from .conftest import shown_deadline, shown_version, submit


@pytest.fixture
def app_config(mail_config: dict[str, Any]) -> dict[str, Any]:
    return mail_config


def text(admin: FlaskClient, page: str) -> str:
    """The page's words, without its tags."""
    html = admin.get(page).get_data(as_text=True)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def player_id(app: Flask, game_id: int, seat: str) -> int:
    with app.app_context():
        return db.session.get_one(Game, game_id).player(seat).id


def emails(app: Flask, kind: str) -> list[OutboxMessage]:
    """The emails of ``kind`` queued so far, written as the worker would send them now."""
    write_queued(app)
    with app.app_context():
        found = db.session.scalars(
            select(OutboxMessage).where(OutboxMessage.kind == kind).order_by(OutboxMessage.id)
        ).all()
        db.session.expunge_all()
        return list(found)


def test_rotating_asks_for_confirmation_and_can_send_the_new_link(
    app: Flask, admin: FlaskClient, client: FlaskClient, make_game: Any
) -> None:
    game = make_game()
    shadow = player_id(app, game["id"], "shadow")
    page = f"/admin/games/{game['id']}"
    html = admin.get(page).get_data(as_text=True)
    assert (
        f'id="rotate-confirm-{shadow}"' in html
        and f'<input checked id="rotate-send-{shadow}"' in html
    )
    submit(admin, page, f"{page}/players/{shadow}/rotate", send="y")
    assert "Tick the box to confirm that the link is to be replaced." in text(admin, page)
    assert client.get(f"/play/{game['shadow']}").status_code == 200
    submit(admin, page, f"{page}/players/{shadow}/rotate", confirm="y", send="y")
    assert "The Shadow has a new link; the old one no longer works. It is on its way to sam@" in (
        text(admin, page)
    )
    assert client.get(f"/play/{game['shadow']}").status_code == 404
    (sent,) = emails(app, "link")
    assert sent.player_id == shadow and "/play/" in sent.text_body
    assert "rotated the shadow's link and sent the new one" in text(admin, page)


def test_cancel_and_forfeit_reasons_reach_the_players_and_the_log(
    app: Flask, admin: FlaskClient, make_game: Any
) -> None:
    cancelled, forfeited = make_game(seed=1)["id"], make_game(seed=2)["id"]
    page = f"/admin/games/{cancelled}"
    submit(
        admin,
        page,
        f"{page}/cancel",
        confirm="y",
        reason="Both players asked\nto stop.",
        version=shown_version(admin, cancelled),
    )
    assert "The game is cancelled; both players are told." in text(admin, page)
    ended = emails(app, "game_ended")
    assert len(ended) == 2
    assert all("The reason given: Both players asked to stop." in m.text_body for m in ended)
    assert all("The reason given: Both players asked to stop." in m.html_body for m in ended)
    assert "cancelled the game: Both players asked to stop." in text(admin, page)

    page = f"/admin/games/{forfeited}"
    version = shown_version(admin, forfeited)
    too_long = submit(
        admin,
        page,
        f"{page}/forfeit",
        seat="keeper",
        confirm="y",
        reason="x" * 301,
        version=version,
    )
    assert too_long.status_code == 400
    assert "A reason is at most 300 characters." in too_long.get_data(as_text=True)
    with app.app_context():
        assert db.session.get_one(Game, forfeited).status == "active"
    submit(admin, page, f"{page}/forfeit", seat="keeper", confirm="y", version=version)
    assert (
        "The game is over by forfeit: the Keeper forfeited and the Shadow wins; "
        "both players are told."
    ) in text(admin, page)
    assert "The reason given" not in emails(app, "game_ended")[-1].text_body


def test_extending_emails_the_new_deadline_and_says_it(
    app: Flask, admin: FlaskClient, make_game: Any, smtp_server: SMTPServer
) -> None:
    game = make_game(days_per_move=3)
    page = f"/admin/games/{game['id']}"
    submit(admin, page, f"{page}/extend", days="2", deadline=shown_deadline(admin, game["id"]))
    with app.app_context():
        deadline = db.session.get_one(Game, game["id"]).deadline
    shown = f"{deadline:%Y-%m-%d %H:%M} UTC"
    assert f"The deadline is extended to {shown}; both players are told." in text(admin, page)
    told = emails(app, "deadline_extended")
    assert sorted(m.recipient for m in told) == ["kim@example.com", "sam@example.com"]
    assert all("The deadline of game" in m.text_body and "is extended" in m.text_body for m in told)
    # Sam stops the game's emails: the next confirmation says only Kim is told, and is right.
    with app.app_context(), transaction():
        db.session.get_one(Game, game["id"]).player("shadow").notify = False
    submit(admin, page, f"{page}/extend", days="1", deadline=shown_deadline(admin, game["id"]))
    assert "UTC; only the Keeper is told." in text(admin, page)
    assert len(emails(app, "deadline_extended")) == 3


def test_a_waiting_game_can_be_cancelled_and_a_closed_one_offers_no_link_actions(
    app: Flask, admin: FlaskClient, make_game: Any
) -> None:
    game = make_game(waiting=True)
    page = f"/admin/games/{game['id']}"
    html = text(admin, page)
    assert "This game waits for its players. It has not started" in html
    assert "This game is live" not in html and "Phase" not in html
    assert "not sent yet" in html
    assert "badge live" not in admin.get(page).get_data(as_text=True)
    assert "The game has not started: no player is told." in html
    assert "Declare a forfeit" not in html
    submit(admin, page, f"{page}/cancel", confirm="y", version=shown_version(admin, game["id"]))
    html = text(admin, page)
    assert "The game is cancelled." in html and "both players are told" not in html
    assert emails(app, "game_ended") == []
    for gone in ("Resend link", "Rotate link", "Correct address", "Cancel the game", "Phase"):
        assert gone not in html, gone


def test_a_waiting_game_says_whom_it_waits_for_and_who_a_cancel_tells(
    app: Flask, admin: FlaskClient
) -> None:
    with app.app_context():
        invitation = request_invitation("bob@example.com")
        game_id, invitation_id = invitation.game_id, invitation.id
    page = f"/admin/games/{game_id}"
    html = text(admin, page)
    assert "This game waits for Ann <ann@example.com> to confirm their address" in html
    assert "The game has not started: no player is told." in html
    with app.app_context(), transaction():
        invitations.confirm(db.session.get_one(Invitation, invitation_id))
    html = text(admin, page)
    assert "This game waits for Bob <bob@example.com> to answer Ann's invitation" in html
    assert "Bob has not answered: cancelling tells Ann, who asked for the game, by email." in (html)
    submit(admin, page, f"{page}/cancel", confirm="y", version=shown_version(admin, game_id))
    assert "The game is cancelled; Ann, who asked for it, is told by email." in text(admin, page)


def test_a_waiting_game_sends_no_link_and_its_page_is_stale_once_it_starts(
    app: Flask, admin: FlaskClient, make_game: Any
) -> None:
    """No link goes out before the game starts: the invitee has not accepted and the creator
    may not have confirmed. Starting is a change: a cancel from the page it waited on is
    refused."""
    game = make_game(waiting=True)
    page = f"/admin/games/{game['id']}"
    html = text(admin, page)
    assert "Resend link" not in html and "Rotate link" not in html
    keeper = player_id(app, game["id"], "keeper")
    for action, form in (("resend", {}), ("rotate", {"confirm": "y", "send": "y"})):
        refused = submit(admin, page, f"{page}/players/{keeper}/{action}", **form)  # no page's
        assert refused.status_code == 409
        assert "its links go out when it starts" in refused.get_data(as_text=True)
    assert emails(app, "link") == []
    seen = shown_version(admin, game["id"])
    with app.app_context(), transaction():
        games.start_waiting_game(game["id"])
    refused = submit(admin, page, f"{page}/cancel", confirm="y", version=seen)
    assert refused.status_code == 409
    assert "The game has moved on" in unescape(refused.get_data(as_text=True))
    with app.app_context():
        assert db.session.get_one(Game, game["id"]).status == "active"
    assert emails(app, "game_ended") == []


def test_who_owes_a_move_is_named_as_the_look_names_the_seat(
    app: Flask, admin: FlaskClient, client: FlaskClient, make_game: Any
) -> None:
    game = make_game(look="classic", seed=3)
    rng = random.Random(3)
    while load_game(app, game["id"]).to_act in ("both", ""):
        random_move(client, game, rng)
    seat = {"keeper": "Jekyll", "shadow": "Hyde"}[load_game(app, game["id"]).to_act]
    for page, shown in (("/admin/games", "td"), (f"/admin/games/{game['id']}", "dd")):
        html = admin.get(page).get_data(as_text=True)
        assert f"<{shown}>{seat}</{shown}>" in html and f"the {seat}" not in html, page


def test_ending_a_game_of_a_return_match_says_it_ends_the_match(
    app: Flask, admin: FlaskClient, make_game: Any
) -> None:
    with app.app_context(), transaction():
        kim, sam = games.Seating("kim@example.com", "Kim"), games.Seating("sam@example.com", "Sam")
        first = games.create_match(kim, sam, seed=4).id
    single = make_game(seed=5)["id"]
    html = unescape(admin.get(f"/admin/games/{first}").get_data(as_text=True))
    warning = "This is game 1 of a return match: ending it ends the match, and the second game"
    assert html.count(warning) == 2  # beside the forfeit and the cancel
    assert "return match" not in admin.get(f"/admin/games/{single}").get_data(as_text=True)


def test_seat_names_follow_the_games_look(app: Flask, admin: FlaskClient, make_game: Any) -> None:
    game = make_game(look="classic")
    page = f"/admin/games/{game['id']}"
    html = admin.get(page).get_data(as_text=True)
    assert '<option value="">choose who forfeits</option><option value="keeper">' in html
    assert '<option value="keeper">Jekyll: Hyde wins</option>' in html
    assert '<option value="shadow">Hyde: Jekyll wins</option>' in html
    keeper = player_id(app, game["id"], "keeper")
    submit(admin, page, f"{page}/players/{keeper}/resend")
    assert "Jekyll's link is on its way to kim@example.com." in text(admin, page)
    version = shown_version(admin, game["id"])
    submit(admin, page, f"{page}/forfeit", seat="shadow", confirm="y", version=version)
    assert "The game is over by forfeit: Hyde forfeited and Jekyll wins" in text(admin, page)
    with app.app_context():
        notes = db.session.scalars(select(Event.note).where(Event.actor.is_not(None))).all()
        assert notes == ["resent Jekyll's link", "declared a forfeit by Hyde"]
    listing = admin.get("/admin/games").get_data(as_text=True)
    assert '<option value="keeper">the Keeper (Jekyll)</option>' in listing
    assert ">Keeper (Jekyll)</th>" in listing
