"""Replies that are not applied: each is dropped without an answer or refused with one, and the
game does not change. And replies written in other ways that are applied all the same."""

from __future__ import annotations

import random
import re
import smtplib
import textwrap
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select, text

from service import deadlines, games, notes
from service.game_text import follow_reason
from service.links import token_for
from service.metrics import REPLY_OUTCOMES
from service.models import Game, InboundReply, OutboxMessage, db, utcnow
from service.perspective import player_view
from service.replies import inbound as inbound_module
from service.replies.inbound import OurText, Outcome, receive
from service.replies.reading import html_to_text
from service.rules import SEATS, is_elixir
from service.unit_of_work import transaction

from ..helpers import AUTH, at_once, pick_action, random_move, scrape, statements_run
from ..secrecy import hidden_cards, leaks
from ..smtp import Received
from ..test_metrics import README
from .conftest import REPLY_ADDRESS
from .helpers import as_bytes, replies_counted, reply_message, send, send_bytes

EMAILS = {"keeper": "kim@example.com", "shadow": "sam@example.com"}


def snapshot(app: Flask, game_id: int) -> tuple[int, dict[str, Any]]:
    with app.app_context():
        game = db.session.get_one(Game, game_id)
        return game.version, game.state


def views(app: Flask, game_id: int) -> dict[str, Any]:
    with app.app_context():
        game = db.session.get_one(Game, game_id)
        return {seat: player_view(game.player(seat)) for seat in SEATS}


def newest(smtp_server, seat: str) -> Received:
    return [r for r in smtp_server.handler.to(EMAILS[seat]) if r.message["Reply-To"]][-1]


def keepers_exchange(app: Flask, game_id: int) -> list[str]:
    """A legal exchange for the Keeper of a game that has just started."""
    return pick_action(views(app, game_id)["keeper"], random.Random(1))["exchange"]


def exchange_reply(app: Flask, game_id: int, smtp_server, **options: Any) -> Any:
    """The Keeper's reply to their newest email, giving a legal exchange."""
    text = " ".join(keepers_exchange(app, game_id))
    return reply_message(newest(smtp_server, "keeper"), text, **options)


def answers_to(smtp_server, message) -> list[Received]:
    return [r for r in smtp_server.received if r.message["In-Reply-To"] == message["Message-ID"]]


def readings(app: Flask) -> int:
    with app.app_context():
        return db.session.scalar(select(func.count()).select_from(InboundReply)) or 0


@pytest.fixture
def started(app: Flask, make_game, deliver, smtp_server):
    """A game whose invitations were delivered: returns its id."""

    def start(seed: int = 31, **options: Any) -> int:
        game_id = make_game(seed=seed, **options)["id"]
        deliver()
        return game_id

    return start


def assert_unchanged_and_unanswered(app, game_id, before, smtp_server, message, deliver) -> None:
    deliver()
    assert snapshot(app, game_id)[0] == before
    assert answers_to(smtp_server, message) == []


def assert_dropped(app, game_id, smtp_server, message, deliver) -> None:
    """A reply read by no one: the game unchanged, no answer, no reply stored."""
    assert_unchanged_and_unanswered(app, game_id, 0, smtp_server, message, deliver)
    assert readings(app) == 0


def refused_at_once(port: int, message) -> int:
    """The code with which the LMTP server on ``port`` refuses the recipient of ``message``."""
    with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
        send(port, message)
    ((code, _),) = refused.value.recipients.values()
    return code


def test_a_tampered_tag_is_refused_or_dropped(app, started, smtp_server, deliver, inbound) -> None:
    """The LMTP server refuses its address, so the player's mail server tells them; read from
    a mailbox, the reply is dropped."""
    game_id = started()
    invitation = newest(smtp_server, "keeper")
    reply_to = str(invitation.message["Reply-To"])
    local, _, domain = reply_to.partition("@")
    tampered = local[:-1] + ("a" if local[-1] != "a" else "b") + "@" + domain
    cards = keepers_exchange(app, game_id)
    message = reply_message(invitation, " ".join(cards), to=tampered)
    assert refused_at_once(inbound, message) == 550
    with app.app_context():
        assert receive(as_bytes(message)) == Outcome("dropped", "no valid reply tag")
    assert_dropped(app, game_id, smtp_server, message, deliver)


def test_a_tag_of_a_dropped_key_is_refused(app, started, smtp_server, deliver, inbound) -> None:
    """Signed with a key that is no more SECRET_KEY nor one of SECRET_KEY_FALLBACKS; while it is
    a fallback, the reply is a move."""
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server)
    old = app.config["SECRET_KEY"]
    app.config.update(SECRET_KEY="a-new-secret-key", SECRET_KEY_FALLBACKS=[])
    assert refused_at_once(inbound, message) == 550
    assert_dropped(app, game_id, smtp_server, message, deliver)
    app.config["SECRET_KEY_FALLBACKS"] = [old]
    send(inbound, message)
    assert snapshot(app, game_id)[0] == 1


def test_a_reply_whose_link_is_rotated_while_it_is_read_is_dropped(
    app, started, smtp_server, deliver, inbound, monkeypatch
) -> None:
    """The tag is read, then an admin rotates the link before the move takes the game's
    lock: the move is refused as a reply to the old link would be."""
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server)
    read = inbound_module.read_move

    def rotated_meanwhile(text: str):
        with app.app_context(), transaction():
            games.rotate_link(db.session.get_one(Game, game_id).player("keeper").id, "admin")
        return read(text)

    monkeypatch.setattr(inbound_module, "read_move", rotated_meanwhile)
    send(inbound, message)
    assert_unchanged_and_unanswered(app, game_id, 0, smtp_server, message, deliver)
    with app.app_context():
        assert db.session.scalars(select(InboundReply.reason)).one() == "no valid reply tag"


def test_a_reply_to_a_rotated_link_is_refused(app, started, smtp_server, deliver, inbound) -> None:
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server)
    with app.app_context(), transaction():
        games.rotate_link(db.session.get_one(Game, game_id).player("keeper").id, "admin")
    assert refused_at_once(inbound, message) == 550
    assert_dropped(app, game_id, smtp_server, message, deliver)


def test_a_reply_from_another_address_is_not_read_and_the_player_is_told(
    app, started, smtp_server, deliver, inbound
) -> None:
    """Sent from an alias or a work account with the player's tag: nothing is read, and the
    answer goes to the player's own address, never the sender's."""
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server, sender="kim.work@example.net")
    sent_before = len(smtp_server.received)
    send(inbound, message)
    deliver()
    assert snapshot(app, game_id)[0] == 0
    (answer,) = smtp_server.received[sent_before:]
    assert answer.envelope_to == ["kim@example.com"]
    assert "A reply for this game came from another address than yours" in answer.text
    assert "You wrote" not in answer.text and "We read" not in answer.text
    assert not smtp_server.handler.to("kim.work@example.net")
    # In the game's thread: the player never had the message it refuses.
    assert answer.message["In-Reply-To"] != message["Message-ID"]
    with app.app_context():
        assert db.session.scalars(select(InboundReply.reason)).one() == "other_address"
    # A stranger holding the game's reply address makes no more than one such email a day.
    for n in range(3):
        message.replace_header("Message-ID", f"<again{n}@example.net>")
        send(inbound, message)
    deliver()
    assert len(smtp_server.received) == sent_before + 1


