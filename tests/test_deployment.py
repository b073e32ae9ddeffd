"""The compose file describes a deployment the app's configuration understands."""

from __future__ import annotations

from pathlib import Path

import yaml

from service.config import SETTINGS

ROOT = Path(__file__).resolve().parents[1]
REQUIRED_IN_PRODUCTION = {"SPLITMIND_ENV", "DATABASE_URL", "SECRET_KEY", "BASE_URL", "MAIL_SERVER"}


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_has_the_services_of_a_deployment() -> None:
    services = compose()["services"]
    assert {"db", "web", "worker", "mailpit"} <= set(services)
    assert "gunicorn 'service:create_app()'" in (ROOT / "Dockerfile").read_text()
    assert "COPY gunicorn.conf.py" in (ROOT / "Dockerfile").read_text()
    assert "db upgrade" in (ROOT / "Dockerfile").read_text()
    assert services["worker"]["command"][-2:] == ["mail", "worker"]


def test_app_services_use_only_settings_the_app_reads() -> None:
    services = compose()["services"]
    for name in ("web", "worker"):
        environment = services[name]["environment"]
        assert set(environment) <= set(SETTINGS), set(environment) - set(SETTINGS)
        assert set(environment) >= REQUIRED_IN_PRODUCTION
        assert environment["SPLITMIND_ENV"] == "production"
        host = environment["DATABASE_URL"].split("@", 1)[1].split(":", 1)[0]
        assert host in services
        assert environment["RATELIMIT_STORAGE_URI"].split("//", 1)[1].split(":", 1)[0] in services


def test_every_setting_is_documented_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    missing = [name for name in SETTINGS if f"`{name}`" not in readme]
    assert not missing, f"README does not document {missing}"


def test_the_access_log_keeps_credentials_out() -> None:
    """Links carry credentials in their path: gunicorn logs neither paths nor referrers."""
    settings: dict = {}
    exec((ROOT / "gunicorn.conf.py").read_text(), settings)
    log_format = settings["access_log_format"]
    for field in ("%(r)s", "%(U)s", "%(q)s", "%(f)s", "%(u)s"):
        assert field not in log_format
    assert settings["accesslog"] == "-" and "%(s)s" in log_format
