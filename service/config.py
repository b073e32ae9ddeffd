"""Configuration, read from the environment when the app is created (never at import time).

Every setting the service reads from the environment is listed in :data:`SETTINGS` with its
default; the README documents them and a test checks docker-compose.yml against them.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
import secrets
from collections.abc import Mapping
from datetime import timedelta
from email import errors, policy
from email.utils import parseaddr
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import click
import psycopg
from flask import Flask
from limits.storage import SCHEMES, Storage
from limits.util import MissingModule, get_dependency
from psycopg import pq
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from sqlalchemy.engine import URL, Dialect, make_url
from sqlalchemy.exc import ArgumentError

from . import json_codec

# Name: (default, description). A default of None means "not set".
SETTINGS: dict[str, tuple[str | None, str]] = {
    "SPLITMIND_ENV": ("development", "development or production; anything else refuses to start"),
    "DATABASE_URL": (None, "PostgreSQL or SQLite URL; default a SQLite file in the instance"),
    "DATABASE_CONNECT_TIMEOUT": (
        "5",
        "seconds to wait for a PostgreSQL connection (1 at least; libpq waits 2 at least)",
    ),
    "DATABASE_STATEMENT_TIMEOUT": (
        "5",
        "seconds a PostgreSQL statement may take, waits included; 0 for no limit",
    ),
    "DATABASE_LOCK_TIMEOUT": (
        "3",
        "seconds a PostgreSQL statement may wait for a lock; 0: no limit",
    ),
    "SECRET_KEY": (None, "signs player links and sessions; required in production"),
    "SECRET_KEY_FALLBACKS": (None, "earlier SECRET_KEYs, comma-separated, still accepted"),
    "BASE_URL": (
        "http://127.0.0.1:5000",
        "public address every link is built from; its path, if any, is where the app is served",
    ),
    "MAIL_SERVER": (None, "SMTP host; unset in development delivers to the local mailbox"),
    "MAIL_PORT": ("25", "SMTP port"),
    "MAIL_USE_TLS": ("false", "STARTTLS after connecting"),
    "MAIL_USE_SSL": ("false", "SMTP over TLS from the start"),
    "MAIL_USERNAME": (None, "SMTP login"),
    "MAIL_PASSWORD": (None, "SMTP password"),
    "MAIL_DEFAULT_SENDER": ("Split Mind <splitmind@localhost>", "From address of every email"),
    "MAIL_TIMEOUT": (
        "30",
        "seconds before an SMTP connection gives up (the reply to a message's data: ten "
        "minutes at least, as RFC 5321 asks)",
    ),
    "REPLY_ADDRESS": (
        None,
        "address players reply to with a move, e.g. play@example.org (play+<tag>@...)",
    ),
    "REPLY_ANSWERS_PER_HOUR": ("60", "most answers to replies a player gets in an hour"),
    "IMAP_SERVER": (None, "IMAP host that `mail fetch` reads replies from"),
    "IMAP_PORT": ("993", "IMAP port (993: TLS from the start; another: STARTTLS, required)"),
    "IMAP_USERNAME": (None, "IMAP login"),
    "IMAP_PASSWORD": (None, "IMAP password"),
    "IMAP_FOLDER": ("INBOX", "IMAP folder where replies arrive"),
    "IMAP_DONE_FOLDER": ("Handled", "IMAP folder where `mail fetch` moves what it handled"),
    "IMAP_TIMEOUT": ("30", "seconds an IMAP server may stay silent before `mail fetch` gives up"),
    "IMAP_PLAINTEXT_LOGIN": ("false", "log in to an IMAP server that offers no TLS (a local one)"),
    "RATELIMIT_STORAGE_URI": ("memory://", "Flask-Limiter storage, e.g. redis://host:6379"),
    "MAX_CONTENT_LENGTH": (
        "8192",
        "bytes a request body may hold (1024 at least); more is refused (413)",
    ),
    "DEFAULT_DAYS_PER_MOVE": ("7", "days a player has for each move; 0 for no deadline"),
    "VACATION_DAYS_PER_YEAR": ("30", "whole days of vacation a player may take each year"),
    "INVITATION_DAYS": (
        "14",
        "days an invitation waits for its answer (or its creator's confirmation); 0: no end",
    ),
    "OUTBOX_DAYS": (
        "90",
        "days the outbox keeps an email sent, skipped or failed (its links with it), but for "
        "those of a game in play; 0: kept forever",
    ),
    "UNPLAYED_DAYS": (
        "90",
        "days a game that never started (an invitation declined or left unanswered) is kept, "
        "with the addresses typed for it; 0: kept forever",
    ),
    "BOT_DELAY_SECONDS": (
        "3",
        "seconds the computer waits after the last move before it makes its own",
    ),
    "PAGE_POLL_SECONDS": (
        "3",
        "seconds an open move page waits before it first asks whether the opponent moved"
        " (0.1 to 60; longer each time nothing changed, up to a minute)",
    ),
    "TRUSTED_PROXIES": ("0", "reverse proxies in front of the app whose X-Forwarded-* to trust"),
    "LOG_LEVEL": ("INFO", "DEBUG, INFO, WARNING or ERROR: the least severe log line written"),
    "LOG_FORMAT": ("text", "text (one readable line) or json (one JSON object per line)"),
    "METRICS_TOKEN": (None, "Bearer token that /metrics asks for; unset: /metrics is not found"),
    "PROMETHEUS_MULTIPROC_DIR": (
        None,
        "directory where web and worker processes on one machine add up their metrics",
    ),
    "ADMIN_REQUIRE_2FA": ("false", "true: every admin signs in with a code from an authenticator"),
}

ENVIRONMENTS = ("development", "production")
TRUE = {"1", "true", "yes", "on"}
FALSE = {"0", "false", "no", "off"}
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
LOG_FORMATS = ("text", "json")
# The key signs every player link: at least as long as the HMAC's own output.
MIN_SECRET_KEY_BYTES = 32
# The most seconds a timeout or a delay may be set to.
DAY = 24 * 3600
# Names of this very machine (RFC 6761: "localhost" and every name under it).
LOCAL_NAME = "localhost"
# The most a form sent as multipart/form-data may hold, besides MAX_CONTENT_LENGTH: no field
# the service reads takes more than 254 characters, and no form more than a dozen fields.
# service.request_limits refuses a longer field; Werkzeug refuses more parts.
FORM_FIELD_BYTES = 1024
FORM_PARTS = 50
# The least MAX_CONTENT_LENGTH: a body smaller than one form field's most holds no form at all.
LEAST_BODY = FORM_FIELD_BYTES
# The schemes of the rate-limit storages Flask-Limiter can use (the limits library's, but the
# async ones).
LIMIT_STORAGES = {name: kind for name, kind in SCHEMES.items() if issubclass(kind, Storage)}
# The databases the service runs on, by SQLAlchemy's backend and driver names: it reads
# psycopg's errors to tell an outage from a fault.
DATABASES = {("postgresql", "psycopg"), ("sqlite", "pysqlite")}
# How long an admin's sign-in lasts at most (the cookie also ends with the browser session).
ADMIN_SESSION_LIFETIME = timedelta(hours=12)

Number = TypeVar("Number", int, float)


class ConfigError(click.ClickException, RuntimeError):
    """The environment does not describe a service that can start.

    Its message is one line naming the setting. As a ``ClickException`` the
    ``flask`` command prints it as ``Error: ...`` and exits with status 1; as a
    ``RuntimeError`` gunicorn does the same, both without a traceback.
    """


def load_config(app: Flask, overrides: Mapping[str, Any] | None = None) -> None:
    """Fill ``app.config`` from the environment, then from ``overrides`` (tests)."""
    env = read_settings(overrides)
    production = environment(env) == "production"
    if production:
        check_production(env)
    instance = Path(app.instance_path)
    if not production:
        instance.mkdir(parents=True, exist_ok=True)

    url = database_url(env.get("DATABASE_URL") or f"sqlite:///{instance / 'splitmind.sqlite'}")
    # libpq takes a connect_timeout of 0 for no limit at all: a request would wait for ever.
    connect = number(env, "DATABASE_CONNECT_TIMEOUT", float, least=1, most=DAY)
    statement = number(env, "DATABASE_STATEMENT_TIMEOUT", float, most=DAY)
    lock = number(env, "DATABASE_LOCK_TIMEOUT", float, most=DAY)
    body = number(env, "MAX_CONTENT_LENGTH", int, least=LEAST_BODY)
    use_tls, use_ssl = mail_security(env)
    check_mail_login(env)
    app.config.update(
        SPLITMIND_ENV=env["SPLITMIND_ENV"],
        PRODUCTION=production,
        SQLALCHEMY_DATABASE_URI=url,
        SQLALCHEMY_ENGINE_OPTIONS=engine_options(url, connect, statement, lock),
        DATABASE_CONNECT_TIMEOUT=connect,
        DATABASE_STATEMENT_TIMEOUT=statement,
        DATABASE_LOCK_TIMEOUT=lock,
        SECRET_KEY=secret_key(env) or _secret_key(instance),
        # Flask checks session cookies against these too; service.links does the same for links.
        SECRET_KEY_FALLBACKS=fallback_keys(env),
        BASE_URL=base_url(env).rstrip("/"),
        # The path the service is served under (service.mount); Flask scopes the session's
        # cookie to it.
        APPLICATION_ROOT=mount_path(env) or "/",
        MAIL_SERVER=server_host(env, "MAIL_SERVER"),
        # Port 0 is none: smtplib would take it for 25 and the logs would name port 0.
        MAIL_PORT=number(env, "MAIL_PORT", int, least=1, most=65535),
        MAIL_USE_TLS=use_tls,
        MAIL_USE_SSL=use_ssl,
        MAIL_USERNAME=env.get("MAIL_USERNAME"),
        MAIL_PASSWORD=env.get("MAIL_PASSWORD"),
        MAIL_DEFAULT_SENDER=mail_sender(env),
        # smtplib refuses 0 (a non-blocking socket) at each connection: every message would fail.
        MAIL_TIMEOUT=number(env, "MAIL_TIMEOUT", float, least=1, most=DAY),
        LOCAL_MAILBOX=not production and not env.get("MAIL_SERVER"),
        REPLY_ADDRESS=reply_address(env),
        REPLY_ANSWERS_PER_HOUR=number(env, "REPLY_ANSWERS_PER_HOUR", int),
        IMAP_SERVER=server_host(env, "IMAP_SERVER"),
        IMAP_PORT=number(env, "IMAP_PORT", int, least=1, most=65535),
        IMAP_USERNAME=env.get("IMAP_USERNAME"),
        IMAP_PASSWORD=env.get("IMAP_PASSWORD"),
        IMAP_FOLDER=env["IMAP_FOLDER"],
        IMAP_DONE_FOLDER=done_folder(env),
        IMAP_TIMEOUT=number(env, "IMAP_TIMEOUT", float, least=1, most=DAY),
        IMAP_PLAINTEXT_LOGIN=flag(env, "IMAP_PLAINTEXT_LOGIN"),
        MAIL_SUPPRESS_SEND=False,  # the worker decides: SMTP or the local mailbox
        RATELIMIT_STORAGE_URI=limit_storage(env),
        # Werkzeug refuses a larger body (413) while reading it, before any form or JSON is
        # parsed, and stops reading a body sent without a length once it passes the limit.
        MAX_CONTENT_LENGTH=body,
        # Werkzeug (3.1) holds each chunk it reads of a multipart body (64 KB, so all of a
        # small one) to this limit, not each field: six short fields of 200 bytes would be
        # refused. The body's own limit lets every body through that MAX_CONTENT_LENGTH does;
        # service.request_limits holds each field to FORM_FIELD_BYTES.
        MAX_FORM_MEMORY_SIZE=body,
        MAX_FORM_PARTS=FORM_PARTS,
        DEFAULT_DAYS_PER_MOVE=number(env, "DEFAULT_DAYS_PER_MOVE", int, most=365),
        VACATION_DAYS_PER_YEAR=number(env, "VACATION_DAYS_PER_YEAR", int, most=366),
        INVITATION_DAYS=number(env, "INVITATION_DAYS", int, most=365),
        OUTBOX_DAYS=number(env, "OUTBOX_DAYS", int, most=36500),
        UNPLAYED_DAYS=number(env, "UNPLAYED_DAYS", int, most=36500),
        BOT_DELAY_SECONDS=number(env, "BOT_DELAY_SECONDS", float, most=DAY),
        # 0 would read as the script's own default; past a minute, the most it ever waits.
        PAGE_POLL_SECONDS=number(env, "PAGE_POLL_SECONDS", float, least=0.1, most=60),
        TRUSTED_PROXIES=number(env, "TRUSTED_PROXIES", int),
        LOG_LEVEL=log_level(env),
        LOG_FORMAT=log_format(env),
        METRICS_TOKEN=metrics_token(env),
        PROMETHEUS_MULTIPROC_DIR=env.get("PROMETHEUS_MULTIPROC_DIR"),
        ADMIN_REQUIRE_2FA=flag(env, "ADMIN_REQUIRE_2FA"),
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=over_https(env["BASE_URL"]),
        PERMANENT_SESSION_LIFETIME=ADMIN_SESSION_LIFETIME,
        # A form (the dashboard's, the new game's) is good for as long as a sign-in lasts: a
        # page left open for hours still sends what was typed in it.
        WTF_CSRF_TIME_LIMIT=int(ADMIN_SESSION_LIFETIME.total_seconds()),
        REMEMBER_COOKIE_SECURE=over_https(env["BASE_URL"]),
        REMEMBER_COOKIE_HTTPONLY=True,
    )
    if overrides:
        app.config.update({k: v for k, v in overrides.items() if k not in SETTINGS})


def read_settings(overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Each setting of :data:`SETTINGS` that has a value: the environment's, else its default.

    ``overrides`` (tests) win over the environment. An empty variable means the
    default, as an unset one does.
    """
    env: dict[str, Any] = {name: os.environ.get(name) for name in SETTINGS}
    if overrides:
        env.update({k: v for k, v in overrides.items() if k in SETTINGS})
    env = {name: SETTINGS[name][0] if value in (None, "") else value for name, value in env.items()}
    return {name: value for name, value in env.items() if value is not None}


