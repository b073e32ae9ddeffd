"""The local mailbox of development mode: read both players' emails, follow their links."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from flask import Flask

from service import create_app
from service.mail.worker import drain

from .conftest import base_config

pytestmark = pytest.mark.both_backends


def test_a_newcomer_plays_from_the_local_mailbox(app: Flask, make_game) -> None:
    assert app.config["LOCAL_MAILBOX"]
    make_game(seed=9)
    with app.app_context():
        assert drain() == 2  # the local transport delivers into the outbox table
    client = app.test_client()
    inbox = client.get("/mailbox").get_data(as_text=True)
    assert inbox.count("you are the") == 2
    for address in ("kim@example.com", "sam@example.com"):
        listing = client.get(f"/mailbox?to={address}").get_data(as_text=True)
        (message_url,) = re.findall(r'href="(/mailbox/\d+)"', listing)
        message = client.get(message_url).get_data(as_text=True)
        links = re.findall(r'href="http://splitmind\.test(/play/[^"]+)"', message)
        assert links, message
        page = client.get(links[0])
        assert page.status_code == 200 and "Game 1" in page.get_data(as_text=True)
        html = client.get(f"{message_url}/html")
        assert (
            html.status_code == 200
            and "default-src 'none'" in html.headers["Content-Security-Policy"]
        )


def test_no_mailbox_with_a_mail_server_or_in_production(tmp_path: Path) -> None:
    config = base_config(f"sqlite:///{tmp_path / 'x.sqlite'}", tmp_path)
    with_server = create_app({**config, "MAIL_SERVER": "smtp.example.org"})
    assert with_server.test_client().get("/mailbox").status_code == 404
    production = create_app(
        {
            **config,
            "SPLITMIND_ENV": "production",
            "DATABASE_URL": "postgresql://splitmind@db.example.org/splitmind",
            "SECRET_KEY": "k" * 40,
            "BASE_URL": "https://play.example.org",
            "MAIL_SERVER": "smtp.example.org",
            "MAIL_DEFAULT_SENDER": "Split Mind <play@example.org>",
        }
    )
    assert "local_mailbox" not in production.blueprints
    # Nor does production run the development server, which would serve it.
    refused = production.test_cli_runner().invoke(args=["serve"])
    assert refused.exit_code == 2
    assert "serve is the development server: in production run gunicorn" in refused.output
