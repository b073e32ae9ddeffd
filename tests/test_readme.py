"""The README a newcomer reads first says what the Makefile does."""

from __future__ import annotations

import re
from pathlib import Path

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
