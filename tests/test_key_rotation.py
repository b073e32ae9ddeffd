"""Changing SECRET_KEY after a leak: links signed with the old key keep working while that key
is in SECRET_KEY_FALLBACKS and stop once it is dropped; new links are signed with the new key
alone. (Admin sessions: tests/admin/test_sessions.py.)"""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service import invitations
from service.links import token_for
from service.mail.compose import unsubscribe_token
from service.models import Player, db

from .helpers import request_invitation

pytestmark = pytest.mark.both_backends


NEW_KEY = "the new secret key, after the leak"


def emailed_links(app: Flask, game_id: int) -> list[str]:
    """The path of every kind of signed link the service emails, signed with the key of now."""
    with app.app_context():
        player = db.session.scalars(db.select(Player).where(Player.game_id == game_id)).first()
        assert player is not None
        invitation = request_invitation("bob@example.com")
        return [
            f"/play/{token_for(player)}",
            f"/api/play/{token_for(player)}",
            f"/rematch/{token_for(player)}",
            f"/unsubscribe/{unsubscribe_token(player)}",
            f"/invitations/{invitations.token(invitation, 'confirm')}",
            f"/invitations/{invitations.token(invitation, 'respond')}",
        ]


def refused(client: FlaskClient, paths: list[str]) -> list[str]:
    """The paths answered as a bad link (404); a rematch of a game in play is a 409, not one."""
    return [path for path in paths if client.get(path).status_code == 404]


def rotate(app: Flask, *fallbacks: str) -> None:
    """What the operator does: a new SECRET_KEY, and the keys still accepted as fallbacks."""
    app.config.update(SECRET_KEY=NEW_KEY, SECRET_KEY_FALLBACKS=list(fallbacks))


def test_links_signed_with_the_old_key_work_while_it_is_a_fallback(app, client, make_game) -> None:
    old_key = app.config["SECRET_KEY"]
    paths = emailed_links(app, make_game()["id"])
    assert refused(client, paths) == []
    rotate(app, "an even older key", old_key)
    assert refused(client, paths) == []
    rotate(app, "an even older key")
    assert refused(client, paths) == paths


def test_new_links_are_signed_with_the_new_key_only(app, client, make_game) -> None:
    old_key = app.config["SECRET_KEY"]
    game_id = make_game()["id"]
    rotate(app, old_key)
    paths = emailed_links(app, game_id)
    rotate(app)
    assert refused(client, paths) == []
    app.config.update(SECRET_KEY=old_key, SECRET_KEY_FALLBACKS=[])
    assert refused(client, paths) == paths
