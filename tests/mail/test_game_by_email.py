"""A whole game played by following only the links in the emails, and what the emails say."""

from __future__ import annotations

import itertools
import random
import re

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

from service.models import OutboxMessage, db
from service.rules import SEATS, to_act

from ..conftest import BASE_URL, load_game
from ..factories import one_by_one, played
from ..helpers import MoveForm, form_data, page_action, pick_action, random_move
from ..secrecy import hidden_cards, leaks

EMAILS = {"keeper": "kim@example.com", "shadow": "sam@example.com"}
# How each language says a move is owed in a turn email's subject (and in a round's end),
# ends the subject of the last one, and names the winner.
YOUR_MOVE = {
    "en": ("your answer", "your lead", "your cards to give", "Your move"),
    "fr": ("à vous de répondre", "à vous d’entamer", "à vous de donner", "À vous de jouer"),
}
OWE_A_MOVE = {
    "en": (*YOUR_MOVE["en"], "your exchange"),
    "fr": (*YOUR_MOVE["fr"], "à vous d’échanger"),
}
GAME_OVER = {"en": "game over", "fr": "partie terminée"}
WINS = {
    "en": {"keeper": "the Keeper wins", "shadow": "the Shadow wins"},
    "fr": {"keeper": "le Gardien l’emporte", "shadow": "l’Ombre l’emporte"},
}


def token_from(link: str) -> str:
    assert link.startswith(f"{BASE_URL}/play/"), link
    return link.rsplit("/", 1)[1]


@pytest.mark.parametrize(
    ("languages", "from_round"), [(("en", "en"), 1), (("fr", "en"), 2)], ids=["english", "french"]
)
@pytest.mark.slow
def test_a_whole_game_by_email_links(
    app: Flask,
    client: FlaskClient,
    make_game,
    smtp_server,
    deliver,
    languages: tuple[str, str],
    from_round: int,
) -> None:
    """Followed by two English players, then by a French Keeper and an English Shadow.

    Each move is made from the page behind the link of a player's newest email;
    the game's state only checks that the emails kept up with it. The English
    players follow the links from the first move; the French Keeper and the
    English Shadow from the second round, the first one played for them.
    """
    language = dict(zip(SEATS, languages, strict=True))
    game_id = make_game(
        seed=404, keeper_language=language["keeper"], shadow_language=language["shadow"]
    )["id"]
    deliver()
    own: dict[str, str] = {}
    for seat in SEATS:
        (invitation,) = smtp_server.handler.to(EMAILS[seat])
        assert "Split Mind" in invitation.message["Subject"]
        own[seat] = token_from(invitation.links("/play/")[0])
    rng = random.Random(404)
    seen = told = turn_emails = 0

    def check_new_emails(state: dict) -> None:
        """Every email since the last look: no hidden card, and a link that is the seat's own."""
        nonlocal seen, turn_emails
        for received in smtp_server.received[seen:]:
            seat = next(s for s in SEATS if EMAILS[s] in received.envelope_to)
            body = received.text + received.html + str(received.message["Subject"])
            assert not leaks(body, hidden_cards(state, seat), tuple(own.values())), body
            for link in received.links("/play/"):
                assert token_from(link) == own[seat]
            subject = str(received.message["Subject"])
            turn_emails += any(phrase in subject for phrase in YOUR_MOVE[language[seat]])
        seen = len(smtp_server.received)

    if from_round > 1:
        check_new_emails(load_game(app, game_id).state)
        played(app, game_id, 404, until=lambda view: view["round"] == from_round)
        deliver()
    for _ in range(300):
        state = load_game(app, game_id).state
        check_new_emails(state)
        if state["phase"] == "over":
            break
        pages = {}
        for seat in SEATS:
            newest = smtp_server.handler.to(EMAILS[seat])[-1]
            (link,) = set(newest.links("/play/"))
            pages[seat] = (token_from(link), MoveForm(client.get(link).get_data(as_text=True)))
        owing = [seat for seat in SEATS if pages[seat][1].offers_a_move]
        assert owing == to_act(state)
        mover = rng.choice(owing)
        token, form = pages[mover]
        before = {seat: len(smtp_server.handler.to(EMAILS[seat])) for seat in SEATS}
        response = client.post(f"/play/{token}", data=form_data(form, page_action(form, rng)))
        assert response.status_code == 303
        deliver()
        # A seat that owes a move because of this one hears of it (one that owed already
        # was told before, or owes since its own move: it is looking at its page).
        for seat in set(to_act(load_game(app, game_id).state)) - {mover} - set(owing):
            subjects = [str(m.message["Subject"]) for m in smtp_server.handler.to(EMAILS[seat])]
            assert any(
                phrase in subject
                for subject in subjects[before[seat] :]
                for phrase in OWE_A_MOVE[language[seat]]
            ), f"the {seat} owes a move and was not told: {subjects[before[seat] :]}"
            told += 1
    final = load_game(app, game_id)
    assert final.status == "finished"
    assert turn_emails > 10 and told >= turn_emails
    for seat in SEATS:
        last = smtp_server.handler.to(EMAILS[seat])[-1]
        assert f"{GAME_OVER[language[seat]]}, " in str(last.message["Subject"])
        assert WINS[language[seat]][final.winner] in last.text
        assert last.links("/rematch/")


