"""The move page: whole games played by posting its forms, and precise refusals."""

from __future__ import annotations

import html as html_text
import random
import re
from datetime import timedelta

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service import games
from service.links import home_token, player_for
from service.models import Game, OutboxMessage, db, utcnow
from service.players import routes
from service.players.annotations import time_left
from service.rules import CHOICE_PHASES, SEATS, TRICKS_PER_ROUND, Variant, apply
from service.unit_of_work import transaction

from .conftest import load_game
from .factories import apply_moves, planned_moves
from .helpers import (
    MoveForm,
    Spoken,
    ask_for_game,
    csrf_token,
    error_text,
    form_data,
    page_action,
    pick_action,
    redeal,
    write_queued,
)


def page(client: FlaskClient, token: str) -> str:
    response = client.get(f"/play/{token}")
    assert response.status_code == 200
    return response.get_data(as_text=True)


def api_view(client: FlaskClient, token: str) -> dict:
    return client.get(f"/api/play/{token}").get_json()


@pytest.mark.both_backends
@pytest.mark.slow
def test_a_whole_game_through_the_pages(app, client, make_game) -> None:
    game = make_game(seed=21)
    rng = random.Random(5)
    for _ in range(200):
        views = {seat: api_view(client, game[seat]) for seat in SEATS}
        if views["keeper"]["phase"] == "over":
            break
        seat = rng.choice([s for s in SEATS if views[s]["your_turn"]])
        form = MoveForm(page(client, game[seat]))
        action = pick_action(views[seat], rng)
        response = client.post(f"/play/{game[seat]}", data=form_data(form, action))
        assert response.status_code == 303, error_text(response.get_data(as_text=True))
        assert response.headers["Location"].endswith(f"/play/{game[seat]}")
    else:
        raise AssertionError("the game did not end")
    final = page(client, game["keeper"])
    winner = load_game(app, game["id"]).winner
    assert f"Game over: the {winner.capitalize()} wins." in final
    assert MoveForm(final).plays == [] and MoveForm(final).checkboxes == []


# Four rounds, the first without an exchange, a longer track, swaps of one card.
VARIANT = Variant(halfway=6, exchange_sizes=(0, 1, 2, 1), swap_size=1, track_length=14, rounds=4)


@pytest.mark.slow
def test_a_variant_game_through_the_pages(app: Flask, client: FlaskClient, make_game) -> None:
    game = make_game(seed=23)
    redeal(app, game["id"], VARIANT)
    first = page(client, game["keeper"])
    assert "round 1 of 4" in first and "0/14" in first
    assert first.count('class="track-card') == 14
    assert "At 14 the Shadow wins; after round 4 below 14 the Keeper wins." in first
    assert "<dd>1 of 10</dd>" in first and MoveForm(first).plays
    # Through the pages: every exchange and swap (the variant's sizes) and the last trick
    # of each round, whose end the page tells; the other tricks are played in between.
    state = load_game(app, game["id"]).state
    said: list[str] = []
    for seat, action in planned_moves(state, 3):
        after = apply(state, seat, action)
        told = len(after["rounds"]) > len(state["rounds"]) or after["phase"] == "over"
        last_trick = state["phase"] == "play" and state["trick"] == TRICKS_PER_ROUND
        if not (state["phase"] in CHOICE_PHASES or last_trick or told):
            apply_moves(app, game["id"], [(seat, action)])
        else:
            view = api_view(client, game[seat])
            assert view["track_length"] == 14 and view["last_round"] == 4
            form = MoveForm(page(client, game[seat]))
            response = client.post(f"/play/{game[seat]}", data=form_data(form, action))
            assert response.status_code == 303, error_text(response.get_data(as_text=True))
            html = page(client, game[seat])
            said.append(outcome(html))
        state = after
    assert load_game(app, game["id"]).state == state
    assert state["track"] <= 14
    # The move that ended each round said so, the last one too; the page says once that the
    # game is over.
    for number in range(1, len(state["rounds"]) + 1):
        assert any(line.startswith(f"Round {number} over: ") for line in said), number
    assert html.count("Game over") == 1
    write_queued(app)
    with app.app_context():
        endings = db.session.scalars(
            select(OutboxMessage.text_body).where(
                OutboxMessage.game_id == game["id"], OutboxMessage.kind == "game_over"
            )
        ).all()
    if state["winner"] == "keeper":
        assert len(state["rounds"]) == 4
        told = f"with the track at {state['track']} of 14 after 4 rounds."
    else:
        told = "with the track at 14."
    assert len(endings) == 2 and all(told in text for text in endings), endings


