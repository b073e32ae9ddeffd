"""Playing against the computer: its seat, the command line, the new-game form, the worker
making its moves, its names, deadlines, statistics, and a move that fails."""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import time_machine
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import delete, select, text
from sqlalchemy.exc import IntegrityError

from service import bots, computer, deadlines, games, homes
from service.admin import stats
from service.computer import ComputerMoves, rng_for
from service.game_text import computer_name
from service.games import Seating
from service.language import recipient_locale
from service.links import player_for, token_for
from service.mail import compose, worker
from service.models import Event, Game, GameFigures, OutboxMessage, Player, db, utcnow
from service.rules import seat_view, to_act
from service.unit_of_work import transaction

from .conftest import BASE_URL
from .factories import played_against_computer
from .helpers import ask_for_game, pick_action, write_queued

KIM = "kim@example.com"


@pytest.fixture
def app_config(mail_config: dict[str, Any]) -> dict[str, Any]:
    return mail_config


@pytest.fixture
def against_computer(app: Flask) -> Callable[..., dict[str, Any]]:
    """Start a game of Kim against the computer; returns its id and Kim's seat and token.

    Options: the computer's seat and level, the seed, ``language`` (Kim's), ``match``
    (a return match) and those of ``create_game``.
    """

    def make(computer: str = "shadow", level: str = "easy", seed: int = 5, **options: Any):
        kim = Seating(KIM, "Kim", options.pop("language", None))
        seats = {computer: Seating.the_computer(level)}
        seats["keeper" if computer == "shadow" else "shadow"] = kim
        start = games.create_match if options.pop("match", False) else games.create_game
        with app.app_context(), transaction():
            game = start(seats["keeper"], seats["shadow"], seed=seed, **options)
            person = next(player for player in game.players if not player.is_computer)
            return {"id": game.id, "seat": person.seat, "token": token_for(person)}

    return make


def computer_moves(app: Flask, **options: Any) -> int:
    """One pass of the worker's computer moves; returns how many it made."""
    with app.app_context():
        return ComputerMoves()(**options)


def person_moves(client: FlaskClient, token: str, rng: random.Random) -> dict[str, Any]:
    """Kim makes a random legal move through the API; returns her view after it."""
    view = client.get(f"/api/play/{token}").get_json()
    assert view["your_turn"], view
    response = client.post(
        f"/api/play/{token}", json={"version": view["version"], **pick_action(view, rng)}
    )
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def load(app: Flask, game_id: int) -> Game:
    with app.app_context():
        game = db.session.get(Game, game_id)
        assert game is not None
        game.players  # noqa: B018 (loaded before the session goes)
        db.session.expunge(game)
        return game


def outbox(app: Flask) -> list[OutboxMessage]:
    write_queued(app)
    with app.app_context():
        return list(db.session.scalars(select(OutboxMessage).order_by(OutboxMessage.id)))


def play_to_the_end(app: Flask, client: FlaskClient, game: dict[str, Any], seed: int = 1) -> None:
    """Kim plays random moves, the worker the computer's, until the game is over."""
    rng = random.Random(seed)
    for _ in range(200):
        if load(app, game["id"]).status != "active":
            return
        if client.get(f"/api/play/{game['token']}").get_json()["your_turn"]:
            person_moves(client, game["token"], rng)
        else:
            assert computer_moves(app) > 0
    raise AssertionError("the game did not end in 200 moves")


# --- the seat ------------------------------------------------------------------------


def test_a_computer_seat_has_no_address_no_link_and_takes_no_email(app: Flask, against_computer):
    game = against_computer(level="hard")
    with app.app_context():
        stored = db.session.get(Game, game["id"])
        bot = stored.player("shadow")
        assert (bot.email, bot.link_key, bot.notify, bot.computer_level) == (
            None,
            None,
            False,
            "hard",
        )
        assert bot.is_computer and not stored.player("keeper").is_computer
        # Kim's invitation is the only email; none can be queued to the computer.
        assert [(m.recipient, m.kind) for m in db.session.scalars(select(OutboxMessage))] == [
            (KIM, "invitation")
        ]
        with pytest.raises(games.InvalidGame, match="no link"):
            games.resend_link(bot.id, "ada")
        with pytest.raises(games.InvalidGame, match="no link"):
            games.rotate_link(bot.id, "ada")


