"""What a player sees: the engine's seat view plus what the service knows, and
the language they read it in.

The move page, the JSON API and every email render from :func:`player_view`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any, Literal, NamedTuple, TypedDict, TypeGuard

from sqlalchemy import Connection, Row, Select, bindparam, select
from sqlalchemy.orm import aliased, contains_eager
from sqlalchemy.sql.base import ExecutableOption

from . import driver_reads
from .game_text import player_name
from .language import current_language
from .links import key_matches
from .models import OPEN_STATUSES, Game, Match, Player, db
from .rules import OVER, Seat, State, other, return_match, seat_view
from .rules.engine import Trick
from .rules.seat_view import SeatView

STATUS_WORDS = {
    "waiting": "waiting for its players",
    "active": "in play",
    "finished": "over",
    "resigned": "over: a player resigned",
    "timed_out": "over: a player ran out of time",
    "abandoned": "abandoned: neither player moved in time",
    "cancelled": "cancelled",
}


def describe_status(status: str) -> str:
    """A game status in words."""
    return STATUS_WORDS.get(status, status)


class MatchScore(TypedDict):
    """A return match as one player sees it (see :func:`match_summary`)."""

    game: int | None
    you: int
    opponent: int
    over: bool
    winner: Literal["you", "opponent"] | None
    draw: bool
    ended_early: bool


class PlayerView(SeatView):
    """What :func:`player_view` returns: the seat's view and what the service knows."""

    game: int
    version: int
    status: str
    look: str
    you: str
    opponent: str
    opponent_computer: bool
    names: dict[Seat, str]
    deadline: str | None
    since: list[Trick]
    match: MatchScore | None


def with_seats_and_match() -> tuple[ExecutableOption, ...]:
    """Loader options for a query of players joined to their games: each game with both its
    seats and, for a return match, both games of the match with theirs. All that
    :func:`player_view` and :func:`match_summary` read, in three statements for every
    player the query returns."""
    game = contains_eager(Player.game)
    return (
        game.selectinload(Game.players),
        game.selectinload(Game.match).selectinload(Match.games).selectinload(Game.players),
    )


def match_summary(player: Player) -> MatchScore | None:
    """The return match as ``player`` sees it: ``you`` and ``opponent`` scores and the winner.

    A game of the match that ends other than by play (a timeout, a forfeit, an
    abandoned or cancelled game) ends the match: its winner, if any, wins it;
    without one the match simply ends (``ended_early``, neither won nor drawn).
    ``None`` for a game that is not part of a return match.
    """
    game = player.game
    if game.match is None:
        return None
    first = game.match.game(1)
    if first is None:
        return None
    second = game.match.game(2)
    result = return_match(first.state, second.state if second else None)
    me = _side(game.match_game, player.seat)
    them = "second" if me == "first" else "first"
    winner = result["winner"]
    over = result["over"]
    cut_short = next((g for g in (first, second) if g is not None and _ended_early(g)), None)
    if cut_short is not None:
        over = True
        winner = None
        if cut_short.winner:
            winner = _side(cut_short.match_game, cut_short.winner)
    relative: dict[str | None, Literal["you", "opponent"] | None] = {
        me: "you",
        them: "opponent",
        None: None,
    }
    return {
        "game": game.match_game,
        "you": result["scores"][me],
        "opponent": result["scores"][them],
        "over": over,
        "winner": relative[winner],
        "draw": over and winner is None and cut_short is None,
        "ended_early": cut_short is not None,
    }


def _side(match_game: int | None, seat: str) -> Literal["first", "second"]:
    """The side of a return match that plays ``seat`` in its game ``match_game``: "first"
    is the Keeper of game 1, who is the Shadow of game 2. By seat, never by address: an
    admin may correct a player's address in one game of the two."""
    keeper_first = match_game == 1
    return "first" if (seat == "keeper") == keeper_first else "second"


def _ended_early(game: Game) -> bool:
    return game.status not in OPEN_STATUSES and game.state["phase"] != OVER


class Named(NamedTuple):
    """A player's name and computer level, all :func:`~service.game_text.player_name` reads."""

    name: str
    computer_level: str | None


@dataclass(frozen=True)
class SeatFacts:
    """What a seat's view is made of, besides the return match's score: the game's row, the
    seat's place in the history and both players' names.

    Read through the ORM (:func:`seat_facts`) or in one statement (:func:`stored_seat_facts`);
    ``state`` is ``None`` when read for the view's ETag alone, which does not need it.
    """

    game: int
    version: int
    status: str
    winner: Seat | None
    look: str
    deadline: datetime | None
    state: State | None
    seat: Seat
    history_mark: int
    names: dict[Seat, Named]


