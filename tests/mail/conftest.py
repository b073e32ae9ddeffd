"""Mail tests send through a real SMTP server the test starts."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def app_config(mail_config: dict[str, Any]) -> dict[str, Any]:
    return mail_config
