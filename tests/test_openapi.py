"""The OpenAPI document is valid and the API's answers fit it."""

from __future__ import annotations

import random

from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

from .helpers import random_move


def schema(doc: dict, name: str) -> Draft202012Validator:
    return Draft202012Validator(
        {"$ref": f"#/components/schemas/{name}", "components": doc["components"]}
    )


def test_the_document_is_valid_openapi(client) -> None:  # noqa: ANN001
    validate(client.get("/api/openapi.json").get_json())


def test_views_and_errors_fit_their_schemas(client, make_game) -> None:  # noqa: ANN001
    doc = client.get("/api/openapi.json").get_json()
    view, error = schema(doc, "View"), schema(doc, "Error")
    game = make_game(seed=17)
    rng = random.Random(17)
    for _ in range(40):
        for seat in ("keeper", "shadow"):
            view.validate(client.get(f"/api/play/{game[seat]}").get_json())
        random_move(client, game, rng)
    refused = [
        client.post(f"/api/play/{game['keeper']}", json={"version": -1, "play": "1H"}),
        client.post(f"/api/play/{game['keeper']}", json={"version": 999, "swap": ["1H"] * 9}),
        client.post(f"/api/play/{game['keeper']}", json=[]),
        client.get(f"/api/play/{game['keeper']}x"),
    ]
    for response in refused:
        assert response.status_code >= 400
        error.validate(response.get_json())