def environment(env: Mapping[str, Any]) -> str:
    """``SPLITMIND_ENV``, one of :data:`ENVIRONMENTS`: a typo must not mean development."""
    value = env["SPLITMIND_ENV"]
    if value not in ENVIRONMENTS:
        raise ConfigError(f"SPLITMIND_ENV must be development or production, not {value!r}")
    return value


def check_production(env: Mapping[str, Any]) -> None:
    """Refuse settings that only make sense on a developer's machine.

    A SQLite file, a local or plain-http ``BASE_URL`` (every emailed link is
    built from it), a short ``SECRET_KEY``, the local mailbox and mail from an
    address of this machine would each leave a running service that quietly
    loses games, links or mail.
    """
    url = env.get("DATABASE_URL")
    if not url:
        raise ConfigError("DATABASE_URL is required when SPLITMIND_ENV=production")
    if url.startswith("sqlite"):
        raise ConfigError("DATABASE_URL must not be SQLite when SPLITMIND_ENV=production")
    key = secret_key(env)
    if not key:
        raise ConfigError("SECRET_KEY is required when SPLITMIND_ENV=production")
    if len(key.encode()) < MIN_SECRET_KEY_BYTES:
        raise ConfigError(
            f"SECRET_KEY must be at least {MIN_SECRET_KEY_BYTES} bytes when "
            f"SPLITMIND_ENV=production (it has {len(key.encode())})"
        )
    # A fallback signs links as the key does: a short one is as guessable.
    for number, fallback in enumerate(fallback_keys(env), start=1):
        if len(fallback.encode()) < MIN_SECRET_KEY_BYTES:
            raise ConfigError(
                f"each of SECRET_KEY_FALLBACKS must be at least {MIN_SECRET_KEY_BYTES} bytes "
                f"when SPLITMIND_ENV=production (key {number} has {len(fallback.encode())})"
            )
    try:
        base = urlsplit(env["BASE_URL"])
    except ValueError:  # a "[" left unclosed: no address at all, which base_url() says
        base_url(env)
        raise
    if base.scheme != "https" or not base.hostname or is_local(base.hostname):
        raise ConfigError(
            "BASE_URL must be the public https:// address when SPLITMIND_ENV=production, "
            f"not {base.geturl()}"
        )
    if not env.get("MAIL_SERVER"):
        raise ConfigError("MAIL_SERVER is required when SPLITMIND_ENV=production")
    # Mail from an address of this machine is refused or filed as spam by the players' servers.
    _, at, domain = parseaddr(str(env["MAIL_DEFAULT_SENDER"]))[1].rpartition("@")
    if not at or not domain or is_local(domain):
        raise ConfigError(
            "MAIL_DEFAULT_SENDER must be an address of the service's own domain when "
            "SPLITMIND_ENV=production, such as Split Mind <play@example.org>, not "
            f"{env['MAIL_DEFAULT_SENDER']!r}"
        )