@pytest.mark.parametrize("sender", ["kim+phone@example.com", "Kim@EXAMPLE.com"])
def test_a_reply_from_another_spelling_of_the_player_s_inbox_is_read(
    app, started, smtp_server, deliver, inbound, sender
) -> None:
    """A sub-address reaches the player's inbox (and a player who gave one replies from the
    inbox's own address, as Gmail sends every reply): the move is theirs."""
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server, sender=sender)
    send(inbound, message)
    deliver()
    assert snapshot(app, game_id)[0] == 1
    with app.app_context():
        assert db.session.scalars(select(InboundReply.outcome)).one() == "applied"


def test_a_player_who_stopped_the_game_s_emails_is_not_told_of_another_address(
    app, started, smtp_server, deliver, inbound
) -> None:
    game_id = started()
    with app.app_context(), transaction():
        db.session.get_one(Game, game_id).player("keeper").notify = False
    message = exchange_reply(app, game_id, smtp_server, sender="kim.work@example.net")
    sent_before = len(smtp_server.received)
    send(inbound, message)
    deliver()
    assert len(smtp_server.received) == sent_before
    with app.app_context():
        assert db.session.scalars(select(InboundReply.reason)).one() == "other_address"


def test_an_auto_reply_from_another_address_is_dropped(
    app, started, smtp_server, deliver, inbound
) -> None:
    game_id = started()
    message = exchange_reply(
        app,
        game_id,
        smtp_server,
        sender="eve@example.com",
        headers={"Auto-Submitted": "auto-replied"},
    )
    send(inbound, message)
    assert_unchanged_and_unanswered(app, game_id, 0, smtp_server, message, deliver)


@pytest.mark.parametrize(
    "headers",
    [
        {"Auto-Submitted": "auto-replied"},
        {"Precedence": "bulk"},
        {"Precedence": "auto_reply"},
        {"Subject": "Out of office"},
        {"Subject": "Automatic response: away until Monday"},
        {"Subject": "Automatiskt svar: Split Mind"},
    ],
)
def test_an_auto_reply_is_dropped(app, started, smtp_server, deliver, inbound, headers) -> None:
    game_id = started()
    cards = keepers_exchange(app, game_id)
    invitation = newest(smtp_server, "keeper")
    message = reply_message(invitation, " ".join(cards))
    for name, value in headers.items():
        del message[name]
        message[name] = value
    send(inbound, message)
    assert_dropped(app, game_id, smtp_server, message, deliver)


def test_a_bounce_is_dropped(app, started, smtp_server, deliver, inbound) -> None:
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server)
    send(inbound, message, envelope_from="")
    assert_unchanged_and_unanswered(app, game_id, 0, smtp_server, message, deliver)


NO_TEXT = "Your reply held no text to read: write your move in the body of the email."
TOO_MANY_PARTS = (
    "Your reply has too many parts to read (attachments, pictures): write your move in a short"
    " reply, without attachments."
)


def test_an_empty_reply_is_answered(app, started, smtp_server, deliver, inbound) -> None:
    game_id = started()
    message = reply_message(newest(smtp_server, "keeper"), "")
    send(inbound, message)
    answer = refused(app, game_id, smtp_server, deliver, message, "keeper", 0)
    assert f"Nothing was changed in the game. {NO_TEXT}" in answer.text
    assert "You wrote" not in answer.text + answer.html
    assert "Give 1 card of your hand." in answer.text


def test_an_empty_reply_to_a_game_that_ended_says_so(
    app, started, smtp_server, deliver, inbound
) -> None:
    game_id = started()
    email = newest(smtp_server, "keeper")
    with app.app_context(), transaction():
        games.cancel_game(game_id, actor="admin")
    deliver()
    message = reply_message(email, "")
    send(inbound, message)
    answer = refused(app, game_id, smtp_server, deliver, message, "keeper", 1)  # the cancel's
    assert "Nothing was changed in the game. This game takes no more moves." in answer.text
    assert NO_TEXT not in answer.text


@pytest.mark.parametrize("attached", ["application/octet-stream", "message/rfc822"])
def test_a_reply_of_an_attachment_alone_is_answered(
    app, started, smtp_server, deliver, inbound, attached: str
) -> None:
    """The move sent as a file, or the email forwarded back as an attachment: nothing in the
    body to read, and the player hears so rather than nothing."""
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server)
    content = message.get_content().encode()
    message.clear_content()
    if attached == "message/rfc822":
        inner = reply_message(newest(smtp_server, "keeper"), content.decode())
        message.add_attachment(inner)
    else:
        message.add_attachment(content, maintype="application", subtype="octet-stream")
    send(inbound, message)
    answer = refused(app, game_id, smtp_server, deliver, message, "keeper", 0)
    assert f"Nothing was changed in the game. {NO_TEXT}" in answer.text


ALREADY_MOVED = (
    "Nothing was changed in the game. You have already moved since the email you answered."
)


def test_the_answer_to_the_second_half_of_an_exchange_holds_the_first_half_s_note(
    app, started, smtp_server, deliver, inbound
) -> None:
    """Sam exchanged first, with a note; Kim, who follows the game by email, completes the
    exchange by a reply and may owe the lead at once (then no other email comes): the
    answer is the first email that can show her Sam's note."""
    game_id = started()
    shadow = pick_action(views(app, game_id)["shadow"], random.Random(2))
    with app.app_context(), transaction():
        player = db.session.get_one(Game, game_id).player("shadow")
        games.apply_move(player.id, 0, shadow, "Good luck, Kim!")
    deliver()
    reply = exchange_reply(app, game_id, smtp_server)
    send(inbound, reply)
    deliver()
    (answer,) = answers_to(smtp_server, reply)
    assert "Your move is in" in str(answer.message["Subject"])
    assert "Sam wrote:\n“Good luck, Kim!”" in answer.text.replace("\r\n", "\n")
    assert "Good luck, Kim!" in answer.html


def test_a_second_reply_to_the_exchange_says_the_move_was_made(
    app, started, smtp_server, deliver, inbound
) -> None:
    game_id = started()
    invitation = newest(smtp_server, "keeper")
    first = exchange_reply(app, game_id, smtp_server)
    send(inbound, first)
    deliver()
    assert snapshot(app, game_id)[0] == 1
    again = reply_message(invitation, first.get_body().get_content().split("\n")[0])
    send(inbound, again)
    answer = refused(app, game_id, smtp_server, deliver, again, "keeper", 1)
    assert ALREADY_MOVED in answer.text
    assert "older email" not in answer.text


def test_a_second_reply_to_a_turn_email_says_the_card_was_played(
    app, client, started, smtp_server, deliver, inbound
) -> None:
    game = started()
    tokens = links_of(app, game)
    rng = random.Random(5)
    while not views(app, game)["keeper"]["your_turn"] or views(app, game)["keeper"]["choosing"]:
        random_move(client, tokens, rng)
    deliver()
    email = newest(smtp_server, "keeper")
    card = views(app, game)["keeper"]["legal"][0]["play"]
    send(inbound, reply_message(email, card))
    deliver()
    version = snapshot(app, game)[0]
    again = reply_message(email, card)
    send(inbound, again)
    answer = refused(app, game, smtp_server, deliver, again, "keeper", version)
    assert ALREADY_MOVED in answer.text


def test_the_same_message_twice_is_applied_once(
    app, started, smtp_server, deliver, inbound
) -> None:
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server)
    send(inbound, message)
    send(inbound, message)
    deliver()
    assert snapshot(app, game_id)[0] == 1
    assert len(answers_to(smtp_server, message)) == 1
    assert readings(app) == 1


