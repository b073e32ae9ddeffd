"""The JSON API: whole games, and every kind of bad request answered precisely."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.exceptions import TooManyRequests

from service import games
from service.api.routes import api_view
from service.links import SALT, player_for, serializer, token_for
from service.perspective import view_tag
from service.rules import SEATS, other
from service.unit_of_work import transaction

from .conftest import load_game
from .factories import written
from .helpers import pick_action, play_to_end, random_move, statements_run

VIEW_KEYS = {
    "seat", "round", "phase", "version", "your_turn", "to_act", "hand", "opponent_cards",
    "table", "suit_order", "tricks", "track", "rounds", "history", "winner", "legal",
    "track_length", "tricks_per_round", "last_round", "swap_size",
}  # fmt: skip


def view(client: FlaskClient, token: str) -> dict[str, Any]:
    response = client.get(f"/api/play/{token}")
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def post(client: FlaskClient, token: str, body: Any) -> Any:
    return client.post(f"/api/play/{token}", json=body)


@pytest.mark.slow
def test_a_whole_game_through_the_api(app, client, make_game) -> None:
    game = make_game(seed=11)
    final = play_to_end(client, game, seed=3, api=True)
    assert final["phase"] == "over"
    assert final["status"] == "finished"
    assert final["winner"] in SEATS
    assert final["legal"] == [] and final["your_turn"] is False
    stored = load_game(app, game["id"])
    assert stored.status == "finished" and stored.winner == final["winner"]
    assert stored.version == final["version"]


def test_view_has_the_documented_keys(client, make_game) -> None:
    game = make_game()
    data = view(client, game["keeper"])
    assert set(data) >= VIEW_KEYS
    assert data["seat"] == "keeper" and data["phase"] == "exchange"
    assert data["legal"] == {
        "choose": 1,
        "must_include_elixir": data["legal"]["must_include_elixir"],
    }
    assert len(data["hand"]) == 10 and data["opponent_cards"] == 10


def test_legal_plays_are_listed_in_the_play_phase(client, make_game) -> None:
    game = make_game(seed=4)
    rng = random.Random(1)
    for seat in SEATS:
        v = view(client, game[seat])
        assert (
            post(client, game[seat], {"version": v["version"], **pick_action(v, rng)}).status_code
            == 200
        )
    keeper = view(client, game["keeper"])
    assert keeper["phase"] == "play" and keeper["your_turn"]
    for move in keeper["legal"]:
        assert set(move) <= {"play", "name"} and move["play"] in keeper["hand"]
        assert ("name" in move) == move["play"].endswith("S")
    assert view(client, game["shadow"])["legal"] == []


def test_stale_version_gets_409_and_changes_nothing(app, client, make_game) -> None:
    game = make_game()
    v = view(client, game["keeper"])
    before = load_game(app, game["id"])
    response = post(
        client, game["keeper"], {"version": v["version"] + 5, "exchange": v["hand"][:1]}
    )
    assert response.status_code == 409
    assert response.get_json()["error"]["code"] == "stale"
    after = load_game(app, game["id"])
    assert (after.version, after.state) == (before.version, before.state)


def test_double_submit_applies_once(app, client, make_game) -> None:
    game = make_game()
    v = view(client, game["keeper"])
    body = {"version": v["version"], **pick_action(v, random.Random(2))}
    assert post(client, game["keeper"], body).status_code == 200
    second = post(client, game["keeper"], body)
    assert second.status_code == 409
    # The refusal says whose move came first: the player's own.
    assert second.get_json()["error"]["message"] == (
        "You have moved since version 0 of the game (it is at version 1): nothing more was "
        "changed. Reload it to see the game now."
    )
    assert load_game(app, game["id"]).version == 1
    # A version the game has not reached: not one the player saw.
    third = post(client, game["keeper"], {**body, "version": 7})
    assert third.get_json()["error"]["message"].startswith("The game has not reached the version")


def test_illegal_move_gets_422_with_the_rule(app, client, make_game) -> None:
    game = make_game()
    v = view(client, game["keeper"])
    too_many = v["hand"][:2]
    response = post(client, game["keeper"], {"version": 0, "exchange": too_many})
    assert response.status_code == 422
    assert response.get_json()["error"] == {
        "code": "illegal",
        "rule": "choose_count",
        "message": "Give exactly 1 different card in the round 1 exchange.",
    }
    response = post(client, game["keeper"], {"version": 0, "play": v["hand"][0]})
    assert response.status_code == 422
    assert "exchange phase" in response.get_json()["error"]["message"]
    assert load_game(app, game["id"]).version == 0


def test_card_not_held_is_refused(client, make_game) -> None:
    game = make_game()
    hand = view(client, game["keeper"])["hand"]
    other = next(card for card in ("1H", "2H", "3H", "4H", "5H", "6H", "7H") if card not in hand)
    response = post(client, game["keeper"], {"version": 0, "exchange": [other]})
    assert response.status_code == 422
    assert response.get_json()["error"]["message"] == f"You do not hold {other}."


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        [1, 2],
        {"exchange": ["1H"]},
        {"version": "0", "exchange": ["1H"]},
        {"version": 0},
        {"version": 0, "exchange": ["1H"], "play": "1H"},
        {"version": 0, "exchange": "1H"},
        {"version": 0, "exchange": ["9Z"]},
        {"version": 0, "play": "4S", "name": "X"},
        {"version": 0, "exchange": ["1H"], "seat": "shadow"},
        {"version": 0, "exchange": ["1H"], "seat": "keeper"},
        {"version": 0, "exchange": ["1H"], "extra": 1},
        {"": None, "version": 0, "exchange": ["1C"]},
        {"version": 0, "play": "1H", "name": None},
        {"version": True, "play": "1H"},
        {"version": 0.5, "play": "1H"},
        {"version": 999, "swap": "1H"},
    ],
)
def test_malformed_bodies_get_400(app, client, make_game, body: Any) -> None:
    game = make_game()
    if isinstance(body, str):
        response = client.post(
            f"/api/play/{game['keeper']}", data=body, content_type="application/json"
        )
    else:
        response = post(client, game["keeper"], body)
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert error["code"] == "malformed" and error["message"]
    assert load_game(app, game["id"]).version == 0


ONE_KIND = 'an action has exactly one of "exchange", "play" or "swap"'
SEAT_KEY = 'unexpected key "seat": the link says whose move it is'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"": None, "version": 0, "exchange": ["1C"]}, 'unexpected key "" in an exchange action'),
        ({"version": 0, "play": "1C", "swap": ["1C"]}, ONE_KIND),
        ({"version": 0, "play": "1C", "cards": []}, 'unexpected key "cards" in a play action'),
        ({"version": 0, "swap": ["1C"], "name": "H"}, 'unexpected key "name" in a swap action'),
        ({"version": 0, "exchange": ["1H"], "seat": "keeper"}, SEAT_KEY),
        ({"version": 7, "exchange": ["XX"]}, 'unknown card "XX"'),
    ],
)  # fmt: skip
def test_a_malformed_body_is_named_whatever_the_game_state(
    client: FlaskClient, make_game: Any, body: dict[str, Any], message: str
) -> None:
    """The shape is checked before the version: a stale malformed move is still a 400."""
    game = make_game()
    response = post(client, game["keeper"], body)
    assert response.status_code == 400
    assert response.get_json() == {"error": {"code": "malformed", "message": message}}


# Bodies the document's Move schema refuses, whatever the game's state: a choice of no card,
# of one card twice, of more cards than any phase takes; a note that is not text, holds a
# line separator or is too long.
OUT_OF_SHAPE = [
    {"exchange": []},
    {"exchange": ["1H", "1H"]},
    {"exchange": ["1H", "2H", "3H", "4H"]},
    {"swap": []},
    {"swap": ["1H", "1H"]},
    {"swap": ["1H", "2H", "3H"]},
    {"play": "1H", "note": 5},
    {"play": "1H", "note": "see\u2028you"},
    {"play": "1H", "note": "x" * 281},
]


@pytest.mark.parametrize("finished", [False, True], ids=["active", "finished"])
@pytest.mark.parametrize("body", OUT_OF_SHAPE)
def test_a_body_out_of_the_documents_shape_is_malformed_whatever_the_game_state(
    app: Flask, client: FlaskClient, make_game: Any, finished: bool, body: dict[str, Any]
) -> None:
    """Not 409 because the game is over, nor 422 because the phase takes another count."""
    game = make_game(seed=5)
    version = written(app, game["id"], 8)["version"] if finished else 0
    response = post(client, game["keeper"], {"version": version, **body})
    assert response.status_code == 400, response.get_json()
    assert response.get_json()["error"]["code"] == "malformed"
    assert load_game(app, game["id"]).version == version


@pytest.mark.parametrize("path", ["/api/play/{token}", "/play/{token}"])
def test_a_method_a_path_does_not_take_gets_405_with_allow(
    client: FlaskClient, make_game: Any, path: str
) -> None:
    """RFC 9110: a 405 lists the methods the path takes, on the API and on the pages alike."""
    game = make_game()
    url = path.format(token=game["keeper"])
    for method in ("TRACE", "PUT", "DELETE", "PATCH", "OPTIONS"):
        response = client.open(url, method=method)
        assert response.status_code == 405
        assert set(response.headers["Allow"].split(", ")) == {"GET", "HEAD", "POST"}
    if path.startswith("/api/"):
        assert response.get_json()["error"]["code"] == "method_not_allowed"
    assert load_game(client.application, game["id"]).version == 0


@pytest.mark.parametrize("path", ["/api/busy", "/busy"])
def test_an_error_keeps_the_headers_its_exception_carries(app: Flask, path: str) -> None:
    def busy() -> None:
        raise TooManyRequests(retry_after=30)

    app.add_url_rule(path, "busy", busy)
    response = app.test_client().get(path)
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "30"
    assert response.mimetype == ("application/json" if path.startswith("/api/") else "text/html")


def test_bad_links_get_404(client, make_game) -> None:
    game = make_game()
    token = game["keeper"]
    for bad in (token[:-2] + ("aa" if not token.endswith("aa") else "bb"), "nonsense", token + "x"):
        assert client.get(f"/api/play/{bad}").status_code == 404
        response = post(client, bad, {"version": 0, "exchange": ["1H"]})
        assert response.status_code == 404
        assert response.get_json() == {
            "error": {"code": "not_found", "message": "There is nothing at this address."}
        }


def test_a_revoked_or_unknown_link_is_not_found_whatever_the_body(app, client, make_game) -> None:
    """A body the API refuses is no answer to a link that is no one's: 404 before 400."""
    game = make_game()
    with app.app_context(), transaction():
        games.rotate_link(player_for(game["keeper"]).id, "ada")
        unknown = serializer(SALT).dumps([123456, "key"])
    malformed = [{}, {"version": "x", "play": "1H"}, {"version": 0, "play": "1H", "note": "\x01"}]
    for token in (game["keeper"], unknown):
        for body in malformed:
            response = post(client, token, body)
            assert response.status_code == 404, (body, response.get_json())
            assert response.get_json()["error"]["code"] == "not_found"
    # The player's link of now is told what is wrong with the body.
    assert post(client, game["shadow"], {}).status_code == 400


