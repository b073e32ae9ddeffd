"""Canary: with every hidden card known, nothing a player can fetch names one of them."""

from __future__ import annotations

import random

import pytest
from flask.testing import FlaskClient

from service.links import home_token
from service.rules import SEATS, other

from .conftest import load_game
from .helpers import MoveForm, pick_action
from .secrecy import hidden_cards, leaks

SEAT_NAMES = {"keeper": "kim", "shadow": "sam"}  # the players of make_game
# Long whole-game tests whose subject does not depend on the database: PostgreSQL only.
pytestmark = pytest.mark.parametrize("app", ["postgres"], indirect=True)


def responses(client: FlaskClient, token: str, view: dict, home: str = "") -> list[str]:
    """Everything the player can obtain now: pages, JSON, the home page of their address,
    and the errors of bad requests.

    Every probe is refused (stale, illegal or malformed), so none changes the game.
    """
    own = view["hand"][0] if view["hand"] else "1H"
    bodies = [
        client.get(f"/play/{token}"),
        client.get(f"/api/play/{token}"),
        client.post(f"/api/play/{token}", json={"version": view["version"] - 1, "play": own}),
        client.post(f"/api/play/{token}", json={"version": view["version"], "swap": [own] * 5}),
        client.post(f"/api/play/{token}", json={"version": view["version"], "exchange": [own] * 4}),
        client.post(f"/api/play/{token}", data="{", content_type="application/json"),
        client.post(
            f"/play/{token}", data={"version": view["version"] - 1, "kind": "play", "play": own}
        ),
        client.post(
            f"/play/{token}", data={"version": view["version"], "kind": "swap", "cards": [own]}
        ),
        client.post(f"/play/{token}", data={"version": "x"}),
        client.get(f"/play/{token}x"),
        client.get(f"/play/{token}/review"),
        client.get(f"/play/{token}/replay.json"),
        client.get(f"/api/play/{token}x"),
        client.get(f"/api/play/{token}/notes"),
        *([client.get(f"/me/{home}")] if home else []),
    ]
    return [response.get_data(as_text=True) for response in bodies]


@pytest.mark.slow
def test_no_response_names_a_hidden_card(app, client, make_game) -> None:
    game = make_game(seed=2024)
    rng = random.Random(99)
    with app.app_context():
        homes = {seat: home_token(f"{name}@example.com") for seat, name in SEAT_NAMES.items()}
    tokens = (game["keeper"], game["shadow"], *homes.values())
    checked = 0
    while True:
        state = load_game(app, game["id"]).state
        views = {seat: client.get(f"/api/play/{game[seat]}").get_json() for seat in SEATS}
        if state["phase"] == "over":
            break
        for seat in SEATS:
            secret = hidden_cards(state, seat)
            probes = responses(client, game[seat], views[seat], homes[seat])
            for probe, body in enumerate(probes):
                found = leaks(body, secret, tokens)
                assert not found, f"{seat} sees {found} in probe {probe}:\n{body}"
                checked += 1
        assert load_game(app, game["id"]).state == state  # the probes changed nothing
        seat = rng.choice([s for s in SEATS if views[s]["your_turn"]])
        body = {"version": views[seat]["version"], **pick_action(views[seat], rng)}
        assert client.post(f"/api/play/{game[seat]}", json=body).status_code == 200
    assert checked > 500


def test_the_canary_catches_a_leak(app, client, make_game) -> None:
    """The checker itself: the opponent's hand, written any way, is found."""
    game = make_game(seed=1)
    state = load_game(app, game["id"]).state
    secret = hidden_cards(state, "keeper")
    card = sorted(state["hands"][other("keeper")])[0]
    from service.game_text import card_name

    assert leaks(f"<span>{card_name(card)}</span>", secret)
    assert leaks(f'{{"hand": ["{card}"]}}', secret)
    # Inside a random token (a CSRF token, a signature) the same letters are chance.
    assert not leaks(f'<input name="csrf_token" value="IjQ5Zm_{card}_Yz.aBc-9x">', secret)
    assert leaks(f'<input value="IjQ5ZmYzaBc9xQ2"> {card}', secret)
    page = client.get(f"/play/{game['keeper']}").get_data(as_text=True)
    assert MoveForm(page).checkboxes  # the page under test does show the player's own cards
    assert not leaks(page, secret, (game["keeper"],))


def _with_state(app, game_id: int, state: dict) -> None:
    """Put ``state`` in the game's row as it is, its version unchanged, and forget the move
    pages kept: a page is kept by the version, so one kept would be shown again as it was."""
    from service.models import Game, db
    from service.players.kept import kept_pages

    with app.app_context():
        game = db.session.get(Game, game_id)
        game.state = state
        db.session.commit()
        kept_pages().clear()


