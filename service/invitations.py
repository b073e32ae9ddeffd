"""Games started from the public page or asked for as a rematch: the creator
confirms their address (a rematch's requester already has, through their game
link, and a creator who asks from their home page, through its link), then the
opponent accepts or declines; only then does the game start.

An address that declined an invitation or stopped notifications is not
invited again through this flow, nor asked to confirm itself as a creator:
the mail worker drops those emails, so the pages answer and work the same
either way and tell no one about the address. Every answer to an invitation is taken under
a row lock on its waiting game, so a double click or two answers at the same
instant act once; the public page's form sent twice makes one game
(:func:`take_request`).

These functions flush and log what they did; the lobby's routes own the
transaction (:func:`service.unit_of_work.transaction`), which holds that lock
until it commits.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import secrets
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta

from flask import current_app
from itsdangerous import BadSignature
from sqlalchemy import ColumnElement, Exists, SQLColumnExpression, delete, exists, select, update
from sqlalchemy.orm import aliased

from . import addresses, games, links, notify
from .addresses import (
    address_row,
    emails_language,
    inbox,
    lock_address,
    lock_settings,
    settings_row,
    time_zone,
    with_inbox,
)
from .language import gettext, language_code
from .mail import compose, kinds, to_go
from .mail.compose import Email
from .mail.kinds import Kind
from .models import (
    OPEN_INVITATIONS,
    OPEN_STATUSES,
    Address,
    AddressSettings,
    AdminAction,
    Event,
    Game,
    Invitation,
    OutboxMessage,
    Player,
    db,
    utcnow,
)
from .perspective import match_summary
from .rematch_rules import blocked, blocked_among, rematch_refusal, seat_in_rematch
from .rules import SEATS, Seat, other
from .rules.names import is_seat

log = logging.getLogger(__name__)

SALT = "splitmind.invitation"
STAGES = {"confirm": "unconfirmed", "respond": "invited"}
# How long the public page's form sent again, before its creator answered the first one's
# email (or, sent from their home page, before the opponent answered the invitation), is
# taken for the same form sent twice (a double click, a resend after a slow answer) rather
# than for another game.
REPEAT_WINDOW = timedelta(minutes=10)


class InvitationError(ValueError):
    """An invitation that cannot go ahead; the message says why, in the page's language."""


@dataclass(frozen=True)
class Request:
    """What the new-game form asks for: a game against a person, or, with ``computer`` (a
    level), against the computer, with no opponent's name or address. ``proven``: sent from
    the creator's home page, whose link proves the address is theirs, so it needs no
    confirming."""

    name: str
    email: str
    opponent_name: str
    opponent_email: str
    role: str  # keeper, shadow or random
    match: bool
    days_per_move: int | None
    look: str = "standard"
    language: str | None = None
    computer: str | None = None
    proven: bool = False


def token(invitation: Invitation, stage: str) -> str:
    """The signed token of an invitation's link for one stage: ``confirm`` or ``respond``."""
    return links.serializer(SALT).dumps([invitation.id, invitation.key, stage])


def url(invitation: Invitation, stage: str) -> str:
    """The full link for a stage of the invitation."""
    return f"{current_app.config['BASE_URL']}/invitations/{token(invitation, stage)}"


def from_token(value: str) -> tuple[Invitation, str] | None:
    """The invitation and stage a token stands for, or ``None`` for a bad link."""
    try:
        payload = links.serializer(SALT).loads(value)
    except BadSignature:
        return None
    if not (isinstance(payload, list) and len(payload) == 3 and payload[2] in STAGES):
        return None
    invitation = db.session.get(Invitation, payload[0]) if isinstance(payload[0], int) else None
    if invitation is None or not secrets.compare_digest(invitation.key, str(payload[1])):
        return None
    return invitation, payload[2]


@dataclass(frozen=True)
class Taken:
    """A request taken: the game it asked for, and whether this request made it (and so
    emailed someone) or found it made by the same request sent before."""

    game: Game
    made: bool


def take_request(request: Request) -> Taken:
    """Take a request of the public page: ask for the game against a person
    (:func:`request_game`) or start the one against the computer (:func:`play_computer`).

    The same request made again within :data:`REPEAT_WINDOW`, while its
    creator has not answered the first one's email (confirmed their address,
    or made a move against the computer), is the same form sent twice: it makes
    nothing and emails no one, and the page answers as it did the first time.
    So is a request from the creator's home page made again while its
    invitation waits for the opponent. A creator's requests are taken one at a
    time, under a lock on their address's row, so two sent at the same instant
    make one game.
    """
    key = _request_key(request)
    lock_address(games.clean_email(request.email))
    earlier = _unanswered(key, request.proven)
    if earlier is not None:
        log.info("game %d asked for again before its creator answered: nothing sent", earlier.id)
        return Taken(earlier, made=False)
    if request.computer is None:
        invitation = request_game(request)
        assert invitation.game_id is not None  # every invitation is made with its game
        return Taken(db.session.get_one(Game, invitation.game_id), made=True)
    return Taken(play_computer(request), made=True)


