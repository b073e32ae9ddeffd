"""The service under a path of its host: ``BASE_URL=https://example.org/splitmind``, a proxy
passing ``/splitmind/…`` on (whole, or with the path taken off), or gunicorn given a
``SCRIPT_NAME``."""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service import invitations
from service.games import Seating, create_game
from service.links import home_url, token_for
from service.models import OutboxMessage, db
from service.unit_of_work import transaction

from .admin.conftest import admin_account, sign_in  # noqa: F401  (a fixture)
from .conftest import BASE_URL
from .factories import played_against_computer
from .helpers import ask_for_game, csrf_token, request_invitation, write_queued
from .servers import gunicorn_env, http_get, run_gunicorn

PREFIX = "/splitmind"
# The attributes that hold an address the browser or the page's script opens.
ADDRESSES = {"href", "src", "action", "data-page", "data-api", "data-seen", "formaction"}
# Those the page's script sends a POST to (play.js).
POSTED = {"data-seen"}


@pytest.fixture
def app_config() -> dict[str, Any]:
    return {"BASE_URL": f"{BASE_URL}{PREFIX}"}


class Addresses(HTMLParser):
    """Every address a page links to, loads or sends a form to, with the method it is used
    with (a form's, else GET)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        for name, value in attrs:
            if name in ADDRESSES and value is not None:
                method = (named.get("method") or "get") if tag == "form" else "get"
                method = "post" if name in POSTED else method
                self.found.append((method.upper(), value))


def addresses(html: str) -> list[tuple[str, str]]:
    """(method, address) of every address on the page (:class:`Addresses`)."""
    parser = Addresses()
    parser.feed(html)
    return parser.found


def emailed_links(app: Flask) -> list[str]:
    """Every link of the service in the emails queued so far."""
    write_queued(app)
    with app.app_context():
        bodies = db.session.scalars(select(OutboxMessage.text_body)).all()
    return [link for body in bodies for link in re.findall(rf"{BASE_URL}\S*", body or "")]


def test_an_emailed_link_opens_under_the_path(app: Flask, make_game: Any) -> None:
    """A proxy passes the whole path on (nginx's ``proxy_pass`` without a path of its own):
    each link of the emails opens its page, which links to pages under the path alone."""
    make_game()
    links = emailed_links(app)
    assert links and all(link.startswith(f"{BASE_URL}{PREFIX}/") for link in links), links
    client = app.test_client()
    for link in links:
        response = client.get(link)
        assert response.status_code == 200, (link, response.status_code)


@pytest.mark.parametrize(
    "how",
    [
        {"base_url": f"{BASE_URL}{PREFIX}/"},  # gunicorn's SCRIPT_NAME: the path taken off
        {"base_url": f"{BASE_URL}/"},  # a proxy that takes the path off, and says nothing
    ],
    ids=["script-name", "stripped"],
)
def test_a_page_asked_without_the_path_links_under_it(
    app: Flask, make_game: Any, how: dict[str, str]
) -> None:
    token = make_game()["keeper"]
    response = app.test_client().get(f"/play/{token}", **how)
    assert response.status_code == 200
    own = [url for _, url in addresses(response.get_data(as_text=True)) if url.startswith("/")]
    assert own and all(url.startswith(f"{PREFIX}/") for url in own), own


def test_a_path_that_only_starts_like_base_urls_is_not_under_it(app: Flask) -> None:
    """``/splitmindx`` is not a page of ``/splitmind``."""
    assert app.test_client().get(f"{PREFIX}x/rules").status_code == 404
    assert app.test_client().get(f"{PREFIX}/rules").status_code == 200


def test_an_answer_that_starts_a_game_leads_under_the_path(app: Flask) -> None:
    """Ann asks for a game, confirms her address, Bob accepts: his seat's page is under the
    path, as every link is."""
    client = app.test_client()
    assert "Check your email" in ask_for_game(client).get_data(as_text=True)
    (confirm,) = [link for link in emailed_links(app) if "/invitations/" in link]
    assert client.post(confirm).status_code == 200
    (answer,) = [link for link in emailed_links(app) if "/invitations/" in link and link != confirm]
    accepted = client.post(answer, data={"answer": "accept"})
    assert accepted.status_code == 303
    assert accepted.location.startswith(f"{PREFIX}/play/"), accepted.location
    assert client.get(accepted.location).status_code == 200


def test_a_rematch_against_the_computer_leads_under_the_path(app: Flask) -> None:
    with app.app_context(), transaction():
        game = create_game(Seating("kim@example.com", "Kim"), Seating.the_computer("easy"), seed=5)
        game_id, token = game.id, token_for(game.player("keeper"))
    played_against_computer(app, game_id, emails=False)
    client = app.test_client()
    started = client.post(f"{PREFIX}/rematch/{token}")
    assert started.status_code == 303
    assert started.location.startswith(f"{PREFIX}/play/"), started.location
    page = client.get(f"{PREFIX}/rematch/{token}").get_data(as_text=True)
    assert f'href="{started.location}"' in page  # "Open it"


def test_the_dashboard_signs_in_back_to_the_page_asked_under_the_path(
    app: Flask,
    admin_account: str,  # noqa: F811
) -> None:
    client = app.test_client()
    asked = client.get(f"{PREFIX}/admin/games?q=kim")
    assert asked.status_code == 302
    assert urlsplit(asked.location).path == f"{PREFIX}/admin/login"
    signed_in = sign_in(client, at=asked.location)
    assert signed_in.location == f"{PREFIX}/admin/games?q=kim"
    assert client.get(signed_in.location).status_code == 200


def test_a_dashboard_form_refused_leads_back_under_the_path(
    app: Flask,
    admin_account: str,  # noqa: F811
    make_game: Any,
) -> None:
    """The way back to the form's page, read from its Referer (a path under the service's),
    and the way back to it after signing in again, once the session had ended."""
    page = f"{PREFIX}/admin/games/{make_game()['id']}"
    client = app.test_client()
    sign_in(client, at=f"{PREFIX}/admin/login")
    token = csrf_token(client.get(page).get_data(as_text=True))
    referer = {"Referer": f"{BASE_URL}{page}"}
    refused = client.post(f"{page}/cancel", data={"csrf_token": "stale"}, headers=referer)
    assert refused.status_code == 400
    assert f'<a href="{page}">Back to the page the form was on</a>' in unescape(refused.text)
    client.post(f"{PREFIX}/admin/logout", data={"csrf_token": token})
    sent = client.post(f"{page}/cancel", data={"csrf_token": token}, headers=referer)
    assert sent.status_code == 303
    assert sign_in(client, at=sent.location).location == page


def test_filters_refused_lead_to_the_list_under_the_path(
    app: Flask,
    admin_account: str,  # noqa: F811
) -> None:
    client = app.test_client()
    sign_in(client, at=f"{PREFIX}/admin/login")
    refused = client.get(f"{PREFIX}/admin/games?status=lost")
    assert refused.status_code == 400
    assert f'<a href="{PREFIX}/admin/games">The list without filters</a>' in refused.text


def test_the_cookies_are_sent_to_the_services_path_alone(
    app: Flask,
    admin_account: str,  # noqa: F811
) -> None:
    """Another service on the host gets neither the language chosen nor an admin's session."""
    client = app.test_client()
    set_cookies = client.get(f"{PREFIX}/?lang=fr").headers.getlist("Set-Cookie")
    set_cookies += sign_in(client, at=f"{PREFIX}/admin/login").headers.getlist("Set-Cookie")
    names = {cookie.partition("=")[0] for cookie in set_cookies}
    assert {"lang", "session"} <= names, set_cookies
    for cookie in set_cookies:
        assert f"; Path={PREFIX};" in f"{cookie};", cookie