def test_a_game_needs_a_person_and_a_known_level(app: Flask) -> None:
    with app.app_context():
        with pytest.raises(games.InvalidGame, match="a person"):
            games.create_game(Seating.the_computer("easy"), Seating.the_computer("hard"))
        with pytest.raises(games.InvalidGame, match="no computer level 'genius'"):
            games.create_game(Seating(KIM, "Kim"), Seating.the_computer("genius"))


def test_the_database_refuses_a_person_without_an_address(app: Flask, against_computer) -> None:
    game = against_computer()
    with app.app_context():
        kim = db.session.scalars(select(Player).where(Player.email == KIM)).one()
        kim.email = None
        with pytest.raises(IntegrityError):
            db.session.commit()
        db.session.rollback()
        bot = db.session.get(Game, game["id"]).player("shadow")
        bot.email = "bot@example.com"
        with pytest.raises(IntegrityError):
            db.session.commit()


def test_a_return_match_seats_the_computer_again(app: Flask, client, against_computer) -> None:
    game = against_computer(computer="keeper", level="random", match=True)
    played_against_computer(app, game["id"], emails=False)
    with app.app_context():
        second = db.session.scalars(select(Game).where(Game.match_game == 2)).one()
        assert second.player("shadow").computer_level == "random"
        assert second.player("keeper").email == KIM
        second_id, kim = second.id, token_for(second.player("keeper"))
    played_against_computer(app, second_id, emails=False)
    offer = client.get(f"/rematch/{kim}").get_data(as_text=True)
    assert "Play the computer (random) again, in a new return match" in offer
    token = client.post(f"/rematch/{kim}").location.rsplit("/", 1)[1]
    with app.app_context():
        rematch = player_for(token).game
        assert (rematch.status, rematch.match_game) == ("active", 1)
        # The computer opened the last match as the Keeper: Kim opens the next one.
        assert rematch.player("keeper").email == KIM
        assert rematch.player("shadow").computer_level == "random"


# --- the command line and the form ---------------------------------------------------


