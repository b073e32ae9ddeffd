"""Which emails a change to a game causes. Called inside the change's transaction.

The change queues what to write; the worker writes each email when it sends it
(:mod:`.mail.kinds`), from the recipient's seat view then, with their link
then. What happened since a player's last move is what happened until the
email goes; a round's end email keeps the number of the round it is about.

- A new game: each player learns their role, the opponent and their link.
- A move: "your move" to each seat that now owes one and did not just move
  (a player who wins a trick and leads the next is not emailed), and the
  mover's own unsent turn email is withdrawn; at the end of a round both hear
  how far the track moved; at the end, the result.
- A reminder before a deadline, and the end by timeout, forfeit or cancel.

A player who stopped notifications for a game gets none for it, except a link
an admin resends on request. A turn email goes out only as the address's home
page asks (:data:`service.models.EMAIL_POLICIES`): for every move, only while
the player's page for that game is not open, or never (a daily digest, or
reminders only). Every email links to the recipient's home page. The computer,
playing a seat, gets none at all.

The kinds of email sent here are registered at the end (see :mod:`.mail.kinds`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from flask import current_app
from sqlalchemy import exists, select
from sqlalchemy.orm import joinedload

from . import addresses, notes
from .addresses import emails_language, settings_for, time_zone, vacation_end
from .computer import late_from
from .language import recipient_locale
from .links import home_url, player_url, token_for
from .mail import compose, kinds, queue, queued, release, withdrawal
from .mail.compose import Email
from .mail.kinds import Kind
from .models import (
    DEFAULT_EMAIL_POLICY,
    Event,
    Game,
    Invitation,
    OutboxMessage,
    Player,
    db,
    utcnow,
)
from .perspective import due_first, player_view, with_seats_and_match
from .rematch_rules import blocked, rematch_refusal
from .replies.headers import game_headers, reply_to, root_message_id
from .rules import OVER, Seat, State, other, to_act, track_advances
from .writes import Write


def _context(player: Player) -> dict[str, Any]:
    game = player.game
    return {
        "player": player,
        "greet": greeting(player),
        "opponent": game.player("shadow" if player.seat == "keeper" else "keeper"),
        "game": game,
        "view": player_view(player),
        "look": game.look,
        "link": player_url(player) if player.link_key else None,
        "unsubscribe": _unsubscribe_url(player),
        "home": home_url(player.email) if player.email else None,
        "opponent_away_until": opponent_away_until(player),
        "time_zone": time_zone(player.email),
        # The opponent's notes since the player's last move (the emails that ask for a move,
        # or end the game, show them).
        "notes": notes.from_opponent(player, since_own_move=True),
    }


def opponent_away_until(player: Player, now: datetime | None = None) -> str | None:
    """When the player's opponent in this game comes back from vacation (ISO, UTC), if away
    while the game is open: a closed game has no deadline for a vacation to hold."""
    game = player.game
    if game.status != "active":
        return None
    opponent = game.player("shadow" if player.seat == "keeper" else "keeper")
    if opponent.email is None:  # the computer takes no vacation
        return None
    end = vacation_end([opponent.email], now or utcnow())
    return end.isoformat(timespec="seconds") if end is not None else None


def _send(player: Player, kind: str, **options: Any) -> None:
    """Queue one email of ``kind`` to ``player``, as :func:`_email` says."""
    write = _email(player, kind, **options)
    if write is not None:
        db.session.execute(write.statement, write.params)


def _email(
    player: Player,
    kind: str,
    *,
    always: bool = False,
    first: bool = False,
    parent: str | None = None,
    **params: Any,
) -> Write | None:
    """The queueing of one email of ``kind`` to ``player``, which the worker writes
    (:func:`_writer`); ``None`` when the player gets none.

    ``params`` are what the email needs besides the player and the game, as
    JSON. It threads with the game's other emails to the player, the ``first``
    of them (the invitation) being the thread's root; ``parent`` is the
    Message-ID of the player's message it answers, if any. The computer has no
    address: it gets no email of any kind. The statement's parameters are named after
    the player's seat, so that both players' emails can be written at once.
    """
    if player.email is None or (not player.notify and not always):
        return None
    headers = game_headers(player, parent, first)
    return queued(
        kind=kind,
        recipient=player.email,
        game=player.game,
        player=player,
        headers=headers,
        message_id=root_message_id(player) if first else None,
        params=params,
        prefix=f"{player.seat}_email_",
    )


def _unsubscribe_url(player: Player) -> str:
    return f"{current_app.config['BASE_URL']}/unsubscribe/{compose.unsubscribe_token(player)}"


def _player_of(message: OutboxMessage) -> Player | None:
    """The message's player, if it still has the address the message was queued for.

    An email written now carries the player's link now: an address the player
    no longer has (an admin corrected it) must not receive it.
    """
    if message.player_id is None:
        return None
    # The player, their game and both seats in one statement: the email needs all three.
    player = (
        db.session.scalars(
            select(Player)
            .where(Player.id == message.player_id)
            .options(joinedload(Player.game).joinedload(Game.players))
        )
        .unique()
        .first()
    )
    if player is None or player.email != message.recipient:
        return None
    return player


def _writer(
    extra: Callable[[Player, dict[str, Any]], dict[str, Any]] | None = None,
) -> Callable[[OutboxMessage], Email | None]:
    """A kind's writer of emails about a player's game, in the player's language (English if
    none); ``extra`` turns the message's params into what else the templates need."""

    def write(message: OutboxMessage) -> Email | None:
        player = _player_of(message)
        if player is None:
            return None
        params = message.params or {}
        # The reply address of now, as the links: its tag names the version the email is about.
        address = reply_to(player)
        # The view's words (the computer's name) in the reader's language, as the templates'.
        with recipient_locale(player):
            context = {
                **_context(player),
                "reply_to": address,
                **params,
                **(extra(player, params) if extra else {}),
            }
        email = compose.render(message.kind, player.language, **context)
        # None drops a Reply-To an earlier attempt wrote, when the player owes no move now.
        # The unsubscribe link of now too: one from when the email was queued stops nothing
        # once an admin has rotated the player's link since.
        return replace(
            email,
            headers={
                **email.headers,
                "Reply-To": address,
                **compose.unsubscribe_headers(context["unsubscribe"]),
            },
        )

    return write