def _request_key(request: Request) -> str:
    """A digest of everything the request asks for, its addresses as the service keeps them:
    two requests with one digest ask for the same game."""
    asked = dataclasses.asdict(request)
    asked["email"] = games.clean_email(request.email)
    if request.computer is None:
        asked["opponent_email"] = games.clean_email(request.opponent_email)
    return hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()


def _unanswered(key: str, proven: bool) -> Game | None:
    """The game a request with this digest made within :data:`REPEAT_WINDOW`, if its creator
    has not answered its email yet: not confirmed their address, not moved. For a request
    from the creator's home page (``proven``), whose invitation needs no confirming: if the
    opponent has not answered it."""
    game = db.session.scalars(
        select(Game)
        .where(Game.request_key == key, Game.created_at >= utcnow() - REPEAT_WINDOW)
        .order_by(Game.id.desc())
        .limit(1)
    ).first()
    if game is None:
        return None
    people = [player for player in game.players if not player.is_computer]
    if len(people) == 1:  # against the computer: it started at once
        answered = game.status != "active" or game.has_moved(people[0].seat)
    else:
        confirm = select(Invitation.status).where(Invitation.game_id == game.id)
        waiting_for = "invited" if proven else "unconfirmed"
        answered = game.status != "waiting" or db.session.scalar(confirm) != waiting_for
    return None if answered else game


def request_game(request: Request) -> Invitation:
    """Record the request and ask the creator to confirm their address; or, for a request
    from their home page, invite the opponent at once (:func:`confirm`).

    Whether the opponent takes invitations is said nowhere: :func:`confirm`
    invites them all the same, and the mail worker drops an email they do not take.
    """
    creator = games.clean_email(request.email)
    opponent = games.clean_email(request.opponent_email)
    if creator == opponent:
        raise InvitationError(gettext("You and your opponent need two different email addresses."))
    role = _creator_role(request.role)
    game = _waiting_game(request, role, games.Seating(opponent, request.opponent_name))
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
    if request.proven:
        confirm(invitation, request.language)
        return invitation
    notify.invitation_email(invitation, "confirm_address", invitation.creator_email, "confirm")
    db.session.flush()
    log.info("invitation %d to game %d: the creator is asked to confirm", invitation.id, game.id)
    return invitation


def _waiting_game(request: Request, role: Seat, opponent: games.Seating) -> Game:
    """The game (or return match) the request asks for, waiting: the creator in ``role``."""
    creator = games.Seating(games.clean_email(request.email), request.name, request.language)
    seats = {role: creator, other(role): opponent}
    start = games.create_match if request.match else games.create_game
    game = start(
        seats["keeper"],
        seats["shadow"],
        look=request.look,
        days_per_move=request.days_per_move or 0,
        waiting=True,
    )
    game.request_key = _request_key(request)
    return game


def _creator_role(role: str) -> Seat:
    """The seat the creator asked for, or one drawn at random."""
    if role == "random":
        return secrets.choice(SEATS)
    if not is_seat(role):
        raise InvitationError(gettext("Choose Keeper, Shadow or random."))
    return role


def play_computer(request: Request) -> Game:
    """Start a game against the computer at once; its creator is emailed their link.

    Nobody is invited, so nothing waits: the one email goes to the address typed
    in, as the first email of a game against a person does (the address to
    confirm), and like that one it goes to no address that declined invitations
    or stopped emails. The page reads the same either way.
    """
    assert request.computer is not None, "a game against the computer needs its level"
    creator = games.clean_email(request.email)
    role = _creator_role(request.role)
    game = _waiting_game(request, role, games.Seating.the_computer(request.computer))
    if request.proven:  # its emails greet the player and remind them as any game's do
        note = "asked for from the player's home page"
        game.events.add(Event(kind=notify.ASKED_FROM_HOME, version=game.version, note=note))
    withheld = blocked(creator)
    game.player(role).notify = not withheld
    db.session.flush()
    games.start_waiting_game(game.id)
    if withheld:
        withhold_emails(game, role)
    log.info(
        "game %d against the computer (%s) started from the public page", game.id, request.computer
    )
    return game


# The events of a seat whose emails a game against the computer withheld from its start, as
# its address took no invitations, and of that seat's emails taken again since.
EMAILS_WITHHELD = "emails_withheld"
EMAILS_TAKEN = "emails_taken"


def withhold_emails(game: Game, seat: Seat) -> None:
    """Record that ``game`` sends the player in ``seat`` no email from its start, as their
    address takes no invitations: not the player's choice, so taking invitations again
    sends them (:func:`withheld_from`)."""
    note = "no email: the address took no invitations"
    game.events.add(Event(kind=EMAILS_WITHHELD, seat=seat, version=game.version, note=note))


def withheld_since_start(player: Player) -> bool:
    """Whether the player's game has withheld their emails from its start and still does,
    whether it is in play or not (:func:`withheld_from` lists those in play)."""
    return bool(
        db.session.scalar(select(exists().where(Player.id == player.id, _still_withheld())))
    )


