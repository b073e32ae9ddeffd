"""Whether a rematch may follow a game, and why not: one rule for the game's page, the home
page, the rematch page and the emails that end a game, which offer the rematch's link only
when one may follow.

An address takes no invitation once it declined one or stopped the emails of a game
(:mod:`service.invitations`), and a rematch is an invitation: one to such an address is
offered, asked for and made all the same, and the mail worker drops its email, as for
any invitation. Nothing here looks at the opponent's address, so no page, button or email
tells one player what the other stopped.
"""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import or_, select

from .addresses import with_inbox
from .game_text import holds_an_address, poses_as_computer
from .language import gettext
from .models import Address, Player, db
from .rules import Seat, other


def blocked(email: str) -> bool:
    """Whether an address, or the inbox it reaches (:func:`inbox`: ``bob+x@`` reaches
    ``bob@``), declined an invitation or stopped notifications before."""
    return bool(blocked_among({email}))


def blocked_among(emails: Collection[str]) -> set[str]:
    """Which of ``emails`` are :func:`blocked`, in one statement."""
    if not emails:
        return set()
    reaching = {email: set(with_inbox(email)) for email in emails}
    stopped = set(
        db.session.scalars(
            select(Address.email).where(
                Address.email.in_(set().union(*reaching.values())),
                or_(Address.declined_at.is_not(None), Address.unsubscribed_at.is_not(None)),
            )
        )
    )
    return {email for email, addresses in reaching.items() if addresses & stopped}


def seat_in_rematch(player: Player) -> Seat:
    """The seat the player takes in the game that follows theirs as its rematch: the other
    one. After a return match, the other of their seat in its first game: whoever opened
    the match as the Keeper, and so played its second game as the Shadow who knew the
    score to beat, opens the next one as the Shadow, whichever game it is asked from."""
    return player.seat if player.game.match_game == 2 else other(player.seat)


def rematch_refusal(player: Player) -> str | None:
    """Why no rematch can follow the player's game, in the page's language; ``None`` if one can."""
    return _refusal(player)


def rematch_refusals(players: Collection[Player]) -> dict[int, str | None]:
    """:func:`rematch_refusal` for each of ``players``, by player id."""
    return {player.id: _refusal(player) for player in players}


def _refusal(player: Player) -> str | None:
    """Why no rematch can follow the player's game. Whether the opponent's address takes
    invitations is not a reason: the rematch is asked for, and its email dropped."""
    game = player.game
    if game.status == "waiting":
        return gettext("Game %(id)s has not started yet.", id=game.id)
    if game.status == "active":
        return gettext("Game %(id)s is still in play: finish it first.", id=game.id)
    if game.second_game_follows:
        second = game.match.game(2) if game.match is not None else None
        if second is not None and second.status == "cancelled":
            return gettext(
                "Game %(id)s is the first game of a return match whose second game, game "
                "%(second)s, was cancelled: it has no rematch.",
                id=game.id,
                second=second.id,
            )
        if second is not None:
            return gettext(
                "Game %(id)s is the first game of a return match: ask for a rematch from its "
                "second game, game %(second)s.",
                id=game.id,
                second=second.id,
            )
        return gettext(
            "Game %(id)s is the first game of a return match: the second game follows it.",
            id=game.id,
        )
    if game.status == "cancelled":
        return gettext("Game %(id)s was cancelled: it has no rematch.", id=game.id)
    # A name given before such names were refused: a rematch would copy it.
    for person in game.players:
        if not person.is_computer and poses_as_computer(person.name):
            return gettext(
                "“%(name)s” is how this service names the computer, so no rematch copies it: "
                "start a new game under another name.",
                name=person.name,
            )
        if not person.is_computer and holds_an_address(person.name):
            return gettext(
                "The name “%(name)s” holds a web or email address, so no rematch copies it: "
                "start a new game under another name.",
                name=person.name,
            )
    return None
