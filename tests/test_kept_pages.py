"""A kept move page is the page a fresh render gives, whatever changed since it was kept
(service/players/kept.py)."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import time_machine
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import update

from service import games, homes, notes
from service.links import player_for, token_for
from service.models import Game, db, utcnow
from service.unit_of_work import transaction

from .conftest import load_game
from .helpers import pick_action, random_move, statements_run
from .test_api import SEATS


def kept_count(app: Flask) -> int:
    return len(app.extensions["kept_pages"])


def assert_kept_as_rendered(app: Flask, client: FlaskClient, token: str, **headers: str) -> str:
    """The page now, kept or not, is the page rendered afresh; read again, it is kept and
    costs one statement. Returns the page."""
    path = f"/play/{token}"
    now = client.get(path, headers=headers)
    app.extensions["kept_pages"].clear()
    fresh = client.get(path, headers=headers)
    assert fresh.status_code == now.status_code == 200
    assert now.get_data(as_text=True) == fresh.get_data(as_text=True)
    with statements_run(app) as statements:
        again = client.get(path, headers=headers)
    assert len(statements) == 1, "\n\n".join(sql for sql, _ in statements)
    assert again.get_data(as_text=True) == fresh.get_data(as_text=True)
    return fresh.get_data(as_text=True)


def in_service(app: Flask, change: Callable[[], object]) -> None:
    with app.app_context(), transaction():
        change()


def test_a_page_read_again_is_kept_and_costs_one_statement(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game()
    path = f"/play/{game['keeper']}"
    first = client.get(path)
    assert kept_count(app) == 1
    with statements_run(app) as statements:
        second = client.get(path)
    assert len(statements) == 1
    assert second.status_code == 200
    assert second.get_data() == first.get_data()
    assert second.headers["Content-Type"] == first.headers["Content-Type"]


def test_each_seat_language_and_look_has_its_own_page(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game(look="classic")
    pages = {
        (seat, language): assert_kept_as_rendered(
            app, client, game[seat], **{"Accept-Language": language}
        )
        for seat in SEATS
        for language in ("en", "fr")
    }
    assert len(set(pages.values())) == 4
    assert 'lang="fr"' in pages["shadow", "fr"]


def test_a_page_in_its_players_language_keeps_it_on_its_links_whatever_the_browser(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """A player who chose French reads the page in French from an English browser too; its
    links to the rules and the front page then carry ``?lang=fr``, which they need not from
    a French browser. A page kept for one browser is not the other's."""
    token = make_game(keeper_language="fr")["keeper"]
    french = assert_kept_as_rendered(app, client, token, **{"Accept-Language": "fr"})
    english = assert_kept_as_rendered(app, client, token, **{"Accept-Language": "en"})
    assert 'lang="fr"' in french and 'lang="fr"' in english
    assert "lang=fr" not in french
    assert 'href="/?lang=fr"' in english and "look=standard&amp;lang=fr" in english


