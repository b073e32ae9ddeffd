"""An admin corrects a player's address: a fresh link goes to it, the old one stops working."""

from __future__ import annotations

import re
from html import unescape
from typing import Any
from urllib.parse import urlsplit

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import func, select
from werkzeug.test import TestResponse

from service import games
from service.mail.worker import drain
from service.models import AdminAction, Event, Game, OutboxMessage, db
from service.unit_of_work import transaction

from ..smtp import SMTPServer
from .conftest import ADMIN, submit

TYPO = "sam@exmaple.com"
FIXED = "sam@example.org"


@pytest.fixture
def app_config(mail_config: dict[str, Any]) -> dict[str, Any]:
    return mail_config


def seat_of(app: Flask, game_id: int, seat: str) -> tuple[int, str | None]:
    with app.app_context():
        player = db.session.get_one(Game, game_id).player(seat)
        return player.id, player.email


def trail(app: Flask) -> list[tuple[str, str, int | None, str]]:
    """The audit trail but for the admin account the fixture added."""
    with app.app_context():
        added = AdminAction.action == "create_admin"
        return [
            (row.admin, row.action, row.game_id, row.note)
            for row in db.session.scalars(
                select(AdminAction).where(~added).order_by(AdminAction.id)
            )
        ]


def test_correcting_an_address_sends_a_fresh_link_and_kills_the_old(
    app: Flask, admin: FlaskClient, client: FlaskClient, make_game: Any, smtp_server: SMTPServer
) -> None:
    game = make_game()
    shadow, old = seat_of(app, game["id"], "shadow")
    page = f"/admin/games/{game['id']}"
    response = submit(
        admin, page, f"{page}/players/{shadow}/address", email=f" {FIXED.upper()} ", shown=old
    )
    assert response.status_code == 303
    html = unescape(admin.get(page).get_data(as_text=True))
    assert "The Shadow's address is corrected" in html
    assert seat_of(app, game["id"], "shadow") == (shadow, FIXED)
    assert client.get(f"/play/{game['shadow']}").status_code == 404
    with app.app_context():
        drain()
    (received,) = smtp_server.handler.to(FIXED)
    (link,) = received.links("/play/")
    assert client.get(urlsplit(link).path).status_code == 200
    with app.app_context():  # the invitation queued to the old address says why it never went
        unsent = db.session.scalars(select(OutboxMessage).where(OutboxMessage.recipient == old))
        assert [m.last_error for m in unsent] == [
            "skipped: its player no longer had the address it was queued for"
        ]
    note = f"corrected the shadow's address from {old} to {FIXED}"
    assert trail(app) == [(ADMIN, "correct_address", game["id"], note)]
    with app.app_context():
        events = db.session.scalars(select(Event).where(Event.actor == ADMIN)).all()
        assert [(event.kind, event.note) for event in events] == [("admin", note)]
    assert note in " ".join(re.sub(r"<[^>]+>", " ", html).split())


def refused(response: TestResponse) -> str:
    """The page a refused correction comes back with (400), as text."""
    assert response.status_code == 400
    return unescape(response.get_data(as_text=True))


def test_an_address_that_is_not_one_or_is_taken_is_refused(
    app: Flask, admin: FlaskClient, client: FlaskClient, make_game: Any
) -> None:
    game = make_game()
    shadow, old = seat_of(app, game["id"], "shadow")
    page = f"/admin/games/{game['id']}"
    action = f"{page}/players/{shadow}/address"
    assert "'sam at example' is not an email address" in refused(
        submit(admin, page, action, email="sam at example", shown=old)
    )
    assert f"{old} is the Shadow's address already." in refused(
        submit(admin, page, action, email=old, shown=old)
    )
    _, keepers = seat_of(app, game["id"], "keeper")
    assert f"{keepers} is the Keeper's address: a game needs two different addresses." in refused(
        submit(admin, page, action, email=str(keepers).upper(), shown=old)
    )
    assert seat_of(app, game["id"], "shadow") == (shadow, old)
    assert client.get(f"/play/{game['shadow']}").status_code == 200
    assert trail(app) == []


def test_refusals_name_the_seats_as_a_classic_game_does(
    app: Flask, admin: FlaskClient, make_game: Any
) -> None:
    game = make_game(look="classic")
    shadow, old = seat_of(app, game["id"], "shadow")
    _, keepers = seat_of(app, game["id"], "keeper")
    page = f"/admin/games/{game['id']}"
    action = f"{page}/players/{shadow}/address"
    assert f"{old} is Hyde's address already." in refused(
        submit(admin, page, action, email=old, shown=old)
    )
    assert f"{keepers} is Jekyll's address: a game needs two different addresses." in refused(
        submit(admin, page, action, email=str(keepers), shown=old)
    )
    assert seat_of(app, game["id"], "shadow") == (shadow, old)
    assert trail(app) == []


