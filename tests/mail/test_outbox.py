"""Turn emails in the outbox: withdrawn by the player's move, replaced unless being sent."""

from __future__ import annotations

import itertools
import random
import threading
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from email.parser import BytesParser
from email.policy import default
from typing import Any

import pytest
import time_machine
from flask import Flask
from flask.testing import FlaskClient

from service.deadlines import sweep
from service.mail import outbox, requeue, worker
from service.mail.compose import Email
from service.mail.outbox import queue
from service.mail.worker import Transport, deliver_batch
from service.models import OutboxMessage, Player, db, utcnow
from service.rules import SEATS
from service.unit_of_work import transaction

from ..factories import one_by_one, played
from ..helpers import (
    failed_turn_behind_a_newer_one,
    queued_turn,
    random_move,
    second_behind_first,
    waits_on_a_lock,
    write_queued,
)
from ..smtp import SMTPServer

pytestmark = pytest.mark.both_backends


def queued(app: Flask) -> list[OutboxMessage]:
    """The messages waiting in the outbox, oldest first, written as they would be sent now."""
    write_queued(app)
    with app.app_context():
        rows = db.session.scalars(
            db.select(OutboxMessage)
            .where(OutboxMessage.status == "queued")
            .order_by(OutboxMessage.id)
        ).all()
        db.session.expunge_all()
        return list(rows)


def row(app: Flask, message_id: int) -> OutboxMessage:
    with app.app_context():
        found = db.session.get(OutboxMessage, message_id)
        assert found is not None
        db.session.expunge(found)
        return found


@pytest.mark.slow
def test_a_move_withdraws_the_movers_unsent_turn_email(
    app: Flask, client: FlaskClient, make_game, deliver
) -> None:
    """Each turn email is a message of its own; the player's next move withdraws it unsent."""
    game = make_game(seed=8)
    deliver()
    with app.app_context():
        players = {p.seat: p.id for p in db.session.scalars(db.select(Player))}
    for seat, _, _ in itertools.islice(one_by_one(app, game["id"], 8), 60):
        waiting = [m.player_id for m in queued(app) if m.kind == "turn"]
        assert players[seat] not in waiting
    with app.app_context():
        turns = db.session.scalars(
            db.select(OutboxMessage).where(OutboxMessage.kind == "turn")
        ).all()
        assert len({m.message_id for m in turns}) == len(turns)
        assert sum(m.status == "skipped" for m in turns) >= len(turns) - 2 >= 10


def test_a_turn_email_withdrawn_after_a_failed_attempt_keeps_its_error(
    app: Flask, make_game
) -> None:
    """Refused for now (451) and queued again, then withdrawn by the player's move: the row
    says it was withdrawn, after what the server said."""
    make_game()
    with app.app_context():
        with transaction():
            kim = db.session.scalars(db.select(Player).where(Player.seat == "keeper")).one()
            queue(kind="turn", recipient=kim.email, game=kim.game, player=kim)
            message = queued_turn(kim)
            message.last_error = "451 4.3.0 Try again later"
        with transaction():
            outbox.withdraw("turn", kim.id)
        withdrawn = db.session.get_one(OutboxMessage, message.id)
        assert (withdrawn.status, withdrawn.last_error) == (
            "skipped",
            "skipped: the player moved before it went (after: 451 4.3.0 Try again later)",
        )


def test_an_email_queued_written_keeps_the_headers_its_writer_set(app: Flask) -> None:
    """Its language, say, beside the headers given to the outbox."""
    with app.app_context():
        with transaction():
            queue(
                Email("Bonjour", "Bonjour", "<p>Bonjour</p>", {"Content-Language": "fr"}),
                kind="your_games",
                recipient="kim@example.com",
                headers={"Reply-To": "play@example.org"},
            )
        (row,) = db.session.scalars(db.select(OutboxMessage)).all()
        assert row.headers["Content-Language"] == "fr"
        assert row.headers["Reply-To"] == "play@example.org"


