"""The compose file describes a deployment the app's configuration understands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from service.config import SETTINGS

from .servers import clean_env

ROOT = Path(__file__).resolve().parents[1]
REQUIRED_IN_PRODUCTION = {"SPLITMIND_ENV", "DATABASE_URL", "SECRET_KEY", "BASE_URL", "MAIL_SERVER"}


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_has_the_services_of_a_deployment() -> None:
    services = compose()["services"]
    assert {"db", "web", "worker", "mailpit"} <= set(services)
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "gunicorn --bind 0.0.0.0:8000 'service:create_app()'" in dockerfile
    assert "COPY gunicorn.conf.py" in dockerfile
    assert "db upgrade" in dockerfile
    assert services["worker"]["command"][-2:] == ["mail", "worker"]


def test_app_services_use_only_settings_the_app_reads() -> None:
    services = compose()["services"]
    for name in ("web", "worker", "inbound", "fetch"):
        environment = services[name]["environment"]
        assert set(environment) <= set(SETTINGS), set(environment) - set(SETTINGS)
        assert set(environment) >= REQUIRED_IN_PRODUCTION
        assert environment["SPLITMIND_ENV"] == "production"
        host = environment["DATABASE_URL"].split("@", 1)[1].split(":", 1)[0]
        assert host in services
        assert environment["RATELIMIT_STORAGE_URI"].split("//", 1)[1].split(":", 1)[0] in services


def test_the_services_that_read_replies_are_opt_in() -> None:
    """One reads replies by LMTP, the other from IMAP; neither starts without its profile."""
    services = compose()["services"]
    inbound, fetch = services["inbound"], services["fetch"]
    assert inbound["profiles"] == ["inbound"] and fetch["profiles"] == ["fetch"]
    assert inbound["command"][3:5] == ["mail", "inbound"] and "--smtp" not in inbound["command"]
    assert inbound["ports"] == ["127.0.0.1:8024:8024"]  # the machine's mail server alone
    assert fetch["command"][3:] == ["mail", "fetch"]
    assert {"IMAP_SERVER", "IMAP_USERNAME", "IMAP_PASSWORD"} <= set(fetch["environment"])
    for service in (inbound, fetch, services["web"], services["worker"]):
        assert "REPLY_ADDRESS" in service["environment"]
    for service in (inbound, fetch):
        assert service["depends_on"]["web"]["condition"] == "service_healthy"
        assert service["volumes"] == services["worker"]["volumes"]
    for name in ("db", "redis", "web", "worker", "mailpit"):
        assert "profiles" not in services[name], name
    readme = (ROOT / "README.md").read_text()
    assert "docker compose --profile inbound up -d" in readme
    assert "docker compose --profile fetch up -d" in readme


def test_every_setting_is_documented_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    missing = [name for name in SETTINGS if f"`{name}`" not in readme]
    assert not missing, f"README does not document {missing}"


def test_every_long_running_service_restarts() -> None:
    services = compose()["services"]
    for name, service in services.items():
        assert service.get("restart") in ("unless-stopped", "always"), name


def gunicorn_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict:
    """The names gunicorn.conf.py defines (its metrics directory kept out of this process)."""
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    settings: dict = {}
    exec((ROOT / "gunicorn.conf.py").read_text(), settings)
    return settings


def test_the_access_log_keeps_credentials_out(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Links carry credentials in their path: gunicorn logs neither paths nor referrers."""
    settings = gunicorn_settings(monkeypatch, tmp_path)
    log_format = settings["access_log_format"]
    for field in ("%(r)s", "%(U)s", "%(q)s", "%(f)s", "%(u)s"):
        assert field not in log_format
    assert settings["accesslog"] == "-" and "%(s)s" in log_format


def test_the_web_port_is_reachable_from_this_machine_alone(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Behind a proxy the app believes X-Forwarded-For: only the proxy may reach gunicorn.

    A host install binds the loopback; the container binds its own interfaces and
    Compose publishes the port on the host's loopback.
    """
    assert gunicorn_settings(monkeypatch, tmp_path)["bind"] == "127.0.0.1:8000"
    assert compose()["services"]["web"]["ports"] == ["127.0.0.1:8000:8000"]
    # Mailpit shows the emails, and so the players' links.
    assert compose()["services"]["mailpit"]["ports"] == ["127.0.0.1:8025:8025"]


def test_gunicorn_loads_the_app_once_and_retires_dead_workers_metrics(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    settings = gunicorn_settings(monkeypatch, tmp_path)
    assert settings["preload_app"] is True  # a refused setting stops the master, in one line
    assert callable(settings["child_exit"])
    assert settings["logger_class"].__name__ == "ServiceLogger"


RENDER = """
import sys
from service import create_app
import service
app = create_app()
client = app.test_client()
rules = client.get("/rules?lang=fr")
style = client.get("/static/style.css")
print(service.__file__)
print(rules.status_code, style.status_code, "Règles" in rules.get_data(as_text=True))
"""


@pytest.mark.slow
def test_the_wheel_carries_what_the_service_needs(tmp_path: Path) -> None:
    """``pip install .`` then ``flask db upgrade`` and a page, far from the checkout."""
    wheels = tmp_path / "wheels"
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    subprocess.run([*build, "-q", "-w", wheels, ROOT], check=True, capture_output=True)
    (wheel,) = wheels.glob("*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    python = venv / "bin" / "python"
    install = [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps"]
    subprocess.run([*install, "--no-index", wheel], check=True, capture_output=True)
    # The dependencies come from this environment, the service from the wheel alone.
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    here = [path for path in sys.path if path.endswith("site-packages")]
    (Path(site) / "dependencies.pth").write_text("\n".join(here) + "\n")
    env = clean_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'wheel.sqlite'}", SECRET_KEY="test-secret-key"
    )
    flask = [python, "-m", "flask", "--app", "service"]
    run = {"env": env, "cwd": tmp_path, "capture_output": True, "text": True, "timeout": 120}
    upgrade = subprocess.run([*flask, "db", "upgrade"], **run)
    assert upgrade.returncode == 0, upgrade.stderr
    page = subprocess.run([python, "-c", RENDER], **run)
    assert page.returncode == 0, page.stderr
    location, statuses = page.stdout.splitlines()[-2:]
    assert location.startswith(str(venv))
    assert statuses == "200 200 True"
