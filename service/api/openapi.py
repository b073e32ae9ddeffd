"""The OpenAPI 3.1 description of the player API."""

from __future__ import annotations

from typing import Any

from flask import current_app

from ..rules import DECK, SUITS

CARD = {"type": "string", "enum": list(DECK), "description": "A card: rank then suit letter."}
SEAT = {"type": "string", "enum": ["keeper", "shadow"]}
SUIT = {"type": "string", "enum": list(SUITS)}
TALLY = {
    "type": "object",
    "properties": {"keeper": {"type": "integer"}, "shadow": {"type": "integer"}},
    "required": ["keeper", "shadow"],
}


def _error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def document() -> dict[str, Any]:
    """The document, with the server's public address."""
    token = {
        "name": "token",
        "in": "path",
        "required": True,
        "schema": {"type": "string"},
        "description": "The signed token from the player's link.",
    }
    view = {"application/json": {"schema": {"$ref": "#/components/schemas/View"}}}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Split Mind by Mail: player API",
            "version": "1.0.0",
            "description": (
                "Read your game and make your move with the token from your link. "
                "Every move names the version it was made against."
            ),
        },
        "servers": [{"url": current_app.config["BASE_URL"]}],
        "paths": {
            "/api/play/{token}": {
                "parameters": [token],
                "get": {
                    "operationId": "getView",
                    "summary": "The game as your seat sees it",
                    "responses": {
                        "200": {"description": "Your view of the game", "content": view},
                        "404": _error("Unknown, tampered or revoked link"),
                    },
                },
                "post": {
                    "operationId": "makeMove",
                    "summary": "Make your move",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Move"}}
                        },
                    },
                    "responses": {
                        "200": {"description": "The move was applied", "content": view},
                        "400": _error("The body is not a well-formed move"),
                        "404": _error("Unknown, tampered or revoked link"),
                        "409": _error("Stale version, or the game takes no more moves"),
                        "422": _error("The rules forbid this move; the message says why"),
                    },
                },
            }
        },
        "components": {"schemas": _schemas()},
    }


def _schemas() -> dict[str, Any]:
    cards = {"type": "array", "items": CARD}
    play_entry = {
        "type": "object",
        "properties": {"seat": SEAT, "card": CARD, "name": SUIT},
        "required": ["seat", "card"],
    }
    return {
        "Error": {
            "type": "object",
            "properties": {
                "error": {
                    "type": "object",
                    "properties": {
                        "code": {"type": "string"},
                        "message": {"type": "string"},
                        "rule": {"type": "string"},
                    },
                    "required": ["code", "message"],
                }
            },
            "required": ["error"],
        },
        "Move": {
            "type": "object",
            "description": "The version you saw and exactly one action.",
            "properties": {
                "version": {"type": "integer"},
                "exchange": cards,
                "swap": cards,
                "play": CARD,
                "name": {**SUIT, "description": "The suit named when leading an elixir."},
            },
            "required": ["version"],
            "oneOf": [
                {"required": ["exchange"]},
                {"required": ["play"]},
                {"required": ["swap"]},
            ],
        },
        "Choice": {
            "type": "object",
            "properties": {
                "choose": {"type": "integer"},
                "must_include_elixir": {"type": "boolean"},
            },
            "required": ["choose", "must_include_elixir"],
        },
        "View": {
            "type": "object",
            "properties": {
                "game": {"type": "integer"},
                "seat": SEAT,
                "round": {"type": "integer", "minimum": 1, "maximum": 3},
                "phase": {"type": "string", "enum": ["exchange", "play", "swap", "over"]},
                "status": {
                    "type": "string",
                    "enum": [
                        "waiting",
                        "active",
                        "finished",
                        "timed_out",
                        "abandoned",
                        "cancelled",
                    ],
                },
                "version": {"type": "integer"},
                "your_turn": {"type": "boolean"},
                "to_act": {"type": "array", "items": SEAT},
                "leader": {"oneOf": [SEAT, {"type": "null"}]},
                "hand": cards,
                "pending": {"oneOf": [cards, {"type": "null"}]},
                "opponent_cards": {"type": "integer"},
                "table": {"type": "array", "items": play_entry},
                "suit_order": {"type": "array", "items": SUIT},
                "tricks": TALLY,
                "track": {"type": "integer", "minimum": 0, "maximum": 10},
                "rounds": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "keeper": {"type": "integer"},
                            "shadow": {"type": "integer"},
                            "moved": {"type": "integer"},
                        },
                    },
                },
                "history": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "round": {"type": "integer"},
                            "trick": {"type": "integer"},
                            "leader": SEAT,
                            "cards": {"type": "array", "items": play_entry},
                            "winner": SEAT,
                            "effect": {
                                "oneOf": [
                                    {"type": "string", "enum": ["reset", "swap", "steal", "none"]},
                                    {"type": "null"},
                                ]
                            },
                            "text": {"type": "string"},
                        },
                    },
                },
                "winner": {"oneOf": [SEAT, {"type": "null"}]},
                "deadline": {
                    "oneOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]
                },
                "legal": {
                    "description": (
                        "In the play phase every legal move, as {play} or {play, name}; "
                        "in an exchange or swap how many cards to choose; empty when you owe "
                        "nothing."
                    ),
                    "oneOf": [
                        {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {"play": CARD, "name": SUIT},
                                "required": ["play"],
                            },
                        },
                        {"$ref": "#/components/schemas/Choice"},
                    ],
                },
            },
            "required": [
                "seat",
                "round",
                "phase",
                "version",
                "your_turn",
                "to_act",
                "hand",
                "opponent_cards",
                "table",
                "suit_order",
                "tricks",
                "track",
                "rounds",
                "history",
                "winner",
                "legal",
            ],
        },
    }