def seat_facts(player: Player) -> SeatFacts:
    """The facts of ``player``'s view, from the loaded player, game and seats."""
    game = player.game
    return SeatFacts(
        game=game.id,
        version=game.version,
        status=game.status,
        winner=game.winner,
        look=game.look,
        deadline=game.deadline,
        state=game.state,
        seat=player.seat,
        history_mark=player.history_mark,
        names={p.seat: Named(p.name, p.computer_level) for p in game.players},
    )


def player_view(player: Player) -> PlayerView:
    """The seat view of the engine, plus what the service knows: version, names, deadline."""
    return view_of(seat_facts(player), match_summary(player))


def view_of(facts: SeatFacts, match: MatchScore | None) -> PlayerView:
    """:func:`player_view` made from a seat's facts and its return match's score."""
    if facts.state is None:
        raise ValueError("the facts were read without the game's state")
    seen = seat_view(facts.state, facts.seat)
    open_game = facts.status == "active"
    view: PlayerView = {
        **seen,
        "game": facts.game,
        "version": facts.version,
        "status": facts.status,
        "winner": facts.winner,
        "look": facts.look,
        "you": player_name(facts.names[facts.seat]),
        "opponent": player_name(facts.names[other(facts.seat)]),
        "opponent_computer": facts.names[other(facts.seat)].computer_level is not None,
        "names": {seat: player_name(named) for seat, named in facts.names.items()},
        "deadline": iso(facts.deadline) if open_game else None,
        "since": facts.state["history"][facts.history_mark :],
        "match": match,
    }
    if not open_game:
        view.update({"your_turn": False, "choosing": False, "to_act": [], "legal": []})
    return view


def due_first(view: PlayerView) -> tuple[bool, bool, str]:
    """The order an address's games in play are listed in, by their views: the moves it
    owes first, each part the soonest due first and games without a deadline last (every
    view's deadline is written in UTC, to the second: as text, the sooner sorts first)."""
    deadline = view["deadline"]
    return not view["your_turn"], deadline is None, deadline or ""


def view_tag(player: Player) -> str:
    """The ``ETag`` of the player's view (see :func:`tag_of`)."""
    return tag_of(seat_facts(player), match_summary(player))


def tag_of(facts: SeatFacts, match: MatchScore | None) -> str:
    """The ``ETag`` of a seat's view: it changes whenever the view may change.

    It is made of what :func:`view_of` reads besides the engine's state
    (which changes with the game's version, as do the status and the
    winner): the deadline, the look, the player's mark in the history, both
    players' names and the language in use (a computer's name is given in
    it), and the return match's score. None of it is hidden from the player.
    """
    me, them = facts.names[facts.seat], facts.names[other(facts.seat)]
    return _tag(
        [
            facts.game,
            facts.version,
            facts.status,
            facts.winner,
            facts.look,
            iso(facts.deadline),
            facts.seat,
            facts.history_mark,
            [me.name, me.computer_level, them.name, them.computer_level],
            current_language(),
            match,
        ]
    )


def stored_view_tag(
    player_id: int, key: str, *, connection: Connection | None = None
) -> str | None:
    """:func:`view_tag` read in one statement by primary key, without the game's state
    (on ``connection``, the session's unless given).

    ``None`` when that takes more: for a link that is not the player's (the
    full read answers 404) and for a game of a return match (its score reads
    the other game).
    """
    facts = stored_seat_facts(player_id, key, with_state=False, connection=connection)
    return None if facts is None else tag_of(facts, None)


def stored_seat_facts(
    player_id: int, key: str, *, with_state: bool = True, connection: Connection | None = None
) -> SeatFacts | None:
    """:func:`seat_facts` read in one statement by primary key, with no ORM object made (on
    ``connection``, the session's unless given).

    ``None`` when that takes more: for a link that is not the player's (the
    full read answers 404) and for a game of a return match, whose score
    reads the other game (:func:`match_summary`).
    """
    row = driver_reads.one_or_none(
        connection or db.session.connection(), _facts_query(with_state), {"player_id": player_id}
    )
    if not read_in_one(row, key):
        return None
    return facts_of(row, row.state if with_state else None)