def greeting(player: Player) -> str | None:
    """The name an email about the player's game greets them by; ``None`` for a plain hello.

    A game against the computer asked for on the public page has a name and an
    address typed by whoever asked, which nobody has confirmed: until its player
    moves (the link reached whoever holds the address), the name could carry the
    asker's message to a stranger's mailbox, so it is left out.
    """
    return None if _unvouched(player) else player.name


# The event of a game against the computer asked for from its player's home page, whose link
# says the address is theirs (:func:`_unvouched`).
ASKED_FROM_HOME = "asked_from_home"


def _unvouched(player: Player) -> bool:
    """Whether nothing says the player's address is theirs: a game against the computer asked
    for on the public page, in which the player has not moved. Such an address gets its
    invitation and the emails of moves, and no reminder or ending besides: one request of a
    stranger's sends it one email, as an invitation to play a person does. One asked for from
    the player's home page (:data:`ASKED_FROM_HOME`) is vouched for by its link."""
    game = player.game
    if game.request_key is None or not game.player(other(player.seat)).is_computer:
        return False
    if game.has_moved(player.seat):
        return False
    from_home = select(Event.id).where(Event.game_id == game.id, Event.kind == ASKED_FROM_HOME)
    return db.session.scalar(from_home.limit(1)) is None


def _round_that_ended(player: Player, params: dict[str, Any]) -> dict[str, Any]:
    """The round a round's end email is about, and where it left the track, however far play
    went on before the email was written."""
    number, state = params["round"], player.game.state
    track = sum(track_advances(state)[:number])
    return {"round": number, "result": state["rounds"][number - 1], "track": track}


def _rematch(player: Player, params: dict[str, Any]) -> dict[str, Any]:
    """A game's end email offers a rematch link, if one may follow
    (:func:`service.rematch_rules.rematch_refusal`): never a link that would only say no."""
    if not player.link_key or rematch_refusal(player) is not None:
        return {"rematch": None}
    return {"rematch": f"{current_app.config['BASE_URL']}/rematch/{token_for(player)}"}


def game_started(game: Game) -> None:
    """Invite both players to a new game."""
    for player in game.players:
        _send(player, "invitation", first=True)


def turn_withdrawn(mover: Player) -> Write:
    """The withdrawal of the mover's unsent turn email, out of date once they have moved:
    written with the move (:func:`service.games._record`)."""
    return withdrawal("turn", mover.id)


