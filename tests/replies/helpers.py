"""Replying to the emails the tests' SMTP server received, through the service's LMTP server."""

from __future__ import annotations

import random
import smtplib
from collections.abc import Callable
from email.message import EmailMessage
from email.utils import make_msgid
from typing import Any

from flask import Flask

from service.rules import is_elixir

from ..helpers import TOKEN, scrape
from ..helpers import value as sample
from ..smtp import Received

RANK_WORDS = {"1": "ace", "2": "two", "3": "three", "4": "four", "5": "five", "6": "6", "7": "7"}
SUIT_WORDS = {"H": "hearts", "D": "diamonds", "C": "clubs", "S": "spades"}
SYMBOLS = {"H": "♥", "D": "♦", "C": "♣", "S": "♠"}


def reply_message(
    received: Received,
    text: str,
    *,
    sender: str | None = None,
    html: str | None = None,
    message_id: str | None = None,
    headers: dict[str, str] | None = None,
    to: str | None = None,
) -> EmailMessage:
    """A reply to ``received`` as a mail client writes one: ``text`` above a quote of the email.

    With ``html``, the reply has only that HTML body (quoting the email in a blockquote).
    """
    message = EmailMessage()
    message["From"] = sender or received.envelope_to[0]
    message["To"] = to or str(received.message["Reply-To"])
    message["Subject"] = f"Re: {received.message['Subject']}"
    message["Message-ID"] = message_id or make_msgid(domain="example.com")
    message["In-Reply-To"] = str(received.message["Message-ID"])
    for name, value in (headers or {}).items():
        message[name] = value
    quote = "\n".join(f"> {line}" for line in received.text.splitlines())
    if html is not None:
        message.set_content(
            f"<html><body>{html}<div class=gmail_quote>On Tue, Split Mind wrote:"
            f"<blockquote>{received.html}</blockquote></div></body></html>",
            subtype="html",
        )
    else:
        message.set_content(f"{text}\n\nOn Tue, 1 Dec 2026, Split Mind wrote:\n{quote}\n")
    return message


def send(port: int, message: EmailMessage, envelope_from: str | None = None) -> None:
    """Hand a message to the service's LMTP server, as the site's mail server would."""
    send_bytes(
        port,
        as_bytes(message),
        envelope_from if envelope_from is not None else str(message["From"]),
        str(message["To"]),
    )


def as_bytes(message: EmailMessage) -> bytes:
    """A message as it travels: lines ending in CRLF."""
    return message.as_bytes(policy=message.policy.clone(linesep="\r\n"))


def send_bytes(port: int, raw: bytes, envelope_from: str, recipient: str) -> None:
    """Hand a message's bytes, as they are, to the service's LMTP server."""
    with smtplib.LMTP("127.0.0.1", port) as client:
        client.sendmail(envelope_from, [recipient], raw)


def move_text(action: dict[str, Any], rng: random.Random) -> str:
    """A move as a player may write it: notation, symbols or words, in English or French."""
    if "play" in action:
        card, name = action["play"], action.get("name")
        style = rng.randrange(4)
        if style == 0:
            written = card
        elif style == 1:
            written = f"{card[0]}{SYMBOLS[card[1]]}"
        elif style == 2:
            written = f"play the {RANK_WORDS[card[0]]} of {SUIT_WORDS[card[1]]}"
        else:
            written = f"jouer {card[0]}{SYMBOLS[card[1]]}"
        if name:
            written += " " + rng.choice([name, SUIT_WORDS[name], f"naming {SUIT_WORDS[name]}"])
        return written
    cards = next(iter(action.values()))
    if rng.random() < 0.5:
        return " ".join(cards)
    return "give " + " and ".join(
        f"{SYMBOLS[c[1]]}{c[0]}" if is_elixir(c) else f"{c[0]}{SYMBOLS[c[1]]}" for c in cards
    )


def replies_counted(app: Flask, read: Callable[[], None]) -> dict[str, float]:
    """How many replies ``splitmind_replies_total`` counted, by outcome, while ``read`` ran,
    as a scrape of /metrics says."""
    app.config["METRICS_TOKEN"] = TOKEN
    client = app.test_client()
    before = scrape(client)
    read()
    after = scrape(client)
    counted = {
        dict(labels)["outcome"]: after[name, labels] - sample(before, name, **dict(labels))
        for name, labels in after
        if name == "splitmind_replies_total"
    }
    return {outcome: count for outcome, count in counted.items() if count}
