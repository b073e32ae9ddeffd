"""The Split Mind rules: a game state as plain data, its legal actions and how they apply.

A state is a JSON-serialisable ``dict`` whose hands are kept in display order;
:func:`apply` never changes the state it is given and returns a new one.
Nested values (history entries, deals, transfers, table entries) are never
changed in place once created, so copies may share them.

A state holds facts, never prose: a history entry says which cards were
played, who won and what the elixir did (``effect`` and ``outcome``), and
the service puts that in words for each reader. The engine's own English is
only in the messages of :class:`RuleError`, :class:`ActionError` and
:class:`DealError`, which the replay command prints.
"""

from __future__ import annotations

import json
import random
from itertools import combinations
from typing import Any, NotRequired, TypedDict

from .cards import (
    ASIDE_SIZE,
    DECK,
    DECK_SET,
    ELIXIR,
    HAND_SIZE,
    SUIT_WORDS,
    SUITS,
    is_card,
    is_elixir,
    plural,
    sort_cards,
    strength,
    suit_of,
)
from .names import ACTION_KINDS, EXCHANGE, OVER, PLAY, SEATS, SWAP, Seat
from .variant import PRINTED, TRICKS_PER_ROUND, Variant, variant_of

Action = dict[str, Any]


class Deal(TypedDict):
    """One round's cards: ten to each seat and five set aside."""

    keeper: list[str]
    shadow: list[str]
    aside: list[str]


class Played(TypedDict):
    """A card on the table; ``name`` is the suit named with a led elixir."""

    seat: Seat
    card: str
    name: NotRequired[str]


class Trick(TypedDict):
    """A history entry: one trick's facts, never words (readers make those).

    ``effect`` is the elixir's ("reset", "swap", "steal", "none" for two elixirs)
    or None; ``outcome`` is "took" or "nothing" for a Steal, the cards each gave
    for a Swap ("0" once hands are empty), "" otherwise.
    """

    round: int
    trick: int
    leader: Seat
    cards: list[Played]
    winner: Seat
    effect: str | None
    outcome: str


class Transfer(TypedDict):
    """The cards each seat gave in an exchange or swap."""

    round: int
    kind: str
    after_trick: int
    keeper: list[str]
    shadow: list[str]


class RoundResult(TypedDict):
    """The tricks each seat took in a round and their difference, ``moved``.

    The track moves by the difference, as far as its end: :func:`track_advances`.
    """

    keeper: int
    shadow: int
    moved: int


class State(TypedDict):
    """A whole game, as JSON: what :func:`apply` reads and returns.

    ``leader`` is None and ``winner`` set once the game is over; ``pending``
    holds a seat's secret choice until both have chosen; ``variant`` is there
    only for a game that is not the printed one.
    """

    seed: int | None
    deals: list[Deal]
    round: int
    phase: str
    track: int
    trick: int
    leader: Seat | None
    hands: dict[Seat, list[str]]
    aside: list[str]
    pending: dict[Seat, list[str] | None]
    table: list[Played]
    suit_order: list[str]
    tricks: dict[Seat, int]
    rounds: list[RoundResult]
    history: list[Trick]
    transfers: list[Transfer]
    winner: Seat | None
    variant: NotRequired[dict[str, Any]]


class Choice(TypedDict):
    """What a seat owes in an exchange or swap: how many cards, and whether an elixir."""

    choose: int
    must_include_elixir: bool


# The keys an action of each kind may hold besides its own (and the seat): the one
# statement of an action's shape, checked by parse_action and published by the JSON API.
ACTION_EXTRAS: dict[str, tuple[str, ...]] = {EXCHANGE: (), PLAY: ("name",), SWAP: ()}
EFFECTS = {"H": "reset", "D": "swap", "C": "steal"}