def every_address_resolves(client: FlaskClient, page: str) -> list[str]:
    """Open ``page`` under the path; each address on it must lead to a route under the path
    (a GET's opened too); the addresses, for the test to check it saw what it meant to."""
    response = client.get(page)
    assert response.status_code == 200, (page, response.status_code)
    seen = []
    for method, url in addresses(response.get_data(as_text=True)):
        parts = urlsplit(url)
        elsewhere = parts.scheme and not url.startswith(f"{BASE_URL}/")
        if elsewhere or url.startswith(("#", "?")) or not url:
            continue  # another site, a place on the page, the page with another query
        assert parts.path.startswith(f"{PREFIX}/"), (page, url)
        seen.append(parts.path)
        # Routed within the service (a form's action too), and a link opened.
        adapter = client.application.url_map.bind(urlsplit(BASE_URL).netloc)
        adapter.match(parts.path.removeprefix(PREFIX), method=method)
        if method == "GET":
            with client.get(url) as opened:  # a static file: closed once read
                assert opened.status_code < 400, (page, url, opened.status_code)
    return seen


def test_every_address_on_the_pages_is_under_the_path(
    app: Flask,
    make_game: Any,
    admin_account: str,  # noqa: F811
) -> None:
    """The player's page, the home page, an invitation's, the public ones, the
    local mailbox and the dashboard's: each link, style sheet, script, form and address the
    page's script reads leads to a route under the path."""
    game = make_game()
    with app.app_context():
        home = home_url("kim@example.com")
        invitation = invitations.url(request_invitation("bob@example.com"), "confirm")
    assert home and invitation
    client = app.test_client()
    player = f"{PREFIX}/play/{game['keeper']}"
    pages = [f"{PREFIX}/", f"{PREFIX}/rules", f"{PREFIX}/new", f"{PREFIX}/links", player]
    pages += [home, invitation, f"{PREFIX}/mailbox", f"{PREFIX}/mailbox/1"]
    seen = [path for page in pages for path in every_address_resolves(client, page)]
    assert f"{player}/seen" in seen and f"{PREFIX}/api/play/{game['keeper']}" in seen
    sign_in(client, at=f"{PREFIX}/admin/login")
    dashboard = ["", "games", f"games/{game['id']}", "mail", "mail/1", "audit", "stats"]
    dashboard += ["admins", "two-factor", "playtest"]
    for page in dashboard:
        seen = every_address_resolves(client, f"{PREFIX}/admin/{page}")
        assert f"{PREFIX}/admin/logout" in seen, page