def moved(game: Game, before: State, mover: Seat | None) -> list[Write]:
    """The emails that tell the players what a move changed, and who owes the next one: to
    be written with the move's own writes (:func:`service.games._record`), as is the
    withdrawal of the mover's turn email (:func:`turn_withdrawn`).

    An answer to a person's reply that waited for the computer's move goes once the
    computer owes none, instead of the turn email (:func:`_answer_released`)."""
    state = game.state
    answered = _answer_released(game, mover)
    if state["phase"] == OVER:
        emails = [_email(player, "game_over") for player in game.players]
    elif len(state["rounds"]) > len(before["rounds"]):
        emails = [_email(p, "round_end", round=len(state["rounds"])) for p in game.players]
    else:
        previous = to_act(before)
        owing = [seat for seat in to_act(state) if seat != mover and seat not in previous]
        emails = [_email(game.player(s), "turn") for s in owing if s not in answered]
    return [email for email in emails if email is not None]


def _answer_released(game: Game, mover: Seat | None) -> list[Seat]:
    """After a move of the computer that leaves it owing none, the seat of the person whose
    answer to a reply waited for it (:func:`_answer_held`), which goes now: written when it
    goes, it tells the computer's move and asks for the person's, as a turn email would."""
    if mover is None or not game.player(mover).is_computer or mover in to_act(game.state):
        return []
    person = other(mover)
    return [person] if release("answer", game.player(person).id) else []


def _answer_held(message: OutboxMessage) -> datetime | None:
    """Until when an answer to a person's reply waits: while the computer owes a move in the
    game, until that move counts as late. The computer answers within seconds, and its move
    makes the answer go (:func:`_answer_released`), the one email that says both moves."""
    player = db.session.get(Player, message.player_id) if message.player_id else None
    if player is None or player.game.status != "active":
        return None
    game = player.game
    computer = game.player(other(player.seat))
    if not computer.is_computer or computer.seat not in to_act(game.state):
        return None
    until = late_from(game.updated_at)
    return until if until > utcnow() else None


def your_move(player: Player) -> None:
    """Tell a player the move is theirs, as a turn email tells the next player: the mover of
    a move by reply whose answer, which says so, was not sent."""
    _send(player, "turn")


def answer(player: Player, parent: str | None, **extra: Any) -> None:
    """Answer a player's reply by email, in its thread (see :mod:`service.replies`).

    Sent even to a player who stopped the game's emails: they just wrote to us.
    """
    _send(player, "answer", always=True, parent=parent, **extra)


def told(game: Game) -> list[Player]:
    """The players an email to both about ``game`` reaches: people who take its emails and
    whose address something vouches for (see :func:`_unvouched`)."""
    return [p for p in game.players if p.email and p.notify and not _unvouched(p)]


def ended(game: Game, reason: str = "") -> None:
    """Tell both players a game ended other than by play: timeout, forfeit, cancel; with the
    admin's ``reason``, if one was given."""
    for player in told(game):
        _send(player, "game_ended", reason=reason)


def resigned(game: Game, seat: Seat) -> None:
    """Tell the opponent of the player in ``seat`` that they resigned: the game is theirs.
    The player who resigned is shown it on their page."""
    opponent = game.player(other(seat))
    if opponent in told(game):
        _send(opponent, "game_ended")


def reminded(player: Player) -> None:
    """Tell ``player`` that their opponent awaits the move they owe, as the opponent asked
    (:func:`service.games.remind_opponent`): about the game's version now, and no other.

    A player who stopped the game's emails gets none, and the opponent is not told so:
    they are told the same either way, as for every email a person's choice turns away.
    """
    if not _unvouched(player):
        _send(player, "reminded", version=player.game.version)


def reminder(game: Game) -> None:
    """Remind whoever owes a move that the deadline is near."""
    for seat in to_act(game.state):
        if not _unvouched(game.player(seat)):
            _send(game.player(seat), "reminder")


def deadline_extended(game: Game) -> None:
    """Tell both players the new deadline an admin gave the move that is due."""
    _new_deadline(game)


def deadline_brought_forward(game: Game, back: Seat) -> None:
    """Tell both players the earlier deadline of the move that is due, now that the player
    in ``back``, who owes it, came back from vacation early: the opponent may have counted
    on the later one."""
    _new_deadline(game, back=back)


