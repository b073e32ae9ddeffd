"""The README and the docs a newcomer reads first: what the Makefile does, where each
section is, lines a terminal shows whole."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
# The README's opening: the two commands and what they need, before its first section.
OPENING = README.split("\n## ", 1)[0]


def test_the_opening_names_each_package_make_test_installs() -> None:
    """Under CI=true `make test` installs what its tests require; elsewhere those tests are
    skipped. The opening names each, so that a newcomer knows what to install."""
    makefile = (ROOT / "Makefile").read_text()
    installed = re.findall(r"apt-get install -y -qq (\S+)", makefile)
    assert installed
    missing = [package for package in installed if f"`{package}`" not in OPENING]
    assert not missing, f"the README's opening does not name {missing}"


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def headings(text: str, level: str) -> list[str]:
    """The headings of ``level`` (``"##"``) outside code blocks, in order."""
    found, code = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            code = not code
        elif not code and line.startswith(level + " "):
            found.append(line[len(level) + 1 :])
    return found


def test_the_contents_link_every_section_in_order() -> None:
    """A newcomer finds a section of the long README from the list at its top."""
    contents = re.findall(r"^- \[([^\]]+)\]\(#([^)]+)\)$", OPENING, re.MULTILINE)
    sections = headings(README, "##")
    assert [name for name, _ in contents] == sections
    assert [link for _, link in contents] == [anchor(name) for name in sections]


def test_every_link_within_the_readme_finds_its_heading() -> None:
    every = {anchor(name) for level in ("##", "###") for name in headings(README, level)}
    links = set(re.findall(r"\]\(#([^)]+)\)", README))
    assert links and not links - every, sorted(links - every)


@pytest.mark.parametrize("name", ["README.md", "docs/rules.md", "docs/playtest.md"])
def test_prose_lines_are_short(name: str) -> None:
    """Under 80 characters, as a terminal or a diff shows them; a table's row and a
    command in a code block are one line each."""
    long, code = [], False
    for number, line in enumerate((ROOT / name).read_text().splitlines(), 1):
        if line.startswith("```"):
            code = not code
        elif not code and not line.startswith("|") and len(line) >= 80:
            long.append(number)
    assert not long, f"{name}: lines of 80 characters or more: {long}"
