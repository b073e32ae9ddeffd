"""Configuration comes from the environment when the app is created, with safe defaults."""

from __future__ import annotations

import importlib.abc
import random
import re
import subprocess
import sys
import types
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from flask import Flask

from service import create_app
from service.config import SETTINGS, ConfigError, check_limit_storage, database_url, read_settings
from service.mail.kinds import written
from service.models import OutboxMessage, db

from .conftest import base_config
from .helpers import pick_action
from .servers import (
    PRODUCTION,
    ROOT,
    clean_env,
    gunicorn_command,
    gunicorn_env,
    gunicorn_refusal,
    run_flask,
)

pytestmark = pytest.mark.both_backends


def without_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Take every setting the service reads out of this test's environment."""
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)


def test_development_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    without_settings(monkeypatch)
    app = create_app({"instance_path": str(tmp_path)})
    assert app.config["SQLALCHEMY_DATABASE_URI"] == f"sqlite:///{tmp_path / 'splitmind.sqlite'}"
    key = (tmp_path / "secret_key").read_text().strip()
    assert app.config["SECRET_KEY"] == key and len(key) >= 40
    assert create_app({"instance_path": str(tmp_path)}).config["SECRET_KEY"] == key  # kept
    assert app.config["LOCAL_MAILBOX"] is True
    assert app.config["BASE_URL"] == "http://127.0.0.1:5000"