def test_the_command_line_corrects_an_address(
    app: Flask, runner: FlaskCliRunner, client: FlaskClient, make_game: Any
) -> None:
    game = make_game()
    args = ["games", "correct-address", str(game["id"]), "keeper", TYPO, "--by", "bob"]
    result = runner.invoke(args=args)
    assert result.exit_code == 0, result.output
    assert f"The keeper of game {game['id']} is now {TYPO}" in result.output
    assert seat_of(app, game["id"], "keeper")[1] == TYPO
    assert client.get(f"/play/{game['keeper']}").status_code == 404
    # At a shell, nobody acts as an admin of the dashboard: the trail says so.
    assert trail(app)[0][:3] == ("the command line (bob)", "correct_address", game["id"])
    refused = runner.invoke(args=["games", "correct-address", "999", "keeper", FIXED, "--by", "b"])
    assert refused.exit_code != 0 and "no game 999" in refused.output


@pytest.mark.parametrize("name", ["", "  ", "x" * 62])
def test_the_command_line_needs_a_name_the_audit_trail_holds(
    app: Flask, runner: FlaskCliRunner, make_game: Any, name: str
) -> None:
    game = make_game()
    args = ["games", "correct-address", str(game["id"]), "keeper", TYPO, "--by", name]
    refused = runner.invoke(args=args)
    assert refused.exit_code == 2
    assert "a name has 1 to 61 characters" in refused.output
    assert refused.exception is None or isinstance(refused.exception, SystemExit)
    assert seat_of(app, game["id"], "keeper")[1] != TYPO
    assert trail(app) == []


def shown_address(admin: FlaskClient, game_id: int, player_id: int) -> str:
    """The address the game page's correction form for this player was written with."""
    page = admin.get(f"/admin/games/{game_id}").get_data(as_text=True)
    form = re.search(
        rf'action="/admin/games/{game_id}/players/{player_id}/address".*?</form>', page, re.S
    )
    assert form is not None, "the page offers no correction"
    found = re.search(r'<input[^>]*name="shown"[^>]*value="([^"]+)"', form.group(0))
    assert found is not None
    return unescape(found.group(1))


def test_a_correction_from_a_page_loaded_before_another_is_refused(
    app: Flask, admin: FlaskClient, make_game: Any
) -> None:
    """Another admin corrected the address after this page was loaded: this correction, of
    the address it showed, is refused (409) with the page as it is now; theirs stands."""
    game = make_game()
    keeper, old = seat_of(app, game["id"], "keeper")
    page = f"/admin/games/{game['id']}"
    shown = shown_address(admin, game["id"], keeper)
    assert shown == old
    with app.app_context(), transaction():
        games.correct_address(keeper, FIXED, actor="bob")
    with app.app_context():
        queued = db.session.scalar(select(func.count()).select_from(OutboxMessage))

    refused = submit(admin, page, f"{page}/players/{keeper}/address", email=TYPO, shown=shown)

    assert refused.status_code == 409
    html = unescape(refused.get_data(as_text=True))
    assert (
        f"The Keeper's address was changed to {FIXED} since this page was loaded: "
        "nothing was changed. Here it is now: do it again if you still mean to."
    ) in html
    assert f'name="shown" type="hidden" value="{FIXED}"' in html  # the page as it is now
    assert seat_of(app, game["id"], "keeper") == (keeper, FIXED)
    assert [row[:2] for row in trail(app)] == [("bob", "correct_address")]
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(OutboxMessage)) == queued

    # From the page as it is now, the correction is made.
    now = shown_address(admin, game["id"], keeper)
    done = submit(admin, page, f"{page}/players/{keeper}/address", email=TYPO, shown=now)
    assert done.status_code == 303
    assert seat_of(app, game["id"], "keeper") == (keeper, TYPO)


def test_a_correction_needs_the_address_its_page_showed(
    app: Flask, admin: FlaskClient, make_game: Any
) -> None:
    game = make_game()
    keeper, old = seat_of(app, game["id"], "keeper")
    page = f"/admin/games/{game['id']}"
    assert submit(admin, page, f"{page}/players/{keeper}/address", email=TYPO).status_code == 303
    assert "This form does not say which address it showed: reload the page." in (
        admin.get(page).get_data(as_text=True)
    )
    assert seat_of(app, game["id"], "keeper") == (keeper, old)
    assert trail(app) == []


def test_a_correction_is_logged_without_either_address(
    app: Flask, admin: FlaskClient, make_game: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The audit trail and the game's log keep the addresses, for the admins; the log line
    of the action names the game and the seat, not the addresses, which the log keeps
    longer than the database keeps a player."""
    game = make_game()
    shadow, old = seat_of(app, game["id"], "shadow")
    page = f"/admin/games/{game['id']}"
    response = submit(admin, page, f"{page}/players/{shadow}/address", email=FIXED, shown=old)
    assert response.status_code == 303
    logged = [record.getMessage() for record in caplog.records]
    assert any("correct_address" in line and "shadow" in line for line in logged)
    assert not [line for line in logged if FIXED in line or str(old) in line]
