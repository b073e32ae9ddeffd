"""The move a player owes, in their words: their hand, the suit order and what they may do now.

Every email that asks for a move (the start of a game, a turn, a round's end,
a reminder, a resent link, the answer to a reply that leaves them to move)
shows these, so a whole game can be played from the inbox. Like every email,
they are written from the seat view (:func:`service.perspective.player_view`),
in the reader's language and the game's look, and say no more than the
player's page may.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .game_text import card_list, card_name, exchange_elixir_reason, suit_name
from .language import gettext, ngettext
from .rules import PLAY, is_elixir

View = Mapping[str, Any]


def hand_text(view: View) -> str:
    """The player's hand, in the order the page shows it."""
    return card_list(view["hand"], view["look"]) or gettext("No cards.")


def suit_order_text(view: View) -> str:
    """The suit order as the round has set it, weakest first; empty while no suit has a place."""
    order, look = view["suit_order"], view["look"]
    if not order:
        return ""
    if len(order) == 1:
        suit = suit_name(order[0], look)
        if look == "classic":
            return gettext(
                "Colour order: %(suit)s is the weakest, the others have no place yet.", suit=suit
            )
        return gettext(
            "Suit order: %(suit)s is the weakest, the others have no place yet.", suit=suit
        )
    suits = ", ".join(suit_name(suit, look) for suit in order)
    if look == "classic":
        return gettext("Colour order, weakest first: %(suits)s.", suits=suits)
    return gettext("Suit order, weakest first: %(suits)s.", suits=suits)


def legal_moves(view: View) -> list[str]:
    """The moves the player may make now, one line each; empty when they owe none.

    The cards they may play (and, leading, the suit an elixir must name), or
    how many cards of their hand to give and the exchange's elixir rule.
    """
    if not view["your_turn"]:
        return []
    look, legal = view["look"], view["legal"]
    if isinstance(legal, list):
        cards = list(dict.fromkeys(entry[PLAY] for entry in legal))
        lines = [card_list([card for card in cards if not is_elixir(card)], look)]
        elixirs = [card for card in cards if is_elixir(card)]
        if elixirs and view["table"]:
            lines[0] = card_list(cards, look)
        elif elixirs:
            named = {
                "cards": card_list(elixirs, look),
                "example": naming(card_name(elixirs[0], look), "H", look),
            }
            lines.append(
                gettext("Leading %(cards)s, name a colour too, such as %(example)s.", **named)
                if look == "classic"
                else gettext("Leading %(cards)s, name a suit too, such as %(example)s.", **named)
            )
        return [line for line in lines if line]
    count = legal["choose"]
    lines = [
        ngettext(
            "Give %(num)d card of your hand.",
            "Give %(num)d cards of your hand.",
            count,
        )
    ]
    if legal["must_include_elixir"]:
        held = sum(1 for card in view["hand"] if is_elixir(card))
        lines.append(exchange_elixir_reason(held, look))
    return lines


def naming(cards: str, suit: str, look: str) -> str:
    """An elixir led naming a suit, ``cards`` in words already: ``♠4, naming hearts``,
    ``potion 4+, naming red``."""
    return gettext("%(cards)s, naming %(suit)s", cards=cards, suit=suit_name(suit, look))


def reply_example(view: View) -> str:
    """One legal move of the player's, as a reply may write it in the words of their emails:
    ``play 5♥``, ``play ♠4, naming hearts``, ``give red 3 and potion 2+`` (in French
    ``je joue 5♥``, ``je donne 3 rouge et potion 2+``); empty if they owe no move.

    The reply reader (:func:`service.replies.reading.read_move`) reads it back as
    that move, in either language and look.
    """
    legal, look = view["legal"], view["look"]
    if not view["your_turn"] or not legal:
        return ""
    if isinstance(legal, list):
        first = legal[0]
        if first.get("name"):
            return gettext(
                "play %(card)s", card=naming(card_name(first[PLAY], look), first["name"], look)
            )
        return gettext("play %(card)s", card=card_name(first[PLAY], look))
    hand = list(view["hand"])
    if legal["must_include_elixir"]:
        hand.sort(key=lambda card: not is_elixir(card))
    names = [card_name(card, look) for card in hand[: legal["choose"]]]
    if len(names) > 1:
        cards = gettext("%(cards)s and %(last)s", cards=", ".join(names[:-1]), last=names[-1])
    else:
        cards = names[0]
    return gettext("give %(cards)s", cards=cards)


TEMPLATE_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "hand_text": hand_text,
    "suit_order_text": suit_order_text,
    "legal_moves": legal_moves,
    "reply_example": reply_example,
}