def _still_withheld() -> ColumnElement[bool]:
    """Of a player's row: its game withheld its emails from its start, and still does (they
    were not taken since, and are off)."""
    withheld = exists().where(
        Event.game_id == Player.game_id, Event.seat == Player.seat, Event.kind == EMAILS_WITHHELD
    )
    taken = exists().where(
        Event.game_id == Player.game_id, Event.seat == Player.seat, Event.kind == EMAILS_TAKEN
    )
    return Player.notify.is_(False) & withheld & ~taken


def withheld_from(email: str) -> list[Player]:
    """The address's seats in games in play whose emails were withheld from their start, as
    the address took no invitations then (:func:`play_computer`), and that still send none:
    not those whose emails it took again since, and then perhaps stopped itself."""
    return _withheld(Player.email == email)


def withheld_reaching(email: str) -> list[Player]:
    """The :func:`withheld_from` seats of every address that reaches the inbox ``email``
    reaches (``bob@`` and ``bob+x@``: :func:`.addresses.inbox`) and takes invitations now:
    a stop of ``bob@`` withheld the emails of a game ``bob+x@`` asked for, and taking
    invitations again at either lifts it for both. Of the spellings of a Gmail inbox
    (``b.o.b@gmail.com``), ``email`` and the inbox's own are the ones looked up."""
    target = inbox(email)
    local, _, domain = target.rpartition("@")
    sub_addresses = Player.email.startswith(f"{local}+", autoescape=True) & Player.email.endswith(
        f"@{domain}", autoescape=True
    )
    seats = _withheld((Player.email == email) | (Player.email == target) | sub_addresses)
    reaching = {player.email for player in seats if player.email and inbox(player.email) == target}
    taking = reaching - blocked_among(reaching)
    return [player for player in seats if player.email in taking]


def _withheld(whose: ColumnElement[bool]) -> list[Player]:
    """The seats :func:`withheld_from` says, of the players ``whose`` picks."""
    return list(
        db.session.scalars(
            select(Player)
            .join(Game)
            .where(whose, Game.status == "active", _still_withheld())
            .order_by(Game.id)
        )
    )


def take_withheld_emails(player: Player) -> None:
    """Send the player the emails of a game that withheld them (:func:`withheld_from`)."""
    player.notify = True
    note = "the address takes the emails the game withheld"
    player.game.events.add(
        Event(kind=EMAILS_TAKEN, seat=player.seat, version=player.game.version, note=note)
    )


def confirm(invitation: Invitation, language: str | None = None) -> bool:
    """The creator confirmed their address: invite the opponent, once however often it is posted.

    ``language`` is the one the creator confirmed in (the page's): it becomes
    their seat's, as :func:`adopt_language` says. Returns whether this
    confirmation queued the opponent's invitation: not for an invitation
    confirmed before, or closed.
    """
    invitation, game = _lock(invitation)
    if _expire_if_due(invitation, game):
        return False
    if invitation.status != "unconfirmed":
        return False  # confirmed before, or closed: nothing to do
    invitation.updated_at = utcnow()
    if game.status != "waiting":  # an admin cancelled it
        invitation.status = "closed"
    else:
        # An address that takes no invitation is invited all the same, and its email dropped
        # by the mail worker: the invitation waits unanswered like any other, so nothing the
        # creator sees tells the address's choice.
        invitation.status = "invited"
        address_row(invitation.creator_email).confirmed_at = utcnow()
        # The opponent's invitation is written in the creator's language, the one they confirmed in.
        invitation.language = (
            adopt_language(game, invitation.creator_email, language) or invitation.language
        )
        notify.invitation_email(invitation, "invite_opponent", invitation.opponent_email, "respond")
    db.session.flush()
    log.info("invitation %d confirmed: %s", invitation.id, invitation.status)
    return invitation.status == "invited"


def respond(
    invitation: Invitation, accept: bool, name: str | None = None, language: str | None = None
) -> Player | None:
    """The opponent accepted (the game starts) or declined (the creator is told).

    Accepting, the opponent may give the name they play under instead of the one
    the creator wrote for them (an empty one keeps it); one that reads as the
    computer's raises :class:`games.ComputerName`, one holding a web or email
    address :class:`games.NameWithAddress`, and nothing changes. The
    ``language`` they accepted in (the page's) becomes their seat's, as
    :func:`adopt_language` says, before the game's first emails are queued; accepting, they
    take the game's emails even if they stopped every email since they were invited.
    Returns the opponent's seat in the game when this answer started it, and
    ``None`` otherwise: a decline, or an answer to an invitation that was
    answered before, withdrawn or closed, or that comes after its time
    (:func:`_expire_if_due`: it expires now).
    """
    invitation, game = _lock(invitation)
    if _expire_if_due(invitation, game):
        if not accept:  # too late to decline this one; the page promised no more, all the same
            _turn_away(invitation.opponent_email)
        return None
    if invitation.status != "invited":
        return None  # answered before, or closed: nothing to do
    chosen = None
    if accept and name is not None:
        chosen = games.person_name(games.clean_name(name, invitation.opponent_name))
    invitation.updated_at = utcnow()
    started = None
    if game.status != "waiting":  # an admin cancelled it
        invitation.status = "closed"
    elif accept:
        # The address's row, then its settings', then its seat: the order in which a stop of
        # its emails or a change on its home page takes them, so that neither waits for the
        # other (:func:`adopt_language`).
        address_row(invitation.opponent_email).confirmed_at = utcnow()
        db.session.flush()
        # Both players' settings, in the addresses' order: the start reads their vacations
        # under these locks (:func:`games.start_waiting_game`).
        lock_settings(player.email for player in game.players)
        adopt_language(game, invitation.opponent_email, language)
        started = next(p for p in game.players if p.email == invitation.opponent_email)
        if chosen is not None:
            started.name = invitation.opponent_name = chosen
        # Accepting is wanting the game's emails, as its page says the link is in them: a stop
        # of every email since the invitation turned this seat off with the address's others.
        started.notify = True
        games.start_waiting_game(game.id)
        invitation.status = "accepted"
    else:
        invitation.status = "declined"
        _turn_away(invitation.opponent_email)
        games.drop_waiting_game(game.id, "the opponent declined")
        notify.invitation_email(invitation, "declined", invitation.creator_email)
    db.session.flush()
    log.info("invitation %d answered: %s", invitation.id, invitation.status)
    return started


