"""Production gunicorn with its three workers on Redis: a sign-in limit holds whichever worker
answers. (Without shared storage gunicorn refuses to start them: tests/test_config.py.)"""

from __future__ import annotations

import http.client
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from .conftest import IN_CI
from .helpers import csrf_token
from .servers import PRODUCTION, gunicorn_env, run_gunicorn

# A Redis database of the tests' own; each test counts under an address of its own and
# deletes its keys afterwards.
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/9")


@pytest.fixture
def redis_storage() -> Iterator[redis.Redis]:
    """The tests' Redis database; fails under CI if unreachable, else skips."""
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.ConnectionError as exc:
        message = f"Redis is not reachable at {REDIS_URL}: {exc}"
        if IN_CI:
            pytest.fail(message + " (required when CI=true)", pytrace=False)
        pytest.skip(message + "; start it or set TEST_REDIS_URL")
    with client:
        yield client


def failed_sign_in(port: int, address: str) -> int:
    """Load the sign-in form, then send it with a wrong password; the status of the answer."""
    headers = {"X-Forwarded-For": address}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", "/admin/login", headers=headers)
        page = connection.getresponse()
        # The cookie is Secure (BASE_URL is https), so it is sent back by hand over plain HTTP.
        cookie = page.getheader("Set-Cookie", "").split(";", 1)[0]
        token = csrf_token(page.read().decode())
        body = f"csrf_token={token}&name=ada&password=guess"
        headers |= {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"}
        connection.request("POST", "/admin/login", body=body, headers=headers)
        answer = connection.getresponse()
        answer.read()
        return answer.status
    finally:
        connection.close()


@pytest.mark.postgres
@pytest.mark.slow
def test_three_workers_share_the_sign_in_limit_through_redis(
    tmp_path: Path, postgres_database: str, redis_storage: redis.Redis
) -> None:
    # The requests come, through a trusted proxy, from an address of this test's own.
    address = f"198.18.{secrets.randbelow(256)}.{secrets.randbelow(256)}"
    settings = {"DATABASE_URL": postgres_database, "RATELIMIT_STORAGE_URI": REDIS_URL}
    env = gunicorn_env(tmp_path, **{**PRODUCTION, **settings, "TRUSTED_PROXIES": "1"})
    try:
        with run_gunicorn("service:create_app()", env, tmp_path, workers=3) as server:
            statuses = [failed_sign_in(server.port, address) for _ in range(8)]
        assert statuses == [400] * 5 + [429] * 3
        assert list(redis_storage.scan_iter(match=f"*{address}*"))
    finally:
        for key in redis_storage.scan_iter(match=f"*{address}*"):
            redis_storage.delete(key)
