"""The OpenAPI document is valid, its examples and links hold, and the API's answers fit it."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from sqlalchemy import select

from service import create_app, games, notes
from service.games import Seating
from service.links import token_for
from service.models import Game, db
from service.rules import PHASES, SEATS, Variant
from service.rules.engine import ACTION_KINDS
from service.unit_of_work import transaction

from .conftest import base_config
from .factories import one_by_one, written
from .helpers import pick_action, redeal
from .smtp import free_port

PLAY = "/api/play/{token}"


def validator(doc: dict, schema: dict) -> Draft202012Validator:
    """A validator for ``schema``, resolving references into the document's components."""
    return Draft202012Validator({**schema, "components": doc["components"]})


def answer_schema(doc: dict, method: str, status: int) -> Draft202012Validator:
    """The documented body of an answer of the move path."""
    response = doc["paths"][PLAY][method]["responses"][str(status)]
    return validator(doc, response["content"]["application/json"]["schema"])


def media_types(doc: dict) -> Iterator[tuple[str, dict]]:
    """Every request and response body the document describes, with where it is."""
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            if method == "parameters":
                continue
            body = operation.get("requestBody", {}).get("content", {})
            for media in body.values():
                yield f"{method} {path} request", media
            for status, response in operation["responses"].items():
                for media in response.get("content", {}).values():
                    yield f"{method} {path} {status}", media


@pytest.fixture
def doc(client: FlaskClient) -> dict[str, Any]:
    return client.get("/api/openapi.json").get_json()


def test_the_document_is_valid_openapi(doc) -> None:
    validate(doc)


def test_every_example_fits_its_schema(doc) -> None:
    """Moves and errors each come with examples (one per action kind), and all of them fit."""
    for where, media in media_types(doc):
        examples = [example["value"] for example in media.get("examples", {}).values()]
        examples += [media["example"]] if "example" in media else []
        assert examples or where.endswith(" 200"), f"{where} has no example"
        for example in examples:
            validator(doc, media["schema"]).validate(example)
    moves = doc["paths"][PLAY]["post"]["requestBody"]["content"]["application/json"]["examples"]
    kinds = {kind for example in moves.values() for kind in example["value"] if kind != "version"}
    assert kinds >= set(ACTION_KINDS)


def test_a_token_is_as_long_as_the_document_says_and_no_longer(client, make_game, doc) -> None:
    """Real tokens fit the document's bounds; a longer one is nobody's: 404, unread."""
    (schema,) = {
        json.dumps(parameter["schema"])
        for path in doc["paths"].values()
        for parameter in path.get("parameters", [])
        if parameter["name"] == "token"
    }
    bounds = json.loads(schema)
    game = make_game()
    for token in (game["keeper"], game["shadow"]):
        assert bounds["minLength"] <= len(token) <= bounds["maxLength"] // 4
    long = "A" * (bounds["maxLength"] + 1)
    for path in (f"/api/play/{long}", f"/api/play/{long}/notes"):
        answer = client.get(path)
        assert answer.status_code == 404 and answer.get_json()["error"]["code"] == "not_found"
    assert client.post(f"/api/play/{long}/resign", json={"version": 0}).status_code == 404


def test_a_move_has_one_shape_per_kind_and_nothing_more(doc) -> None:
    move = validator(doc, {"$ref": "#/components/schemas/Move"})
    assert move.is_valid({"version": 3, "play": "4S", "name": "D"})
    assert move.is_valid({"version": 0, "exchange": ["1H", "2S", "7C"]})
    assert move.is_valid({"version": 9, "swap": ["1H", "2S"]})
    for body in (
        {"": None, "version": 0, "exchange": ["1C"]},
        {"version": 0, "exchange": ["1H"], "seat": "keeper"},
        {"version": 0, "swap": ["1H"], "name": "H"},
        {"version": 0, "play": "1H", "swap": ["2H"]},
        {"version": 0, "play": "1S"},
        {"version": 0, "exchange": []},
        {"version": 0, "exchange": ["1H", "2H", "3H", "4H"]},
        {"version": 0, "swap": ["1H", "2H", "3H"]},
        {"version": 0, "swap": ["1H", "1H"]},
        {"version": "0", "play": "1H"},
        {"play": "1H"},
    ):
        assert not move.is_valid(body), body


