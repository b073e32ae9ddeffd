"""The compose file describes a deployment the app's configuration understands."""

from __future__ import annotations

import gc
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml

from service import create_app
from service.config import SETTINGS

from .servers import clean_env

ROOT = Path(__file__).resolve().parents[1]
REQUIRED_IN_PRODUCTION = {
    "SPLITMIND_ENV",
    "DATABASE_URL",
    "SECRET_KEY",
    "BASE_URL",
    "MAIL_SERVER",
    "MAIL_DEFAULT_SENDER",
}
APP_SERVICES = ("web", "worker", "inbound", "fetch")
# Read by `mail fetch` alone: the other services are not given the mailbox's password.
IMAP_SETTINGS = {name for name in SETTINGS if name.startswith("IMAP_")}
# What a .env holding only the settings Compose insists on gives the services.
LEAST_ENV = {
    "SECRET_KEY": "k" * 40,
    "BASE_URL": "https://play.example.org",
    "MAIL_DEFAULT_SENDER": "Split Mind <play@example.org>",
}
# Compose's forms of a variable: ${NAME}, ${NAME:-default}, ${NAME-default}, ${NAME:?error}...
VARIABLE = re.compile(r"\$\{(\w+)(?:(:?[-?])([^}]*))?\}")


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def interpolate(value: object, env: Mapping[str, str]) -> str:
    """A value of the compose file as Compose fills it in from ``env`` (what .env sets)."""

    def fill(variable: re.Match[str]) -> str:
        name, form, word = variable.groups()
        given = env.get(name)
        if given is not None and (given or not (form or "").startswith(":")):
            return given
        if form and form.endswith("?"):
            raise AssertionError(f"Compose refuses to run without {name}: {word}")
        return word or ""

    return VARIABLE.sub(fill, str(value))


def environment(service: str, env: Mapping[str, str] = LEAST_ENV) -> dict[str, str]:
    """The environment a service's containers get from a .env holding ``env``."""
    given = compose()["services"][service]["environment"]
    return {name: interpolate(value, env) for name, value in given.items()}


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
    for name in APP_SERVICES:
        env = environment(name)
        assert set(env) <= set(SETTINGS), set(env) - set(SETTINGS)
        assert set(env) >= REQUIRED_IN_PRODUCTION
        assert env["SPLITMIND_ENV"] == "production"
        host = env["DATABASE_URL"].split("@", 1)[1].split(":", 1)[0]
        assert host in services
        assert env["RATELIMIT_STORAGE_URI"].split("//", 1)[1].split(":", 1)[0] in services


def test_every_setting_in_env_reaches_the_app_services() -> None:
    """README: keep every setting in .env. A setting the compose file does not pass on, or
    fixes, would be ignored there without a word."""
    services = compose()["services"]
    given = {name: f"{name} from .env" for name in SETTINGS}
    for name in APP_SERVICES:
        env = environment(name, given)
        expected = set(SETTINGS) if name == "fetch" else set(SETTINGS) - IMAP_SETTINGS
        assert not expected - set(env), f"{name} is not given {sorted(expected - set(env))}"
        fixed = {setting for setting in expected if env[setting] != given[setting]}
        # Where Compose mounts the metrics volume, not a choice of the operator's.
        assert fixed == {"PROMETHEUS_MULTIPROC_DIR"}, (name, sorted(fixed))
        mount = services[name]["volumes"] == ["metrics:/run/splitmind-metrics"]
        assert mount and env["PROMETHEUS_MULTIPROC_DIR"] == "/run/splitmind-metrics"


def test_a_setting_left_out_of_env_takes_its_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Compose's own where it has one (its mail catcher, its Redis), else the service's."""
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
    for name, value in environment("fetch").items():
        monkeypatch.setenv(name, value)
    config = create_app({"instance_path": str(tmp_path)}).config
    assert config["PRODUCTION"] and config["SECRET_KEY"] == LEAST_ENV["SECRET_KEY"]
    assert (config["MAIL_SERVER"], config["MAIL_PORT"]) == ("mailpit", 1025)
    assert config["RATELIMIT_STORAGE_URI"] == "redis://redis:6379/0"
    assert config["MAIL_TIMEOUT"] == 30 and config["DEFAULT_DAYS_PER_MOVE"] == 7
    assert config["DATABASE_CONNECT_TIMEOUT"] == 5 and config["MAX_CONTENT_LENGTH"] == 8192
    assert (config["IMAP_PORT"], config["IMAP_FOLDER"]) == (993, "INBOX")
    assert config["REPLY_ADDRESS"] is None and config["METRICS_TOKEN"] is None


def test_the_services_that_read_replies_are_opt_in() -> None:
    """One reads replies by LMTP, the other from IMAP; neither starts without its profile,
    which the README has the operator name in .env."""
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
    # Set in .env, where Compose reads it: every later `up -d` starts and recreates the reader,
    # where a --profile given once is forgotten at the next.
    readme = (ROOT / "README.md").read_text()
    assert "echo COMPOSE_PROFILES=inbound >> .env" in readme
    assert "\nCOMPOSE_PROFILES=fetch\n" in readme


def test_every_setting_is_documented_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    missing = [name for name in SETTINGS if f"`{name}`" not in readme]
    assert not missing, f"README does not document {missing}"


def test_every_long_running_service_restarts() -> None:
    services = compose()["services"]
    for name, service in services.items():
        assert service.get("restart") in ("unless-stopped", "always"), name


def test_the_worker_may_finish_the_message_in_hand_when_stopped() -> None:
    """A stop waits for a send that takes the SMTP timeout, rather than sending it twice."""
    grace = compose()["services"]["worker"].get("stop_grace_period", "10s")
    assert re.fullmatch(r"\d+s", grace), grace
    assert int(grace[:-1]) > float(SETTINGS["MAIL_TIMEOUT"][0])


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


def test_a_worker_is_forked_with_what_the_master_loaded_frozen(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The worker's garbage collector never walks the app the master loaded."""
    pre_fork = gunicorn_settings(monkeypatch, tmp_path)["pre_fork"]
    assert gc.get_freeze_count() == 0  # this process freezes nothing of itself
    held = len(gc.get_objects())
    try:
        pre_fork(None, None)
        assert gc.get_freeze_count() >= held * 0.9  # a collection may free a few meanwhile
    finally:
        gc.unfreeze()


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
def test_time_zones_are_known_without_the_machines_zone_files() -> None:
    """A machine (or a slim container) without /usr/share/zoneinfo still knows every zone,
    from the tzdata package: its players' times are not read in UTC."""
    script = (
        "import zoneinfo; from service.addresses import is_time_zone, zone_of; "
        "assert zoneinfo.TZPATH == (), zoneinfo.TZPATH; "
        "assert is_time_zone('Europe/Paris') and is_time_zone('Asia/Tokyo'); "
        "print(zone_of('Asia/Tokyo'))"
    )
    env = {**clean_env(), "PYTHONTZPATH": ""}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Asia/Tokyo"


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


