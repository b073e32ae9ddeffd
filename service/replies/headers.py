"""The headers that thread a game's emails and let a player answer one with a move.

Every email of a game to a player refers to the player's first email of it
(``References``, ``In-Reply-To``), whose Message-ID is fixed by the game and
the seat (:func:`root_message_id`): a game reads as one conversation in the
player's mail client. An email written while the player owes a move replies to
their own tagged address (:func:`.tags.reply_address`), worked out when the
email is written, that is when it is sent: the tag holds the link and the
version of then, like the rest of the email. ``Auto-Submitted`` is on every
email the service sends (:mod:`service.mail.outbox`).
"""

from __future__ import annotations

import re

from ..mail.outbox import message_domain
from ..models import Player, utcnow
from ..rules import to_act
from .tags import reply_address

# A Message-ID fit for a header: printable ASCII, no space, something @ something in <>.
MESSAGE_ID = re.compile(r"<[!-~]+@[!-~]+>")
# As long as the column that keeps a reply's Message-ID.
MAX_MESSAGE_ID = 255


def plain_message_id(text: str) -> str | None:
    """``text`` if it is a Message-ID of plain shape, else ``None``.

    A reply's Message-ID is the sender's text, and goes into the headers of the
    answer: decoded from an encoded word it may hold a line break, which would
    end the header and start one of the sender's choosing.
    """
    if len(text) <= MAX_MESSAGE_ID and MESSAGE_ID.fullmatch(text):
        return text
    return None


def root_message_id(player: Player) -> str:
    """The Message-ID of the player's first email of the game (the invitation to it)."""
    game = player.game
    stamp = int(game.created_at.timestamp()) if game.created_at else 0
    return f"<game{game.id}.{player.seat}.{stamp}@{message_domain()}>"


def owes_a_move(player: Player) -> bool:
    """Whether the player owes a move in a game in play now, its deadline not passed (once
    it has, the sweep ends the game by timeout, and a move is refused)."""
    game = player.game
    owed = game.status == "active" and player.seat in to_act(game.state)
    return owed and (game.deadline is None or game.deadline > utcnow())


def game_headers(player: Player, parent: str | None = None, first: bool = False) -> dict[str, str]:
    """The headers that thread an email about the player's game with their others.

    ``parent`` is the Message-ID of the player's message the email answers, if
    any and of plain shape (:func:`plain_message_id`); the ``first`` email is
    the thread's root and refers to none. The ``Reply-To`` comes when the email
    is written (:func:`reply_to`).
    """
    if first:
        return {}
    root = root_message_id(player)
    parent = plain_message_id(parent) if parent else None
    return {"References": f"{root} {parent}" if parent else root, "In-Reply-To": parent or root}


def reply_to(player: Player) -> str | None:
    """Where the player's reply to an email written now goes: their tagged address, for the
    game's version now, while they owe a move; else ``None`` (no ``Reply-To``)."""
    return reply_address(player, player.game.version) if owes_a_move(player) else None