def turn_email_waiting(
    app: Flask, client: FlaskClient, make_game, deliver, *, one_to_move: bool = False
) -> tuple[dict[str, Any], random.Random, OutboxMessage]:
    """A game played, the mail sent after each move, until its only unsent email is a turn
    email (and, with ``one_to_move``, one player alone owes a move): the game, the random
    source of its moves, and that email."""
    game = make_game(seed=21)
    deliver()
    rng = random.Random(21)
    for _ in range(100):
        random_move(client, game, rng)
        waiting = queued(app)
        views = {seat: client.get(f"/api/play/{game[seat]}").get_json() for seat in SEATS}
        alone = sum(view["your_turn"] for view in views.values()) == 1
        if len(waiting) == 1 and waiting[0].kind == "turn" and (alone or not one_to_move):
            return game, rng, waiting[0]
        deliver()
    raise AssertionError("no turn email was ever the only one waiting")


def moving(app: Flask, tokens: dict[str, Any], rng: random.Random) -> tuple[threading.Thread, list]:
    """One random move in a thread of its own; the list gets its outcome or its error."""
    outcome: list[Any] = []

    def move() -> None:
        try:
            outcome.append(random_move(app.test_client(), tokens, rng))
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            outcome.append(exc)

    thread = threading.Thread(target=move)
    thread.start()
    return thread, outcome


def send_one_message(app: Flask) -> None:
    """The worker's part in a held send: one message, one attempt.

    A worker draining the queue would claim an email again the moment a 451 puts
    it back (the retry delay is 0 here), ahead of the move that waits for its row,
    and the test would not know which came first.
    """
    with app.app_context():
        transport = Transport()
        try:
            deliver_batch(transport, size=1)
        finally:
            transport.close()


@pytest.mark.parametrize("app", ["postgres"], indirect=True)
@pytest.mark.parametrize("reply", ["250 OK", "451 4.3.0 Try again later"], ids=["sent", "retried"])
def test_a_turn_email_queued_while_a_worker_sends_the_previous_one(
    app: Flask,
    client: FlaskClient,
    make_game,
    deliver,
    smtp_server: SMTPServer,
    reply: str,
) -> None:
    """The moves go on while the worker sends; the newer email is a new one.

    The worker is held in the middle of sending a player's turn email (inside
    DATA, the reply not given); meanwhile the game goes on until that player
    owes a move again, each move made at once (a move that waited for the
    worker's row would fail on the lock timeout). Sent, the old email keeps its
    row and goes out once; refused for now (451), it is skipped, as the newer
    one replaced it. The newer goes out once.
    """
    game, rng, first = turn_email_waiting(app, client, make_game, deliver)
    inside, release = threading.Event(), threading.Event()
    accept = smtp_server.handler.handle_DATA

    async def hold(server: Any, session: Any, envelope: Any) -> str:
        headers = BytesParser(policy=default).parsebytes(envelope.original_content, True)
        if headers["Message-ID"] == first.message_id and not inside.is_set():
            inside.set()
            release.wait(30)  # only this worker talks to the server: it may wait
            if not reply.startswith("250"):
                return reply
        return await accept(server, session, envelope)

    smtp_server.handler.handle_DATA = hold  # type: ignore[method-assign]
    worker = threading.Thread(target=send_one_message, args=(app,))
    worker.start()
    try:
        assert inside.wait(30), "the worker did not send the turn email"
        for _ in range(100):
            random_move(client, game, rng)
            newer = [m for m in queued(app) if m.player_id == first.player_id and m.id != first.id]
            if newer:
                break
        else:
            raise AssertionError("the player never owed a move again")
        assert not release.is_set() and worker.is_alive()  # all while the worker sent
    finally:
        release.set()
        worker.join(30)
    deliver()

    assert queued(app) == []
    with app.app_context():
        turns = db.session.scalars(
            db.select(OutboxMessage)
            .where(OutboxMessage.player_id == first.player_id, OutboxMessage.kind == "turn")
            .order_by(OutboxMessage.id)
        ).all()
        db.session.expunge_all()
    deliveries = Counter(r.message["Message-ID"] for r in smtp_server.received)
    assert set(deliveries.values()) == {1}, deliveries
    (new,) = newer
    old, newest = turns[-2:]
    assert (old.id, newest.id) == (first.id, new.id)
    assert newest.status == "sent" and newest.message_id in deliveries
    assert newest.message_id != first.message_id and newest.text_body != first.text_body
    if reply.startswith("250"):
        assert (old.status, old.message_id) == ("sent", first.message_id)
        assert (old.subject, old.text_body) == (first.subject, first.text_body)
        assert first.message_id in deliveries
    else:
        assert (old.status, old.attempts) == ("skipped", 1) and "451" in old.last_error
        assert first.message_id not in deliveries