class RuleError(Exception):
    """An action that breaks a rule; ``message`` says which and what is allowed.

    ``code`` names the rule for translations and ``params`` fills its message.
    """

    def __init__(self, code: str, message: str, **params: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.params = params


class ActionError(ValueError):
    """An action that is not an action at all: wrong shape, unknown seat or card."""


class DealError(ValueError):
    """A deal that is not a 10/10/5 split of the 25 cards, or a round with no deal and no seed."""


def other(seat: Seat) -> Seat:
    """The opponent of ``seat``."""
    return "shadow" if seat == "keeper" else "keeper"


def title(seat: Seat) -> str:
    """A seat's name in the engine's own English messages (players read service.game_text's)."""
    return seat.capitalize()


# --- dealing -----------------------------------------------------------------


def check_deal(deal: object) -> Deal:
    """Validate one round's deal and return it as fresh lists, or raise :class:`DealError`."""
    if not isinstance(deal, dict) or set(deal) != {"keeper", "shadow", "aside"}:
        raise DealError(
            'a deal is {"keeper": [10 cards], "shadow": [10 cards], "aside": [5 cards]}'
        )
    sizes = {"keeper": HAND_SIZE, "shadow": HAND_SIZE, "aside": ASIDE_SIZE}
    seen: list[str] = []
    for part, size in sizes.items():
        cards = deal[part]
        if not isinstance(cards, list) or len(cards) != size:
            raise DealError(f"a deal gives {size} cards to {part}")
        for card in cards:
            if not is_card(card):
                raise DealError(f"unknown card {_shown(card)} in the deal")
        seen.extend(cards)
    if set(seen) != DECK_SET:
        missing = sort_cards(list(DECK_SET - set(seen)))
        raise DealError(f"a deal uses each of the 25 cards once; missing {', '.join(missing)}")
    return {
        "keeper": list(deal["keeper"]),
        "shadow": list(deal["shadow"]),
        "aside": list(deal["aside"]),
    }


def seeded_deal(seed: int, round_number: int) -> Deal:
    """The deal for ``round_number`` of a game with ``seed``: the same on every machine."""
    cards = list(DECK)
    random.Random(f"split-mind:{seed}:{round_number}").shuffle(cards)
    return {
        "keeper": cards[:HAND_SIZE],
        "shadow": cards[HAND_SIZE : 2 * HAND_SIZE],
        "aside": cards[2 * HAND_SIZE :],
    }


def new_game(
    *, seed: int | None = None, deals: list[Any] | None = None, variant: Variant = PRINTED
) -> State:
    """A game at the start of round 1, dealt from ``deals`` first, then from ``seed``.

    The state holds ``variant`` only when it is not the printed game, so the
    states of printed games are the same as before variants existed.
    """
    recorded = [check_deal(deal) for deal in deals or []]
    if len(recorded) > variant.rounds:
        raise DealError(f"a game has at most {variant.rounds} deals")
    if not recorded and seed is None:
        raise DealError("a game needs a deal or a seed")
    state: State = {
        "seed": seed,
        "deals": recorded,
        "round": 0,
        "phase": EXCHANGE,
        "track": 0,
        "trick": 1,
        "leader": "keeper",
        "hands": {"keeper": [], "shadow": []},
        "aside": [],
        "pending": {"keeper": None, "shadow": None},
        "table": [],
        "suit_order": [],
        "tricks": {"keeper": 0, "shadow": 0},
        "rounds": [],
        "history": [],
        "transfers": [],
        "winner": None,
    }
    if variant != PRINTED:
        state["variant"] = variant.to_json()
    _start_round(state, 1, variant)
    return state


def _start_round(state: State, number: int, variant: Variant) -> None:
    if len(state["deals"]) < number:
        if state["seed"] is None:
            raise DealError(f"round {number} has no deal and the scenario has no seed")
        state["deals"] = [*state["deals"], seeded_deal(state["seed"], number)]
    deal = state["deals"][number - 1]
    state["round"] = number
    state["phase"] = EXCHANGE if variant.exchange_sizes[number - 1] else PLAY
    state["trick"] = 1
    if number == 1:
        state["leader"] = variant.first_leader
    else:
        state["leader"] = "keeper" if state["track"] < variant.halfway else "shadow"
    state["hands"] = {"keeper": sort_cards(deal["keeper"]), "shadow": sort_cards(deal["shadow"])}
    state["aside"] = list(deal["aside"])
    state["pending"] = {"keeper": None, "shadow": None}
    state["table"] = []
    state["suit_order"] = []
    state["tricks"] = {"keeper": 0, "shadow": 0}


# --- questions about a state ---------------------------------------------------


def to_act(state: State) -> list[Seat]:
    """The seats that owe an action now, keeper first."""
    phase = state["phase"]
    if phase == PLAY:
        leader = state["leader"]
        assert leader is not None, "every phase but the end has a leader"
        return [other(leader) if state["table"] else leader]
    if phase == OVER:
        return []
    pending = state["pending"]
    return [seat for seat in SEATS if pending[seat] is None]


def choice_size(state: State) -> int:
    """How many cards each seat gives in the current exchange or swap."""
    variant = variant_of(state)
    if state["phase"] == EXCHANGE:
        return variant.exchange_sizes[state["round"] - 1]
    held = len(state["hands"]["keeper"]) + len(state["pending"]["keeper"] or ())
    return min(variant.swap_size, held)


def must_give_elixir(state: State, seat: Seat) -> bool:
    """Whether the seat's exchange must include an elixir (it was dealt two or more)."""
    if state["phase"] != EXCHANGE:
        return False
    held = state["hands"][seat] + (state["pending"][seat] or [])
    return sum(1 for card in held if is_elixir(card)) >= 2


def _plays(state: State, seat: Seat) -> list[Action]:
    hand = state["hands"][seat]
    if not state["table"]:
        plays: list[Action] = []
        for card in hand:
            if card[1] == ELIXIR:
                plays += [
                    {"play": card, "name": "H"},
                    {"play": card, "name": "D"},
                    {"play": card, "name": "C"},
                ]
            else:
                plays.append({"play": card})
        return plays
    return [{"play": card} for card in _followable(state["table"][0], hand)]


def _followable(lead: Played, hand: list[str]) -> list[str]:
    if lead["card"][1] == ELIXIR:
        named = lead["name"]
        return [card for card in hand if card[1] == named] or hand
    suit = lead["card"][1]
    return [card for card in hand if card[1] == suit or card[1] == ELIXIR] or hand


def legal_actions(
    state: State, seat: Seat, acting: list[Seat] | None = None
) -> list[Action] | Choice:
    """What ``seat`` may do now.

    In the play phase, every legal ``play`` action. In an exchange or swap the
    seat picks cards: ``{"choose": n, "must_include_elixir": bool}``. Empty
    when the seat owes nothing. ``acting`` is :func:`to_act`, when the caller has it.
    """
    if seat not in (to_act(state) if acting is None else acting):
        return []
    if state["phase"] == PLAY:
        return _plays(state, seat)
    return {"choose": choice_size(state), "must_include_elixir": must_give_elixir(state, seat)}


# --- applying an action --------------------------------------------------------


def _clone(state: State) -> State:
    copy = state.copy()
    copy["hands"] = {
        "keeper": list(state["hands"]["keeper"]),
        "shadow": list(state["hands"]["shadow"]),
    }
    copy["pending"] = dict(state["pending"])
    copy["tricks"] = dict(state["tricks"])
    copy["table"] = list(state["table"])
    copy["suit_order"] = list(state["suit_order"])
    # deals, aside, rounds, history and transfers are replaced, never changed in place.
    return copy


def parse_action(action: object) -> tuple[str, Action]:
    """Check an action's shape and cards; return its kind and the action.

    Raises :class:`ActionError` for anything that is not an action in the
    replay notation (whether it is legal is :func:`apply`'s question).
    """
    if not isinstance(action, dict):
        raise ActionError('an action is an object such as {"play": "4S", "name": "H"}')
    kinds = [kind for kind in ACTION_KINDS if kind in action]
    if len(kinds) != 1:
        raise ActionError('an action has exactly one of "exchange", "play" or "swap"')
    kind = kinds[0]
    allowed = {kind, "seat", *ACTION_EXTRAS[kind]}
    for key in action:
        if key not in allowed:
            article = "an" if kind[0] in "aeiou" else "a"
            raise ActionError(f"unexpected key {_shown(key)} in {article} {kind} action")
    value = action[kind]
    if kind == PLAY:
        if not is_card(value):
            raise ActionError(f"unknown card {_shown(value)}")
        if "name" in action and action["name"] not in SUITS:
            raise ActionError(f"a named suit is H, D or C, not {_shown(action['name'])}")
    else:
        if not isinstance(value, list):
            raise ActionError(f'"{kind}" takes a list of cards')
        for card in value:
            if not is_card(card):
                raise ActionError(f"unknown card {_shown(card)}")
    return kind, action


def _shown(value: object, most: int = 60) -> str:
    """A value of an action as JSON writes it (``null``, ``["4S"]``), cut at ``most``
    characters: an action comes as JSON, from the API or a replay file.

    Half a character (a lone surrogate, which JSON may escape but which is no
    Unicode text) is shown by its escape, ``\\ud800``: the message is text that
    any JSON decoder reads, the strict ones too.
    """
    try:
        shown = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        shown = repr(value)
    shown = shown.encode("utf-8", "backslashreplace").decode("utf-8")
    return shown if len(shown) <= most else shown[: most - 1] + "…"


def apply(state: State, seat: Seat, action: Action) -> State:
    """The state after ``seat`` takes ``action``; raises :class:`RuleError` if it is illegal."""
    if seat not in SEATS:
        raise ActionError(f"a seat is keeper or shadow, not {seat!r}")
    kind, action = parse_action(action)
    if state["phase"] == OVER:
        raise RuleError("game_over", "The game is over: no more moves.")
    if kind != state["phase"]:
        raise RuleError(
            "wrong_phase",
            f"This is the {state['phase']} phase. {_phase_hint(state, seat)}",
            phase=state["phase"],
        )
    if seat not in to_act(state):
        raise RuleError("not_your_turn", _not_your_turn(state, seat), phase=state["phase"])
    new = _clone(state)
    if kind == PLAY:
        _play(new, seat, action["play"], action.get("name"))
    else:
        _choose(new, seat, kind, action[kind])
    return new


def _phase_hint(state: State, seat: Seat) -> str:
    if seat not in to_act(state):
        return _not_your_turn(state, seat)
    if state["phase"] == PLAY:
        return "Play a card."
    return f"Give {choice_size(state)} card{'s' if choice_size(state) > 1 else ''}."


def _not_your_turn(state: State, seat: Seat) -> str:
    if state["phase"] == PLAY:
        return f"It is not your turn: the {title(other(seat))} plays next."
    return (
        f"You have already chosen your cards for this {state['phase']}; "
        f"waiting for the {title(other(seat))}."
    )


def _choose(state: State, seat: Seat, kind: str, cards: list[str]) -> None:
    size = choice_size(state)
    noun = "card" if size == 1 else "cards"
    where = f"the round {state['round']} exchange" if kind == EXCHANGE else "the swap"
    if len(cards) != size or len(set(cards)) != len(cards):
        raise RuleError(
            "choose_count", f"Give exactly {size} different {noun} in {where}.", size=size
        )
    hand = state["hands"][seat]
    for card in cards:
        if card not in hand:
            raise RuleError("not_held", f"You do not hold {card}.", card=card)
    if kind == EXCHANGE and must_give_elixir(state, seat) and not any(map(is_elixir, cards)):
        held = sum(1 for card in hand if is_elixir(card))
        raise RuleError(
            "exchange_elixir",
            f"You hold {held} elixirs: give at least one of them in the exchange.",
            held=held,
        )
    state["hands"][seat] = [card for card in hand if card not in cards]
    state["pending"][seat] = list(cards)
    if state["pending"][other(seat)] is not None:
        _resolve_choices(state, kind)


def _resolve_choices(state: State, kind: str) -> None:
    keeper, shadow = state["pending"]["keeper"], state["pending"]["shadow"]
    assert keeper is not None and shadow is not None, "both seats have chosen"
    hands = state["hands"]
    hands["keeper"] = sort_cards(hands["keeper"] + shadow)
    hands["shadow"] = sort_cards(hands["shadow"] + keeper)
    transfer: Transfer = {
        "round": state["round"],
        "kind": kind,
        "after_trick": state["trick"] - 1,
        "keeper": keeper,
        "shadow": shadow,
    }
    state["transfers"] = [*state["transfers"], transfer]
    state["pending"] = {"keeper": None, "shadow": None}
    state["phase"] = PLAY


def _play(state: State, seat: Seat, card: str, name: str | None) -> None:
    hand = state["hands"][seat]
    if card not in hand:
        raise RuleError("not_held", f"You do not hold {card}.", card=card)
    table = state["table"]
    elixir = is_elixir(card)
    if not table:
        if elixir and name is None:
            raise RuleError("name_required", "Leading an elixir, name a suit: H, D or C.")
        if not elixir and name is not None:
            raise RuleError("name_not_allowed", "Name a suit only when leading an elixir.")
    else:
        if name is not None:
            raise RuleError("name_not_allowed", "Name a suit only when leading an elixir.")
        _check_follow(table[0], hand, card)
    hand.remove(card)
    entry: Played = {"seat": seat, "card": card}
    if name is not None:
        entry["name"] = name
    table.append(entry)
    if not elixir:
        _rank_suit(state["suit_order"], suit_of(card))
    if len(table) == 2:
        _resolve_trick(state)


def _check_follow(lead: Played, hand: list[str], card: str) -> None:
    if is_elixir(lead["card"]):
        named = lead["name"]
        if suit_of(card) != named and any(suit_of(held) == named for held in hand):
            raise RuleError(
                "follow_named",
                f"{plural(named).capitalize()} were named and you hold one: "
                f"play a {SUIT_WORDS[named]}"
                + (" (an elixir may not answer here)." if is_elixir(card) else "."),
                suit=named,
            )
        return
    suit = suit_of(lead["card"])
    if suit_of(card) == suit or is_elixir(card):
        return
    if any(suit_of(held) == suit for held in hand):
        raise RuleError(
            "follow_suit",
            f"You hold {plural(suit)}: follow with a {SUIT_WORDS[suit]} or play an elixir.",
            suit=suit,
        )
    if any(is_elixir(held) for held in hand):
        raise RuleError(
            "follow_elixir",
            f"You hold no {plural(suit)} but you hold an elixir: play an elixir.",
            suit=suit,
        )


def _rank_suit(order: list[str], suit: str) -> None:
    """Give a newly played suit its place: weakest, then middle; the third is then strongest."""
    if suit in order or len(order) == len(SUITS):
        return
    order.append(suit)
    if len(order) == len(SUITS) - 1:
        order.extend(s for s in SUITS if s not in order)


def _resolve_trick(state: State) -> None:
    lead, follow = state["table"]
    lead_card, follow_card = lead["card"], follow["card"]
    effect: str | None = None
    lead_elixir, follow_elixir = is_elixir(lead_card), is_elixir(follow_card)
    if lead_elixir and follow_elixir:
        effect = "none"
        lead_wins = strength(lead_card) > strength(follow_card)
    elif lead_elixir or follow_elixir:
        colour = follow_card if lead_elixir else lead_card
        effect = EFFECTS[suit_of(colour)]
        lead_wins = strength(lead_card) > strength(follow_card)
    elif suit_of(lead_card) == suit_of(follow_card):
        lead_wins = strength(lead_card) > strength(follow_card)
    else:
        order = state["suit_order"]
        lead_wins = order.index(suit_of(lead_card)) > order.index(suit_of(follow_card))
    winner: Seat = lead["seat"] if lead_wins else follow["seat"]
    loser = other(winner)
    tricks = state["tricks"]
    tricks[winner] += 1
    outcome = ""
    swap_size = 0
    if effect == "steal":
        if tricks[loser]:
            tricks[loser] -= 1
            tricks[winner] += 1
            outcome = "took"
        else:
            outcome = "nothing"
    elif effect == "reset":
        state["suit_order"] = []
    elif effect == "swap":
        swap_size = min(variant_of(state).swap_size, len(state["hands"]["keeper"]))
        outcome = str(swap_size)
    entry: Trick = {
        "round": state["round"],
        "trick": state["trick"],
        "leader": lead["seat"],
        "cards": [lead.copy(), follow.copy()],
        "winner": winner,
        "effect": effect,
        "outcome": outcome,
    }
    state["history"] = [*state["history"], entry]
    state["leader"] = winner
    state["table"] = []
    state["trick"] += 1
    if swap_size:
        state["phase"] = SWAP
    elif state["trick"] > TRICKS_PER_ROUND:
        _end_round(state)


def track_advances(state: State) -> list[int]:
    """How far each finished round turned the track up, in order.

    A round's ``moved`` is its difference in tricks (the replay format's
    figure); the track stops at its end, so the round that finishes it turns
    up only the cards that were left.
    """
    length = variant_of(state).track_length
    track, advances = 0, []
    for result in state["rounds"]:
        step = min(length - track, result["moved"])
        advances.append(step)
        track += step
    return advances


def _end_round(state: State) -> None:
    tricks = state["tricks"]
    moved = abs(tricks["keeper"] - tricks["shadow"])
    result: RoundResult = {"keeper": tricks["keeper"], "shadow": tricks["shadow"], "moved": moved}
    state["rounds"] = [*state["rounds"], result]
    variant = variant_of(state)
    state["track"] = min(variant.track_length, state["track"] + moved)
    if state["track"] >= variant.track_length:
        _finish(state, "shadow")
    elif state["round"] == variant.rounds:
        _finish(state, "keeper")
    else:
        _start_round(state, state["round"] + 1, variant)


def _finish(state: State, winner: Seat) -> None:
    state["winner"] = winner
    state["phase"] = OVER
    state["leader"] = None


# --- the whole state, as the replay command prints it ---------------------------


def summary(state: State) -> dict[str, Any]:
    """The state in the replay output format of docs/rules.md (hands included: not for players)."""
    return {
        "round": state["round"],
        "phase": state["phase"],
        "to_act": to_act(state),
        "track": state["track"],
        "tricks": dict(state["tricks"]),
        "suit_order": list(state["suit_order"]),
        "leader": state["leader"],
        "table": [dict(entry) for entry in state["table"]],
        "hands": {seat: sorted(state["hands"][seat]) for seat in SEATS},
        "rounds": [dict(entry) for entry in state["rounds"]],
        "winner": state["winner"],
    }


def choices(state: State, seat: Seat) -> list[list[str]]:
    """Every legal card set for ``seat`` in the current exchange or swap (for tests and tools)."""
    legal = legal_actions(state, seat)
    if not isinstance(legal, dict):
        return []
    hand = state["hands"][seat]
    return [
        list(combo)
        for combo in combinations(hand, legal["choose"])
        if not legal["must_include_elixir"] or any(map(is_elixir, combo))
    ]
