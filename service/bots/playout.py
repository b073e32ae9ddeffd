"""A round played out to its end with card sense for both seats, on hands held as bit masks.

This is the searches' inner loop: ``medium`` and ``hard`` play out tens of
thousands of imagined rounds a game. It makes exactly the plays and swaps of
:func:`cardsense.pick_play` and :func:`cardsense.swap_both` on a
:class:`round_model.Round` (``tests/bots/test_playout.py`` checks it on random
rounds), but holds each hand as one integer whose bits are its cards in order
of :data:`cardsense.RANKED`. Card sense always plays the lowest or highest
ranked card of a set (the cards that follow suit, that win the trick, of the
suits led first...), and on a mask that set is an ``&`` and the card its lowest
or highest bit.
"""

from __future__ import annotations

from .cardsense import DUCK, EITHER, MEAN_POWER, RANKED, TAKE
from .round_model import (
    ELIXIR_SUIT,
    KEEPER,
    NO_CARD,
    POWER,
    RESET,
    STEAL,
    SUIT,
    SWAP_EFFECT,
    Round,
)

# Bit i of a hand's mask is the card ORDER[i]: the cards from the lowest ranked to the highest.
ORDER = tuple(sorted(range(len(SUIT)), key=RANKED.__getitem__))
BIT = tuple(1 << ORDER.index(card) for card in range(len(SUIT)))
SUIT_MASKS = tuple(
    sum(BIT[card] for card in range(len(SUIT)) if SUIT[card] == suit) for suit in range(4)
)
ELIXIR_MASK = SUIT_MASKS[ELIXIR_SUIT]
# The cards that may answer a colour lead of each suit (when the hand holds any): the suit, elixirs.
FOLLOW_MASKS = tuple(SUIT_MASKS[suit] | ELIXIR_MASK for suit in range(3))
# The cards that beat ``lead`` by value: higher, of its suit, or with an elixir on either side.
BEATS_BY_VALUE = tuple(
    sum(
        BIT[card]
        for card in range(len(SUIT))
        if POWER[card] > POWER[lead]
        and (SUIT[card] == SUIT[lead] or ELIXIR_SUIT in (SUIT[card], SUIT[lead]))
    )
    for lead in range(len(SUIT))
)
# The value of a hand, by the mask of its low ranked cards and that of its high ranked ones.
LOW_BITS = 13
LOW_CARDS = (1 << LOW_BITS) - 1


def _hand_values(first: int, count: int) -> tuple[int, ...]:
    """The value of each set of ``count`` cards from the bit ``first`` on, by its mask."""
    values = [0]
    for spot in range(first, first + count):
        values += [value + POWER[ORDER[spot]] for value in values]
    return tuple(values)


HAND_VALUE_LOW = _hand_values(0, LOW_BITS)
HAND_VALUE_HIGH = _hand_values(LOW_BITS, len(SUIT) - LOW_BITS)