def test_every_email_is_well_formed(app: Flask, make_game, smtp_server, deliver) -> None:
    make_game(seed=5)
    deliver()
    assert len(smtp_server.received) == 2
    ids = set()
    for received in smtp_server.received:
        message = received.message
        assert message.get_body(preferencelist=("plain",)) and message.get_body(
            preferencelist=("html",)
        )
        assert message["From"] and message["To"] and message["Date"]
        ids.add(message["Message-ID"])
        unsubscribe = message["List-Unsubscribe"].strip()
        assert re.fullmatch(rf"<{re.escape(BASE_URL)}/unsubscribe/[^>]+>", unsubscribe)
        assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        assert "Round 1, the exchange: choose 1 card to give" in received.text
    assert len(ids) == 2


def test_turn_emails_are_coalesced(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    """Never two unsent turn emails per player; none delivered after the player's own later move.

    The worker comes late, every few moves: a turn email queued before its
    player moved again says what the game looked like then, and must not go out.
    """
    game = make_game(seed=8)
    deliver()
    smtp_server.received.clear()
    queued_at: dict[str, int] = {}  # each turn email's Message-ID: the move that queued it
    last_move = dict.fromkeys(SEATS, -1)
    delivered = 0
    moves = itertools.islice(one_by_one(app, game["id"], 8), 30)
    for step, (seat, _, _) in enumerate(moves):
        last_move[seat] = step
        with app.app_context():
            waiting = db.session.execute(
                select(OutboxMessage.player_id, OutboxMessage.message_id).where(
                    OutboxMessage.kind == "turn", OutboxMessage.status == "queued"
                )
            ).all()
        players = [player_id for player_id, _ in waiting]
        assert len(players) == len(set(players)) and len(players) <= 2
        for _, message_id in waiting:
            queued_at.setdefault(message_id, step)
        if step % 3 < 2:
            continue
        deliver()
        views = {s: client.get(f"/api/play/{game[s]}").get_json() for s in SEATS}
        for received in smtp_server.received[delivered:]:
            if not received.message["Subject"].endswith("your move"):
                continue
            seat = next(s for s in SEATS if received.envelope_to == [EMAILS[s]])
            assert views[seat]["your_turn"], "a turn email went to a player who owed nothing"
            assert last_move[seat] < queued_at[received.message["Message-ID"]], (
                f"the {seat} got a turn email queued before their own move: {received.text}"
            )
        delivered = len(smtp_server.received)
    with app.app_context():
        skipped = db.session.scalar(select(func.count()).where(OutboxMessage.status == "skipped"))
    assert skipped >= 1


def queued_turn(app: Flask, seat: str) -> OutboxMessage | None:
    """The seat's turn email waiting in the outbox, if any."""
    with app.app_context():
        found = db.session.scalars(
            select(OutboxMessage).where(
                OutboxMessage.recipient == EMAILS[seat],
                OutboxMessage.kind == "turn",
                OutboxMessage.status == "queued",
            )
        ).one_or_none()
        db.session.expunge_all()
        return found


def test_a_player_who_moves_before_the_worker_gets_no_stale_turn_email(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    """Kim leads, Sam's turn email waits; Sam answers, wins the trick and leads: it is withdrawn."""
    game = make_game(seed=12)
    rng = random.Random(12)
    for _ in range(300):
        deliver()
        seat, _ = random_move(client, game, rng)
        sam = client.get(f"/api/play/{game['shadow']}").get_json()
        waiting = queued_turn(app, "shadow")
        if seat != "keeper" or sam["phase"] != "play" or waiting is None:
            continue
        before = len(smtp_server.handler.to(EMAILS["shadow"]))
        body = {"version": sam["version"], **pick_action(sam, rng)}
        assert client.post(f"/api/play/{game['shadow']}", json=body).status_code == 200
        after = client.get(f"/api/play/{game['shadow']}").get_json()
        if not (after["your_turn"] and after["phase"] == "play"):
            continue  # Kim won the trick: Sam's email was moot anyway
        deliver()
        subjects = [str(m.message["Subject"]) for m in smtp_server.handler.to(EMAILS["shadow"])]
        assert not [s for s in subjects[before:] if s.endswith("your move")], subjects[before:]
        with app.app_context():
            assert db.session.get(OutboxMessage, waiting.id).status == "skipped"
        return
    raise AssertionError("Sam never won a trick he answered")


@pytest.mark.slow
def test_no_email_to_a_player_who_keeps_the_move(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    """Winning a trick and leading the next, or swapping after one's own play: no email."""
    game = make_game(seed=12)
    deliver()
    moves = one_by_one(app, game["id"], 12)
    kept = 0
    for _ in range(300):
        before = {s: len(smtp_server.handler.to(EMAILS[s])) for s in SEATS}
        seat, view, _ = next(moves)
        deliver()
        after = client.get(f"/api/play/{game[seat]}").get_json()
        if after["phase"] == "over":
            break
        if after["your_turn"] and after["round"] == view["round"]:
            assert len(smtp_server.handler.to(EMAILS[seat])) == before[seat]
            kept += 1
    assert kept >= 5
