"""What the service keeps of an email address, for its owner who asks (an access request).

:func:`kept_of` reads it all into one JSON document; :func:`export_address`
does that at an operator's hand (``flask games export-address``, or the
dashboard's address page) and writes it in the audit trail. It reads what
:mod:`service.erasure` erases: the address's record (confirmed, declined,
stopped, bounced), its settings, its games with their seats and results, its
invitations, the emails sent to it, the replies read from it, and the audit
trail's entries that name it.

Left out, each for a reason:

- Any credential: the address's home link and each seat's link (the file is
  written for its owner but passes through an operator's hands and mailbox;
  it says whether each link is live), and an invitation's key.
- The emails' bodies: each holds live links, and a game's email its hand; the
  owner has them in their mailbox. Their subjects, kinds and times are here,
  a subject that names a card of a game in play withheld, as the mail list
  withholds it.
- A game's cards: its hands, the cards set aside and given in exchanges, its
  deal. Of a game still waiting or in play, the notes its player wrote too:
  the dashboard withholds them (an operator may be a player, or a player's
  friend), and the player reads them on their own page. Each game gives its
  seats, its status, its rounds and its result.
- Another person's address: an invitation names the other person by the name
  it gave, as the players' pages do.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import or_, select

from .. import audit
from ..erasure import notes_naming, owned_address
from ..game_text import player_name
from ..models import (
    OPEN_STATUSES,
    Address,
    AddressSettings,
    AdminAction,
    Event,
    Game,
    InboundReply,
    Invitation,
    OutboxMessage,
    Player,
    db,
    utcnow,
)
from ..perspective import iso
from .listing import Subjects

# The audit trail's word for an export.
EXPORT_ADDRESS = "export_address"


def kept_of(address: str) -> dict[str, Any]:
    """Everything the service keeps of ``address``, as one JSON-ready document (reads only).

    Its lists are empty, and ``record`` and ``settings`` ``None``, for an address never
    seen; text that is no address, and :data:`~service.erasure.ERASED_ADDRESS`, which holds
    the seats of every erased address, are refused (``ValueError``:
    :func:`~service.erasure.owned_address`).
    """
    email = owned_address(address)
    seats = list(
        db.session.scalars(select(Player).join(Game).where(Player.email == email).order_by(Game.id))
    )
    return {
        "address": email,
        "exported_at": iso(utcnow()),
        "record": _record(email),
        "settings": _settings(email),
        "games": [_game(player) for player in seats],
        "invitations": _invitations(email),
        "emails": _emails(email, [player.id for player in seats]),
        "replies": _replies(seats),
        "audit": _audit(email),
    }


def export_address(address: str, actor: str) -> dict[str, Any]:
    """:func:`kept_of` ``address``, written in the audit trail as ``actor``'s (caller's
    transaction): the entry names the address, which the log line of it does not
    (:func:`service.audit.record`), and which an erasure takes out of it."""
    kept = kept_of(address)
    audit.record(
        actor,
        EXPORT_ADDRESS,
        f"exported what is kept of {kept['address']}: {len(kept['games'])} game(s), "
        f"{len(kept['invitations'])} invitation(s), {len(kept['emails'])} email(s)",
    )
    return kept


def is_empty(kept: dict[str, Any]) -> bool:
    """Whether a document of :func:`kept_of` holds nothing of its address."""
    return not any(value for key, value in kept.items() if key not in ("address", "exported_at"))


def _record(email: str) -> dict[str, Any] | None:
    found = db.session.get(Address, email)
    if found is None:
        return None
    return {
        "confirmed_at": iso(found.confirmed_at),
        "declined_at": iso(found.declined_at),
        "emails_stopped_at": iso(found.unsubscribed_at),
        "bounce_code": found.bounce_code,
        "bounce_reply": found.bounce_reply,
        "bounced_at": iso(found.bounced_at),
    }


def _settings(email: str) -> dict[str, Any] | None:
    found = db.session.get(AddressSettings, email)
    if found is None:
        return None
    return {
        "home_link": found.home_key is not None,
        "email_policy": found.email_policy,
        "digest_hour": found.digest_hour,
        "last_digest_at": iso(found.last_digest_at),
        "language": found.language,
        "time_zone": found.time_zone,
        "vacation_until": iso(found.vacation_until),
        "vacation_year": found.vacation_year,
        "vacation_days_used": found.vacation_days_used,
    }


def _game(player: Player) -> dict[str, Any]:
    """A seat of the address and its game: no card, and while the game is live no note."""
    game = player.game
    opponent = next(other for other in game.players if other.seat != player.seat)
    won = None if game.winner is None else game.winner == player.seat
    entry = {
        "game": game.id,
        "status": game.status,
        "seat": player.seat,
        "name": player.name,
        "opponent": player_name(opponent),
        "look": game.look,
        "days_per_move": game.days_per_move,
        "return_match": game.match_id is not None,
        "created_at": iso(game.created_at),
        "started_at": iso(game.started_at),
        "finished_at": iso(game.finished_at),
        "result": None if won is None else "won" if won else "lost",
        "track": game.state["track"],
        "rounds": game.state["rounds"],
        "link_live": player.link_key is not None,
        "emails": player.notify,
        "language": player.language,
        "last_seen_at": iso(player.seen_at),
    }
    if game.status not in OPEN_STATUSES:
        entry["notes"] = [
            {"at": iso(event.created_at), "note": event.note}
            for event in db.session.scalars(
                select(Event)
                .where(
                    Event.game_id == game.id,
                    Event.seat == player.seat,
                    Event.kind == "move",
                    Event.note.is_not(None),
                )
                .order_by(Event.id)
            )
        ]
    return entry


def _invitations(email: str) -> list[dict[str, Any]]:
    found = db.session.scalars(
        select(Invitation)
        .where(or_(Invitation.creator_email == email, Invitation.opponent_email == email))
        .order_by(Invitation.id)
    )
    listed = []
    for invitation in found:
        asked = invitation.creator_email == email
        listed.append(
            {
                "invitation": invitation.id,
                "status": invitation.status,
                "asked_by_this_address": asked,
                "name": invitation.creator_name if asked else invitation.opponent_name,
                "other_name": invitation.opponent_name if asked else invitation.creator_name,
                "game": invitation.game_id,
                "follows_game": invitation.follows_game_id,
                "return_match": invitation.match,
                "days_per_move": invitation.days_per_move,
                "look": invitation.look,
                "language": invitation.language,
                "created_at": iso(invitation.created_at),
                "updated_at": iso(invitation.updated_at),
            }
        )
    return listed


def _emails(email: str, seat_ids: list[int]) -> list[dict[str, Any]]:
    """The emails to the address (its own, or its seats'): no body, and a subject that names
    a card of a live game withheld (:class:`~service.admin.listing.Subjects`)."""
    subject = Subjects()
    found = db.session.scalars(
        select(OutboxMessage)
        .where(or_(OutboxMessage.recipient == email, OutboxMessage.player_id.in_(seat_ids)))
        .order_by(OutboxMessage.id)
    )
    return [
        {
            "email": message.id,
            "kind": message.kind,
            "status": message.status,
            "subject": subject(message),
            "game": message.game_id,
            "queued_at": iso(message.created_at),
            "sent_at": iso(message.sent_at),
            "failed_at": iso(message.failed_at),
            "error": message.last_error,
        }
        for message in found
    ]


def _replies(seats: list[Player]) -> list[dict[str, Any]]:
    games = {player.id: player.game_id for player in seats}
    found = db.session.scalars(
        select(InboundReply)
        .where(InboundReply.player_id.in_(games))
        .order_by(InboundReply.received_at, InboundReply.id)
    )
    return [
        {
            "game": games[reply.player_id],
            "message_id": reply.message_id,
            "received_at": iso(reply.received_at),
            "outcome": reply.outcome,
            "reason": reply.reason,
            "answered": reply.answered,
        }
        for reply in found
    ]


def _audit(email: str) -> list[dict[str, Any]]:
    """The audit trail's entries whose note names the address (as :mod:`service.erasure` finds
    them)."""
    naming = [row_id for row_id, _, _ in notes_naming(AdminAction, email)]
    found = db.session.scalars(
        select(AdminAction).where(AdminAction.id.in_(naming)).order_by(AdminAction.id)
    )
    return [
        {
            "at": iso(entry.created_at),
            "admin": entry.admin,
            "action": entry.action,
            "game": entry.game_id,
            "note": entry.note,
        }
        for entry in found
    ]
