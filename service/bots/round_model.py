"""One round of Split Mind in a compact form that a search can copy and play out quickly.

The engine (``service.rules``) is the authority on the rules; it keeps a whole
game as JSON data and checks every action, which is right for the service and
too slow to play thousands of imagined rounds within a move's time. A
:class:`Round` holds only what decides the rest of a round (the two hands, the
suit order, the tricks, the leader, the card led) with cards as small numbers.
``tests/bots/test_round_model.py`` plays random rounds through both and checks
that they agree on every legal play, trick winner, suit order and swap.

Seats are numbers here: :data:`KEEPER` is 0 and :data:`SHADOW` 1.
"""

from __future__ import annotations

from service.rules.cards import DECK, ELIXIR, SUITS, strength
from service.rules.names import SEATS, Seat

KEEPER = 0
SHADOW = 1
NO_CARD = -1

# A card is its index in DECK; its suit is 0, 1, 2 for hearts, diamonds, clubs and 3 for an elixir.
ELIXIR_SUIT = 3
SUIT_LETTERS = (*SUITS, ELIXIR)
CARD_INDEX = {card: index for index, card in enumerate(DECK)}
SUIT = tuple(SUIT_LETTERS.index(card[1]) for card in DECK)
POWER = tuple(strength(card) for card in DECK)

# What an elixir does against a colour card of each suit.
RESET, SWAP_EFFECT, STEAL = 0, 1, 2


def seat_number(seat: Seat) -> int:
    """0 for the Keeper, 1 for the Shadow."""
    return SEATS.index(seat)


def card_numbers(cards: list[str]) -> list[int]:
    """Cards in notation as numbers, in the same order."""
    return [CARD_INDEX[card] for card in cards]


def card_texts(cards: list[int]) -> list[str]:
    """Numbers back to notation, in the same order."""
    return [DECK[card] for card in cards]


class Round:
    """The rest of a round: hands, suit order, tricks, whose turn, and the card on the table.

    ``place[suit]`` is the suit's place in the order (0 weakest) or -1 without
    one. ``lead`` is the card led in the trick in progress (``NO_CARD`` between
    tricks) and ``name`` the suit named with an elixir lead. ``swap_due`` is how
    many cards each seat owes after a Swap (0 when none is due).
    """

    __slots__ = (
        "hands",
        "place",
        "placed",
        "tricks",
        "leader",
        "trick",
        "lead",
        "name",
        "swap_size",
        "swap_due",
    )

    def __init__(
        self,
        hands: list[list[int]],
        *,
        place: list[int],
        tricks: list[int],
        leader: int,
        trick: int,
        lead: int = NO_CARD,
        name: int = -1,
        swap_size: int,
        swap_due: int = 0,
    ) -> None:
        self.hands = hands
        self.place = place
        self.placed = sum(1 for spot in place if spot >= 0)
        self.tricks = tricks
        self.leader = leader
        self.trick = trick
        self.lead = lead
        self.name = name
        self.swap_size = swap_size
        self.swap_due = swap_due

    def copy(self) -> Round:
        """An independent copy to play out."""
        twin = Round.__new__(Round)
        twin.hands = [list(self.hands[0]), list(self.hands[1])]
        twin.place = list(self.place)
        twin.placed = self.placed
        twin.tricks = list(self.tricks)
        twin.leader = self.leader
        twin.trick = self.trick
        twin.lead = self.lead
        twin.name = self.name
        twin.swap_size = self.swap_size
        twin.swap_due = self.swap_due
        return twin

    @property
    def over(self) -> bool:
        """Whether all ten tricks are played (and no swap is owed)."""
        return self.trick > 10 and not self.swap_due

    @property
    def to_play(self) -> int:
        """The seat that plays the next card."""
        return self.leader if self.lead == NO_CARD else 1 - self.leader

    def playable(self, seat: int) -> list[int]:
        """The cards ``seat`` may play now (leading: any card)."""
        hand = self.hands[seat]
        lead = self.lead
        if lead == NO_CARD:
            return hand
        lead_suit = SUIT[lead]
        if lead_suit == ELIXIR_SUIT:
            named = self.name
            return [card for card in hand if SUIT[card] == named] or hand
        return [
            card for card in hand if SUIT[card] == lead_suit or SUIT[card] == ELIXIR_SUIT
        ] or hand

    def beats_lead(self, card: int) -> bool:
        """Whether ``card``, answering the card led, would win the trick."""
        lead = self.lead
        lead_suit, suit = SUIT[lead], SUIT[card]
        if ELIXIR_SUIT in (lead_suit, suit) or lead_suit == suit:
            return POWER[card] > POWER[lead]
        place = self.place[suit]
        if place < 0:
            # A suit new to the order takes the next place, above every suit placed so far.
            return True
        return place > self.place[lead_suit]

    def play(self, card: int, name: int = -1) -> None:
        """Play ``card`` for the seat to play (``name``: the suit named with an elixir lead)."""
        seat = self.leader if self.lead == NO_CARD else 1 - self.leader
        self.hands[seat].remove(card)
        suit = SUIT[card]
        if suit != ELIXIR_SUIT and self.place[suit] < 0:
            self._rank(suit)
        if self.lead == NO_CARD:
            self.lead = card
            self.name = name
            return
        self._resolve(self.lead, card)

    def _rank(self, suit: int) -> None:
        place = self.place
        place[suit] = self.placed
        self.placed += 1
        if self.placed == 2:
            for other in range(3):
                if place[other] < 0:
                    place[other] = 2
            self.placed = 3

    def _resolve(self, lead: int, follow: int) -> None:
        lead_suit, follow_suit = SUIT[lead], SUIT[follow]
        effect = -1
        if lead_suit == ELIXIR_SUIT or follow_suit == ELIXIR_SUIT:
            lead_wins = POWER[lead] > POWER[follow]
            if lead_suit != follow_suit:
                effect = follow_suit if lead_suit == ELIXIR_SUIT else lead_suit
        elif lead_suit == follow_suit:
            lead_wins = POWER[lead] > POWER[follow]
        else:
            lead_wins = self.place[lead_suit] > self.place[follow_suit]
        winner = self.leader if lead_wins else 1 - self.leader
        loser = 1 - winner
        tricks = self.tricks
        tricks[winner] += 1
        if effect == STEAL:
            if tricks[loser]:
                tricks[loser] -= 1
                tricks[winner] += 1
        elif effect == RESET:
            self.place = [-1, -1, -1]
            self.placed = 0
        elif effect == SWAP_EFFECT:
            self.swap_due = min(self.swap_size, len(self.hands[0]))
        self.leader = winner
        self.lead = NO_CARD
        self.name = -1
        self.trick += 1

    def swap(self, keeper_gives: list[int], shadow_gives: list[int]) -> None:
        """Both halves of a swap at once: each seat's cards go to the other."""
        keeper, shadow = self.hands
        for card in keeper_gives:
            keeper.remove(card)
        for card in shadow_gives:
            shadow.remove(card)
        keeper.extend(shadow_gives)
        shadow.extend(keeper_gives)
        self.swap_due = 0

    def difference(self) -> int:
        """How many track cards the round turns up as it stands."""
        return abs(self.tricks[0] - self.tricks[1])
