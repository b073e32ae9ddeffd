"""Invitations asked for and answered at the same instant, on PostgreSQL: a row lock on the
creator's address makes the same form sent twice ask once, and one on the waiting game makes
each confirm, accept, decline and rematch take effect once."""

from __future__ import annotations

import threading
import time
from collections import Counter
from datetime import datetime

import pytest
from flask import Flask
from sqlalchemy import func, select

from service import address_change, games, homes, invitations
from service.addresses import lock_address, settings_for, settings_row
from service.links import token_for
from service.models import Event, Game, Invitation, OutboxMessage, Player, db
from service.unit_of_work import transaction

from ..helpers import (
    NEW_GAME_FORM,
    at_once,
    csrf_token,
    from_elsewhere,
    second_behind_first,
)

pytestmark = pytest.mark.postgres


def request_game(app: Flask, opponent: str = "bob@example.com") -> dict[str, str]:
    """Ann asks for a game against ``opponent``; returns the paths of both stages' links."""
    with app.app_context(), transaction():
        invitation = invitations.request_game(
            invitations.Request(
                name="Ann",
                email="ann@example.com",
                opponent_name="Bob",
                opponent_email=opponent,
                role="keeper",
                match=False,
                days_per_move=5,
            )
        )
        return {
            stage: f"/invitations/{invitations.token(invitation, stage)}"
            for stage in invitations.STAGES
        }


def post(app: Flask, path: str, answer: str | None = None) -> int:
    with app.test_client() as client:
        return client.post(path, data={"answer": answer} if answer else {}).status_code


def queued(app: Flask, kind: str) -> int:
    """How many emails of ``kind`` are in the outbox."""
    with app.app_context():
        return db.session.scalar(
            select(func.count()).select_from(OutboxMessage).where(OutboxMessage.kind == kind)
        )


@pytest.mark.parametrize(
    "changes",
    [{}, {"opponent": "computer", "level": "easy", "opponent_name": "", "opponent_email": ""}],
    ids=["person", "computer"],
)
def test_the_same_form_sent_at_the_same_instant_asks_once(
    pg_app: Flask, changes: dict[str, str]
) -> None:
    clients = [pg_app.test_client() for _ in range(8)]
    forms = [
        {**NEW_GAME_FORM, **changes, "csrf_token": csrf_token(client.get("/new").get_data(True))}
        for client in clients
    ]
    statuses = at_once(
        [
            lambda client=client, form=form: client.post("/new", data=form).status_code
            for client, form in zip(clients, forms, strict=True)
        ]
    )
    assert statuses == [200] * 8
    with pg_app.app_context():
        assert db.session.scalar(select(func.count()).select_from(Game)) == 1
    assert queued(pg_app, "invitation" if changes else "confirm_address") == 1


def test_an_addresss_allowance_holds_against_requests_at_the_same_instant(
    pg_app: Flask,
) -> None:
    """Ten requests from one creator, each from its own IP and otherwise different, sent
    together: the creator's allowance lets through as many as it allows, no more."""
    clients = [from_elsewhere(pg_app, n + 1) for n in range(10)]
    forms = [
        {
            **NEW_GAME_FORM,
            "email": "victim@example.com",
            "opponent_email": f"asker{n}@example.com",
            "csrf_token": csrf_token(client.get("/new").get_data(True)),
        }
        for n, client in enumerate(clients)
    ]
    statuses = at_once(
        [
            lambda client=client, form=form: client.post("/new", data=form).status_code
            for client, form in zip(clients, forms, strict=True)
        ]
    )
    assert Counter(statuses) == {200: 5, 429: 5}
    with pg_app.app_context():
        assert db.session.scalar(select(func.count()).select_from(Game)) == 5
    assert queued(pg_app, "confirm_address") == 5


def test_the_opponents_allowance_holds_against_confirmations_at_the_same_instant(
    pg_app: Flask,
) -> None:
    """Ten invitations naming one opponent, confirmed together: three invite them (the
    opponent's allowance), and the others wait unconfirmed."""
    confirms = [request_game(pg_app, opponent="victim@example.com")["confirm"] for _ in range(10)]
    statuses = at_once([lambda path=path: post(pg_app, path) for path in confirms])
    assert Counter(statuses) == {200: 3, 429: 7}
    assert queued(pg_app, "invite_opponent") == 3
    with pg_app.app_context():
        assert Counter(db.session.scalars(select(Invitation.status))) == {
            "invited": 3,
            "unconfirmed": 7,
        }


def test_a_double_click_on_confirm_invites_the_opponent_once(pg_app: Flask) -> None:
    links = request_game(pg_app)
    statuses = at_once([lambda: post(pg_app, links["confirm"]) for _ in range(10)])
    assert statuses == [200] * 10
    assert queued(pg_app, "invite_opponent") == 1
    with pg_app.app_context():
        assert db.session.scalars(select(Invitation)).one().status == "invited"


def test_accepts_at_the_same_instant_start_the_game_once(pg_app: Flask) -> None:
    links = request_game(pg_app)
    post(pg_app, links["confirm"])
    statuses = at_once([lambda: post(pg_app, links["respond"], "accept") for _ in range(10)])
    assert Counter(statuses) == {303: 1, 200: 9}
    with pg_app.app_context():
        game = db.session.scalars(select(Game)).one()
        assert game.status == "active"
        started = select(Event).where(Event.game_id == game.id, Event.kind == "started")
        assert len(db.session.scalars(started).all()) == 1
    assert queued(pg_app, "invitation") == 2  # each player's link, once


