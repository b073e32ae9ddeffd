"""Emails in the recipient's language and in the game's look."""

from __future__ import annotations

import re

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service.models import OutboxMessage, Player, db
from service.perspective import set_language
from service.unit_of_work import transaction

from ..factories import one_by_one
from ..helpers import write_queued
from ..secrecy import leaks
from .test_invitations import last_link
from .test_templates import invite

# Words of the standard look, which a classic game's emails never use.
STANDARD_WORDS = {
    "en": ["Keeper", "Shadow", "elixir", "hearts", "diamonds", "clubs", "suit"],
    "fr": ["Gardien", "Ombre", "élixir", "cœur", "carreau", "trèfle"],
}


def outbox(app: Flask, kind: str) -> dict[str, OutboxMessage]:
    """The first queued email of ``kind`` to each recipient, as it would be sent now."""
    write_queued(app)
    with app.app_context():
        rows = db.session.scalars(
            select(OutboxMessage).where(OutboxMessage.kind == kind).order_by(OutboxMessage.id)
        ).all()
        db.session.expunge_all()
    first: dict[str, OutboxMessage] = {}
    for row in rows:
        first.setdefault(row.recipient, row)
    return first


def test_each_player_reads_their_own_language(app: Flask, client: FlaskClient, make_game) -> None:
    """A French Keeper's emails are in French, the English Shadow's in English.

    The moves come from a French page: the page's language is not the recipient's.
    """
    game = make_game(seed=31, keeper_language="fr")
    client.set_cookie("lang", "fr")
    moves = one_by_one(app, game["id"], 31)
    for _ in range(60):
        if len(outbox(app, "turn")) == 2:
            break
        next(moves)
    invitation, turn = outbox(app, "invitation"), outbox(app, "turn")
    number = game["id"]
    kim, sam = "kim@example.com", "sam@example.com"
    assert (
        invitation[kim].subject
        == f"Split Mind, partie {number}\u00a0: vous êtes le Gardien contre Sam"
    )
    assert invitation[sam].subject == f"Split Mind, game {number}: you are the Shadow against Kim"
    assert turn[kim].subject.endswith(f"(Split Mind, partie {number})")
    assert "manche" in turn[kim].subject
    assert turn[sam].subject.endswith(f"(Split Mind, game {number})")
    assert "round" in turn[sam].subject
    for message in (invitation[kim], turn[kim]):
        assert message.text_body.startswith("Bonjour Kim,")
        assert '<html lang="fr">' in message.html_body
    assert "Manche 1, pli" in turn[kim].text_body
    for message in (invitation[sam], turn[sam]):
        assert message.text_body.startswith("Hello Sam,")
        assert '<html lang="en">' in message.html_body
    assert "Round 1, trick" in turn[sam].text_body


def test_invitation_emails_are_in_the_creators_language(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    """The opponent has no language yet: their invitation is in the creator's.

    Once the game starts, the creator plays in their language and the opponent in English
    until they choose one on their page.
    """
    invite(app, "fr")
    deliver()
    client.post(last_link(smtp_server, "ann@example.com", "/invitations/"))
    deliver()
    client.post(
        last_link(smtp_server, "bob@example.com", "/invitations/"), data={"answer": "accept"}
    )
    confirm, opponent = outbox(app, "confirm_address"), outbox(app, "invite_opponent")
    started = outbox(app, "invitation")
    assert confirm["ann@example.com"].subject.startswith("Split Mind\u00a0: confirmez")
    assert opponent["bob@example.com"].subject == "Ann vous invite à jouer à Split Mind"
    assert started["ann@example.com"].text_body.startswith("Bonjour Ann,")
    assert started["bob@example.com"].text_body.startswith("Hello Bob,")


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.slow
def test_the_classic_look_reads_right_in_every_email(
    app: Flask, client: FlaskClient, make_game, language: str
) -> None:
    game = make_game(seed=5, look="classic", keeper_language=language, shadow_language=language)
    for _ in one_by_one(app, game["id"], 2):
        write_queued(app)
    with app.app_context():
        messages = db.session.scalars(select(OutboxMessage)).all()
        kinds = {message.kind for message in messages}
        texts = [f"{m.subject}\n{m.text_body}\n{m.html_body}" for m in messages]
    assert {"invitation", "turn", "round_end", "game_over"} <= kinds
    for text in texts:
        words = re.sub(r"https?://\S+|<[^>]+>", " ", text)
        for symbol in "♥♦♣♠":
            assert symbol not in words
        for word in STANDARD_WORDS[language]:
            assert not re.search(rf"\b{word}", words, re.I), (word, words)
    assert any("Jekyll" in text and "Hyde" in text for text in texts)
    assert any("potion" in text for text in texts)


def test_an_unknown_language_reads_english(app: Flask, make_game) -> None:
    game = make_game(keeper_language="xx")
    invitation = outbox(app, "invitation")["kim@example.com"]
    assert invitation.subject == f"Split Mind, game {game['id']}: you are the Keeper against Sam"


def test_a_card_named_in_french_is_caught_as_a_leak() -> None:
    assert leaks("Dernier pli : Sam as de cœur", {"1H"})
    assert leaks("Kim a joué 7 violet.", {"7C"})
    assert leaks("Sam entame avec élixir 4½.", {"4S"})
    assert not leaks("Manche 1, pli 7 : à vous d’entamer.", {"7C", "1H"})


def test_a_player_sets_a_language_the_service_speaks(app: Flask, make_game) -> None:
    game = make_game()
    with app.app_context():
        sam = db.session.scalars(
            select(Player).where(Player.game_id == game["id"], Player.seat == "shadow")
        ).one()
        with transaction():
            set_language(sam, "fr")
        with pytest.raises(ValueError, match="no language 'xx'"), transaction():
            set_language(sam, "xx")
        db.session.expire_all()
        assert db.session.get(Player, sam.id).language == "fr"
