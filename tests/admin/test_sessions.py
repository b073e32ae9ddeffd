"""Admin sessions end: signing out, a new password or the account's removal refuses every cookie
of that admin, even a copy taken before; a sign-in lasts 12 hours at most; a change of
SECRET_KEY keeps sessions while the old key is a fallback."""

from __future__ import annotations

from datetime import timedelta
from html import unescape

import pytest
import time_machine
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service import games
from service.admin.auth import form_page
from service.models import AdminUser, Event, Game, db
from service.unit_of_work import transaction

from .conftest import ADMIN, PASSWORD, csrf_token, sign_in

NEW_PASSWORD = "another long password"


def session_cookie(client: FlaskClient) -> str:
    cookie = client.get_cookie("session")
    assert cookie is not None
    return cookie.value


def replay(app: Flask, cookie: str) -> FlaskClient:
    """A new browser holding a copy of a session cookie."""
    browser = app.test_client()
    browser.set_cookie("session", cookie)
    return browser


def signed_out(browser: FlaskClient) -> bool:
    response = browser.get("/admin/")
    if response.status_code == 200:
        return False
    assert response.status_code == 302, response.status_code
    return response.headers["Location"].startswith("/admin/login")


def sign_out(client: FlaskClient) -> None:
    token = csrf_token(client.get("/admin/").get_data(as_text=True))
    assert client.post("/admin/logout", data={"csrf_token": token}).status_code == 303


def test_a_cookie_copied_before_signing_out_is_refused_after(app, admin) -> None:
    copy = session_cookie(admin)
    assert not signed_out(replay(app, copy))
    sign_out(admin)
    assert signed_out(admin)
    assert signed_out(replay(app, copy))


def test_signing_out_ends_the_sessions_on_other_devices(app, admin) -> None:
    phone = app.test_client()
    assert sign_in(phone).status_code == 303
    sign_out(admin)
    assert signed_out(phone)
    assert sign_in(phone).status_code == 303  # signing in again works
    assert not signed_out(phone)


def test_a_new_password_ends_every_session(app, admin, runner) -> None:
    copy = session_cookie(admin)
    result = runner.invoke(
        args=["admin", "set-password", ADMIN], env={"SPLITMIND_ADMIN_PASSWORD": NEW_PASSWORD}
    )
    assert result.exit_code == 0, result.output
    assert "sessions have ended" in result.output
    assert signed_out(admin)
    assert signed_out(replay(app, copy))
    assert sign_in(admin, password=PASSWORD).status_code == 400
    assert sign_in(admin, password=NEW_PASSWORD).status_code == 303


def test_removing_an_admin_ends_their_sessions_and_keeps_their_name_in_the_log(
    app, admin, runner, make_game
) -> None:
    game_id = make_game()["id"]
    with app.app_context(), transaction():
        games.cancel_game(game_id, actor=ADMIN)
    copy = session_cookie(admin)
    result = runner.invoke(args=["admin", "remove-user", ADMIN, "--yes"])
    assert result.exit_code == 0, result.output
    assert signed_out(replay(app, copy))
    assert sign_in(admin).status_code == 400
    with app.app_context():
        assert db.session.scalars(select(AdminUser)).all() == []
        actors = db.session.scalars(select(Event.actor).where(Event.game_id == game_id)).all()
    assert ADMIN in actors


def test_remove_user_asks_first_and_knows_only_admins_that_exist(app, admin, runner) -> None:
    declined = runner.invoke(args=["admin", "remove-user", ADMIN], input="n\n")
    assert declined.exit_code == 1 and "Aborted" in declined.output
    assert not signed_out(admin)
    missing = runner.invoke(args=["admin", "remove-user", "nobody", "--yes"])
    assert missing.exit_code == 2 and "no admin named nobody" in missing.output
    with app.app_context():
        assert db.session.scalars(select(AdminUser.name)).all() == [ADMIN]


def test_a_sign_in_lasts_twelve_hours_at_most(app, client, admin_account) -> None:
    with time_machine.travel("2030-01-01 09:00Z", tick=False) as clock:
        assert sign_in(client).status_code == 303
        clock.shift(timedelta(hours=11, minutes=59))
        assert not signed_out(client)
        clock.shift(timedelta(minutes=2))
        assert signed_out(client)


