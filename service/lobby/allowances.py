"""How many emails the public pages may send one address a day, counted as they are sent.

The lobby's forms are limited per IP address, counting every request before
it is read. Each address named in them has an allowance too, which counts only
the requests that email it: a form with a mistake, or the same form sent
twice, emails no one and uses up nothing, so naming someone in forms that fail
cannot lock them out.

An allowance is drawn on once the request has made what it emails, inside its
transaction, in one atomic step of the rate limiter's storage (shared by the
web processes): of requests arriving at the same instant, those past the
allowance are refused with 429, and their transaction rolls back.
"""

from __future__ import annotations

from flask import abort
from limits import parse

from .. import games
from ..extensions import limiter

ALLOWANCES = {
    # The creator of a game: their confirm link, or their link against the computer.
    "creator": parse("5 per day"),
    # The opponent named in a request: the invitation it leads to, once confirmed.
    "opponent": parse("3 per day"),
    # An address's links, from the lost-links form.
    "links": parse("3 per day"),
}


def draw(allowance: str, address: str) -> None:
    """Count one email to ``address`` against its ``allowance`` (a key of
    :data:`ALLOWANCES`); 429 if that is past it.

    Every way of writing one address (capitals, wide letters, another full stop
    in the domain) is one inbox, so it draws on one allowance; an address the
    service would refuse draws on the allowance of its own text.
    """
    try:
        inbox = games.clean_email(address.strip())
    except games.InvalidGame:
        inbox = address.strip().lower()
    if not limiter.limiter.hit(ALLOWANCES[allowance], "lobby", allowance, inbox):
        abort(429)
