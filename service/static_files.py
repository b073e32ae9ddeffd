"""Static files at addresses that name their content, kept by browsers for a year.

``url_for("static", filename=...)`` adds ``?v=`` and the first hex digits of the
file's SHA-256. A request carrying the current version is answered with
``Cache-Control: public, max-age=<a year>, immutable``, so a browser loads the
style sheet, the page's script and the icon once, not on every page it opens;
a changed file gets a new address. Any other request for the file (no version,
or an old one) is answered as before, to be checked again on each use.

A browser's check of its copy (a 304) and a part of the file (a 206) carry the
same year: the headers of a 304 replace those the browser kept.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from flask import Flask, Response, request

YEAR = 365 * 24 * 60 * 60
EXTENSION = "static_versions"
# The answers that serve the file: whole, in part (Range), or the browser's copy confirmed.
SERVED = (200, 206, 304)


def version(app: Flask, filename: str) -> str | None:
    """The file's version (12 hex digits of its SHA-256), or None if there is no such file.

    Read again only when the file's size or modification time changes.
    """
    assert app.static_folder is not None
    path = Path(app.static_folder) / filename
    try:
        stat = path.stat()
    except OSError:
        return None
    versions: dict[str, tuple[tuple[int, int], str]] = app.extensions[EXTENSION]
    seen = (stat.st_mtime_ns, stat.st_size)
    known = versions.get(filename)
    if known is None or known[0] != seen:
        known = (seen, hashlib.sha256(path.read_bytes()).hexdigest()[:12])
        versions[filename] = known
    return known[1]


def init_app(app: Flask) -> None:
    """Version the static links and cache the versioned answers."""
    app.extensions[EXTENSION] = {}

    @app.url_defaults
    def name_the_content(endpoint: str, values: dict[str, Any]) -> None:
        if endpoint == "static" and "filename" in values and "v" not in values:
            current = version(app, values["filename"])
            if current is not None:
                values["v"] = current

    @app.after_request
    def keep_for_a_year(response: Response) -> Response:
        if (
            request.endpoint == "static"
            and response.status_code in SERVED
            and request.view_args is not None
            and request.args.get("v") == version(app, request.view_args["filename"])
        ):
            response.cache_control.public = True
            response.cache_control.max_age = YEAR
            response.cache_control.immutable = True
            response.cache_control.no_cache = None
        return response
