"""The searches' play-out on bit masks makes the same plays as card sense on a Round."""

from __future__ import annotations

import random

import pytest

from service.bots.cardsense import pick_play, swap_both
from service.bots.playout import cards_of, finish, mask_of
from service.bots.round_model import SUIT, Round


def card_sense_finish(world: Round) -> list[tuple[int, int]]:
    """The round played out card by card with card sense; the plays made, swaps as (-1, -1)."""
    plays = []
    while not world.over:
        if world.swap_due:
            swap_both(world)
            plays.append((-1, -1))
        else:
            card, name = pick_play(world, world.to_play)
            world.play(card, name)
            plays.append((card, name))
    return plays


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


def state_of(world: Round) -> tuple[object, ...]:
    return (
        [sorted(hand) for hand in world.hands],
        world.place,
        world.placed,
        world.tricks,
        world.leader,
        world.trick,
        world.lead,
        world.name,
        world.swap_due,
    )


@pytest.mark.parametrize("swap_size", [2, 3])
def test_a_play_out_ends_as_card_sense_ends_it(swap_size: int) -> None:
    rng = random.Random(swap_size)
    swaps = 0
    for _ in range(2000):
        world = random_round(rng, swap_size)
        expected = world.copy()
        swaps += (-1, -1) in card_sense_finish(expected)
        finish(world)
        assert state_of(world) == state_of(expected)
    assert swaps > 100


def test_a_mask_holds_a_hand() -> None:
    hand = [24, 3, 17, 0, 9]
    assert sorted(cards_of(mask_of(hand))) == sorted(hand)
