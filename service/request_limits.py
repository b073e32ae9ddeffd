"""What one request may hold, checked before anything reads it as a form or a move.

Werkzeug refuses a body longer than ``MAX_CONTENT_LENGTH`` from its
``Content-Length`` alone, and a multipart field or part count over the limits
of :mod:`service.config` while parsing it. A body sent in chunks has no length
to check: Werkzeug stops reading it at the limit, and the rest would be cut
off without a word, so it is read here, first, and refused if it reaches the
limit.
"""

from __future__ import annotations

from flask import Flask, abort, request


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


def init_app(app: Flask) -> None:
    """Check each request before the other hooks (rate limits, CSRF) read its form."""
    app.before_request(read_chunked_body)