def test_a_message_to_two_reply_addresses_is_read_for_the_first_and_refused_for_the_other(
    app, started, smtp_server, deliver, inbound
) -> None:
    """One reply is read for one tag: the second address is refused at once, so the sender's
    mail server tells them, rather than taken and never read."""
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server)
    other = str(newest(smtp_server, "shadow").message["Reply-To"])
    with smtplib.LMTP("127.0.0.1", inbound) as client:
        refused_ = client.sendmail(EMAILS["keeper"], [message["To"], other], as_bytes(message))
    assert list(refused_) == [other] and refused_[other][0] == 550
    deliver()
    assert snapshot(app, game_id)[0] == 1
    assert readings(app) == 1


def test_the_sweep_forgets_replies_read_long_ago_and_a_copy_is_then_refused(
    app, started, smtp_server, deliver, inbound
) -> None:
    """``inbound_replies`` would grow with every reply: the sweep deletes the rows older than
    READ_REPLIES_KEPT. A copy of a reply so forgotten is read again, and refused as out of
    date: its move is not made twice."""
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server)
    send(inbound, message)
    send(inbound, reply_message(newest(smtp_server, "shadow"), "hello"))  # read just now
    deliver()
    with app.app_context(), transaction():
        old = db.session.scalars(
            select(InboundReply).where(InboundReply.message_id == message["Message-ID"])
        ).one()
        old.received_at = utcnow() - inbound_module.READ_REPLIES_KEPT - timedelta(minutes=1)
    with app.app_context():
        assert deadlines.sweep().replies_forgotten == 1
        assert db.session.scalars(select(InboundReply.message_id)).all() != []
    assert readings(app) == 1
    send(inbound, message)
    deliver()
    assert snapshot(app, game_id)[0] == 1
    _, again = answers_to(smtp_server, message)
    assert ALREADY_MOVED in again.text


def test_the_sweep_finds_the_replies_to_forget_through_an_index(app) -> None:
    """The sweep forgets old replies every minute: it reads them by ``received_at`` through an
    index of their own, not by scanning a table that holds a month of replies."""
    with app.app_context():
        with statements_run(app) as executed:
            inbound_module.prune(utcnow())
        statement, parameters = next(
            (statement, parameters)
            for statement, parameters in executed
            if statement.startswith("DELETE FROM inbound_replies")
        )
        # A table this small is cheapest read whole: ask for the plan a large one would get.
        db.session.execute(text("SET LOCAL enable_seqscan = off"))
        rows = db.session.connection().exec_driver_sql("EXPLAIN " + statement, parameters)
        plan = "\n".join(row[0] for row in rows)
        db.session.rollback()
    assert "ix_inbound_replies_received_at" in plan, plan


def test_the_same_message_twice_at_once_is_applied_once(
    app, started, smtp_server, deliver, inbound
) -> None:
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server)
    at_once([lambda: send(inbound, message), lambda: send(inbound, message)])
    deliver()
    assert snapshot(app, game_id)[0] == 1
    assert len(answers_to(smtp_server, message)) == 1
    assert readings(app) == 1


def refused(app, game_id, smtp_server, deliver, message, seat, version) -> Received:
    """The one answer to a refused reply; the game must still be at ``version``."""
    _, state = snapshot(app, game_id)
    deliver()
    assert snapshot(app, game_id)[0] == version
    (answer,) = answers_to(smtp_server, message)
    assert "Your reply was not played" in str(answer.message["Subject"])
    assert "Nothing was changed in the game" in answer.text
    body = message.get_body()  # none for an attachment alone
    named = set(body.get_content().split()) if body is not None else set()
    assert not leaks(answer.text + answer.html, hidden_cards(state, seat) - named)
    return answer


def test_nonsense_is_answered_with_the_legal_moves(
    app, started, smtp_server, deliver, inbound
) -> None:
    game_id = started()
    message = reply_message(newest(smtp_server, "keeper"), "Hello! How does this work?")
    send(inbound, message)
    answer = refused(app, game_id, smtp_server, deliver, message, "keeper", 0)
    assert "No card could be read in your reply." in answer.text
    assert "Give 1 card of your hand." in answer.text
    assert "Your hand: " in answer.text
    assert answer.message["Reply-To"] is not None  # still the keeper's move


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        (
            "I hold 2 elixirs, which one should I give?",
            "“I hold 2 elixirs, which one should I give?”",
        ),
        (
            "D'accord, je regarde ça ce soir vers 7h, là je suis pris par une longue réunion.",
            "“D'accord, je regarde ça ce soir vers 7h, là je suis pris pa…”",
        ),
    ],
)
def test_a_card_named_in_a_sentence_is_not_played_and_the_answer_says_so(
    app, started, smtp_server, deliver, inbound, text: str, quoted: str
) -> None:
    game_id = started()
    message = reply_message(newest(smtp_server, "keeper"), text)
    send(inbound, message)
    answer = refused(app, game_id, smtp_server, deliver, message, "keeper", 0)
    assert (
        f"Nothing was changed in the game. Your reply names a card only in a sentence ({quoted}),"
        " and a card named in a sentence is not played. Reply with the move alone on a line of"
        " its own."
    ) in answer.text
    assert "We read" not in answer.text


def test_a_move_taken_back_under_it_is_not_played(
    app, started, smtp_server, deliver, inbound
) -> None:
    game_id = started()
    first, *_ = keepers_exchange(app, game_id)
    message = reply_message(newest(smtp_server, "keeper"), f"{first}\n\nno wait, 6H")
    send(inbound, message)
    answer = refused(app, game_id, smtp_server, deliver, message, "keeper", 0)
    assert "which move you mean is unclear" in answer.text


def links_of(app: Flask, game: int) -> dict[str, Any]:
    """The game's id and each seat's link token, as the API helpers take them."""
    with app.app_context():
        row = db.session.get_one(Game, game)
        return {"id": game, **{seat: token_for(row.player(seat)) for seat in SEATS}}


def test_a_stale_reply_is_refused(app, client, started, smtp_server, deliver, inbound) -> None:
    """A card played in answer to the invitation, long after the Keeper's exchange."""
    game = started()
    invitation = newest(smtp_server, "keeper")
    tokens = links_of(app, game)
    rng = random.Random(5)
    while not views(app, game)["keeper"]["your_turn"] or views(app, game)["keeper"]["choosing"]:
        random_move(client, tokens, rng)
    card = views(app, game)["keeper"]["legal"][0]["play"]
    message = reply_message(invitation, card)  # an answer to the exchange, long gone
    version = snapshot(app, game)[0]
    send(inbound, message)
    answer = refused(app, game, smtp_server, deliver, message, "keeper", version)
    assert f"{ALREADY_MOVED}\n" in answer.text.replace("\r\n", "\n")
    assert answer.text.count("changed") == 1


def test_an_illegal_card_is_refused_in_the_words_of_the_page(
    app, client, started, smtp_server, deliver, inbound
) -> None:
    game = started(seed=8)
    tokens = links_of(app, game)
    rng = random.Random(8)
    for _ in range(200):
        seen = views(app, game)
        follower = next((s for s in SEATS if seen[s]["your_turn"] and seen[s]["table"]), None)
        if follower is not None:
            legal = {entry["play"] for entry in seen[follower]["legal"]}
            wrong = [card for card in seen[follower]["hand"] if card not in legal]
            if wrong:
                break
        random_move(client, tokens, rng)
        deliver()
    else:
        raise AssertionError("no follower ever held a card they could not play")
    message = reply_message(newest(smtp_server, follower), wrong[0])
    version = snapshot(app, game)[0]
    send(inbound, message)
    answer = refused(app, game, smtp_server, deliver, message, follower, version)
    with app.app_context():
        reason = follow_reason(seen[follower]["table"][0], seen[follower]["hand"], "standard")
    assert f"Nothing was changed in the game. {reason}" in answer.text
    assert "Your legal moves:" in answer.text