def is_local(host: str) -> bool:
    """Whether ``host`` names this very machine: ``localhost`` or a name under it, a loopback
    address (all of 127.0.0.0/8, ``::1``, either mapped into IPv6) or the unspecified one,
    with or without the trailing dot of a fully qualified name."""
    name = host.lower().rstrip(".")
    if name == LOCAL_NAME or name.endswith(f".{LOCAL_NAME}"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return address.is_loopback or address.is_unspecified


def base_url(env: Mapping[str, Any]) -> str:
    """``BASE_URL``, if it is an http:// or https:// address with a host: every link in the
    emails starts with it (``https://`` alone would make them ``https:/play/…``)."""
    value = str(env["BASE_URL"])
    try:
        base = urlsplit(value)
        usable = base.scheme in ("http", "https") and bool(base.hostname) and base.port != 0
    except ValueError:  # a port that is no number, or past 65535; a "[" left unclosed
        usable = False
    if not usable:
        raise ConfigError(
            "BASE_URL must be an http:// or https:// address with a host, such as "
            f"https://play.example.org, not {value!r}"
        )
    # Each link is BASE_URL followed by its path: after a query or a fragment the path would be
    # read as part of them, and every emailed link would open something else.
    if any(mark in value for mark in "?#") or "@" in base.netloc:
        raise ConfigError(
            "BASE_URL must hold no query (?), fragment (#) or user name (@): each link is "
            f"BASE_URL followed by its path, not {value!r}"
        )
    return value


# A path segment of BASE_URL: what a link's path holds as it is, with no escape to decode.
PATH_SEGMENT = re.compile(r"[A-Za-z0-9._~-]+")


def mount_path(env: Mapping[str, Any]) -> str:
    """The path of ``BASE_URL`` without its last slash (``/splitmind``), where the service
    is served; ``""`` when it is served at the root of its host."""
    path = urlsplit(base_url(env)).path.rstrip("/")
    segments = path.split("/")[1:]
    if any(not PATH_SEGMENT.fullmatch(part) or part in (".", "..") for part in segments):
        raise ConfigError(
            "BASE_URL's path must be one or more names of letters, digits and -._~ each "
            f"after a /, such as https://example.org/splitmind, not {env['BASE_URL']!r}"
        )
    return path


def over_https(url: str) -> bool:
    """Whether ``url`` is an https:// address, its scheme written in any case (RFC 3986):
    the service's cookies are then sent over HTTPS alone."""
    return urlsplit(url).scheme == "https"


def number(
    env: Mapping[str, Any],
    name: str,
    kind: type[Number],
    *,
    least: float = 0,
    most: float | None = None,
) -> Number:
    """A numeric setting from ``least`` to ``most``, or a :class:`ConfigError` naming it (never
    a ``ValueError``, nor a value that fails later: ``nan``, ``inf``, a day of timeout past what
    PostgreSQL counts in milliseconds, a port past 65535, a body limit no form fits in)."""
    value = env[name]
    what = "a whole number" if kind is int else "a number"
    try:
        result = kind(value)
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(f"{name} must be {what}, not {value!r}") from None
    if not math.isfinite(result):
        raise ConfigError(f"{name} must be {what}, not {value!r}")
    if result < 0:
        raise ConfigError(f"{name} must not be negative, not {value!r}")
    if result < least:
        raise ConfigError(f"{name} must be at least {least:g}, not {value!r}")
    if most is not None and result > most:
        raise ConfigError(f"{name} must be at most {most:g}, not {value!r}")
    return result


# A host name as the resolver takes it (letters of any script, digits, "-", "_", dots): no
# scheme, port, path, user or space, which no connection to it could carry.
HOST_NAME = re.compile(r"[\w.-]+")


def server_host(env: Mapping[str, Any], name: str) -> str | None:
    """``MAIL_SERVER`` or ``IMAP_SERVER``, if a host name or an IP address alone; ``None`` when
    unset. A URL or ``host:port`` would start a worker that fails every connection to it, the
    mail held back with nothing but the outbox's metrics to say so."""
    value = env.get(name)
    if value is None:
        return None
    try:
        ipaddress.ip_address(value)
    except ValueError:
        if not HOST_NAME.fullmatch(value):
            protocol, _ = name.split("_")
            raise ConfigError(
                f"{name} must be a host name or address alone, such as "
                f"{protocol.lower()}.example.org (its port goes in {protocol}_PORT), not {value!r}"
            ) from None
    return str(value)


def done_folder(env: Mapping[str, Any]) -> str:
    """``IMAP_DONE_FOLDER``, if it is not ``IMAP_FOLDER`` itself (INBOX in any case, as IMAP
    names it): `mail fetch` would move each message into the folder it reads, and read it
    again, for ever."""
    folder, done = env["IMAP_FOLDER"], env["IMAP_DONE_FOLDER"]
    if done == folder or done.upper() == folder.upper() == "INBOX":
        raise ConfigError(
            f"IMAP_DONE_FOLDER must not be IMAP_FOLDER ({folder!r}): "
            "the replies handled are moved out of the folder read"
        )
    return str(done)


def secret_key(env: Mapping[str, Any]) -> str | None:
    """``SECRET_KEY``, if one that could become one of ``SECRET_KEY_FALLBACKS`` when it is
    changed: that list is split at its commas and each key stripped, so a key holding a
    comma, or a space at either end, would become other keys there and every link it
    signed would die."""
    key = env.get("SECRET_KEY")
    if key is not None and ("," in key or key != key.strip()):
        raise ConfigError(
            "SECRET_KEY must hold no comma and no space at either end: changed, it goes into "
            "SECRET_KEY_FALLBACKS, a list split at its commas"
        )
    return key


def fallback_keys(env: Mapping[str, Any]) -> list[str]:
    """``SECRET_KEY_FALLBACKS``, split at its commas."""
    return [key.strip() for key in env.get("SECRET_KEY_FALLBACKS", "").split(",") if key.strip()]


def flag(env: Mapping[str, Any], name: str) -> bool:
    """A true/false setting; anything but the usual spellings is refused, not read as false."""
    value = str(env[name]).lower()
    if value not in TRUE | FALSE:
        raise ConfigError(f"{name} must be true or false, not {value!r}")
    return value in TRUE


def mail_sender(env: Mapping[str, Any]) -> str:
    """``MAIL_DEFAULT_SENDER``, if it is one address, with or without a name, as an email's
    ``From`` carries it: the worker writes it into every email as it is, and the players' mail
    servers refuse or file as spam a ``From`` of two addresses or of none that parses."""
    value = str(env["MAIL_DEFAULT_SENDER"])
    try:
        header = policy.default.header_factory("From", value)
        # An obsolete form ("J. Smith", a period in the name) is read as meant, and sent so.
        faults = [d for d in header.defects if not isinstance(d, errors.ObsoleteHeaderDefect)]
        one = not faults and len(header.addresses) == 1
    except (errors.HeaderParseError, IndexError, ValueError):  # the parser's own failures
        one = False
    if not one or not header.addresses[0].domain:
        raise ConfigError(
            "MAIL_DEFAULT_SENDER must be one address, such as Split Mind <play@example.org> "
            f"(a name holding a comma in double quotes), not {value!r}"
        )
    return value


# What a Bearer token is written with (RFC 6750's b64token): a token with anything else (a
# space, a letter beyond ASCII) is one no Authorization header carries, and /metrics would
# refuse every scrape.
BEARER_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


def metrics_token(env: Mapping[str, Any]) -> str | None:
    """``METRICS_TOKEN``, if a scraper can send it as a Bearer token; ``None`` when unset."""
    token = env.get("METRICS_TOKEN")
    if token and not BEARER_TOKEN.fullmatch(token):
        raise ConfigError(
            "METRICS_TOKEN must be written with letters, digits and - . _ ~ + / (then = "
            "signs) alone, as a Bearer token is: no scraper could send it"
        )
    return token


def check_mail_login(env: Mapping[str, Any]) -> None:
    """``MAIL_USERNAME`` and ``MAIL_PASSWORD``, both or neither: with one alone the worker
    logs in to no server, and one that wants a login refuses every message (530), each set
    aside as failed for good."""
    for given, missing in (("MAIL_USERNAME", "MAIL_PASSWORD"), ("MAIL_PASSWORD", "MAIL_USERNAME")):
        if env.get(given) and not env.get(missing):
            raise ConfigError(
                f"{missing} is required with {given}: without both, mail is sent without "
                "logging in to the SMTP server"
            )


def mail_security(env: Mapping[str, Any]) -> tuple[bool, bool]:
    """``MAIL_USE_TLS`` and ``MAIL_USE_SSL``, not both: a connection that speaks TLS from the
    start is offered no STARTTLS, so the worker would never pass the greeting."""
    use_tls, use_ssl = flag(env, "MAIL_USE_TLS"), flag(env, "MAIL_USE_SSL")
    if use_tls and use_ssl:
        raise ConfigError(
            "MAIL_USE_TLS and MAIL_USE_SSL must not both be true: MAIL_USE_SSL=true for TLS "
            "from the start (port 465), MAIL_USE_TLS=true for STARTTLS (port 587)"
        )
    return use_tls, use_ssl


def reply_address(env: Mapping[str, Any]) -> str | None:
    """``REPLY_ADDRESS``: a plain address whose local part can carry ``+<tag>``, or unset."""
    value = env.get("REPLY_ADDRESS")
    if value is None:
        return None
    local, at, domain = str(value).strip().rpartition("@")
    plain = local.isascii() and domain.isascii() and " " not in value  # an email header's ASCII
    if not at or not local or not domain or "+" in local or not plain:
        raise ConfigError(
            f"REPLY_ADDRESS must be a plain address such as play@example.org, not {value!r}"
        )
    return f"{local}@{domain.lower()}"


def limit_storage(env: Mapping[str, Any]) -> str:
    """``RATELIMIT_STORAGE_URI``, if its scheme names a storage of :data:`LIMIT_STORAGES`.

    Flask-Limiter would refuse any other with a traceback as the app starts. The
    message shows the scheme alone: the rest of the URL may hold a password.
    """
    value = str(env["RATELIMIT_STORAGE_URI"])
    scheme = storage_scheme(value)
    if scheme not in LIMIT_STORAGES:
        given = f"'{scheme}://…'" if scheme else "a URL without a scheme"
        raise ConfigError(
            "RATELIMIT_STORAGE_URI must be memory:// or a storage such as redis://host:6379/0, "
            f"not {given}"
        )
    check_storage_client(scheme)
    return value


def storage_refused(uri: str, exc: Exception) -> ConfigError:
    """The refusal of a ``RATELIMIT_STORAGE_URI`` its storage could not be made from as the
    limiter started (a port that is no number, a Sentinel URL without its service's name),
    which would otherwise stop the start with a traceback. Its scheme alone is shown, and the
    storage's reason, which names the part it could not read, never the password."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return ConfigError(
        f"RATELIMIT_STORAGE_URI '{storage_scheme(uri)}://…' cannot be used: {reason}"
    )


def check_storage_client(scheme: str) -> None:
    """Refuse a storage whose client library is missing or too old, as the limits library
    would when Flask-Limiter sets it up (a traceback ending in ``prerequisite not available``).

    The library's storages of Redis and Valkey list both clients: one needs the client its
    scheme names (``rediss``, ``redis+sentinel``: redis; ``valkey``: valkey).
    """
    listed = LIMIT_STORAGES[scheme].DEPENDENCIES
    required = listed if isinstance(listed, dict) else dict.fromkeys(listed)
    packages = {name: name.partition(".")[0] for name in required}
    named = {name: least for name, least in required.items() if scheme.startswith(packages[name])}
    for name, least in (named or required).items():
        module, version = get_dependency(name)
        package = packages[name]
        hint = " (pip install '.[redis]')" if package == "redis" else ""
        if module is MissingModule:
            raise ConfigError(
                f"RATELIMIT_STORAGE_URI '{scheme}://…' needs the Python package {package}, "
                f"which is not installed{hint}"
            )
        if least and (version is None or version < least):
            raise ConfigError(
                f"RATELIMIT_STORAGE_URI '{scheme}://…' needs the Python package {package} "
                f"{least} or later, not {version}{hint}"
            )


def storage_scheme(uri: str) -> str:
    """A rate-limit storage URI's scheme, lowercased as the limits library reads it (``""``
    for a URI without one): ``MEMORY://`` is ``memory://``. Read before the ``://`` alone:
    a parser of the whole URL would stop at what the storage is left to refuse (an unclosed
    ``[``)."""
    scheme, found, _ = uri.partition("://")
    return scheme.lower() if found else ""


def log_level(env: Mapping[str, Any]) -> str:
    """``LOG_LEVEL``, upper-cased, one of :data:`LOG_LEVELS`."""
    value = str(env["LOG_LEVEL"]).upper()
    if value not in LOG_LEVELS:
        raise ConfigError(f"LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, not {value!r}")
    return value


def log_format(env: Mapping[str, Any]) -> str:
    """``LOG_FORMAT``, one of :data:`LOG_FORMATS`."""
    value = str(env["LOG_FORMAT"]).lower()
    if value not in LOG_FORMATS:
        raise ConfigError(f"LOG_FORMAT must be text or json, not {value!r}")
    return value


def check_limit_storage(env: Mapping[str, Any], processes: int) -> None:
    """Refuse per-process rate-limit counts in production when several processes serve.

    With ``memory://`` each gunicorn worker counts on its own, so three workers
    let three times the sign-in limit through. gunicorn.conf.py calls this with
    :func:`read_settings` before any worker starts, with the number of workers
    gunicorn settled on.
    """
    storage = env["RATELIMIT_STORAGE_URI"]
    per_process = storage_scheme(storage) == "memory"
    if env["SPLITMIND_ENV"] == "production" and processes > 1 and per_process:
        raise ConfigError(
            f"RATELIMIT_STORAGE_URI={storage} keeps rate-limit counts per process but "
            f"{processes} gunicorn workers serve: set RATELIMIT_STORAGE_URI=redis://host:6379/0 "
            "when SPLITMIND_ENV=production (or run one worker)"
        )


def database_url(url: str) -> str:
    """Use psycopg 3 for PostgreSQL URLs written the usual ways; a :class:`ConfigError` for what
    is no URL, or the URL of a database or driver of none of :data:`DATABASES` (without
    repeating it: it may hold a password)."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            url = "postgresql+psycopg://" + url[len(prefix) :]
    try:
        parsed = make_url(url)
        database = (parsed.get_backend_name(), parsed.get_driver_name())
    except (ArgumentError, ValueError):
        raise ConfigError(
            "DATABASE_URL must be a database URL such as postgresql://user@host/name"
        ) from None
    if database not in DATABASES:
        raise ConfigError(
            "DATABASE_URL must be a PostgreSQL or SQLite URL such as postgresql://user@host/name, "
            f"not '{parsed.drivername}://…'"
        )
    if database[0] == "postgresql":
        # Its query's options go to libpq, which refuses one it does not know at each connection.
        try:
            info = conninfo(parsed.get_dialect()(), parsed)
        except psycopg.ProgrammingError as exc:
            reason = str(exc).strip().splitlines()[0]
            message = f"DATABASE_URL must hold only options libpq knows: {reason}"
            raise ConfigError(message) from None
        except ArgumentError as exc:  # SQLAlchemy's reading of several hosts and ports
            raise ConfigError(f"DATABASE_URL cannot be read: {exc}") from None
        refused = refused_value(info)
        if refused:
            raise ConfigError(f"DATABASE_URL must hold only values libpq takes: {refused}")
    return url


# A directory no server listens in: libpq is asked to connect there, never across the network.
NOWHERE = "/nonexistent/splitmind-settings-check"


def refused_value(info: str) -> str | None:
    """What libpq says of a value of ``info`` it refuses (``sslmode=verify_full``, a port
    past 65535, more ports than hosts), or ``None``.

    libpq reads the values only as a connection starts, and refuses a bad one before it
    reaches any server: every connection would fail, each said as an outage. It is started
    here, each host put in a socket directory that is not there, so that it goes nowhere;
    its failure to find that socket says the values were taken.
    """
    params = conninfo_to_dict(info)
    hosts = params.pop("hostaddr", None) or params.get("host") or ""
    params["host"] = ",".join([NOWHERE] * len(str(hosts).split(",")))
    connection = pq.PGconn.connect_start(make_conninfo("", **params).encode())
    try:
        said = connection.error_message.decode(errors="replace").strip()
    finally:
        connection.finish()
    first = said.splitlines()[0] if said else ""
    return None if not first or NOWHERE in first else first


def conninfo(dialect: Dialect, url: URL) -> str:
    """The libpq connection string the service's engine connects with, from ``url``: its
    parameters as SQLAlchemy's psycopg dialect hands them to psycopg (several hosts, values
    holding spaces), not the URL rendered again, whose ``+`` for a space libpq keeps as it is.
    """
    _, params = dialect.create_connect_args(url)
    params.pop("context", None)  # psycopg's adapters, not a connection parameter
    return make_conninfo(**params)


def engine_options(url: str, connect: float, statement: float, lock: float) -> dict[str, Any]:
    """SQLAlchemy's engine options: the timeouts on PostgreSQL.

    The timeouts are in seconds, 0 for none but the connect timeout's (1 at least,
    as libpq takes 0 for none). libpq's ``connect_timeout`` bounds connecting (whole
    seconds, 2 at least); ``statement_timeout`` and ``lock_timeout``, set for every
    session, bound each statement and each wait for a lock. A database that is down, slow or
    locked then fails a request within seconds (503), instead of holding it
    until gunicorn kills its worker. Migrations lift both for their own
    transaction (migrations/env.py). ``options`` already in the URL are kept.
    Pooled connections are checked by :mod:`service.connections`, not before
    every use.

    Statements' parameters hold what players wrote and the credentials the
    emails carry (links, reply addresses): a database error, and the log line
    that reports it, shows the statement without them.
    """
    options: dict[str, Any] = {
        "hide_parameters": True,
        "json_serializer": json_codec.dumps,
        "json_deserializer": json_codec.loads,
    }
    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql":
        return options
    server = [
        f"-c statement_timeout={round(statement * 1000)}",
        f"-c lock_timeout={round(lock * 1000)}",
    ]
    given = parsed.query.get("options")
    if isinstance(given, str):
        server.insert(0, given)
    options["connect_args"] = {"connect_timeout": math.ceil(connect), "options": " ".join(server)}
    return options


def _secret_key(instance: Path) -> str:
    """Development's key, kept in the instance folder (production requires SECRET_KEY)."""
    path = instance / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(48))
        path.chmod(0o600)
    return path.read_text().strip()