def test_a_note_may_hold_exactly_the_characters_the_server_keeps(doc) -> None:
    """Every character of the Basic Multilingual Plane, where all those refused lie, and
    some beyond it; not the surrogates, which are no text alone."""
    pattern = re.compile(doc["components"]["schemas"]["PlayMove"]["properties"]["note"]["pattern"])
    astral = [0x1F600, 0x1F3F4, 0xE0067, 0x10FFFF]
    for point in [*range(0xD800), *range(0xE000, 0x10000), *astral]:
        note = f"a{chr(point)}b"
        try:
            kept = notes.clean(note) is not None
        except notes.BadNote:
            kept = False
        assert bool(pattern.search(note)) == kept, f"U+{point:04X}"


# Notes kept and refused: control characters, separators, invisible ones, too long.
NOTES = [None, "", "ok", "x" * 280, "x" * 281, "tab\tbed", "c1\x85", "line\u2028", "rtl\u202e"]


@pytest.mark.parametrize("finished", [False, True], ids=["active", "finished"])
def test_the_server_refuses_as_malformed_exactly_the_moves_the_document_refuses(
    app: Flask, client: FlaskClient, make_game: Any, doc: dict[str, Any], finished: bool
) -> None:
    """A body the Move schema refuses is a 400 whatever the game's state, and one it allows is
    never a 400: the game is closed (409), or the rules refuse it in the round 1 exchange,
    which takes one card (422)."""
    game = make_game(seed=5)
    hand = client.get(f"/api/play/{game['keeper']}").get_json()["hand"]
    version = written(app, game["id"], 8)["version"] if finished else 0
    move = validator(doc, {"$ref": "#/components/schemas/Move"})
    bodies: list[dict[str, Any]] = [
        {"exchange": []},
        {"exchange": hand[:1] * 2},
        {"exchange": hand[:2]},
        {"exchange": hand[:3]},
        {"exchange": hand[:4]},
        {"swap": []},
        {"swap": hand[:1] * 2},
        {"swap": hand[:2]},
        {"swap": hand[:3]},
        {"play": hand[0]},
        {"play": hand[0], "name": "H"},
        *({"exchange": hand[:2], "note": note} for note in NOTES),
    ]
    for body in bodies:
        body = {"version": version, **body}
        status = client.post(f"/api/play/{game['keeper']}", json=body).status_code
        assert (status != 400) == move.is_valid(body), (body, status)
        assert status in (400, 409 if finished else 422), (body, status)


def test_links_lead_from_a_view_to_a_move_against_its_version(doc) -> None:
    operations = {
        operation["operationId"]
        for item in doc["paths"].values()
        for method, operation in item.items()
        if method != "parameters"
    }
    view = doc["components"]["schemas"]["View"]
    links = [
        link
        for item in doc["paths"].values()
        for method, operation in item.items()
        if method != "parameters"
        for response in operation["responses"].values()
        for link in response.get("links", {}).values()
    ]
    assert {link["operationId"] for link in links} == {"getView", "getNotes", "makeMove"}
    assert {link["operationId"] for link in links} <= operations
    for link in links:
        assert link["parameters"] == {"token": "$request.path.token"}
        if link["operationId"] == "makeMove":
            assert link["requestBody"] == {"version": "$response.body#/version"}
            assert "version" in view["required"]


def test_views_and_errors_fit_their_schemas(client, make_game, doc) -> None:
    game = make_game(seed=17)
    moves = one_by_one(client.application, game["id"], 17)
    for _ in range(40):
        for seat in ("keeper", "shadow"):
            answer = client.get(f"/api/play/{game[seat]}")
            answer_schema(doc, "get", answer.status_code).validate(answer.get_json())
        next(moves)
    url = f"/api/play/{game['keeper']}"
    refused = [
        ("post", client.post(url, json={"version": -1, "play": "1H"})),
        ("post", client.post(url, json={"version": 999, "swap": ["1H"] * 9})),
        ("post", client.post(url, json={"version": 0, "play": "1H", "seat": "keeper"})),
        ("post", client.post(url, json=[])),
        ("get", client.get(url + "x")),
        ("get", client.open(url, method="TRACE")),
    ]
    view = client.get(url).get_json()
    refused.append(("post", client.post(url, json={"version": view["version"], "swap": ["1H"]})))
    statuses = set()
    for method, response in refused:
        answer_schema(doc, method, response.status_code).validate(response.get_json())
        statuses.add(response.status_code)
    assert statuses == {400, 404, 405, 409, 422}