def withdraw(creator: str, game_id: int) -> None:
    """The creator withdraws their invitation to ``game_id`` before it is answered: it
    closes, its game never starts, and its link says it is closed. One answered, expired or
    closed meanwhile is left as it is. :class:`LookupError` unless ``creator`` sent an
    invitation to that game (the home page's owner, who may withdraw only their own)."""
    invitation = db.session.scalars(
        select(Invitation).where(Invitation.game_id == game_id, Invitation.creator_email == creator)
    ).one_or_none()
    if invitation is None:
        raise LookupError(f"the address sent no invitation to game {game_id}")
    invitation, game = _lock(invitation)
    if invitation.status != "invited" or _expire_if_due(invitation, game):
        return
    invitation.status, invitation.updated_at = "closed", utcnow()
    games.drop_waiting_game(game.id, "its creator withdrew the invitation")
    db.session.flush()
    log.info("invitation %d withdrawn by its creator", invitation.id)


def _turn_away(email: str) -> None:
    """The address declined an invitation: no more go to it, nor to the inbox it reaches
    (``bob+x@`` reaches ``bob@``, whose decline holds for every ``bob+…@``), where a stranger
    might name it next under another sub-address. Its home page undoes both
    (:func:`service.homes.accept_invitations`)."""
    for each in with_inbox(email):
        address_row(each).declined_at = utcnow()


def _ends_at(invitation: Invitation) -> datetime | None:
    """When an open invitation ends unanswered; ``None`` for one answered or closed, or when
    invitations never end (``INVITATION_DAYS`` 0).

    An invitee away meanwhile has the whole time from their return when its creator
    has played them: the invitation waits ``INVITATION_DAYS`` from the later of when it
    was sent and the end of their vacation (:func:`_invitee_away_until`), as a deadline
    waits for a player away.
    """
    days = current_app.config["INVITATION_DAYS"]
    if not days or invitation.status not in OPEN_INVITATIONS:
        return None
    start = max(invitation.updated_at, _invitee_away_until(invitation) or invitation.updated_at)
    return start + timedelta(days=days)


def _invitee_away_until(invitation: Invitation) -> datetime | None:
    """The end of the invitee's vacation if it ran while the invitation waited for their
    answer (ending after it was sent, or still running); ``None`` otherwise, and for a
    request its creator has yet to confirm, which nobody away is waiting on.

    ``None`` too when the creator has never played the invitee: anyone may type an
    address on the public page, and an invitation of theirs still open past its usual
    end would tell them that the address plays here, and is away."""
    if invitation.status != "invited":
        return None
    until = invitation.invitee_vacation_until
    if until is None or until <= invitation.updated_at:
        return None
    together = _played_together(invitation.creator_email, invitation.opponent_email)
    return until if db.session.scalar(select(together)) else None


def is_late(invitation: Invitation) -> bool:
    """Whether an open invitation's time is up, though the sweep has not ended it yet: its
    pages say it expired, and an answer expires it (:func:`_expire_if_due`)."""
    ends = _ends_at(invitation)
    return ends is not None and ends <= utcnow()


def expires_at(invitation: Invitation) -> str | None:
    """When an open invitation ends unanswered (ISO, UTC), as its invitee's pages and emails
    say it (:func:`_ends_at`)."""
    ends = _ends_at(invitation)
    return ends.isoformat(timespec="seconds") if ends is not None else None


def as_its_creator_reads(invitation: Invitation) -> tuple[str | None, str | None]:
    """When an open invitation ends unanswered and until when its invitee is away (ISO, UTC,
    ``None`` for either not said), as the creator's pages say them.

    Only a creator who has played the invitee (a rematch's requester always has)
    has an invitation that waits for the invitee's return (:func:`_invitee_away_until`),
    and reads the vacation, as a game's page shows it to the opponent. Any other reads
    what they would were the invitee at home, as the invitation ends then.
    """
    ends = _ends_at(invitation)
    away = _invitee_away_until(invitation)
    if ends is None or away is None or away <= utcnow():
        return expires_at(invitation), None
    return expires_at(invitation), away.isoformat(timespec="seconds")