def test_only_legal_cards_are_offered(client, make_game) -> None:
    game = make_game(seed=9)
    rng = random.Random(4)
    for seat in SEATS:
        view = api_view(client, game[seat])
        client.post(
            f"/api/play/{game[seat]}", json={"version": view["version"], **pick_action(view, rng)}
        )
    # Keeper leads, then the Shadow's page offers only the cards the rules allow.
    keeper = api_view(client, game["keeper"])
    lead = next(move for move in keeper["legal"] if "name" not in move)
    client.post(f"/api/play/{game['keeper']}", json={"version": keeper["version"], **lead})
    shadow = api_view(client, game["shadow"])
    form = MoveForm(page(client, game["shadow"]))
    assert sorted(form.plays) == sorted(move["play"] for move in shadow["legal"])
    assert len(form.plays) + len(form.disabled) == len(shadow["hand"])


def test_elixir_leads_offer_a_named_suit(client, make_game) -> None:
    # Seed 3 deals the Keeper an elixir after the exchange below (checked, not assumed).
    for seed in range(40):
        game = make_game(seed=seed)
        keeper = api_view(client, game["keeper"])
        elixirs = [card for card in keeper["hand"] if card.endswith("S")]
        if len(elixirs) != 1:
            continue
        give = next(card for card in keeper["hand"] if not card.endswith("S"))
        client.post(f"/api/play/{game['keeper']}", json={"version": 0, "exchange": [give]})
        shadow = api_view(client, game["shadow"])
        rng = random.Random(seed)
        client.post(f"/api/play/{game['shadow']}", json={"version": 1, **pick_action(shadow, rng)})
        form = MoveForm(page(client, game["keeper"]))
        assert {f"{elixirs[0]}:{suit}" for suit in "HDC"} <= set(form.plays)
        response = client.post(
            f"/play/{game['keeper']}", data={**form.hidden, "play": f"{elixirs[0]}:D"}
        )
        assert response.status_code == 303
        table = api_view(client, game["shadow"])["table"]
        assert table == [{"seat": "keeper", "card": elixirs[0], "name": "D"}]
        return
    raise AssertionError("no seed in range dealt the Keeper exactly one elixir")


def test_illegal_submission_re_renders_with_the_rule(app, client, make_game) -> None:
    game = make_game()
    form = MoveForm(page(client, game["keeper"]))
    response = client.post(
        f"/play/{game['keeper']}", data={**form.hidden, "cards": form.checkboxes[:2]}
    )
    assert response.status_code == 422
    assert error_text(response.get_data(as_text=True)) == (
        "Give exactly 1 different card in the round 1 exchange."
    )
    assert load_game(app, game["id"]).version == 0


def test_stale_submission_re_renders_and_changes_nothing(app, client, make_game) -> None:
    game = make_game()
    rng = random.Random(1)
    for seat in SEATS:
        view = api_view(client, game[seat])
        client.post(
            f"/api/play/{game[seat]}", json={"version": view["version"], **pick_action(view, rng)}
        )
    old = MoveForm(page(client, game["keeper"]))
    lead = old.plays[0]
    assert (
        client.post(f"/play/{game['keeper']}", data={**old.hidden, "play": lead}).status_code == 303
    )
    before = load_game(app, game["id"])
    # The same form again, e.g. a second tap or the back button: stale, nothing applied.
    response = client.post(f"/play/{game['keeper']}", data={**old.hidden, "play": old.plays[-1]})
    assert response.status_code == 409
    assert error_text(response.get_data(as_text=True)) == (
        "This page was out of date: you had already moved, so nothing more was changed. "
        "Here is the game now."
    )
    after = load_game(app, game["id"])
    assert (after.version, after.state) == (before.version, before.state)
    # The re-rendered page shows the game as it now is: the lead was played, the Shadow answers.
    html = response.get_data(as_text=True)
    assert f'data-version="{after.version}"' in html
    assert "Waiting for Sam to play to your card." in html
    assert MoveForm(html).plays == [] and "version" not in MoveForm(html).hidden