def test_the_views_of_a_variant_game_fit_their_schema(app, client, make_game, doc) -> None:
    game = make_game(seed=18)
    redeal(
        app,
        game["id"],
        Variant(track_length=25, rounds=5, halfway=12, exchange_sizes=(1, 2, 3, 4, 0)),
    )
    moves = one_by_one(client.application, game["id"], 18)
    for _ in range(40):
        for seat in ("keeper", "shadow"):
            answer = client.get(f"/api/play/{game[seat]}")
            answer_schema(doc, "get", answer.status_code).validate(answer.get_json())
        next(moves)


def test_limits_and_outages_are_answered_as_documented(client, make_game, doc, tmp_path) -> None:
    """A body too large, a NUL in the query, a database down: each answer is in the document,
    with its headers, and no operation documents an answer it cannot give."""
    url = f"/api/play/{make_game()['keeper']}"
    down = create_app(base_config(f"postgresql://root@127.0.0.1:{free_port()}/x", tmp_path))
    answers = [
        (PLAY, "post", client.post(url, data=b" " * 9000, content_type="application/json")),
        (PLAY, "get", client.get(url + "?q=%00")),
        (PLAY, "post", client.post(url + "?q=%00", json={"version": 0, "play": "1H"})),
        (PLAY, "get", down.test_client().get(url)),
        (PLAY, "post", down.test_client().post(url, json={"version": 0, "play": "1H"})),
        ("/api/openapi.json", "get", client.get("/api/openapi.json?q=%00")),
    ]
    for path, method, response in answers:
        documented = doc["paths"][path][method]["responses"][str(response.status_code)]
        schema = documented["content"]["application/json"]["schema"]
        validator(doc, schema).validate(response.get_json())
        for header, described in documented.get("headers", {}).items():
            assert header in response.headers or not described["required"]
    statuses = sorted(response.status_code for *_, response in answers)
    assert statuses == [400, 400, 400, 413, 503, 503]
    # The document needs no database: it is never a 503.
    assert "503" not in doc["paths"]["/api/openapi.json"]["get"]["responses"]
    with down.app_context():
        db.engine.dispose()


def closed(schema: Any) -> Any:
    """``schema`` with every object it describes closed: a property it does not name fails."""
    if isinstance(schema, list):
        return [closed(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    shut = {key: closed(value) for key, value in schema.items()}
    if "properties" in schema:
        shut.setdefault("additionalProperties", False)
    return shut


def tokens_of(game: Game) -> dict[str, str]:
    return {seat: token_for(game.player(seat)) for seat in SEATS}


def test_every_field_of_every_view_is_documented(app: Flask, client: FlaskClient, doc) -> None:
    """Views of each phase, of a return match's two games and against the computer, from a
    read and from a move, fit the View schema with every object closed: a field added to
    the view, at any depth, fails here until the document describes it."""
    view_schema = Draft202012Validator(
        {"$ref": "#/components/schemas/View", "components": closed(doc["components"])}
    )
    phases = set()

    def fits(answer: Any) -> dict[str, Any]:
        assert answer.status_code == 200, answer.get_data(as_text=True)
        view_schema.validate(answer.get_json())
        phases.add(answer.get_json()["phase"])
        return answer.get_json()

    kim, sam = Seating("kim@example.com", "Kim"), Seating("sam@example.com", "Sam")
    with app.app_context(), transaction():
        first = games.create_match(kim, sam, seed=17)
        computer = games.create_game(kim, Seating.the_computer("hard"), seed=4)
        first_id, first_tokens = first.id, tokens_of(first)
        against = token_for(computer.player("keeper"))
    for _ in one_by_one(app, first_id, 17):
        for token in first_tokens.values():
            fits(client.get(f"/api/play/{token}"))
    assert phases == set(PHASES)
    with app.app_context():
        second = db.session.scalars(select(Game).where(Game.match_game == 2)).one()
        second_tokens = tokens_of(second)
    for token in second_tokens.values():
        assert fits(client.get(f"/api/play/{token}"))["match"]["game"] == 2
    seen = fits(client.get(f"/api/play/{against}"))
    assert seen["opponent_computer"]
    move = {"version": seen["version"], **pick_action(seen, random.Random(4))}
    fits(client.post(f"/api/play/{against}", json=move))
    # Closed indeed: a field the document leaves out fails, at the top and deep inside.
    final = fits(client.get(f"/api/play/{first_tokens['keeper']}"))
    assert not view_schema.is_valid({**final, "secret": 1})
    final["history"][0]["secret"] = 1
    assert not view_schema.is_valid(final)
