"""The answers to replies, applied and refused, in English and French, against saved snapshots.

Run with ``UPDATE_SNAPSHOTS=1`` to rewrite them after a deliberate change.
"""

from __future__ import annotations

import os
import random
import re

import pytest
import time_machine
from flask import Flask

from service.models import Game, OutboxMessage, db
from service.perspective import player_view

from ..helpers import pick_action
from ..mail.test_templates import ENGLISH, NOW, SNAPSHOTS, normalise
from .helpers import reply_message, send


@pytest.mark.parametrize("language", ["en", "fr"])
def test_answers_match_their_snapshots(
    app: Flask, make_game, smtp_server, deliver, inbound, language: str
) -> None:
    with time_machine.travel(NOW, tick=False):
        game_id = make_game(
            seed=101, days_per_move=3, keeper_language=language, shadow_language=language
        )["id"]
        deliver()
        (invitation,) = smtp_server.handler.to("kim@example.com")
        with app.app_context():
            view = player_view(db.session.get_one(Game, game_id).player("keeper"))
        cards = pick_action(view, random.Random(1))["exchange"]
        for text, message_id in (
            ("I am not sure how this works", "<one@example.com>"),
            (" ".join(cards), "<two@example.com>"),
        ):
            send(inbound, reply_message(invitation, text, message_id=message_id))
            deliver()  # each answer as it was when its reply came
    with app.app_context():
        answers = db.session.query(OutboxMessage).filter_by(kind="answer").order_by("id").all()
    assert len(answers) == 2
    update = os.environ.get("UPDATE_SNAPSHOTS") == "1"
    folder = SNAPSHOTS / language if language != "en" else SNAPSHOTS
    for name, message in zip(("answer_refused", "answer_applied"), answers, strict=True):
        rendered = {
            "txt": f"Subject: {message.subject}\nTo: {message.recipient}\n\n"
            + normalise(message.text_body),
            "html": normalise(message.html_body),
        }
        for suffix, text in rendered.items():
            for syntax in ("{{", "}}", "{%", "%}", "%("):
                assert syntax not in text, (name, syntax)
            if language == "fr":
                words = re.sub(r"https?://\S+|<[^>]+>", " ", text).replace("Split Mind by Mail", "")
                words = words.replace("I am not sure how this works", "")  # the player's words
                assert not ENGLISH.findall(words), (name, ENGLISH.findall(words))
            path = folder / f"{name}.{suffix}"
            if update or not path.exists():
                assert update, f"no snapshot {path.name}: run with UPDATE_SNAPSHOTS=1"
                path.write_text(text)
            assert text == path.read_text(), f"{path.name} differs from its snapshot"
