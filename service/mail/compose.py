"""Render emails from ``templates/email/``: a subject, a plain-text body and an HTML body.

Every email is rendered in its recipient's language, and every email about a
game from the recipient's seat view, the same one the move page uses, so an
email cannot say more than the page may. The sentences about the game below
are handed to the templates as functions, so they too are written while the
email renders, in the recipient's language.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from flask import current_app
from itsdangerous import BadSignature

from ..game_text import (
    card_list,
    card_name,
    early_match_winner,
    suit_name,
    the_seat,
    trick_effect,
    upfirst,
)
from ..language import DEFAULT_LANGUAGE, gettext, language_code, ngettext, recipient_locale
from ..links import serializer
from ..models import Player, is_row_id
from ..perspective import since_last_move
from ..rules import EXCHANGE, OVER, PLAY, SWAP

UNSUBSCRIBE_SALT = "splitmind.unsubscribe"
STOP_ALL_SALT = "splitmind.unsubscribe.address"
# Runs of white space in a subject become one space, all but the no-break spaces of French.
SUBJECT_SPACE = re.compile(r"[^\S\u00a0\u202f]+")


@dataclass(frozen=True)
class Email:
    """A rendered email, and the headers its writer sets on those it was queued with (``None``
    drops one)."""

    subject: str
    text: str
    html: str
    headers: dict[str, str | None] = field(default_factory=dict)


def with_headers(queued: dict[str, Any], written: dict[str, str | None]) -> dict[str, Any]:
    """The headers an email goes out with: those it was queued with, as its writer set them."""
    merged = {**queued, **written}
    return {name: value for name, value in merged.items() if value is not None}


def render(name: str, language: str | None, **context: Any) -> Email:
    """Render ``email/<name>.txt`` (which sets ``subject``) and ``email/<name>.html``.

    ``language`` is the recipient's (``None``, or one the service does not
    speak, gives English); the email says which it is in (``Content-Language``,
    RFC 3282), for the reader's client and its screen reader.
    """
    env = current_app.jinja_env
    # Deadlines are in UTC unless the caller knows the recipient's time zone (``time_zone``).
    base = {"base_url": current_app.config["BASE_URL"], "time_zone": None}
    context = {**SENTENCES, **base, **context}
    with recipient_locale(language):
        text = env.get_template(f"email/{name}.txt").make_module(context)
        subject = SUBJECT_SPACE.sub(" ", str(getattr(text, "subject", "Split Mind"))).strip()
        html = env.get_template(f"email/{name}.html").render({**context, "subject": subject})
    written_in = language_code(language) or DEFAULT_LANGUAGE
    return Email(
        subject=subject,
        text=str(text).strip() + "\n",
        html=html,
        headers={"Content-Language": written_in},
    )


# A line of the plain-text part, at most, where it can be broken at a space (RFC 3676, 5322).
FLOWED_WIDTH = 78
# A word and the spaces after it: a flowed line breaks after the spaces, which end it.
WORD_AND_SPACES = re.compile(r"[^ ]+ *| +")


def flowed(text: str) -> str:
    """``text`` as a ``format=flowed`` part carries it (RFC 3676): each line of more than
    :data:`FLOWED_WIDTH` characters broken after a space, which ends the line and tells the
    reader's client to join it to the next again, so that a phone shows whole paragraphs and
    a terminal lines that fit. A word longer than a line (a link) is never broken, and stays
    whole on a line of its own. A line that starts with a space, ``>`` or ``From `` gets a
    space before it, which the reader drops; spaces that ended a line are dropped, as they
    would join it to the next."""
    lines: list[str] = []
    for line in text.split("\n"):
        line = line.rstrip(" ")
        pieces: list[str] = []
        for word in WORD_AND_SPACES.findall(line):
            too_long = pieces and len(_stuffed(pieces[-1] + word)) > FLOWED_WIDTH
            if too_long and pieces[-1].endswith(" "):
                pieces.append(word)
            elif pieces:
                pieces[-1] += word
            else:
                pieces.append(word)
        lines.extend(_stuffed(piece) for piece in pieces or [""])
    return "\n".join(lines)


def _stuffed(line: str) -> str:
    """A line of a flowed part, with a space before it where the reader would take its
    start for a quote or for the stuffing itself (RFC 3676, 4.4)."""
    return f" {line}" if line.startswith((" ", ">", "From ")) else line


def unsubscribe_headers(link: str) -> dict[str, str]:
    """The headers of a one-click unsubscribe (RFC 8058) through ``link``."""
    return {"List-Unsubscribe": f"<{link}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}


def stop_all_url(email: str) -> str:
    """The link that stops every email to an address, for the emails about no game of its own.

    Anyone can have an invitation, an address to confirm or the links of its
    games sent to an address; that address can say no to all of them at once.
    """
    token = serializer(STOP_ALL_SALT).dumps(email)
    return f"{current_app.config['BASE_URL']}/unsubscribe/{token}"


def stopping_address(token: str) -> str | None:
    """The address in a stop-every-email token, or ``None`` if it is not one of ours."""
    try:
        value = serializer(STOP_ALL_SALT).loads(token)
    except BadSignature:
        return None
    return value if isinstance(value, str) else None


def unsubscribe_token(player: Player) -> str:
    """The signed token of the player's stop-notifications link for one game.

    It signs the player's id and link key, as their game link does: once an admin
    rotates the link or corrects the address (each a new key), the link in the
    emails sent before stops nothing (:func:`service.invitations.stops_for`).
    """
    return serializer(UNSUBSCRIBE_SALT).dumps([player.id, player.link_key or ""])


def unsubscribe_link(token: str) -> tuple[int, str | None] | None:
    """The player id and link key an unsubscribe token signs, or ``None`` if it is not one of
    ours. The key is ``None`` in a token made before tokens signed it (a bare id)."""
    try:
        value = serializer(UNSUBSCRIBE_SALT).loads(token)
    except BadSignature:
        return None
    if _is_player_id(value):
        return value, None
    if isinstance(value, list) and len(value) == 2 and _is_player_id(value[0]):
        key = value[1]
        return (value[0], key) if isinstance(key, str) else None
    return None


def _is_player_id(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and is_row_id(value)


# --- the game in words, from a seat view, in the current language ----------------


def hello(name: str | None) -> str:
    """The greeting an email opens with: ``Hello Kim,``, or ``Hello,`` without a name."""
    return gettext("Hello %(name)s,", name=name) if name else gettext("Hello,")


def situation(view: Mapping[str, Any]) -> str:
    """The game in one sentence: ``Round 2, trick 6: your lead. Track 4 of 10.``"""
    track = gettext(
        "Track %(track)s of %(length)s.", track=view["track"], length=view["track_length"]
    )
    return f"{_where(view)} {track}"


def _where(view: Mapping[str, Any]) -> str:
    number, name, mine = view["round"], view["opponent"], view["your_turn"]
    if view["status"] != "active":
        if len(view["rounds"]) == number:
            return gettext("Game over after round %(round)s.", round=number)
        # Cancelled, timed out or forfeited before the round ended (perhaps as it was dealt).
        return gettext("Game over in round %(round)s.", round=number)
    if view["phase"] == EXCHANGE and mine:
        return ngettext(
            "Round %(round)s, the exchange: choose %(num)d card to give %(name)s.",
            "Round %(round)s, the exchange: choose %(num)d cards to give %(name)s.",
            number,
            round=number,
            name=name,
        )
    if view["phase"] == EXCHANGE:
        return gettext(
            "Round %(round)s, the exchange: %(name)s is choosing cards to give you.",
            round=number,
            name=name,
        )
    trick = min(view["trick"], view["tricks_per_round"])
    if view["phase"] == SWAP and mine:
        return gettext(
            "Round %(round)s, swap after trick %(trick)s: choose the cards to swap.",
            round=number,
            trick=trick - 1,
        )
    if view["phase"] == SWAP:
        return gettext(
            "Round %(round)s, swap after trick %(trick)s: %(name)s is choosing cards to swap.",
            round=number,
            trick=trick - 1,
            name=name,
        )
    if not mine:
        return gettext(
            "Round %(round)s, trick %(trick)s: %(name)s to play.",
            round=number,
            trick=trick,
            name=name,
        )
    if view["table"]:
        return gettext(
            "Round %(round)s, trick %(trick)s: your turn to answer the %(card)s %(name)s led.",
            round=number,
            trick=trick,
            name=name,
            card=card_name(view["table"][0]["card"], view["look"]),
        )
    return gettext("Round %(round)s, trick %(trick)s: your lead.", round=number, trick=trick)


def _cards(entry: Mapping[str, Any], view: Mapping[str, Any]) -> str:
    """A trick's cards with who played them, the reader as "you": ``you 3♣, Sam ♠3``."""
    return ", ".join(
        f"{_who(play['seat'], view)} {card_name(play['card'], view['look'])}"
        for play in entry["cards"]
    )