# systemd's defaults: a unit started more than 5 times in 10 seconds is not started again.
START_LIMIT_BURST, START_LIMIT_SECONDS = 5, 10


def readme_units() -> dict[str, str]:
    """The systemd units the README shows, by their path."""
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```ini\n(.*?)```", readme, re.DOTALL)
    units = re.split(r"^# (/etc/systemd/system/\S+)\n", "\n".join(blocks), flags=re.MULTILINE)
    return dict(zip(units[1::2], units[2::2], strict=True))


def test_the_readme_units_restart_after_a_database_outage_of_any_length() -> None:
    """The web's ExecStartPre (db upgrade) fails within a second or two while the database
    is down; restarted every 100 ms (systemd's default), the unit would hit its start limit
    within seconds and stay down for good once the database is back."""
    units = readme_units()
    assert {"splitmind-web.service", "splitmind-worker.service"} <= {
        Path(path).name for path in units
    }
    for path, unit in units.items():
        if "Restart=always" not in unit:
            continue
        waits = re.findall(r"^RestartSec=(\d+)s?$", unit, re.MULTILINE)
        assert waits, f"{path} restarts without RestartSec="
        assert (START_LIMIT_BURST - 1) * int(waits[0]) > START_LIMIT_SECONDS, path


def test_the_readme_web_unit_lets_its_migration_outlast_the_default_start_timeout() -> None:
    """The web's ExecStartPre runs the migrations, which lift the database's timeouts for
    their own transaction (a table rewritten, a lock waited for): under systemd's default
    start timeout, 90 s, a long one would be killed and run again at each restart."""
    migrating = [unit for unit in readme_units().values() if "db upgrade" in unit]
    assert migrating
    for unit in migrating:
        minutes = re.findall(r"^TimeoutStartSec=(\d+)min$", unit, re.MULTILINE)
        assert minutes and int(minutes[0]) * 60 > 90, unit


# nginx's variables that hold the request's path or query, or its Referer: any of them may
# hold a link's token.
NGINX_LINK_VARIABLES = re.compile(
    r"request|request_uri|uri|document_uri|request_line|args|query_string|arg_\w+|http_referer"
)


def test_the_readme_proxies_log_no_link() -> None:
    """A link's credential is its path, and a page's Referer is often one (a style sheet
    fetched from a player's page): the proxies the README sets up log neither. nginx's
    default format, "combined", logs both; Caddy's access log, once turned on, the URI and
    the request's headers."""
    readme = (ROOT / "README.md").read_text()
    # The server block, and the part of it that serves the service under a path instead.
    nginx = "\n".join(re.findall(r"```nginx\n(.*?)```", readme, re.DOTALL))
    caddy = "\n".join(re.findall(r"```caddyfile\n(.*?)```", readme, re.DOTALL))
    nginx = re.sub(r"#.*", "", nginx)
    formats = dict(re.findall(r"^\s*log_format\s+(\w+)\s+([^;]*);", nginx, re.MULTILINE))
    logs = re.findall(r"^\s*access_log\s+([^;]*);", nginx, re.MULTILINE)
    assert logs, "nginx logs every request in its default format unless told otherwise"
    for log in logs:
        words = log.split()
        if words == ["off"]:
            continue
        assert len(words) >= 2 and words[1] in formats, f"access_log {log}: no format of ours"
        variables = re.findall(r"\$\{?(\w+)", formats[words[1]])
        assert variables and not any(NGINX_LINK_VARIABLES.fullmatch(name) for name in variables)
    assert not re.search(r"^\s*log\b", re.sub(r"#.*", "", caddy), re.MULTILINE)