def test_accept_racing_decline_ends_one_way(pg_app: Flask) -> None:
    declines = 0
    for n in range(8):
        links = request_game(pg_app, opponent=f"bob{n}@example.com")
        post(pg_app, links["confirm"])
        accepted, declined = at_once(
            [
                lambda link=links["respond"], answer=answer: post(pg_app, link, answer)
                for answer in ("accept", "decline")
            ]
        )
        # The answer that came second finds the invitation answered otherwise: 409.
        assert (accepted, declined) in ((303, 409), (409, 200))
        declines += declined == 200
        with pg_app.app_context():
            invitation = db.session.scalars(
                select(Invitation).order_by(Invitation.id.desc())
            ).first()
            game = db.session.get(Game, invitation.game_id)
            if accepted == 303:
                assert (invitation.status, game.status) == ("accepted", "active")
            else:
                assert (invitation.status, game.status) == ("declined", "cancelled")
        assert queued(pg_app, "declined") == declines


def test_a_rematch_asked_by_both_players_at_once_is_one_invitation(pg_app: Flask) -> None:
    with pg_app.app_context(), transaction():
        game = games.create_game(
            games.Seating("kim@example.com", "Kim"), games.Seating("sam@example.com", "Sam")
        )
        games.declare_forfeit(game.id, "shadow", "alice")
        links = [f"/rematch/{token_for(player)}" for player in game.players]
    statuses = at_once([lambda link=link: post(pg_app, link) for link in links * 5])
    assert statuses == [303] * 10
    with pg_app.app_context():
        assert len(db.session.scalars(select(Invitation)).all()) == 1
        assert db.session.scalar(select(func.count()).select_from(Game)) == 2
    assert queued(pg_app, "invite_opponent") == 1


@pytest.mark.parametrize("change", ["replace_home_link", "set_language", "stop_all_emails"])
def test_an_accept_and_a_home_setting_at_the_same_instant_both_apply(
    pg_app: Flask, postgres_database: str, change: str
) -> None:
    """Bob accepts as his address's settings or emails change, which lock the rows of his
    address and of its settings first and then write every seat of his: the accept takes
    them in the same order, so the second waits for the first and both apply."""
    links = request_game(pg_app)
    post(pg_app, links["confirm"])

    def locks_first() -> None:  # what the change locks first
        if change == "stop_all_emails":
            lock_address("bob@example.com")
        else:
            settings_row("bob@example.com")

    def changes() -> None:
        if change == "set_language":
            homes.set_language("bob@example.com", "fr")
        elif change == "stop_all_emails":
            invitations.stop_all_emails("bob@example.com")
        else:
            homes.replace_home_link("bob@example.com")

    statuses: list[int] = []
    # The accept waits for the home page.
    errors = second_behind_first(
        pg_app,
        postgres_database,
        locks_first,
        lambda: statuses.append(post(pg_app, links["respond"], "accept")),
        first_ends=changes,
    )
    assert errors == [] and statuses == [303]
    with pg_app.app_context():
        assert db.session.scalars(select(Game)).one().status == "active"


def test_a_vacation_taken_as_the_invitation_is_accepted_holds_the_first_deadline(
    pg_app: Flask,
) -> None:
    """Ann goes on vacation as Bob accepts her invitation: the game starts either before her
    vacation, which then pauses its deadline, or after it, and counts from its end."""
    links = request_game(pg_app)
    post(pg_app, links["confirm"])
    taken, release = threading.Event(), threading.Event()
    ends: list[datetime] = []

    def vacation() -> None:
        with pg_app.app_context(), transaction():
            ends.append(homes.take_vacation("ann@example.com", 10))
            taken.set()
            release.wait(30)

    away = threading.Thread(target=vacation)
    away.start()
    assert taken.wait(30)
    statuses: list[int] = []
    accept = threading.Thread(
        target=lambda: statuses.append(post(pg_app, links["respond"], "accept"))
    )
    accept.start()
    accept.join(2)  # it waits for the vacation, or it is done
    release.set()
    away.join(30)
    accept.join(30)
    assert statuses == [303]
    with pg_app.app_context():
        game = db.session.scalars(select(Game)).one()
        assert game.status == "active" and game.deadline is not None
        assert game.deadline > ends[0].replace(tzinfo=game.deadline.tzinfo)


def test_a_move_to_another_address_and_an_accept_at_the_same_instant_both_apply(
    pg_app: Flask, postgres_database: str
) -> None:
    """Bob accepts Ann's invitation as his games move to another address: the accept locks
    the waiting game, then his address's row; the move takes the waiting game before the
    address's row too, so the second waits for the first and both apply."""
    links = request_game(pg_app)
    post(pg_app, links["confirm"])
    with pg_app.app_context():
        settings = settings_for("bob@example.com")
        assert settings is not None and settings.home_key is not None
        moving = address_change.Confirmation(
            "bob@example.com", "bob@newjob.example", settings.home_key, int(time.time())
        )
        invitation_id = db.session.scalars(select(Invitation.id)).one()
        game_id = db.session.scalars(select(Game.id)).one()
        path = f"/moving/{address_change.token(moving)}"

    def accepts() -> None:
        invitations.respond(db.session.get_one(Invitation, invitation_id), accept=True)

    statuses: list[int] = []
    errors = second_behind_first(
        pg_app,
        postgres_database,
        lambda: games.lock_game(game_id),  # what the accept locks first
        lambda: statuses.append(post(pg_app, path)),
        first_ends=accepts,
    )
    assert errors == [] and statuses == [303]
    with pg_app.app_context():
        assert db.session.get_one(Game, game_id).status == "active"
        seats = select(Player.email).where(Player.game_id == game_id)
        assert sorted(db.session.scalars(seats)) == ["ann@example.com", "bob@newjob.example"]