def _played_together(
    one: SQLColumnExpression[str] | str, other: SQLColumnExpression[str] | str
) -> Exists:
    """Whether the two addresses sat at a game that started, each in a seat of their own: a
    condition, for an invitation's two columns in a statement as for two addresses."""
    theirs = aliased(Player)
    return exists(
        select(Player.id)
        .join(Game, Game.id == Player.game_id)
        .join(theirs, theirs.game_id == Player.game_id)
        .where(Player.email == one, theirs.email == other, Game.started_at.is_not(None))
    )


def unanswered(now: datetime) -> list[int]:
    """The invitations left open for ``INVITATION_DAYS`` (none when that is 0), oldest first:
    the opponent never answered, or the creator never confirmed their address. One whose
    invitee's vacation ended less than ``INVITATION_DAYS`` ago, or runs still, waits when
    its creator has played the invitee (:func:`_ends_at`)."""
    days = current_app.config["INVITATION_DAYS"]
    if not days:
        return []
    since = now - timedelta(days=days)
    away = exists().where(
        AddressSettings.email == Invitation.opponent_email,
        AddressSettings.vacation_until > since,
    ) & _played_together(Invitation.creator_email, Invitation.opponent_email)
    return list(
        db.session.scalars(
            select(Invitation.id)
            .where(
                Invitation.status.in_(OPEN_INVITATIONS),
                Invitation.updated_at <= since,
                ~((Invitation.status == "invited") & away),
            )
            .order_by(Invitation.updated_at)
        )
    )


def expire(invitation_id: int, now: datetime) -> Invitation | None:
    """End an invitation left open for ``INVITATION_DAYS`` (:func:`unanswered`): its game,
    which never started, is dropped, and its link says it expired.

    A creator who confirmed their address is told; one who never did is not
    written to again (the address may not be theirs). ``None`` when it was
    answered meanwhile: nothing changes. Caller's transaction.
    """
    invitation, game = _lock(db.session.get_one(Invitation, invitation_id))
    return invitation if _expire_if_due(invitation, game, now) else None


def _expire_if_due(invitation: Invitation, game: Game, now: datetime | None = None) -> bool:
    """Expire the invitation (locked, with its game) if it has been open for
    ``INVITATION_DAYS``, as :func:`expire` says; whether it did.

    An answer that comes after that time, before the sweep's next pass, finds it
    expired too: whether it was too late hangs on the time, not on the sweep.
    """
    now = now or utcnow()
    ends = _ends_at(invitation)
    if ends is None or ends > now:
        return False
    invited = invitation.status == "invited"
    invitation.status, invitation.updated_at = "expired", now
    games.drop_waiting_game(game.id, "the invitation expired unanswered")
    if invited:
        days = current_app.config["INVITATION_DAYS"]
        notify.invitation_email(
            invitation, "invitation_expired", invitation.creator_email, days=days
        )
    db.session.flush()
    log.info("invitation %d expired unanswered", invitation.id)
    return True


# The most games that never started one sweep deletes: a backlog goes a batch a sweep.
UNPLAYED_AT_ONCE = 500


def prune(now: datetime, days: int) -> int:
    """Delete the games that never started (a request never confirmed, an invitation declined,
    withdrawn, cancelled or left unanswered) that ended more than ``days`` days before
    ``now``, with their invitations, seats and logs; how many. ``days`` 0 keeps them all.

    Anyone may type any address and name on the public page: those of a game
    nobody played are kept only as long as its pages may still be opened to say
    what became of it. A game played, however short, is history and stays.
    """
    if not days:
        return 0
    ended = (
        select(Game.id)
        .where(
            Game.started_at.is_(None),
            Game.status.not_in(OPEN_STATUSES),
            Game.updated_at < now - timedelta(days=days),
        )
        .limit(UNPLAYED_AT_ONCE)
    )
    unplayed = list(db.session.scalars(ended))
    if not unplayed:
        return 0
    # Each child by name, as SQLite does not enforce the foreign keys' ON DELETE.
    db.session.execute(delete(Invitation).where(Invitation.game_id.in_(unplayed)))
    db.session.execute(delete(Event).where(Event.game_id.in_(unplayed)))
    seats = select(Player.id).where(Player.game_id.in_(unplayed))
    db.session.execute(
        update(OutboxMessage).where(OutboxMessage.player_id.in_(seats)).values(player_id=None)
    )
    db.session.execute(
        update(OutboxMessage).where(OutboxMessage.game_id.in_(unplayed)).values(game_id=None)
    )
    db.session.execute(
        update(AdminAction).where(AdminAction.game_id.in_(unplayed)).values(game_id=None)
    )
    db.session.execute(delete(Player).where(Player.game_id.in_(unplayed)))
    db.session.execute(delete(Game).where(Game.id.in_(unplayed)))
    log.info("%d game(s) that never started forgotten", len(unplayed))
    return len(unplayed)