def _who(seat: str, view: Mapping[str, Any]) -> str:
    """The player of ``seat`` in a list of the trick's cards: "you" for the reader."""
    return gettext("you") if seat == view["seat"] else str(view["names"][seat])


def last_trick(view: Mapping[str, Any]) -> str:
    """What the last trick was, in words: cards, winner and what its elixir did."""
    if not view["history"]:
        return ""
    entry = view["history"][-1]
    if entry["winner"] == view["seat"]:
        text = gettext("Last trick: %(cards)s; you won it.", cards=_cards(entry, view))
    else:
        text = gettext(
            "Last trick: %(cards)s; %(name)s won it.",
            cards=_cards(entry, view),
            name=view["names"][entry["winner"]],
        )
    if entry["effect"]:
        text += f" {trick_effect(entry, view)}."
    return text


def trick(entry: Mapping[str, Any], view: Mapping[str, Any]) -> str:
    """One trick of the game's record: ``Round 1, trick 3: you 5♣, Sam ♠4; you won (…).``"""
    words = {"round": entry["round"], "trick": entry["trick"], "cards": _cards(entry, view)}
    mine = entry["winner"] == view["seat"]
    if entry["effect"] and mine:
        return gettext(
            "Round %(round)s, trick %(trick)s: %(cards)s; you won (%(effect)s).",
            effect=trick_effect(entry, view),
            **words,
        )
    if entry["effect"]:
        return gettext(
            "Round %(round)s, trick %(trick)s: %(cards)s; %(name)s won (%(effect)s).",
            effect=trick_effect(entry, view),
            name=view["names"][entry["winner"]],
            **words,
        )
    if mine:
        return gettext("Round %(round)s, trick %(trick)s: %(cards)s; you won.", **words)
    return gettext(
        "Round %(round)s, trick %(trick)s: %(cards)s; %(name)s won.",
        name=view["names"][entry["winner"]],
        **words,
    )