def test_the_twin_comparison_sees_every_response(app, client, make_game) -> None:
    """The checker of the test below: a twin that changes the player's own hand changes the
    page and the JSON, so a twin that changes the opponent's would be seen too."""
    from service.rules import sort_cards

    game = make_game(seed=31)
    state = load_game(app, game["id"]).state
    view = client.get(f"/api/play/{game['keeper']}").get_json()
    mine, aside = state["hands"]["keeper"][0], state["aside"][0]
    twin = {
        **state,
        "hands": {
            **state["hands"],
            "keeper": sort_cards([aside if c == mine else c for c in state["hands"]["keeper"]]),
        },
        "aside": [mine if c == aside else c for c in state["aside"]],
    }
    original = responses(client, game["keeper"], view)
    _with_state(app, game["id"], twin)
    swapped = responses(client, game["keeper"], view)
    _with_state(app, game["id"], state)
    assert swapped[0] != original[0]  # the move page
    assert swapped[1] != original[1]  # the JSON view


@pytest.mark.slow
def test_responses_do_not_depend_on_hidden_cards(app, client, make_game) -> None:
    """Swap a card of the opponent's hand with one set aside: the player sees no difference."""
    from service.rules import sort_cards

    game = make_game(seed=31)
    rng = random.Random(31)
    compared = 0
    for step in range(300):
        state = load_game(app, game["id"]).state
        if state["phase"] == "over":
            break
        views = {seat: client.get(f"/api/play/{game[seat]}").get_json() for seat in SEATS}
        if step % 4 == 0:
            for seat in SEATS:
                opponent = other(seat)
                given = {card for t in state["transfers"] for card in t[seat]}
                movable = sorted(set(state["hands"][opponent]) - given)
                if not movable:
                    continue
                held, aside = rng.choice(movable), rng.choice(state["aside"])
                twin = {
                    **state,
                    "hands": {
                        seat: state["hands"][seat],
                        opponent: sort_cards(
                            [aside if c == held else c for c in state["hands"][opponent]]
                        ),
                    },
                    "aside": [held if c == aside else c for c in state["aside"]],
                }
                original = responses(client, game[seat], views[seat])
                _with_state(app, game["id"], twin)
                swapped = responses(client, game[seat], views[seat])
                _with_state(app, game["id"], state)
                assert swapped == original, (
                    f"{seat}'s responses reveal where {held} and {aside} are"
                )
                compared += 1
        seat = rng.choice([s for s in SEATS if views[s]["your_turn"]])
        body = {"version": views[seat]["version"], **pick_action(views[seat], rng)}
        assert client.post(f"/api/play/{game[seat]}", json=body).status_code == 200
    assert compared > 20


def _emails(app, game_id: int, seat: str) -> list[tuple[str, str, str] | None]:
    """Every email of ``seat``'s player in the game, as it would be written now."""
    from sqlalchemy import select

    from service.mail.kinds import written
    from service.models import OutboxMessage, Player, db

    with app.app_context():
        player = db.session.scalars(
            select(Player).where(Player.game_id == game_id, Player.seat == seat)
        ).one()
        messages = db.session.scalars(
            select(OutboxMessage).where(OutboxMessage.player_id == player.id)
        ).all()
        emails = [written(message) for message in messages]
        return [email and (email.subject, email.text, email.html) for email in emails]


def test_responses_do_not_depend_on_the_opponents_choice(app, client, make_game) -> None:
    """Once the Shadow has chosen the card to give, swap it with another of the Shadow's hand
    or with one set aside: the Keeper sees no difference, on the page, in the JSON or in the
    emails."""
    from service.rules import sort_cards

    game = make_game(seed=31)
    shadow = client.get(f"/api/play/{game['shadow']}").get_json()
    chosen = shadow["hand"][0]
    body = {"version": shadow["version"], "exchange": [chosen]}
    assert client.post(f"/api/play/{game['shadow']}", json=body).status_code == 200
    state = load_game(app, game["id"]).state
    assert state["pending"]["shadow"] == [chosen]
    held, aside = state["hands"]["shadow"][0], state["aside"][0]
    twins = [
        {
            **state,
            "hands": {
                **state["hands"],
                "shadow": sort_cards(
                    [chosen if c == held else c for c in state["hands"]["shadow"]]
                ),
            },
            "pending": {**state["pending"], "shadow": [held]},
        },
        {
            **state,
            "aside": [chosen, *state["aside"][1:]],
            "pending": {**state["pending"], "shadow": [aside]},
        },
    ]
    view = client.get(f"/api/play/{game['keeper']}").get_json()
    original = responses(client, game["keeper"], view), _emails(app, game["id"], "keeper")
    assert original[1]  # the Keeper has emails of the game to compare
    for twin in twins:
        _with_state(app, game["id"], twin)
        seen = responses(client, game["keeper"], view), _emails(app, game["id"], "keeper")
        _with_state(app, game["id"], state)
        assert seen == original