def adopt_language(game: Game, email: str, language: str | None) -> str | None:
    """The language a person answered an invitation in, its page's, is theirs from then on:
    their seat's in ``game``, which its emails are written in, and their address's if it has
    none stored yet, which the seats of their later games take (:func:`games.create_game`).
    Their seats in other games are left as they are: writing them would lock rows that an
    unsubscribe from one of those games locks in the other order.

    Only an answer through the link emailed to the address says so: the address
    is the person's, which a request typed on the public page does not show. A
    language chosen on the home page stays the address's. ``None``, or a code the
    service does not speak, changes nothing. Returns the language taken, if any.
    """
    chosen = language_code(language)
    if chosen is None:
        return None
    # The settings' row is locked before the seat is written, as a change made on the home
    # page locks them (:func:`.homes.set_language`): in the other order, each would wait for
    # the other. The caller has written no seat of the address yet.
    settings = settings_row(email)
    for player in game.players:
        if player.email == email:
            player.language = chosen
    if settings.language is None:
        settings.language = chosen
    log.info("game %d: a player answered in %s", game.id, chosen)
    return chosen


def _lock(invitation: Invitation) -> tuple[Invitation, Game]:
    """The invitation re-read under a row lock on its waiting game, and that game.

    Whoever answers second waits for the first answer's commit, then sees it.
    """
    assert invitation.game_id is not None  # every invitation is made with its game
    game = games.lock_game(invitation.game_id)
    fresh = db.session.get(Invitation, invitation.id, populate_existing=True)
    assert fresh is not None  # invitations are never deleted
    return fresh, game


def _rematch_game_ids(game_ids: Collection[int]) -> dict[int, int]:
    """The id of the game that followed each of ``game_ids`` as its rematch, for those that
    had one asked for (the latest one asked), in one statement."""
    followed: dict[int, int | None] = {}
    rows = db.session.execute(
        select(Event.game_id, Event.note)
        .where(Event.game_id.in_(game_ids), Event.kind == "rematch")
        .order_by(Event.id)
    )
    for game_id, note in rows:
        followed[game_id] = int(note) if note else None
    return {game_id: new for game_id, new in followed.items() if new is not None}


def rematch_of(game: Game) -> Invitation | None:
    """The rematch already proposed after ``game``, against a person, if any."""
    new = rematch_games_of([game]).get(game.id)
    if new is None:
        return None
    return db.session.scalars(select(Invitation).where(Invitation.game_id == new)).first()


def rematch_games_of(finished: Collection[Game]) -> dict[int, int]:
    """The game that follows each of the ``finished`` games that has a rematch, by the
    game's id: two statements for all of them (none for no game).

    Against the computer, the game it started at once; against a person, the game of
    the invitation sent, unless it was declined (a game that never starts is no
    rematch: the one who declined may ask for one), an admin cancelled it (its
    invitation closed) or it expired unanswered: another may then be asked for.
    """
    if not finished:
        return {}
    followed = _rematch_game_ids([game.id for game in finished])
    if not followed:
        return {}
    proposed = set(
        db.session.scalars(
            select(Invitation.game_id).where(
                Invitation.game_id.in_(followed.values()),
                Invitation.status.not_in(("declined", "closed", "expired")),
            )
        )
    )
    return {
        game.id: followed[game.id]
        for game in finished
        if game.id in followed
        and (followed[game.id] in proposed or any(p.is_computer for p in game.players))
    }


def computer_rematch_of(player: Player) -> Player | None:
    """The person's seat in the game already started against the computer after theirs, if any."""
    game_id = _rematch_game_ids([player.game_id]).get(player.game_id)
    if game_id is None:
        return None
    return db.session.scalars(
        select(Player).where(Player.game_id == game_id, Player.computer_level.is_(None))
    ).one_or_none()


def rematch_computer(player: Player) -> Player:
    """Start a new game against the same computer, roles swapped, at once; the person's new seat.

    Nobody is invited: the game starts now, and the person is emailed their
    link as for any new game, but for an address that takes no invitations: as
    a game asked for on the public page (:func:`play_computer`), it starts
    without emails, and taking invitations again sends them. Asking twice gives
    the same game. Raises :class:`InvitationError` when no rematch can follow the game.
    """
    game = games.lock_game(player.game_id)
    earlier = computer_rematch_of(player)
    if earlier is not None:
        return earlier
    _refuse_rematch(player)
    assert player.email is not None  # the person's seat
    withheld = blocked(player.email)
    new = _rematch(game, player, waiting=False, emails=not withheld)
    if withheld:
        withhold_emails(new, seat_in_rematch(player))
    db.session.flush()
    log.info("game %d: a rematch against the computer as game %d", game.id, new.id)
    return new.player(seat_in_rematch(player))


def _refuse_rematch(player: Player) -> None:
    """Raise :class:`InvitationError` when no rematch can follow the player's game."""
    refusal = rematch_refusal(player)
    if refusal is not None:
        raise InvitationError(refusal)


