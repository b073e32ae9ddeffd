"""Render emails from ``templates/email/``: a subject, a plain-text body and an HTML body.

Every email about a game is rendered from the recipient's seat view, the same
one the move page uses, so an email cannot say more than the page may.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import current_app
from itsdangerous import BadSignature, URLSafeSerializer

from ..models import Player
from ..rules.labels import card_label, effect_label, seat_label

UNSUBSCRIBE_SALT = "splitmind.unsubscribe"


@dataclass(frozen=True)
class Email:
    """A rendered email."""

    subject: str
    text: str
    html: str


def render(name: str, **context: Any) -> Email:
    """Render ``email/<name>.txt`` (which sets ``subject``) and ``email/<name>.html``."""
    env = current_app.jinja_env
    context.setdefault("base_url", current_app.config["BASE_URL"])
    text = env.get_template(f"email/{name}.txt").make_module(context)
    subject = " ".join(str(getattr(text, "subject", "Split Mind")).split())
    html = env.get_template(f"email/{name}.html").render({**context, "subject": subject})
    return Email(subject=subject, text=str(text).strip() + "\n", html=html)


def unsubscribe_token(player: Player) -> str:
    """The signed token of the player's stop-notifications link for one game."""
    return URLSafeSerializer(current_app.config["SECRET_KEY"], salt=UNSUBSCRIBE_SALT).dumps(
        player.id
    )


def unsubscribed_player_id(token: str) -> int | None:
    """The player id in an unsubscribe token, or ``None`` if it is not one of ours."""
    try:
        value = URLSafeSerializer(current_app.config["SECRET_KEY"], salt=UNSUBSCRIBE_SALT).loads(
            token
        )
    except BadSignature:
        return None
    return value if isinstance(value, int) else None


def situation(view: dict[str, Any]) -> str:
    """The game in one sentence: ``Round 2, trick 6: your lead. Track 4 of 10.``"""
    look = view["look"]
    track = f"Track {view['track']} of 10."
    if view["status"] != "active":
        return f"Game over after round {view['round']}. {track}"
    opponent = view["opponent"]
    where = f"Round {view['round']}"
    mine = view["your_turn"]
    if view["phase"] == "exchange":
        count = view["round"]
        what = (
            f"choose {count} card{'s' if count > 1 else ''} to give {opponent}"
            if mine
            else f"{opponent} is choosing cards to give you"
        )
        return f"{where}, the exchange: {what}. {track}"
    trick = min(view["trick"], 10)
    if view["phase"] == "swap":
        what = "choose the cards to swap" if mine else f"{opponent} is choosing cards to swap"
        return f"{where}, swap after trick {trick - 1}: {what}. {track}"
    if not mine:
        return f"{where}, trick {trick}: {opponent} to play. {track}"
    if view["table"]:
        lead = card_label(view["table"][0]["card"], look)
        return f"{where}, trick {trick}: your turn to answer {opponent}'s {lead}. {track}"
    return f"{where}, trick {trick}: your lead. {track}"


def last_trick(view: dict[str, Any]) -> str:
    """What the last trick was, in words: cards, winner and what its elixir did."""
    if not view["history"]:
        return ""
    entry = view["history"][-1]
    look = view["look"]
    names = view["names"]
    cards = ", ".join(
        f"{names[play['seat']]} {card_label(play['card'], look)}" for play in entry["cards"]
    )
    text = f"Last trick: {cards}; {names[entry['winner']]} won it."
    if entry["effect"]:
        text += f" {effect_label(entry, look)}."
    return text


def role_label(seat: str, look: str) -> str:
    """The seat's name in the game's look."""
    return seat_label(seat, look)