def elixir_lead(app, client, started, deliver) -> tuple[int, str, str]:
    """A game whose player to move leads a trick and holds an elixir: its id, the seat and
    the elixir."""
    game = started(seed=5)
    tokens = links_of(app, game)
    rng = random.Random(3)
    for _ in range(200):
        for seat, view in views(app, game).items():
            leading = view["your_turn"] and view["phase"] == "play" and not view["table"]
            elixirs = [card for card in view["hand"] if is_elixir(card)]
            if leading and elixirs:
                deliver()
                return game, seat, elixirs[0]
        random_move(client, tokens, rng)
    raise AssertionError("no player ever led holding an elixir")


@pytest.mark.parametrize(
    "text",
    [
        "play {elixir}, and I'd name hearts",
        "Je joue {elixir}, c'est cœur",
        "{rank}♠ d'accord, cœur",
        # the suit on the line under the card's
        "{elixir}\nhearts please",
        "♠{rank}½\ncoeur",
    ],
)
def test_a_suit_named_in_words_is_not_the_letter_of_a_word(
    app, client, started, smtp_server, deliver, inbound, text: str
) -> None:
    game, leader, elixir = elixir_lead(app, client, started, deliver)
    version = snapshot(app, game)[0]
    written = text.format(elixir=elixir, rank=elixir[0])
    send(inbound, reply_message(newest(smtp_server, leader), written))
    now, state = snapshot(app, game)
    assert now == version + 1
    assert (state["table"][0]["card"], state["table"][0]["name"]) == (elixir, "H")


def test_an_elixir_lead_naming_two_suits_is_refused(
    app, client, started, smtp_server, deliver, inbound
) -> None:
    game, leader, elixir = elixir_lead(app, client, started, deliver)
    version = snapshot(app, game)[0]
    message = reply_message(newest(smtp_server, leader), f"play {elixir} hearts and diamonds")
    send(inbound, message)
    answer = refused(app, game, smtp_server, deliver, message, leader, version)
    assert "Your reply names more than one suit: name one only." in answer.text
    # A suit taken back on the line ("no") makes it no move's line at all.
    message = reply_message(newest(smtp_server, leader), f"{elixir} hearts, no, diamonds")
    send(inbound, message)
    answer = refused(app, game, smtp_server, deliver, message, leader, version)
    assert "Your reply names a card only in a sentence" in answer.text


def exchange_with(app, started, smtp_server, deliver, inbound, under: str) -> tuple[int, list]:
    """A new game's Keeper replies with their exchange and ``under`` below it: the game, and
    the notes the Shadow reads."""
    game = started()
    move = " ".join(keepers_exchange(app, game))
    send(inbound, reply_message(newest(smtp_server, "keeper"), f"{move}\n{under}"))
    deliver()
    assert snapshot(app, game)[0] == 1
    with app.app_context():
        return game, notes.from_opponent(db.session.get_one(Game, game).player("shadow"))


def test_a_note_under_the_move_reaches_the_opponent(
    app, client, started, smtp_server, deliver, inbound
) -> None:
    """A reply's lines under its move are the move's note, which the opponent reads on their
    page; a sign-off set apart by an empty line, and the quoted email, are not passed on."""
    under = "Nice lead, Sam.\n\nCheers,\nKim\n+33 6 12 34 56 78"
    game, read = exchange_with(app, started, smtp_server, deliver, inbound, under)
    assert read == ["Nice lead, Sam."]
    page = client.get(f"/play/{links_of(app, game)['shadow']}").get_data(as_text=True)
    assert "Nice lead, Sam." in page
    assert "Cheers" not in page and "+33" not in page


def test_a_note_written_again_after_an_answer_quoted_it_reaches_the_opponent(
    app, started, smtp_server, deliver, inbound
) -> None:
    """An answer quotes the player's words back ("You wrote: “…”"): they are not ours, and the
    same note written again with the move is passed on."""
    game_id = started()
    note = "Good luck with that, Sam"
    first = reply_message(newest(smtp_server, "keeper"), f"How does this work?\n{note}")
    send(inbound, first)
    answer = refused(app, game_id, smtp_server, deliver, first, "keeper", 0)
    assert note in answer.text and note in answer.html
    move = " ".join(keepers_exchange(app, game_id))
    send(inbound, reply_message(newest(smtp_server, "keeper"), f"{move}\n{note}"))
    deliver()
    assert snapshot(app, game_id)[0] == 1
    with app.app_context():
        shadow = db.session.get_one(Game, game_id).player("shadow")
        assert notes.from_opponent(shadow) == [note]


def test_a_signature_right_under_the_move_is_no_note(
    app, client, started, smtp_server, deliver, inbound
) -> None:
    """A signature's "-- " line ends the person's text even though the service's own emails
    hold a "--" line (their footer), which a copy of them is read without."""
    under = "-- \nKim Lee, 12 Rue X, Paris\nmobile +33 6 12 34 56 78"
    assert exchange_with(app, started, smtp_server, deliver, inbound, under)[1] == []
    answer = newest(smtp_server, "keeper")
    assert "Rue X" not in answer.text and "+33" not in answer.text


def test_a_long_reply_gets_a_short_answer(app, started, smtp_server, deliver, inbound) -> None:
    """Each card is read once: 300 kB of "7S", no card of the game, are not listed back."""
    game_id = started()
    message = reply_message(newest(smtp_server, "keeper"), "7s " * 100_000)
    send(inbound, message)
    answer = refused(app, game_id, smtp_server, deliver, message, "keeper", 0)
    assert "We read: ♠7." in answer.text.splitlines()
    assert len(answer.message.as_bytes()) < 20_000


def test_a_reply_to_a_game_that_ended_is_refused(
    app, started, smtp_server, deliver, inbound
) -> None:
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server)
    with app.app_context(), transaction():
        games.cancel_game(game_id, "admin")
    send(inbound, message)
    answer = refused(app, game_id, smtp_server, deliver, message, "keeper", 1)
    assert (
        "This game takes no more moves. The game was cancelled by the server's admins."
        in answer.text
    )
    assert "Your legal moves" not in answer.text
    assert answer.message["Reply-To"] is None


def test_a_reply_past_the_deadline_is_refused_and_asks_for_no_other(
    app, started, smtp_server, deliver, inbound
) -> None:
    """Until the sweep ends the game by timeout, a move past its deadline is refused: the
    answer says so, as the page does, and neither offers moves nor takes another reply."""
    game_id = started(days_per_move=3)
    message = exchange_reply(app, game_id, smtp_server)
    with app.app_context(), transaction():
        db.session.get_one(Game, game_id).deadline = utcnow() - timedelta(minutes=5)
    send(inbound, message)
    answer = refused(app, game_id, smtp_server, deliver, message, "keeper", 0)
    assert (
        "Nothing was changed in the game. The deadline of the move owed has passed: the game "
        "ends by timeout." in " ".join(answer.text.split())
    )
    assert "Your legal moves" not in answer.text
    assert "Please move by" not in answer.text
    assert answer.message["Reply-To"] is None


