"""Reply tests send through a real SMTP server the test starts, with replies on."""

from __future__ import annotations

from typing import Any

import pytest

REPLY_ADDRESS = "play@splitmind.test"


@pytest.fixture
def app_config(mail_config: dict[str, Any]) -> dict[str, Any]:
    return {**mail_config, "REPLY_ADDRESS": REPLY_ADDRESS}