def _new_deadline(game: Game, **params: Any) -> None:
    """Queue the news of the game's deadline now to both players: the email goes only while
    the game has that deadline (:func:`_deadline_wanted`)."""
    assert game.deadline is not None  # only a deadline is extended or brought forward
    for player in told(game):
        _send(player, "deadline_extended", deadline=game.deadline.isoformat(), **params)


def invitation_email(
    invitation: Invitation, kind: str, recipient: str, stage: str | None = None, **params: Any
) -> None:
    """Queue one email of an invitation, with a one-click opt-out; the worker writes it
    (:mod:`service.invitations`).

    ``stage`` names the invitation's link the email carries (``confirm`` or
    ``respond``), if any; ``params`` are what else its template says, as JSON.
    """
    queue(
        kind=kind,
        recipient=recipient,
        headers=compose.unsubscribe_headers(compose.stop_all_url(recipient)),
        params={"invitation": invitation.id, "stage": stage, **params},
    )


def link(player: Player) -> None:
    """Send a player their link again (an admin asked)."""
    _send(player, "link", always=True)


def links_requested(email: str, language: str | None) -> None:
    """Queue a request for the links of an address's games in play; the worker writes the email.

    Asking does the same work whether or not the address plays here, so neither
    the page nor the time it takes tells anyone who does (:func:`write_links`).
    ``language`` is the asker's page's: the email's only for an address whose emails have
    none (:func:`.addresses.emails_language`).
    """
    queue(kind="your_games", recipient=email, params={"language": language})


def write_links(message: OutboxMessage) -> Email | None:
    """Write a queued links request into the email with the links; ``None`` if none is to go.

    It links the address's home page (its games, finished or not, its invitations and
    its settings) and lists its games in play and the invitations waiting for its
    answer. None goes to an address that never played here, nor to one that has
    stopped the emails of every game it played, unless an invitation waits for it: one
    its creator confirmed, to an address that takes invitations, which was emailed it
    already. Anyone may ask for this one.
    """
    played = exists().where(
        Player.email == message.recipient,
        Player.notify,
        Player.link_key.is_not(None),
        Game.id == Player.game_id,
        Game.started_at.is_not(None),
    )
    invited = [] if blocked(message.recipient) else addresses.invitations_waiting(message.recipient)
    if not invited and not db.session.scalar(select(played)):
        return None
    players = db.session.scalars(
        select(Player)
        .join(Game)
        .where(
            Player.email == message.recipient,
            Game.status == "active",
            Player.link_key.is_not(None),
        )
        .order_by(Game.id)
    ).all()
    # The language of the address's emails: whoever asked learns nothing from it.
    language = emails_language(message.recipient) or (message.params or {}).get("language")
    email = _write_games("your_games", message.recipient, players, language, invited=invited)
    # Only now, for an address that plays here: the queued row names no address but in its To.
    headers = compose.unsubscribe_headers(compose.stop_all_url(message.recipient))
    return replace(email, headers={**email.headers, **headers})


def _write_games(
    kind: str,
    email: str,
    players: Sequence[Player],
    language: str | None,
    notes_of: Mapping[int, list[str] | None] | None = None,
    **more: Any,
) -> Email:
    """Write an email to an address about several of its games, each with its link, its
    opponent and, from ``notes_of`` (by player id), the opponent's notes it quotes; the
    moves owed first, the soonest due first (:func:`.perspective.due_first`). ``more``
    goes to the template as it is."""
    with recipient_locale(language):
        views = sorted(((player_view(p), p) for p in players), key=lambda pair: due_first(pair[0]))
        games = [
            {
                "view": view,
                "link": player_url(player),
                "opponent": player.game.player(other(player.seat)),
                "notes": (notes_of or {}).get(player.id),
            }
            for view, player in views
        ]
    return compose.render(
        kind,
        language,
        games=games,
        # Whether replies are read: a reply to this email, which has no game's reply address,
        # makes no move, and the email says so.
        replies=bool(current_app.config.get("REPLY_ADDRESS")),
        stop_all=compose.stop_all_url(email),
        home=home_url(email),
        time_zone=time_zone(email),
        **more,
    )


def digest(email: str, players: list[Player], language: str | None) -> None:
    """Queue an address's daily digest: each move it owes, with that game's link."""
    queue(
        kind="digest",
        recipient=email,
        headers=compose.unsubscribe_headers(compose.stop_all_url(email)),
        params={"players": [player.id for player in players], "language": language},
    )