def test_a_second_tap_that_leaves_the_player_to_move_blames_no_one_else(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """Completing the round 1 exchange, the Keeper leads at once: the same form tapped again
    is refused as their own move's, though it is their turn now. A form from before the
    opponent's move alone still names the opponent."""
    game = make_game()
    shadow = api_view(client, game["shadow"])
    body = {"version": 0, **pick_action(shadow, random.Random(1))}
    assert client.post(f"/api/play/{game['shadow']}", json=body).status_code == 200
    form = MoveForm(page(client, game["keeper"]))
    data = form_data(form, page_action(form, random.Random(2)))
    assert client.post(f"/play/{game['keeper']}", data=data).status_code == 303
    assert api_view(client, game["keeper"])["your_turn"]
    response = client.post(f"/play/{game['keeper']}", data=data)
    assert response.status_code == 409
    assert error_text(response.get_data(as_text=True)) == (
        "This page was out of date: you had already moved, so nothing more was changed. "
        "Here is the game now."
    )
    lead = MoveForm(page(client, game["keeper"]))
    response = client.post(f"/play/{game['keeper']}", data={**lead.hidden, "play": lead.plays[0]})
    assert response.status_code == 303
    answer = MoveForm(page(client, game["shadow"]))
    # The version before the Keeper led: only the opponent has moved since.
    stale = {**answer.hidden, "version": "2", "play": answer.plays[0]}
    response = client.post(f"/play/{game['shadow']}", data=stale)
    assert response.status_code == 409
    assert error_text(response.get_data(as_text=True)) == (
        "This page was out of date: Kim moved since it was loaded, so nothing was changed. "
        "Here is the game now."
    )
    assert load_game(app, game["id"]).version == 3


def test_second_half_of_an_exchange_is_not_stale(app, client, make_game) -> None:
    """Both players load the exchange at the same version; either may choose first."""
    game = make_game()
    keeper_form = MoveForm(page(client, game["keeper"]))
    shadow = api_view(client, game["shadow"])
    response = client.post(
        f"/api/play/{game['shadow']}", json={"version": 0, **pick_action(shadow, random.Random(1))}
    )
    assert response.status_code == 200
    response = client.post(
        f"/play/{game['keeper']}", data={**keeper_form.hidden, "cards": keeper_form.checkboxes[:1]}
    )
    if response.status_code == 422:  # the deal forces an elixir: give one
        elixir = next(card for card in keeper_form.checkboxes if card.endswith("S"))
        response = client.post(
            f"/play/{game['keeper']}", data={**keeper_form.hidden, "cards": [elixir]}
        )
    assert response.status_code == 303
    state = load_game(app, game["id"]).state
    assert state["phase"] == "play" and len(state["transfers"]) == 1


def test_cards_refused_to_give_are_tied_to_the_refusal_and_ticked_again(client, make_game) -> None:
    """Without the script the page takes any cards ticked: those the rules refuse come back
    ticked as sent, their group described by the refusal, to be changed, not chosen anew."""
    game = make_game(seed=5)  # the Shadow, dealt three elixirs, must give one
    sent = {"version": 0, "kind": "exchange", "cards": ["5H", "7H"]}
    response = client.post(f"/play/{game['shadow']}", data=sent)
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert error_text(html).startswith("Give exactly 1")
    assert '<fieldset aria-describedby="move-error">' in html
    for card in ("5H", "7H"):
        assert re.search(rf'<input type="checkbox" name="cards" value="{card}"[^>]* checked>', html)
    # A refusal about no field marks none.
    stale = client.post(f"/play/{game['shadow']}", data={**sent, "version": 9})
    assert stale.status_code == 409
    assert "<fieldset>" in stale.get_data(as_text=True)


def test_malformed_form_gets_400(app, client, make_game) -> None:
    game = make_game()
    for data in ({}, {"version": "x", "kind": "exchange"}, {"version": "0", "kind": "dance"},
                 {"version": "0", "kind": "play", "play": "9Z"},
                 {"version": "0", "kind": "exchange", "cards": ["9Z"]}):  # fmt: skip
        response = client.post(f"/play/{game['keeper']}", data=data)
        assert response.status_code == 400, data
        assert error_text(response.get_data(as_text=True))
    assert load_game(app, game["id"]).version == 0


def test_a_move_from_a_link_replaced_while_it_was_sent_is_not_found(
    app, client, make_game, monkeypatch
) -> None:
    """The link is read, then rotated by an admin before the move takes the game's lock: the
    move is refused as from any dead link, and the page is not shown."""
    game = make_game()
    form = MoveForm(page(client, game["keeper"]))
    validate = routes.MoveForm.validate

    def rotated_meanwhile(self, *args, **kwargs):
        with app.app_context(), transaction():
            games.rotate_link(player_for(game["keeper"]).id, "ada")
        return validate(self, *args, **kwargs)

    monkeypatch.setattr(routes.MoveForm, "validate", rotated_meanwhile)
    elixirs = [card for card in form.checkboxes if card.endswith("S")]
    cards = elixirs[:1] or form.checkboxes[:1]
    response = client.post(f"/play/{game['keeper']}", data={**form.hidden, "cards": cards})
    assert response.status_code == 404
    assert "Kim" not in response.get_data(as_text=True)
    assert load_game(app, game["id"]).version == 0


@pytest.mark.parametrize("version", [2**31, 2**63, 10**23, -(2**40)])
def test_a_version_no_game_can_have_is_stale_not_an_error(
    app, client, make_game, version: int
) -> None:
    game = make_game()
    form = MoveForm(page(client, game["keeper"]))
    data = {**form.hidden, "version": str(version), "cards": form.checkboxes[:1]}
    response = client.post(f"/play/{game['keeper']}", data=data)
    assert response.status_code == 409
    assert load_game(app, game["id"]).version == 0


def test_a_move_past_its_deadline_is_refused_as_late(app, client, make_game) -> None:
    """Until the sweep ends the game by timeout, the page still shows it in play: a move
    sent from it is refused for its deadline, in the page's language."""
    game = make_game(seed=3, days_per_move=3)
    with app.app_context(), transaction():
        db.session.get_one(Game, game["id"]).deadline = utcnow() - timedelta(hours=1)
    form = MoveForm(page(client, game["keeper"]))
    data = form_data(form, page_action(form, random.Random(1)))
    response = client.post(f"/play/{game['keeper']}", data=data)
    assert response.status_code == 409
    assert error_text(response.text) == (
        "The deadline of the move owed has passed: the game ends by timeout, and takes no "
        "more moves."
    )
    french = client.post(f"/play/{game['keeper']}", data=data, headers={"Accept-Language": "fr"})
    assert error_text(french.text) == (
        "Le délai du coup attendu est dépassé\u00a0: la partie se termine par dépassement du "
        "temps et n’accepte plus de coups."
    )
    assert load_game(app, game["id"]).version == 0


def test_bad_links_get_a_plain_404(client, make_game) -> None:
    game = make_game()
    for bad in ("x", game["keeper"][:-3] + "abc", game["keeper"] + "."):
        response = client.get(f"/play/{bad}")
        assert response.status_code == 404
        body = response.get_data(as_text=True)
        assert "There is nothing at this address." in body
        assert "Kim" not in body and "Game" not in body
        assert client.post(f"/play/{bad}", data={"version": "0"}).status_code == 404


def test_waiting_player_sees_what_the_opponent_owes(client, make_game) -> None:
    game = make_game()
    keeper = api_view(client, game["keeper"])
    client.post(
        f"/api/play/{game['keeper']}", json={"version": 0, **pick_action(keeper, random.Random(3))}
    )
    html = page(client, game["keeper"])
    assert "Waiting for Sam to" in html and "choose the cards to give you" in html
    assert "You are giving" in html


def deadline_line(html: str) -> str:
    found = re.search(r'<p class="deadline">(.*?) <time', html)
    assert found, "the page shows a deadline"
    return html_text.unescape(found.group(1))


def test_the_deadline_says_whose_move_is_due(client, make_game) -> None:
    game = make_game(days_per_move=3)
    # The game opens on an exchange: both players owe their choice.
    assert deadline_line(page(client, game["keeper"])) == "Your move and Sam's are due in 3 days:"
    keeper = api_view(client, game["keeper"])
    client.post(
        f"/api/play/{game['keeper']}", json={"version": 0, **pick_action(keeper, random.Random(3))}
    )
    assert deadline_line(page(client, game["keeper"])) == "Sam's move is due in 3 days:"
    assert deadline_line(page(client, game["shadow"])) == "Your move is due in 3 days:"
    french = page(client, game["keeper"] + "?lang=fr")
    assert deadline_line(french).startswith("Coup de Sam attendu dans 3")


def test_page_is_phone_ready_and_uncached(client, make_game) -> None:
    game = make_game()
    response = client.get(f"/play/{game['keeper']}")
    html = response.get_data(as_text=True)
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    # Scripts only enhance the page (the forms work without them) and come from files: the
    # security policy allows no inline script.
    scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", html, re.S)
    assert scripts and all(body == "" for body in scripts)
    assert re.fullmatch(
        r'<script src="/static/play\.js\?v=[0-9a-f]{12}" defer>',
        "".join(re.findall(r"<script\b[^>]*>", html)),
    )
    assert response.headers["Cache-Control"] == "no-store"
    assert "default-src 'self'" in response.headers["Content-Security-Policy"]


def test_the_page_says_how_soon_to_ask_whether_the_opponent_moved(app, client, make_game) -> None:
    game = make_game()
    app.config["PAGE_POLL_SECONDS"] = 2.5
    html = client.get(f"/play/{game['keeper']}").get_data(as_text=True)
    assert 'data-poll-ms="2500"' in html


def test_since_your_last_move_tells_what_the_opponent_did(client, make_game) -> None:
    game = make_game(seed=5)
    client.post(f"/api/play/{game['keeper']}", json={"version": 0, "exchange": ["7D"]})
    assert "Since your last move" not in page(client, game["keeper"])
    client.post(f"/api/play/{game['shadow']}", json={"version": 1, "exchange": ["5S"]})
    news = re.sub(r"<[^>]+>", "", page(client, game["keeper"]).split('class="news"')[1])
    assert "Exchange done: you gave 7♦ and received ♠5½." in news
    client.post(f"/api/play/{game['keeper']}", json={"version": 2, "play": "6H"})
    client.post(f"/api/play/{game['shadow']}", json={"version": 3, "play": "7H"})
    client.post(f"/api/play/{game['shadow']}", json={"version": 4, "play": "5H"})
    news = re.sub(r"<[^>]+>", "", page(client, game["keeper"]).split('class="news"')[1])
    assert "Exchange done" not in news
    assert "Trick 1: you led 6♥; Sam played 7♥: Sam won." in news
    assert "Sam leads 5♥." in news


@pytest.mark.parametrize(
    ("options", "shown", "said"),
    [
        (
            {},
            "Answer the 6♥ Kim led. Exchange done: you gave ♠5½ and received 7♦. Kim leads 6♥.",
            "Answer the 6 of hearts Kim led. Exchange done: you gave elixir 5½ and received"
            " 7 of diamonds. Kim leads 6 of hearts.",
        ),
        (
            {"shadow_language": "fr"},
            "Répondez à la carte de Kim\u00a0: 6♥. Échange fait\u00a0: vous avez donné ♠5½ et"
            " reçu 7♦. Kim entame avec 6♥.",
            "Répondez à la carte de Kim\u00a0: 6 de cœur. Échange fait\u00a0: vous avez donné"
            " élixir 5½ et reçu 7 de carreau. Kim entame avec 6 de cœur.",
        ),
        (
            {"look": "classic"},
            "Answer the red 6 Kim led. Exchange done: you gave potion 5+ and received green 7."
            " Kim leads red 6.",
            None,
        ),
        (
            {"look": "classic", "shadow_language": "fr"},
            "Répondez à la carte de Kim\u00a0: 6 rouge. Échange fait\u00a0: vous avez donné"
            " potion 5+ et reçu 7 vert. Kim entame avec 6 rouge.",
            None,
        ),
    ],
)
def test_a_card_in_a_sentence_is_said_in_words(
    client, make_game, options: dict, shown: str, said: str | None
) -> None:
    """The eye reads "Answer the 6♥ Kim led.", a screen reader the card's name as the card
    buttons give it ("6 of hearts"), and not whatever it makes of "♠5½"."""
    game = make_game(seed=5, **options)
    play_seed_5(client, game, 0, 3)
    html = page(client, game["shadow"])
    status = re.search(r'<section class="status.*?<p>(.*?)</p>', html, re.S)
    assert status
    sentences = [
        status.group(1),
        html.split('<section class="news"', 1)[1].split("</ul>", 1)[0].split("<ul>", 1)[1],
    ]
    read = [Spoken(part) for part in sentences]
    eye = [html_text.unescape(re.sub(r"<[^>]+>", "", part)) for part in sentences]
    assert re.sub(r"[ \t\n]+", " ", " ".join(eye)).strip() == shown
    # Every card named in them carries its words, in either look.
    assert sum(len(spoken.labels) for spoken in read) == 4
    assert " ".join(spoken.text for spoken in read) == (said or shown)
    assert not re.search("[♥♦♣♠]", Spoken(html).text)  # nor anywhere else on the page


def test_a_forfeit_is_shown_as_one(app, client, make_game) -> None:
    from service import games

    game = make_game(seed=4)
    with app.app_context(), transaction():
        games.declare_forfeit(game["id"], "shadow", actor="ada")
    html = page(client, game["keeper"])
    assert "Game over: the Keeper wins." in html and "The game ended by forfeit." in html


# Seed 5 deals a one-round game that the Shadow wins by taking every trick (the browser
# tests play it card by card); the Keeper's last card ends it.
SEED_5_GAME = [
    ("keeper", {"exchange": ["7D"]}),
    ("shadow", {"exchange": ["5S"]}),
    ("keeper", {"play": "6H"}),
    ("shadow", {"play": "7H"}),
    ("shadow", {"play": "5H"}),
    ("keeper", {"play": "3H"}),
    ("shadow", {"play": "3D"}),
    ("keeper", {"play": "2D"}),
    ("shadow", {"play": "2S", "name": "D"}),
    ("keeper", {"play": "1D"}),
    ("shadow", {"swap": ["6D", "5C"]}),
    ("keeper", {"swap": ["2C", "3S"]}),
    ("shadow", {"play": "3C"}),
    ("keeper", {"play": "5C"}),
    ("keeper", {"play": "5S", "name": "H"}),
    ("shadow", {"play": "7D"}),
    ("keeper", {"swap": ["1H", "6D"]}),
    ("shadow", {"swap": ["2C", "4S"]}),
    ("shadow", {"play": "6D"}),
    ("keeper", {"play": "4S"}),
    ("shadow", {"swap": ["1H", "3S"]}),
    ("keeper", {"swap": ["2C", "6C"]}),
    ("shadow", {"play": "7C"}),
    ("keeper", {"play": "3S"}),
    ("shadow", {"play": "2C"}),
    ("keeper", {"play": "1H"}),
    ("shadow", {"play": "6C"}),
]


def play_seed_5(client: FlaskClient, game: dict, start: int, stop: int) -> None:
    """The moves ``start`` to ``stop`` (excluded) of :data:`SEED_5_GAME`, through the JSON API."""
    for seat, action in SEED_5_GAME[start:stop]:
        version = api_view(client, game[seat])["version"]
        response = client.post(f"/api/play/{game[seat]}", json={"version": version, **action})
        assert response.status_code == 200, response.get_json()


def outcome(html: str) -> str:
    """The words of the page's "what your move did" section, or "" without one."""
    found = re.search(r'<section class="outcome".*?</section>', html, re.S)
    return " ".join(re.sub(r"<[^>]+>", "", found.group()).split()) if found else ""


def post_play(client: FlaskClient, token: str, play: str) -> str:
    """Play a card through the page's form and follow the redirect, as a browser does."""
    form = MoveForm(page(client, token))
    response = client.post(
        f"/play/{token}", data={**form.hidden, "play": play}, follow_redirects=True
    )
    assert response.status_code == 200
    return response.get_data(as_text=True)


def test_the_move_that_ends_a_trick_says_what_it_did(client, make_game) -> None:
    game = make_game(seed=5)
    play_seed_5(client, game, 0, 3)
    html = post_play(client, game["shadow"], "7H")
    assert outcome(html) == "You won trick 1. Kim led 6♥; you played 7♥: you won."
    assert outcome(page(client, game["shadow"])) == outcome(html)  # a GET changes nothing
    assert outcome(page(client, game["keeper"])) == ""  # the lead was the Keeper's last move
    play_seed_5(client, game, 4, 9)
    html = post_play(client, game["keeper"], "1D")
    assert outcome(html).startswith("Sam won trick 4. Sam led ♠2½, naming diamonds;")
    assert "Now choose 2 cards to give." in outcome(html)
    play_seed_5(client, game, 10, 12)
    assert outcome(page(client, game["keeper"])) == ""  # the swap was the last move


def test_the_move_that_ends_the_game_says_so(app, client, make_game) -> None:
    game = make_game(seed=5)
    play_seed_5(client, game, 0, len(SEED_5_GAME))
    html = post_play(client, game["keeper"], "4H")
    assert outcome(html).startswith(
        "Round 1 over: 0–10, the track moves 10 to 10 of 10. Sam led 6♣; you played 4♥"
    )
    assert html.count("Game over") == 1, "the page says the game is over once"
    assert "Game over: the Shadow wins." in html
    assert "All 10 track cards are face up after round 1" in html
    assert f'action="/rematch/{game["keeper"]}"' in html
    with app.app_context():  # a new game from Kim's own page, which vouches for her address
        assert f'href="/me/{home_token("kim@example.com")}/new?name=Kim"' in html
    assert "<details>" in html and "Round 1: you 0, Sam 10; the track moved 10." in html


def history_numbers(html: str, section: str) -> list[int]:
    """The trick numbers of a history section of the page, in the order it lists them."""
    found = re.search(rf'<section class="{section}".*?</section>', html, re.S)
    assert found, section
    return [int(number) for number in re.findall(r'<li value="(\d+)">', found.group())]


def test_both_histories_list_the_tricks_in_the_order_played(client, make_game) -> None:
    game = make_game(seed=5)
    play_seed_5(client, game, 0, 9)  # three tricks of round 1, and a lead
    # Oldest first, as the earlier rounds and the review list them.
    assert history_numbers(page(client, game["keeper"]), "history") == [1, 2, 3]


def test_the_page_speaks_french_after_a_trick(client, make_game) -> None:
    game = make_game(seed=5, shadow_language="fr")
    play_seed_5(client, game, 0, 3)
    html = post_play(client, game["shadow"], "7H")
    assert outcome(html).startswith("Vous avez gagné le pli 1.")


def test_a_refused_resignation_or_reminder_speaks_the_player_s_language(client, make_game) -> None:
    """The player chose French: refusing their second resignation, or a reminder asked too
    soon, is said in French, as their page is, whatever the browser asks for."""
    game = make_game(seed=5, keeper_language="fr")
    given = {"version": 0, "kind": "exchange", "cards": ["7D"]}
    assert client.post(f"/play/{game['keeper']}", data=given).status_code == 303
    early = client.post(f"/play/{game['keeper']}/remind", data={"version": 1})
    assert early.status_code == 409
    assert error_text(early.get_data(as_text=True)).startswith("Un rappel n’est possible")
    resign = f"/play/{game['keeper']}/resign"
    assert client.post(resign, data={"version": 1, "confirm": "yes"}).status_code == 303
    again = client.post(resign, data={"version": 1, "confirm": "yes"})
    assert again.status_code == 409
    html = again.get_data(as_text=True)
    assert '<html lang="fr"' in html
    assert error_text(html).startswith("Vous avez déjà abandonné cette partie")


@pytest.mark.parametrize(
    ("left", "said"),
    [
        (timedelta(days=3) - timedelta(milliseconds=30), "in 3 days"),
        (timedelta(days=10), "in 10 days"),
        (timedelta(days=13, hours=20), "in 13 days"),
        (timedelta(days=20, hours=23), "in 2 weeks"),
        (timedelta(hours=47, minutes=50), "in 47 hours"),
        (timedelta(days=89), "in 2 months"),
        (timedelta(minutes=-150), "2 hours ago"),
        (timedelta(minutes=-119, seconds=-30), "119 minutes ago"),
        (timedelta(seconds=30), "in 30 seconds"),
        (timedelta(seconds=59), "in 59 seconds"),
        (timedelta(hours=1, minutes=59), "in 119 minutes"),
        (timedelta(hours=2) - timedelta(milliseconds=30), "in 2 hours"),
    ],
)
def test_the_time_left_is_never_more_than_there_is(app, left: timedelta, said: str) -> None:
    """Whole units, from two of a unit on: 11 days read "in 2 weeks" when rounded."""
    with app.test_request_context():
        assert time_left(left) == said


@pytest.mark.parametrize("path", ["/new", "/links"])
def test_a_form_made_for_one_session_is_kept_by_no_shared_cache(client, path: str) -> None:
    """The form's CSRF token belongs to the session its cookie starts."""
    response = client.get(path)
    assert response.status_code == 200 and "session=" in response.headers["Set-Cookie"]
    assert response.headers["Cache-Control"] == "private, no-store"


def test_a_page_made_for_no_one_in_particular_is_not_marked_private(app, client) -> None:
    """The rules and the front page, to a visitor without a session, are the same for every
    visitor of a language: marked private they would be cached by no one. The health probe
    says how the service is now, and is kept by no cache."""
    for path in ("/rules", "/"):
        response = client.get(path)
        assert response.status_code == 200 and "Set-Cookie" not in response.headers
        assert "Cache-Control" not in response.headers, path
        assert "Accept-Language" in response.headers["Vary"]
    assert client.get("/healthz").headers["Cache-Control"] == "no-store"
    client.get("/new")  # a session now: a page may show what belongs to it
    assert client.get("/rules").headers["Cache-Control"] == "private, no-store"


def test_the_first_trick_of_a_round_is_led_as_the_first(client, make_game) -> None:
    game = make_game(seed=5)
    play_seed_5(client, game, 0, 2)  # the exchange: the Keeper leads trick 1
    assert "Lead the first trick of the round." in page(client, game["keeper"])
    assert "Waiting for Kim to lead the first trick of the round." in page(client, game["shadow"])
    play_seed_5(client, game, 2, 4)  # trick 1, which the Shadow won
    assert "Lead the next trick." in page(client, game["shadow"])
    assert "Waiting for Sam to lead the next trick." in page(client, game["keeper"])


def title(html: str) -> str:
    """A page's title, as a screen reader says it first of the page."""
    found = re.search(r"<title>(.*?)</title>", html, re.S)
    assert found is not None
    return html_text.unescape(found.group(1))


def test_a_page_that_refuses_what_was_sent_says_so_in_its_title(client, make_game) -> None:
    """The title is read first of a page loaded after a POST: a refusal starts it."""
    game = make_game(seed=5)
    refused = {"version": 0, "kind": "exchange", "cards": ["5H", "7H"]}
    response = client.post(f"/play/{game['shadow']}", data=refused)
    assert response.status_code == 422
    assert (
        title(response.get_data(as_text=True)) == "Error: Your move · Game 1 · Split Mind by Mail"
    )
    assert title(page(client, game["shadow"])) == "Your move · Game 1 · Split Mind by Mail"
    # The forms of the public pages too, a field refused or the whole form.
    token = csrf_token(client.get("/links").get_data(as_text=True))
    links = client.post("/links", data={"email": "not an address", "csrf_token": token})
    assert title(links.get_data(as_text=True)).startswith("Error: ")
    new = ask_for_game(client, email="not-an-address")
    assert title(new.get_data(as_text=True)) == "Error: A new game · Split Mind by Mail"
    assert title(client.get("/new").get_data(as_text=True)) == "A new game · Split Mind by Mail"
    french = client.post(f"/play/{game['shadow']}?lang=fr", data=refused)
    assert title(french.get_data(as_text=True)).startswith("Erreur\u00a0: ")