def test_a_form_loaded_hours_ago_is_still_taken_while_signed_in(app, client, admin_account) -> None:
    """A page left open over lunch: its form is as good as the sign-in it was made in."""
    with time_machine.travel("2030-01-01 09:00Z", tick=False) as clock:
        assert sign_in(client).status_code == 303
        token = csrf_token(client.get("/admin/").text)
        clock.shift(timedelta(hours=11, minutes=50))
        assert client.post("/admin/logout", data={"csrf_token": token}).status_code == 303
        assert signed_out(client)


def test_a_busy_sign_in_still_ends_twelve_hours_after_it_began(app, client, admin_account) -> None:
    """A flashed message rewrites the cookie, which does not make the sign-in last longer."""
    with time_machine.travel("2030-01-01 09:00Z", tick=False) as clock:
        assert sign_in(client).status_code == 303
        clock.shift(timedelta(hours=11))
        token = csrf_token(client.get("/admin/two-factor").text)
        assert client.post("/admin/two-factor/off", data={"csrf_token": token}).status_code == 303
        assert "Tick the box" in client.get("/admin/two-factor").text
        assert not signed_out(client)
        clock.shift(timedelta(hours=1, seconds=1))
        assert signed_out(client)
        assert signed_out(client)  # and stays so
        assert sign_in(client).status_code == 303
        assert not signed_out(client)


def test_signing_in_and_out_starts_a_new_session(client, admin_account) -> None:
    """Nothing of the session before, its CSRF token included, is good after: a token
    planted in a browser before its admin signs in gives no way to post as them."""
    before = csrf_token(client.get("/admin/login").text)
    with client.session_transaction() as session:
        session["planted"] = "by someone else"
    assert sign_in(client).status_code == 303
    with client.session_transaction() as session:
        assert "planted" not in session
    refused = client.post("/admin/two-factor/off", data={"csrf_token": before})
    assert refused.status_code == 400 and "CSRF" in refused.text

    signed_in = csrf_token(client.get("/admin/").text)
    assert client.post("/admin/logout", data={"csrf_token": signed_in}).status_code == 303
    with client.session_transaction() as session:
        assert "csrf_token" not in session
    refused = client.post(
        "/admin/login", data={"csrf_token": signed_in, "name": ADMIN, "password": PASSWORD}
    )
    assert refused.status_code == 400 and signed_out(client)


def test_the_session_cookie_ends_with_the_browser(client, admin_account) -> None:
    cookie = sign_in(client).headers["Set-Cookie"]
    assert "Expires" not in cookie and "Max-Age" not in cookie


@pytest.mark.parametrize("kept", [True, False])
def test_sessions_survive_a_new_secret_key_while_the_old_one_is_a_fallback(
    app, admin, kept
) -> None:
    old_key = app.config["SECRET_KEY"]
    app.config.update(
        SECRET_KEY="the new secret key, after the leak",
        SECRET_KEY_FALLBACKS=[old_key] if kept else [],
    )
    assert signed_out(admin) is not kept


def test_a_form_sent_after_the_session_ended_says_so_and_returns_to_its_page(
    app, admin, make_game
) -> None:
    """Signed out on another device, the admin sends a form of a page still open: nothing is
    done, the sign-in page says why, and signing in leads back to that page."""
    game = make_game()
    page = f"/admin/games/{game['id']}"
    token = csrf_token(admin.get(page).text)
    phone = app.test_client()
    assert sign_in(phone).status_code == 303
    sign_out(phone)

    sent = admin.post(
        f"{page}/cancel",
        data={"csrf_token": token, "confirm": "y", "version": "0"},
        headers={"Referer": f"http://localhost{page}"},
    )

    assert sent.status_code == 303
    assert sent.headers["Location"] == f"/admin/login?next={page}"
    with app.app_context():
        assert db.session.get_one(Game, game["id"]).status == "active"
    login = admin.get(sent.headers["Location"]).text
    assert (
        "Your session had ended (you were signed out, or it ran out), so what you sent was not "
        "done. Sign in, then send it again from the page you were on."
    ) in login
    signed_in = admin.post(
        sent.headers["Location"],
        data={"csrf_token": csrf_token(login), "name": ADMIN, "password": PASSWORD},
    )
    assert signed_in.status_code == 303 and signed_in.headers["Location"] == page


