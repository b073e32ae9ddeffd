"""Every kind of HTML email fits a phone and a desktop window: nothing scrolls sideways.

The emails are the saved snapshots (one of each kind, in English and French), which
the mail tests prove equal to what the service sends, with their links' placeholder
put back as a token of a real link's length and shape. They are rendered in Chromium
at 390 and 1280 px wide. A raw link, one long word, is the usual culprit: the layout
gives it a button and lets its text wrap.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pytest
from itsdangerous import URLSafeSerializer

from ..mail.test_templates import KINDS, SNAPSHOTS

WIDTHS = (390, 1280)
# A home link's token: an address and a 256-bit key, signed; longer than a game link's.
TOKEN = URLSafeSerializer("a key", salt="home").dumps(
    ["someone.with.a.long.name@example.com", secrets.token_urlsafe(32)]
)


def html_emails(language: str) -> dict[str, str]:
    """Each snapshot's HTML in ``language``, its links holding a real-length token."""
    folder = SNAPSHOTS / language if language != "en" else SNAPSHOTS
    files: list[Path] = sorted(folder.glob("*.html"))
    return {path.stem: path.read_text().replace("/TOKEN", f"/{TOKEN}") for path in files}


@pytest.mark.parametrize("language", ["en", "fr"])
def test_no_email_scrolls_sideways(browser: Any, language: str) -> None:
    emails = html_emails(language)
    assert set(KINDS) <= set(emails) and all("/TOKEN" not in html for html in emails.values())
    for width in WIDTHS:
        context = browser.new_context(viewport={"width": width, "height": 800})
        try:
            page = context.new_page()
            for kind, html in emails.items():
                page.set_content(html)
                scroll = page.evaluate("document.documentElement.scrollWidth")
                assert scroll <= width, f"{kind} is {scroll} px wide in a {width} px window"
        finally:
            context.close()
