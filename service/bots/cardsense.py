"""Simple card sense: take a trick when the role's goal wants it, duck it cheaply otherwise.

The Keeper wants the round's tricks even, so it wants the trick that goes to
whoever is behind; the Shadow wants them lopsided, so it wants the trick that
goes to whoever is ahead, and at a tie it heads the way its hand points (a
strong hand takes tricks, a weak one gives them away). Following, it takes a
trick with its cheapest winning card and ducks with its highest losing one;
leading, it leads its strongest card to take and its weakest to duck.

These rules read only the seat's own hand and what is on the table, so they
serve the ``easy`` level on a real position and the search's imagined
opponents and play-outs, where they must be fast.
"""

from __future__ import annotations

from .round_model import ELIXIR_SUIT, KEEPER, NO_CARD, POWER, SHADOW, SUIT, Round

TAKE, DUCK, EITHER = 1, -1, 0
# The mean card value (doubled, as POWER is) of the 25 cards: a hand above it is strong.
MEAN_POWER = sum(POWER) / len(POWER)
# Cards by value, ties broken by their number in the deck: one key for min and max.
RANKED = tuple(power * 32 + card for card, power in enumerate(POWER))


def strong(hand: list[int]) -> bool:
    """Whether a hand is worth more than an average one."""
    return bool(hand) and sum(POWER[card] for card in hand) > MEAN_POWER * len(hand)


def aim(model: Round, seat: int) -> int:
    """Whether ``seat`` wants to TAKE the next trick, DUCK it, or does not mind (EITHER)."""
    mine, theirs = model.tricks[seat], model.tricks[1 - seat]
    if seat == KEEPER:
        return TAKE if mine < theirs else DUCK if mine > theirs else EITHER
    if mine != theirs:
        return TAKE if mine > theirs else DUCK
    return TAKE if strong(model.hands[seat]) else DUCK


def lead_value(model: Round, card: int) -> int:
    """How likely a led card is to take the trick, as one number (higher takes more often).

    Ties are broken by the card's number in the deck, so no two cards are worth the same.
    """
    suit = SUIT[card]
    if suit == ELIXIR_SUIT:
        return RANKED[card] + 14 * 32
    place = model.place[suit]
    return RANKED[card] + 14 * 32 * (place if place >= 0 else model.placed)


def name_for(model: Round, seat: int, take: bool) -> int:
    """The suit to name with an elixir lead: the one the seat holds most of to take, least to duck.

    Holding many of a suit leaves the opponent few of it to answer with.
    """
    counts = [0, 0, 0]
    for card in model.hands[seat]:
        if SUIT[card] != ELIXIR_SUIT:
            counts[SUIT[card]] += 1
    if take:
        return max(range(3), key=lambda suit: (counts[suit], -suit))
    return min(range(3), key=lambda suit: (counts[suit], suit))


def pick_play(model: Round, seat: int) -> tuple[int, int]:
    """The card (and the suit named, or -1) that card sense plays for ``seat``."""
    cards = model.playable(seat)
    want = aim(model, seat)
    if model.lead == NO_CARD:
        values = [lead_value(model, card) for card in cards]
        if want == TAKE:
            card = cards[values.index(max(values))]
        else:
            card = cards[values.index(min(values))]
        name = name_for(model, seat, want == TAKE) if SUIT[card] == ELIXIR_SUIT else -1
        return card, name
    ranked = RANKED.__getitem__
    if want == TAKE:
        winners = [card for card in cards if model.beats_lead(card)]
        return min(winners or cards, key=ranked), -1
    if want == DUCK:
        losers = [card for card in cards if not model.beats_lead(card)]
        return max(losers or cards, key=ranked), -1
    return min(cards, key=ranked), -1


def keep_strength(model: Round, seat: int) -> bool:
    """Whether ``seat`` would rather keep its strong cards when it gives some away.

    The Keeper evens the hands: a strong hand gives strength away. The Shadow
    makes them uneven, the way its aim points.
    """
    if seat == KEEPER:
        mine, theirs = model.tricks[seat], model.tricks[1 - seat]
        if mine != theirs:
            return mine < theirs
        return not strong(model.hands[seat])
    return aim(model, seat) == TAKE


def pick_give(hand: list[int], count: int, must_give_elixir: bool, keep: bool) -> list[int]:
    """The ``count`` cards to give: the weakest when keeping strength, else the strongest."""
    ranked = sorted(hand, key=RANKED.__getitem__, reverse=not keep)
    chosen = ranked[:count]
    if must_give_elixir and not any(SUIT[card] == ELIXIR_SUIT for card in chosen):
        elixir = next(card for card in ranked if SUIT[card] == ELIXIR_SUIT)
        chosen[-1] = elixir
    return chosen


def swap_both(model: Round) -> None:
    """Make the swap that is due, each seat giving the cards card sense gives."""
    count = model.swap_due
    keeper = pick_give(model.hands[KEEPER], count, False, keep_strength(model, KEEPER))
    shadow = pick_give(model.hands[SHADOW], count, False, keep_strength(model, SHADOW))
    model.swap(keeper, shadow)
