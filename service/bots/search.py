"""Flat search over the cards a seat cannot see: determinized play-outs (``medium``).

For each move it could make, the seat imagines many deals of the unseen cards,
each consistent with everything it has seen (``knowledge``), makes the move in
each, plays the round out with card sense for both seats (``playout``) and
scores the end of the round by the Shadow's chance to win the game from there
(``values``). The Shadow picks the move with the highest mean score, the
Keeper the lowest. Every move is tried on the same imagined deals, so the
comparison is not blurred by the luck of the deal.

Moves are weeded out by successive halving: each stage tries the moves still
in the running on fresh deals and keeps the better half, so most play-outs go
to the moves worth telling apart. ``playouts`` bounds the work (the result
depends only on the view and the random generator), and ``budget_ms``, when
set, stops the search early on a slow machine: it counts the processor time
of the thread that searches, so a busy machine delays the answer but does not
weaken it. The clock is read before each imagined deal, not before each
play-out: reading it costs about a fifth of a play-out. The ``hard`` level
weighs its exchanges and swaps this way too.
"""

from __future__ import annotations

import math
import random
import time

from service.rules.names import EXCHANGE, PLAY

from .cardsense import keep_strength, pick_give
from .knowledge import Knowledge, View, acting_phase, read
from .playout import final_tricks
from .round_model import (
    CARD_INDEX,
    ELIXIR_SUIT,
    KEEPER,
    POWER,
    SHADOW,
    SUIT,
    SUIT_LETTERS,
    Round,
)
from .simple import Action, gift_sets, give_action, play_action
from .values import round_end_value

# A move is a card to play with the suit it names (-1 for none), or the cards to give.
Move = tuple[int, int] | tuple[int, ...]


class FlatSearch:
    """Determinized play-outs with successive halving over the seat's moves."""

    def __init__(self, *, playouts: int, budget_ms: float | None, gifts: int) -> None:
        self.playouts = playouts
        self.budget_ms = budget_ms
        self.gifts = gifts

    def choose(self, view: View, rng: random.Random) -> Action:
        """The move with the best mean outcome over imagined deals of the unseen cards."""
        phase = acting_phase(view)
        known = read(view)
        moves = _moves(view, phase, self.gifts)
        if len(moves) == 1:
            return _action(phase, moves[0])
        best = self._halve(known, phase, moves, rng, deadline(self.budget_ms))
        return _action(phase, moves[best])

    def _halve(
        self,
        known: Knowledge,
        phase: str,
        moves: list[Move],
        rng: random.Random,
        stop_at: float | None,
    ) -> int:
        """The index of the best move, found by successive halving within the budget."""
        sign = 1.0 if known.seat == SHADOW else -1.0
        totals = [0.0] * len(moves)
        counts = [0] * len(moves)
        alive = list(range(len(moves)))
        stages = max(1, math.ceil(math.log2(len(moves))))
        for _stage in range(stages):
            deals = max(1, self.playouts // (len(alive) * stages))
            for _ in range(deals):
                if stop_at is not None and time.thread_time() > stop_at:
                    return _best(alive, totals, counts, sign)
                world = known.round_with(known.sample(rng))
                for index in alive:
                    totals[index] += _play_out(world, known, phase, moves[index])
                    counts[index] += 1
            if len(alive) > 1:
                ranked = sorted(alive, key=lambda i: (-sign * totals[i] / counts[i], i))
                alive = sorted(ranked[: max(1, (len(alive) + 1) // 2)])
        return _best(alive, totals, counts, sign)


def deadline(budget_ms: float | None) -> float | None:
    """The thread's processor time at which a search with ``budget_ms`` stops, if it has one."""
    return None if budget_ms is None else time.thread_time() + budget_ms / 1000


def _best(alive: list[int], totals: list[float], counts: list[int], sign: float) -> int:
    """The best of the moves tried so far (the first move when time ran out before any)."""
    tried = [index for index in alive if counts[index]] or alive[:1]
    return min(tried, key=lambda i: (-sign * totals[i] / counts[i] if counts[i] else 0.0, i))


def _moves(view: View, phase: str, gifts: int) -> list[Move]:
    """The moves to weigh, in a fixed order: every play, and at most ``gifts`` sets of cards.

    An exchange of three cards has up to 120 sets to choose from; more than
    ``gifts`` are thinned to evenly spaced ones from the weakest set to the
    strongest, so each is still tried on a fair number of deals.
    """
    if phase == PLAY:
        return list(play_moves(view))
    sets = gift_sets(view)
    if len(sets) <= gifts:
        return sets
    sets.sort(key=lambda combo: (sum(POWER[card] for card in combo), combo))
    step = (len(sets) - 1) / (gifts - 1)
    return [sets[round(spot * step)] for spot in range(gifts)]


def play_moves(view: View) -> list[tuple[int, int]]:
    """The legal plays of the view as (card, suit named or -1), in the view's order."""
    legal = view["legal"]
    assert isinstance(legal, list), "a play is owed"
    return [
        (CARD_INDEX[action["play"]], SUIT_LETTERS.index(action["name"]) if "name" in action else -1)
        for action in legal
    ]


def _action(phase: str, move: Move) -> Action:
    if phase == PLAY:
        card, name = move
        return play_action(card, name)
    return give_action(phase, list(move))


def _play_out(world: Round, known: Knowledge, phase: str, move: Move) -> float:
    """Make ``move`` in ``world``, play the round out with card sense, score its end.

    ``world`` itself is left as it is, for the other moves.
    """
    seat = known.seat
    if phase == PLAY:
        keeper_tricks, shadow_tricks = final_tricks(world, (move[0], move[1]))
    else:
        world = world.copy()
        opponent = 1 - seat
        held = world.hands[opponent]
        must = phase == EXCHANGE and sum(1 for card in held if SUIT[card] == ELIXIR_SUIT) >= 2
        theirs = pick_give(held, known.choice_size, must, keep_strength(world, opponent))
        mine = list(move)
        world.swap(*((mine, theirs) if seat == KEEPER else (theirs, mine)))
        keeper_tricks, shadow_tricks = final_tricks(world)
    return round_end_value(
        known.track,
        abs(keeper_tricks - shadow_tricks),
        known.last_round - known.round,
        known.track_length,
    )