def test_a_reply_to_a_resigned_game_says_who_resigned(
    app, started, smtp_server, deliver, inbound
) -> None:
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server)
    with app.app_context(), transaction():
        games.resign(db.session.get_one(Game, game_id).player("shadow").id, 0)
    send(inbound, message)
    answer = refused(app, game_id, smtp_server, deliver, message, "keeper", 1)
    assert "This game takes no more moves. Sam resigned: you win." in answer.text


@pytest.mark.parametrize("text", ["I resign", "J'abandonne.", "Please remind Sam"])
def test_resigning_or_reminding_by_reply_points_to_the_page(
    app, started, smtp_server, deliver, inbound, text: str
) -> None:
    game_id = started()
    message = reply_message(newest(smtp_server, "keeper"), text)
    send(inbound, message)
    answer = refused(app, game_id, smtp_server, deliver, message, "keeper", 0)
    with app.app_context():
        link = token_for(db.session.get_one(Game, game_id).player("keeper"))
    assert (
        "Nothing was changed in the game. Resigning and reminding your opponent are done on"
        f" your game's page: http://splitmind.test/play/{link}"
    ) in answer.text
    assert "No card could be read" not in answer.text


def test_past_the_hourly_limit_a_mover_who_owes_the_next_move_gets_a_turn_email(
    app, client, started, smtp_server, deliver, inbound
) -> None:
    """The answer says it is the player's move again; with none sent, the turn email does."""
    game_id = started()
    tokens = links_of(app, game_id)
    shadow = views(app, game_id)["shadow"]
    body = {"version": shadow["version"], **pick_action(shadow, random.Random(2))}
    assert client.post(f"/api/play/{tokens['shadow']}", json=body).status_code == 200
    deliver()
    app.config["REPLY_ANSWERS_PER_HOUR"] = 0
    message = exchange_reply(app, game_id, smtp_server)
    send(inbound, message)
    deliver()
    assert snapshot(app, game_id)[0] == 2 and answers_to(smtp_server, message) == []
    assert views(app, game_id)["keeper"]["your_turn"]  # the Keeper leads the first trick
    turn = newest(smtp_server, "keeper")
    assert turn.message["In-Reply-To"] != message["Message-ID"]
    assert "your lead, round 1 trick 1" in str(turn.message["Subject"])


def test_a_card_of_the_opponent_is_not_held(app, started, smtp_server, deliver, inbound) -> None:
    game_id = started()
    _, state = snapshot(app, game_id)
    theirs = state["hands"]["shadow"][0]
    message = reply_message(newest(smtp_server, "keeper"), f"give {theirs}")
    send(inbound, message)
    answer = refused(app, game_id, smtp_server, deliver, message, "keeper", 0)
    assert "You do not hold" in answer.text


def test_answers_stop_at_the_hourly_limit(app, started, smtp_server, deliver, inbound) -> None:
    app.config["REPLY_ANSWERS_PER_HOUR"] = 2
    game_id = started()
    messages = [reply_message(newest(smtp_server, "keeper"), "nonsense") for _ in range(3)]
    for message in messages:
        send(inbound, message)
    deliver()
    assert [len(answers_to(smtp_server, m)) for m in messages] == [1, 1, 0]
    assert snapshot(app, game_id)[0] == 0
    with app.app_context():
        assert db.session.query(OutboxMessage).filter_by(kind="answer").count() == 2


def test_refusals_stop_being_answered_while_the_game_stays_as_it_is(
    app, started, smtp_server, deliver, inbound
) -> None:
    """A responder that answers every email, without marking its mail automatic, gets a
    refusal whose Reply-To it answers again: the answers stop after a few, well under the
    hourly limit, and start again once the game has changed."""
    game_id = started()
    limit = inbound_module.REFUSALS_ANSWERED_BETWEEN_MOVES
    email = newest(smtp_server, "keeper")
    answered = []
    for _ in range(limit + 2):
        message = reply_message(email, "I am away until Monday, back then.")
        send(inbound, message)
        deliver()
        answers = answers_to(smtp_server, message)
        answered.append(len(answers))
        if answers:
            assert answers[0].message["Reply-To"]
            email = answers[0]
    assert answered == [1] * limit + [0, 0]
    assert snapshot(app, game_id)[0] == 0
    shadow = pick_action(views(app, game_id)["shadow"], random.Random(2))
    with app.app_context(), transaction():
        games.apply_move(db.session.get_one(Game, game_id).player("shadow").id, 0, shadow)
    deliver()
    message = reply_message(email, "nonsense")
    send(inbound, message)
    refused(app, game_id, smtp_server, deliver, message, "keeper", 1)


def nested_parts(depth: int, text: str, eol: bytes = b"\r\n") -> bytes:
    """A MIME body of ``depth`` multipart parts, each in the one before, ``text`` in the last,
    its lines ending in ``eol`` (the parser takes a lone CR for a line's end too)."""
    opening = b"".join(
        b"Content-Type: multipart/mixed; boundary=b%d%s%s--b%d%s" % (level, eol, eol, level, eol)
        for level in range(depth)
    )
    return (
        b"MIME-Version: 1.0\r\n"
        + opening
        + b"Content-Type: text/plain%s%s" % (eol, eol)
        + (text.encode())
    )


def test_a_strangers_message_is_dropped_on_its_headers(
    app, started, smtp_server, deliver, inbound
) -> None:
    """A tag of the right shape but not signed is known from the envelope: the LMTP server
    refuses its address, and read from a mailbox the body is never parsed, here nested deeper
    than the parser can follow, and the message is dropped."""
    game_id = started()
    local, _, domain = REPLY_ADDRESS.partition("@")
    address = f"{local}+1.0.{'a' * 26}@{domain}"
    head = f"From: eve@example.net\r\nTo: {address}\r\nSubject: 5H\r\n".encode()
    raw = head + nested_parts(1500, "5H\r\n")
    with pytest.raises(smtplib.SMTPRecipientsRefused):
        send_bytes(inbound, raw, "eve@example.net", address)
    with app.app_context():
        assert receive(raw, envelope_from="eve@example.net", recipients=(address,)) == Outcome(
            "dropped", "no valid reply tag"
        )
    deliver()
    assert snapshot(app, game_id)[0] == 0
    assert readings(app) == 0
    assert len(smtp_server.received) == 2  # the invitations


@pytest.mark.parametrize("eol", [b"\r\n", b"\r"], ids=["CRLF", "lone CR"])
def test_a_reply_of_too_many_parts_is_dropped_unparsed(
    app, started, smtp_server, deliver, inbound, eol: bytes
) -> None:
    """Parsing slows with the square of the parts' nesting: a reply has a few parts, and one
    with more than twenty is not read, move or no move, whatever ends its lines: the
    player is told it has too many parts."""
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server)
    head = "".join(f"{name}: {message[name]}\r\n" for name in ("From", "To", "Message-ID"))
    raw = head.encode() + nested_parts(25, message.get_content().replace("\n", "\r\n"), eol)
    with app.app_context():  # read as the IMAP reader reads: SMTP takes no line that long
        receive(raw, envelope_from=EMAILS["keeper"], recipients=(message["To"],))
    answer = refused(app, game_id, smtp_server, deliver, message, "keeper", 0)
    assert f"Nothing was changed in the game. {TOO_MANY_PARTS}" in answer.text
    with app.app_context():
        assert db.session.scalars(select(InboundReply.reason)).one() == "too_many_parts"