def test_create_seats_the_computer(app: Flask, runner: FlaskCliRunner) -> None:
    result = runner.invoke(
        args=["games", "create", "--keeper", "kim@example.com", "--computer", "shadow",
              "--level", "hard"]
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    game_id, line = result.stdout.strip().splitlines()
    seat, link = line.split(" ")
    assert seat == "keeper" and link.startswith(f"{BASE_URL}/play/")
    with app.app_context():
        assert player_for(link.rsplit("/", 1)[1]).email == KIM
        game = db.session.get(Game, int(game_id))
        assert game.player("shadow").computer_level == "hard"
    shown = runner.invoke(args=["games", "show", game_id])
    assert "shadow  the computer (hard)" in shown.stdout


def test_create_refuses_a_seat_both_taken_and_left_empty(runner: FlaskCliRunner) -> None:
    both = [
        "games",
        "create",
        "--keeper",
        KIM,
        "--shadow",
        "sam@example.com",
        "--computer",
        "shadow",
    ]
    assert "the computer plays the shadow" in runner.invoke(args=both).output
    empty = ["games", "create", "--keeper", KIM]
    assert "give --shadow (an address) or --computer shadow" in runner.invoke(args=empty).output
    level = ["games", "create", "--keeper", KIM, "--computer", "shadow", "--level", "genius"]
    assert runner.invoke(args=level).exit_code == 2


def test_create_refuses_a_level_without_the_computer(app: Flask, runner: FlaskCliRunner) -> None:
    """A --level with two addresses would deal a game between people, the level ignored."""
    people = ["games", "create", "--keeper", KIM, "--shadow", "sam@example.com", "--level", "hard"]
    result = runner.invoke(args=people)
    assert result.exit_code == 2
    assert "--level is how well the computer plays: give --computer" in result.output
    with app.app_context():
        assert db.session.scalar(select(Game.id)) is None


def test_the_form_starts_a_game_against_the_computer_at_once(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    response = ask_for_game(
        client, opponent="computer", level="hard", opponent_name="", opponent_email=""
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    assert "Your game against the computer has started" in response.get_data(as_text=True)
    with app.app_context():
        game = db.session.scalars(select(Game)).one()
        assert game.status == "active" and game.started_at is not None
        assert game.player("keeper").email == "ann@example.com"
        assert game.player("shadow").computer_level == "hard"
    deliver()
    (email,) = smtp_server.handler.received
    assert email.envelope_to == ["ann@example.com"]
    assert "you are the Keeper against the computer (hard)" in str(email.message["Subject"])
    (link,) = email.links("/play/")
    assert client.get(link.removeprefix(BASE_URL)).status_code == 200


def test_an_address_that_never_moved_gets_no_reminder_nor_ending(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    """Anyone may type anyone's address on the public page: until its player moves, the game
    sends that address its invitation alone, as an invitation to play a person would, even
    to an address that takes a daily digest."""
    with app.app_context(), transaction():
        homes.set_email_policy("ann@example.com", "digest", digest_hour=0)
    ask_for_game(client, opponent="computer", opponent_name="", opponent_email="", days="1")
    deliver()
    with app.app_context():
        # The reminder's time, and the digest's.
        assert deadlines.sweep(utcnow() + timedelta(hours=23)).digests == []
        deliver()
        (game_id,) = deadlines.sweep(utcnow() + timedelta(days=2)).expired
        assert db.session.get_one(Game, game_id).status == "timed_out"
    deliver()
    (invitation,) = smtp_server.handler.received
    assert "you are the Keeper against the computer" in str(invitation.message["Subject"])


def test_the_form_still_needs_an_opponent_against_a_person(client: FlaskClient) -> None:
    response = ask_for_game(client, opponent="person", opponent_name="", opponent_email="")
    assert response.status_code == 400
    # Each field says it beside itself (and the list at the top names both).
    assert response.get_data(as_text=True).count('-error">This field is required.') == 2


# --- the worker makes the computer's moves -------------------------------------------


def test_the_computer_chooses_its_exchange_as_soon_as_it_is_due(app: Flask, against_computer):
    game = against_computer(level="medium")
    before = load(app, game["id"])
    with app.app_context():
        expected = bots.choose("medium", seat_view(before.state, "shadow"), rng_for(game["id"], 0))
    assert computer_moves(app) == 1
    with app.app_context():
        (move,) = db.session.scalars(select(Event).where(Event.kind == "move")).all()
        assert (move.seat, move.action) == ("shadow", expected)
        assert db.session.get(Game, game["id"]).to_act == "keeper"
    assert computer_moves(app) == 0  # nothing more is due until Kim moves


def test_the_computer_answers_after_the_persons_move(
    app: Flask, client: FlaskClient, against_computer, smtp_server, deliver
) -> None:
    game = against_computer(computer="keeper")
    rng = random.Random(2)
    view = person_moves(client, game["token"], rng)  # Kim's half of the exchange first
    assert view["to_act"] == ["keeper"]
    deliver()
    assert computer_moves(app) >= 1  # the other half, then any tricks it leads
    stored = load(app, game["id"])
    assert to_act(stored.state) == ["shadow"]
    # The computer's move through the usual service: a live page sees the new version.
    assert client.get(f"/api/play/{game['token']}").get_json()["version"] == stored.version
    deliver()
    subjects = [str(m.message["Subject"]) for m in smtp_server.handler.to(KIM)]
    # The turn email names the computer's lead, and asks the person for the answer.
    assert subjects[-1].startswith("The computer (easy) led "), subjects
    assert "your answer" in subjects[-1], subjects


def test_the_computers_half_is_accepted_after_the_persons_half_landed(
    app: Flask, client: FlaskClient, against_computer, monkeypatch
) -> None:
    game = against_computer()
    rng = random.Random(4)
    choose = bots.choose

    def slow_choice(*args: Any) -> Any:
        # Kim's half lands while the computer is choosing at the version before it.
        person_moves(client, game["token"], rng)
        return choose(*args)

    monkeypatch.setattr(computer.bots, "choose", slow_choice)
    assert computer_moves(app) >= 1
    stored = load(app, game["id"])
    assert stored.state["phase"] == "play" and stored.version >= 2


def test_a_game_that_ends_while_the_computer_chooses_is_no_failure(
    app: Flask, against_computer, monkeypatch, caplog
) -> None:
    game = against_computer()
    choose = bots.choose

    def cancelled_meanwhile(*args: Any) -> Any:
        with app.app_context(), transaction():
            games.cancel_game(game["id"], "ada")
        return choose(*args)

    monkeypatch.setattr(computer.bots, "choose", cancelled_meanwhile)
    with caplog.at_level(logging.WARNING, logger="service.computer"):
        assert computer_moves(app) == 0
    assert [r for r in caplog.records if r.name == "service.computer"] == []
    assert load(app, game["id"]).status == "cancelled"


def test_the_computers_random_choices_are_keyed_with_the_secret_key(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A player sees the game's id and version, and may read the computer's code: were its
    random source made of those alone, replaying its choices against each hand it could
    hold would tell them its hand."""
    with app.app_context():
        draws = [rng_for(7, 3).random() for _ in range(2)]
        monkeypatch.setitem(app.config, "SECRET_KEY", "another secret key, " + "x" * 20)
        other_key = rng_for(7, 3).random()
    assert draws[0] == draws[1]  # a pass that failed chooses the same move again
    assert other_key != draws[0]
    assert random.Random("7:3").random() not in (draws[0], other_key)


@pytest.mark.parametrize("present", [True, False], ids=["page open", "away"])
def test_the_computers_answer_is_emailed_only_to_a_person_away(
    app: Flask, client: FlaskClient, against_computer, deliver, present: bool
) -> None:
    """The computer answers within seconds: a person playing on the page gets no email for
    each answer while there, as with "only when away"; one who left it does, at once or
    once the page has been quiet a while."""
    game = against_computer(computer="shadow")
    person_moves(client, game["token"], random.Random(2))  # Kim's half of the exchange
    if present:
        assert client.post(f"/play/{game['token']}/seen").status_code == 204
    assert computer_moves(app) >= 1  # the computer's half: Kim leads the first trick
    deliver()
    with app.app_context():
        turns = db.session.scalars(
            select(OutboxMessage.status).where(OutboxMessage.kind == "turn")
        ).all()
    assert turns == ["queued" if present else "sent"]
    with time_machine.travel(utcnow() + timedelta(minutes=6)):
        deliver()
    with app.app_context():
        turns = db.session.scalars(
            select(OutboxMessage.status).where(OutboxMessage.kind == "turn")
        ).all()
    assert turns == ["sent"]


def test_the_computer_waits_for_the_delay(app: Flask, client, against_computer) -> None:
    game = against_computer(computer="keeper")
    app.config["BOT_DELAY_SECONDS"] = 60
    assert computer_moves(app) == 0
    assert computer_moves(app, now=utcnow() + timedelta(seconds=61)) == 1
    person_moves(client, game["token"], random.Random(1))
    assert computer_moves(app, now=utcnow() + timedelta(seconds=30)) == 0
    assert computer_moves(app, now=utcnow() + timedelta(seconds=61)) >= 1


@pytest.mark.slow
def test_a_whole_game_sends_mail_to_the_person_alone(
    app: Flask, client: FlaskClient, against_computer, smtp_server, deliver
) -> None:
    game = against_computer(level="random", days_per_move=3)
    play_to_the_end(app, client, game)
    stored = load(app, game["id"])
    assert stored.status == "finished"
    messages = outbox(app)
    assert {m.recipient for m in messages} == {KIM}
    assert {m.player_id for m in messages} == {stored.player(game["seat"]).id}
    assert messages[-1].kind == "game_over"
    deliver()
    assert {address for m in smtp_server.handler.received for address in m.envelope_to} == {KIM}


def test_the_worker_once_makes_the_moves_and_sends_the_mail(
    app: Flask, runner: FlaskCliRunner, against_computer, smtp_server
) -> None:
    game = against_computer(computer="keeper")
    result = runner.invoke(args=["mail", "worker", "--once"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "made 1 computer move(s)\nhandled 1 message(s)\n"
    assert to_act(load(app, game["id"]).state) == ["shadow"]


def test_tick_makes_the_computers_moves(app: Flask, runner: FlaskCliRunner, against_computer):
    game = against_computer(computer="keeper")
    result = runner.invoke(args=["tick"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "made 1 computer move(s)"
    assert to_act(load(app, game["id"]).state) == ["shadow"]


def test_the_readmes_cron_line_delivers_the_email(
    app: Flask, runner: FlaskCliRunner, against_computer, smtp_server
) -> None:
    """With no mail worker running, the cron line the README gives is all that sends mail:
    the computer's move is made, and every email queued is delivered."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    cron = readme[readme.index("# /etc/cron.d/splitmind") :].split("```")[0]
    commands = re.findall(r"splitmind-flask ([\w -]+?) *(?:;|\}|2>|\|)", cron)
    assert commands[0].split() == ["tick"]
    game = against_computer(computer="keeper")
    for command in commands:
        result = runner.invoke(args=command.split())
        assert result.exit_code == 0, result.output
    assert to_act(load(app, game["id"]).state) == ["shadow"]
    with app.app_context():
        assert set(db.session.scalars(select(OutboxMessage.status))) == {"sent"}
    assert smtp_server.handler.to(KIM)


# --- deadlines -----------------------------------------------------------------------


def test_deadlines_are_for_the_person_alone(app: Flask, client, against_computer) -> None:
    game = against_computer(computer="keeper", days_per_move=1)
    with app.app_context():
        assert db.session.get(Game, game["id"]).deadline is not None  # Kim owes her half
    person_moves(client, game["token"], random.Random(3))
    with app.app_context():
        waiting = db.session.get(Game, game["id"])
        assert (waiting.to_act, waiting.deadline) == ("keeper", None)
        result = deadlines.sweep(utcnow() + timedelta(days=30))
        assert (result.reminded, result.expired) == ([], [])
    computer_moves(app)
    with app.app_context():
        assert db.session.get(Game, game["id"]).deadline is not None  # Kim's turn again


def test_pages_say_only_the_persons_half_of_a_choice_is_due(
    app: Flask, client, against_computer
) -> None:
    """Both owe the exchange, but only Kim's half has a deadline: the computer's is never due."""
    game = against_computer(days_per_move=2)
    view = client.get(f"/api/play/{game['token']}").get_json()
    assert view["to_act"] == ["keeper", "shadow"] and view["opponent_computer"] is True
    page = client.get(f"/play/{game['token']}").get_data(as_text=True)
    assert "Your move is due in 2 days:" in page
    assert "and the computer" not in page
    (home,) = re.findall(r'href="(/me/[^"]+)"', page)
    assert "Your move is due " in client.get(home).get_data(as_text=True)


def test_a_late_person_loses_to_the_computer_that_owes_too(app: Flask, against_computer):
    game = against_computer(days_per_move=2)  # both owe the exchange; the computer waits
    with app.app_context():
        deadline = db.session.get(Game, game["id"]).deadline
        assert deadlines.sweep(deadline - timedelta(hours=20)).reminded == [game["id"]]
        assert deadlines.sweep(deadline + timedelta(seconds=1)).expired == [game["id"]]
        ended = db.session.get(Game, game["id"])
        assert (ended.status, ended.winner) == ("timed_out", "shadow")
        assert {m.recipient for m in db.session.scalars(select(OutboxMessage))} == {KIM}


# --- names ---------------------------------------------------------------------------


def test_pages_and_the_api_name_the_computer_in_the_readers_language(
    client: FlaskClient, against_computer
) -> None:
    game = against_computer(level="hard")
    page = client.get(f"/play/{game['token']}?lang=en").get_data(as_text=True)
    assert "give the computer (hard)." in page
    # A name that starts a sentence starts with a capital.
    assert "The computer (hard) holds" in page
    # In French the name comes after other words: the sentence starts with a capital, not it.
    page = client.get(f"/play/{game['token']}?lang=fr").get_data(as_text=True)
    assert "Main de l’ordinateur (difficile)" in page
    french = client.get(f"/api/play/{game['token']}?lang=fr").get_json()
    assert french["opponent"] == "l’ordinateur (difficile)"
    assert french["names"]["shadow"] == "l’ordinateur (difficile)"


def test_the_french_invitation_names_the_computer(
    app: Flask, against_computer, smtp_server, deliver
) -> None:
    against_computer(level="easy", language="fr")
    deliver()
    (email,) = smtp_server.handler.received
    assert "l’ordinateur (facile)" in str(email.message["Subject"])
    # Its body too, in the sentences built from the game's view.
    assert "à l’ordinateur (facile)" in email.text
    assert "the computer" not in email.text and "the computer" not in email.html


def test_the_french_digest_names_the_computer(
    app: Flask, against_computer, smtp_server, deliver
) -> None:
    """The computer keeps the keeper's seat: the exchange is Kim's to make, in the digest."""
    against_computer(computer="keeper", level="hard", language="fr")
    deliver()
    smtp_server.received.clear()
    with app.app_context():
        with transaction():
            homes.set_email_policy(KIM, "digest", digest_hour=0)
        assert deadlines.sweep().digests == [KIM]
    deliver()
    (digest,) = smtp_server.handler.received
    assert "contre l’ordinateur (difficile)" in digest.text
    assert "the computer" not in digest.text and "the computer" not in digest.html


@pytest.mark.parametrize(
    ("language", "said"),
    [("en", "The computer (hard) wins the match."), ("fr", "L’ordinateur (difficile) gagne")],
)
def test_the_match_score_starts_the_computers_win_with_a_capital(
    app: Flask, language: str, said: str
) -> None:
    """The computer's name starts the sentence of its win of a return match, after the
    score's full stop, as the move page writes it."""
    with app.app_context(), recipient_locale(language):
        opponent = computer_name("hard")
        view = {
            "you": "Kim",
            "opponent": opponent,
            "keeper": "Kim",
            "shadow": opponent,
            "status": "finished",
            "match": {
                "you": 0,
                "opponent": 2,
                "over": True,
                "draw": False,
                "winner": "shadow",
                "ended_early": False,
                "game": 2,
            },
        }
        assert said in compose.match_score(view)


# --- statistics ----------------------------------------------------------------------


def test_statistics_keep_games_against_the_computer_apart(
    app: Flask, client: FlaskClient, against_computer, make_game
) -> None:
    game = against_computer(level="random")
    played_against_computer(app, game["id"], emails=False)
    people = make_game(seed=9)
    with app.app_context(), transaction():
        games.declare_forfeit(people["id"], "keeper", "ada")
    with app.app_context():
        assert stats.playtest().games == 0 and stats.playtest().cut_short == 1
        computer_games = stats.playtest(against_computer=True)
        assert (computer_games.games, computer_games.cut_short) == (1, 0)
        winner = load(app, game["id"]).winner
        (level,) = stats.computer_results()
        assert (level.level, level.computer_seat, level.games) == ("random", "shadow", 1)
        assert level.person_wins == (winner == "keeper")
        assert stats.move_times().intervals == 0  # only games between people count
        (week,) = stats.weekly(utcnow(), weeks=1)
        assert (week.started, week.against_computer) == (2, 1)
        # Figures written after the fact know the computer too.
        db.session.execute(delete(GameFigures))
        db.session.commit()
        assert stats.summarize_finished() == (2, False)
        stored = db.session.get(GameFigures, game["id"])
        assert (stored.computer_seat, stored.computer_level) == ("shadow", "random")
        assert db.session.get(GameFigures, people["id"]).computer_seat is None


# --- a move that fails ---------------------------------------------------------------


def test_a_failing_move_stops_neither_the_other_games_nor_the_mail(
    app: Flask, against_computer, monkeypatch, smtp_server, caplog
) -> None:
    broken = against_computer(seed=1)
    working = against_computer(seed=2)
    broken_hand = seat_view(load(app, broken["id"]).state, "shadow")["hand"]
    choose = bots.choose

    def choose_or_fail(level: str, view: Any, rng: random.Random) -> Any:
        if view["hand"] == broken_hand:
            raise RuntimeError("the computer is confused")
        return choose(level, view, rng)

    monkeypatch.setattr(computer.bots, "choose", choose_or_fail)
    moves = ComputerMoves()
    with app.app_context(), caplog.at_level(logging.ERROR, logger="service.computer"):
        handled = worker.run(once=True, moves=moves)
        assert handled == 2  # both invitations went out
        assert moves.made == 1
        assert to_act(db.session.get(Game, working["id"]).state) == ["keeper"]
        assert to_act(db.session.get(Game, broken["id"]).state) == ["keeper", "shadow"]
        assert moves() == 0  # not tried again at once
    failures = [r for r in caplog.records if "the computer's move" in r.getMessage()]
    assert len(failures) == 1 and "the computer is confused" in caplog.text
    assert len(smtp_server.handler.received) == 2


class RaisingLevel:
    """A level whose code fails on every move."""

    def choose(self, view: Any, rng: random.Random) -> Any:
        raise ZeroDivisionError("a fault in the level's code")


class IllegalLevel:
    """A level that answers a move the rules refuse."""

    def choose(self, view: Any, rng: random.Random) -> Any:
        return {"play": "7H"} if view["phase"] == "play" else {view["phase"]: view["hand"][:1]}


@pytest.mark.parametrize("broken", [RaisingLevel, IllegalLevel], ids=["raises", "illegal"])
def test_a_level_that_fails_still_answers_with_a_legal_move(
    app: Flask, client: FlaskClient, against_computer, monkeypatch, caplog, broken: type
) -> None:
    """The same view and seed fail the same way at every try: the game would wait for good.
    The computer plays a move of the random level instead, and the log says so."""
    monkeypatch.setitem(bots.LEVELS, "hard", broken)
    game = against_computer(level="hard", computer="keeper")
    with caplog.at_level(logging.ERROR, logger="service.computer"):
        assert computer_moves(app) == 1  # its half of the exchange
        person_moves(client, game["token"], random.Random(1))  # Kim's: the computer leads
        assert computer_moves(app) >= 1
    assert to_act(load(app, game["id"]).state) == ["shadow"]
    failed = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert failed
    assert all(f"game {game['id']}: the computer (hard) could not" in text for text in failed)


@pytest.fixture
def refuse_moves(app: Flask) -> Iterator[Callable[[int], None]]:
    """Have PostgreSQL refuse every move of a game, as a constraint refuses a value: a fault
    of the database's, not an outage. The trigger is dropped afterwards."""

    def refuse(game_id: int) -> None:
        with app.app_context(), transaction():
            db.session.execute(
                text(
                    "CREATE FUNCTION refuse_move() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                    f"IF NEW.game_id = {game_id} THEN RAISE EXCEPTION 'refused' "
                    "USING ERRCODE = 'check_violation'; END IF; RETURN NEW; END $$"
                )
            )
            db.session.execute(
                text(
                    "CREATE TRIGGER refuse_move BEFORE INSERT ON events "
                    "FOR EACH ROW EXECUTE FUNCTION refuse_move()"
                )
            )

    yield refuse
    with app.app_context(), transaction():
        db.session.execute(text("DROP TRIGGER IF EXISTS refuse_move ON events"))
        db.session.execute(text("DROP FUNCTION IF EXISTS refuse_move()"))


def test_a_move_the_database_refuses_stops_neither_the_other_games_nor_the_mail(
    app: Flask, against_computer, refuse_moves, smtp_server, caplog
) -> None:
    refused = against_computer(seed=1)
    working = against_computer(seed=2)
    refuse_moves(refused["id"])
    moves = ComputerMoves()
    with app.app_context(), caplog.at_level(logging.ERROR, logger="service.computer"):
        assert worker.run(once=True, moves=moves) == 2  # both invitations went out
        assert moves.made == 1
        assert to_act(db.session.get(Game, working["id"]).state) == ["keeper"]
        assert db.session.get(Game, refused["id"]).version == 0
        assert moves() == 0  # not tried again at once
    failures = [r for r in caplog.records if "the computer's move" in r.getMessage()]
    assert len(failures) == 1 and "refused" in caplog.text
    assert len(smtp_server.handler.received) == 2


def test_a_rematch_against_the_computer_starts_at_once_with_the_roles_swapped(
    app: Flask, client: FlaskClient, against_computer
) -> None:
    game = against_computer(level="random", days_per_move=4)
    played_against_computer(app, game["id"])
    over = [m for m in outbox(app) if m.kind == "game_over"]
    assert len(over) == 1 and f"{BASE_URL}/rematch/" in over[0].text_body
    rematch = f"/rematch/{game['token']}"
    offer = client.get(rematch).get_data(as_text=True)
    assert "Play the computer (random) again" in offer
    answers = [client.post(rematch) for _ in range(2)]
    assert {response.status_code for response in answers} == {303}
    assert answers[0].location == answers[1].location  # asking twice gives the same game
    token = answers[0].location.rsplit("/", 1)[1]
    with app.app_context():
        kim = player_for(token)
        assert kim.seat == "shadow" and kim.email == KIM
        assert (kim.game.status, kim.game.days_per_move) == ("active", 4)
        assert kim.game.player("keeper").computer_level == "random"
    assert "has started" in client.get(rematch).get_data(as_text=True)
    invitations = [m for m in outbox(app) if m.kind == "invitation"]
    assert [m.recipient for m in invitations] == [KIM, KIM]


@pytest.fixture
def hard_level_broken(monkeypatch) -> None:
    """The computer's moves fail in games of its hard level: its choice raises, and so does
    that of the random level it then falls back to; the other levels play."""
    choose = bots.choose

    def broken_hard_level(level: str, view: Any, rng: random.Random) -> Any:
        if level in ("hard", "random"):
            raise RuntimeError("the hard level is broken")
        return choose(level, view, rng)

    monkeypatch.setattr(computer.bots, "choose", broken_hard_level)


@pytest.mark.both_backends
def test_moves_that_keep_failing_do_not_hold_up_the_games_behind_them(
    app: Flask, against_computer, hard_level_broken, monkeypatch, caplog
) -> None:
    broken = [against_computer(level="hard", seed=seed)["id"] for seed in range(3)]
    working = against_computer(level="easy", seed=9)["id"]  # waited least: read last
    monkeypatch.setattr(computer, "BATCH", 2)  # the failing games fill the first batch
    moves = ComputerMoves()
    with app.app_context(), caplog.at_level(logging.CRITICAL, logger="service.computer"):
        assert moves() == 1
        assert to_act(db.session.get(Game, working).state) == ["keeper"]
        assert all(db.session.get(Game, game_id).version == 0 for game_id in broken)


def test_a_pass_stops_making_moves_when_its_time_is_spent(app: Flask, against_computer) -> None:
    waiting = [against_computer(seed=seed)["id"] for seed in range(3)]
    moves = ComputerMoves(budget=0)  # spent by the first move: one move a pass
    with app.app_context():
        assert [moves(), moves(), moves(), moves()] == [1, 1, 1, 0]
        assert all(to_act(db.session.get(Game, game_id).state) == ["keeper"] for game_id in waiting)


def test_a_failure_is_forgotten_once_its_wait_is_over(
    app: Flask, against_computer, hard_level_broken, caplog
) -> None:
    broken = against_computer(level="hard", seed=1)["id"]
    now = [0.0]
    moves = ComputerMoves(retry_after=60, clock=lambda: now[0])
    with app.app_context(), caplog.at_level(logging.CRITICAL, logger="service.computer"):
        assert (moves(), moves.held_back) == (0, 1)
        with transaction():
            games.cancel_game(broken, "ada")  # its seat is never due again
        now[0] = 59.0
        assert (moves(), moves.held_back) == (0, 1)
        now[0] = 60.0
        assert (moves(), moves.held_back) == (0, 0)


def test_the_page_says_so_when_the_computer_is_late(
    app: Flask, client: FlaskClient, against_computer
) -> None:
    """With no worker passing, the computer never moves: the page says so, not only that it
    updates by itself, once the move has waited past the delay and two minutes more; the
    page kept from before says it too."""
    game = against_computer(computer="keeper")
    person_moves(client, game["token"], random.Random(1))  # Kim's half: the computer owes
    page = f"/play/{game['token']}"
    soon = client.get(page).get_data(as_text=True)
    assert 'id="computer-late"' in soon  # for the script to show when the time comes
    assert re.search(r'<p [^>]*id="computer-late"[^>]* hidden', soon)
    with time_machine.travel(utcnow() + timedelta(seconds=app.config["BOT_DELAY_SECONDS"] + 121)):
        late = client.get(page).get_data(as_text=True)
    notice = re.search(r'<p [^>]*id="computer-late"[^>]*>([^<]*)</p>', late)
    assert notice and " hidden" not in notice.group(0), late
    assert "has not moved yet" in notice.group(1)
    computer_moves(app)
    moved = client.get(page).get_data(as_text=True)
    assert 'id="computer-late"' not in moved  # Kim's move now
