"""Plots drawn as SVG: every label readable whole, whatever its length."""

from __future__ import annotations

import html
import re

from service.playtest import plots
from service.playtest.plots import WinRate, win_rate_plot

# A run's label with a long variant: more than two lines' worth.
LONG = (
    "run 12: medium (Keeper) v medium (Shadow), exchange_sizes=1,2,1 halfway=7 swap_size=1 "
    "first_leader=shadow track_length=11, seed 20"
)
# What 12px text takes a character at most, in the fonts the dashboard uses.
CHARACTER_WIDTH = 7.5


def labels(svg: str) -> list[tuple[str, list[tuple[float, str]]]]:
    """Each label of the plot: its title, and the end and text of each of its lines."""
    return [
        (
            html.unescape(title),
            [
                (float(x), html.unescape(line))
                for x, line in re.findall(r'<tspan x="([\d.]+)"[^>]*>([^<]*)</tspan>', spans)
            ],
        )
        for title, spans in re.findall(
            r'<text class="label" text-anchor="end"><title>([^<]*)</title>(.*?)</text>', svg
        )
    ]


def test_a_long_label_fits_the_plot_and_is_whole_in_its_title() -> None:
    short = "run 4: random (Keeper) v easy (Shadow), printed rules, seed 1"
    svg = win_rate_plot([WinRate(LONG, 10, 0.5, 0.2, 0.8), WinRate(short, 10, 0.4, 0.1, 0.7)])
    width = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg)[1])  # type: ignore[index]
    found = labels(svg)
    assert [title for title, _ in found] == [LONG, short]
    for _, lines in found:
        assert 1 <= len(lines) <= plots.LABEL_LINES
        for end, line in lines:
            assert end - CHARACTER_WIDTH * len(line) >= 0, line
            assert end <= width
    # The short one wraps whole; the long one ends in an ellipsis.
    assert " ".join(line for _, line in found[1][1]) == short
    assert found[0][1][-1][1].endswith("…")


def test_label_lines_cut_at_spaces() -> None:
    assert plots.label_lines("games between people") == ["games between people"]
    lines = plots.label_lines(LONG)
    assert len(lines) == plots.LABEL_LINES
    assert all(len(line) <= plots.LABEL_CHARS for line in lines)
    assert lines[0] == "run 12: medium (Keeper) v medium (Shadow),"
