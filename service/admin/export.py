"""The dashboard's lists as CSV files.

A file holds at most :data:`EXPORT_LIMIT` rows, in the list's order (the pages
say so: the list's filters export the others), read :data:`BATCH` at a time as
the file is written, so that a large export neither fills the web process's
memory nor waits to start.

A cell a spreadsheet would read as a formula (a player's name starting with
``=``, say) is written with a leading apostrophe, so opening the file runs
nothing.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import Any, TypeVar

from flask import Response, stream_with_context
from sqlalchemy import Select

from ..models import db

Row = TypeVar("Row")

# The most rows one file holds, and how many are read from the database at a time.
EXPORT_LIMIT = 100_000
BATCH = 1_000

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# A formula character after a character some spreadsheet splits cells on (a comma, the
# semicolon of many locales, a tab) starts a cell there too.
SPLIT_FORMULA = re.compile(r"([,;\t])(?=[=+\-@\t\r])")


def cell(value: Any) -> str:
    """One value as a CSV cell: times in UTC ISO 8601, nothing that reads as a formula."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat(timespec="seconds")
    text = SPLIT_FORMULA.sub(r"\1'", str(value))
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def _lines(header: list[str], rows: Iterable[list[Any]]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    for row in rows:
        writer.writerow([cell(value) for value in row])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    yield buffer.getvalue()


def attributes(names: list[str]) -> Callable[[Any], list[Any]]:
    """A row maker that reads these attributes of a row, in order (the header names them)."""
    return lambda found: [getattr(found, name) for name in names]


def csv_response(
    name: str,
    header: list[str],
    query: Select[Any],
    row: Callable[[Row], list[Any]],
) -> Response:
    """The first :data:`EXPORT_LIMIT` rows of ``query`` as a CSV download ``name``, read
    :data:`BATCH` at a time as the file is written out, in the request's context."""

    def rows() -> Iterator[list[Any]]:
        batched = query.limit(EXPORT_LIMIT).execution_options(yield_per=BATCH)
        # Closed however the file ends, read to its end or not (a client gone): the
        # database's cursor goes with it.
        with db.session.scalars(batched) as found:
            for each in found:
                yield row(each)

    return Response(
        stream_with_context(_lines(header, rows())),
        mimetype="text/csv",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