def write_digest(message: OutboxMessage) -> Email | None:
    """Write a queued digest: the moves of its games that the address still owes when it goes.

    Each game says what changed since the player's last move and quotes the
    opponent's notes since, as a turn email would: the digest stands for the
    turn emails the address does not get. Its games, their players and their
    return matches are read together; the notes, two statements a game (a digest
    goes once a day).
    """
    params = message.params or {}
    players = [
        player
        for player in db.session.scalars(
            select(Player)
            .join(Game)
            .where(Player.id.in_(params["players"]), Player.email == message.recipient)
            .order_by(Game.id)
            .options(*with_seats_and_match())
        )
        if in_digest(player)
    ]
    if not players:
        return None
    notes_of = {player.id: notes.from_opponent(player, since_own_move=True) for player in players}
    # The language the address chose by the time it goes (a digest may wait out an outage).
    language = addresses.language(message.recipient) or params["language"]
    return _write_games("digest", message.recipient, players, language, notes_of)


def in_digest(player: Player) -> bool:
    """Whether a digest lists the player's game: a move they owe in a game in play whose
    emails they take, with a link to make it by, and that something vouches for the
    address of (see :func:`_unvouched`)."""
    return (
        player.game.status == "active"
        and player.notify
        and player.link_key is not None
        and player.seat in to_act(player.game.state)
        and not _unvouched(player)
    )


def _player_in_play(message: OutboxMessage) -> Player | None:
    """The message's player, if their game is in play and they still take its emails."""
    player = db.session.get(Player, message.player_id)
    if player is None or not player.notify or player.game.status != "active":
        return None
    return player


def _owing_a_move(message: OutboxMessage) -> Game | None:
    """The game in play in which the message's player owes a move and takes emails, if any."""
    player = _player_in_play(message)
    if player is None or player.seat not in to_act(player.game.state):
        return None
    return player.game


# A page that said it was open this recently counts as the player being there.
PRESENT_FOR = timedelta(minutes=5)


def turn_email_policy(player: Player) -> str | None:
    """What the player's address asked for on its home page about turn emails in this game.

    ``every_move`` (the default), ``when_away``, ``digest`` or ``reminders``;
    ``None`` for the computer, which gets no email. Against the computer,
    which answers within seconds, ``every_move`` is ``when_away``: a person
    playing on the page is not emailed each answer.
    """
    if player.email is None:
        return None
    settings = settings_for(player.email)
    policy = settings.email_policy if settings is not None else DEFAULT_EMAIL_POLICY
    if policy == "every_move" and player.game.player(other(player.seat)).is_computer:
        return "when_away"
    return policy


def turn_held_until(player: Player, now: datetime | None = None) -> datetime | None:
    """Until when a turn email to the player waits, if it waits: with ``when_away``, while
    the player's page for this game says it is open (it did within :data:`PRESENT_FOR`).

    It then goes if the player still owes the move: one made on the page
    meanwhile withdraws it. A player who moved and closed the page before the
    opponent answered is emailed the answer once the page has been quiet for
    :data:`PRESENT_FOR`.
    """
    if turn_email_policy(player) != "when_away" or player.seen_at is None:
        return None
    until = player.seen_at + PRESENT_FOR
    return until if until > (now or utcnow()) else None


def _turn_wanted(message: OutboxMessage) -> bool:
    """A turn email is about a move the player owes in a game in play, to a player who takes
    turn emails (the digest and the reminders tell the others)."""
    if message.player_id is None:
        return True
    game = _owing_a_move(message)
    if game is None:
        return False
    player = db.session.get_one(Player, message.player_id)
    return turn_email_policy(player) in ("every_move", "when_away")


def _turn_held(message: OutboxMessage) -> datetime | None:
    """Until when a turn email waits for its player to leave the page (:func:`turn_held_until`)."""
    if message.player_id is None:
        return None
    return turn_held_until(db.session.get_one(Player, message.player_id))


def _digest_wanted(message: OutboxMessage) -> bool:
    """A digest still goes to an address that asks for digests and takes some game's emails."""
    settings = settings_for(message.recipient)
    if settings is None or settings.email_policy != "digest":
        return False
    return bool(
        db.session.scalar(select(exists().where(Player.email == message.recipient, Player.notify)))
    )