def test_a_players_pages_under_the_path_are_kept_by_no_cache(app: Flask, make_game: Any) -> None:
    """Their addresses are credentials wherever the service is served: the page, and the
    view its script polls (answered ahead of Flask, :mod:`service.api.shortcut`)."""
    token = make_game()["keeper"]
    client = app.test_client()
    for path in (f"/play/{token}", f"/api/play/{token}", f"/api/play/{token}"):
        assert client.get(f"{PREFIX}{path}").headers["Cache-Control"] == "no-store", path


def test_a_path_missing_its_last_slash_is_redirected_under_the_path(app: Flask) -> None:
    client = app.test_client()
    for asked, led in ((PREFIX, f"{PREFIX}/"), (f"{PREFIX}/admin?x=1", f"{PREFIX}/admin/?x=1")):
        response = client.get(asked, headers={"Host": "evil.example"})
        assert (response.status_code, response.location) == (308, led)


@pytest.mark.slow
def test_gunicorn_serves_under_the_path_and_its_health_check_at_the_port(
    tmp_path: Path,
) -> None:
    """As the README's proxies pass requests on: the whole path; and the compose file's
    health check asks the port itself for /healthz."""
    env = gunicorn_env(tmp_path, BASE_URL=f"{BASE_URL}{PREFIX}")
    with run_gunicorn("service:create_app()", env, tmp_path) as server:
        rules = http_get(server.port, f"{PREFIX}/rules")
        html = rules.body.decode()  # type: ignore[attr-defined]
        assert rules.status == 200 and f'href="{PREFIX}/static/style.css?v=' in html
        assert http_get(server.port, "/healthz").status == 200
        assert http_get(server.port, "/rules").status == 200  # a proxy took the path off
        assert http_get(server.port, f"{PREFIX}x/rules").status == 404