def test_a_version_the_game_never_had_is_not_called_stale(app, client, make_game) -> None:
    game = make_game()
    view = client.get(f"/api/play/{game['keeper']}").get_json()
    move = pick_action(view, random.Random(1))
    for ahead in (1, 102, 1e300):
        response = post(client, game["keeper"], {"version": ahead, **move})
        assert response.status_code == 409
        assert response.get_json()["error"]["message"] == (
            "The game has not reached the version you sent (it is at version 0): "
            "reload it and make your move again."
        )
    assert load_game(app, game["id"]).version == 0


@pytest.mark.parametrize("player_id", [2**31, 2**63, 0, -1, True])
def test_a_signed_link_to_no_possible_row_is_not_found(app, client, player_id) -> None:
    """Only the service's key signs a link, so only a leaked key could make these; still, no
    id the database cannot hold reaches a query."""
    with app.app_context():
        token = serializer(SALT).dumps([player_id, "key"])
    for path in (f"/api/play/{token}", f"/play/{token}", f"/play/{token}/review"):
        assert client.get(path).status_code == 404, path


def test_moves_after_the_game_ended_are_refused(app, client, make_game) -> None:
    game = make_game(seed=5)
    final = written(app, game["id"], 8)
    response = post(client, game["keeper"], {"version": final["version"], "play": "1H"})
    assert response.status_code == 409
    assert response.get_json()["error"]["code"] == "closed"


