"""What one request may hold, checked before anything reads it as a form or a move.

Werkzeug refuses a body longer than ``MAX_CONTENT_LENGTH`` from its
``Content-Length`` alone, and a multipart body of more parts than
:data:`service.config.FORM_PARTS` while parsing it; a multipart field longer
than :data:`service.config.FORM_FIELD_BYTES` is refused here once parsed
(Werkzeug's own limit holds whole chunks of the body to it, not fields). A body
sent in chunks has no length to check: Werkzeug stops reading it at the limit,
and the rest would be cut off without a word, so it is read here, first, and
refused if it reaches the limit.

No field, query parameter or path the service reads holds a NUL character,
and no PostgreSQL text column can store one: a request with one is refused
(400) before any of it reaches a query. JSON nested deeper than Python's
recursion limit is malformed, like any other body the API cannot read, and
so is an object that names a key twice (:class:`RepeatedKey`): which of the two
counts is each reader's guess, and a proxy or a client's own check may guess
otherwise than the decoder, which keeps the last.

The pages take forms and the API takes JSON. Flask-WTF's forms read a JSON
body as their fields, which then hold numbers, lists or ``null`` where the
validators expect text, and a rate limit keyed on a form's address would
find none there: a JSON body sent to a page is refused (415) before either
reads it. No page takes a file either (400).
"""

from __future__ import annotations

import io
import json
from itertools import chain
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, abort, redirect, request
from flask.json.provider import DefaultJSONProvider
from flask_wtf.form import SUBMIT_METHODS
from werkzeug.datastructures import FileStorage
from werkzeug.exceptions import HTTPException
from werkzeug.routing import RequestRedirect
from werkzeug.sansio.response import Response as SansIOResponse
from werkzeug.wrappers import Response as BaseResponse

from . import json_codec
from .config import FORM_FIELD_BYTES
from .errors import wants_json
from .language import lazy_gettext as _l

NUL_IN_REQUEST = "The request holds a NUL character (\\0), which no field or address takes."
UNREADABLE_CHUNKS = "The request's body is sent in chunks that cannot be read."
UNREADABLE_BODY = _l("This request's body cannot be read.")


def read_chunked_body() -> None:
    """Read a chunked body now (no further than the limit); 413 if it goes past it, 400 if
    the server cannot read its chunks."""
    if (
        request.content_length is not None
        or "chunked" not in request.headers.get("Transfer-Encoding", "").lower()
    ):
        return
    server_stream = request.environ["wsgi.input"]
    try:
        request.get_data(cache=True, parse_form_data=False)
        # Werkzeug's stream stops at the limit whether the body ends there or goes on: a
        # byte more from the server's stream tells which (reading the limited one would raise).
        beyond = getattr(request.stream, "is_exhausted", False) and server_stream.read(1)
    except HTTPException:
        raise
    except Exception:  # the server's own error for chunks it cannot read (gunicorn's)
        abort(400, UNREADABLE_CHUNKS if wants_json() else UNREADABLE_BODY)
    if beyond:
        abort(413)


def refuse_long_fields() -> None:
    """413 for a multipart field, or file, of more than :data:`FORM_FIELD_BYTES`.

    Werkzeug reads the fields to memory and the files to a buffer, within
    ``MAX_CONTENT_LENGTH`` in all; a URL-encoded body is one string, limited by
    that alone.
    """
    if request.mimetype != "multipart/form-data":
        return
    sizes = chain(
        (len(value.encode()) for _, value in request.form.items(multi=True)),
        (stored_size(file) for _, file in request.files.items(multi=True)),
    )
    if any(size > FORM_FIELD_BYTES for size in sizes):
        abort(413)


def stored_size(file: FileStorage) -> int:
    """The bytes Werkzeug stored of a file part, its stream left at the start."""
    size = file.stream.seek(0, io.SEEK_END)
    file.stream.seek(0)
    return size


def refuse_nul() -> None:
    """400 for a NUL character in the path, a query parameter or a form field (name or value)."""
    # Without a Content-Type there is no form: Werkzeug parses none (a GET, a poll).
    form = request.form.items(multi=True) if request.want_form_data_parsed else ()
    texts = chain(
        [request.path],
        chain.from_iterable(request.args.items(multi=True)),
        chain.from_iterable(form),
    )
    if any("\0" in text for text in texts):
        abort(
            400,
            NUL_IN_REQUEST
            if wants_json()
            else _l("This request holds a NUL character, which no field takes."),
        )


