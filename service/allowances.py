"""Rate limits a view draws on itself, at the step that counts, in one atomic step each.

Flask-Limiter counts a request before its view runs, or, with ``deduct_when``,
tests the limit before and counts the request after its response: requests
sent together all pass the test before any is counted, and get past the limit
by as many as are served at once. An allowance is drawn on in one atomic step
of the limiter's storage (``RATELIMIT_STORAGE_URI``, shared by the web
processes): of requests arriving at the same instant, no more are let through
than it allows. A draw can be given back, for a request that had to draw on
an allowance before it knew whether it would count, and then did not.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from limits import RateLimitItem, WindowStats

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

    A request refused for one uses up nothing of the others: every one is
    tested before any is drawn on, and when a draw fails (another request took
    the last of it meanwhile) it and those before it are given back: a refused
    draw is counted all the same in the limiter's fixed window. Each draw is
    atomic: of requests at the same instant, none gets past an allowance.
    """
    refused = spent(allowances)
    if refused:
        return refused
    for index, each in enumerate(allowances):
        if not limiter.limiter.hit(each.limit, *each.keys):
            give_back(allowances[: index + 1])
            return [each]
    return []


def give_back(allowances: Iterable[Allowance]) -> None:
    """Undo a :func:`draw` on each of ``allowances``.

    The limiter counts in fixed windows (:data:`service.extensions.limiter`), so
    a draw is given back by counting down (which the memory and Redis storages
    do). A count back at nothing is forgotten, as if never drawn on: the next
    draw starts its window afresh, and a window that ended while the request
    ran keeps no count below nothing.
    """
    storage = limiter.limiter.storage
    for each in allowances:
        key = each.limit.key_for(*each.keys)
        if storage.incr(key, each.limit.get_expiry(), amount=-1) <= 0:
            storage.clear(key)


def window(allowance: Allowance) -> WindowStats:
    """When the allowance's window ends (a timestamp), and how much is left of it."""
    return limiter.limiter.get_window_stats(allowance.limit, *allowance.keys)
