"""Moves under contention, on PostgreSQL: row locks make every move apply exactly once."""

from __future__ import annotations

import random
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select, update

from service import games, homes, invitations, notify
from service.games import Seating, create_game
from service.links import token_for
from service.mail import worker
from service.models import Address, Event, Game, OutboxMessage, Player, db, utcnow
from service.unit_of_work import transaction

from .helpers import at_once, pick_action, second_behind_first

pytestmark = pytest.mark.postgres


def new_game(app: Flask, seed: int) -> dict[str, Any]:
    with app.app_context(), transaction():
        game = create_game(
            Seating("kim@example.com", "Kim"), Seating("sam@example.com", "Sam"), seed=seed
        )
        return {"id": game.id, **{p.seat: token_for(p) for p in game.players}}


def post(app: Flask, token: str, body: dict[str, Any]) -> int:
    with app.test_client() as client:
        return client.post(f"/api/play/{token}", json=body).status_code


def test_twenty_identical_posts_apply_one_move(pg_app: Flask) -> None:
    game = new_game(pg_app, seed=1)
    view = pg_app.test_client().get(f"/api/play/{game['keeper']}").get_json()
    body = {"version": 0, **pick_action(view, random.Random(1))}
    statuses = at_once([lambda: post(pg_app, game["keeper"], body) for _ in range(20)])
    assert Counter(statuses) == {200: 1, 409: 19}
    with pg_app.app_context():
        stored = db.session.get(Game, game["id"])
        assert stored.version == 1
        assert db.session.query(Event).filter_by(game_id=game["id"], kind="move").count() == 1
        assert len(stored.state["hands"]["keeper"]) == 9


@pytest.mark.slow
def test_both_halves_of_an_exchange_at_the_same_instant_resolve_once(pg_app: Flask) -> None:
    client = pg_app.test_client()
    for round_number in range(50):
        game = new_game(pg_app, seed=100 + round_number)
        rng = random.Random(round_number)
        bodies = {}
        for seat in ("keeper", "shadow"):
            view = client.get(f"/api/play/{game[seat]}").get_json()
            bodies[seat] = {"version": 0, **pick_action(view, rng)}
        calls = [
            lambda token=game[seat], body=bodies[seat]: post(pg_app, token, body) for seat in bodies
        ]
        statuses = at_once(calls)
        assert statuses == [200, 200]
        with pg_app.app_context():
            stored = db.session.get(Game, game["id"])
            state = stored.state
            assert stored.version == 2 and state["phase"] == "play"
            assert len(state["transfers"]) == 1
            assert [len(state["hands"][s]) for s in ("keeper", "shadow")] == [10, 10]
            assert state["hands"]["keeper"].count(bodies["shadow"]["exchange"][0]) == 1
            moves = db.session.query(Event).filter_by(game_id=game["id"], kind="move").count()
            assert moves == 2


def test_stale_moves_racing_the_fresh_one_get_409_and_change_nothing(pg_app: Flask) -> None:
    """Stale moves sent at the same instant as the one fresh move are all refused.

    The game ends exactly as a twin game (the same deal) to which only the fresh
    move was applied.
    """
    game, twin = new_game(pg_app, seed=3), new_game(pg_app, seed=3)
    client = pg_app.test_client()
    rng = random.Random(3)
    for seat in ("keeper", "shadow"):  # the exchange, the same in both games
        view = client.get(f"/api/play/{game[seat]}").get_json()
        body = {"version": view["version"], **pick_action(view, rng)}
        for played in (game, twin):
            assert client.post(f"/api/play/{played[seat]}", json=body).status_code == 200
    views = {
        seat: client.get(f"/api/play/{game[seat]}").get_json() for seat in ("keeper", "shadow")
    }
    (leader,) = [seat for seat, view in views.items() if view["your_turn"]]
    fresh = {"version": 2, **views[leader]["legal"][0]}
    stale = [
        (seat, {"version": version, **move})
        for version in (0, 1)
        for seat in ("keeper", "shadow")
        for move in views[leader]["legal"][:5]
    ]
    statuses = at_once(
        [lambda: post(pg_app, game[leader], fresh)]
        + [lambda seat=seat, body=body: post(pg_app, game[seat], body) for seat, body in stale]
    )
    assert statuses == [200] + [409] * len(stale)
    assert client.post(f"/api/play/{twin[leader]}", json=fresh).status_code == 200
    with pg_app.app_context():
        stored, alone = db.session.get(Game, game["id"]), db.session.get(Game, twin["id"])
        assert stored.version == alone.version == 3
        assert stored.state == alone.state
        logs = [
            db.session.scalars(
                db.select(Event.kind).where(Event.game_id == played["id"]).order_by(Event.id)
            ).all()
            for played in (game, twin)
        ]
        assert logs[0] == logs[1] and logs[0].count("move") == 3


