"""How many emails the public pages may send one address a day, counted as they are sent.

The lobby's forms are limited per IP address, counting every request before
it is read. Each address named in them has an allowance too, which counts only
the requests that email it: a form with a mistake, or the same form sent
twice, emails no one and uses up nothing, so naming someone in forms that fail
cannot lock them out. Nor can naming them in requests nobody confirms: the
opponent's invitation is emailed, and drawn on, once its creator confirms their
address.

An allowance is drawn on once the request has made what it emails, inside its
transaction, in one atomic step of the rate limiter's storage
(:mod:`service.allowances`): of requests arriving at the same instant, those
past the allowance are refused with 429, and their transaction rolls back.
"""

from __future__ import annotations

import math
import time

from limits import parse
from werkzeug.exceptions import TooManyRequests

from .. import addresses, allowances, games
from ..allowances import Allowance

ALLOWANCES = {
    # The creator of a game: their confirm link, or their link against the computer.
    "creator": parse("5 per day"),
    # The opponent named in a request: the invitation it leads to, drawn on as its creator
    # confirms (the confirm page says when none is left).
    "opponent": parse("3 per day"),
    # The creator of a game asked for from their home page, whose link nobody else has.
    "home": parse("10 per day"),
    # An address's links, from the lost-links form.
    "links": parse("3 per day"),
    # The address a home page's games are to move to: the link to confirm it.
    "new_address": parse("1 per hour"),
    # The home page asking for that move, whatever the address it names.
    "moves": parse("3 per day"),
}


def draw(*emails: tuple[str, str]) -> None:
    """Count one email against each ``(allowance, address)`` given (an allowance is a key of
    :data:`ALLOWANCES`); 429 if one is past it, with when its window ends as ``Retry-After``.

    Every allowance is checked before any is drawn on, so a request refused for
    one address uses up nothing of another's. The addresses are ones the request
    has already taken: every way of writing one (capitals, wide letters, another
    full stop in the domain, a sub-address) is one inbox, so it draws on one
    allowance.
    """
    refused = allowances.draw(_named(emails))
    if refused:
        ends = max(allowances.window(each).reset_time for each in refused)
        raise TooManyRequests(retry_after=max(1, math.ceil(ends - time.time())))


def spent(*emails: tuple[str, str]) -> bool:
    """Whether one of the ``(allowance, address)`` given has nothing left; nothing is drawn."""
    return bool(allowances.spent(_named(emails)))


def _named(emails: tuple[tuple[str, str], ...]) -> list[Allowance]:
    return [
        Allowance(ALLOWANCES[allowance], ("lobby", allowance, inbox(address)))
        for allowance, address in emails
    ]


def inbox(address: str) -> str:
    """The inbox an address reaches, for counting: ``Kim+games@example.com`` reaches
    ``kim@example.com`` (:func:`service.addresses.inbox`)."""
    return addresses.inbox(games.clean_email(address))