def headline(view: Mapping[str, Any]) -> str:
    """What a turn email is about, for its subject: ``Kim led 5♥: your answer, round 2 trick 3``.

    Built from the seat view only: the opponent's lead on the table, the trick
    the player just won, or the exchange or swap just settled. A name that starts it
    starts with a capital (the computer's), wherever the reader's language puts it.
    """
    return upfirst(_headline(view))


def _headline(view: Mapping[str, Any]) -> str:
    name, number, table = view["opponent"], view["round"], view["table"]
    trick = min(view["trick"], view["tricks_per_round"])
    words = {"name": name, "round": number, "trick": trick}
    if view["phase"] == EXCHANGE:
        return gettext("Round %(round)s exchange: your cards to give", round=number)
    if view["phase"] == SWAP:
        return gettext(
            "Swap after trick %(done)s: your cards to give, round %(round)s",
            done=trick - 1,
            round=number,
        )
    if view["phase"] != PLAY:
        return gettext("Your move, round %(round)s trick %(trick)s", **words)
    if table and table[0]["seat"] != view["seat"]:
        card = card_name(table[0]["card"], view["look"])
        return gettext(
            "%(name)s led %(card)s: your answer, round %(round)s trick %(trick)s",
            card=card,
            **words,
        )
    since = view["since"]
    last = since[-1] if since else None
    if last and (last["round"], last["trick"]) == (number, trick - 1):
        answer = next(play for play in last["cards"] if play["seat"] != view["seat"])
        if last["winner"] == view["seat"]:
            return gettext(
                "%(name)s played %(card)s, you won trick %(done)s: your lead, round %(round)s"
                " trick %(trick)s",
                card=card_name(answer["card"], view["look"]),
                done=trick - 1,
                **words,
            )
    settled = view["transfers"][-1] if view["transfers"] else None
    if settled and (settled["round"], settled["after_trick"]) == (number, trick - 1):
        if settled["kind"] == EXCHANGE:
            return gettext("Exchange done: your lead, round %(round)s trick %(trick)s", **words)
        return gettext("Swap done: your lead, round %(round)s trick %(trick)s", **words)
    return gettext("Your move, round %(round)s trick %(trick)s", **words)


