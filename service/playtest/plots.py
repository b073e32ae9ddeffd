"""Plots of playtest figures as inline SVG, drawn on the server.

The dashboard's policy allows no inline style, so the markup carries only
geometry and classes; ``static/admin.css`` gives the colours. Each plot has
a title for screen readers, and the page shows the same numbers in a table.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from .simulate import TARGET

LABEL_WIDTH = 340
# The characters of a label's line that fit in LABEL_WIDTH: 12px text, each character
# counted 7.5px wide, more than the labels' letters and digits take in the usual fonts.
LABEL_CHARS = 44
# A longer label is wrapped onto this many lines, the last cut short with an ellipsis.
LABEL_LINES = 2
LINE_HEIGHT = 14
PLOT_WIDTH = 400
ROW_HEIGHT = 26
AXIS_HEIGHT = 24


@dataclass(frozen=True)
class WinRate:
    """One row of the win-rate plot: where the figure comes from and the Keeper's rate."""

    label: str
    games: int
    rate: float | None
    low: float
    high: float


def _x(rate: float) -> float:
    return LABEL_WIDTH + rate * PLOT_WIDTH


def _svg(width: float, height: float, title: str, body: list[str]) -> Markup:
    return Markup(
        f'<svg class="plot" viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" '
        f'height="{height:.0f}" role="img" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{escape(title)}</title>{''.join(body)}</svg>"
    )


def label_lines(label: str) -> list[str]:
    """A row's label cut at spaces into lines that fit beside the plot; one too long for
    :data:`LABEL_LINES` lines ends in an ellipsis."""
    return textwrap.wrap(label, LABEL_CHARS, max_lines=LABEL_LINES, placeholder=" …") or [""]


def _label(label: str, x: float, middle: float) -> str:
    """A row's label ending at ``x``, its lines centred on ``middle``, the whole in its title."""
    lines = label_lines(label)
    first = middle + 4 - LINE_HEIGHT * (len(lines) - 1) / 2
    spans = "".join(
        f'<tspan x="{x}" y="{first + LINE_HEIGHT * number:.1f}">{escape(line)}</tspan>'
        for number, line in enumerate(lines)
    )
    return f'<text class="label" text-anchor="end"><title>{escape(label)}</title>{spans}</text>'


def win_rate_plot(rows: Sequence[WinRate]) -> Markup:
    """The Keeper's win rate of each row as a dot on its 95% interval, against the 48–52% band.

    Each row's label is wrapped to fit beside the plot (see :func:`label_lines`),
    with the whole label as its title, and the rows are as tall as the longest needs.
    """
    lines = max((len(label_lines(row.label)) for row in rows), default=1)
    row_height = ROW_HEIGHT + LINE_HEIGHT * (lines - 1)
    height = AXIS_HEIGHT + row_height * max(1, len(rows))
    bottom = height - AXIS_HEIGHT
    body = [
        f'<rect class="target" x="{_x(TARGET[0]):.1f}" y="0" '
        f'width="{_x(TARGET[1]) - _x(TARGET[0]):.1f}" height="{bottom}"/>'
    ]
    for tick in (0, 0.25, 0.5, 0.75, 1):
        body.append(
            f'<line class="{"even" if tick == 0.5 else "grid"}" x1="{_x(tick):.1f}" '
            f'x2="{_x(tick):.1f}" y1="0" y2="{bottom}"/>'
            f'<text class="axis" x="{_x(tick):.1f}" y="{bottom + 16}" text-anchor="middle">'
            f"{tick:.0%}</text>"
        )
    for index, row in enumerate(rows):
        middle = row_height * index + row_height / 2
        body.append(_label(row.label, LABEL_WIDTH - 8, middle))
        if row.rate is None:
            continue
        body.append(
            f'<line class="interval" x1="{_x(row.low):.1f}" x2="{_x(row.high):.1f}" '
            f'y1="{middle:.1f}" y2="{middle:.1f}"/>'
            f'<circle class="rate" cx="{_x(row.rate):.1f}" cy="{middle:.1f}" r="4">'
            f"<title>{escape(row.label)}: {row.rate:.1%} ({row.low:.1%}–{row.high:.1%}) "
            f"of {row.games:,} games</title></circle>"
        )
    return _svg(
        LABEL_WIDTH + PLOT_WIDTH + 20,
        height,
        "The Keeper's win rate with its 95% interval; the shaded band is 48% to 52%",
        body,
    )


def track_plot(label: str, counts: Sequence[int]) -> Markup:
    """The final track's distribution: one bar per track value, as a share of the games."""
    width, height, base = 280, 140, 116
    games = sum(counts) or 1
    tallest = max(counts, default=0) / games or 1
    slot = (width - 20) / max(1, len(counts))
    body = [f'<line class="grid" x1="10" x2="{width - 10}" y1="{base}" y2="{base}"/>']
    for track, count in enumerate(counts):
        share = count / games
        bar = (base - 14) * share / tallest
        x = 10 + slot * track
        body.append(
            f'<rect class="bar" x="{x + 2:.1f}" y="{base - bar:.1f}" width="{slot - 4:.1f}" '
            f'height="{bar:.1f}"><title>track {track}: {count:,} games ({share:.1%})</title></rect>'
            f'<text class="axis" x="{x + slot / 2:.1f}" y="{base + 16}" '
            f'text-anchor="middle">{track}</text>'
        )
    return _svg(width, height, f"Final track of {label}", body)
