"""Static files: addresses that name their content, kept by browsers for a year."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

from flask import Flask
from werkzeug.datastructures import ResponseCacheControl

from service.static_files import YEAR

STATIC = Path(__file__).resolve().parents[1] / "service" / "static"


def linked(html: str) -> dict[str, str]:
    """Each static file a page links to, with the version its address carries."""
    return dict(re.findall(r'/static/([\w.]+)\?v=([0-9a-f]+)"', html))


def fetch(client, address: str) -> tuple[int, bytes, ResponseCacheControl]:
    """A static file's status, body and caching (the file it was read from closed)."""
    with client.get(address) as response:
        return response.status_code, response.data, response.cache_control


def test_pages_link_each_file_at_its_contents_version(client, make_game) -> None:
    game = make_game()
    files = linked(client.get(f"/play/{game['keeper']}").get_data(as_text=True))
    assert set(files) == {"style.css", "favicon.svg", "play.js"}
    for name, version in files.items():
        assert version == hashlib.sha256((STATIC / name).read_bytes()).hexdigest()[:12]


def test_the_current_version_is_kept_for_a_year_and_others_are_checked(client) -> None:
    version = linked(client.get("/").get_data(as_text=True))["style.css"]
    status, body, caching = fetch(client, f"/static/style.css?v={version}")
    assert status == 200 and body == (STATIC / "style.css").read_bytes()
    assert caching.max_age == YEAR and caching.immutable and caching.public
    for address in ("/static/style.css", "/static/style.css?v=0123456789ab"):
        status, other, caching = fetch(client, address)
        assert status == 200 and other == body
        assert caching.max_age is None and caching.no_cache
    assert fetch(client, "/static/missing.css?v=0123456789ab")[0] == 404


def test_a_changed_file_gets_a_new_address(app: Flask, client, tmp_path: Path) -> None:
    shutil.copytree(STATIC, tmp_path / "static")
    app.static_folder = str(tmp_path / "static")
    before = linked(client.get("/").get_data(as_text=True))["style.css"]
    (tmp_path / "static" / "style.css").write_text("body { color: black; }\n")
    after = linked(client.get("/").get_data(as_text=True))["style.css"]
    assert after != before
    assert after == hashlib.sha256(b"body { color: black; }\n").hexdigest()[:12]
    assert fetch(client, f"/static/style.css?v={before}")[2].max_age is None
    assert fetch(client, f"/static/style.css?v={after}")[2].max_age == YEAR


def test_a_checked_or_partial_read_of_the_current_version_keeps_its_year(client) -> None:
    """A 304 updates the headers a browser keeps (RFC 9111, 4.3.4) and a 206 is kept with
    them: either answered ``no-cache`` would turn the year's copy into one checked on
    every use."""
    version = linked(client.get("/").get_data(as_text=True))["style.css"]
    address = f"/static/style.css?v={version}"
    with client.get(address) as first:
        etag, modified = first.headers["ETag"], first.headers["Last-Modified"]
    for headers, status in (
        ({"If-None-Match": etag}, 304),
        ({"If-Modified-Since": modified}, 304),
        ({"Range": "bytes=0-9"}, 206),
    ):
        with client.get(address, headers=headers) as response:
            caching = response.cache_control
            assert response.status_code == status, headers
            assert caching.max_age == YEAR and caching.immutable and caching.public, headers
            assert not caching.no_cache, headers


def test_a_static_file_is_the_same_in_every_language(client) -> None:
    """Its answer varies by neither the language asked for nor the cookies: a browser whose
    cookie changed (a dashboard session refreshed on each page, the language switched) would
    fetch its year's copy again, and a shared cache would keep one copy per language."""
    version = linked(client.get("/").get_data(as_text=True))["style.css"]
    for address in (f"/static/style.css?v={version}", "/static/style.css"):
        with client.get(address, headers={"Accept-Language": "fr"}) as response:
            assert response.status_code == 200
            assert not {"accept-language", "cookie"} & {name.lower() for name in response.vary}
    with client.get("/static/missing.css", headers={"Accept-Language": "fr"}) as missing:
        assert missing.status_code == 404  # its page is in the visitor's language
        assert {"Accept-Language", "Cookie"} <= set(missing.vary)