def _rematch(game: Game, player: Player, *, waiting: bool, emails: bool = True) -> Game:
    """Create the game that follows ``game`` at the player's asking, recorded as its rematch:
    the same two, roles swapped (:func:`.rematch_rules.seat_in_rematch`), same look and days
    per move; a return match's game is followed by a new return match (its first game dealt
    now, the second after it). Without ``emails``, its people take none of its emails from
    its start."""
    start = games.create_match if game.match_id is not None else games.create_game
    seats = {seat_in_rematch(each): games.seating_of(each) for each in game.players}
    new = start(
        dataclasses.replace(seats["keeper"], emails=emails),
        dataclasses.replace(seats["shadow"], emails=emails),
        look=game.look,
        days_per_move=game.days_per_move or 0,
        waiting=waiting,
    )
    game.events.add(Event(kind="rematch", version=game.version, seat=player.seat, note=str(new.id)))
    return new


def propose_rematch(player: Player) -> Invitation:
    """Invite the player's opponent to a new game, roles swapped, same look and days per move;
    after a return match, to a new return match.

    The new game waits for the opponent to accept, like a game asked for on the
    public page; the requester needs no confirmation, as their game link vouches
    for their address. Asking twice (either player) gives the same invitation.
    Raises :class:`InvitationError` when no rematch can follow the game.
    """
    game = games.lock_game(player.game_id)
    earlier = rematch_of(game)
    if earlier is not None:
        return earlier
    _refuse_rematch(player)
    opponent = game.player(other(player.seat))
    if opponent.is_computer:
        raise InvitationError(gettext("The computer is played again without an invitation."))
    new = _rematch(game, player, waiting=True)
    assert player.email is not None and opponent.email is not None  # both are people
    invitation = Invitation(
        status="invited",
        game_id=new.id,
        creator_email=player.email,
        creator_name=player.name,
        opponent_email=opponent.email,
        opponent_name=opponent.name,
        creator_role=seat_in_rematch(player),
        match=game.match_id is not None,
        days_per_move=game.days_per_move,
        look=game.look,
        language=player.language,
        key=secrets.token_urlsafe(32),
        follows_game_id=game.id,
    )
    db.session.add(invitation)
    db.session.flush()
    notify.invitation_email(
        invitation,
        "invite_opponent",
        opponent.email,
        "respond",
        rematch_of=game.id,
        rematch_winner=_rematch_winner(player),
    )
    db.session.flush()
    log.info("invitation %d: a rematch of game %d as game %d", invitation.id, game.id, new.id)
    return invitation


def followed_game(invitation: Invitation) -> tuple[int, str | None] | None:
    """The game a rematch's ``invitation`` follows, and who won it (as
    :func:`_rematch_winner` says), for its page to say as its email does; ``None`` for
    an invitation that is no rematch. Read from the invitation, which keeps it: not from
    the followed game's events, which no index finds by the game that follows it."""
    followed = invitation.follows_game_id
    game = db.session.get(Game, followed) if followed is not None else None
    requester = (
        next((p for p in game.players if p.email == invitation.creator_email), None)
        if game is not None
        else None
    )
    if game is None or requester is None:
        return None
    return game.id, _rematch_winner(requester)


def _rematch_winner(requester: Player) -> str | None:
    """Who won what a rematch follows, the requester's game or the return match it ended:
    ``invitee``, ``requester``, or ``None`` for no one (a draw, a timeout of both)."""
    match = match_summary(requester)
    if match is not None:
        return {"you": "requester", "opponent": "invitee"}.get(match["winner"] or "")
    game = requester.game
    if not game.winner:
        return None
    return "requester" if game.winner == requester.seat else "invitee"


def stops_for(player: Player, key: str | None) -> bool:
    """Whether an unsubscribe link signing the link key ``key`` still speaks for the player's
    seat (:func:`service.mail.compose.unsubscribe_link`).

    Not once the seat has had a new link key (an admin rotating its link or
    correcting its address, its player replacing their home link): whoever holds
    an email sent before (the old address, or whoever the link leaked to) must not
    stop the emails of the seat's player now, nor turn invitations away from their
    address. A link from before the
    links signed the key (``None``) speaks for the seat while no admin has given
    either seat of its game a new key, as the audit trail records: the emails
    already sent about the games nobody changed keep a link that works.
    """
    if key is not None:
        return links.key_matches(player.link_key, key)
    new_key = select(AdminAction.id).where(
        AdminAction.game_id == player.game_id, AdminAction.action.in_(games.NEW_LINK_ACTIONS)
    )
    return player.link_key is not None and db.session.scalar(new_key.limit(1)) is None


def stop_emails(player: Player) -> None:
    """Stop the player's emails about their game; this service invites their address no more,
    nor the inbox it reaches, as :func:`stop_all_emails` says."""
    assert player.email is not None  # an unsubscribe link reaches only people
    _unsubscribe(player.email)
    player.notify = False
    db.session.flush()
    log.info("game %d: the %s stopped its emails", player.game_id, player.seat)


def stop_all_emails(email: str) -> None:
    """Stop every email to the address: about each game it plays, and any invitation.

    The one-click unsubscribe of the emails that are about no game of the
    address's own (an address to confirm, an invitation, the links it asked
    for). Its game links keep working.

    The stop holds for the inbox the address reaches too (``bob+x@`` reaches
    ``bob@``, whose stop holds for every ``bob+…@``: :func:`.rematch_rules.blocked`),
    as a stranger may name it under another sub-address next; the address's home
    page undoes both (:func:`service.homes.accept_invitations`).
    """
    _unsubscribe(email)
    db.session.execute(update(Player).where(Player.email == email).values(notify=False))
    db.session.flush()
    log.info("an address stopped every email")


