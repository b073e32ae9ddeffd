"""The signed tag in a reply address: ``play+<tag>@example.org``.

A tag names the player and the game's version when the email was written,
signed with ``SECRET_KEY`` (or one of ``SECRET_KEY_FALLBACKS``) over those and
the player's ``link_key``: like the link, it is the player's credential, and a
rotated or revoked link kills every tag given out before. The version lets a
reply to an older email be told from one to the newest.

Mail systems may change the case of an address, so the tag is written in lower
case letters and digits (base 32 of a truncated HMAC-SHA256), short enough for
the 64 characters a local part may hold.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

from flask import current_app
from itsdangerous import Signer

from ..models import Player, db, is_row_id

SALT = "splitmind.reply-tag"
# 130 bits of the HMAC: as hard to forge as a link, and short enough for an address.
SIGNATURE_BYTES = 16
TAG = re.compile(r"^(\d{1,12})\.(\d{1,9})\.([a-z2-7]{26})$")
# A tag where it stands in a reply address, in any case.
TAG_IN_ADDRESS = re.compile(r"\+\d{1,12}\.\d{1,9}\.[a-z2-7]{26}@", re.IGNORECASE)


def _signature(key: str, value: str) -> str:
    signer = Signer(key, salt=SALT, key_derivation="hmac", digest_method=hashlib.sha256)
    digest = hmac.new(signer.derive_key(), value.encode(), hashlib.sha256).digest()
    return base64.b32encode(digest[:SIGNATURE_BYTES]).decode().rstrip("=").lower()


def _signed(player_id: int, version: int, link_key: str) -> str:
    return f"{player_id}.{version}.{link_key}"


def tag_for(player: Player, version: int) -> str:
    """The tag of ``player``'s reply address for the game at ``version``; the link must be live."""
    if player.link_key is None:
        raise ValueError("the player's link is revoked")
    value = _signed(player.id, version, player.link_key)
    return f"{player.id}.{version}.{_signature(current_app.config['SECRET_KEY'], value)}"


def read_tag(tag: str) -> tuple[Player, int] | None:
    """The player and game version a tag was given for; ``None`` if tampered, rotated or unknown."""
    found = TAG.match(tag.lower())
    if found is None:
        return None
    player_id, version, signature = int(found[1]), int(found[2]), found[3]
    if not is_row_id(player_id):
        return None
    player = db.session.get(Player, player_id)
    if player is None or player.link_key is None:
        return None
    value = _signed(player_id, version, player.link_key)
    config = current_app.config
    for key in (config["SECRET_KEY"], *config["SECRET_KEY_FALLBACKS"]):
        if hmac.compare_digest(_signature(key, value), signature):
            return player, version
    return None


def reply_address(player: Player, version: int) -> str | None:
    """The address a reply from ``player`` goes to, or ``None`` without ``REPLY_ADDRESS``."""
    base = current_app.config["REPLY_ADDRESS"]
    if not base or player.link_key is None:
        return None
    local, _, domain = base.rpartition("@")
    return f"{local}+{tag_for(player, version)}@{domain}"


def tag_in(address: str) -> str | None:
    """The tag of an address at ``REPLY_ADDRESS`` (``play+<tag>@example.org``), if it is one."""
    base = current_app.config["REPLY_ADDRESS"]
    if not base:
        return None
    local, _, domain = base.rpartition("@")
    mailbox, _, their_domain = address.strip().strip("<>").rpartition("@")
    name, plus, tag = mailbox.partition("+")
    if not plus or name.lower() != local.lower() or their_domain.lower() != domain:
        return None
    return tag