@pytest.mark.parametrize("app", ["postgres"], indirect=True)
def test_a_move_does_not_wait_for_a_worker_sending_the_movers_turn_email(
    app: Flask, client: FlaskClient, make_game, deliver, smtp_server: SMTPServer
) -> None:
    """The email a worker is sending is too late to withdraw: the move passes it over."""
    game, rng, first = turn_email_waiting(app, client, make_game, deliver, one_to_move=True)
    views = {seat: client.get(f"/api/play/{game[seat]}").get_json() for seat in SEATS}
    (mover,) = [seat for seat in SEATS if views[seat]["your_turn"]]
    claimed, release = threading.Event(), threading.Event()
    accept = smtp_server.handler.handle_DATA

    async def hold(server: Any, session: Any, envelope: Any) -> str:
        claimed.set()
        release.wait(30)  # only this worker talks to the server: it may wait
        return await accept(server, session, envelope)

    smtp_server.handler.handle_DATA = hold  # type: ignore[method-assign]
    worker = threading.Thread(target=send_one_message, args=(app,))
    worker.start()
    try:
        assert claimed.wait(30), "the worker did not send the turn email"
        thread, outcome = moving(app, game, rng)
        thread.join(10)
        waited = thread.is_alive()
    finally:
        release.set()
        worker.join(30)
    thread.join(30)
    assert not waited, "the move waited for the worker"
    assert not isinstance(outcome[0], BaseException), outcome
    assert outcome[0][0] == mover
    assert row(app, first.id).status == "sent"


def test_a_turn_email_replaced_keeps_when_it_was_first_queued(app: Flask, make_game) -> None:
    """The row a newer turn email rewrites keeps its id, and its time with it."""
    make_game()
    first = utcnow() - timedelta(days=2)
    with app.app_context(), transaction():
        player = db.session.scalars(db.select(Player).where(Player.seat == "shadow")).one()
        with time_machine.travel(first, tick=False):
            queue(
                Email("old", "old", "<p>old</p>"),
                kind="turn",
                recipient=player.email,
                player=player,
            )
        older = queued_turn(player)
        db.session.expunge(older)
        queue(Email("new", "new", "<p>new</p>"), kind="turn", recipient=player.email, player=player)
        newer = queued_turn(player)
        assert (newer.id, newer.subject) == (older.id, "new")
        assert newer.message_id != older.message_id
        assert newer.created_at == older.created_at == first
        assert newer.next_attempt_at > first


def test_a_failed_turn_email_is_not_queued_again_behind_a_newer_one(app: Flask, make_game) -> None:
    """Requeueing is refused, and the failed email stays as it was."""
    make_game()
    with app.app_context():
        player = db.session.scalars(db.select(Player).where(Player.seat == "shadow")).one()
        failed = failed_turn_behind_a_newer_one(player)
        db.session.commit()
        newer = "A newer turn email for this player is already queued."
        with pytest.raises(ValueError, match=newer), transaction():
            requeue(failed.id)
        db.session.rollback()
        assert db.session.get(OutboxMessage, failed.id).status == "failed"