def test_a_reply_of_a_malformed_structure_is_answered(
    app, started, smtp_server, deliver, inbound
) -> None:
    """A multipart/related part holding no parts made the standard library raise: the LMTP
    server answered 554 and the player heard nothing."""
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server)
    head = "".join(f"{name}: {message[name]}\r\n" for name in ("From", "To", "Message-ID"))
    raw = head.encode() + (
        b"Content-Type: multipart/mixed; boundary=A\r\n\r\n"
        b"--A\r\nContent-Type: multipart/related; boundary=C\r\n\r\n6H\r\n--A--\r\n"
    )
    send_bytes(inbound, raw, EMAILS["keeper"], str(message["To"]))
    answer = refused(app, game_id, smtp_server, deliver, message, "keeper", 0)
    assert f"Nothing was changed in the game. {NO_TEXT}" in answer.text


def test_a_reply_of_many_parts_without_their_headers_is_dropped_unparsed(
    app, started, smtp_server, deliver, inbound
) -> None:
    """Parts are cut at their boundary lines, headers or none: a megabyte of them took the
    parser seconds a message. They are counted by those lines."""
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server)
    head = "".join(f"{name}: {message[name]}\r\n" for name in ("From", "To", "Message-ID"))
    parts = b"".join(b"--b\r\n\r\n5H\r\n" for _ in range(45))
    body = b"Content-Type: multipart/mixed; boundary=b\r\n\r\n" + parts + b"--b--\r\n"
    with app.app_context():
        receive(head.encode() + body, envelope_from=EMAILS["keeper"], recipients=(message["To"],))
    answer = refused(app, game_id, smtp_server, deliver, message, "keeper", 0)
    assert f"Nothing was changed in the game. {TOO_MANY_PARTS}" in answer.text


@pytest.mark.parametrize("eol", [b"\r\n", b"\r"], ids=["CRLF", "lone CR"])
@pytest.mark.parametrize("header", ["Content-Type: text/plain", "Content-Disposition: inline"])
def test_a_reply_with_a_part_header_too_long_to_parse_is_not_parsed(
    app, started, smtp_server, deliver, inbound, header: str, eol: bytes
) -> None:
    """A part's Content-Type or Content-Disposition is parsed as the message's own are, in a
    time that grows faster than the square of its length: a megabyte of parameters held the
    reader for minutes. A reply with a part's header longer than the message's may be is
    not parsed, and the player is told."""
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server)
    head = "".join(f"{name}: {message[name]}\r\n" for name in ("From", "To", "Message-ID"))
    parameters = ";" + ";".join(f"{eol.decode()} p{i}=v" for i in range(400))
    body = (
        b"Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n"
        + (header + parameters).encode()
        + eol * 2
        + message.get_content().replace("\n", "\r\n").encode()
        + b"\r\n--b--\r\n"
    )
    with app.app_context():
        receive(head.encode() + body, envelope_from=EMAILS["keeper"], recipients=(message["To"],))
    answer = refused(app, game_id, smtp_server, deliver, message, "keeper", 0)
    assert f"Nothing was changed in the game. {NO_TEXT}" in answer.text


TOO_LONG = Outcome("dropped", "header too long")


@pytest.mark.parametrize(
    ("sender", "outcome"),
    [
        (", " * 1500 + "<eve@example.net>", TOO_LONG),
        ("(" * 1500 + "eve@example.net", Outcome("dropped", "bounce: from nobody")),
        ("eve@example.net\r\nSubject: " + "=?utf-8?q?a?=\r\n " * 200, TOO_LONG),
        ("eve@example.net\r\nPrecedence: " + "x " * 1500, TOO_LONG),
        ("eve@example.net" + "\r\nCc: a@example.net" * 2000, TOO_LONG),
    ],
    ids=[
        "too long to parse",
        "nested past the parser's depth",
        "subject",
        "precedence",
        "many short ones",
    ],
)
def test_a_strangers_header_the_parser_chokes_on_is_dropped(
    app, started, sender: str, outcome: Outcome
) -> None:
    """The standard library's header parsers take more than the square of a header's
    length, and recurse on nested comments: a message whose From (or another header read
    before the tag is known) is too long or too deep for them is dropped, before any tag is
    read and with no traceback. So is one whose headers read so are too long together:
    each is parsed, however short, and a megabyte of them held the reader for a minute."""
    local, _, domain = REPLY_ADDRESS.partition("@")
    raw = f"From: {sender}\r\nTo: {local}+hello@{domain}\r\n\r\n5H\r\n"
    with app.app_context():
        assert receive(raw.encode(), recipients=(f"{local}+hello@{domain}",)) == outcome


def test_a_message_over_a_megabyte_is_not_read(app, started, smtp_server, deliver, inbound) -> None:
    """A photo attached, say: its headers only are read, and the player is told, whether it
    came over LMTP or from the IMAP mailbox; one from another address is not read at all. The LMTP
    server refuses a message larger than most mail servers pass (552)."""
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server)
    message.add_attachment(b"x" * 800_000, maintype="application", subtype="octet-stream")
    raw = as_bytes(message)
    send_bytes(inbound, raw, EMAILS["keeper"], message["To"])
    with app.app_context():
        another = raw.replace(str(message["Message-ID"]).encode(), b"<imap@example.com>")
        assert receive(another) == Outcome("refused", "too_large", answered=True)
    deliver()
    (answer,) = answers_to(smtp_server, message)
    assert "Your reply was too large to read (over 1 MB)" in answer.text
    assert snapshot(app, game_id)[0] == 0
    message.replace_header("From", "someone@example.org")
    message.replace_header("Message-ID", "<another@example.org>")
    with app.app_context():
        assert receive(as_bytes(message)) == Outcome("refused", "other_address", answered=True)


# --- replies written in other ways, applied all the same ----------------------------------


def applied(app, game_id, smtp_server, deliver, message) -> Received:
    """The one answer to a reply applied as the first move of a new game."""
    deliver()
    assert snapshot(app, game_id)[0] == 1
    (answer,) = answers_to(smtp_server, message)
    return answer


def test_a_reply_in_french(app, started, smtp_server, deliver, inbound) -> None:
    game_id = started(keeper_language="fr")
    cards = keepers_exchange(app, game_id)
    words = {"H": "cœur", "D": "carreau", "C": "trèfle", "S": "pique"}
    text = "Je donne " + " et ".join(f"le {c[0]} de {words[c[1]]}" for c in cards)
    message = reply_message(newest(smtp_server, "keeper"), text)
    send(inbound, message)
    answer = applied(app, game_id, smtp_server, deliver, message)
    assert "Vous avez donné" in answer.text
    assert "Votre coup est joué" in str(answer.message["Subject"])


def test_a_reply_in_html_only(app, started, smtp_server, deliver, inbound) -> None:
    game_id = started()
    cards = keepers_exchange(app, game_id)
    message = reply_message(
        newest(smtp_server, "keeper"), "", html=f"<div>give <b>{' '.join(cards)}</b></div>"
    )
    assert message.get_body(preferencelist=("plain",)) is None
    send(inbound, message)
    answer = applied(app, game_id, smtp_server, deliver, message)
    assert "You gave" in answer.text