def refuse_files() -> None:
    """400 for a file sent to a page: no form of the service takes one, and Flask-WTF reads
    files as fields, handing a text field's checks a file where they expect its text."""
    if request.mimetype == "multipart/form-data" and request.files and not wants_json():
        abort(400, _l("This page takes the fields of a form, not files."))


def refuse_json_on_pages() -> None:
    """415 for a JSON body submitted to a page rather than to the API.

    Only the methods a form is submitted with (Flask-WTF's) are refused: a GET
    reads no body. A body of another kind than a form or JSON is no form to
    Werkzeug, so every form reads it as an empty one and refuses it as such.
    """
    if request.is_json and request.method in SUBMIT_METHODS and not wants_json():
        # Lazy: the page's language is known only once the error page looks its link up.
        abort(
            415,
            _l(
                "This page takes a form, not JSON: send its fields as a form "
                "(the JSON API is under /api/)."
            ),
        )


class RepeatedKey(ValueError):
    """A JSON object names one key twice; the message, in the API's English, says which."""


def _each_key_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The object of ``pairs``; :class:`RepeatedKey` if one key comes twice."""
    found = dict(pairs)
    if len(found) < len(pairs):
        keys = [key for key, _ in pairs]
        repeated = next(key for key in keys if keys.count(key) > 1)
        raise RepeatedKey(f"The key {json.dumps(repeated)} comes twice in one object.")
    return found


class JSONProvider(DefaultJSONProvider):
    """Flask's JSON, reading a body nested too deeply to decode, or an object that repeats a
    key (:class:`RepeatedKey`), as malformed (``ValueError``), and writing a response's body
    by :mod:`.json_codec` but when debugging (indented)."""

    def response(self, *args: Any, **kwargs: Any) -> SansIOResponse:
        """The JSON response of ``jsonify(*args, **kwargs)``, as Flask's, non-ASCII characters
        written as themselves (in UTF-8)."""
        if self.compact is False or (self.compact is None and self._app.debug):
            return super().response(*args, **kwargs)
        body = json_codec.compact_sorted(self._prepare_response_obj(args, kwargs), self.default)
        # Typed as the sans-IO response, whose first argument is the status: it is Flask's.
        return self._app.response_class(body + b"\n", mimetype=self.mimetype)  # type: ignore[arg-type]

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        """Decode ``s``; ``ValueError`` where the decoder would run out of stack, or an
        object repeats a key."""
        try:
            return super().loads(s, object_pairs_hook=_each_key_once, **kwargs)
        except RecursionError:
            raise ValueError("JSON nested too deeply") from None


def refuse_empty_segments() -> None:
    """404 for a path with doubled slashes (``//play/…``, ``/api/play//…``): no route has one.

    Werkzeug ignores the slashes that lead a path, and answers doubled slashes
    inside one by redirecting to the path with them merged (unless the map says
    not to, as it does here), at the request's Host rather than ``BASE_URL``: a
    link's token would go wherever the Host header said.
    """
    if "//" in request.environ.get("PATH_INFO", ""):
        abort(404)


def redirect_within_the_site() -> BaseResponse | None:
    """A path missing its route's last slash (``/admin``) is redirected by its path alone.

    Werkzeug redirects it to an absolute address at the request's Host, which
    anyone may write: a cache in front would keep the redirect for others.
    """
    found = request.routing_exception
    if not isinstance(found, RequestRedirect):
        return None
    target = urlsplit(found.new_url)
    return redirect(target.path + (f"?{target.query}" if target.query else ""), found.code)


def init_app(app: Flask) -> None:
    """Check each request before the other hooks (rate limits, CSRF) read its form."""
    app.json = JSONProvider(app)
    app.before_request(refuse_empty_segments)  # first: no body is read for a path no route has
    app.before_request(redirect_within_the_site)
    app.before_request(read_chunked_body)
    app.before_request(refuse_long_fields)
    app.before_request(refuse_nul)
    app.before_request(refuse_files)
    app.before_request(refuse_json_on_pages)