def round_headline(view: Mapping[str, Any], number: int, track: int) -> str:
    """What the end of round ``number`` is about: ``Round 1 over, track 4 of 10: your exchange``,
    or without the exchange once the reader has made it (the email is written when sent).

    ``track`` is where that round left the track (play may have gone on since).
    """
    words = {"round": number, "track": track, "length": view["track_length"]}
    if view["your_turn"] and view["phase"] == EXCHANGE:
        return gettext(
            "Round %(round)s over, track %(track)s of %(length)s: your exchange", **words
        )
    return gettext("Round %(round)s over, track %(track)s of %(length)s", **words)


def news(view: Mapping[str, Any], rounds: bool = True) -> list[str]:
    """What happened since the player's last move, one sentence each, oldest first.

    The cards the player received in an exchange or swap, each trick and what
    its elixir did, each round's end (unless ``rounds`` is false: the round's
    end email says it first) and the opponent's lead. All from the seat view
    (:func:`service.perspective.since_last_move`), the same news as the move page.
    """
    look, sentences = view["look"], []
    for kind, what in since_last_move(view):  # type: ignore[arg-type]
        if kind == "transfer":
            sentences.append(transfer_done(what, look))
        elif kind == "trick":
            sentences.append(trick(what, view))
        elif kind == "round" and rounds:
            sentences.append(round_over(what[0], what[1], view))
        elif kind == "lead":
            sentences.append(lead(what, view))
    return sentences


def transfer_done(transfer: Mapping[str, Any], look: str) -> str:
    """An exchange or swap settled, as the seat saw it: ``Exchange done: you gave … received …``."""
    words = {
        "gave": card_list(transfer["gave"], look),
        "received": card_list(transfer["received"], look),
    }
    if transfer["kind"] == EXCHANGE:
        return gettext("Exchange done: you gave %(gave)s and received %(received)s.", **words)
    return gettext("Swap done: you gave %(gave)s and received %(received)s.", **words)


def round_over(number: int, result: Mapping[str, Any], view: Mapping[str, Any]) -> str:
    """A round's end for the player: ``Round 1 is over: 6 tricks for you, 4 for Kim; …``."""
    mine, theirs = result[view["seat"]], result["shadow" if view["seat"] == "keeper" else "keeper"]
    return ngettext(
        "Round %(number)s is over: %(num)d trick for you, %(theirs)s for %(name)s; the track"
        " moves %(moved)s.",
        "Round %(number)s is over: %(num)d tricks for you, %(theirs)s for %(name)s; the track"
        " moves %(moved)s.",
        mine,
        number=number,
        theirs=theirs,
        name=view["opponent"],
        moved=view["rounds"][number - 1]["advanced"],
    )


