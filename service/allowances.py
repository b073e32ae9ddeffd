"""Rate limits a view draws on itself, once it knows that the request counts.

Flask-Limiter counts a request before its view runs, or, with ``deduct_when``,
tests the limit before and counts the request after its response: requests
sent together all pass the test before any is counted, and get past the limit
by as many as are served at once. An allowance is drawn on in one atomic step
of the limiter's storage (``RATELIMIT_STORAGE_URI``, shared by the web
processes): of requests arriving at the same instant, no more are let through
than it allows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from limits import RateLimitItem

from .extensions import limiter


@dataclass(frozen=True)
class Allowance:
    """A rate limit, counted under ``keys`` (whose, and for what)."""

    limit: RateLimitItem
    keys: tuple[str, ...]


def spent(allowances: Iterable[Allowance]) -> list[Allowance]:
    """Those of ``allowances`` with nothing left to draw on; nothing is drawn."""
    return [each for each in allowances if not limiter.limiter.test(each.limit, *each.keys)]


def draw(allowances: Sequence[Allowance]) -> list[Allowance]:
    """Draw one on each of ``allowances``; those refused (none: all are drawn on).

    Every one is tested before any is drawn on, so a request refused for one
    uses up nothing of the others. Each draw is atomic: of requests at the same
    instant, none gets past an allowance.
    """
    refused = spent(allowances)
    if refused:
        return refused
    for each in allowances:
        if not limiter.limiter.hit(each.limit, *each.keys):
            return [each]
    return []
