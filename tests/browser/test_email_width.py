"""Every kind of HTML email fits a phone and a desktop window: nothing scrolls sideways.

The emails are the snapshot tests' (one of each kind, in English and French),
rendered in Chromium at 390 and 1280 px wide. A raw link, one long word, is the
usual culprit: the layout gives it a button and lets its text wrap.
"""

from __future__ import annotations

from typing import Any

import pytest

from service.models import OutboxMessage

from ..mail.test_templates import KINDS, emails, language  # noqa: F401 (fixtures)

WIDTHS = (390, 1280)


@pytest.fixture
def app_config(mail_config: dict[str, Any]) -> dict[str, Any]:
    """The emails are sent through the test's SMTP server, as in the mail tests."""
    return mail_config


def test_no_email_scrolls_sideways(
    browser: Any,
    emails: dict[str, OutboxMessage],  # noqa: F811
) -> None:
    for width in WIDTHS:
        context = browser.new_context(viewport={"width": width, "height": 800})
        try:
            page = context.new_page()
            for kind in KINDS:
                page.set_content(emails[kind].html_body)
                scroll = page.evaluate("document.documentElement.scrollWidth")
                assert scroll <= width, f"{kind} is {scroll} px wide in a {width} px window"
        finally:
            context.close()