def test_a_move_below_the_quote(app, started, smtp_server, deliver, inbound) -> None:
    game_id = started()
    invitation = newest(smtp_server, "keeper")
    cards = keepers_exchange(app, game_id)
    message = reply_message(invitation, "")
    quote = "\n".join(f"> {line}" for line in invitation.text.splitlines())
    message.set_content(
        f"On Tue, 1 Dec 2026, Split Mind wrote:\n{quote}\n\n{' '.join(cards)}\n\n-- \nKim\n"
    )
    send(inbound, message)
    answer = applied(app, game_id, smtp_server, deliver, message)
    assert "You gave" in answer.text


GERMAN_OUTLOOK = (
    "ok, weiter\n\nVon: Split Mind <games@splitmind.test>\nGesendet: Dienstag, 1. Dezember"
    " 2026 10:00\nAn: Kim <kim@example.com>\nBetreff: Split Mind\n\n"
)


@pytest.mark.parametrize(
    "above", [GERMAN_OUTLOOK, "ok\n"], ids=["under a German Outlook header", "marked in no way"]
)
def test_a_copy_of_the_email_answered_is_not_read(
    app, started, smtp_server, deliver, inbound, above: str
) -> None:
    """A client's copy of the email answered, without ">": under Outlook's "Von:",
    "Gesendet:" in German, or pasted with no header at all. Neither the hand nor the legal
    moves in that copy are the player's move or note."""
    game_id = started()
    invitation = newest(smtp_server, "keeper")
    message = reply_message(invitation, "")
    message.set_content(above + invitation.text)
    send(inbound, message)
    answer = refused(app, game_id, smtp_server, deliver, message, "keeper", 0)
    assert "No card could be read in your reply." in answer.text
    with app.app_context():
        shadow = db.session.get_one(Game, game_id).player("shadow")
        assert notes.from_opponent(shadow) == []


def as_sent(received: Received) -> str:
    """The text part as it went, ``format=flowed``: the lines a client that does not join
    them shows, and pastes into a reply."""
    part = received.message.get_body(preferencelist=("plain",))
    assert part is not None and part.get_param("format") == "flowed"
    return part.get_content().replace("\r\n", "\n")


def played_over_a_copy(
    app, game_id, smtp_server, deliver, inbound, asking: Received, cards: list[str], pasted: str
) -> None:
    """The Keeper's exchange of ``cards``, replied to ``asking`` over ``pasted`` (a copy of
    it): the move is played, and the Shadow hears nothing of the copy."""
    message = reply_message(asking, f"{' '.join(cards)}\n{pasted}")
    send(inbound, message)
    applied(app, game_id, smtp_server, deliver, message)
    with app.app_context():
        game = db.session.get_one(Game, game_id)
        assert notes.from_opponent(game.player("shadow")) == []


def test_a_copy_of_the_flowed_lines_as_sent_is_neither_move_nor_note(
    app, started, smtp_server, deliver, inbound
) -> None:
    """A client that does not join flowed lines pastes them as they went, each long line in
    pieces: none is read as the move (nor, below, passed on as a note)."""
    game_id = started()
    invitation = newest(smtp_server, "keeper")
    pasted = as_sent(invitation)
    assert len(pasted.splitlines()) > len(invitation.text.splitlines())
    message = reply_message(invitation, "")
    message.set_content("ok\n" + pasted)
    send(inbound, message)
    answer = refused(app, game_id, smtp_server, deliver, message, "keeper", 0)
    assert "No card could be read in your reply." in answer.text


def test_the_flowed_lines_as_sent_pasted_under_the_move_are_no_more_of_it(
    app, started, smtp_server, deliver, inbound
) -> None:
    """Pasted under the move, a piece of a long line ("the cards written as they are here:
    for example “give ♠3½”.") is no second move, inside the copy, nor a note: the move is
    played, and the opponent hears nothing of the copy."""
    game_id = started()
    message = reply_message(newest(smtp_server, "keeper"), "ok")
    send(inbound, message)
    refused(app, game_id, smtp_server, deliver, message, "keeper", 0)
    cards = keepers_exchange(app, game_id)
    asking = newest(smtp_server, "keeper")
    pasted = as_sent(asking)
    assert any(line.endswith(" ") for line in pasted.splitlines())  # pieces of long lines
    played_over_a_copy(app, game_id, smtp_server, deliver, inbound, asking, cards, pasted)


def test_an_unmarked_copy_of_the_html_part_is_not_read_as_the_move() -> None:
    """Our HTML part lists the legal moves in ``<li>``, without the text part's "- ": pasted
    with no quote mark, its lines are ours all the same, cards and all."""
    line = "You hold 2 elixirs: give at least one of them."
    html = f"<p>Your legal moves:</p><ul><li>Give 1 card of your hand.</li><li>{line}</li></ul>"
    ours = OurText([f"Your legal moves:\n- Give 1 card of your hand.\n- {line}\n"], [html])
    body = html_to_text(f"<div>Thanks, thinking about it.</div><div><br></div><div>{html}</div>")
    assert ours.without_our_lines(body).split() == ["Thanks,", "thinking", "about", "it."]
    legal = OurText(["Your legal moves:\n- 5♥\n"], ["<p>Your legal moves:</p><ul><li>5♥</li></ul>"])
    assert legal.without_our_lines("5♥\n\nCheers") == "5♥\n\nCheers"  # the player's move
    assert legal.without_our_lines("ok\nYour legal moves:\n5♥") == "ok"  # our list, unmarked


def test_an_html_reply_over_an_unmarked_copy_of_the_email_plays_nothing(
    app, started, smtp_server, deliver, inbound
) -> None:
    game_id = started()
    invitation = newest(smtp_server, "keeper")
    message = reply_message(invitation, "")
    body = re.sub(r"(?s).*<body[^>]*>|</body>.*", "", invitation.html)
    message.set_content(f"<div>Thanks, thinking about it.</div><div>{body}</div>", subtype="html")
    send(inbound, message)
    answer = refused(app, game_id, smtp_server, deliver, message, "keeper", 0)
    assert "No card could be read in your reply." in answer.text


def flattened(html: str) -> str:
    """An HTML part as a client may paste it as text: a line per block, list items bulleted."""
    return html_to_text(re.sub(r"<li\b[^>]*>", "<li>• ", html))


def wrapped(text: str) -> str:
    """A text part as a client may wrap it again, at 28 columns."""
    return "\n".join(piece for line in text.splitlines() for piece in textwrap.wrap(line, 28))


@pytest.mark.parametrize("copy", [flattened, wrapped], ids=["html part", "wrapped text part"])
def test_a_copy_pasted_right_under_the_move_is_no_note(
    app, started, smtp_server, deliver, inbound, copy: Callable[[str], str]
) -> None:
    """A client may paste the email answered right under the move, marked in no way: its HTML
    part flattened (list items bulleted), or its text part wrapped again. The move is played;
    none of the copy reaches the opponent, whose page would show the player's hand."""
    game_id = started()
    cards = keepers_exchange(app, game_id)
    asking = newest(smtp_server, "keeper")
    pasted = copy(asking.html if copy is flattened else asking.text)
    played_over_a_copy(app, game_id, smtp_server, deliver, inbound, asking, cards, pasted)


def test_a_tag_no_player_can_have_is_refused(app, started, smtp_server, deliver, inbound) -> None:
    """A player number past the database's integers: refused by the LMTP server as any unknown
    tag, rather than put off again and again."""
    game_id = started()
    local, _, domain = REPLY_ADDRESS.partition("@")
    message = reply_message(
        newest(smtp_server, "keeper"), "4S 5H", to=f"{local}+99999999999.1.{'a' * 26}@{domain}"
    )
    assert refused_at_once(inbound, message) == 550
    assert_dropped(app, game_id, smtp_server, message, deliver)


