"""What the admin's game page shows, and what it keeps back while the game is live.

An admin may be a player, or a player's friend: while a game is waiting or in
play the page shows only what is public (cards played, tricks, the track), never
a hand, the cards set aside, the cards given in an exchange or swap, or the seed
they were dealt from.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby
from typing import Any

from sqlalchemy import select

from ..addresses import vacation_end
from ..game_text import card_name, computer_name, suit_name, the_seat
from ..models import OPEN_INVITATIONS, OPEN_STATUSES, Event, Game, Invitation, db, utcnow
from ..rules import CHOICE_PHASES, State, track_advances
from ..rules.engine import RoundResult, Trick


def invitation_waited_for(game: Game) -> Invitation | None:
    """The open invitation a waiting game waits on (its creator to confirm their address, or
    its opponent to answer); ``None`` for a game that does not wait, or waits on none."""
    if game.status != "waiting":
        return None
    return db.session.scalars(
        select(Invitation).where(
            Invitation.game_id == game.id, Invitation.status.in_(OPEN_INVITATIONS)
        )
    ).first()


def is_live(game: Game) -> bool:
    """Whether the game keeps secrets: waiting for its players or in play."""
    return game.status in OPEN_STATUSES


@dataclass(frozen=True)
class LogLine:
    """One event of the game's log, as the admin reads it."""

    event: Event
    text: str


def _play_text(action: dict[str, Any], look: str) -> str:
    text = f"played {card_name(action['play'], look)}"
    if action.get("name"):
        text += f", naming {suit_name(action['name'], look)}"
    return text


def event_text(event: Event, live: bool, look: str = "standard") -> str:
    """What an event says; exchanges, swaps and the seed stay secret while ``live``."""
    action = event.action or {}
    if event.kind == "move":
        for kind in CHOICE_PHASES:
            if kind in action:
                cards = action[kind]
                if live:
                    return f"{kind}: chose {len(cards)} card{'s' if len(cards) != 1 else ''}"
                return f"{kind}: gave " + ", ".join(card_name(card, look) for card in cards)
        if "play" in action:
            return _play_text(action, look)
        return ""  # a move's note is the players' table talk, never the log's text
    if event.kind == "created":
        return "dealt" if live or not event.note else f"dealt from {event.note}"
    return event.note or ""


def log_lines(game: Game, events: list[Event]) -> list[LogLine]:
    """The game's log, oldest first, with the secrets of a live game left out."""
    live = is_live(game)
    return [LogLine(event, event_text(event, live, game.look)) for event in events]


@dataclass(frozen=True)
class RoundHistory:
    """The tricks of one round, and its result once it is over (with how far it really moved
    the track: no further than its end)."""

    number: int
    tricks: list[Trick]
    result: RoundResult | None
    moved: int | None


def history(state: State) -> list[RoundHistory]:
    """The public history, trick by trick, round by round."""
    results, advances = state["rounds"], track_advances(state)
    return [
        RoundHistory(
            number=number,
            tricks=list(tricks),
            result=results[number - 1] if number <= len(results) else None,
            moved=advances[number - 1] if number <= len(results) else None,
        )
        for number, tricks in groupby(state["history"], key=lambda entry: entry["round"])
    ]


def owes(game: Game) -> str:
    """Who owes a move, in words: the computer named as such, as the mail worker makes its
    moves (one it owes for long says the worker is not passing)."""
    if game.to_act == "both":
        return "both players"
    if not game.to_act:
        return "nobody"
    seat = the_seat(game.to_act, game.look)  # "Jekyll" in the classic look, not "the Jekyll"
    player = game.player(game.to_act)  # type: ignore[arg-type]
    if player.computer_level is not None:
        return f"{seat}, {computer_name(player.computer_level)}"
    return seat


def vacations(game: Game) -> dict[str, str]:
    """Until when each player of a game in play is on vacation (UTC, to the minute), by seat."""
    if game.status != "active":
        return {}
    now = utcnow()
    ends = {player.seat: vacation_end([player.email], now) for player in game.players}
    return {seat: end.strftime("%Y-%m-%d %H:%M") for seat, end in ends.items() if end}