def test_a_swap_gives_in_the_api_until_both_have_chosen(app, client, make_game) -> None:
    """The words of the trick that brought a Swap, as on the page: it is to come while the
    players choose, and done once both have."""
    game = make_game(seed=1)  # its random play reaches a Swap in round 1
    version = written(app, game["id"], 1, until=lambda v: v["phase"] == "swap")["version"]
    texts = {seat: view(client, game[seat])["history"][-1]["text"] for seat in SEATS}
    assert texts == {seat: "Swap: each gives 2 cards" for seat in SEATS}
    rng = random.Random(1)
    for seat in SEATS:
        seen = view(client, game[seat])
        assert (
            post(client, game[seat], {"version": version, **pick_action(seen, rng)}).status_code
            == 200
        )
    last = view(client, game["keeper"])["history"]
    assert [entry["text"] for entry in last if entry["effect"] == "swap"][-1] == (
        "Swap: each gave 2 cards"
    )


def test_openapi_document_describes_the_api(client) -> None:
    doc = client.get("/api/openapi.json").get_json()
    assert doc["openapi"].startswith("3.")
    operations = doc["paths"]["/api/play/{token}"]
    assert set(operations) >= {"get", "post"}
    assert set(operations["get"]["responses"]) == {"200", "304", "400", "404", "405", "413", "503"}
    assert set(operations["post"]["responses"]) == {
        "200", "400", "404", "405", "409", "413", "422", "503"
    }  # fmt: skip
    required = set(doc["components"]["schemas"]["View"]["required"])
    assert required >= VIEW_KEYS


