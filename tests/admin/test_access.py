"""Who gets in: every admin page wants a signed-in admin, forms want CSRF, guesses get 429."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask, url_for
from flask.testing import FlaskClient

from service.admin.auth import OPEN_ENDPOINTS

from .conftest import ADMIN, PASSWORD, csrf_token, sign_in


def admin_urls(app: Flask) -> list[tuple[str, str]]:
    """(method, URL) for every rule of the admin blueprint, with made-up ids."""
    urls = []
    with app.test_request_context():
        for rule in app.url_map.iter_rules():
            if not rule.endpoint.startswith("admin.") or rule.endpoint in OPEN_ENDPOINTS:
                continue
            url = url_for(rule.endpoint, **dict.fromkeys(rule.arguments, 1))
            for method in sorted((rule.methods or set()) & {"GET", "POST"}):
                urls.append((method, url))
    return urls


def test_only_sign_in_and_out_are_open(app) -> None:
    endpoints = {r.endpoint for r in app.url_map.iter_rules() if r.endpoint.startswith("admin.")}
    assert {"admin.login", "admin.login_code", "admin.logout"} == OPEN_ENDPOINTS
    assert endpoints >= OPEN_ENDPOINTS
    # The guard must cover views added later too: there is more than a handful of them.
    assert len(admin_urls(app)) >= 13


def test_every_admin_url_sends_strangers_to_sign_in(app, client) -> None:
    # A real CSRF token, so that POSTs reach the guard rather than stop at the CSRF check.
    token = csrf_token(client.get("/admin/login").get_data(as_text=True))
    for method, url in admin_urls(app):
        if method == "GET":
            response = client.get(url)
        else:
            response = client.post(url, data={"csrf_token": token})
        assert response.status_code == (302 if method == "GET" else 303), (method, url)
        assert response.headers["Location"].startswith("/admin/login"), (method, url)


def test_sign_in_returns_to_the_page_asked_for(app, client, admin_account) -> None:
    response = client.get("/admin/mail?status=failed")
    assert response.headers["Location"] == "/admin/login?next=/admin/mail?status%3Dfailed"
    token = csrf_token(client.get(response.headers["Location"]).get_data(as_text=True))
    response = client.post(
        response.headers["Location"],
        data={"csrf_token": token, "name": ADMIN, "password": PASSWORD},
    )
    assert response.status_code == 303
    assert response.headers["Location"] == "/admin/mail?status=failed"
    assert client.get("/admin/mail?status=failed").status_code == 200


@pytest.mark.parametrize(
    "target",
    [
        "https://evil.example/admin/",
        "//evil.example/",
        "/play/x",
        "/admin/\r\nSet-Cookie: x=1",
        # Dot segments, written plainly or %-encoded, resolve outside the dashboard.
        "/admin/..//evil.example",
        "/admin/../new",
        "/admin/%2e%2e/me/x",
        "/admin//../new",
    ],
)
def test_sign_in_never_sends_anyone_off_the_dashboard(client, admin_account, target) -> None:
    token = csrf_token(client.get("/admin/login").get_data(as_text=True))
    response = client.post(
        "/admin/login",
        query_string={"next": target},
        data={"csrf_token": token, "name": ADMIN, "password": PASSWORD},
    )
    assert response.status_code == 303 and response.headers["Location"] == "/admin/"


def test_wrong_password_and_unknown_name_get_the_same_answer(client, admin_account) -> None:
    wrong = sign_in(client, password="not the password")
    unknown = sign_in(client, name="nobody")
    assert wrong.status_code == unknown.status_code == 400
    assert "Wrong name or password." in wrong.get_data(as_text=True)
    assert "Wrong name or password." in unknown.get_data(as_text=True)
    assert client.get("/admin/").status_code == 302


def test_errors_on_the_dashboard_keep_its_layout_and_language(app, admin, make_game) -> None:
    """A game or message that is not there, a replay not yet open, an address the dashboard
    does not have: the dashboard's page, in English, with its navigation, not the players'."""
    game = make_game()
    french = {"Accept-Language": "fr"}
    for path, status in (
        ("/admin/games/999", 404),
        ("/admin/mail/99999", 404),
        (f"/admin/games/{game['id']}/replay.json", 403),
        ("/admin/no-such-page", 404),
    ):
        response = admin.get(path, headers=french)
        assert response.status_code == status, path
        page = response.get_data(as_text=True)
        assert 'class="admin-nav"' in page and "Back to the overview" in page, path
        assert 'lang="en"' in page and "Lost the link to your game?" not in page, path
    # A player's error page is the players' still.
    page = admin.get("/play/nonsense", headers=french).get_data(as_text=True)
    assert "admin-nav" not in page and 'lang="fr"' in page


def test_sign_out(admin) -> None:
    assert admin.get("/admin/").status_code == 200
    token = csrf_token(admin.get("/admin/").get_data(as_text=True))
    response = admin.post("/admin/logout", data={"csrf_token": token})
    assert response.status_code == 303 and response.headers["Location"] == "/admin/login"
    assert "You are signed out, on every device." in admin.get("/admin/login").text
    assert admin.get("/admin/").status_code == 302


def test_every_post_without_a_csrf_token_is_refused(app, admin) -> None:
    posts = [url for method, url in admin_urls(app) if method == "POST"]
    assert posts
    for url in [*posts, "/admin/logout"]:
        response = admin.post(url, data={"days": "3", "confirm": "y", "seat": "keeper"})
        assert response.status_code == 400, url
        assert "CSRF" in response.get_data(as_text=True), url


def test_sign_in_without_a_csrf_token_is_refused(client, admin_account) -> None:
    response = client.post("/admin/login", data={"name": ADMIN, "password": PASSWORD})
    assert response.status_code == 400
    assert client.get("/admin/").status_code == 302


def sign_in_from(client: FlaskClient, name: str, password: str, ip: str = "10.0.0.1") -> Any:
    environ = {"REMOTE_ADDR": ip}
    token = csrf_token(client.get("/admin/login", environ_base=environ).get_data(as_text=True))
    return client.post(
        "/admin/login",
        data={"csrf_token": token, "name": name, "password": password},
        environ_base=environ,
    )


def test_the_sixth_failed_sign_in_for_a_name_from_one_address_gets_429(
    client, admin_account
) -> None:
    statuses = [sign_in_from(client, name=ADMIN, password="guess").status_code for _ in range(5)]
    assert statuses == [400] * 5
    # Even the right password: the name is held off from that address for a while.
    assert sign_in_from(client, name=ADMIN, password=PASSWORD).status_code == 429
    assert sign_in_from(client, name=ADMIN.upper(), password=PASSWORD).status_code == 429
    # Another name from that address is not.
    assert sign_in_from(client, name="other", password="guess").status_code == 400


def test_a_stranger_guessing_a_name_does_not_lock_its_admin_out(client, admin_account) -> None:
    for ip in ("10.0.0.1", "10.0.0.2"):  # from more than one address, as a stranger can
        for _ in range(6):
            sign_in_from(client, name=ADMIN, password="guess", ip=ip)
    assert sign_in_from(client, name=ADMIN, password="guess", ip="10.0.0.2").status_code == 429
    assert sign_in_from(client, name=ADMIN, password=PASSWORD, ip="10.0.9.9").status_code == 303


def test_the_twenty_first_failed_sign_in_from_an_address_gets_429(client, admin_account) -> None:
    for batch in range(4):  # never more than 5 for one name
        statuses = [
            sign_in_from(client, name=f"someone{n}", password="guess").status_code
            for n in range(batch * 5, batch * 5 + 5)
        ]
        assert statuses == [400] * 5
    assert sign_in_from(client, name="someone-new", password="guess").status_code == 429
    # Even the right password, for a name not tried from there yet.
    assert sign_in_from(client, name=ADMIN, password=PASSWORD).status_code == 429
    assert sign_in_from(client, name=ADMIN, password=PASSWORD, ip="10.0.0.2").status_code == 303


def test_a_name_is_signed_in_in_any_case(client, admin_account) -> None:
    """A phone may capitalise the name's first letter: Ada is ada, and is not locked out."""
    for _ in range(6):
        assert sign_in_from(client, name=" Ada ", password=PASSWORD).status_code == 303
        token = csrf_token(client.get("/admin/", environ_base={"REMOTE_ADDR": "10.0.0.1"}).text)
        client.post("/admin/logout", data={"csrf_token": token})
    page = client.get("/admin/login").get_data(as_text=True)
    assert 'autocapitalize="none"' in page


def test_successful_sign_ins_are_not_counted(client, admin_account) -> None:
    for _ in range(8):
        assert sign_in_from(client, name=ADMIN, password=PASSWORD).status_code == 303
        token = csrf_token(client.get("/admin/", environ_base={"REMOTE_ADDR": "10.0.0.1"}).text)
        client.post("/admin/logout", data={"csrf_token": token})


def test_session_cookie_is_httponly_and_lax(client, admin_account) -> None:
    cookie = sign_in(client).headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie
    assert "Secure" not in cookie  # served over plain HTTP in this test


@pytest.mark.parametrize("app_config", [{"BASE_URL": "https://splitmind.test"}])
def test_session_cookie_is_secure_over_https(app, client, admin_account) -> None:
    assert app.config["SESSION_COOKIE_SECURE"] is True
    cookie = sign_in(client).headers["Set-Cookie"]
    assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie
