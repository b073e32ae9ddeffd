"""What a seat knows about the cards it cannot see, worked out from its view alone.

Every round deals all 25 cards again, so only the current round matters. The
cards the seat has not seen this round (not in its hand, not played) lie in
the opponent's hand, in the opponent's secret choice, or aside. Some of them
the seat knows more about:

- cards it gave the opponent this round and has not seen since are in the
  opponent's hand (or the opponent's pending choice);
- a suit the opponent did not follow was not in the opponent's hand, and the
  opponent's later cards that did not come from this seat came from that same
  hand, so they are not of that suit either (an elixir lead names a suit;
  a colour lead answered off suit, not with an elixir, also shows no elixir);
- an exchange in which the opponent gave no elixir shows that the opponent was
  dealt at most one (a hand dealt two must give one).

:func:`read` gathers this into a :class:`Knowledge`; :meth:`Knowledge.sample`
deals the unseen cards again in a way consistent with all of it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate
from math import comb

from service.rules.engine import Trick
from service.rules.names import EXCHANGE, PLAY, SWAP
from service.rules.seat_view import SeatView as View
from service.rules.seat_view import SeenTransfer

from .round_model import (
    CARD_INDEX,
    ELIXIR_SUIT,
    NO_CARD,
    SUIT,
    SUIT_LETTERS,
    Round,
    card_numbers,
    seat_number,
)


@dataclass(frozen=True)
class _Draw:
    """The cards a deal of the unseen ones draws from, and how many elixirs with what weights."""

    known: list[int]
    free: list[int]
    wanted: int
    elixirs: list[int]
    others: list[int]
    counts: list[int]
    cum_weights: list[int]


@dataclass(frozen=True)
class Knowledge:
    """The seat's knowledge of the current round, cards as numbers (see ``round_model``).

    ``unseen`` are the cards whose place the seat does not know for sure, in
    deck order; ``opponent_known`` are the cards known to be the opponent's.
    The opponent holds ``opponent_holds`` cards in all (hand and pending
    choice).
    ``opponent_voids`` are the suits (3 for elixirs) that the opponent's cards
    of unknown origin cannot be; ``opponent_elixirs`` is the most elixirs they
    can hold, or ``None`` when nothing limits it.
    """

    seat: int
    hand: tuple[int, ...]
    unseen: tuple[int, ...]
    opponent_known: tuple[int, ...]
    opponent_holds: int
    opponent_voids: frozenset[int]
    opponent_elixirs: int | None
    choice_size: int
    swap_size: int
    place: tuple[int, int, int]
    tricks: tuple[int, int]
    leader: int
    trick: int
    lead: int
    name: int
    track: int
    track_length: int
    round: int
    last_round: int

    def sample(self, rng: random.Random) -> list[int]:
        """The opponent's cards (hand and pending choice) in one deal consistent with the view.

        Each deal that respects the voids and the elixir limit is as likely as
        any other. Should the view be one that no such deal explains, the
        voids and the limit are set aside rather than trusted.
        """
        draw = self._draw
        if not draw.counts:
            return draw.known + rng.sample(draw.free, draw.wanted)
        count = rng.choices(draw.counts, cum_weights=draw.cum_weights)[0]
        return (
            draw.known
            + rng.sample(draw.elixirs, count)
            + rng.sample(draw.others, draw.wanted - count)
        )

    @cached_property
    def _draw(self) -> _Draw:
        """What :meth:`sample` draws from: the same for every deal, so worked out once."""
        known = list(self.opponent_known)
        free = [card for card in self.unseen if card not in known]
        wanted = self.opponent_holds - len(known)
        allowed = [card for card in free if SUIT[card] not in self.opponent_voids]
        elixirs = [card for card in allowed if SUIT[card] == ELIXIR_SUIT]
        others = [card for card in allowed if SUIT[card] != ELIXIR_SUIT]
        most = len(elixirs) if self.opponent_elixirs is None else self.opponent_elixirs
        # How many elixirs to draw, weighed by how many deals hold that many.
        counts = [
            count
            for count in range(min(most, len(elixirs), wanted) + 1)
            if wanted - count <= len(others)
        ]
        weights = [comb(len(elixirs), n) * comb(len(others), wanted - n) for n in counts]
        return _Draw(known, free, wanted, elixirs, others, counts, list(accumulate(weights)))

    def round_with(self, opponent_cards: list[int]) -> Round:
        """A :class:`Round` where the opponent holds ``opponent_cards`` (pending ones included)."""
        hands: list[list[int]] = [[], []]
        hands[self.seat] = list(self.hand)
        hands[1 - self.seat] = list(opponent_cards)
        return Round(
            hands,
            place=list(self.place),
            tricks=list(self.tricks),
            leader=self.leader,
            trick=self.trick,
            lead=self.lead,
            name=self.name,
            swap_size=self.swap_size,
        )


def _elixirs(cards: list[int]) -> int:
    return sum(1 for card in cards if SUIT[card] == ELIXIR_SUIT)


def read(view: View) -> Knowledge:
    """Work out what the seat of ``view`` knows about the current round."""
    seat = seat_number(view["seat"])
    opponent_seat = "shadow" if view["seat"] == "keeper" else "keeper"
    round_number = view["round"]
    hand = card_numbers(view["hand"])
    pending = card_numbers(view["pending"] or [])
    tricks = [entry for entry in view["history"] if entry["round"] == round_number]
    transfers = [entry for entry in view["transfers"] if entry["round"] == round_number]
    played = [CARD_INDEX[entry["card"]] for trick in tricks for entry in trick["cards"]]
    played += [CARD_INDEX[entry["card"]] for entry in view["table"]]
    seen = set(hand) | set(pending) | set(played)
    unseen = tuple(card for card in range(len(SUIT)) if card not in seen)
    given = {CARD_INDEX[card] for entry in transfers for card in entry["gave"]}
    opponent_known = tuple(card for card in unseen if card in given)

    size = _choice_size(view)
    opponent_pending = size if view["opponent_chosen"] else 0
    return Knowledge(
        seat=seat,
        hand=tuple(hand),
        unseen=unseen,
        opponent_known=opponent_known,
        opponent_holds=view["opponent_cards"] + opponent_pending,
        opponent_voids=_voids(tricks, opponent_seat),
        opponent_elixirs=_elixir_limit(tricks, transfers, opponent_seat, given),
        choice_size=size,
        swap_size=view["swap_size"],
        place=_places(view["suit_order"]),
        tricks=(view["tricks"]["keeper"], view["tricks"]["shadow"]),
        leader=seat_number(view["leader"]) if view["leader"] else seat,
        trick=view["trick"],
        lead=CARD_INDEX[view["table"][0]["card"]] if view["table"] else NO_CARD,
        name=SUIT_LETTERS.index(view["table"][0]["name"])
        if view["table"] and "name" in view["table"][0]
        else -1,
        track=view["track"],
        track_length=view["track_length"],
        round=round_number,
        last_round=view["last_round"],
    )


def _choice_size(view: View) -> int:
    """How many cards each seat gives in the exchange or swap under way (0 outside one)."""
    if view["phase"] not in (EXCHANGE, SWAP):
        return 0
    if view["pending"]:
        return len(view["pending"])
    legal = view["legal"]
    return legal["choose"] if isinstance(legal, dict) else 0


def _places(suit_order: list[str]) -> tuple[int, int, int]:
    place = [-1, -1, -1]
    for spot, suit in enumerate(suit_order):
        place[SUIT_LETTERS.index(suit)] = spot
    return place[0], place[1], place[2]


def _voids(tricks: list[Trick], opponent: str) -> frozenset[int]:
    """The suits the opponent showed it did not hold, answering a lead this round."""
    voids: set[int] = set()
    for trick in tricks:
        lead, answer = trick["cards"]
        if answer["seat"] != opponent:
            continue
        answered = SUIT[CARD_INDEX[answer["card"]]]
        led = SUIT[CARD_INDEX[lead["card"]]]
        if led == ELIXIR_SUIT:
            named = SUIT_LETTERS.index(lead["name"])
            if answered != named:
                voids.add(named)
        elif answered not in (led, ELIXIR_SUIT):
            voids.update((led, ELIXIR_SUIT))
    return frozenset(voids)


def _elixir_limit(
    tricks: list[Trick],
    transfers: list[SeenTransfer],
    opponent: str,
    given: set[int],
) -> int | None:
    """The most elixirs the opponent can still hold, if its exchange gave none; else ``None``.

    A hand dealt two elixirs must give one, so an exchange without one shows
    a dealt hand with at most one. Elixirs the opponent has since played or
    swapped away, and that did not come from this seat, were that one.
    """
    exchange = next((entry for entry in transfers if entry["kind"] == EXCHANGE), None)
    if exchange is None:
        return None
    received = [CARD_INDEX[card] for card in exchange["received"]]
    if _elixirs(received):
        return None
    shown = {
        CARD_INDEX[entry["card"]]
        for trick in tricks
        for entry in trick["cards"]
        if entry["seat"] == opponent
    }
    shown |= {CARD_INDEX[card] for entry in transfers for card in entry["received"]}
    from_deal = [card for card in shown if card not in given]
    return max(0, 1 - _elixirs(from_deal))


def acting_phase(view: View) -> str:
    """The kind of move the seat owes: ``exchange``, ``play`` or ``swap``; raises if none."""
    if not view["your_turn"]:
        raise ValueError(f"the {view['seat']} owes no move now")
    phase = view["phase"]
    if phase not in (EXCHANGE, PLAY, SWAP):
        raise ValueError(f"no move is made in the {phase} phase")
    return phase
