"""Reply tests send through a real SMTP server the test starts, with replies on."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

from service.replies.servers import InboundController

from ..conftest import STARTED_SMTP
from ..smtp import free_port

REPLY_ADDRESS = "play@splitmind.test"


@pytest.fixture
def app_config(mail_config: dict[str, Any]) -> dict[str, Any]:
    return {**mail_config, "REPLY_ADDRESS": REPLY_ADDRESS}


@pytest.fixture
def inbound(app: Flask) -> Iterator[int]:
    """The service's LMTP server for replies, on a free port: yields the port."""
    port = free_port()
    controller = InboundController(app, "127.0.0.1", port)
    controller.start()
    STARTED_SMTP.add(("127.0.0.1", port))
    try:
        yield port
    finally:
        controller.stop()
        STARTED_SMTP.discard(("127.0.0.1", port))
