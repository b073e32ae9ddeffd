"""Signed player links: ``/play/<token>``, and each address's home link, ``/me/<token>``.

A token signs the player's id and the player's ``link_key``, a random value of
256 bits kept in the database. The signature stops forgery; the key lets a
link be rotated (a new key) or revoked (no key) without touching the others.

A home link signs an address and its ``home_key`` (:class:`AddressSettings`),
a random value given when the address first takes a seat
(:func:`service.addresses.give_home_key`):
a page can show the link without writing anything, replacing the key kills
every copy of the old link, and the secret key alone forges no home link (it
would open the address's games). An address with no key has no home link.

Every signed token of the service (player, invitation and unsubscribe links)
comes from :func:`serializer`, so all of them survive a change of ``SECRET_KEY``
the same way.
"""

from __future__ import annotations

import hmac
import re
import secrets
from functools import cache, lru_cache
from typing import Any

from flask import current_app
from itsdangerous import BadData, BadSignature, URLSafeSerializer
from itsdangerous.encoding import base64_decode, base64_encode
from sqlalchemy.orm import joinedload
from sqlalchemy.orm.interfaces import ORMOption

from .models import AddressSettings, Game, Player, db, is_row_id

SALT = "splitmind.play-link"
HOME_SALT = "splitmind.home-link"
# Paths whose next segment is a signed token, a credential: a player's link and
# its JSON twin, a home page, an invitation, a rematch, an unsubscribe link and the link that
# confirms a move to another address. Logs redact them and their pages are never cached.
TOKEN_PATHS = (
    "/api/play/",
    "/play/",
    "/me/",
    "/invitations/",
    "/rematch/",
    "/unsubscribe/",
    "/moving/",
)
# A token as URLSafeSerializer writes one: its payload (after a dot when compressed), a dot
# and its signature, in the URL-safe base64 alphabet without padding.
TOKEN_SPELLING = re.compile(r"\.?[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")


def new_link_key() -> str:
    """A fresh random link key (256 bits)."""
    return secrets.token_urlsafe(32)


def serializer(salt: str) -> Serializer:
    """The signer of one kind of token: it signs with ``SECRET_KEY`` only and also
    accepts the keys in ``SECRET_KEY_FALLBACKS``.

    After a leak the key is changed and the old one kept as a fallback for a
    while, so the links already emailed keep working (itsdangerous signs with
    the last key of the list and verifies with every one).
    """
    return _serializer(signing_keys(), salt)


def signing_keys() -> tuple[str, ...]:
    """The keys tokens are checked with: ``SECRET_KEY_FALLBACKS``, then ``SECRET_KEY``."""
    config = current_app.config
    return (*config["SECRET_KEY_FALLBACKS"], config["SECRET_KEY"])


class Serializer(URLSafeSerializer):
    """itsdangerous's URL-safe serializer, taking a token only as it writes one.

    itsdangerous decodes a signature leniently: it drops characters outside the
    alphabet, and the last character of a signature has spellings that decode to
    the same bytes. One link would then have many spellings, each a page of its own
    to the kept-page cache, with a stranger's characters echoed into the page.
    """

    def loads(self, s: str | bytes, salt: str | bytes | None = None, **kwargs: Any) -> Any:
        """The payload of a token spelled as :meth:`dumps` spells it; else :class:`BadSignature`."""
        token = s if isinstance(s, str) else s.decode("ascii", "replace")
        if not _well_spelled(token):
            raise BadSignature("the token is not spelled as the service writes it")
        return super().loads(s, salt, **kwargs)


def _well_spelled(token: str) -> bool:
    """Whether ``token`` is in the alphabet, and its signature in the one spelling of its bytes."""
    if not TOKEN_SPELLING.fullmatch(token):
        return False
    signature = token.rpartition(".")[2]
    try:
        return base64_encode(base64_decode(signature)) == signature.encode()
    except BadData:  # a length no base64 has
        return False


@lru_cache(maxsize=64)
def _serializer(keys: tuple[str, ...], salt: str) -> Serializer:
    """One serializer per keys and salt, made once: making one costs as much as checking
    a token with it."""
    return Serializer(list(keys), salt=salt)


