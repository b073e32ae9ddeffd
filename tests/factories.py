"""Games brought to a point of play from a seed, without a round trip per move.

:func:`helpers.play_to_end` plays a game as its players would: each move in a
transaction of its own, after reading both seats' views from the database. A
test that only needs a game in mid-play, or finished, reaches the same game
faster here: the moves are picked on the engine's state in memory (the same
moves :func:`helpers.play_to_end` picks for the same seed), then applied by
the service itself (:func:`service.games.apply_move`), all in one transaction.
The game is left as the service leaves a played one: its state and version,
an event per move, each player's mark in the history, the figures of a
finished game, the emails each move queued (a turn email withdrawn by its
reader's next move), the second game of a return match. Only the moments
differ: the moves are made within a fraction of a second.

``tests/test_factories.py`` compares a game made here with one played move by
move for the same seed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

from flask import Flask

from bench.random_play import pick_action
from service import bots, games
from service.computer import rng_for
from service.models import Event, Game, db
from service.rules import SEATS, Seat, State, apply, seat_view, to_act
from service.rules.seat_view import SeatView
from service.unit_of_work import transaction

Until = Callable[[dict[str, Any]], bool]
Move = tuple[Seat, dict[str, Any]]


def keeper_view(state: State, version: int) -> dict[str, Any]:
    """The Keeper's view of ``state`` as far as ``until`` tests read it (the engine's view,
    with the game's version and status)."""
    view: dict[str, Any] = {**seat_view(state, "keeper"), "version": version}
    view["status"] = "finished" if state["phase"] == "over" else "active"
    return view


def planned_moves(
    state: State, seed: int, until: Until | None = None, version: int = 0
) -> list[Move]:
    """The moves :func:`helpers.play_to_end` makes from ``state`` for ``seed``, in order.

    Picked as it picks them, from the same random numbers: a seat among those
    who owe a move, then an action among that seat's legal ones. It stops when
    the game is over, or when ``until`` holds for the Keeper's view.
    """
    rng = random.Random(seed)
    done = until or (lambda view: view["phase"] == "over")
    moves: list[Move] = []
    for _ in range(300):
        if done(keeper_view(state, version + len(moves))):
            return moves
        views = {seat: seat_view(state, seat) for seat in SEATS}
        seat = rng.choice([s for s in SEATS if views[s]["your_turn"]])
        action = pick_action(dict(views[seat]), rng)
        state = apply(state, seat, action)
        moves.append((seat, action))
    raise AssertionError("the game did not get there in 300 moves")


def played_against_computer(
    app: Flask, game_id: int, seed: int = 1, until: Until | None = None, *, emails: bool = True
) -> dict[str, Any]:
    """A game against the computer played on as ``test_computer.play_to_the_end`` plays it.

    The person makes a random legal move whenever they owe one (from ``seed``);
    the computer makes the move its level chooses from its view, with the
    random source the worker gives it at that version (:func:`service.computer.rng_for`),
    as the worker would at once. Applied in one transaction; returns the Keeper's view then.
    Without ``emails``, all moves but the last are written at once (:func:`write_moves`),
    without the emails they would queue, and the last is applied through the service.
    """
    with app.app_context():
        game = db.session.get_one(Game, game_id)
        state, version = game.state, game.version
        levels = {p.seat: p.computer_level for p in game.players if p.computer_level}
        db.session.remove()
    rng = random.Random(seed)
    done = until or (lambda view: view["phase"] == "over")
    moves: list[Move] = []
    while not done(keeper_view(state, version + len(moves))):
        acting = to_act(state)
        seat = next((s for s in acting if s not in levels), acting[0])
        view = seat_view(state, seat)
        if seat in levels:
            with app.app_context():
                computer_rng = rng_for(game_id, version + len(moves))
            action = dict(bots.choose(levels[seat], view, computer_rng))
        else:
            action = pick_action(dict(view), rng)
        state = apply(state, seat, action)
        moves.append((seat, action))
        assert len(moves) < 300, "the game did not get there in 300 moves"
    if emails:
        apply_moves(app, game_id, moves)
    else:
        write_moves(app, game_id, moves[:-1])
        apply_moves(app, game_id, moves[-1:])
    return keeper_view(state, version + len(moves))


