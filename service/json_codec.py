"""JSON written and read by orjson where it gives what the standard library's ``json`` gives.

A move reads its game's state (JSON), writes it back and answers with the
seat's view (JSON); a read of the view reads the state and answers the view.
The standard library's encoder and decoder were a tenth of the web workers'
time under load (``bench/http.py``, profiled): orjson does the same work in a
fraction of it.

Each function here falls back on the standard library wherever orjson would
answer differently or not at all, so that nothing stored or answered changes:
an integer beyond 64 bits (orjson refuses to write one, and reads one as a
float), a key that is not a string, a date or a dataclass (orjson would write
them, the standard library refuses them but through ``default``), ``NaN`` or a
lone surrogate (orjson refuses to read either). Two differences remain, for
values no game, event or email holds: orjson writes ``NaN`` and the infinities
as ``null`` (the standard library wrote ``NaN``, which PostgreSQL refuses),
and an :class:`~enum.Enum` as its value (the standard library refused it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import orjson

# Nineteen digits in a row: a number orjson may not read exactly. It reads an integer
# exactly only from -2**63 (nineteen digits) to 2**64 - 1 (twenty), and one below as a float.
LONG_NUMBER = re.compile(rb"\d{19}")
# What orjson writes only through ``default``, as the standard library does.
PASSED_THROUGH = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def dumps(value: Any) -> str:
    """``value`` as JSON text, as :func:`json.dumps` writes it but for its spaces (none)."""
    try:
        return orjson.dumps(value, option=PASSED_THROUGH).decode()
    except TypeError:  # orjson.JSONEncodeError: a key not a string, a number too big
        return json.dumps(value)


def loads(data: str | bytes | bytearray | memoryview) -> Any:
    """The value of the JSON text ``data``, as :func:`json.loads` reads it."""
    if isinstance(data, memoryview):
        data = bytes(data)
    raw = data.encode() if isinstance(data, str) else data
    if LONG_NUMBER.search(raw) is None:
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:  # NaN, a lone surrogate: the standard library decides
            pass
    return json.loads(data)


def compact_sorted(value: Any, default: Callable[[Any], Any]) -> bytes:
    """``value`` as Flask's JSON provider writes a response body when not debugging: keys
    sorted, no spaces, ``default`` for any value JSON has no type for (dates included);
    but UTF-8, non-ASCII characters as themselves rather than ``\\u`` escapes."""
    try:
        return orjson.dumps(
            value,
            default=default,
            option=orjson.OPT_SORT_KEYS | PASSED_THROUGH,
        )
    except TypeError:
        text = json.dumps(value, default=default, sort_keys=True, separators=(",", ":"))
        return text.encode()
