"""An address written for the first time by requests at the same instant, on PostgreSQL:
each request finds the one row, none fails on the other's insert."""

from __future__ import annotations

import pytest
from flask import Flask
from sqlalchemy import select

from service import games, invitations
from service.mail.compose import unsubscribe_token
from service.models import Address, Invitation, db
from service.unit_of_work import transaction

from .helpers import at_once, request_invitation

pytestmark = pytest.mark.postgres


def confirm_link(app: Flask, opponent: str, creator: str = "ann@example.com") -> str:
    """``creator`` asks for a game against ``opponent``; the path of their confirmation link."""
    with app.app_context():
        invitation = request_invitation(opponent, creator)
        return f"/invitations/{invitations.token(invitation, 'confirm')}"


def post(app: Flask, path: str) -> int:
    with app.test_client() as client:
        return client.post(path).status_code


def test_a_creator_confirming_invitations_at_once_is_one_address(pg_app: Flask) -> None:
    for attempt in range(3):
        links = [confirm_link(pg_app, f"opponent{attempt}-{n}@example.com") for n in range(8)]
        assert at_once([lambda link=link: post(pg_app, link) for link in links]) == [200] * 8
        with pg_app.app_context():
            address = db.session.get(Address, "ann@example.com")
            assert address is not None and address.confirmed_at is not None
            assert set(db.session.scalars(select(Invitation.status))) == {"invited"}
            db.session.execute(Address.__table__.delete())
            db.session.commit()


def test_unsubscribes_racing_a_confirmation_are_one_address(pg_app: Flask) -> None:
    for attempt in range(3):
        player = f"sam{attempt}@example.com"
        with pg_app.app_context(), transaction():
            seats = [
                games.create_game(
                    games.Seating(f"kim{attempt}-{n}@example.com", "Kim"),
                    games.Seating(player, "Sam"),
                ).player("shadow")
                for n in range(4)
            ]
            paths = [f"/unsubscribe/{unsubscribe_token(seat)}" for seat in seats]
        paths.append(confirm_link(pg_app, f"lee{attempt}@example.com", creator=player))
        assert at_once([lambda path=path: post(pg_app, path) for path in paths]) == [200] * 5
        with pg_app.app_context():
            address = db.session.get(Address, player)
            assert address is not None
            assert address.confirmed_at is not None and address.unsubscribed_at is not None