def test_a_reply_holding_nul_characters_is_applied(
    app, started, smtp_server, deliver, inbound
) -> None:
    """NUL, which no text column holds, is left out of what is stored and quoted back."""
    game_id = started()
    cards = keepers_exchange(app, game_id)
    message = reply_message(
        newest(smtp_server, "keeper"),
        f"{' '.join(cards)} \x00 thanks",
        message_id="<nul\x00here@example.com>",
    )
    send(inbound, message)
    deliver()
    assert snapshot(app, game_id)[0] == 1
    (answer,) = [r for r in smtp_server.received if r.message["In-Reply-To"]]
    assert answer.message["In-Reply-To"] == "<nulhere@example.com>"
    assert "You gave" in answer.text and "thanks" in answer.text
    with app.app_context():
        assert db.session.scalars(select(InboundReply.message_id)).one() == (
            "<nulhere@example.com>"
        )


@pytest.mark.parametrize(
    "garbled",
    ["Cc: =?utf-8?q?x?= <", "Message-ID: <", 'From: kim@example.com, "'],
    ids=["cc", "message-id", "from"],
)
def test_a_header_the_parser_fails_on_is_read_as_it_is(
    app, started, smtp_server, deliver, inbound, garbled: str
) -> None:
    """The standard library's header parser raises on these; the move is applied all the same."""
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server)
    del message[garbled.partition(":")[0]]
    send_bytes(
        inbound, garbled.encode() + b"\r\n" + as_bytes(message), EMAILS["keeper"], message["To"]
    )
    deliver()
    assert snapshot(app, game_id)[0] == 1
    (answer,) = [r for r in smtp_server.handler.to(EMAILS["keeper"]) if r.message["In-Reply-To"]]
    assert "You gave" in answer.text


@pytest.mark.parametrize(
    "message_id",
    [
        "=?utf-8?q?<x@evil>=0D=0AX-Injected:_yes=0D=0ASubject:_Your_password?=",
        "<two words@example.com>",
        f"<{'a' * 300}@example.com>",
    ],
    ids=["encoded-line-breaks", "space", "too-long"],
)
def test_a_message_id_of_no_plain_shape_is_not_threaded_on(
    app, started, smtp_server, deliver, inbound, message_id: str
) -> None:
    """Such a Message-ID is the sender's text, and decoded may end the answer's header and start
    one of theirs: the reply is known by its digest, and the answer refers to the game's thread."""
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server)
    del message["Message-ID"]
    raw = f"Message-ID: {message_id}\r\n".encode() + as_bytes(message)
    send_bytes(inbound, raw, EMAILS["keeper"], message["To"])
    deliver()
    assert snapshot(app, game_id)[0] == 1
    (answer,) = [r for r in smtp_server.handler.to(EMAILS["keeper"]) if "You gave" in r.text]
    assert answer.message["X-Injected"] is None
    assert "password" not in str(answer.message["Subject"])
    root = answer.message["References"]
    assert answer.message["In-Reply-To"] == root and "@" in root and " " not in root
    with app.app_context():
        assert db.session.scalars(select(InboundReply.message_id)).one().startswith("<sha256:")


def test_a_player_of_an_internationalised_domain_replies_from_its_ascii_form(
    app, smtp_server, deliver, inbound
) -> None:
    """The address is stored as given (bücher.de); mail reaches it, and comes back from it, as
    xn--bcher-kva.de. A look-alike address is still another one."""
    with app.app_context(), transaction():
        game_id = games.create_game(
            games.Seating("kim@bücher.de", "Kim"), games.Seating(EMAILS["shadow"], "Sam"), seed=31
        ).id
    deliver()
    (invitation,) = [r for r in smtp_server.received if "kim@xn--bcher-kva.de" in r.envelope_to]
    text = " ".join(keepers_exchange(app, game_id))
    look_alike = reply_message(invitation, text, sender="kim@bucher.de")
    send(inbound, look_alike)
    assert snapshot(app, game_id)[0] == 0
    message = reply_message(invitation, text)
    assert message["From"] == "kim@xn--bcher-kva.de"
    send(inbound, message)
    assert "You gave" in applied(app, game_id, smtp_server, deliver, message).text


def test_a_message_over_a_megabyte_is_not_read_whatever_size_the_server_gave(
    app, started, smtp_server, deliver
) -> None:
    """The IMAP server says how large a message is before it is fetched; one that says less
    than the bytes it then hands over (a size counted with bare line ends, or a guess) has
    its message held to the limit by the bytes themselves."""
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server)
    message.add_attachment(b"x" * 800_000, maintype="application", subtype="octet-stream")
    raw = as_bytes(message)
    with app.app_context():
        assert receive(raw, size=1000) == Outcome("refused", "too_large", answered=True)
    assert snapshot(app, game_id)[0] == 0


def test_a_reply_to_an_email_that_asks_for_no_move_is_refused_saying_so(
    app, started, smtp_server, deliver, inbound
) -> None:
    """An email that asks for no move (the digest, the end of a game) has no reply address of
    its own: a reply to it reaches the service's sender, often the reply address itself. The
    LMTP server refuses it at once, and the bounce the sender's mail server writes says
    where moves are made, not that the address does not exist."""
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server, to=REPLY_ADDRESS)
    with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
        send(inbound, message)
    ((code, text),) = refused.value.recipients.values()
    assert code == 550
    assert b"asks for a move" in text
    assert b"No such reply address" not in text
    assert_dropped(app, game_id, smtp_server, message, deliver)


def test_replies_are_counted_by_outcome_never_by_address(
    app, started, smtp_server, deliver, inbound
) -> None:
    """An operator sees from /metrics what the reply server made of the replies: moves
    applied, refused (answered), read before, auto-replies dropped, addresses refused for no
    tag of ours. No tag, address or text of a reply is in a label."""
    game_id = started()
    message = exchange_reply(app, game_id, smtp_server)
    invitation = newest(smtp_server, "keeper")
    local, _, domain = str(invitation.message["Reply-To"]).partition("@")
    tampered = local[:-1] + ("a" if local[-1] != "a" else "b") + "@" + domain

    def replies() -> None:
        send(inbound, message)
        send(inbound, message)  # the same Message-ID
        send(inbound, reply_message(invitation, "Which one?"))
        send(inbound, reply_message(invitation, "Away", headers={"Auto-Submitted": "auto-replied"}))
        assert refused_at_once(inbound, reply_message(invitation, "5H", to=tampered)) == 550

    assert replies_counted(app, replies) == {
        "applied": 1,
        "duplicate": 1,
        "refused": 1,
        "automatic": 1,
        "not_ours": 1,
    }
    samples = scrape(app.test_client())
    labelled = {dict(labels)["outcome"] for name, labels in samples if "splitmind_replies" in name}
    # Each there from the start, at 0: a rule on its rate sees the first one counted.
    assert labelled == set(REPLY_OUTCOMES)
    text = app.test_client().get("/metrics", headers=AUTH).get_data(as_text=True)
    assert local.partition("+")[2] not in text and "kim@example.com" not in text
    (row,) = [line for line in README.splitlines() if line.startswith("| `splitmind_replies_")]
    assert all(f"`{outcome}`" in row for outcome in REPLY_OUTCOMES)
