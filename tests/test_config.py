"""Configuration comes from the environment when the app is created, with safe defaults."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from service import create_app
from service.config import SETTINGS, ConfigError, database_url
from service.models import OutboxMessage, db

from .helpers import pick_action


def test_development_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
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
    assert "mailbox" not in app.blueprints


@pytest.mark.parametrize("missing", ["SECRET_KEY", "MAIL_SERVER"])
def test_production_refuses_to_start_without(
    missing: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SPLITMIND_ENV", "production")
    monkeypatch.setenv("SECRET_KEY", "k" * 40)
    monkeypatch.setenv("MAIL_SERVER", "smtp.example.org")
    monkeypatch.setenv("BASE_URL", "https://play.example.org")
    monkeypatch.delenv(missing)
    with pytest.raises(ConfigError, match=missing):
        create_app({"instance_path": str(tmp_path)})
    assert not (tmp_path / "secret_key").exists()


def test_database_url_forms() -> None:
    assert database_url("postgresql://a@b/c") == "postgresql+psycopg://a@b/c"
    assert database_url("sqlite:///x.db") == "sqlite:///x.db"


def test_links_use_base_url_never_the_host_header(app, client, make_game) -> None:  # noqa: ANN001
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
    with app.app_context():
        new = db.session.scalars(db.select(OutboxMessage).where(OutboxMessage.id > before)).all()
    assert new, "the lead queues the Shadow's turn email during the request"
    for message in new:
        text = message.text_body + message.html_body + str(message.headers)
        assert "attacker.example" not in text
        assert "http://splitmind.test/play/" in text
