"""Information-set Monte Carlo tree search over the plays of a round (``hard``).

Each iteration deals the unseen cards afresh (``knowledge``), walks down a
tree of plays shared by all the deals, choosing at each node by UCB among the
plays that deal allows (a play is scored by how often it was available, not
by how often its parent was visited), adds one new play to the tree, plays
the round out with card sense (``playout``) and scores its end by the
Shadow's chance to win the game (``values``). Nodes where the Keeper plays
prefer low scores, nodes where the Shadow plays high ones, so the opponent's
answers are searched as well as the seat's own. The play tried most often at
the root is chosen.

The search stops after ``playouts`` iterations, or earlier once no play can
catch up with the one tried most, or when ``budget_ms`` of the thread's
processor time are spent (both checked every ``CHECK_EVERY`` iterations).
A swap inside the tree is made with card sense for both seats; an exchange
or a swap owed at the root is weighed by :class:`search.FlatSearch`.
"""

from __future__ import annotations

import random
import time
from math import log, sqrt

from service.rules.names import PLAY

from .cardsense import swap_both
from .knowledge import View, acting_phase, read
from .playout import final_tricks
from .round_model import ELIXIR_SUIT, NO_CARD, SHADOW, SUIT, Round
from .search import FlatSearch, deadline, play_moves
from .simple import Action, play_action
from .values import round_end_value

Play = tuple[int, int]
# Exploration weight of UCB; scores are chances between 0 and 1.
EXPLORATION = 0.7
# Iterations between checks of whether the most tried play can still be caught, and of the
# clock (reading the thread's processor time costs as much as a tenth of an iteration).
CHECK_EVERY = 32
# The plays of each card, leading (an elixir names each suit in turn) and following.
LEADS: tuple[tuple[Play, ...], ...] = tuple(
    ((card, 0), (card, 1), (card, 2)) if SUIT[card] == ELIXIR_SUIT else ((card, -1),)
    for card in range(len(SUIT))
)
FOLLOWS: tuple[Play, ...] = tuple((card, -1) for card in range(len(SUIT)))


class Node:
    """A play in the tree: how often it was tried and available, and the sum of its scores."""

    __slots__ = ("children", "visits", "total", "available")

    def __init__(self) -> None:
        self.children: dict[Play, Node] = {}
        self.visits = 0
        self.total = 0.0
        self.available = 0


class TreeSearch:
    """Information-set MCTS for plays; halving over imagined deals for exchanges and swaps."""

    def __init__(self, *, playouts: int, budget_ms: float | None, gifts: int) -> None:
        self.playouts = playouts
        self.budget_ms = budget_ms
        self.choices = FlatSearch(playouts=playouts, budget_ms=budget_ms, gifts=gifts)

    def choose(self, view: View, rng: random.Random) -> Action:
        """The play tried most often by the tree search, or the halving's exchange or swap."""
        phase = acting_phase(view)
        if phase != PLAY:
            return self.choices.choose(view, rng)
        known = read(view)
        moves = play_moves(view)
        if len(moves) == 1:
            return play_action(*moves[0])
        stop_at = deadline(self.budget_ms)
        root = Node()
        rounds_left = known.last_round - known.round
        for iteration in range(self.playouts):
            if iteration % CHECK_EVERY == 0 and (
                _settled(root, self.playouts - iteration)
                or (stop_at is not None and time.thread_time() > stop_at)
            ):
                break
            world = known.round_with(known.sample(rng))
            path = _descend(root, world)
            keeper_tricks, shadow_tricks = final_tricks(world)
            score = round_end_value(
                known.track, abs(keeper_tricks - shadow_tricks), rounds_left, known.track_length
            )
            for node in path:
                node.visits += 1
                node.total += score
        best = max(moves, key=lambda move: _visits(root, move))
        return play_action(*best)


def _settled(root: Node, left: int) -> bool:
    """Whether the most tried play stays ahead whatever the ``left`` iterations do."""
    visits = sorted((child.visits for child in root.children.values()), reverse=True)
    return len(visits) > 1 and visits[0] - visits[1] > left


def _visits(root: Node, move: Play) -> int:
    child = root.children.get(move)
    return child.visits if child else 0


def _descend(root: Node, world: Round) -> list[Node]:
    """Walk down the tree in ``world``, adding one play; returns the nodes passed."""
    node = root
    path = [root]
    while not world.over:
        if world.swap_due:
            swap_both(world)
            continue
        seat = world.to_play
        moves = _plays(world, seat)
        children = node.children
        for move in moves:
            if move not in children:
                child = children[move] = Node()
                child.available = 1
                world.play(*move)
                path.append(child)
                return path
        best_score = -1.0
        chosen = moves[0]
        for move in moves:
            child = children[move]
            child.available += 1
            visits = child.visits
            mean = child.total / visits
            if seat != SHADOW:
                mean = 1.0 - mean
            score = mean + EXPLORATION * sqrt(log(child.available) / visits)
            if score > best_score:
                best_score = score
                chosen = move
        node = children[chosen]
        world.play(*chosen)
        path.append(node)
    return path


def _plays(world: Round, seat: int) -> list[Play]:
    """Every play for ``seat``, to play in ``world``: an elixir lead once for each suit named."""
    cards = world.playable(seat)
    if world.lead != NO_CARD:
        return [FOLLOWS[card] for card in cards]
    return [play for card in cards for play in LEADS[card]]
