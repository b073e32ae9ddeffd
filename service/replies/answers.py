"""The words of an answer to a reply, written from the player's seat view while it renders.

Each entry of :func:`context` is a function of the view, called by the
``answer`` templates in the recipient's language: what was read, what was
played and what happened, why nothing was, and the legal moves. Like every
email, it says no more than the player's page may.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from flask_babel import gettext, ngettext

from ..game_text import card_name, exchange_elixir_reason, rule_message_in, suit_name
from ..games import GameClosed, IllegalMove, StaleVersion
from ..mail.compose import result, round_over, transfer_done, trick
from ..rules import PLAY, is_elixir
from .reading import Understood, quoted

View = Mapping[str, Any]


def context(
    outcome: str,
    *,
    understood: Understood,
    written: str,
    action: dict[str, Any] | None = None,
    refusal: Any = None,
) -> dict[str, Any]:
    """What the ``answer`` templates need: ``outcome`` (applied or refused) and the functions."""
    return {
        "outcome": outcome,
        "wrote": quoted(written),
        "understood": lambda view: understood_text(understood, view),
        "played": lambda view: played_text(action or {}, view),
        "happened": lambda view: happened(action or {}, view),
        "reason": lambda view: reason_text(refusal, view),
        "legal_moves": legal_moves,
    }


def _cards(cards: list[str], look: str) -> str:
    return ", ".join(card_name(card, look) for card in cards)


def understood_text(understood: Understood, view: View) -> str:
    """The move as it was read: ``♠4, naming hearts``; empty when no card was."""
    if not understood.cards:
        return ""
    text = _cards(understood.cards, view["look"])
    if understood.name:
        return gettext(
            "%(cards)s, naming %(suit)s", cards=text, suit=suit_name(understood.name, view["look"])
        )
    return text


def played_text(action: dict[str, Any], view: View) -> str:
    """What the player did: ``You played 5♥.``, ``You gave 3♥, 5♣.``"""
    look = view["look"]
    if PLAY in action and action.get("name"):
        return gettext(
            "You led %(card)s, naming %(suit)s.",
            card=card_name(action[PLAY], look),
            suit=suit_name(action["name"], look),
        )
    if PLAY in action:
        return gettext("You played %(card)s.", card=card_name(action[PLAY], look))
    cards: list[str] = next(iter(action.values()), [])
    return gettext("You gave %(cards)s.", cards=_cards(cards, look))


def happened(action: dict[str, Any], view: View) -> list[str]:
    """What the move led to, from the view: the trick it ended, the exchange or swap it settled,
    the round's end and the game's."""
    sentences: list[str] = []
    if PLAY in action:
        table = view["table"]
        if not (table and table[0]["seat"] == view["seat"]) and view["history"]:
            last = view["history"][-1]
            sentences.append(trick(last, view))
            number = last["round"]
            if last["trick"] == view["tricks_per_round"] and len(view["rounds"]) >= number:
                sentences.append(round_over(number, view["rounds"][number - 1], view))
    elif not view["pending"] and view["transfers"]:
        sentences.append(transfer_done(view["transfers"][-1], view["look"]))
    ended = result(view)
    if ended:
        sentences.append(ended)
    return sentences


REASONS: dict[str, Callable[[], str]] = {
    "nothing_read": lambda: gettext("No card could be read in your reply."),
    "no_such_card": lambda: gettext("Split Mind has no such card."),
    "one_card": lambda: gettext("Play one card at a time."),
    "stale": lambda: gettext(
        "Your reply answers an older email: the game has moved on since, so nothing was changed."
    ),
    "closed": lambda: gettext("This game takes no more moves."),
}


def reason_text(refusal: Any, view: View) -> str:
    """Why a reply was not applied, in the words of the move page."""
    error = getattr(refusal, "error", None)
    if isinstance(error, IllegalMove):
        return rule_message_in(view, error.rule, error.params, error.message)
    if isinstance(error, StaleVersion):
        return REASONS["stale"]()
    if isinstance(error, GameClosed):
        return REASONS["closed"]()
    code = getattr(refusal, "code", "")
    if code in REASONS:
        return REASONS[code]()
    return gettext("The move could not be read.")


def legal_moves(view: View) -> list[str]:
    """The moves the player may make now, one line each; empty when they owe none."""
    if not view["your_turn"]:
        return []
    look, legal = view["look"], view["legal"]
    if isinstance(legal, list):
        cards = list(dict.fromkeys(entry[PLAY] for entry in legal))
        lines = [_cards([card for card in cards if not is_elixir(card)], look)]
        elixirs = [card for card in cards if is_elixir(card)]
        if elixirs and view["table"]:
            lines[0] = _cards(cards, look)
        elif elixirs:
            example = f"{elixirs[0]} H"
            lines.append(
                gettext(
                    "Leading %(cards)s, name a suit too, such as %(example)s.",
                    cards=_cards(elixirs, look),
                    example=example,
                )
            )
        return [line for line in lines if line]
    count = legal["choose"]
    lines = [
        ngettext(
            "Give %(num)d card of your hand: %(cards)s.",
            "Give %(num)d cards of your hand: %(cards)s.",
            count,
            cards=_cards(view["hand"], look),
        )
    ]
    if legal["must_include_elixir"]:
        held = sum(1 for card in view["hand"] if is_elixir(card))
        lines.append(exchange_elixir_reason(held, look))
    return lines