def test_environment_is_read_at_creation(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgres://u@db/splitmind")
    monkeypatch.setenv("BASE_URL", "https://play.example.org/")
    monkeypatch.setenv("SECRET_KEY", "k" * 40)
    monkeypatch.setenv("MAIL_SERVER", "smtp.example.org")
    monkeypatch.setenv("MAIL_PORT", "587")
    monkeypatch.setenv("MAIL_USE_TLS", "true")
    app = create_app({"instance_path": str(tmp_path)})
    assert app.config["SQLALCHEMY_DATABASE_URI"] == "postgresql+psycopg://u@db/splitmind"
    assert app.config["BASE_URL"] == "https://play.example.org"
    assert app.config["MAIL_PORT"] == 587 and app.config["MAIL_USE_TLS"] is True
    assert app.config["LOCAL_MAILBOX"] is False
    assert app.config["SESSION_COOKIE_SECURE"] is True
    assert "local_mailbox" not in app.blueprints


# A setting changed from PRODUCTION, and the message the service refuses to start with.
REFUSED = [
    ({"SPLITMIND_ENV": "prod"}, "SPLITMIND_ENV must be development or production, not 'prod'"),
    ({"DATABASE_URL": ""}, "DATABASE_URL is required when SPLITMIND_ENV=production"),
    (
        {"DATABASE_URL": "sqlite:////srv/splitmind.sqlite"},
        "DATABASE_URL must not be SQLite when SPLITMIND_ENV=production",
    ),
    ({"SECRET_KEY": ""}, "SECRET_KEY is required when SPLITMIND_ENV=production"),
    (
        {"SECRET_KEY": "k" * 31},
        "SECRET_KEY must be at least 32 bytes when SPLITMIND_ENV=production (it has 31)",
    ),
    (
        {"BASE_URL": ""},
        "BASE_URL must be the public https:// address when SPLITMIND_ENV=production, "
        "not http://127.0.0.1:5000",
    ),
    (
        {"BASE_URL": "http://play.example.org"},
        "BASE_URL must be the public https:// address when SPLITMIND_ENV=production, "
        "not http://play.example.org",
    ),
    *(
        (
            {"BASE_URL": url},
            "BASE_URL must be the public https:// address when SPLITMIND_ENV=production, "
            f"not {url}",
        )
        # No host (links would be https:/play/...), and this very machine however it is written.
        for url in (
            "https://",
            "https://:8443",
            "https://localhost:8000",
            "https://LOCALHOST.",
            "https://app.localhost",
            "https://127.0.0.2",
            "https://127.0.0.1.",
            "https://[::1]:8443",
            "https://[::ffff:127.0.0.1]",
            "https://0.0.0.0",
        )
    ),
    ({"MAIL_SERVER": ""}, "MAIL_SERVER is required when SPLITMIND_ENV=production"),
    *(
        (
            {"MAIL_DEFAULT_SENDER": sender},
            "MAIL_DEFAULT_SENDER must be an address of the service's own domain when "
            "SPLITMIND_ENV=production, such as Split Mind <play@example.org>, not "
            f"{sender!r}",
        )
        for sender in (
            "Split Mind <splitmind@localhost>",
            "splitmind@127.0.0.1",
            "Split Mind",
            "splitmind@",
        )
    ),
    ({"MAIL_PORT": "abc"}, "MAIL_PORT must be a whole number, not 'abc'"),
    ({"MAIL_TIMEOUT": "soon"}, "MAIL_TIMEOUT must be a number, not 'soon'"),
    ({"DATABASE_LOCK_TIMEOUT": "soon"}, "DATABASE_LOCK_TIMEOUT must be a number, not 'soon'"),
    (
        {"DATABASE_STATEMENT_TIMEOUT": "-1"},
        "DATABASE_STATEMENT_TIMEOUT must not be negative, not '-1'",
    ),
    ({"TRUSTED_PROXIES": "-1"}, "TRUSTED_PROXIES must not be negative, not '-1'"),
    # A service that would start and refuse every body, or fail to start with a traceback.
    ({"MAX_CONTENT_LENGTH": "0"}, "MAX_CONTENT_LENGTH must be at least 1024, not '0'"),
    (
        {"RATELIMIT_STORAGE_URI": "bogus://:secret@x"},
        "RATELIMIT_STORAGE_URI must be memory:// or a storage such as redis://host:6379/0, "
        "not 'bogus://…'",
    ),
    (
        {"RATELIMIT_STORAGE_URI": "async+memory://"},
        "RATELIMIT_STORAGE_URI must be memory:// or a storage such as redis://host:6379/0, "
        "not 'async+memory://…'",
    ),
    (
        {"RATELIMIT_STORAGE_URI": "localhost:6379"},
        "RATELIMIT_STORAGE_URI must be memory:// or a storage such as redis://host:6379/0, "
        "not a URL without a scheme",
    ),
    # A storage's own refusal of its URL, which Flask-Limiter meets as the app starts.
    (
        {"RATELIMIT_STORAGE_URI": "redis://:secret@redis:port/0"},
        "RATELIMIT_STORAGE_URI 'redis://…' cannot be used: "
        "Port could not be cast to integer value as 'port'",
    ),
    (
        {"RATELIMIT_STORAGE_URI": "redis://:secret@[::1:6379/0"},
        "RATELIMIT_STORAGE_URI 'redis://…' cannot be used: Invalid IPv6 URL",
    ),
    (
        {"RATELIMIT_STORAGE_URI": "redis+sentinel://:secret@redis:26379"},
        "RATELIMIT_STORAGE_URI 'redis+sentinel://…' cannot be used: 'service_name' not provided",
    ),
    ({"MAIL_USE_TLS": "maybe"}, "MAIL_USE_TLS must be true or false, not 'maybe'"),
    *(
        (
            {"METRICS_TOKEN": token},
            "METRICS_TOKEN must be written with letters, digits and - . _ ~ + / (then = "
            "signs) alone, as a Bearer token is: no scraper could send it",
        )
        for token in (" s3cret", "s3cret ", "sécret", "a=b")
    ),
    # Without both, the worker logs in to nothing: a server that wants a login refuses each
    # message for good.
    (
        {"MAIL_USERNAME": "play@example.org"},
        "MAIL_PASSWORD is required with MAIL_USERNAME: without both, mail is sent without "
        "logging in to the SMTP server",
    ),
    (
        {"MAIL_PASSWORD": "secret"},
        "MAIL_USERNAME is required with MAIL_PASSWORD: without both, mail is sent without "
        "logging in to the SMTP server",
    ),
    # TLS from the start offers no STARTTLS after it: no message would ever leave.
    (
        {"MAIL_USE_TLS": "true", "MAIL_USE_SSL": "true"},
        "MAIL_USE_TLS and MAIL_USE_SSL must not both be true: MAIL_USE_SSL=true for TLS "
        "from the start (port 465), MAIL_USE_TLS=true for STARTTLS (port 587)",
    ),
    ({"LOG_LEVEL": "loud"}, "LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, not 'LOUD'"),
    ({"LOG_FORMAT": "xml"}, "LOG_FORMAT must be text or json, not 'xml'"),
    (
        {"REPLY_ADDRESS": "play+x@example.org"},
        "REPLY_ADDRESS must be a plain address such as play@example.org, not 'play+x@example.org'",
    ),
    (
        {"REPLY_ADDRESS": "example.org"},
        "REPLY_ADDRESS must be a plain address such as play@example.org, not 'example.org'",
    ),
    (
        {"REPLY_ANSWERS_PER_HOUR": "many"},
        "REPLY_ANSWERS_PER_HOUR must be a whole number, not 'many'",
    ),
    ({"IMAP_PORT": "imap"}, "IMAP_PORT must be a whole number, not 'imap'"),
    # `mail fetch` would move each reply into the folder it reads, and read it for ever.
    (
        {"IMAP_DONE_FOLDER": "inbox"},
        "IMAP_DONE_FOLDER must not be IMAP_FOLDER ('INBOX'): "
        "the replies handled are moved out of the folder read",
    ),
    (
        {"IMAP_FOLDER": "Replies", "IMAP_DONE_FOLDER": "Replies"},
        "IMAP_DONE_FOLDER must not be IMAP_FOLDER ('Replies'): "
        "the replies handled are moved out of the folder read",
    ),
    ({"IMAP_TIMEOUT": "0"}, "IMAP_TIMEOUT must be at least 1, not '0'"),
    # The page's script would read 0 as its own first wait, and waits a minute at most.
    ({"PAGE_POLL_SECONDS": "0"}, "PAGE_POLL_SECONDS must be at least 0.1, not '0'"),
    ({"PAGE_POLL_SECONDS": "600"}, "PAGE_POLL_SECONDS must be at most 60, not '600'"),
    ({"IMAP_PLAINTEXT_LOGIN": "maybe"}, "IMAP_PLAINTEXT_LOGIN must be true or false, not 'maybe'"),
    # Values that would start and fail later: at each connection, message or new game.
    ({"MAIL_TIMEOUT": "nan"}, "MAIL_TIMEOUT must be a number, not 'nan'"),
    # Python's SMTP client refuses a timeout of 0 (a non-blocking socket) at every connection,
    # and the worker would set each message aside as failed.
    ({"MAIL_TIMEOUT": "0"}, "MAIL_TIMEOUT must be at least 1, not '0'"),
    (
        {"DATABASE_CONNECT_TIMEOUT": "inf"},
        "DATABASE_CONNECT_TIMEOUT must be a number, not 'inf'",
    ),
    # libpq takes 0 for no limit: a request would wait for a silent database for ever.
    (
        {"DATABASE_CONNECT_TIMEOUT": "0"},
        "DATABASE_CONNECT_TIMEOUT must be at least 1, not '0'",
    ),
    (
        {"DATABASE_CONNECT_TIMEOUT": "0.5"},
        "DATABASE_CONNECT_TIMEOUT must be at least 1, not '0.5'",
    ),
    (
        {"DATABASE_LOCK_TIMEOUT": "3000000"},
        "DATABASE_LOCK_TIMEOUT must be at most 86400, not '3000000'",
    ),
    (
        {"DEFAULT_DAYS_PER_MOVE": "99999999"},
        "DEFAULT_DAYS_PER_MOVE must be at most 365, not '99999999'",
    ),
    ({"MAIL_PORT": "70000"}, "MAIL_PORT must be at most 65535, not '70000'"),
    ({"MAIL_PORT": "0"}, "MAIL_PORT must be at least 1, not '0'"),
    ({"IMAP_PORT": "0"}, "IMAP_PORT must be at least 1, not '0'"),
    (
        {"REPLY_ADDRESS": "play@ex\u00e4mple.org"},
        "REPLY_ADDRESS must be a plain address such as play@example.org, "
        "not 'play@ex\u00e4mple.org'",
    ),
    (
        {"DATABASE_URL": "postgresql://root:secret@db:port/splitmind"},
        "DATABASE_URL must be a database URL such as postgresql://user@host/name",
    ),
    # A database the service does not run on: its driver's ModuleNotFoundError at the first query.
    (
        {"DATABASE_URL": "mysql://root:secret@db/splitmind"},
        "DATABASE_URL must be a PostgreSQL or SQLite URL such as postgresql://user@host/name, "
        "not 'mysql://…'",
    ),
    (
        {"DATABASE_URL": "postgresql+psycopg2://root:secret@db/splitmind"},
        "DATABASE_URL must be a PostgreSQL or SQLite URL such as postgresql://user@host/name, "
        "not 'postgresql+psycopg2://…'",
    ),
    # An address no URL parser reads: the production checks meet it first.
    (
        {"BASE_URL": "https://[2001:db8::7"},
        "BASE_URL must be an http:// or https:// address with a host, such as "
        "https://play.example.org, not 'https://[2001:db8::7'",
    ),
    # An option libpq does not know (a typo of sslmode) fails every connection, each a traceback.
    (
        {"DATABASE_URL": "postgresql://root:secret@db/splitmind?sslmod=require"},
        'DATABASE_URL must hold only options libpq knows: invalid connection option "sslmod"',
    ),
    # A value libpq refuses fails every connection too, said as an outage that never ends.
    (
        {"DATABASE_URL": "postgresql://root:secret@db/splitmind?sslmode=verify_full"},
        'DATABASE_URL must hold only values libpq takes: invalid sslmode value: "verify_full"',
    ),
    (
        {"DATABASE_URL": "postgresql://root:secret@db:65536/splitmind"},
        'DATABASE_URL must hold only values libpq takes: invalid port number: "65536"',
    ),
    (
        {"DATABASE_URL": "postgresql://root:secret@/splitmind?host=a,b&port=5432,5433,5434"},
        "DATABASE_URL cannot be read: number of hosts and ports don't match",
    ),
    (
        {"DATABASE_URL": "postgresql://root:secret@/splitmind?host=a,b&port=5432&port=1&port=2"},
        "DATABASE_URL cannot be read: number of hosts and ports don't match",
    ),
    (
        {"SECRET_KEY_FALLBACKS": f"{'k' * 40},dev"},
        "each of SECRET_KEY_FALLBACKS must be at least 32 bytes when SPLITMIND_ENV=production "
        "(key 2 has 3)",
    ),
]


def refused(*names: str) -> list[tuple[dict[str, str], str]]:
    """The cases of REFUSED that change one of these settings."""
    return [(change, message) for change, message in REFUSED if set(change) <= set(names)]


# Refused whatever the mode.
BAD_VALUES = refused(
    "DATABASE_CONNECT_TIMEOUT",
    "DEFAULT_DAYS_PER_MOVE",
    "MAIL_PORT",
    "MAIL_TIMEOUT",
    "DATABASE_LOCK_TIMEOUT",
    "DATABASE_STATEMENT_TIMEOUT",
    "TRUSTED_PROXIES",
    "MAIL_USE_TLS",
    "MAIL_USE_SSL",
    "MAIL_USERNAME",
    "MAIL_PASSWORD",
    "LOG_LEVEL",
    "LOG_FORMAT",
    "REPLY_ADDRESS",
    "REPLY_ANSWERS_PER_HOUR",
    "IMAP_PORT",
    "IMAP_FOLDER",
    "IMAP_DONE_FOLDER",
    "IMAP_TIMEOUT",
    "IMAP_PLAINTEXT_LOGIN",
    "MAX_CONTENT_LENGTH",
    "RATELIMIT_STORAGE_URI",
    "METRICS_TOKEN",
)


def production_env(monkeypatch: pytest.MonkeyPatch, change: dict[str, str]) -> None:
    without_settings(monkeypatch)
    for name, value in {**PRODUCTION, **change}.items():
        monkeypatch.setenv(name, value)


def production_app(
    change: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Flask:
    """The app started with production settings and ``change``."""
    production_env(monkeypatch, change)
    return create_app({"instance_path": str(tmp_path / "instance")})


def test_production_starts_with_real_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    app = production_app({}, monkeypatch, tmp_path)
    assert app.config["PRODUCTION"] and not app.config["LOCAL_MAILBOX"]
    assert not (tmp_path / "instance").exists()


@pytest.mark.parametrize(("change", "message"), REFUSED)
def test_production_refuses_to_start_with(
    change: dict[str, str], message: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    production_env(monkeypatch, change)
    with pytest.raises(ConfigError) as refused:
        create_app({"instance_path": str(tmp_path)})
    assert str(refused.value) == message
    assert not (tmp_path / "secret_key").exists()


@pytest.mark.parametrize(("change", "message"), BAD_VALUES)
def test_bad_values_are_refused_in_development_too(
    change: dict[str, str], message: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    refused_in_development(change, message, monkeypatch, tmp_path)


def refused_in_development(
    change: dict[str, str], message: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The development app, with only ``change`` set, refuses to start, saying ``message``."""
    without_settings(monkeypatch)
    for name, value in change.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        create_app({"instance_path": str(tmp_path)})


@pytest.mark.parametrize(
    "sender",
    [
        "Split Mind play@example.org",
        "Split Mind <play@example.org",
        "play@example.org, other@example.org",
        "Split Mind, the game <play@example.org>",
        '"Split Mind" <play@example.org> more',
        "splitmind@",
    ],
)
def test_the_sender_must_be_one_address(
    sender: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Written as it is into every email's From: one the players' servers cannot read as one
    address is refused at start, in either mode."""
    message = (
        "MAIL_DEFAULT_SENDER must be one address, such as Split Mind <play@example.org> "
        f"(a name holding a comma in double quotes), not {sender!r}"
    )
    production_env(monkeypatch, {"MAIL_DEFAULT_SENDER": sender})
    with pytest.raises(ConfigError, match="^MAIL_DEFAULT_SENDER must be "):
        create_app({"instance_path": str(tmp_path)})
    refused_in_development({"MAIL_DEFAULT_SENDER": sender}, message, monkeypatch, tmp_path)


@pytest.mark.parametrize(
    "sender",
    [
        "play@example.org",
        "Split Mind <play@example.org>",
        '"Split Mind, the game" <play@example.org>',
        "\u00c9lodie <play@example.org>",
        "Split Mind Inc. <play@example.org>",
    ],
)
def test_a_sender_with_or_without_a_name_starts(
    sender: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    app = production_app({"MAIL_DEFAULT_SENDER": sender}, monkeypatch, tmp_path)
    assert app.config["MAIL_DEFAULT_SENDER"] == sender


@pytest.mark.parametrize(
    "url",
    [
        "https://play.example.org/?ref=mail",
        "https://play.example.org?",
        "https://play.example.org/#top",
        "https://admin:secret@play.example.org",
    ],
)
def test_base_url_is_refused_with_what_links_cannot_follow(
    url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every link is BASE_URL and its path: behind a query or a fragment that path would be
    lost, and every emailed link would open the front page."""
    message = (
        "BASE_URL must hold no query (?), fragment (#) or user name (@): each link is "
        f"BASE_URL followed by its path, not {url!r}"
    )
    refused_in_development({"BASE_URL": url}, message, monkeypatch, tmp_path)


@pytest.mark.parametrize(
    "url",
    [
        "https://",
        "http://:5000",
        "play.example.org",
        "ftp://play.example.org",
        "http://x:port",
        "http://[::1",
    ],
)
def test_base_url_needs_a_host_in_development_too(
    url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    message = (
        "BASE_URL must be an http:// or https:// address with a host, such as "
        f"https://play.example.org, not {url!r}"
    )
    refused_in_development({"BASE_URL": url}, message, monkeypatch, tmp_path)


@pytest.mark.parametrize(
    ("url", "root"),
    [
        ("https://play.example.org", "/"),
        ("https://play.example.org/", "/"),
        ("https://example.org/splitmind/", "/splitmind"),
        ("https://example.org/games/split-mind_2.0~x", "/games/split-mind_2.0~x"),
    ],
)
def test_the_path_of_base_url_is_where_the_service_is_served(
    url: str, root: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    without_settings(monkeypatch)
    monkeypatch.setenv("BASE_URL", url)
    app = create_app({"instance_path": str(tmp_path)})
    assert app.config["BASE_URL"] == url.rstrip("/")
    assert app.config["APPLICATION_ROOT"] == root


@pytest.mark.parametrize(
    "url",
    [
        "https://example.org/split mind",
        "https://example.org/split%20mind",
        "https://example.org/a//b",
        "https://example.org/a/../b",
        "https://example.org/./splitmind",
        "https://example.org/splitmind;x=1",
    ],
)
def test_a_path_of_base_url_the_service_cannot_be_served_under_is_refused(
    url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A path escaped or to be resolved reaches the service as another string than the
    links hold: every page would be not found."""
    message = (
        "BASE_URL's path must be one or more names of letters, digits and -._~ each "
        f"after a /, such as https://example.org/splitmind, not {url!r}"
    )
    refused_in_development({"BASE_URL": url}, message, monkeypatch, tmp_path)


@pytest.mark.parametrize(
    "url",
    ["https://example.org/play", "https://example.org/admin/splitmind", "https://example.org/api"],
)
def test_a_path_of_base_url_that_starts_as_the_services_own_is_refused(
    url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Under /play, a request a proxy passed on without the path (/play/<token>) could not be
    told from one with it, and a log line's /play/play/<token> would keep the token."""
    first = urlsplit(url).path.split("/")[1]
    message = (
        f"BASE_URL's path must not start with /{first}, where the service has pages of its "
        f"own: choose another, such as https://example.org/splitmind, not {url!r}"
    )
    refused_in_development({"BASE_URL": url}, message, monkeypatch, tmp_path)


@pytest.mark.parametrize("name", ["MAIL_SERVER", "IMAP_SERVER"])
@pytest.mark.parametrize(
    "server",
    [
        "smtp.example.org:587",
        "smtp://smtp.example.org",
        "smtp.example.org/",
        "smtp example.org",
        " smtp.example.org",
        "play@smtp.example.org",
        "[2001:db8::25]",
        "203.0.113.25:587",
    ],
)
def test_a_mail_server_is_a_host_alone(
    name: str, server: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No host is named so: the worker (or `mail fetch`) would start and fail every
    connection, the mail held back with nothing but a metric saying so."""
    protocol = name.split("_")[0]
    message = (
        f"{name} must be a host name or address alone, such as {protocol.lower()}.example.org "
        f"(its port goes in {protocol}_PORT), not {server!r}"
    )
    refused_in_development({name: server}, message, monkeypatch, tmp_path)


@pytest.mark.parametrize(
    "server",
    ["smtp.example.org", "smtp.example.org.", "mail-1.example.org", "203.0.113.25", "2001:db8::25"],
)
def test_a_mail_server_may_be_a_name_or_an_address(
    server: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    app = production_app({"MAIL_SERVER": server, "IMAP_SERVER": server}, monkeypatch, tmp_path)
    assert app.config["MAIL_SERVER"] == app.config["IMAP_SERVER"] == server


@pytest.mark.parametrize(
    "url",
    [
        "https://play.example.org.",
        "https://localhost.example.org",
        "https://203.0.113.7:8443",
        "https://[2001:db8::7]",
        "HTTPS://Play.Example.org",
    ],
)
def test_production_takes_any_public_https_address(
    url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Its cookies and its HSTS header whatever case its scheme is written in."""
    app = production_app({"BASE_URL": url}, monkeypatch, tmp_path)
    assert app.config["BASE_URL"] == url
    assert app.config["SESSION_COOKIE_SECURE"] and app.config["REMEMBER_COOKIE_SECURE"]
    assert "Strict-Transport-Security" in app.test_client().get("/rules").headers


def test_secret_key_fallbacks_are_a_comma_separated_list(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    without_settings(monkeypatch)
    monkeypatch.setenv("SECRET_KEY_FALLBACKS", " the key before, ,the first key ")
    app = create_app({"instance_path": str(tmp_path)})
    assert app.config["SECRET_KEY_FALLBACKS"] == ["the key before", "the first key"]
    monkeypatch.delenv("SECRET_KEY_FALLBACKS")
    assert create_app({"instance_path": str(tmp_path)}).config["SECRET_KEY_FALLBACKS"] == []


@pytest.mark.parametrize(
    "key", [f"{'a' * 40},{'b' * 40}", f"{'k' * 40},", f" {'k' * 40}", f"{'k' * 40}\t"]
)
@pytest.mark.parametrize("mode", ["development", "production"])
def test_a_secret_key_that_could_not_become_a_fallback_is_refused(
    key: str, mode: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Changing the key moves it into SECRET_KEY_FALLBACKS, split at its commas and each key
    stripped: a key holding a comma, or a space at either end, would become other keys
    there, and every link it signed would die (or the service refuse the fallbacks)."""
    without_settings(monkeypatch)
    for name, value in {**PRODUCTION, "SPLITMIND_ENV": mode, "SECRET_KEY": key}.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as refused:
        create_app({"instance_path": str(tmp_path)})
    assert str(refused.value) == (
        "SECRET_KEY must hold no comma and no space at either end: changed, it goes into "
        "SECRET_KEY_FALLBACKS, a list split at its commas"
    )
    assert key not in str(refused.value)


# Every message is checked above in-process; the command line reports any refusal the
# same way, shown here for a bad word, a missing setting, a weak one and a bad number.
@pytest.mark.parametrize(("change", "message"), refused("SPLITMIND_ENV", "SECRET_KEY", "MAIL_PORT"))
def test_the_flask_command_refuses_with_one_line(
    change: dict[str, str], message: str, tmp_path: Path
) -> None:
    result = run_flask("db", "upgrade", env=clean_env(**{**PRODUCTION, **change}))
    assert result.returncode == 1
    assert result.stderr == f"Error: {message}\n"


def without_redis(tmp_path: Path, **settings: str) -> dict[str, str]:
    """An environment whose Python cannot import redis, as an install without ``[redis]``."""
    package = tmp_path / "hidden" / "redis"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('raise ImportError("no redis in this install")\n')
    return clean_env(PYTHONPATH=str(package.parent), **settings)


NO_REDIS = (
    "RATELIMIT_STORAGE_URI 'redis://…' needs the Python package redis, which is not installed "
    "(pip install '.[redis]')"
)


def test_a_storage_without_its_client_is_refused_with_one_line(tmp_path: Path) -> None:
    """Flask-Limiter would end the flask command and gunicorn alike in a traceback."""
    env = without_redis(tmp_path, **PRODUCTION, RATELIMIT_STORAGE_URI="redis://:secret@redis:6379")
    command = run_flask("db", "upgrade", env=env)
    assert (command.returncode, command.stderr) == (1, f"Error: {NO_REDIS}\n")
    said = gunicorn_refusal(env)
    assert [line for line in said if "RATELIMIT" in line] == [f"Error: {NO_REDIS}"]
    assert "secret" not in command.stderr + "\n".join(said)


class NoRedis(importlib.abc.MetaPathFinder):
    """Finds no ``redis``, as in an install without ``[redis]``."""

    def find_spec(self, name: str, *args: object) -> None:
        if name.partition(".")[0] == "redis":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


def test_a_storage_needs_its_client_in_development_too(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Missing, as the limits library finds it when it imports the client, or too old."""
    without_settings(monkeypatch)
    monkeypatch.setenv("RATELIMIT_STORAGE_URI", "redis://redis:6379/0")
    monkeypatch.delitem(sys.modules, "redis", raising=False)
    monkeypatch.setattr(sys, "meta_path", [NoRedis(), *sys.meta_path])
    with pytest.raises(ConfigError, match=f"^{re.escape(NO_REDIS)}$"):
        create_app({"instance_path": str(tmp_path)})
    old = types.ModuleType("redis")
    old.__version__ = "2.10.6"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "redis", old)
    too_old = (
        "RATELIMIT_STORAGE_URI 'redis://…' needs the Python package redis 3.0 or later, "
        "not 2.10.6 (pip install '.[redis]')"
    )
    with pytest.raises(ConfigError, match=f"^{re.escape(too_old)}$"):
        create_app({"instance_path": str(tmp_path)})


def test_the_flask_command_refuses_a_bad_number_in_development(tmp_path: Path) -> None:
    env = clean_env(MAIL_PORT="abc", DATABASE_URL=f"sqlite:///{tmp_path / 'x.sqlite'}")
    result = run_flask("games", "show", "1", env=env)
    assert result.returncode == 1
    assert result.stderr == "Error: MAIL_PORT must be a whole number, not 'abc'\n"


@pytest.mark.parametrize(("change", "message"), refused("SPLITMIND_ENV", "MAIL_PORT"))
def test_gunicorn_refuses_with_one_line(
    change: dict[str, str], message: str, tmp_path: Path
) -> None:
    said = gunicorn_refusal(clean_env(**{**PRODUCTION, **change}))
    assert [line for line in said if message in line] == [f"Error: {message}"]


@pytest.mark.parametrize(
    ("change", "processes"),
    [
        ({}, 1),
        ({"RATELIMIT_STORAGE_URI": "redis://redis:6379/0"}, 3),
        ({"SPLITMIND_ENV": "development"}, 3),
    ],
)
def test_per_process_limits_do_for_one_process_or_outside_production(
    change: dict[str, str], processes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    production_env(monkeypatch, change)
    check_limit_storage(read_settings(), processes)  # raises ConfigError when refused


@pytest.mark.parametrize("storage", ["memory://", "MEMORY://", "Memory://"])
def test_per_process_limits_are_refused_under_several_processes_in_production(
    storage: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """However its scheme is written: the limits library reads it lowercased."""
    app = production_app({"RATELIMIT_STORAGE_URI": storage}, monkeypatch, tmp_path)
    assert app.config["RATELIMIT_STORAGE_URI"] == storage
    with pytest.raises(ConfigError, match=f"^RATELIMIT_STORAGE_URI={storage} keeps"):
        check_limit_storage(read_settings(), 2)


PER_PROCESS_LIMITS = (
    "RATELIMIT_STORAGE_URI=memory:// keeps rate-limit counts per process but {} gunicorn "
    "workers serve: set RATELIMIT_STORAGE_URI=redis://host:6379/0 when "
    "SPLITMIND_ENV=production (or run one worker)"
)


@pytest.mark.parametrize(
    ("change", "workers", "count"),
    [
        ({}, None, 3),  # gunicorn.conf.py's workers, on the default memory://
        ({"RATELIMIT_STORAGE_URI": "memory://"}, 2, 2),
        ({"GUNICORN_CMD_ARGS": "--workers 5"}, None, 5),
    ],
)
def test_gunicorn_refuses_several_workers_on_per_process_limits(
    change: dict[str, str], workers: int | None, count: int, tmp_path: Path
) -> None:
    result = subprocess.run(
        gunicorn_command("service:create_app()", workers),
        env=gunicorn_env(tmp_path, **PRODUCTION, **change),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "Booting worker" not in result.stderr
    message = PER_PROCESS_LIMITS.format(count)
    assert [line for line in result.stderr.splitlines() if "RATELIMIT" in line] == [
        f"Error: {message}"
    ]


def test_database_url_forms() -> None:
    assert database_url("postgresql://a@b/c") == "postgresql+psycopg://a@b/c"
    assert database_url("sqlite:///x.db") == "sqlite:///x.db"


def test_links_use_base_url_never_the_host_header(app, client, make_game) -> None:
    game = make_game(seed=3)
    rng = random.Random(3)
    for seat in ("keeper", "shadow"):  # the exchange: the Keeper leads next
        view = client.get(f"/api/play/{game[seat]}").get_json()
        body = {"version": view["version"], **pick_action(view, rng)}
        assert client.post(f"/api/play/{game[seat]}", json=body).status_code == 200
    with app.app_context():
        before = db.session.scalar(db.select(db.func.max(OutboxMessage.id)))
    view = client.get(f"/api/play/{game['keeper']}").get_json()
    lead = {"version": view["version"], **pick_action(view, rng)}
    response = client.post(
        f"/api/play/{game['keeper']}", json=lead, headers={"Host": "attacker.example"}
    )
    assert response.status_code == 200
    # Written when sent, by the worker; written inside a request to the attacker's host too.
    with app.test_request_context(base_url="http://attacker.example"):
        new = db.session.scalars(db.select(OutboxMessage).where(OutboxMessage.id > before)).all()
        emails = [(message, written(message)) for message in new]
    assert new, "the lead queues the Shadow's turn email during the request"
    for message, email in emails:
        assert email is not None
        text = email.text + email.html + str(message.headers)
        assert "attacker.example" not in text
        assert "http://splitmind.test/play/" in text


BANNER = {
    "en": "development: mail is delivered to the local mailbox, not sent",
    "fr": "développement\u00a0: le courrier est remis à la boîte aux lettres locale",
}


def test_every_page_says_mail_goes_to_the_local_mailbox(app, client, make_game) -> None:
    assert app.config["LOCAL_MAILBOX"]
    game = make_game(seed=2)
    pages = ["/", "/rules", "/new", "/links", "/mailbox", "/admin/login", "/no/such/page"]
    for url in [*pages, f"/play/{game['keeper']}", f"/play/{game['keeper']}zz"]:
        for language, banner in BANNER.items():
            page = client.get(url, query_string={"lang": language}).get_data(as_text=True)
            english_only = url.startswith("/admin")  # the dashboard speaks English alone
            assert (BANNER["en"] if english_only else banner) in page, (url, language)
        assert 'href="/mailbox"' in page


def test_no_banner_when_mail_is_sent(tmp_path: Path) -> None:
    config = base_config(f"sqlite:///{tmp_path / 'x.sqlite'}", tmp_path)
    app = create_app({**config, "MAIL_SERVER": "smtp.example.org"})
    page = app.test_client().get("/rules").get_data(as_text=True)
    assert "local mailbox" not in page and "/mailbox" not in page
