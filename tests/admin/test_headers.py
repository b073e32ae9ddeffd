"""Security headers on the dashboard, and pages that need no inline script or style."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from service.models import OutboxMessage, db

from .conftest import play
from .test_games import new_game


def pages(app, admin) -> list[str]:
    """One URL of every page of the dashboard, with a live and a finished game."""
    live = new_game(app, "kim@example.com", "sam@example.com", seed=1)
    over = new_game(app, "ann@example.com", "bob@example.com", seed=2)
    play(app, over, seed=3)
    with app.app_context():
        message = db.session.scalars(
            select(OutboxMessage.id).where(OutboxMessage.game_id == over).order_by(OutboxMessage.id)
        ).first()
    return [
        "/admin/",
        "/admin/games?status=active&sort=deadline",
        f"/admin/games/{live}",
        f"/admin/games/{over}",
        "/admin/mail",
        f"/admin/mail/{message}",
        f"/admin/mail/{message}/html",
        "/admin/stats",
        "/admin/playtest",
    ]


def test_every_admin_page_sends_the_security_headers(app, admin) -> None:
    responses = {url: admin.get(url) for url in pages(app, admin)}
    responses["/admin/login"] = app.test_client().get("/admin/login")
    for url, response in responses.items():
        assert response.status_code == 200, url
        headers = response.headers
        csp = headers["Content-Security-Policy"]
        assert "unsafe-inline" not in csp.replace("style-src 'unsafe-inline'", ""), url
        assert headers["Referrer-Policy"] == "same-origin", url
        assert headers["X-Content-Type-Options"] == "nosniff", url
        assert headers["Cache-Control"] == "no-store", url
        assert "Strict-Transport-Security" not in headers  # plain HTTP in this test
        if url.endswith("/html"):
            continue
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp, url
        assert headers["X-Frame-Options"] == "DENY", url


def test_an_email_body_is_framed_only_here_and_runs_nothing(app, admin) -> None:
    url = next(url for url in pages(app, admin) if url.endswith("/html"))
    headers = admin.get(url).headers
    csp = headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "sandbox" in csp and "frame-ancestors 'self'" in csp
    assert "script-src" not in csp
    assert headers["X-Frame-Options"] == "SAMEORIGIN"


def test_pages_have_no_inline_script_or_style(app, admin) -> None:
    responses = {url: admin.get(url) for url in pages(app, admin) if not url.endswith("/html")}
    responses["/admin/login"] = app.test_client().get("/admin/login")
    for url, response in responses.items():
        html = response.get_data(as_text=True)
        assert "<script" not in html, url
        assert not re.search(r"<[^>]+\sstyle=", html), url
        assert not re.search(r"<[^>]+\son[a-z]+=", html), url


def test_a_text_body_is_shown_as_text(app, admin) -> None:
    pages(app, admin)
    with app.app_context():
        message = db.session.scalars(select(OutboxMessage).order_by(OutboxMessage.id)).first()
        message.game_id = None
        message.params = None  # written when it was queued: shown as it is
        message.subject, message.html_body = "Hi", "<p>Hi</p>"
        message.text_body = "<script>alert(1)</script> & <b>bold</b>"
        db.session.commit()
        message_id = message.id
    html = admin.get(f"/admin/mail/{message_id}").get_data(as_text=True)
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in html


@pytest.mark.parametrize("app_config", [{"BASE_URL": "https://splitmind.test"}])
def test_hsts_over_https(app, client, make_game) -> None:
    game = make_game()
    for url in ("/admin/login", f"/play/{game['keeper']}"):
        response = client.get(url)
        assert response.headers["Strict-Transport-Security"].startswith("max-age="), url
        assert response.headers["Cache-Control"] == "no-store", url


def test_player_pages_are_not_cached_either(client, make_game) -> None:
    game = make_game()
    for url in (f"/play/{game['keeper']}", f"/api/play/{game['keeper']}"):
        assert client.get(url).headers["Cache-Control"] == "no-store", url
