"""Configuration, read from the environment when the app is created (never at import time).

Every setting the service reads is listed in :data:`SETTINGS` with its default;
the README documents them and a test checks docker-compose.yml against them.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask

# Name: (default, description). A default of None means "not set".
SETTINGS: dict[str, tuple[str | None, str]] = {
    "SPLITMIND_ENV": ("development", "development or production"),
    "DATABASE_URL": (None, "SQLAlchemy URL; default a SQLite file in the instance folder"),
    "SECRET_KEY": (None, "signs player links and sessions; required in production"),
    "BASE_URL": ("http://127.0.0.1:5000", "public address every link is built from"),
    "MAIL_SERVER": (None, "SMTP host; unset in development delivers to the local mailbox"),
    "MAIL_PORT": ("25", "SMTP port"),
    "MAIL_USE_TLS": ("false", "STARTTLS after connecting"),
    "MAIL_USE_SSL": ("false", "SMTP over TLS from the start"),
    "MAIL_USERNAME": (None, "SMTP login"),
    "MAIL_PASSWORD": (None, "SMTP password"),
    "MAIL_DEFAULT_SENDER": ("Split Mind <splitmind@localhost>", "From address of every email"),
    "MAIL_TIMEOUT": ("30", "seconds before an SMTP connection gives up"),
    "RATELIMIT_STORAGE_URI": ("memory://", "Flask-Limiter storage, e.g. redis://host:6379"),
    "DEFAULT_DAYS_PER_MOVE": ("7", "days a player has for each move; 0 for no deadline"),
    "TRUSTED_PROXIES": ("0", "reverse proxies in front of the app whose X-Forwarded-* to trust"),
}

TRUE = {"1", "true", "yes", "on"}


class ConfigError(RuntimeError):
    """The environment does not describe a service that can start."""


def load_config(app: Flask, overrides: Mapping[str, Any] | None = None) -> None:
    """Fill ``app.config`` from the environment, then from ``overrides`` (tests)."""
    env = {name: os.environ.get(name, default) for name, (default, _) in SETTINGS.items()}
    env = {name: value for name, value in env.items() if value not in (None, "")}
    if overrides:
        env.update({k: v for k, v in overrides.items() if k in SETTINGS})
    production = env["SPLITMIND_ENV"] == "production"
    instance = Path(app.instance_path)
    if not production:
        instance.mkdir(parents=True, exist_ok=True)

    app.config.update(
        SPLITMIND_ENV=env["SPLITMIND_ENV"],
        PRODUCTION=production,
        SQLALCHEMY_DATABASE_URI=database_url(
            env.get("DATABASE_URL") or f"sqlite:///{instance / 'splitmind.sqlite'}"
        ),
        SECRET_KEY=env.get("SECRET_KEY") or _secret_key(instance, production),
        BASE_URL=env["BASE_URL"].rstrip("/"),
        MAIL_SERVER=env.get("MAIL_SERVER"),
        MAIL_PORT=int(env["MAIL_PORT"]),
        MAIL_USE_TLS=str(env["MAIL_USE_TLS"]).lower() in TRUE,
        MAIL_USE_SSL=str(env["MAIL_USE_SSL"]).lower() in TRUE,
        MAIL_USERNAME=env.get("MAIL_USERNAME"),
        MAIL_PASSWORD=env.get("MAIL_PASSWORD"),
        MAIL_DEFAULT_SENDER=env["MAIL_DEFAULT_SENDER"],
        MAIL_TIMEOUT=float(env["MAIL_TIMEOUT"]),
        LOCAL_MAILBOX=not production and not env.get("MAIL_SERVER"),
        MAIL_SUPPRESS_SEND=False,  # the worker decides: SMTP or the local mailbox
        RATELIMIT_STORAGE_URI=env["RATELIMIT_STORAGE_URI"],
        DEFAULT_DAYS_PER_MOVE=int(env["DEFAULT_DAYS_PER_MOVE"]),
        TRUSTED_PROXIES=int(env["TRUSTED_PROXIES"]),
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=env["BASE_URL"].startswith("https://"),
        REMEMBER_COOKIE_SECURE=env["BASE_URL"].startswith("https://"),
        REMEMBER_COOKIE_HTTPONLY=True,
        SQLALCHEMY_ENGINE_OPTIONS={"pool_pre_ping": True},
    )
    if overrides:
        app.config.update({k: v for k, v in overrides.items() if k not in SETTINGS})
    if production and not env.get("MAIL_SERVER"):
        raise ConfigError("MAIL_SERVER is required when SPLITMIND_ENV=production")


def database_url(url: str) -> str:
    """Use psycopg 3 for PostgreSQL URLs written the usual ways."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def _secret_key(instance: Path, production: bool) -> str:
    if production:
        raise ConfigError("SECRET_KEY is required when SPLITMIND_ENV=production")
    path = instance / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(48))
        path.chmod(0o600)
    return path.read_text().strip()