@pytest.mark.parametrize("app", ["postgres"], indirect=True)
def test_turn_emails_queued_at_the_same_moment_leave_one_unsent(
    app: Flask, make_game, deliver, postgres_database: str
) -> None:
    """The second waits for the first to commit, then rewrites its email; neither fails."""
    make_game()
    deliver()
    with app.app_context():
        player_id = db.session.scalars(db.select(Player.id).where(Player.seat == "shadow")).one()
    first_in, outcome = threading.Event(), []

    def queue_turn(subject: str, hold: Callable[[], None]) -> None:
        try:
            with app.app_context(), transaction():
                player = db.session.get_one(Player, player_id)
                queue(
                    Email(subject, subject, subject),
                    kind="turn",
                    recipient=player.email,
                    player=player,
                )
                hold()
            outcome.append(subject)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            outcome.append(exc)

    blocked = waits_on_a_lock(postgres_database)

    def until_the_second_waits() -> None:
        first_in.set()
        for _ in range(200):
            if blocked():
                return
            threading.Event().wait(0.05)
        raise AssertionError("the second email did not wait for the first")

    first = threading.Thread(target=queue_turn, args=("first", until_the_second_waits))
    first.start()
    assert first_in.wait(30)
    second = threading.Thread(target=queue_turn, args=("second", lambda: None))
    second.start()
    first.join(30)
    second.join(30)

    # Either may be told first once the first commits; neither fails.
    assert sorted(map(str, outcome)) == ["first", "second"], outcome
    (waiting,) = [m for m in queued(app) if m.player_id == player_id]
    assert waiting.subject == "second"


def left_sending(
    app: Flask, client: FlaskClient, make_game, deliver
) -> tuple[dict[str, Any], random.Random, int]:
    """:func:`turn_email_waiting`, the email written and marked ``sending`` by a worker that
    then stopped before it sent it (killed, or its database gone): its id for the email."""
    game, rng, waiting = turn_email_waiting(app, client, make_game, deliver)
    with app.app_context(), transaction():
        message = worker._claim_due(utcnow())
        assert message is not None and message.id == waiting.id
        assert worker._write(message) == "sending"
    return game, rng, waiting.id


def test_a_turn_email_left_sending_is_not_sent_once_its_player_moved(
    app: Flask, client: FlaskClient, make_game, deliver, smtp_server: SMTPServer
) -> None:
    """The move withdraws only a queued email; the worker that takes the one left over asks
    its kind again whether it still matters."""
    game, rng, left = left_sending(app, client, make_game, deliver)
    player = row(app, left).player_id
    while True:
        mover, _ = random_move(client, game, rng)
        with app.app_context():
            if db.session.get_one(Player, player).seat == mover:
                break
    sent_before = len(smtp_server.received)
    deliver()
    assert row(app, left).status == "skipped"
    sent = smtp_server.received[sent_before:]
    assert row(app, left).message_id not in {r.message["Message-ID"] for r in sent}


def test_a_turn_email_left_sending_gives_way_to_a_newer_one(
    app: Flask, client: FlaskClient, make_game, deliver, smtp_server: SMTPServer
) -> None:
    """The game went on until its player owed a move again: one turn email goes, the newer."""
    game, rng, left = left_sending(app, client, make_game, deliver)
    player = row(app, left).player_id
    for _ in range(100):
        random_move(client, game, rng)
        newer = [m for m in queued(app) if m.player_id == player and m.kind == "turn"]
        if newer:
            break
    else:
        raise AssertionError("the player never owed a move again")
    deliver()
    assert row(app, left).status == "skipped"
    assert row(app, newer[0].id).status == "sent"


