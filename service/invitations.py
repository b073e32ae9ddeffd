"""Games started from the public page: the creator confirms their address, then the
opponent accepts or declines; only then does the game start.

An address that declined an invitation or stopped notifications is not
invited again through this flow.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from flask import current_app
from flask_babel import gettext
from itsdangerous import BadSignature, URLSafeSerializer

from . import games
from .mail import compose, queue
from .models import Address, Game, Invitation, db, utcnow

SALT = "splitmind.invitation"
STAGES = {"confirm": "unconfirmed", "respond": "invited"}


class InvitationError(ValueError):
    """An invitation that cannot go ahead; the message says why, in the page's language."""


@dataclass(frozen=True)
class Request:
    """What the new-game form asks for."""

    name: str
    email: str
    opponent_name: str
    opponent_email: str
    role: str  # keeper, shadow or random
    match: bool
    days_per_move: int | None
    look: str = "standard"
    language: str | None = None


def _serializer() -> URLSafeSerializer:
    return URLSafeSerializer(current_app.config["SECRET_KEY"], salt=SALT)


def token(invitation: Invitation, stage: str) -> str:
    """The signed token of an invitation's link for one stage: ``confirm`` or ``respond``."""
    return _serializer().dumps([invitation.id, invitation.key, stage])


def url(invitation: Invitation, stage: str) -> str:
    """The full link for a stage of the invitation."""
    return f"{current_app.config['BASE_URL']}/invitations/{token(invitation, stage)}"


def from_token(value: str) -> tuple[Invitation, str] | None:
    """The invitation and stage a token stands for, or ``None`` for a bad link."""
    try:
        payload = _serializer().loads(value)
    except BadSignature:
        return None
    if not (isinstance(payload, list) and len(payload) == 3 and payload[2] in STAGES):
        return None
    invitation = db.session.get(Invitation, payload[0]) if isinstance(payload[0], int) else None
    if invitation is None or not secrets.compare_digest(invitation.key, str(payload[1])):
        return None
    return invitation, payload[2]


def blocked(email: str) -> bool:
    """Whether an address declined an invitation or stopped notifications before."""
    address = db.session.get(Address, email)
    return address is not None and (address.declined_at or address.unsubscribed_at) is not None


def request_game(request: Request) -> Invitation:
    """Record the request and ask the creator to confirm their address."""
    creator = games.clean_email(request.email)
    opponent = games.clean_email(request.opponent_email)
    if creator == opponent:
        raise InvitationError(gettext("You and your opponent need two different email addresses."))
    if request.role not in ("keeper", "shadow", "random"):
        raise InvitationError(gettext("Choose Keeper, Shadow or random."))
    if blocked(opponent):
        raise InvitationError(
            gettext(
                "This address has asked not to receive invitations; ask your opponent directly."
            )
        )
    role = request.role if request.role != "random" else secrets.choice(("keeper", "shadow"))
    seats = {
        role: games.Seating(creator, request.name, request.language),
        "shadow" if role == "keeper" else "keeper": games.Seating(opponent, request.opponent_name),
    }
    start = games.create_match if request.match else games.create_game
    game = start(
        seats["keeper"],
        seats["shadow"],
        look=request.look,
        days_per_move=request.days_per_move or 0,
        waiting=True,
        commit=False,
    )
    invitation = Invitation(
        game_id=game.id,
        creator_email=creator,
        creator_name=games.clean_name(request.name, creator.split("@")[0]),
        opponent_email=opponent,
        opponent_name=games.clean_name(request.opponent_name, opponent.split("@")[0]),
        creator_role=role,
        match=request.match,
        days_per_move=request.days_per_move,
        look=request.look,
        language=request.language,
        key=secrets.token_urlsafe(32),
    )
    db.session.add(invitation)
    db.session.flush()
    _email(invitation, "confirm_address", invitation.creator_email, url=url(invitation, "confirm"))
    db.session.commit()
    return invitation


def confirm(invitation: Invitation) -> None:
    """The creator confirmed their address: invite the opponent."""
    if invitation.status != "unconfirmed" or _withdrawn(invitation):
        return  # confirming twice changes nothing
    invitation.status = "invited"
    invitation.updated_at = utcnow()
    _address(invitation.creator_email).confirmed_at = utcnow()
    if blocked(invitation.opponent_email):
        invitation.status = "declined"
        games.drop_waiting_game(invitation.game_id, "the opponent does not take invitations")
    else:
        _email(
            invitation,
            "invite_opponent",
            invitation.opponent_email,
            url=url(invitation, "respond"),
        )
    db.session.commit()


def respond(invitation: Invitation, accept: bool) -> Game | None:
    """The opponent accepted (the game starts) or declined (the creator is told)."""
    if invitation.status != "invited" or _withdrawn(invitation):
        return db.session.get(Game, invitation.game_id) if invitation.game_id else None
    invitation.updated_at = utcnow()
    if not accept:
        invitation.status = "declined"
        _address(invitation.opponent_email).declined_at = utcnow()
        games.drop_waiting_game(invitation.game_id, "the opponent declined")
        _email(invitation, "declined", invitation.creator_email)
        db.session.commit()
        return None
    game = games.start_waiting_game(invitation.game_id, commit=False)
    invitation.status = "accepted"
    _address(invitation.opponent_email).confirmed_at = utcnow()
    db.session.commit()
    return game


def _withdrawn(invitation: Invitation) -> bool:
    """Whether an admin cancelled the waiting game: the invitation is then closed."""
    game = db.session.get(Game, invitation.game_id)
    if game is not None and game.status != "waiting" and invitation.status != "accepted":
        invitation.status = "closed"
        db.session.commit()
        return True
    return False


def _address(email: str) -> Address:
    address = db.session.get(Address, email)
    if address is None:
        address = Address(email=email)
        db.session.add(address)
    return address


def _email(invitation: Invitation, template: str, recipient: str, **context: Any) -> None:
    """Queue one email of the invitation, in the creator's language.

    The opponent has chosen no language yet: the creator's is the best guess, as
    people mostly invite someone who reads the language they write in.
    """
    queue(
        compose.render(template, invitation.language, invitation=invitation, **context),
        kind=template,
        recipient=recipient,
    )