@pytest.mark.parametrize(
    ("referrer", "back_to"),
    [
        ("http://localhost/admin/mail?status=failed", "/admin/mail?status%3Dfailed"),
        # Only the path of a page of the dashboard: never another site, never off the dashboard.
        ("https://evil.example/admin/games", "/admin/games"),
        ("https://evil.example/", None),
        ("http://localhost/play/x", None),
        ("http://localhost/admin/../play/x", None),
        (None, None),
    ],
)
def test_a_form_sent_signed_out_goes_back_only_to_a_page_of_the_dashboard(
    app, client, admin_account, referrer, back_to
) -> None:
    token = csrf_token(client.get("/admin/login").text)
    headers = {"Referer": referrer} if referrer else {}
    sent = client.post("/admin/mail/requeue", data={"csrf_token": token}, headers=headers)
    assert sent.status_code == 303
    expected = f"/admin/login?next={back_to}" if back_to else "/admin/login"
    assert sent.headers["Location"] == expected


def test_a_form_sent_to_a_page_goes_back_to_that_page(app) -> None:
    """Without a Referer, the path a form was sent to is where to go back to if it answers a
    GET too; a form sent to an action alone has no page to go back to."""
    with app.test_request_context("/admin/games", method="POST"):
        assert form_page() == "/admin/games"
    with app.test_request_context("/admin/games/1/cancel", method="POST"):
        assert form_page() is None


def test_a_form_loaded_before_signing_in_again_says_it_expired_on_the_dashboard(
    app, admin, make_game
) -> None:
    """Signing in again starts a new session, whose CSRF token the page loaded before does not
    carry: nothing is done, and the dashboard's page says why, with a way back (400)."""
    game = make_game()
    page = f"/admin/games/{game['id']}"
    token = csrf_token(admin.get(page).text)
    sign_out(admin)
    assert sign_in(admin).status_code == 303
    assert admin.get("/admin/").status_code == 200  # where signing in leads

    refused = admin.post(
        f"{page}/cancel",
        data={"csrf_token": token, "confirm": "y", "version": "0"},
        headers={"Referer": f"http://localhost{page}"},
    )

    assert refused.status_code == 400
    html = unescape(refused.text)
    assert (
        "This form had expired (you signed in again since it was loaded): nothing was done. "
        "Go back, reload the page and send it again."
    ) in html
    assert '<nav class="admin-nav" aria-label="Dashboard">' in html
    assert f'<a href="{page}">Back to the page the form was on</a>' in html
    with app.app_context():
        assert db.session.get_one(Game, game["id"]).status == "active"
    # Without a Referer of the dashboard, the way back is the overview.
    refused = admin.post(f"{page}/cancel", data={"csrf_token": token, "confirm": "y"})
    assert refused.status_code == 400 and '<a href="/admin/">To the overview</a>' in refused.text


def test_a_form_without_a_session_is_answered_as_one_sent_signed_out(app, client) -> None:
    """A form sent from a page left open once the browser dropped its session (no CSRF token
    in it any more): the sign-in page says the action was not done."""
    sent = client.post("/admin/games/1/cancel", data={"csrf_token": "left from before"})
    assert sent.status_code == 303 and sent.headers["Location"] == "/admin/login"
    assert "so what you sent was not done" in client.get("/admin/login").text


def test_signing_out_of_a_second_tab_once_signed_out_goes_to_sign_in(admin) -> None:
    """Signed out in one tab, then "Sign out" in another tab left open: there is nothing to
    protect any more, and the visitor lands on the sign-in page."""
    token = csrf_token(admin.get("/admin/").text)
    assert admin.post("/admin/logout", data={"csrf_token": token}).status_code == 303
    again = admin.post("/admin/logout", data={"csrf_token": token})
    assert again.status_code == 303 and again.headers["Location"] == "/admin/login"
