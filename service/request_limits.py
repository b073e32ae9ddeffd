"""What one request may hold, checked before anything reads it as a form or a move.

Werkzeug refuses a body longer than ``MAX_CONTENT_LENGTH`` from its
``Content-Length`` alone, and a multipart field or part count over the limits
of :mod:`service.config` while parsing it. A body sent in chunks has no length
to check: Werkzeug stops reading it at the limit, and the rest would be cut
off without a word, so it is read here, first, and refused if it reaches the
limit.

JSON nested deeper than Python's recursion limit is malformed, like any other
body the API cannot read.
"""

from __future__ import annotations

from typing import Any

from flask import Flask, abort, request
from flask.json.provider import DefaultJSONProvider


def read_chunked_body() -> None:
    """Read a chunked body now (no further than the limit); 413 if it reaches it."""
    if (
        request.content_length is not None
        or "chunked" not in request.headers.get("Transfer-Encoding", "").lower()
    ):
        return
    request.get_data(cache=True, parse_form_data=False)
    if getattr(request.stream, "is_exhausted", False):
        abort(413)


class JSONProvider(DefaultJSONProvider):
    """Flask's JSON, reading a body nested too deeply to decode as malformed (``ValueError``)."""

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        """Decode ``s``; ``ValueError`` where the decoder would run out of stack."""
        try:
            return super().loads(s, **kwargs)
        except RecursionError:
            raise ValueError("JSON nested too deeply") from None


def init_app(app: Flask) -> None:
    """Check each request before the other hooks (rate limits, CSRF) read its form."""
    app.json = JSONProvider(app)
    app.before_request(read_chunked_body)
