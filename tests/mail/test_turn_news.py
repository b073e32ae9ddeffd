"""A turn email says what happened: its subject names the move, its body everything since."""

from __future__ import annotations

import random

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service.language import recipient_locale
from service.mail.compose import last_trick, trick
from service.models import Game, OutboxMessage, db

from ..factories import one_by_one, played
from ..helpers import pick_action, write_queued
from ..rules.helpers import play, playing
from ..secrecy import hidden_cards, leaks
from ..smtp import SMTPServer


def turn_emails_of_a_game(app: Flask, game: dict, seed: int) -> dict:
    """Every turn email queued while a game is played at random, by id, as first written.

    A turn email replaces the player's unsent one, so each is read as soon as it is queued;
    its body is checked then for the cards its reader may not know.
    """
    found: dict[int, OutboxMessage] = {}
    for _, _, state in one_by_one(app, game["id"], seed):
        write_queued(app)
        with app.app_context():
            rows = db.session.scalars(
                select(OutboxMessage).where(
                    OutboxMessage.kind == "turn", OutboxMessage.game_id == game["id"]
                )
            ).all()
            db.session.expunge_all()
        for row in rows:
            if row.id in found:
                continue
            found[row.id] = row
            seat = "keeper" if row.recipient == "kim@example.com" else "shadow"
            assert not leaks(row.text_body, hidden_cards(state, seat), ()), row.text_body
    with app.app_context():
        assert db.session.get_one(Game, game["id"]).status == "finished"
    return found


@pytest.mark.slow
def test_turn_subjects_name_the_move_and_bodies_tell_the_news(
    app: Flask, client: FlaskClient, make_game
) -> None:
    found = {}
    for seed in (3, 4, 5):
        game = make_game(seed=seed)
        found.update({(seed, k): v for k, v in turn_emails_of_a_game(app, game, seed).items()})
    subjects = [m.subject for m in found.values()]
    assert any(": your answer, round " in s for s in subjects), subjects
    assert any(", you won trick " in s for s in subjects), subjects
    assert not any(s.startswith("Your move") for s in subjects), subjects
    for message in found.values():
        assert message.subject.endswith(")") and "(Split Mind, game " in message.subject
        if "Exchange done: your lead" in message.subject:
            assert "Exchange done: you gave " in message.text_body, message.text_body
        if "Swap done: your lead" in message.subject:
            assert "Swap done: you gave " in message.text_body, message.text_body
        if ": your answer, round " in message.subject:
            assert "Since your last move:" in message.text_body


def test_a_round_end_email_sent_late_tells_of_its_own_round(
    app: Flask, client: FlaskClient, make_game, deliver, smtp_server: SMTPServer
) -> None:
    """Written when sent, after another round has ended, it still tells of the round it is about."""
    game = make_game(seed=9)
    deliver()
    played(app, game["id"], 9, until=lambda view: len(view["rounds"]) >= 2)
    with app.app_context():
        rounds = db.session.get_one(Game, game["id"]).state["rounds"]
    smtp_server.received.clear()
    deliver()
    subjects = {
        r.message["Subject"] for r in smtp_server.received if "over, track" in r.message["Subject"]
    }
    tracks = [min(10, sum(result["moved"] for result in rounds[:n])) for n in (1, 2)]
    assert subjects == {
        f"Round {n} over, track {track} of 10: your exchange (Split Mind, game {game['id']})"
        for n, track in zip((1, 2), tracks, strict=True)
    }, subjects


def test_a_round_end_email_sent_after_the_readers_exchange_asks_for_none(
    client: FlaskClient, app: Flask, make_game, deliver, smtp_server: SMTPServer
) -> None:
    """Written when sent: a player who made the next exchange before it went is not asked for
    it, nor given its deadline; the opponent, who still owes theirs, is."""
    game = make_game(seed=9, days_per_move=3)
    deliver()
    played(app, game["id"], 9, until=lambda view: len(view["rounds"]) >= 1)
    view = client.get(f"/api/play/{game['keeper']}").get_json()
    body = {"version": view["version"], **pick_action(view, random.Random(9))}
    assert client.post(f"/api/play/{game['keeper']}", json=body).status_code == 200
    smtp_server.received.clear()
    deliver()
    (kims,), (sams,) = (
        [r for r in smtp_server.handler.to(address) if "over, track" in r.message["Subject"]]
        for address in ("kim@example.com", "sam@example.com")
    )
    assert ": your exchange" not in kims.message["Subject"]
    assert ": your exchange" in sams.message["Subject"]
    assert "Please move by" not in kims.text and "Please move by" in sams.text
    assert ">Open your game</a>" in kims.html and ">Choose your cards</a>" in sams.html


def test_a_trick_in_an_email_calls_its_reader_you(app: Flask) -> None:
    """The trick lines of the emails say "you" for their reader, as the page does."""
    hands = ("4S 1D 2D 3D 4D 5D 6D 7D 1H 2H", "5S 1C 2C 3C 4C 5C 3H 4H 5H 6H")
    moves = [("keeper", "1H"), ("shadow", "3H"), ("shadow", "2C"), ("keeper", "4S")]
    entry = play(playing(*hands), *moves)["history"][-1]
    view = {
        "seat": "keeper",
        "names": {"keeper": "Kim", "shadow": "Sam"},
        "look": "standard",
        "history": [entry],
        "phase": "play",
    }
    with app.app_context():
        assert trick(entry, view) == (
            "Round 1, trick 2: Sam 2♣, you ♠4½; you won (Steal: you took a trick from Sam)."
        )
        assert trick(entry, {**view, "seat": "shadow"}) == (
            "Round 1, trick 2: you 2♣, Kim ♠4½; Kim won (Steal: Kim took a trick from you)."
        )
        assert last_trick(view) == (
            "Last trick: Sam 2♣, you ♠4½; you won it. Steal: you took a trick from Sam."
        )
        with recipient_locale("fr"):
            assert trick(entry, view) == (
                "Manche 1, pli 2\u00a0: Sam 2♣, vous ♠4½\u00a0; vous l’avez remporté"
                " (Vol\u00a0: vous prenez un pli à Sam)."
            )