def test_a_version_from_before_a_new_exchange_is_stale(app, client, make_game) -> None:
    """The opponent's card that ends a round starts an exchange: a move made before it is stale."""
    game = make_game(seed=19)
    # Play until one card is left to play in round 1: the last trick's answer.
    view = written(
        app,
        game["id"],
        19,
        until=lambda v: v["phase"] == "play" and v["trick"] == 10 and len(v["table"]) == 1,
    )
    follower = "shadow" if view["table"][0]["seat"] == "keeper" else "keeper"
    leader = other(follower)
    before = client.get(f"/api/play/{game[leader]}").get_json()
    answer = client.get(f"/api/play/{game[follower]}").get_json()
    body = {"version": answer["version"], **answer["legal"][0]}
    assert post(client, game[follower], body).status_code == 200
    hand = client.get(f"/api/play/{game[leader]}").get_json()["hand"]
    stale = post(client, game[leader], {"version": before["version"], "exchange": hand[:2]})
    assert stale.status_code == 409
    assert load_game(app, game["id"]).version == before["version"] + 1


def test_the_other_half_of_an_exchange_is_not_stale(app, client, make_game) -> None:
    game = make_game(seed=20)
    views = {seat: client.get(f"/api/play/{game[seat]}").get_json() for seat in SEATS}
    rng = random.Random(20)
    for seat in SEATS:  # both made against version 0
        body = {"version": 0, **pick_action(views[seat], rng)}
        assert post(client, game[seat], body).status_code == 200
    assert load_game(app, game["id"]).state["phase"] == "play"


