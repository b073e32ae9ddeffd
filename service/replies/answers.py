"""The words of an answer to a reply, written from the player's seat view while it renders.

:func:`facts` is what the answer is about, as plain data (what the player
wrote and what was read, the move applied or why none was); the functions of
:data:`TEMPLATE_FUNCTIONS`, template globals, turn the facts and the view into
sentences in the recipient's language: what was played and what happened,
and why nothing was; the legal moves are :mod:`service.move_text`'s, as in
every email that asks for a move. Like every email, an answer says no
more than the player's page may.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..game_text import card_list, card_name, rule_message_in, suit_name
from ..games import IllegalMove, MoveError
from ..language import gettext
from ..mail.compose import result, round_over, transfer_done, trick
from ..move_text import naming
from ..rules import PLAY
from .reading import Understood, quoted

View = Mapping[str, Any]

# How much of a sentence naming a card the answer quotes.
SENTENCE_CHARS = 60


def facts(
    outcome: str,
    *,
    understood: Understood,
    written: str,
    action: dict[str, Any] | None = None,
    code: str = "",
    error: MoveError | None = None,
    sentence: str = "",
) -> dict[str, Any]:
    """The answer's facts: ``outcome`` (applied or refused), the player's words, the cards and
    suit read, the ``action`` applied, or the refusal's ``code`` and the game's rule; the
    start of the ``sentence`` that named a card when none was played."""
    return {
        "sentence": quoted(sentence, SENTENCE_CHARS) if sentence else "",
        "outcome": outcome,
        "wrote": quoted(written),
        "cards": list(understood.cards),
        "name": understood.name,
        "action": action or {},
        "code": code,
        "rule": error.rule if isinstance(error, IllegalMove) else None,
        "params": dict(error.params) if isinstance(error, IllegalMove) else {},
        "message": error.message if error is not None else "",
    }


def understood_text(answer: Mapping[str, Any], view: View) -> str:
    """The move as it was read: ``♠4, naming hearts``; empty when no card was."""
    if not answer["cards"]:
        return ""
    text = card_list(answer["cards"], view["look"])
    return naming(text, answer["name"], view["look"]) if answer["name"] else text


def played_text(answer: Mapping[str, Any], view: View) -> str:
    """What the player did: ``You played 5♥.``, ``You gave 3♥, 5♣.``"""
    look, action = view["look"], answer["action"]
    if PLAY in action and action.get("name"):
        return gettext(
            "You led %(card)s, naming %(suit)s.",
            card=card_name(action[PLAY], look),
            suit=suit_name(action["name"], look),
        )
    if PLAY in action:
        return gettext("You played %(card)s.", card=card_name(action[PLAY], look))
    cards: list[str] = next(iter(action.values()), [])
    return gettext("You gave %(cards)s.", cards=card_list(cards, look))


def happened(answer: Mapping[str, Any], view: View) -> list[str]:
    """What the move led to, from the view: the trick it ended, the exchange or swap it settled,
    the round's end and the game's."""
    sentences: list[str] = []
    if PLAY in answer["action"]:
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


REASONS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "nothing_read": lambda answer: gettext("No card could be read in your reply."),
    "in_sentence": lambda answer: gettext(
        "Your reply names a card only in a sentence (“%(sentence)s”), and a card named in a "
        "sentence is not played. Reply with the move alone on a line of its own.",
        sentence=answer["sentence"],
    ),
    "unclear": lambda answer: gettext(
        "Your reply names cards on more than one line, or takes its move back: which move you "
        "mean is unclear. Reply with the move alone on a line of its own."
    ),
    "no_such_card": lambda answer: gettext("Split Mind has no such card."),
    "one_card": lambda answer: gettext("Play one card at a time."),
    "two_suits": lambda answer: gettext("Your reply names more than one suit: name one only."),
    "stale": lambda answer: gettext(
        "This reply answers an older email: the game has moved on since."
    ),
    "already_moved": lambda answer: gettext("You have already moved since the email you answered."),
    "late": lambda answer: gettext(
        "The deadline of the move owed has passed: the game ends by timeout."
    ),
    "no_text": lambda answer: gettext(
        "Your reply held no text to read: write your move in the body of the email."
    ),
    "too_many_parts": lambda answer: gettext(
        "Your reply has too many parts to read (attachments, pictures): write your move in a "
        "short reply, without attachments."
    ),
    "too_large": lambda answer: gettext(
        "Your reply was too large to read (over 1 MB): write your move in a short reply, "
        "without attachments."
    ),
    "other_address": lambda answer: gettext(
        "A reply for this game came from another address than yours, and was not read as a "
        "move. Reply from the address these emails reach, or play on your game's page."
    ),
}


def reason_text(answer: Mapping[str, Any], view: View, link: str | None = None) -> str:
    """Why a reply was not applied, in the words of the move page; ``link`` is the player's
    page, where what no reply does is done."""
    if answer["rule"]:
        return rule_message_in(view, answer["rule"], answer["params"], answer["message"])
    if answer["code"] == "page_only":
        if link:
            return gettext(
                "Resigning and reminding your opponent are done on your game's page: %(link)s",
                link=link,
            )
        return gettext("Resigning and reminding your opponent are done on your game's page.")
    if answer["code"] == "closed":
        # The game service's refusals other than a rule (games.StaleVersion, games.GameClosed),
        # with how the game ended, as its page says it.
        ended = result(view)
        closed = gettext("This game takes no more moves.")
        return f"{closed} {ended}" if ended else closed
    if answer["code"] in REASONS:
        return REASONS[answer["code"]](answer)
    return gettext("The move could not be read.")


TEMPLATE_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "answer_understood": understood_text,
    "answer_played": played_text,
    "answer_news": happened,
    "answer_reason": reason_text,
}
