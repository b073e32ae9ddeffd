"""The deadline sweep: a reminder once, a timeout once, abandoned games, finished ones untouched."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
import time_machine
from flask import Flask
from flask.testing import FlaskClient

from service import games, homes
from service.deadlines import sweep
from service.models import Event, Game, db, utcnow
from service.rules import SEATS
from service.unit_of_work import transaction

from ..helpers import pick_action
from .test_game_by_email import EMAILS


def subjects(smtp_server, seat: str) -> list[str]:
    return [str(m.message["Subject"]) for m in smtp_server.handler.to(EMAILS[seat])]


def move(client: FlaskClient, token: str, rng: random.Random) -> None:
    view = client.get(f"/api/play/{token}").get_json()
    body = {"version": view["version"], **pick_action(view, rng)}
    assert client.post(f"/api/play/{token}", json=body).status_code == 200


def test_reminder_once_then_timeout_once(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    game = make_game(seed=3, days_per_move=3)
    rng = random.Random(3)
    for seat in SEATS:
        move(client, game[seat], rng)  # the exchange: now the Keeper leads
    deliver()
    with app.app_context():
        deadline = db.session.get(Game, game["id"]).deadline
        assert deadline is not None and timedelta(days=2.9) < deadline - utcnow() <= timedelta(
            days=3
        )
        assert sweep(deadline - timedelta(hours=30)).reminded == []
        assert sweep(deadline - timedelta(hours=23)).reminded == [game["id"]]
        assert sweep(deadline - timedelta(hours=2)).reminded == []
    deliver()
    assert sum("your move is due soon" in s for s in subjects(smtp_server, "keeper")) == 1
    assert not any("your move is due soon" in s for s in subjects(smtp_server, "shadow"))
    with app.app_context():
        result = sweep(deadline + timedelta(seconds=1))
        assert result.expired == [game["id"]]
        assert sweep(deadline + timedelta(days=1)).expired == []
        stored = db.session.get(Game, game["id"])
        assert (stored.status, stored.winner, stored.to_act) == ("timed_out", "shadow", "")
        log = db.session.scalars(
            db.select(Event).where(Event.game_id == game["id"], Event.kind == "timeout")
        ).all()
        assert len(log) == 1 and log[0].note == "the keeper ran out of time"
    deliver()
    for seat in SEATS:
        assert sum("ended by timeout" in s for s in subjects(smtp_server, seat)) == 1
    keeper_mail = smtp_server.handler.to(EMAILS["keeper"])[-1].text
    assert "You ran out of time" in keeper_mail
    # The late player's link now shows the result and refuses moves.
    view = client.get(f"/api/play/{game['keeper']}").get_json()
    assert view["status"] == "timed_out" and view["winner"] == "shadow" and view["legal"] == []
    response = client.post(
        f"/api/play/{game['keeper']}", json={"version": view["version"], "play": "1H"}
    )
    assert response.status_code == 409


def test_both_late_in_a_simultaneous_phase_abandons_the_game(
    app: Flask, make_game, smtp_server, deliver
) -> None:
    game = make_game(seed=4, days_per_move=1)
    with app.app_context():
        deadline = db.session.get(Game, game["id"]).deadline
        assert sweep(deadline + timedelta(minutes=1)).expired == [game["id"]]
        stored = db.session.get(Game, game["id"])
        assert stored.status == "abandoned" and stored.winner is None
    deliver()
    for seat in SEATS:
        last = smtp_server.handler.to(EMAILS[seat])[-1]
        assert "abandoned" in str(last.message["Subject"])
        assert "Neither of you chose in time" in last.text


def test_one_half_chosen_then_the_other_late_times_out(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game(seed=6, days_per_move=2)
    move(client, game["shadow"], random.Random(6))
    with app.app_context():
        stored = db.session.get(Game, game["id"])
        sweep(stored.deadline + timedelta(seconds=1))
        stored = db.session.get(Game, game["id"])
        assert (stored.status, stored.winner) == ("timed_out", "shadow")


def test_a_reminder_while_both_owe_a_choice_says_the_game_would_be_abandoned(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    """Neither player late alone loses: both late abandon the game. A reminder to a player
    whose opponent owes the same choice says so; once the opponent chose, it says the
    player alone would lose."""
    game = make_game(seed=5, days_per_move=3)
    deliver()
    with app.app_context():
        deadline = db.session.get_one(Game, game["id"]).deadline
        assert sweep(deadline - timedelta(hours=23)).reminded == [game["id"]]
    deliver()
    for seat in SEATS:
        (reminder,) = [
            m for m in smtp_server.handler.to(EMAILS[seat]) if "due soon" in m.message["Subject"]
        ]
        for body in (reminder.text, reminder.html):
            assert "If you do not move by then, you lose the game by timeout." not in body
            assert "if neither of you does, the game is abandoned" in body, body
    other = make_game(seed=6, days_per_move=3)
    move(client, other["shadow"], random.Random(6))
    deliver()
    with app.app_context():
        deadline = db.session.get_one(Game, other["id"]).deadline
        assert sweep(deadline - timedelta(hours=23)).reminded == [other["id"]]
    deliver()
    (reminder,) = [
        m
        for m in smtp_server.handler.to(EMAILS["keeper"])
        if f"game {other['id']}: your move is due soon" in m.message["Subject"]
    ]
    assert "If you do not move by then, you lose the game by timeout." in reminder.text
    assert "abandoned" not in reminder.text


def test_the_second_half_keeps_the_first_deadline(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game(seed=6, days_per_move=2)
    with app.app_context():
        first = db.session.get(Game, game["id"]).deadline
    move(client, game["shadow"], random.Random(6))
    with app.app_context():
        assert db.session.get(Game, game["id"]).deadline == first


def test_a_game_the_sweep_fails_on_holds_back_no_other(
    app: Flask, make_game, caplog: pytest.LogCaptureFixture
) -> None:
    """A game whose state the engine cannot read (a fault, here a row written by hand) is
    left as it was, said in the log; the other late game is ended all the same."""
    broken, sound = make_game(seed=3), make_game(seed=4)
    with app.app_context():
        with transaction():
            game = db.session.get_one(Game, broken["id"])
            game.state = {"phase": "nowhere"}
            late = game.deadline + timedelta(seconds=1)
        assert sweep(late).expired == [sound["id"]]
        assert f"sweep: game {broken['id']} failed, left for the next" in caplog.text
        assert db.session.get_one(Game, broken["id"]).status == "active"


def test_no_deadline_means_no_reminder_or_timeout(app: Flask, make_game) -> None:
    game = make_game(seed=2, days_per_move=0)
    with app.app_context():
        stored = db.session.get(Game, game["id"])
        assert stored.deadline is None
        result = sweep(utcnow() + timedelta(days=400))
        assert result.reminded == [] and result.expired == []


@pytest.mark.slow
def test_finished_games_are_left_alone(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver
) -> None:
    from ..factories import played

    game = make_game(seed=15, days_per_move=1)
    played(app, game["id"], 15, emails=False)
    deliver()
    before = len(smtp_server.received)
    with app.app_context():
        result = sweep(utcnow() + timedelta(days=30))
        assert result.reminded == [] and result.expired == []
        assert db.session.get(Game, game["id"]).status == "finished"
    deliver()
    assert len(smtp_server.received) == before


def test_tick_command_runs_the_sweep(app: Flask, make_game) -> None:
    game = make_game(seed=4, days_per_move=1)
    make_game(seed=5, days_per_move=3)
    with app.app_context():
        stored = db.session.get(Game, game["id"])
        stored.deadline = utcnow() - timedelta(minutes=5)
        db.session.commit()
        with transaction():
            homes.set_email_policy("kim@example.com", "digest", digest_hour=0)
    result = app.test_cli_runner().invoke(args=["tick"])
    assert result.exit_code == 0
    assert "timed out 1 game(s)" in result.output
    assert "queued 1 digest(s)" in result.output
    with app.app_context():
        assert db.session.get(Game, game["id"]).status == "abandoned"


def test_one_day_per_move_is_reminded_halfway(app: Flask, make_game) -> None:
    game = make_game(seed=7, days_per_move=1)
    with app.app_context():
        deadline = db.session.get(Game, game["id"]).deadline
        assert sweep(deadline - timedelta(hours=23)).reminded == []  # just after the move
        assert sweep(deadline - timedelta(hours=13)).reminded == []
        assert sweep(deadline - timedelta(hours=11)).reminded == [game["id"]]


def test_an_extension_as_near_as_a_reminder_is_the_reminder(
    app: Flask, make_game, smtp_server, deliver
) -> None:
    """An admin gives a late game one more day: the email that says so reminds the players;
    the sweep that follows sends no "due soon" about the same deadline. A longer extension
    is reminded of in its own time."""
    game = make_game(seed=6, days_per_move=7)
    with app.app_context():
        late = db.session.get_one(Game, game["id"]).deadline + timedelta(minutes=1)
    with time_machine.travel(late, tick=False), app.app_context():
        with transaction():
            games.extend_deadline(game["id"], 1, "admin")
        assert sweep().reminded == []
        with transaction():
            games.extend_deadline(game["id"], 2, "admin")
        deadline = db.session.get_one(Game, game["id"]).deadline
        assert sweep().reminded == []
        deliver()
        assert not any("due soon" in s for seat in SEATS for s in subjects(smtp_server, seat))
    with time_machine.travel(deadline - timedelta(hours=23), tick=False), app.app_context():
        assert sweep().reminded == [game["id"]]
        deliver()
    for seat in SEATS:  # both owe the exchange
        assert sum("due soon" in subject for subject in subjects(smtp_server, seat)) == 1


def test_a_deadline_moved_away_since_the_sweep_read_it_is_not_reminded_of(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """The sweep reads the games near their deadline, then takes each one's lock: a move made
    between the two gave a new deadline, days away, reminded of in its own time."""
    game = make_game(seed=6, days_per_move=7)
    with app.app_context():
        near = db.session.get_one(Game, game["id"]).deadline
    now = near - timedelta(hours=2)  # the sweep's moment: the first deadline is near
    with time_machine.travel(now, tick=False):  # then the players move: a new deadline
        move(client, game["keeper"], random.Random(6))
        move(client, game["shadow"], random.Random(7))
    with app.app_context():
        stored = db.session.get_one(Game, game["id"])
        assert stored.deadline is not None and stored.deadline > near
        assert games.remind(game["id"], now) is None
        assert not db.session.get_one(Game, game["id"]).reminded
        later = db.session.get_one(Game, game["id"]).deadline - timedelta(hours=2)
        assert games.remind(game["id"], later) is not None


def test_a_move_sent_after_its_deadline_is_refused_and_the_sweep_ends_the_game(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """Whether a late player loses does not hang on when the sweep next runs."""
    game = make_game(seed=6, days_per_move=2)
    view = client.get(f"/api/play/{game['keeper']}").get_json()
    body = {"version": view["version"], **pick_action(view, random.Random(6))}
    with app.app_context():
        deadline = db.session.get_one(Game, game["id"]).deadline
    assert deadline is not None
    with time_machine.travel(deadline + timedelta(hours=3), tick=False):
        response = client.post(f"/api/play/{game['keeper']}", json=body)
        assert response.status_code == 409
        assert response.get_json()["error"]["code"] == "closed"
        assert "deadline of this move has passed" in response.get_json()["error"]["message"]
        with app.app_context():
            assert db.session.get_one(Game, game["id"]).version == 0
            assert sweep().expired == [game["id"]]