def test_a_game_ended_by_an_admin_shows_a_new_version(app, client, make_game) -> None:
    """Pages waiting for the opponent poll the version: an ending must change it."""
    from service import games as service

    game = make_game(seed=21)
    before = client.get(f"/api/play/{game['keeper']}").get_json()
    with app.app_context(), transaction():
        service.declare_forfeit(game["id"], "shadow", actor="ada")
    after = client.get(f"/api/play/{game['keeper']}").get_json()
    assert after["version"] > before["version"]
    assert (after["status"], after["winner"], after["legal"]) == ("finished", "keeper", [])


def test_a_version_written_with_a_fraction_of_zero_is_that_integer(app, client, make_game) -> None:
    """JSON numbers have no integer type: 0.0 is version 0, as the document's integer says."""
    game = make_game()
    v = view(client, game["keeper"])
    body = {"version": float(v["version"]), **pick_action(v, random.Random(4))}
    assert post(client, game["keeper"], body).status_code == 200
    stale = post(client, game["keeper"], {**body, "version": 0.0})
    assert stale.status_code == 409
    assert "since version 0 of the game" in stale.get_json()["error"]["message"]


def test_reading_a_link_costs_one_query(app, client, make_game) -> None:
    """The player, their game and both seats come in one statement."""
    game = make_game()
    # The page, the first time, looks for a kept page (service/players/kept.py), then asks
    # three more things: its home link's key, whether the opponent is away, and the
    # opponent's notes; read again, it is kept.
    page = f"/play/{game['shadow']}"
    for path, queries in ((f"/api/play/{game['keeper']}", 1), (page, 5), (page, 1)):
        with statements_run(app) as statements:
            assert client.get(path).status_code == 200
        assert len(statements) == queries, "\n\n".join(sql for sql, _ in statements)