def test_two_different_moves_on_the_same_version_apply_exactly_one(pg_app: Flask) -> None:
    """A lead sent from two devices at once: the first applies, the other is stale."""
    client = pg_app.test_client()
    for attempt in range(10):
        game = new_game(pg_app, seed=200 + attempt)
        rng = random.Random(attempt)
        for seat in ("keeper", "shadow"):
            view = client.get(f"/api/play/{game[seat]}").get_json()
            body = {"version": view["version"], **pick_action(view, rng)}
            assert client.post(f"/api/play/{game[seat]}", json=body).status_code == 200
        view = client.get(f"/api/play/{game['keeper']}").get_json()
        first, second = view["legal"][0], view["legal"][-1]
        assert first != second
        bodies = [{"version": view["version"], **move} for move in (first, second)]
        statuses = at_once(
            [lambda body=body, token=game["keeper"]: post(pg_app, token, body) for body in bodies]
        )
        assert sorted(statuses) == [200, 409]
        with pg_app.app_context():
            stored = db.session.get(Game, game["id"])
            played = stored.state["table"][0]["card"]
            winner = bodies[statuses.index(200)]["play"]
            assert stored.version == view["version"] + 1 and played == winner
            moves = db.session.query(Event).filter_by(game_id=game["id"], kind="move").count()
            assert moves == 3


def test_a_move_through_a_link_revoked_while_it_waits_is_refused(
    pg_app: Flask, postgres_database: str
) -> None:
    """An admin corrects Kim's address, which gives her seat a new link, and holds the game's
    lock as a move comes through her old link: the move waits, then finds the link dead."""
    game = new_game(pg_app, seed=3)
    view = pg_app.test_client().get(f"/api/play/{game['keeper']}").get_json()
    body = {"version": 0, **pick_action(view, random.Random(1))}
    with pg_app.app_context():
        kim = db.session.scalars(select(Player).where(Player.seat == "keeper")).one()
        kim_id = kim.id
    statuses: list[int] = []
    # The move waits for the admin's lock.
    errors = second_behind_first(
        pg_app,
        postgres_database,
        lambda: games.correct_address(kim_id, "kim.new@example.com", "ada"),
        lambda: statuses.append(post(pg_app, game["keeper"], body)),
    )
    assert errors == [] and statuses == [404]
    with pg_app.app_context():
        assert db.session.get_one(Game, game["id"]).version == 0


def test_both_players_turning_notes_off_at_once_write_one_event(pg_app: Flask) -> None:
    """Turning notes off is a change to the game, made under its lock as a move is."""
    for seed in range(10):
        game = new_game(pg_app, seed=200 + seed)

        def turn_off(token: str) -> int:
            with pg_app.test_client() as client:
                return client.post(f"/play/{token}/notes-off").status_code

        calls = [lambda token=game[seat]: turn_off(token) for seat in ("keeper", "shadow")]
        assert at_once(calls) == [303, 303]
        with pg_app.app_context():
            offs = db.session.scalars(
                select(Event.seat).where(Event.game_id == game["id"], Event.kind == "notes_off")
            ).all()
            assert len(offs) == 1, offs