def lead(played: Mapping[str, Any], view: Mapping[str, Any]) -> str:
    """The opponent's lead on the table: ``Kim leads ♠4, naming hearts.``"""
    name, card = view["opponent"], card_name(played["card"], view["look"])
    if played.get("name"):
        suit = suit_name(played["name"], view["look"])
        return upfirst(
            gettext("%(name)s leads %(card)s, naming %(suit)s.", name=name, card=card, suit=suit)
        )
    return upfirst(gettext("%(name)s leads %(card)s.", name=name, card=card))


def result(view: Mapping[str, Any]) -> str:
    """How the game ended, for the player whose view it is; empty while it goes on. A
    sentence that starts with the opponent's name starts with a capital ("The computer
    (hard) won: …")."""
    return upfirst(_ending(view))


def _ending(view: Mapping[str, Any]) -> str:
    status, name = view["status"], view["opponent"]
    mine = view["winner"] == view["seat"]
    if status == "timed_out" and mine:
        return gettext("%(name)s ran out of time: you win.", name=name)
    if status == "timed_out":
        return gettext("You ran out of time: %(name)s wins.", name=name)
    if status == "resigned" and mine:
        return gettext("%(name)s resigned: you win.", name=name)
    if status == "resigned":
        return gettext("You resigned: %(name)s wins.", name=name)
    if status == "abandoned":
        return gettext("Neither of you chose in time: the game is abandoned.")
    if status == "cancelled":
        return gettext("The game was cancelled by the server's admins.")
    if status != "finished":
        return ""
    words = {
        "name": name,
        "seat": the_seat(view["winner"], view["look"]),
        "track": view["track"],
        "length": view["track_length"],
    }
    if view["phase"] != OVER and mine:  # finished before the rules ended it: a forfeit
        return gettext("You won: %(seat)s wins by forfeit.", **words)
    if view["phase"] != OVER:
        return gettext("%(name)s won: %(seat)s wins by forfeit.", **words)
    if view["track"] >= view["track_length"] and mine:
        return gettext("You won: %(seat)s wins with the track at %(length)s.", **words)
    if view["track"] >= view["track_length"]:
        return gettext("%(name)s won: %(seat)s wins with the track at %(length)s.", **words)
    if mine:
        return ngettext(
            "You won: %(seat)s wins with the track at %(track)s of %(length)s after %(num)d round.",
            "You won: %(seat)s wins with the track at %(track)s of %(length)s after %(num)d"
            " rounds.",
            view["last_round"],
            **words,
        )
    return ngettext(
        "%(name)s won: %(seat)s wins with the track at %(track)s of %(length)s after %(num)d"
        " round.",
        "%(name)s won: %(seat)s wins with the track at %(track)s of %(length)s after %(num)d"
        " rounds.",
        view["last_round"],
        **words,
    )


def match_score(view: Mapping[str, Any]) -> str:
    """The return match's score and, once known, its outcome; empty for a single game."""
    match = view["match"]
    if not match:
        return ""
    scores = f"{view['you']} {match['you']}, {view['opponent']} {match['opponent']}"
    text = gettext("Return match score: %(scores)s.", scores=scores)
    if match["over"] and match["draw"]:
        outcome = gettext("The match is a draw.")
    elif match["over"] and match["winner"] is None:
        outcome = gettext("The match ended without a winner.")
    elif match["over"] and match["ended_early"]:
        outcome = early_match_winner(view[match["winner"]])
    elif match["over"]:
        # The computer's name starts with a small letter: the sentence, with a capital.
        outcome = upfirst(gettext("%(name)s wins the match.", name=view[match["winner"]]))
    elif match["game"] == 1 and view["status"] == "finished":
        outcome = gettext("The second game, with roles swapped, starts now: watch for its email.")
    else:
        return text
    return f"{text} {outcome}"


SENTENCES: dict[str, Callable[..., str | list[str]]] = {
    "hello": hello,
    "situation": situation,
    "last_trick": last_trick,
    "trick": trick,
    "result": result,
    "headline": headline,
    "round_headline": round_headline,
    "news": news,
    "round_over": round_over,
    "match_score": match_score,
}
