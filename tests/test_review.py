"""The review of a closed game and its replay file: every card shown, only once it is over."""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.games import cancel_game, export_game, resign
from service.models import Game, db
from service.rules import SEATS, run
from service.unit_of_work import transaction

from .conftest import load_game
from .factories import written
from .helpers import Spoken


def shown_cards(html: str) -> set[str]:
    """The cards the page draws, by their class (``suit-H``) and rank."""
    return {
        f"{rank}{suit}"
        for suit, rank in re.findall(
            r'class="card look-\w+ suit-(\w)[^"]*">\s*<span class="face" aria-hidden="true">'
            r'<span class="rank">(\d)',
            html,
        )
    }


def finished(client: FlaskClient, make_game: Any, seed: int = 11) -> dict[str, Any]:
    game = make_game(seed=seed)
    written(client.application, game["id"], seed)
    return game


def test_a_finished_game_is_reviewed_step_by_step(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = finished(client, make_game)
    state = load_game(app, game["id"]).state
    for seat in SEATS:
        response = client.get(f"/play/{game[seat]}/review")
        assert response.status_code == 200
        html = response.get_data(as_text=True)
        steps = re.findall(r'<li class="step step-(\w+)" id="step-\d+">', html)
        assert steps.count("deal") == len(state["deals"])
        assert steps.count("trick") == len(state["history"])
        # Each round's deal shows both hands and the cards set aside, face up.
        for deal in state["deals"]:
            assert set(deal["keeper"] + deal["shadow"] + deal["aside"]) <= shown_cards(html)
        assert "Round 1: the deal" in html and "Round 1, trick 10" in html
        assert "Round 1 over:" in html
    with app.app_context():
        assert db.session.get_one(Game, game["id"]).version == load_game(app, game["id"]).version


def test_the_review_reads_french(client: FlaskClient, make_game) -> None:
    game = make_game(seed=12, keeper_language="fr")
    written(client.application, game["id"], 12)
    html = client.get(f"/play/{game['keeper']}/review").get_data(as_text=True)
    assert "Manche 1\u00a0: la donne" in html
    assert "Votre main" in html


@pytest.mark.parametrize(("language", "words"), [("en", " of hearts"), ("fr", " de cœur")])
def test_the_review_says_its_cards_in_words(
    client: FlaskClient, make_game, language: str, words: str
) -> None:
    """Its sentences ("You led 6♥; Sam played 7♥") write cards as symbols for the eye; a
    screen reader hears each card's name and meets no suit symbol."""
    game = make_game(seed=12, keeper_language=language)
    written(client.application, game["id"], 12)
    html = client.get(f"/play/{game['keeper']}/review").get_data(as_text=True)
    steps = html.split('<ol class="steps">', 1)[1].split("</ol>", 1)[0]
    assert "♥" in re.sub(r"<[^>]+>", "", steps)  # as the eye reads it
    said = Spoken(steps).text
    assert words in said
    assert not re.search("[♥♦♣♠]", said), re.search(".{40}[♥♦♣♠].{40}", said)


def test_an_open_game_has_no_review_nor_replay_file(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game(seed=13)
    written(app, game["id"], 13, until=lambda view: view["trick"] >= 4)
    before = load_game(app, game["id"])
    for path in ("review", "replay.json"):
        response = client.get(f"/play/{game['keeper']}/{path}")
        assert response.status_code == 409
        text = response.get_data(as_text=True)
        assert "opens once the game is over" in text
        # Nothing of the opponent's hand or the cards set aside on the way.
        hidden = set(before.state["hands"]["shadow"]) | set(before.state["aside"])
        assert not hidden & shown_cards(text)
        assert not any(re.search(rf"\b{card}\b", text) for card in hidden)
    assert load_game(app, game["id"]).version == before.version


def test_a_cancelled_game_is_reviewed_up_to_where_it_stopped(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game(seed=14)
    written(app, game["id"], 14, until=lambda view: view["trick"] >= 3)
    with app.app_context(), transaction():
        cancel_game(game["id"], "admin")
    html = client.get(f"/play/{game['shadow']}/review").get_data(as_text=True)
    state = load_game(app, game["id"]).state
    assert html.count('class="step step-trick"') == len(state["history"])


def test_the_review_says_how_a_game_ended_early(app: Flask, client: FlaskClient, make_game) -> None:
    game = make_game(seed=18)
    written(app, game["id"], 18, until=lambda view: view["trick"] >= 3)
    with app.app_context(), transaction():
        found = db.session.get_one(Game, game["id"])
        resign(found.player("shadow").id, found.version)
    kept = client.get(f"/play/{game['keeper']}/review").get_data(as_text=True)
    gave_up = client.get(f"/play/{game['shadow']}/review").get_data(as_text=True)
    assert "Sam resigned: you win." in kept
    assert "You resigned: Kim wins." in gave_up
    # Not a win on the track: the game stopped before its end.
    assert "track cards turned" not in kept + gave_up
    cancelled = make_game(seed=19)
    written(app, cancelled["id"], 19, until=lambda view: view["trick"] >= 2)
    with app.app_context(), transaction():
        cancel_game(cancelled["id"], "admin")
    html = client.get(f"/play/{cancelled['keeper']}/review").get_data(as_text=True)
    assert "The game was cancelled by the server&#39;s admins." in html


def test_a_card_led_when_the_game_stopped_is_the_last_step(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game(seed=23)
    written(app, game["id"], 23, until=lambda view: view["trick"] >= 3 and bool(view["table"]))
    with app.app_context(), transaction():
        found = db.session.get_one(Game, game["id"])
        (lead,) = found.state["table"]
        resign(found.player(lead["seat"]).id, found.version)
    state = load_game(app, game["id"]).state
    html = client.get(f"/play/{game[lead['seat']]}/review").get_data(as_text=True)
    steps = html.split('<li class="step ')
    # The deal, the exchanges and swaps, the tricks, then the card led.
    assert len(steps) - 1 == 1 + len(state["transfers"]) + len(state["history"]) + 1
    last = steps[-1]
    assert last.startswith(f'step-lead" id="step-{len(steps) - 1}">')
    assert f"Round 1, trick {state['trick']}" in last
    assert "You led" in last
    # The card led has left the hand that led it.
    assert lead["card"] not in shown_cards(last.split("Kim&#39;s hand")[0].split("Your hand")[1])
    assert set(state["hands"]["keeper"]) | set(state["hands"]["shadow"]) <= shown_cards(last)


def test_the_replay_file_replays_to_the_game(app: Flask, client: FlaskClient, make_game) -> None:
    game = finished(client, make_game, seed=15)
    response = client.get(f"/play/{game['shadow']}/replay.json")
    assert response.status_code == 200
    assert response.headers["Content-Disposition"] == (
        f'attachment; filename="split-mind-game-{game["id"]}.json"'
    )
    outcome = run(response.get_json())
    state = load_game(app, game["id"]).state
    assert outcome.error is None
    assert outcome.state["history"] == state["history"]
    assert outcome.state["winner"] == state["winner"]
    with app.app_context():
        assert response.get_json() == export_game(db.session.get_one(Game, game["id"]))


def test_the_finished_page_and_home_lead_to_the_review(client: FlaskClient, make_game) -> None:
    game = finished(client, make_game, seed=16)
    page = client.get(f"/play/{game['keeper']}").get_data(as_text=True)
    assert f'href="/play/{game["keeper"]}/review"' in page
    live = make_game(seed=17)
    assert "/review" not in client.get(f"/play/{live['keeper']}").get_data(as_text=True)


def test_a_game_waiting_for_its_players_leads_to_no_review(client: FlaskClient, make_game) -> None:
    waiting = make_game(seed=20, waiting=True)
    page = client.get(f"/play/{waiting['keeper']}").get_data(as_text=True)
    assert "/review" not in page
    # Nobody owes a move yet: the page says the game has not started, not whom it waits on.
    assert "This game has not started: it starts once both players have joined." in page
    assert "Waiting for Sam" not in page
    assert client.get(f"/play/{waiting['keeper']}/review").status_code == 409


def test_a_bad_link_has_no_review(client: FlaskClient) -> None:
    assert client.get("/play/not-a-token/review").status_code == 404
    assert client.get("/play/not-a-token/replay.json").status_code == 404