def _unsubscribe(email: str) -> None:
    """Record that the address, and the inbox it reaches, take no invitations now.

    Written before any seat: taking invitations again writes the rows of the
    addresses and then the seats (:func:`.homes.accept_invitations`), and a stop
    at the same moment that wrote in the other order would wait for it as it
    waited for the stop.
    """
    for each in with_inbox(email):
        address = address_row(each)
        address.unsubscribed_at = address.unsubscribed_at or utcnow()
    db.session.flush()


def stopped_all_emails(email: str) -> bool:
    """Whether the address gets no email here: it stopped invitations and every game's emails.

    A seat in a game that has not started (anyone may name the address in a
    request) takes nothing back: only the games the address plays count.
    """
    address = db.session.get(Address, email)
    if address is None or address.unsubscribed_at is None:
        return False
    taken = exists().where(
        Player.email == email,
        Player.notify,
        Player.game_id == Game.id,
        Game.started_at.is_not(None),
    )
    return not db.session.scalar(select(taken))


def _write(message: OutboxMessage) -> Email | None:
    """Write a queued email of an invitation, to its creator in the language their address
    chose (on their home page, since too: it is that of every email), else in the one of
    the page they asked on; to the opponent, in the language their emails are in: the one
    their address chose (on their home page, or answering an earlier invitation), else
    that of their last game here (a rematch's opponent, say).

    For an address new here, the creator's is the best guess, as people mostly invite
    someone who reads the language they write in.
    """
    params = dict(message.params or {})
    invitation = db.session.get(Invitation, params.pop("invitation"))
    if invitation is None:
        return None
    stage = params.pop("stage")
    if stage is not None and invitation.status != STAGES[stage]:
        # Closed since it was queued (an admin cancelled its game, its creator withdrew it,
        # it expired) or past that stage: its link would only say the invitation is closed.
        return None
    opponent = message.recipient == invitation.opponent_email
    reader = emails_language if opponent else addresses.language
    chosen = reader(message.recipient)
    return compose.render(
        message.kind,
        chosen or invitation.language,
        invitation=invitation,
        time_zone=time_zone(message.recipient),
        stop_all=compose.stop_all_url(message.recipient),
        home=links.home_url(message.recipient),
        url=url(invitation, stage) if stage is not None else None,
        **params,
    )


def send_links(email: str, language: str | None) -> bool:
    """Someone asked for the links of an address's games: the worker emails them to that address.

    Asked again while the email of an earlier request is still to go (a double
    click), nothing more is queued: that email carries the links. The requests
    for an address are taken one at a time, under a lock on its row, so two
    sent at the same instant queue one. Returns whether this request queued one.
    """
    address = games.clean_email(email)
    lock_address(address)
    if to_go("your_games", address) is not None:
        log.info("a request for an address's links is queued already: nothing more queued")
        return False
    notify.links_requested(address, language)
    db.session.flush()
    log.info("a request for an address's links is queued")
    return True


def _not_blocked(message: OutboxMessage) -> bool:
    """Whether the recipient still takes the emails anyone can cause by typing an address.

    One that opted out since the email was queued gets none either: the page
    said the same either way.
    """
    return not blocked(message.recipient)


def _emails_wanted(message: OutboxMessage) -> bool:
    """Whether the creator still takes the answer to their invitation: not once they stopped
    every email, before or after it was queued, unless their seat in the invitation's game
    still takes its emails: a stop of every email turns off the seats of the games that
    have not started too, so a seat that takes them was made after the stop (a rematch
    asked after stopping a game's emails: asking is wanting the answer), or the address
    stopped only the emails of its games in play, one by one.

    Declining someone else's invitation, or stopping one game's emails, turns
    away invitations to the address, not the answer to one it made.
    """
    if not stopped_all_emails(message.recipient):
        return True
    invitation = db.session.get(Invitation, (message.params or {}).get("invitation"))
    if invitation is None or invitation.game_id is None:
        return False
    seat = select(Player.notify).where(
        Player.game_id == invitation.game_id, Player.email == message.recipient
    )
    return bool(db.session.scalar(seat))


# Why an email of an invitation was skipped (:attr:`.mail.kinds.Kind.unwanted`).
TURNED_AWAY = "the address had stopped emails or declined an invitation"
# Why the email asking to confirm or to answer an invitation was skipped: the invitation
# was no longer waiting for that when it was to go.
CLOSED_BEFORE = "the invitation was closed or answered before it went"

kinds.register(
    *(
        Kind(
            name,
            still_wanted=_not_blocked,
            unwanted=TURNED_AWAY,
            write=_write,
            unwritten=CLOSED_BEFORE,
        )
        for name in ("confirm_address", "invite_opponent")
    ),
    # What became of the invitation, to its creator.
    *(
        Kind(
            name,
            still_wanted=_emails_wanted,
            unwanted="the creator stopped every email",
            write=_write,
        )
        for name in ("declined", "invitation_expired", "invitation_cancelled")
    ),
)