def token_for(player: Player) -> str:
    """The token in the player's link; the player must have a live link key."""
    if player.link_key is None:
        raise ValueError("the player's link is revoked")
    return serializer(SALT).dumps([player.id, player.link_key])


def player_url(player: Player, path: str = "/play/") -> str:
    """The player's full link, built from ``BASE_URL`` (never from the request)."""
    return f"{current_app.config['BASE_URL']}{path}{token_for(player)}"


# The longest a player's token may be: a hundred characters today, five times that for ids
# of many more digits. A longer one is no token of ours, and is not checked.
MAX_TOKEN = 512


def signed_link(token: str) -> tuple[int, str] | None:
    """The player id and link key a token signs, or ``None`` for a tampered token.

    Whether the key is still the player's is for the database to say
    (:func:`key_matches`).
    """
    if len(token) > MAX_TOKEN:
        return None
    return _signed_link(signing_keys(), token)


@lru_cache(maxsize=1024)
def _signed_link(keys: tuple[str, ...], token: str) -> tuple[int, str] | None:
    """:func:`signed_link`, the signature checked once per token and keys: a player's page,
    its polls and its moves send the same token again and again, and checking it is
    some 130 function calls, a fourteenth of a poll's. What a token signs depends on
    the token and the keys alone; whether the link is still the player's is read from
    the database each time. A token is kept whether it was good or not: at most a
    URL's length for each of 1,024 tokens."""
    try:
        payload = _serializer(keys, SALT).loads(token)
    except BadSignature:
        return None
    if not (
        isinstance(payload, list)
        and len(payload) == 2
        and isinstance(payload[0], int)
        and not isinstance(payload[0], bool)
        and is_row_id(payload[0])
        and isinstance(payload[1], str)
    ):
        return None
    return payload[0], payload[1]


def key_matches(stored: str | None, signed: str) -> bool:
    """Whether a player's stored link key is the one a token signs (never, once revoked)."""
    return stored is not None and hmac.compare_digest(stored.encode(), signed.encode())


def player_for(token: str) -> Player | None:
    """The player a token belongs to, or ``None`` for a tampered, unknown or revoked link."""
    signed = signed_link(token)
    return None if signed is None else linked_player(signed)


def linked_player(signed: tuple[int, str]) -> Player | None:
    """The player of a :func:`signed_link`, or ``None`` for an unknown or revoked link."""
    # The player, their game and both seats in one query: every page and API answer needs them.
    player = db.session.get(Player, signed[0], options=_with_game_and_seats())
    if player is None or not key_matches(player.link_key, signed[1]):
        return None
    return player


@cache
def _with_game_and_seats() -> tuple[ORMOption, ...]:
    """The loader options of :func:`linked_player`, built once: building them costs a tenth
    of the read."""
    return (joinedload(Player.game).joinedload(Game.players),)


def home_token(email: str) -> str | None:
    """The token in an address's home link (the address as the service stores it); ``None``
    for an address that has no home link."""
    settings = db.session.get(AddressSettings, email)
    if settings is None or not settings.home_key:
        return None
    return signed_home(email, settings.home_key)


def signed_home(email: str, home_key: str) -> str:
    """The home link's token of ``email`` whose ``AddressSettings.home_key`` is ``home_key``."""
    return serializer(HOME_SALT).dumps([email, home_key])


def home_url(email: str) -> str | None:
    """An address's full home link, built from ``BASE_URL``; ``None`` if it has none."""
    token = home_token(email)
    return f"{current_app.config['BASE_URL']}/me/{token}" if token else None


def address_for(token: str) -> str | None:
    """The address a home token belongs to, or ``None`` for a tampered or replaced link."""
    try:
        payload = serializer(HOME_SALT).loads(token)
    except BadSignature:
        return None
    if not (
        isinstance(payload, list)
        and len(payload) == 2
        and all(isinstance(part, str) for part in payload)
    ):
        return None
    email, key = payload
    settings = db.session.get(AddressSettings, email)
    if settings is None or not settings.home_key:
        return None
    if not hmac.compare_digest(settings.home_key.encode(), key.encode()):
        return None
    return email
