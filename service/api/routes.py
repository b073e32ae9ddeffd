"""``GET /api/play/<token>`` returns the seat's view; ``POST`` applies a move (one transaction)."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from flask import Response, current_app, jsonify, request
from flask.typing import ResponseReturnValue
from flask_babel import force_locale
from sqlalchemy import Connection
from werkzeug.datastructures import ETags

from .. import games, notes
from ..errors import NOT_FOUND, error_response
from ..game_text import effect_text, seat_name, swap_pending
from ..language import DEFAULT_LANGUAGE
from ..links import linked_player, signed_link
from ..models import Game, Player
from ..perspective import (
    MatchScore,
    PlayerView,
    SeatFacts,
    match_summary,
    player_view,
    seat_facts,
    stored_seat_facts,
    stored_view_tag,
    tag_of,
    view_of,
)
from ..request_limits import RepeatedKey
from ..rules import CHOICE_PHASES, PRINTED, SEATS, ActionError, Seat, parse_action
from ..unit_of_work import reading, transaction
from . import bp
from .openapi import document


@bp.get("/play/<token>")
def view(token: str) -> ResponseReturnValue:
    """The seat's view as JSON, with an ETag: a poll of an unchanged game gets a bodiless 304.

    Answered from one read by primary key with no ORM object made
    (:func:`stored_answer`), except for a game of a return match, whose score
    reads the other game.
    """
    signed = signed_link(token)
    if signed is None:
        return error_response(404, "not_found", NOT_FOUND)
    reading()
    answer = stored_answer(signed, request.if_none_match)
    if answer is not None:
        return answer
    player = linked_player(signed)
    if player is None:
        return error_response(404, "not_found", NOT_FOUND)
    return _answer(seat_facts(player), match_summary(player), request.if_none_match)


def stored_answer(
    signed: tuple[int, str], seen: ETags, *, connection: Connection | None = None
) -> Response | None:
    """The view's answer to a request for the link ``signed`` (:func:`signed_link`) with
    the ETags ``seen`` (``If-None-Match``), read by primary key (on ``connection``, the
    session's unless given) in the language in use.

    A poll (``seen`` not empty) reads the view's tag first, without the game's
    state (:func:`stored_view_tag`): a bodiless 304 when it is one seen; the
    view from a second read otherwise (:func:`stored_seat_facts`), as a request
    without ETags reads it at once. ``None`` for a link that is not the
    player's and for a game of a return match: those take the ORM's read.
    """
    if seen:
        tag = stored_view_tag(*signed, connection=connection)
        if tag is None:
            return None
        if seen.contains_weak(tag):
            return not_modified(tag)
    facts = stored_seat_facts(*signed, connection=connection)
    return None if facts is None else _answer(facts, None, seen)


def _answer(facts: SeatFacts, match: MatchScore | None, seen: ETags) -> Response:
    """The view of ``facts`` with its ETag, or a bodiless 304 when it is one ``seen``."""
    tag = tag_of(facts, match)
    if seen.contains_weak(tag):
        return not_modified(tag)
    response = jsonify(with_texts(view_of(facts, match)))
    response.set_etag(tag)
    return response


@bp.get("/play/<token>/notes")
def opponent_notes(token: str) -> ResponseReturnValue:
    """The opponent's latest notes, oldest first, and whether the game's notes are on.

    Read apart from the view, which a poll of the game reads often: the notes
    change only with a move, which changes the view's version, or when either
    player turns them off.
    """
    signed = signed_link(token)
    if signed is None:
        return error_response(404, "not_found", NOT_FOUND)
    reading()  # before the first read, or a transaction is open already
    player = linked_player(signed)
    if player is None:
        return error_response(404, "not_found", NOT_FOUND)
    theirs = notes.from_opponent(player)
    return jsonify({"on": theirs is not None, "notes": theirs or []})


def not_modified(tag: str) -> Response:
    """304: the view whose ETag the client sent is the current one."""
    response = Response(status=304)
    response.set_etag(tag)
    return response


@bp.post("/play/<token>")
def move(token: str) -> ResponseReturnValue:
    """Apply ``{"version": V, <action>, "note": N?}``; answer with the new view."""
    signed = signed_link(token)
    if signed is None:
        return error_response(404, "not_found", NOT_FOUND)
    player_id, key = signed
    try:
        version, action, note = _read_move(json_body())
        with transaction():
            # The link is checked against the player read with the game, under its lock.
            game = games.apply_move(player_id, version, action, note, link_key=key)
            # The view of what was just written, before the commit lets the ORM forget it,
            # from the game as applied: the session keeps a flushed game only while something
            # refers to it, and the player alone would read it all again.
            answer = api_view(next(seat for seat in game.players if seat.id == player_id))
    except games.IllegalMove as exc:  # the rule's name lets a client explain it in its own words
        return error_response(exc.status, exc.code, exc.message, rule=exc.rule)
    except games.MoveError as exc:
        # A body is checked before the link is looked up: a link that is no one's is told so.
        if exc.status == 400 and linked_player(signed) is None:
            return error_response(404, "not_found", NOT_FOUND)
        return error_response(exc.status, exc.code, exc.message)
    return jsonify(answer)


@bp.post("/play/<token>/resign")
def resign(token: str) -> ResponseReturnValue:
    """Resign the game, ``{"version": V}`` the version seen: the opponent wins it. Answers with
    the view of the game ended."""
    return _act_on_version(token, games.resign)


@bp.post("/play/<token>/remind")
def remind(token: str) -> ResponseReturnValue:
    """Remind the opponent of the move they owe, ``{"version": V}`` the version seen: once per
    move, once it has waited a day (409 ``refused`` otherwise, saying why). Answers with the
    view."""
    return _act_on_version(token, games.remind_opponent)


def _act_on_version(token: str, act: Callable[..., Game]) -> ResponseReturnValue:
    """Apply ``act(player_id, version, link_key=...)`` to the body ``{"version": V}``, in one
    transaction; answer with the player's view of the game after it, or the error."""
    signed = signed_link(token)
    if signed is None:
        return error_response(404, "not_found", NOT_FOUND)
    player_id, key = signed
    try:
        body = json_body()
        if not isinstance(body, dict) or set(body) != {"version"}:
            raise games.BadMove(
                'Send the version of the game you saw, and nothing else: {"version": V}.'
            )
        with transaction():
            game = act(player_id, _whole(body["version"]), link_key=key)
            answer = api_view(next(seat for seat in game.players if seat.id == player_id))
    except games.MoveError as exc:
        if exc.status == 400 and linked_player(signed) is None:
            return error_response(404, "not_found", NOT_FOUND)
        return error_response(exc.status, exc.code, exc.message)
    return jsonify(answer)


# Why a posted body was not read, in the API's English.
NOT_JSON = 'Send the body as JSON, with the header "Content-Type: application/json".'
UNREADABLE_JSON = "The body is not JSON that can be read."


def json_body() -> object:
    """The posted body's JSON value, or :class:`games.BadMove` saying why it is none: the
    request does not say it is JSON (its ``Content-Type``), it is not JSON that can be read,
    or an object of it names a key twice.
    """
    if not request.is_json:
        raise games.BadMove(NOT_JSON)
    try:
        return current_app.json.loads(request.get_data(cache=True))
    except RepeatedKey as exc:
        raise games.BadMove(f"{exc} Send each key once.") from None
    except ValueError:
        raise games.BadMove(UNREADABLE_JSON) from None


def _whole(number: object) -> object:
    """JSON has one kind of number: ``4.0`` is the integer 4, as the document says."""
    if isinstance(number, float) and number.is_integer():
        return int(number)
    return number


def api_view(player: Player) -> dict[str, Any]:
    """The player's view as the API answers it (:func:`with_texts`)."""
    return with_texts(player_view(player))


def with_texts(seen: PlayerView) -> dict[str, Any]:
    """A seat's view, each trick of its history with ``text``: what its elixir did, in English
    (the Swap being chosen "gives" until both have chosen, as on the page).

    The words are made here from the trick's facts, like the API's other English
    (its error messages); the seats go by their own names, Keeper and Shadow.
    """
    view: dict[str, Any] = {**seen}
    for key in ("history", "since"):
        view[key] = [
            {
                **entry,
                "text": english_effect(
                    entry["effect"], entry["outcome"], entry["winner"], swap_pending(entry, seen)
                ),
            }
            for entry in view[key]
        ]
    return view


@lru_cache(maxsize=128)
def english_effect(effect: str | None, outcome: str, winner: Seat, pending: bool) -> str:
    """:func:`effect_text` in English of a trick's facts (all it reads), the seats named Keeper
    and Shadow. Made once for each facts, as the words depend on nothing else: forcing
    the English locale and looking its catalogue up cost each view some 150 function
    calls, a tenth of its own."""
    with force_locale(DEFAULT_LANGUAGE):
        names: dict[str, str] = {seat: seat_name(seat) for seat in SEATS}
        trick = {"effect": effect, "outcome": outcome, "winner": winner}
        return effect_text(trick, names, pending=pending)


def _read_move(body: object) -> tuple[object, dict[str, Any], object]:
    """The version, the action and the note of a posted body, or :class:`games.BadMove`.

    The shape is checked before the game is read, so a body the document's Move
    schema refuses is a 400 whatever the game's state; whether the move is legal
    now is the rules' question (422). The link says whose move it is: the body
    names no seat. JSON has one kind of number, so ``4.0`` is the integer version
    4, as the schema says.
    """
    if not isinstance(body, dict):
        raise games.BadMove('Send a JSON object: {"version": V, ...move}.')
    action = {key: value for key, value in body.items() if key not in ("version", "note")}
    if "seat" in action:
        raise games.BadMove('unexpected key "seat": the link says whose move it is')
    try:
        kind, _ = parse_action(action)
    except ActionError as exc:
        raise games.BadMove(str(exc)) from None
    if kind in CHOICE_PHASES:  # at most the printed rules' cards: the only games dealt
        cards, most = action[kind], PRINTED.most_given(kind)
        if not 1 <= len(cards) <= most or len(set(cards)) < len(cards):
            raise games.BadMove(f'"{kind}" takes 1 to {most} different cards')
    # Both checked by apply_move, before the game is read: the version must be an integer,
    # the note one that notes.clean keeps, or null for none.
    return _whole(body.get("version")), action, body.get("note")


@bp.get("/openapi.json")
def openapi() -> ResponseReturnValue:
    """The OpenAPI document of this API."""
    return jsonify(document())
