"""A return match: the second game starts with roles swapped; pages and emails keep the score."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service import games
from service.links import token_for
from service.models import Game, db
from service.rules import return_match
from service.unit_of_work import transaction

from ..factories import played, written
from ..smtp import SMTPServer

# Long whole-game tests whose subject does not depend on the database: PostgreSQL only.
pytestmark = pytest.mark.parametrize("app", ["postgres"], indirect=True)


def kim_and_sam_match(app: Flask, seed: int) -> int:
    """A return match, Kim the Keeper of its first game: that game's id."""
    with app.app_context(), transaction():
        kim, sam = games.Seating("kim@example.com", "Kim"), games.Seating("sam@example.com", "Sam")
        return games.create_match(kim, sam, seed=seed).id


def tokens(app: Flask, game_id: int) -> dict[str, str | int]:
    with app.app_context():
        game = db.session.get(Game, game_id)
        return {"id": game.id, **{p.seat: token_for(p) for p in game.players}}


@pytest.mark.slow
def test_a_return_match_plays_two_games_and_scores_them(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    first_id = kim_and_sam_match(app, seed=40)
    first = tokens(app, first_id)
    view = client.get(f"/api/play/{first['keeper']}").get_json()
    assert view["match"]["game"] == 1 and view["match"]["over"] is False
    played(app, first["id"], 40, emails=False)
    deliver()
    with app.app_context():
        second_game = db.session.scalars(select(Game).where(Game.match_game == 2)).one()
        assert second_game.match_id == db.session.get(Game, first_id).match_id
        assert second_game.player("keeper").email == "sam@example.com"
        assert second_game.player("shadow").email == "kim@example.com"
        second_id = second_game.id
    kim_mail = smtp_server.handler.to("kim@example.com")
    assert "The second game, with roles swapped, starts now" in kim_mail[-2].text
    assert "you are the Shadow" in str(kim_mail[-1].message["Subject"])
    assert "game 2 of a return match" in kim_mail[-1].text
    second = tokens(app, second_id)
    # The first game's page leads each player to their own seat of the second, roles swapped.
    for seat, theirs in (("keeper", "shadow"), ("shadow", "keeper")):
        page = client.get(f"/play/{first[seat]}").get_data(as_text=True)
        assert f'href="/play/{second[theirs]}"' in page
        assert "Play the second game of the return match" in page
    played(app, second["id"], 41, emails=False)
    deliver()
    with app.app_context():
        states = [db.session.get(Game, gid).state for gid in (first_id, second_id)]
    expected = return_match(*states)
    view = client.get(f"/api/play/{second['shadow']}").get_json()  # Kim, the first game's Keeper
    match = view["match"]
    assert match["over"] is True
    assert (match["you"], match["opponent"]) == (
        expected["scores"]["first"],
        expected["scores"]["second"],
    )
    winner = {"first": "you", "second": "opponent", None: None}[expected["winner"]]
    assert match["winner"] == winner and match["draw"] == (winner is None)
    page = client.get(f"/play/{second['shadow']}").get_data(as_text=True)
    assert "Return match" in page or "return match" in page
    assert "Play the second game" not in page
    last = smtp_server.handler.to("kim@example.com")[-1].text
    scores = expected["scores"]
    assert f"Return match score: Kim {scores['first']}, Sam {scores['second']}." in last
    assert ("The match is a draw." in last) == (winner is None)
    # Kim asks for a rematch after the second game: a new return match, roles swapped.
    offer = client.get(f"/rematch/{second['shadow']}").get_data(as_text=True)
    assert "Invite Sam to a new return match with the roles swapped" in offer
    assert "you will be the Shadow in its first game" in offer
    assert client.post(f"/rematch/{second['shadow']}").status_code == 303
    deliver()
    invite = smtp_server.handler.to("sam@example.com")[-1].text
    assert "Kim <kim@example.com> invites you to a return match of Split Mind" in invite
    who = {"you": ", which Kim won,", "opponent": ", which you won,", None: ","}[winner]
    assert f"a rematch of the return match that ended with game {second_id}{who}" in invite
    with app.app_context():
        rematch = db.session.scalars(select(Game).order_by(Game.id.desc())).first()
        assert (rematch.status, rematch.match_game) == ("waiting", 1)
        assert rematch.match_id not in (None, db.session.get_one(Game, first_id).match_id)
        # Sam, the Shadow of the first game: the next match opens the other way round.
        assert rematch.player("keeper").email == "sam@example.com"


def test_a_timeout_ends_the_match(
    app: Flask, client: FlaskClient, deliver: Callable[[], int], smtp_server: SMTPServer
) -> None:
    from datetime import timedelta

    from service.deadlines import sweep

    with app.app_context(), transaction():
        first = games.create_match(
            games.Seating("kim@example.com", "Kim"), games.Seating("sam@example.com", "Sam"), seed=3
        )
        first_id = first.id
    ids = tokens(app, first_id)
    view = client.get(f"/api/play/{ids['shadow']}").get_json()
    import random

    from ..helpers import pick_action

    body = {"version": 0, **pick_action(view, random.Random(1))}
    assert client.post(f"/api/play/{ids['shadow']}", json=body).status_code == 200
    with app.app_context():
        sweep(db.session.get(Game, first_id).deadline + timedelta(seconds=1))
        assert db.session.scalar(select(db.func.count()).select_from(Game)) == 1
    match = client.get(f"/api/play/{ids['keeper']}").get_json()["match"]
    assert match["over"] and match["ended_early"] and match["winner"] == "opponent"
    assert "sam@example.com" not in client.get(f"/api/play/{ids['keeper']}").get_data(as_text=True)
    # The score may say otherwise: both say who wins, and why.
    said = "ends the match, whatever the score: Sam wins it."
    assert said in client.get(f"/play/{ids['keeper']}").text
    deliver()
    ended = [r.message for r in smtp_server.received if r.message["To"] == "kim@example.com"][-1]
    assert said in ended.get_body(("plain",)).get_content()


def test_a_cancelled_match_ends_without_a_winner_and_is_no_draw(
    app: Flask, client: FlaskClient
) -> None:
    with app.app_context():
        with transaction():
            first = games.create_match(
                games.Seating("kim@example.com", "Kim"),
                games.Seating("sam@example.com", "Sam"),
                seed=3,
            )
            games.cancel_game(first.id, "ada")
        ids = tokens(app, first.id)
    match = client.get(f"/api/play/{ids['keeper']}").get_json()["match"]
    assert (match["over"], match["winner"], match["draw"]) == (True, None, False)
    page = client.get(f"/play/{ids['keeper']}").get_data(as_text=True)
    assert "The match ended without a winner." in page and "draw" not in page


@pytest.mark.parametrize("end", ["forfeit", "timeout"])
def test_a_match_cut_short_in_its_first_game_may_have_a_rematch(
    app: Flask, client: FlaskClient, end: str
) -> None:
    """No second game is dealt after a first game cut short: the game page and the home page
    offer a rematch, and asking for it invites the opponent to a new game."""
    from datetime import timedelta

    from service import invitations
    from service.links import home_token
    from service.models import Invitation, utcnow

    with app.app_context(), transaction():
        first = games.create_match(
            games.Seating("kim@example.com", "Kim"),
            games.Seating("sam@example.com", "Sam"),
            days_per_move=2,
        )
        first_id = first.id
    with app.app_context(), transaction():
        if end == "forfeit":
            games.declare_forfeit(first_id, "shadow", "ada")
        else:
            games.expire(first_id, utcnow() + timedelta(days=3))
    ids = tokens(app, first_id)
    with app.app_context():
        assert db.session.scalar(select(db.func.count()).select_from(Game)) == 1
        home = home_token("kim@example.com")
    assert "Ask Sam for a rematch" in client.get(f"/play/{ids['keeper']}").get_data(as_text=True)
    assert "Ask Sam for a rematch" in client.get(f"/me/{home}").get_data(as_text=True)
    assert client.get(f"/rematch/{ids['keeper']}").status_code == 200
    assert client.post(f"/rematch/{ids['keeper']}").status_code == 303
    with app.app_context():
        invitation = db.session.scalars(select(Invitation)).one()
        assert (invitation.creator_email, invitation.opponent_email) == (
            "kim@example.com",
            "sam@example.com",
        )
        assert invitations.rematch_of(db.session.get_one(Game, first_id)) == invitation
        assert invitation.match  # a return match again
        rematch = db.session.get_one(Game, invitation.game_id)
        assert rematch.match_game == 1 and rematch.player("keeper").email == "sam@example.com"


def test_the_match_score_holds_after_an_address_is_corrected_in_one_game(
    app: Flask, client: FlaskClient
) -> None:
    """Sides are read by seat, not address: Kim's address corrected in the second game, both
    players still read one score, each from their own side, and one winner."""
    first_id = kim_and_sam_match(app, seed=40)
    played(app, first_id, 40, emails=False)
    with app.app_context(), transaction():
        second = db.session.scalars(select(Game).where(Game.match_game == 2)).one()
        games.correct_address(second.player("shadow").id, "kim2@example.com", "ada")
        second_id = second.id
    ids = tokens(app, second_id)
    views = {
        seat: client.get(f"/api/play/{ids[seat]}").get_json()["match"]
        for seat in ("keeper", "shadow")
    }
    kim, sam = views["shadow"], views["keeper"]  # Kim keeps game 1, shadows game 2
    assert (kim["you"], kim["opponent"]) == (sam["opponent"], sam["you"])
    assert (kim["you"], kim["opponent"]) != (0, 0)
    with app.app_context():
        first = db.session.get_one(Game, first_id)
        expected = return_match(first.state, None)["scores"]
    assert (kim["you"], kim["opponent"]) == (expected["first"], expected["second"])
    played(app, second_id, 41, emails=False)
    ends = {
        seat: client.get(f"/api/play/{ids[seat]}").get_json()["match"]
        for seat in ("keeper", "shadow")
    }
    winners = {ends["shadow"]["winner"], ends["keeper"]["winner"]}
    assert winners in ({"you", "opponent"}, {None})


@pytest.mark.parametrize("opponent", ["sam", "computer"])
def test_the_return_matches_of_a_chain_open_in_turn_with_each_as_the_keeper(
    app: Flask, client: FlaskClient, opponent: str
) -> None:
    """Within a match each plays both roles, and the Shadow of its second game plays knowing
    the score to beat: a rematch asked after the second game (where the one who opened as
    the Keeper is the Shadow) opens the new match with the other as the Keeper, the page
    saying so, against a person as against the computer."""
    with app.app_context(), transaction():
        kim = games.Seating("kim@example.com", "Kim")
        other = games.Seating("sam@example.com", "Sam")
        if opponent == "computer":
            other = games.Seating.the_computer("random")
        first_id = games.create_match(kim, other, seed=40).id
    written(app, first_id, 40)
    with app.app_context():
        second_id = db.session.scalars(select(Game.id).where(Game.match_game == 2)).one()
    written(app, second_id, 41)
    with app.app_context():
        kim_in_second = token_for(db.session.get_one(Game, second_id).player("shadow"))
    offer = client.get(f"/rematch/{kim_in_second}").get_data(as_text=True)
    assert "you will be the Shadow in its first game" in offer
    assert client.post(f"/rematch/{kim_in_second}").status_code == 303
    with app.app_context():
        rematch = db.session.scalars(select(Game).order_by(Game.id.desc())).first()
        assert rematch is not None and rematch.match_game == 1
        assert rematch.player("shadow").email == "kim@example.com"
        assert rematch.player("keeper").email != "kim@example.com"
