"""A database that is down, slow or locked is an outage: 503 with Retry-After, never a 500,
and never a request that waits until gunicorn kills its worker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from service import create_app
from service.links import SALT, new_link_key, serializer
from service.models import db

from .conftest import base_config
from .helpers import csrf_token
from .smtp import free_port

UNAVAILABLE_PAGE = "The service is unavailable for a moment: try again later."


@pytest.fixture
def down(tmp_path: Path) -> Iterator[Flask]:
    """An app whose PostgreSQL is not there: nothing listens on its port."""
    app = create_app(
        base_config(f"postgresql://root@127.0.0.1:{free_port()}/splitmind", tmp_path / "down")
    )
    yield app
    with app.app_context():
        db.engine.dispose()


def link(app: Flask) -> str:
    """A well-signed player token: only the database could tell whether it is live."""
    with app.app_context():
        return serializer(SALT).dumps([1, new_link_key()])


def assert_unavailable(response: Any, page: bool = True) -> None:
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "30"
    if page:
        assert UNAVAILABLE_PAGE in response.get_data(as_text=True)


def test_the_api_answers_503_in_json_when_the_database_is_down(
    down: Flask, caplog: pytest.LogCaptureFixture
) -> None:
    token = link(down)
    client = down.test_client()
    for response in (
        client.get(f"/api/play/{token}"),
        client.post(f"/api/play/{token}", json={"version": 0, "exchange": ["1H"]}),
    ):
        assert_unavailable(response, page=False)
        assert response.get_json() == {
            "error": {
                "code": "service_unavailable",
                "message": "The service is unavailable for a moment: try again later.",
            }
        }
    assert "Connection refused; answered 503 to GET /api/play/[redacted]" in caplog.text
    assert token not in caplog.text


def test_pages_answer_503_in_the_visitors_language_when_the_database_is_down(down: Flask) -> None:
    token = link(down)
    client = down.test_client()
    assert_unavailable(client.get(f"/play/{token}"))
    assert_unavailable(client.post(f"/play/{token}", data={"kind": "play", "version": "0"}))
    form = csrf_token(client.get("/admin/login").get_data(as_text=True))
    signing_in = client.post(
        "/admin/login", data={"csrf_token": form, "name": "ada", "password": "secret"}
    )
    assert_unavailable(signing_in)
    french = client.get(f"/play/{token}", headers={"Accept-Language": "fr"})
    assert french.status_code == 503
    assert "Le service est indisponible pour un moment" in french.get_data(as_text=True)


def test_asking_for_links_answers_503_when_the_database_is_down(down: Flask) -> None:
    client = down.test_client()
    form = csrf_token(client.get("/links").get_data(as_text=True))
    assert_unavailable(client.post("/links", data={"email": "kim@example.com", "csrf_token": form}))