def test_a_kept_page_follows_every_move_of_a_whole_game(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game(seed=11, days_per_move=5)
    rng = random.Random(11)
    while load_game(app, game["id"]).status == "active":
        for seat in SEATS:
            client.get(f"/play/{game[seat]}")  # kept before the move
        random_move(client, game, rng)
        for seat in SEATS:
            page = client.get(f"/play/{game[seat]}")
            app.extensions["kept_pages"].clear()
            assert page.get_data() == client.get(f"/play/{game[seat]}").get_data()
    assert load_game(app, game["id"]).status == "finished"
    # A closed game's page offers a rematch, which its key does not follow: never kept.
    app.extensions["kept_pages"].clear()
    client.get(f"/play/{game['keeper']}")
    assert kept_count(app) == 0


def test_what_changes_without_a_move_changes_the_kept_page(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """The opponent's vacation, the notes turned off, a language chosen, a deadline
    extended: none is a move, each shows on the page. A new home link gives the game a new
    link too: the page kept under the old one is no longer served."""
    game = make_game(days_per_move=5)
    token = game["keeper"]
    path = f"/play/{token}"
    shown = [assert_kept_as_rendered(app, client, token)]

    def changed(change: Callable[[], object]) -> str:
        client.get(path)  # kept before the change
        in_service(app, change)
        page = assert_kept_as_rendered(app, client, token)
        assert page != shown[-1]
        shown.append(page)
        return page

    assert "is on vacation until" in changed(lambda: homes.take_vacation("sam@example.com", 2))
    assert "is on vacation until" not in changed(lambda: homes.end_vacation("sam@example.com"))
    with app.app_context():
        keeper = player_for(token)
        assert keeper is not None
        assert notes.from_opponent(keeper) == []
    changed(lambda: games.turn_notes_off(_player(token)))
    changed(lambda: games.extend_deadline(game["id"], 2, "root"))
    assert 'lang="fr"' in changed(lambda: homes.set_language("kim@example.com", "fr"))
    client.get(path)
    assert kept_count(app) >= 1
    in_service(app, lambda: homes.replace_home_link("kim@example.com"))
    assert client.get(path).status_code == 404


def test_the_opponents_vacation_alone_changes_the_kept_page(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """A vacation of a player who owes no move changes neither the game nor its deadline."""
    game = make_game(seed=5, days_per_move=5)
    rng = random.Random(5)
    while True:
        turns = {s: client.get(f"/api/play/{game[s]}").get_json()["your_turn"] for s in SEATS}
        if sum(turns.values()) == 1:
            break
        random_move(client, game, rng)
    mover = next(seat for seat in SEATS if turns[seat])
    waiting = next(seat for seat in SEATS if not turns[seat])
    email = {"keeper": "kim@example.com", "shadow": "sam@example.com"}[waiting]
    before = load_game(app, game["id"])
    client.get(f"/play/{game[mover]}")
    in_service(app, lambda: homes.take_vacation(email, 2))
    after = load_game(app, game["id"])
    assert (after.version, after.deadline) == (before.version, before.deadline)
    assert "is on vacation until" in assert_kept_as_rendered(app, client, game[mover])


def test_a_page_served_under_a_path_prefix_links_under_it(
    app: Flask, client: FlaskClient, make_game
) -> None:
    token = make_game()["keeper"]
    assert client.get(f"/play/{token}").status_code == 200
    prefixed = client.get(f"/play/{token}", base_url="http://localhost/games")
    assert f'action="/games/play/{token}/language"' in prefixed.get_data(as_text=True)


def test_the_deadline_in_words_moves_with_the_time(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game(days_per_move=5)
    token = game["shadow"]
    start = utcnow()
    with time_machine.travel(start, tick=False):
        early = assert_kept_as_rendered(app, client, token)
    with time_machine.travel(start + timedelta(days=3), tick=False):
        later = assert_kept_as_rendered(app, client, token)
    with time_machine.travel(start + timedelta(days=6), tick=False):
        late = assert_kept_as_rendered(app, client, token)
    assert len({early, later, late}) == 3
    assert "Your move and Kim&#39;s were due" in late  # both owe the opening exchange


def test_a_replaced_link_finds_no_kept_page(app: Flask, client: FlaskClient, make_game) -> None:
    game = make_game()
    old = game["keeper"]
    assert client.get(f"/play/{old}").status_code == 200
    assert kept_count(app) == 1
    with app.app_context(), transaction():
        player = _player(old)
        games.rotate_link(player.id, "root")
        new = token_for(player)
    assert client.get(f"/play/{old}").status_code == 404
    assert "Game" in assert_kept_as_rendered(app, client, new)


def test_a_return_match_page_is_not_kept(app: Flask, client: FlaskClient) -> None:
    with app.app_context(), transaction():
        first = games.create_match(
            games.Seating("kim@example.com", "Kim"), games.Seating("sam@example.com", "Sam")
        )
        token = token_for(first.player("keeper"))
    assert client.get(f"/play/{token}").status_code == 200
    assert kept_count(app) == 0


def test_the_pages_kept_are_bounded(app: Flask, client: FlaskClient, make_game) -> None:
    pages = app.extensions["kept_pages"]
    app.extensions["kept_pages"] = type(pages)(size=2)
    tokens = [make_game(seed=seed)["keeper"] for seed in (1, 2, 3)]
    for token in tokens:
        assert client.get(f"/play/{token}").status_code == 200
    assert kept_count(app) == 2


def _player(token: str) -> Any:
    player = player_for(token)
    assert player is not None
    return player


def test_a_reminder_and_the_day_before_it_change_the_kept_page(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """Neither is a move: the day passing offers the reminder, and sending it takes the offer
    away; the page kept before each is not the page read after."""
    game = make_game()
    keeper = client.get(f"/api/play/{game['keeper']}").get_json()
    move = {"version": keeper["version"], **pick_action(keeper, random.Random(1))}
    assert client.post(f"/api/play/{game['keeper']}", json=move).status_code == 200
    soon = assert_kept_as_rendered(app, client, game["keeper"])
    assert "You may remind Sam" in soon and "Send the reminder" not in soon
    with app.app_context(), transaction():  # the last move, two days back: same version
        since = utcnow() - timedelta(days=2)
        db.session.execute(update(Game).where(Game.id == game["id"]).values(updated_at=since))
    ready = assert_kept_as_rendered(app, client, game["keeper"])
    assert "Send the reminder" in ready
    in_service(app, lambda: games.remind_opponent(_player(game["keeper"]).id, move["version"] + 1))
    done = assert_kept_as_rendered(app, client, game["keeper"])
    assert "Sam is reminded of the move they owe." in done and "Send the reminder" not in done


def test_the_deadline_passing_takes_the_reminder_off_the_kept_page(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """Not a move either: the page kept with the offer before the deadline is not the page
    read after it, which says the move is late."""
    game = make_game(days_per_move=3)
    keeper = client.get(f"/api/play/{game['keeper']}").get_json()
    move = {"version": keeper["version"], **pick_action(keeper, random.Random(1))}
    assert client.post(f"/api/play/{game['keeper']}", json=move).status_code == 200
    start = utcnow()
    with time_machine.travel(start + timedelta(days=2), tick=False):
        ready = assert_kept_as_rendered(app, client, game["keeper"])
        assert "Send the reminder" in ready
    with time_machine.travel(start + timedelta(days=3, minutes=1), tick=False):
        late = assert_kept_as_rendered(app, client, game["keeper"])
    assert "Send the reminder" not in late and "the game ends by timeout." in late