def test_a_message_put_back_as_a_newer_one_is_queued_is_skipped(
    app: Flask, client: FlaskClient, make_game, deliver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The newer email committed between the put-back's look for one and its own write: the
    unique index of the queued emails keeps the newer, and the older is skipped, not failed
    nor left ``sending``."""
    game, rng, left = left_sending(app, client, make_game, deliver)
    player = row(app, left).player_id
    for _ in range(100):
        random_move(client, game, rng)
        if [m for m in queued(app) if m.player_id == player and m.kind == "turn"]:
            break
    # The put-back's look finds nothing queued: the newer one was not committed yet then.
    look = outbox._queued
    looks: list[str] = []

    def too_soon(key: str) -> OutboxMessage | None:
        looks.append(key)
        return None if len(looks) == 1 else look(key)

    monkeypatch.setattr(outbox, "_queued", too_soon)
    with app.app_context():
        worker._put_back(left, "not sent yet: the SMTP server was unavailable")
    assert len(looks) == 2  # the put-back's look, then the one after the refusal
    assert row(app, left).status == "skipped"


def test_the_sweep_forgets_emails_sent_long_ago_but_those_of_games_in_play(
    app: Flask, make_game, deliver
) -> None:
    """A sent email keeps its body, links and all (each a credential): the sweep deletes those
    sent, skipped or failed more than OUTBOX_DAYS ago, but for those of a game still in play,
    whose player may reply to them, and those still to go."""
    live, over = make_game(seed=3)["id"], make_game(seed=4)["id"]
    played(app, over, 4, emails=False)
    deliver()
    days = app.config["OUTBOX_DAYS"]
    with app.app_context(), transaction():
        messages = db.session.scalars(db.select(OutboxMessage)).all()
        assert {message.status for message in messages} <= {"sent", "skipped"}
        for message in messages:
            message.created_at = utcnow() - timedelta(days=days, minutes=1)
        waiting = next(message for message in messages if message.game_id == over)
        waiting.status = "queued"
        failed = next(m for m in messages if m.game_id == over and m is not waiting)
        failed.status = "failed"
        recent = OutboxMessage(
            kind="turn",
            status="sent",
            game_id=over,
            recipient="kim@example.com",
            message_id="<recent@splitmind.test>",
            created_at=utcnow() - timedelta(days=days - 1),
        )
        db.session.add(recent)
        db.session.flush()
        kept = {m.id for m in messages if m.game_id == live} | {waiting.id, recent.id}
        old = {m.id for m in messages if m.game_id == over} - {waiting.id}
        assert failed.id in old and len(old) > 1 and any(m.game_id == live for m in messages)
    with app.app_context():
        forgotten = sweep().mail_forgotten
        left = set(db.session.scalars(db.select(OutboxMessage.id)))
    assert (left, forgotten) == (kept, len(old))


@pytest.mark.parametrize("app", ["postgres"], indirect=True)
def test_an_old_failure_queued_again_as_the_sweep_runs_still_goes(
    app: Flask, make_game, deliver, postgres_database: str
) -> None:
    """An admin puts back an email that failed long ago as the sweep forgets old ones: the
    sweep waits for the admin's commit, and then finds it queued, no longer done with."""
    over = make_game(seed=4)["id"]
    played(app, over, 4, emails=False)
    deliver()
    with app.app_context(), transaction():
        message = db.session.scalars(
            db.select(OutboxMessage).where(OutboxMessage.game_id == over).limit(1)
        ).one()
        message.status = "failed"
        message.replace_key = None
        message.created_at = utcnow() - timedelta(days=app.config["OUTBOX_DAYS"] + 1)
        failed = message.id

    def sweeps() -> None:
        with app.app_context():
            sweep()

    errors = second_behind_first(app, postgres_database, lambda: requeue(failed), sweeps)
    assert errors == []
    assert row(app, failed).status == "queued"


def test_with_outbox_days_0_the_sweep_keeps_every_email(app: Flask, make_game, deliver) -> None:
    """OUTBOX_DAYS=0 keeps every email for as long as the database lasts."""
    app.config["OUTBOX_DAYS"] = 0
    over = make_game(seed=4)["id"]
    played(app, over, 4, emails=False)
    deliver()
    with app.app_context(), transaction():
        for message in db.session.scalars(db.select(OutboxMessage)):
            message.created_at = utcnow() - timedelta(days=3650)
    with app.app_context():
        assert sweep().mail_forgotten == 0
        assert db.session.scalar(db.select(db.func.count(OutboxMessage.id))) > 0