def read_in_one(row: Row[Any] | None, key: str) -> TypeGuard[Row[Any]]:
    """Whether a row of :func:`facts_statement` read for a link signed with ``key`` is the
    whole of what the link's page needs: the link is the player's (the key is the
    player's current one) and the game is not part of a return match."""
    return row is not None and key_matches(row.link_key, key) and row.match_id is None


def facts_of(row: Row[Any], state: State | None) -> SeatFacts:
    """The :class:`SeatFacts` of a row of :func:`facts_statement`."""
    opponent = other(row.seat)
    return SeatFacts(
        game=row.id,
        version=row.version,
        status=row.status,
        winner=row.winner,
        look=row.look,
        deadline=row.deadline,
        state=state,
        seat=row.seat,
        history_mark=row.history_mark,
        # In the order of Game.players (by seat), as seat_facts has them.
        names=dict(
            sorted(
                {
                    row.seat: Named(row.name, row.computer_level),
                    opponent: Named(row.their_name, row.their_level),
                }.items()
            )
        ),
    )


# The opponent's seat in :func:`facts_statement`, for a statement that reads more of it.
OPPONENT = aliased(Player, name="opponent")


def facts_statement(*, with_state: bool) -> Select[*tuple[Any, ...]]:
    """The player's row by ``:player_id`` with what :func:`facts_of` makes facts of (and the
    player's ``link_key`` and the game's ``match_id``), joined to their game and
    :data:`OPPONENT`."""
    columns = (
        Player.link_key,
        Player.seat,
        Player.history_mark,
        Player.name,
        Player.computer_level,
        OPPONENT.name.label("their_name"),
        OPPONENT.computer_level.label("their_level"),
        Game.id,
        Game.version,
        Game.status,
        Game.winner,
        Game.look,
        Game.deadline,
        Game.match_id,
    )
    return (
        (select(*columns, Game.state) if with_state else select(*columns))
        .join(Game, Game.id == Player.game_id)
        .join(OPPONENT, (OPPONENT.game_id == Player.game_id) & (OPPONENT.seat != Player.seat))
        .where(Player.id == bindparam("player_id"))
    )


@cache
def _facts_query(with_state: bool) -> Select[Any]:
    """The statement of :func:`stored_seat_facts`, built once: building it costs more than
    running it."""
    return facts_statement(with_state=with_state)


def _tag(facts: list[Any]) -> str:
    return hashlib.blake2b(json.dumps(facts).encode(), digest_size=16).hexdigest()


def since_last_move(view: PlayerView) -> list[tuple[str, Any]]:
    """What happened since the player's own last move, oldest first.

    Each item is ``(kind, what)``: ``("transfer", transfer)`` for an exchange or
    swap settled, ``("trick", entry)`` for a trick completed, ``("round",
    (number, result))`` for a round ended, ``("lead", entry)`` for the
    opponent's lead now on the table.
    """
    since = view["since"]
    seen = view["history"][: len(view["history"]) - len(since)]
    last_seen = (seen[-1]["round"], seen[-1]["trick"]) if seen else (0, 0)
    # A trick of the news that the player led was completed by the opponent: the player's
    # last move came just before, so nothing earlier is news.
    led = next((t for t in since if t["leader"] == view["seat"]), None)
    if led is not None:
        last_seen = (led["round"], led["trick"])
    timed: list[tuple[tuple[int, int, int], str, Any]] = []
    last = view["tricks_per_round"]
    for trick in since:
        timed.append(((trick["round"], trick["trick"], 0), "trick", trick))
        if trick["trick"] == last and len(view["rounds"]) >= trick["round"]:
            result = (trick["round"], view["rounds"][trick["round"] - 1])
            timed.append(((trick["round"], last, 2), "round", result))
    table = view["table"]
    # A lead of the player's own on the table is their last move: every transfer came before.
    led_since = bool(table) and table[0]["seat"] == view["seat"]
    for transfer in view["transfers"]:
        when = (transfer["round"], transfer["after_trick"])
        if when >= last_seen and not led_since:
            timed.append(((*when, 1), "transfer", transfer))
    news = [(kind, what) for _, kind, what in sorted(timed, key=lambda item: item[0])]
    if len(table) == 1 and table[0]["seat"] != view["seat"]:
        news.append(("lead", table[0]))
    return news


def iso(moment: datetime | None) -> str | None:
    """A moment as the view gives it: ISO 8601, to the second."""
    return moment.isoformat(timespec="seconds") if moment else None