def test_stopping_and_resuming_every_email_at_once_both_apply(
    pg_app: Flask, postgres_database: str
) -> None:
    """Kim takes invitations and every email again on her home page as an email's one-click
    link stops them all: each writes her address's row and her seats, in the same order, so
    the second waits for the first and neither is refused."""
    new_game(pg_app, seed=4)
    with pg_app.app_context(), transaction():
        db.session.add(Address(email="kim@example.com", declined_at=utcnow()))

    def stop() -> None:
        with pg_app.app_context(), transaction():
            invitations.stop_all_emails("kim@example.com")

    # The stop waits for the resume, which has taken its first step.
    errors = second_behind_first(
        pg_app,
        postgres_database,
        lambda: homes.accept_invitations("kim@example.com"),
        stop,
        first_ends=lambda: homes.resume_all_emails("kim@example.com"),
    )
    assert errors == []
    with pg_app.app_context():  # the stop came second: it holds
        assert db.session.get_one(Address, "kim@example.com").unsubscribed_at is not None
        kim = db.session.scalars(select(Player).where(Player.email == "kim@example.com")).one()
        assert not kim.notify


def test_a_home_link_replaced_as_an_admin_corrects_the_address_leaves_the_seat_alone(
    pg_app: Flask, postgres_database: str
) -> None:
    """An admin moves Kim's seat to her new address, with a new link emailed there, as her old
    address replaces its home link: the seat is no longer the old address's, and the link
    the admin gave it stays the one that works."""
    game = new_game(pg_app, seed=5)
    with pg_app.app_context():
        kim_id = db.session.scalars(select(Player.id).where(Player.seat == "keeper")).one()
    given: list[str] = []

    def correct() -> None:
        kim = games.correct_address(kim_id, "kim.new@example.com", "ada")
        given.append(kim.link_key)

    def replace() -> None:
        with pg_app.app_context(), transaction():
            homes.replace_home_link("kim@example.com")

    # The replacement waits for the admin.
    assert second_behind_first(pg_app, postgres_database, correct, replace) == []
    with pg_app.app_context():
        kim = db.session.get_one(Player, kim_id)
        assert (kim.email, kim.link_key) == ("kim.new@example.com", given[0])
        assert db.session.get_one(Game, game["id"]).status == "active"


def test_a_digest_written_as_the_next_days_sweep_joins_it_leaves_no_move_out(
    pg_app: Flask, postgres_database: str
) -> None:
    """Yesterday's digest, held up, is written by the mail worker as today's sweep finds it
    waiting: today's moves go in a digest of their own rather than into one written already."""
    first = new_game(pg_app, seed=6)
    now = utcnow()
    with pg_app.app_context(), transaction():
        homes.set_email_policy("kim@example.com", "digest", 0)
        kim = db.session.scalars(select(Player).where(Player.game_id == first["id"])).first()
        assert kim is not None and kim.email == "kim@example.com" and notify.in_digest(kim)
        assert homes.send_digests(now - timedelta(days=1)) == ["kim@example.com"]
    with pg_app.app_context(), transaction():
        later = create_game(
            Seating("kim@example.com", "Kim"), Seating("ann@example.com", "Ann"), seed=6
        )
        owed = next(p.id for p in later.players if p.email == "kim@example.com")
        others = update(OutboxMessage).where(OutboxMessage.kind != "digest")
        db.session.execute(others.values(status="sent"))  # the games' first emails

    def write() -> None:
        message = worker._claim_due(utcnow())
        assert message is not None and message.kind == "digest"
        assert worker._write(message) == "sending"

    def sweep() -> None:
        with pg_app.app_context(), transaction():
            homes.send_digests(now)

    # The sweep waits for the worker.
    assert second_behind_first(pg_app, postgres_database, write, sweep) == []
    with pg_app.app_context():
        digests = db.session.scalars(
            select(OutboxMessage).where(OutboxMessage.kind == "digest").order_by(OutboxMessage.id)
        ).all()
        listed = [m.status for m in digests if m.status == "queued" and owed in m.params["players"]]
        assert [m.status for m in digests][0] == "sending"
        assert listed == ["queued"], [(m.status, m.params) for m in digests]
