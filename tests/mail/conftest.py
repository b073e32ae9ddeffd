"""Mail tests send through a real SMTP server the test starts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask

from service.mail.worker import drain


@pytest.fixture
def app_config(mail_config: dict[str, Any]) -> dict[str, Any]:
    return mail_config


@pytest.fixture
def deliver(app: Flask) -> Callable[[], int]:
    """Run the mail worker until the queue is empty; returns how many messages it handled."""

    def run() -> int:
        with app.app_context():
            return drain()

    return run
