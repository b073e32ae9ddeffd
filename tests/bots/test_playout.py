"""The searches' play-out on bit masks makes the same plays as card sense on a Round."""

from __future__ import annotations

import random

import pytest

from service.bots.cardsense import pick_play, swap_both
from service.bots.playout import final_tricks
from service.bots.round_model import SUIT, Round


def random_round(rng: random.Random, swap_size: int) -> Round:
    """A round dealt at random, advanced by random legal plays to a random trick."""
    cards = list(range(len(SUIT)))
    rng.shuffle(cards)
    world = Round(
        [cards[:10], cards[10:20]],
        place=[-1, -1, -1],
        tricks=[0, 0],
        leader=rng.randrange(2),
        trick=1,
        swap_size=swap_size,
    )
    for _ in range(rng.randrange(20)):
        if world.over:
            break
        if world.swap_due:
            swap_both(world)
            continue
        card = rng.choice(world.playable(world.to_play))
        world.play(card, rng.randrange(3) if SUIT[card] == 3 and world.lead < 0 else -1)
    return world


@pytest.mark.parametrize("swap_size", [2, 3])
def test_a_play_out_ends_as_card_sense_ends_it(swap_size: int) -> None:
    """From every position card sense passes through, the play-out ends with the same tricks."""
    rng = random.Random(swap_size)
    swaps = 0
    for _ in range(500):
        world = random_round(rng, swap_size)
        positions = []
        while not world.over:
            positions.append(world.copy())
            if world.swap_due:
                swap_both(world)
                swaps += 1
            else:
                world.play(*pick_play(world, world.to_play))
        for position in positions:
            before = position.copy()
            assert final_tricks(position) == tuple(world.tricks)
            assert vars_of(position) == vars_of(before)
    assert swaps > 50


def vars_of(world: Round) -> tuple[object, ...]:
    return tuple(getattr(world, name) for name in Round.__slots__)


def test_a_play_out_can_start_with_a_given_play() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        world = random_round(rng, 2)
        if world.over or world.swap_due:
            continue
        card = rng.choice(world.playable(world.to_play))
        name = rng.randrange(3) if SUIT[card] == 3 and world.lead < 0 else -1
        played = world.copy()
        played.play(card, name)
        assert final_tricks(world, (card, name)) == final_tricks(played)