def _notified(message: OutboxMessage) -> bool:
    """An email about a game goes to a player who still takes that game's emails: one who
    stopped them after it was queued (its one-click link, "Stop all emails") gets none."""
    if message.player_id is None:
        return True
    player = db.session.get(Player, message.player_id)
    return player is not None and player.notify


def _in_play(message: OutboxMessage) -> bool:
    """An invitation or a round's end asks for a move: it goes only while the game is in play
    (the email of its end says how it ended) to a player who still takes its emails."""
    return message.player_id is None or _player_in_play(message) is not None


def _deadline_wanted(message: OutboxMessage) -> bool:
    """A new deadline is news only while the game is in play and still has that deadline:
    not once it is over, nor once a move left the computer owing the next (it has none), nor
    once it changed again (a move, another extension or vacation: that news goes instead).
    An email queued without its deadline goes while the game has one."""
    if message.player_id is None:
        return True
    player = _player_in_play(message)
    if player is None or player.game.deadline is None:
        return False
    queued = (message.params or {}).get("deadline")
    return queued is None or datetime.fromisoformat(queued) == player.game.deadline


def _same_move_owed(message: OutboxMessage) -> bool:
    """A reminder asked for by the opponent is about the move owed at the game's version
    then: it goes only while that move is still owed, the game at that version."""
    if message.player_id is None:
        return True
    game = _owing_a_move(message)
    return game is not None and game.version == (message.params or {}).get("version")


def _reminder_wanted(message: OutboxMessage) -> bool:
    """A reminder is about a move owed, and about the deadline it was queued for.

    A move or an extension sets a new deadline: a reminder held back by retries
    must not reach a player who has moved since.
    """
    if message.player_id is None:
        return True
    game = _owing_a_move(message)
    return game is not None and game.reminded


# Why an email about a game was skipped (:attr:`.mail.kinds.Kind.unwanted`, ``unwritten``).
NOT_IN_PLAY = "its game was no longer in play"
ADDRESS_GONE = "its player no longer had the address it was queued for"
STOPPED = "the player stopped this game's emails"


def _about_a_game(
    name: str,
    extra: Callable[[Player, dict[str, Any]], dict[str, Any]] | None = None,
    **options: Any,
) -> Kind:
    """A kind of email about a player's game, written by :func:`_writer` (with ``extra``): one
    to an address the player no longer has is skipped, saying so."""
    return Kind(name, write=_writer(extra), unwritten=ADDRESS_GONE, **options)


kinds.register(
    _about_a_game("invitation", still_wanted=_in_play, unwanted=NOT_IN_PLAY),
    _about_a_game(
        "turn",
        replaces_queued=True,
        still_wanted=_turn_wanted,
        unwanted="the player no longer owed that move, or wanted no email for it",
        held_until=_turn_held,
    ),
    _about_a_game("round_end", _round_that_ended, still_wanted=_in_play, unwanted=NOT_IN_PLAY),
    _about_a_game("game_over", _rematch, still_wanted=_notified, unwanted=STOPPED),
    _about_a_game("game_ended", _rematch, still_wanted=_notified, unwanted=STOPPED),
    _about_a_game(
        "reminder",
        still_wanted=_reminder_wanted,
        unwanted="the player moved, or the deadline changed, before it went",
    ),
    _about_a_game(
        "reminded",
        still_wanted=_same_move_owed,
        unwanted="the player moved, or the game ended, before it went",
    ),
    # A deadline an admin extended, or one brought forward (``back``: the seat of the player
    # back from vacation early, who owes the move).
    _about_a_game(
        "deadline_extended",
        still_wanted=_deadline_wanted,
        unwanted="the game was no longer in play, its deadline had changed again, or the "
        "player stopped its emails",
    ),
    # Sent even to a player who stopped the game's emails: an admin resends a link on request,
    # and an answer replies to the player's own email. A link is written when sent, with the
    # link of that moment: two waiting would say the same, so the newer replaces the older.
    _about_a_game("link", replaces_queued=True),
    _about_a_game("answer", held_until=_answer_held),
    # Queued bare, so that asking costs the same whether or not the address plays here.
    Kind("your_games", write=write_links),
    Kind(
        "digest",
        still_wanted=_digest_wanted,
        unwanted="the address owed no move then, or no longer asked for the digest",
        write=write_digest,
    ),
)