def apply_moves(app: Flask, game_id: int, moves: list[Move]) -> None:
    """Apply ``moves`` to the game through the service, in one transaction."""
    with app.app_context():
        with transaction():
            game = db.session.get_one(Game, game_id)
            for seat, action in moves:
                version = game.version
                game = games.apply_move(game.player(seat).id, version, action)
                assert game.version == version + 1
        db.session.remove()


def write_moves(app: Flask, game_id: int, moves: list[Move]) -> None:
    """Write the game as the service leaves it after ``moves``, without queueing their emails.

    The moves are applied on the engine's state in memory; then the game's row
    is written as the service writes it after its last move (state, version,
    who owes a move, the deadline, the result; :func:`service.games._refresh`),
    with an event per move, each player's mark in the history, and the
    figures and a return match's second game when it has ended. The emails
    the moves would have queued are not: the game's outbox is left as it was.
    """
    with app.app_context():
        with transaction():
            game = games.lock_game(game_id)
            state, version = game.state, game.version
            previous, mover = to_act(state), None
            for seat, action in moves:
                previous, mover = to_act(state), seat
                state = apply(state, seat, action)
                version += 1
                game.events.add(Event(kind="move", seat=seat, action=action, version=version))
                game.player(seat).history_mark = len(state["history"])
            if moves:
                game.state, game.version = state, version
                games._refresh(game, previous=previous, mover=mover)
                if game.status == "finished" and game.match_game == 1:
                    games._start_second_game(game)
        db.session.remove()


def written(app: Flask, game_id: int, seed: int, until: Until | None = None) -> dict[str, Any]:
    """The game of :func:`played`, written at once (:func:`write_moves`): for a test that
    reads no email of its moves. Returns the Keeper's view of the engine then."""
    with app.app_context():
        game = db.session.get_one(Game, game_id)
        state, version = game.state, game.version
        db.session.remove()
    moves = planned_moves(state, seed, until, version)
    write_moves(app, game_id, moves)
    for seat, action in moves:
        state = apply(state, seat, action)
    return keeper_view(state, version + len(moves))


def one_by_one(
    app: Flask, game_id: int, seed: int, until: Until | None = None
) -> Iterator[tuple[Seat, SeatView, State]]:
    """Play on as :func:`helpers.play_to_end` does for ``seed``, each move in a transaction
    of its own as a player makes it; after each, yield the mover, their view before the move
    and the state after it.

    For a test that looks at the game between moves: the moves are picked in
    memory, so nothing is read from the database but what the test reads.
    """
    with app.app_context():
        game = db.session.get_one(Game, game_id)
        state, version = game.state, game.version
        db.session.remove()
    for seat, action in planned_moves(state, seed, until, version):
        view = seat_view(state, seat)
        apply_moves(app, game_id, [(seat, action)])
        state = apply(state, seat, action)
        yield seat, view, state


def played(
    app: Flask, game_id: int, seed: int, until: Until | None = None, *, emails: bool = True
) -> dict[str, Any]:
    """The game played on as :func:`helpers.play_to_end` plays it for ``seed``, to its end or
    until ``until`` holds; returns the Keeper's view of the engine then (as :func:`keeper_view`).

    Without ``emails``, all moves but the last are written at once (:func:`write_moves`),
    without the emails they would queue, and the last is applied through the service: the
    emails of the end of the game (or of the move it stops after) are there, the others not.
    """
    with app.app_context():
        game = db.session.get_one(Game, game_id)
        state, version = game.state, game.version
        db.session.remove()
    moves = planned_moves(state, seed, until, version)
    if emails:
        apply_moves(app, game_id, moves)
    else:
        write_moves(app, game_id, moves[:-1])
        apply_moves(app, game_id, moves[-1:])
    for seat, action in moves:
        state = apply(state, seat, action)
    return keeper_view(state, version + len(moves))