# The suit order as one number: each colour suit's place (-1 for none) plus one, in base 4.
# Card sense's leads and who wins a trick depend on the order only through the tables below.
PLACES = tuple((code % 4 - 1, code // 4 % 4 - 1, code // 16 - 1) for code in range(64))
NO_ORDER = 0


def _ranked(code: int, suit: int) -> int:
    """The order after a card of ``suit`` is played (:meth:`Round.play`)."""
    place = list(PLACES[code])
    placed = sum(1 for spot in place if spot >= 0)
    if suit == ELIXIR_SUIT or place[suit] >= 0:
        return code
    place[suit] = placed
    if placed + 1 == 2:
        place = [spot if spot >= 0 else 2 for spot in place]
    return order_code(place)


def order_code(place: list[int] | tuple[int, ...]) -> int:
    """The number of a suit order given as each colour suit's place."""
    return (place[0] + 1) + 4 * (place[1] + 1) + 16 * (place[2] + 1)


def _lead_groups(code: int) -> tuple[int, ...]:
    """The cards grouped by the suit's rank in :func:`cardsense.lead_value`, lowest group first.

    A lead's value ranks the suits first (an elixir as the second placed
    suit, a suit with no place as the next one to be placed) and the card
    within them: the highest value a hand holds is the highest ranked card of
    its highest group, the lowest the lowest card of its lowest group.
    """
    place = PLACES[code]
    placed = sum(1 for spot in place if spot >= 0)
    ranks = [spot if spot >= 0 else placed for spot in place] + [1]
    return tuple(
        sum(SUIT_MASKS[suit] for suit in range(4) if ranks[suit] == rank)
        for rank in sorted(set(ranks))
    )


def _winners(lead: int, code: int) -> int:
    """The cards that would win a trick led with ``lead``, as :meth:`Round.beats_lead` says."""
    place = PLACES[code]
    winners = BEATS_BY_VALUE[lead]
    lead_suit = SUIT[lead]
    if lead_suit != ELIXIR_SUIT:
        for suit in range(3):
            if suit != lead_suit and (place[suit] < 0 or place[suit] > place[lead_suit]):
                winners |= SUIT_MASKS[suit]
    return winners


RANKED_AFTER = tuple(tuple(_ranked(code, suit) for suit in range(4)) for code in range(64))
LEAD_GROUPS = tuple(_lead_groups(code) for code in range(64))
LEAD_GROUPS_DOWN = tuple(groups[::-1] for groups in LEAD_GROUPS)
# WINNERS[lead * 64 + code]: the cards that win the trick led with ``lead`` under that order.
WINNERS = tuple(_winners(lead, code) for lead in range(len(SUIT)) for code in range(64))


def mask_of(cards: list[int]) -> int:
    """The mask of a hand."""
    mask = 0
    for card in cards:
        mask |= BIT[card]
    return mask


def _strong(mask: int) -> bool:
    """:func:`cardsense.strong` of a mask."""
    value = HAND_VALUE_LOW[mask & LOW_CARDS] + HAND_VALUE_HIGH[mask >> LOW_BITS]
    return bool(mask) and value > MEAN_POWER * mask.bit_count()


def _gives(hand: int, count: int, keep: bool) -> int:
    """:func:`cardsense.pick_give` in a swap: the ``count`` weakest cards, or the strongest."""
    chosen = 0
    for _ in range(count):
        card = hand & -hand if keep else 1 << (hand.bit_length() - 1)
        chosen |= card
        hand ^= card
    return chosen


def _name(hand: int, take: bool) -> int:
    """:func:`cardsense.name_for` on a mask."""
    counts = [(hand & SUIT_MASKS[suit]).bit_count() for suit in range(3)]
    if take:
        return max(range(3), key=lambda suit: (counts[suit], -suit))
    return min(range(3), key=lambda suit: (counts[suit], suit))


def final_tricks(world: Round, first: tuple[int, int] | None = None) -> tuple[int, int]:
    """The Keeper's and the Shadow's tricks once card sense plays ``world``'s round to its end.

    Both seats play card sense, swaps included, but for ``first``: the card
    the seat to play plays first, with the suit it names (or -1). ``world``
    itself is left as it is.
    """
    hands = [mask_of(world.hands[0]), mask_of(world.hands[1])]
    code = order_code(world.place)
    keeper_tricks, shadow_tricks = world.tricks
    leader = world.leader
    trick = world.trick
    lead = world.lead
    name = world.name
    swap_size = world.swap_size
    swap_due = world.swap_due
    while trick <= 10 or swap_due:
        # What card sense wants (cardsense.aim and keep_strength) hangs on who is ahead:
        # a seat takes when the Keeper is behind, ducks when the Keeper is ahead; at a tie
        # the Keeper does not mind and the Shadow goes the way its hand points.
        ahead = keeper_tricks - shadow_tricks
        if swap_due:
            keeper_keeps = ahead < 0 if ahead else not _strong(hands[0])
            shadow_keeps = ahead < 0 if ahead else _strong(hands[1])
            given = _gives(hands[0], swap_due, keeper_keeps)
            given |= _gives(hands[1], swap_due, shadow_keeps)
            hands[0] ^= given
            hands[1] ^= given
            swap_due = 0
            continue
        follower = 1 - leader
        if lead == NO_CARD:
            hand = hands[leader]
            if first is not None:
                lead, name = first
                first = None
            else:
                take = ahead < 0 if ahead else leader != KEEPER and _strong(hand)
                # The highest card of the highest ranked suits held, or the lowest of the lowest.
                for group in LEAD_GROUPS_DOWN[code] if take else LEAD_GROUPS[code]:
                    if hand & group:
                        break
                group &= hand
                lead = ORDER[(group if take else group & -group).bit_length() - 1]
                name = _name(hand, take) if SUIT[lead] == ELIXIR_SUIT else -1
            hands[leader] = hand ^ BIT[lead]
            code = RANKED_AFTER[code][SUIT[lead]]
        hand = hands[follower]
        lead_suit = SUIT[lead]
        if first is not None:
            card = first[0]
            first = None
        else:
            if lead_suit == ELIXIR_SUIT:
                playable = hand & SUIT_MASKS[name] or hand
            else:
                playable = hand & FOLLOW_MASKS[lead_suit] or hand
            if ahead:
                want = TAKE if ahead < 0 else DUCK
            elif follower == KEEPER:
                want = EITHER
            else:
                want = TAKE if _strong(hand) else DUCK
            if want == TAKE:
                chosen = playable & WINNERS[lead * 64 + code] or playable
                card = ORDER[(chosen & -chosen).bit_length() - 1]
            elif want == DUCK:
                chosen = playable & ~WINNERS[lead * 64 + code] or playable
                card = ORDER[chosen.bit_length() - 1]
            else:
                card = ORDER[(playable & -playable).bit_length() - 1]
        hands[follower] = hand ^ BIT[card]
        suit = SUIT[card]
        code = RANKED_AFTER[code][suit]
        # The trick is complete: who wins it, and what an elixir does.
        effect = -1
        if lead_suit == ELIXIR_SUIT or suit == ELIXIR_SUIT:
            lead_wins = POWER[lead] > POWER[card]
            if lead_suit != suit:
                effect = suit if lead_suit == ELIXIR_SUIT else lead_suit
        elif lead_suit == suit:
            lead_wins = POWER[lead] > POWER[card]
        else:
            place = PLACES[code]
            lead_wins = place[lead_suit] > place[suit]
        winner = leader if lead_wins else follower
        if winner == KEEPER:
            keeper_tricks += 1
            if effect == STEAL and shadow_tricks:
                shadow_tricks -= 1
                keeper_tricks += 1
        else:
            shadow_tricks += 1
            if effect == STEAL and keeper_tricks:
                keeper_tricks -= 1
                shadow_tricks += 1
        if effect == RESET:
            code = NO_ORDER
        elif effect == SWAP_EFFECT:
            swap_due = min(swap_size, hands[0].bit_count())
        leader = winner
        lead = NO_CARD
        trick += 1
    return keeper_tricks, shadow_tricks