def test_an_unchanged_view_answers_304_to_its_etag(app, client, make_game) -> None:
    """A poll of an unchanged game costs no body; any change gives the new view."""
    game = make_game()
    path = f"/api/play/{game['shadow']}"
    first = client.get(path)
    etag = first.headers["ETag"]
    again = client.get(path, headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.get_data() == b""
    assert again.headers["ETag"] == etag
    assert client.get(path, headers={"If-None-Match": '"something else"'}).status_code == 200
    view = client.get(f"/api/play/{game['keeper']}").get_json()
    post(
        client, game["keeper"], {"version": view["version"], **pick_action(view, random.Random(1))}
    )
    changed = client.get(path, headers={"If-None-Match": etag})
    assert changed.status_code == 200
    assert changed.headers["ETag"] != etag
    assert changed.get_json()["version"] == view["version"] + 1


def test_a_poll_of_an_unchanged_game_costs_one_statement(app, client, make_game) -> None:
    """The ETag is read by primary key, before the game's state or any view."""
    game = make_game()
    path = f"/api/play/{game['keeper']}"
    etag = client.get(path).headers["ETag"]
    with statements_run(app) as statements:
        polled = client.get(path, headers={"If-None-Match": etag})
    assert polled.status_code == 304
    assert len(statements) == 1, "\n\n".join(sql for sql, _ in statements)
    assert "state" not in statements[0][0].split("FROM")[0]


def test_the_etag_changes_with_the_deadline_and_the_language(app, client, make_game) -> None:
    """A deadline extended by an admin changes no version, but changes the view."""
    game = make_game(days_per_move=3)
    path = f"/api/play/{game['shadow']}"
    etag = client.get(path).headers["ETag"]
    with app.app_context(), transaction():
        games.extend_deadline(game["id"], 2, "root")
    extended = client.get(path, headers={"If-None-Match": etag})
    assert extended.status_code == 200
    assert extended.headers["ETag"] != etag
    etag = extended.headers["ETag"]
    assert client.get(path, headers={"If-None-Match": etag}).status_code == 304
    french = client.get(path, headers={"If-None-Match": etag, "Accept-Language": "fr"})
    assert french.status_code == 200
    assert french.headers["ETag"] != etag


def test_a_game_of_a_return_match_answers_304_too(app, client) -> None:
    with app.app_context(), transaction():
        first = games.create_match(
            games.Seating("kim@example.com", "Kim"), games.Seating("sam@example.com", "Sam")
        )
        token = token_for(first.player("keeper"))
    path = f"/api/play/{token}"
    first_view = client.get(path)
    assert first_view.get_json()["match"]["game"] == 1
    polled = client.get(path, headers={"If-None-Match": first_view.headers["ETag"]})
    assert polled.status_code == 304
    assert polled.headers["ETag"] == first_view.headers["ETag"]


def assert_view_as_loaded(app: Flask, client: FlaskClient, token: str, language: str) -> None:
    """The API's view and ETag of a link are those its loaded player, game and seats give,
    and reading them takes one statement."""
    path = f"/api/play/{token}"
    with statements_run(app) as statements:
        answer = client.get(path, headers={"Accept-Language": language})
    assert answer.status_code == 200
    assert len(statements) == 1, "\n\n".join(sql for sql, _ in statements)
    with app.test_request_context(path, headers={"Accept-Language": language}):
        player = player_for(token)
        assert player is not None
        expected = json.loads(json.dumps(api_view(player)))
        tag = view_tag(player)
    assert answer.get_json() == expected
    assert answer.headers["ETag"] == f'"{tag}"'


@pytest.mark.parametrize(
    ("options", "language"),
    [({}, "en"), ({"look": "classic", "days_per_move": 3, "keeper_language": "fr"}, "fr")],
)
def test_the_view_read_in_one_statement_is_the_loaded_one(
    app: Flask, client: FlaskClient, make_game, options: dict[str, Any], language: str
) -> None:
    """At every step of a whole game, for both seats, in either look and language."""
    game = make_game(seed=23, **options)
    rng = random.Random(23)
    for _ in range(300):
        for seat in SEATS:
            assert_view_as_loaded(app, client, game[seat], language)
        if load_game(app, game["id"]).status != "active":
            break
        random_move(client, game, rng)
    assert load_game(app, game["id"]).status == "finished"


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_view_read_in_one_statement_names_the_computer(
    app: Flask, client: FlaskClient, language: str
) -> None:
    with app.app_context(), transaction():
        game = games.create_game(
            games.Seating("kim@example.com", "Kim"), games.Seating.the_computer("hard"), seed=4
        )
        token = token_for(game.player("keeper"))
    assert_view_as_loaded(app, client, token, language)
    opponent = client.get(f"/api/play/{token}", headers={"Accept-Language": language})
    assert (
        opponent.get_json()["opponent"]
        == {
            "en": "the computer (hard)",
            "fr": "l’ordinateur (difficile)",
        }[language]
    )


def test_a_move_locks_its_game_then_reads_it_once(app, client, make_game) -> None:
    """The move locks its game's row first, by the link's player, then reads the game with its
    seats once, after the lock (which a statement waiting for it would not see past)."""
    game = make_game()
    seen = view(client, game["keeper"])
    body = {"version": seen["version"], **pick_action(seen, random.Random(2))}
    with statements_run(app) as statements:
        assert post(client, game["keeper"], body).status_code == 200
    selects = [sql for sql, _ in statements if sql.lstrip().startswith("SELECT")]
    reads = [sql for sql in selects if re.search(r"\bgames(_\d+)?\.state\b", sql)]
    assert len(reads) == 1, "\n\n".join(reads)
    assert "FOR UPDATE" not in reads[0] and "players" in reads[0]
    (lock,) = [sql for sql in selects if "FOR UPDATE" in sql]
    assert selects.index(lock) < selects.index(reads[0])


def test_a_game_not_started_says_so_to_a_move(app: Flask, client: FlaskClient) -> None:
    """A waiting game (its opponent has not accepted) is not over: the refusal says it starts."""
    with app.app_context(), transaction():
        game = games.create_game(
            games.Seating("kim@example.com", "Kim"),
            games.Seating("sam@example.com", "Sam"),
            waiting=True,
        )
        token = token_for(game.player("keeper"))
        game_id = game.id
    response = client.post(f"/api/play/{token}", json={"version": 0, "exchange": ["1H"]})
    assert response.status_code == 409
    assert response.get_json()["error"] == {
        "code": "closed",
        "message": "This game has not started: it takes moves once both players join.",
    }
    assert load_game(app, game_id).version == 0


@pytest.mark.parametrize("path", ["", "/resign", "/remind"])
@pytest.mark.parametrize(
    ("content_type", "body", "message"),
    [
        ("text/plain", '{"version": 0, "exchange": ["1H"]}', "Content-Type: application/json"),
        (None, '{"version": 0, "exchange": ["1H"]}', "Content-Type: application/json"),
        ("application/json", '{"version": 0,', "not JSON that can be read"),
        ("application/json", "", "not JSON that can be read"),
    ],
)
def test_a_body_not_read_as_json_says_why(
    client: FlaskClient,
    make_game: Any,
    path: str,
    content_type: str | None,
    body: str,
    message: str,
) -> None:
    """A move sent as text, or JSON that cannot be decoded, is told which, not to send an
    object it may well have sent."""
    game = make_game()
    response = client.post(
        f"/api/play/{game['keeper']}{path}", data=body, content_type=content_type
    )
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert error["code"] == "malformed" and message in error["message"]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("", '{"version": 0, "exchange": ["XX"], "exchange": [CARD]}'),
        ("", '{"version": 7, "version": 0, "exchange": [CARD]}'),
        ("", '{"version": 0, "exchange": [CARD], "note": "hi", "note": null}'),
        ("/resign", '{"version": 7, "version": 0}'),
    ],
)
def test_a_body_that_repeats_a_key_is_malformed_and_changes_nothing(
    app: Flask, client: FlaskClient, make_game: Any, path: str, body: str
) -> None:
    """An object that names a key twice says two things: a proxy or a client's own check may
    read the first, where the decoder keeps the last. Neither is applied."""
    game = make_game()
    card = view(client, game["keeper"])["hand"][0]
    response = client.post(
        f"/api/play/{game['keeper']}{path}",
        data=body.replace("CARD", json.dumps(card)),
        content_type="application/json",
    )
    assert response.status_code == 400, response.get_data(as_text=True)
    error = response.get_json()["error"]
    assert error["code"] == "malformed" and "twice" in error["message"], error
    assert load_game(app, game["id"]).version == 0


@pytest.mark.parametrize(
    "body",
    [
        '{"version": 0, "exchange": ["4S\\ud800"]}',
        '{"version": 0, "play": "\\udfff"}',
        '{"version": 0, "exchange": ["1H"], "x\\ud83d": 1}',
        '{"version": 0, "play": "4S", "name": "\\ud800"}',
    ],
)
def test_an_error_echoing_a_lone_surrogate_is_unicode_text(
    client: FlaskClient, make_game: Any, body: str
) -> None:
    """A message quoting a card, a key or a suit that holds half a character shows it escaped:
    the answer is JSON of Unicode text, which a strict decoder (one that refuses a lone
    surrogate's escape, as Rust's serde_json does) reads too."""
    game = make_game()
    response = client.post(
        f"/api/play/{game['keeper']}", data=body, content_type="application/json"
    )
    assert response.status_code == 400
    message = response.get_json()["error"]["message"]
    message.encode("utf-8")  # raises for a lone surrogate, as a strict decoder would
    assert "\\ud" in message, message
