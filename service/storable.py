"""Text from outside the service (an email, a mail server's reply) made fit to store.

No PostgreSQL text or JSON column holds a NUL character, and no UTF-8 a lone
surrogate (Python decodes bytes that are no text into those). A request over
HTTP with a NUL is refused (:mod:`service.request_limits`); text the service
keeps from elsewhere loses them instead.
"""

from __future__ import annotations


def storable(text: str) -> str:
    """``text`` without NUL and lone surrogates."""
    return "".join(char for char in text if char != "\0" and not "\ud800" <= char <= "\udfff")
