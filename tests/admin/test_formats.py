"""The dashboard's formats: ages as people say them, CSV cells that run nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from service.admin.export import cell
from service.admin.routes import ago

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("back", "said"),
    [
        (timedelta(seconds=59), "just now"),
        (timedelta(minutes=1), "1 minute ago"),
        (timedelta(hours=5, minutes=59), "5 hours ago"),
        (timedelta(days=2, hours=23), "2 days ago"),
        (timedelta(days=21), "3 weeks ago"),
        (timedelta(days=45), "1 month ago"),
        (timedelta(days=800), "2 years ago"),
        (-timedelta(hours=5, minutes=1), "in 5 hours"),
    ],
)
def test_ages_read_as_people_say_them(back: timedelta, said: str) -> None:
    assert ago(NOW - back, NOW) == said


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("=SUM(A1)", "'=SUM(A1)"),
        ("+33 1", "'+33 1"),
        ("-1", "'-1"),
        ("@cmd", "'@cmd"),
        # A spreadsheet that splits cells on ";" (many locales) or a tab reads a cell here too.
        ("Zoe;=2+3;", "Zoe;'=2+3;"),
        ("a,+1\t-2", "a,'+1\t'-2"),
        ("Kim", "Kim"),
        (None, ""),
        (42, "42"),
        (NOW, "2026-12-01T12:00:00+00:00"),
    ],
)
def test_csv_cells_never_read_as_formulas(value: object, written: str) -> None:
    assert cell(value) == written
