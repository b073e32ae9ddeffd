"""The OpenAPI 3.1 description of the player API.

A move's shape is built from the engine's own statement of it (the action
kinds, the keys each takes, the deck, the suits, how many cards a choice
can take), so the document allows exactly the bodies the server reads as a
move; whether the move is legal now is the rules' question (422).
"""

from __future__ import annotations

from typing import Any

from flask import current_app

from ..errors import API_MESSAGES, RETRY_AFTER
from ..game_text import LOOKS
from ..links import MAX_TOKEN
from ..models import GAME_STATUSES
from ..notes import MAX_LENGTH as MAX_NOTE
from ..notes import MISLEADING, SHOWN
from ..request_limits import NUL_IN_REQUEST
from ..rules import CHOICE_PHASES, DECK, PHASES, PRINTED, SUITS
from ..rules.engine import ACTION_EXTRAS, ACTION_KINDS, EFFECTS

CARD = {"type": "string", "enum": list(DECK), "description": "A card: rank then suit letter."}
SEAT = {"type": "string", "enum": ["keeper", "shadow"]}
SUIT = {"type": "string", "enum": list(SUITS)}
TALLY = {
    "type": "object",
    "properties": {"keeper": {"type": "integer"}, "shadow": {"type": "integer"}},
    "required": ["keeper", "shadow"],
}
VERSION = {"type": "integer", "description": "The version of the game the move was made against."}
# The characters :func:`service.notes.clean` refuses, as a regular expression's class: the
# control characters (Cc), the line and paragraph separators (Zl, Zp) and the invisible ones
# of MISLEADING. It refuses a lone surrogate (Cs) too, which a JSON string may escape but
# which is no Unicode text, the only strings a schema speaks of; a pattern naming them is
# no regular expression to most validators.
NOT_IN_NOTE = "\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029" + "".join(
    f"\\u{ord(char):04x}" for char in sorted(MISLEADING)
)
NOTE = {
    "type": ["string", "null"],
    "maxLength": MAX_NOTE,
    "pattern": f"^[^{NOT_IN_NOTE}]*$",
    "description": (
        f"An optional note to the opponent, plain text of at most {MAX_NOTE} characters "
        "with no control characters, no line or paragraph separators (U+2028, U+2029) and "
        "none of the invisible characters that change how text reads (the direction marks, "
        "embeddings, overrides and isolates U+200E, U+200F, U+061C, U+202A-U+202E and "
        "U+2066-U+2069, the zero width space U+200B and U+FEFF, the invisible operators "
        "U+2061-U+2064 and the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0). Tag "
        "characters (U+E0000-U+E007F) outside a subdivision flag draw nothing and are "
        "dropped. The note is dropped while the game's "
        "notes are off (GET /api/play/{token}/notes says whether they are). null, like a "
        "note of spaces only, is no note."
    ),
}
# The schema of each key an action may hold besides its own (ACTION_EXTRAS).
EXTRAS = {"name": {**SUIT, "description": "The suit named when leading an elixir."}}

MOVE_EXAMPLES = {
    "exchange": {
        "summary": "Give cards in an exchange (one per round)",
        "value": {"version": 0, "exchange": ["4S"]},
    },
    "play": {"summary": "Play a card", "value": {"version": 3, "play": "6H"}},
    "lead_elixir": {
        "summary": "Lead an elixir, naming the suit it stands for",
        "value": {"version": 3, "play": "4S", "name": "D"},
    },
    "swap": {"summary": "Give cards in a swap", "value": {"version": 12, "swap": ["2C", "7D"]}},
}

# A request refused before any operation: a NUL character in the path, the query string or a
# body sent with it, a body in chunks that cannot be read, a host the routing refuses.
NUL_REFUSED = {
    "description": (
        "The request cannot be read: the address, the query string or a body sent with it "
        "holds a NUL character, its body comes in chunks that cannot be read, or its Host "
        "is no name"
    ),
    "codes": ["bad_request"],
    "example": {"code": "bad_request", "message": NUL_IN_REQUEST},
}

# Every error answer of the API: its status, what it means, the codes it carries or a
# schema of its own, its headers, an example. Descriptions and messages may name a setting
# in braces, written out with its value.
ERRORS: dict[str, dict[str, Any]] = {
    "400": {
        "description": (
            "The body is not a well-formed move (malformed: the message says what is wrong; "
            "an object that names a key twice is one), "
            "or the request cannot be read (bad_request: a NUL character in the address, the "
            "query string or the body, a body in chunks that cannot be read, a Host that is "
            "no name)"
        ),
        "codes": ["malformed", "bad_request"],
        "example": {"code": "malformed", "message": 'unexpected key "cards" in an exchange action'},
    },
    "404": {
        "description": "Unknown, tampered or revoked link",
        "codes": ["not_found"],
        "example": {"code": "not_found", "message": "There is nothing at this address."},
    },
    "405": {
        "description": "This path does not take this method; the Allow header lists those it takes",
        "codes": ["method_not_allowed"],
        "example": {
            "code": "method_not_allowed",
            "message": "The method is not allowed for the requested URL.",
        },
        "headers": {
            "Allow": {
                "description": "The methods this path takes",
                "required": True,
                "schema": {"type": "string"},
            }
        },
    },
    "409": {
        "description": (
            "Stale version (another move came first: read the game again and move again), "
            "or the game takes no more moves; or, for a reminder, the opponent cannot be "
            "reminded now (refused: the message says why)"
        ),
        "codes": ["stale", "closed", "refused"],
        "example": {
            "code": "stale",
            "message": (
                "The game has moved on (version 5, you sent 4): reload it and make your move again."
            ),
        },
    },
    "413": {
        "description": "The body is larger than the {MAX_CONTENT_LENGTH} bytes the server reads",
        "codes": ["request_entity_too_large"],
        "example": {"code": "request_entity_too_large", "message": API_MESSAGES[413]},
    },
    "422": {
        "description": (
            "The rules forbid this move now; the message says why, and rule names the rule "
            "so a client can explain it in its own words"
        ),
        "schema": "IllegalMove",
        "example": {
            "code": "illegal",
            "rule": "choose_count",
            "message": "Give exactly 1 different card in the round 1 exchange.",
        },
    },
    "503": {
        "description": (
            "The database cannot be reached or did not answer in time: try again after the "
            "seconds Retry-After says. A move answered so may be sent again as it was: if it "
            "was applied after all, its version is stale (409)"
        ),
        "codes": ["service_unavailable"],
        "example": {"code": "service_unavailable", "message": API_MESSAGES[503]},
        "headers": {
            "Retry-After": {
                "description": f"Seconds to wait before trying again ({RETRY_AFTER})",
                "required": True,
                "schema": {"type": "integer"},
            }
        },
    },
}


def document() -> dict[str, Any]:
    """The document, with the server's public address."""
    token = {
        "name": "token",
        "in": "path",
        "required": True,
        "schema": {"type": "string", "minLength": 1, "maxLength": MAX_TOKEN},
        "description": "The signed token from the player's link.",
    }
    view = {"application/json": {"schema": _ref("View")}}
    etag = {"schema": {"type": "string"}, "description": "The version of this view's content."}
    token_from_request = {"token": "$request.path.token"}
    notes_of_game = {"operationId": "getNotes", "parameters": token_from_request}
    view_of_game = {"operationId": "getView", "parameters": token_from_request}
    move_against = {
        "operationId": "makeMove",
        "parameters": token_from_request,
        "requestBody": {"version": "$response.body#/version"},
        "description": "A move names the version it was made against: this view's.",
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Split Mind by Mail: player API",
            "version": "1.0.0",
            "description": (
                "Read your game and make your move with the token from your link. "
                "Every move names the version it was made against. Every error is "
                '`{"error": {"code", "message"}}`, and a move the rules refuse also names '
                "the `rule`."
            ),
        },
        "servers": [{"url": current_app.config["BASE_URL"]}],
        "paths": {
            "/api/play/{token}": {
                "parameters": [token],
                "get": {
                    "operationId": "getView",
                    "summary": "The game as your seat sees it",
                    "parameters": [
                        {
                            "name": "If-None-Match",
                            "in": "header",
                            "required": False,
                            "schema": {"type": "string"},
                            "description": "The ETag of the view you hold: 304 if it is unchanged.",
                        }
                    ],
                    "responses": {
                        "200": {
                            "description": "Your view of the game",
                            "headers": {"ETag": etag},
                            "content": view,
                            "links": {"makeMove": move_against, "getNotes": notes_of_game},
                        },
                        "304": {
                            "description": "Unchanged since the view whose ETag you sent",
                            "headers": {"ETag": etag},
                        },
                        "400": _response(NUL_REFUSED),
                        **_errors("404", "405", "413", "503"),
                    },
                },
                "post": {
                    "operationId": "makeMove",
                    "summary": "Make your move",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": _ref("Move"),
                                "examples": MOVE_EXAMPLES,
                            }
                        },
                    },
                    "responses": {
                        "200": {
                            "description": "The move was applied: your view of the game after it",
                            "content": view,
                            "links": {"makeNextMove": move_against},
                        },
                        **_errors("400", "404", "405", "413", "503"),
                        "409": {
                            **_error("409"),
                            "links": {
                                "getView": {
                                    "operationId": "getView",
                                    "parameters": token_from_request,
                                    "description": "Read the game again before moving again.",
                                }
                            },
                        },
                        **_errors("422"),
                    },
                },
            },
            "/api/play/{token}/resign": {
                "parameters": [token],
                "post": _on_seen_version(
                    "resign",
                    "Resign the game: your opponent wins it",
                    "Whoever owes the move. A game that has moved on since the version you saw "
                    "is not resigned (409 stale): look at it again first.",
                    "You resigned: your view of the game ended",
                    view,
                ),
            },
            "/api/play/{token}/remind": {
                "parameters": [token],
                "post": _on_seen_version(
                    "remindOpponent",
                    "Email your opponent that you await the move they owe",
                    "Once per move, once it has waited a day, and not while they are on "
                    "vacation (409 refused otherwise, the message saying why). A game that "
                    "has moved on since the version you saw reminds no one (409 stale).",
                    "Your opponent is reminded: your view of the game",
                    view,
                ),
            },
            "/api/play/{token}/notes": {
                "parameters": [token],
                "get": {
                    "operationId": "getNotes",
                    "summary": "Your opponent's latest notes",
                    "description": (
                        "They change only with a move (a new version of the view) or when "
                        "either player turns the game's notes off."
                    ),
                    "responses": {
                        "200": {
                            "description": "The notes, and whether the game takes any",
                            "content": {"application/json": {"schema": _ref("Notes")}},
                            "links": {"getView": view_of_game},
                        },
                        "400": _response(NUL_REFUSED),
                        **_errors("404", "405", "413", "503"),
                    },
                },
            },
            "/api/openapi.json": {
                "get": {
                    "operationId": "getOpenAPI",
                    "summary": "This document",
                    "responses": {
                        "200": {
                            "description": "The OpenAPI document of the player API",
                            "content": {"application/json": {"schema": {"type": "object"}}},
                        },
                        "400": _response(NUL_REFUSED),
                        **_errors("405", "413"),
                    },
                }
            },
        },
        "components": {"schemas": _schemas()},
    }


def _on_seen_version(
    operation: str, summary: str, description: str, done: str, view: dict[str, Any]
) -> dict[str, Any]:
    """An operation on the game as the player saw it, whose body is that version alone; it
    answers with the player's view (``done`` describes it)."""
    return {
        "operationId": operation,
        "summary": summary,
        "description": description,
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": _ref("SeenVersion"), "example": {"version": 14}}
            },
        },
        "responses": {
            "200": {"description": done, "content": view},
            **_errors("400", "404", "405", "409", "413", "503"),
        },
    }


def _ref(schema: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{schema}"}


def _errors(*statuses: str) -> dict[str, Any]:
    return {status: _error(status) for status in statuses}


def _error(status: str) -> dict[str, Any]:
    """The response of an error status, with its example."""
    return _response(ERRORS[status])


def _response(error: dict[str, Any]) -> dict[str, Any]:
    """The response of one kind of error: its schema, headers and example."""
    schema = (
        _error_schema(error["codes"]) if "codes" in error else _ref(error.get("schema", "Error"))
    )
    example = {
        **error["example"],
        "message": error["example"]["message"].format_map(current_app.config),
    }
    response: dict[str, Any] = {
        "description": error["description"].format_map(current_app.config),
        "content": {"application/json": {"schema": schema, "example": {"error": example}}},
    }
    if "headers" in error:
        response["headers"] = error["headers"]
    return response


def _error_schema(codes: list[str]) -> dict[str, Any]:
    """An error body whose code is one of ``codes``."""
    return {
        "allOf": [
            _ref("Error"),
            {"properties": {"error": {"properties": {"code": {"enum": codes}}}}},
        ]
    }


def _error_body(rule: bool) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "code": {"type": "string", "description": "A stable name for the kind of error."},
        "message": {"type": "string", "description": "What went wrong, in English."},
    }
    required = ["code", "message"]
    if rule:
        properties["code"] = {"const": "illegal"}
        properties["rule"] = {
            "type": "string",
            "description": "The rule that refused the move, such as not_held or choose_count.",
        }
        required.append("rule")
    return {
        "type": "object",
        "properties": {
            "error": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            }
        },
        "required": ["error"],
        "additionalProperties": False,
    }


def _action_shape(kind: str) -> dict[str, Any]:
    """A move of one kind: the version, the kind's own key, the keys it may add, nothing else."""
    value: dict[str, Any]
    if kind == "play":
        value = CARD
    else:
        value = {
            "type": "array",
            "items": CARD,
            "minItems": 1,
            # The printed rules' most: the only games the service deals.
            "maxItems": PRINTED.most_given(kind),
            "uniqueItems": True,
            "description": "The cards given; the view's legal.choose says how many.",
        }
    return {
        "type": "object",
        "properties": {
            "version": VERSION,
            "note": NOTE,
            kind: value,
            **{key: EXTRAS[key] for key in ACTION_EXTRAS[kind]},
        },
        "required": ["version", kind],
        "additionalProperties": False,
    }


def _move_name(kind: str) -> str:
    return f"{kind.capitalize()}Move"


def _object(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """An object that always holds each of ``properties`` (some may be null)."""
    return {"type": "object", "properties": properties, "required": list(properties), **extra}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"oneOf": [schema, {"type": "null"}]}


def _schemas() -> dict[str, Any]:
    cards = {"type": "array", "items": CARD}
    play_entry = {
        "type": "object",
        "properties": {"seat": SEAT, "card": CARD, "name": SUIT},
        "required": ["seat", "card"],
    }
    return {
        "Error": _error_body(rule=False),
        "IllegalMove": _error_body(rule=True),
        "SeenVersion": {
            "type": "object",
            "properties": {
                "version": {**VERSION, "description": "The version of the game you saw."}
            },
            "required": ["version"],
            "additionalProperties": False,
        },
        "Move": {
            "description": "The version you saw and exactly one action.",
            "oneOf": [_ref(_move_name(kind)) for kind in ACTION_KINDS],
        },
        **{_move_name(kind): _action_shape(kind) for kind in ACTION_KINDS},
        "Choice": _object(
            {"choose": {"type": "integer"}, "must_include_elixir": {"type": "boolean"}}
        ),
        "Trick": _object(
            {
                "round": {"type": "integer", "minimum": 1},
                "trick": {"type": "integer", "minimum": 1},
                "leader": SEAT,
                "cards": {"type": "array", "items": play_entry},
                "winner": SEAT,
                "effect": _nullable(
                    {
                        "type": "string",
                        "enum": [*EFFECTS.values(), "none"],
                        "description": "The elixir's effect; none when both cards are elixirs.",
                    }
                ),
                "outcome": {
                    "type": "string",
                    "pattern": "^(took|nothing|[0-9]*)$",
                    "description": (
                        "What the elixir did: took or nothing for a Steal, the cards each "
                        "gave for a Swap (0 once the hands are empty), empty otherwise."
                    ),
                },
                "text": {
                    "type": "string",
                    "description": "What the elixir did, in English; empty without one.",
                },
            },
            description="A trick played: its cards, its winner and what its elixir did.",
        ),
        "Transfer": _object(
            {
                "round": {"type": "integer", "minimum": 1},
                "kind": {"type": "string", "enum": list(CHOICE_PHASES)},
                "after_trick": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "The trick it followed; 0 for a round's exchange.",
                },
                "gave": cards,
                "received": cards,
            },
            description="An exchange or swap settled: the cards you gave and those you got.",
        ),
        "MatchScore": _object(
            {
                "game": {
                    "type": "integer",
                    "enum": [1, 2],
                    "description": "Which game of the match this is.",
                },
                "you": {"type": "integer", "description": "Your score in the match."},
                "opponent": {"type": "integer", "description": "Your opponent's score."},
                "over": {"type": "boolean"},
                "winner": _nullable({"type": "string", "enum": ["you", "opponent"]}),
                "draw": {"type": "boolean"},
                "ended_early": {
                    "type": "boolean",
                    "description": (
                        "A game of the match ended other than by play (a timeout, a "
                        "forfeit, an abandoned or cancelled game): the match ended with it, "
                        "won by that game's winner if it had one."
                    ),
                },
            },
            description="A return match, two games with the roles swapped, as you see it.",
        ),
        "Notes": _object(
            {
                "on": {
                    "type": "boolean",
                    "description": (
                        "Whether the game's notes are on: until either player turns them "
                        "off, for good; never against the computer, which neither reads "
                        "nor writes any. A move's note is dropped while they are off."
                    ),
                },
                "notes": {
                    "type": "array",
                    "items": {"type": "string"},
                    "maxItems": SHOWN,
                    "description": (
                        f"Your opponent's latest notes, at most {SHOWN}, oldest first; "
                        "none while notes are off. Plain text: escape it to show it in HTML."
                    ),
                },
            },
            description="The table talk of your game.",
        ),
        "View": _object(
            {
                "game": {"type": "integer"},
                "seat": SEAT,
                "you": {"type": "string", "description": "Your name, as the game gives it."},
                "opponent": {
                    "type": "string",
                    "description": (
                        "Your opponent's name; the computer's with its level, in the "
                        "language of the request."
                    ),
                },
                "names": {
                    **_object({"keeper": {"type": "string"}, "shadow": {"type": "string"}}),
                    "description": "Each seat's player by name.",
                },
                "opponent_computer": {
                    "type": "boolean",
                    "description": "Whether the computer plays the other seat: it has no deadline.",
                },
                "look": {
                    "type": "string",
                    "enum": list(LOOKS),
                    "description": "The cards' look on the game's pages.",
                },
                "round": {"type": "integer", "minimum": 1, "description": "1 to last_round."},
                "last_round": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "The round the Keeper must last (3 by the printed rules).",
                },
                "trick": {
                    "type": "integer",
                    "minimum": 1,
                    "description": (
                        "The trick of the round being played, 1 to tricks_per_round; one more "
                        "once the round's last trick is played."
                    ),
                },
                "phase": {"type": "string", "enum": list(PHASES)},
                "status": {"type": "string", "enum": list(GAME_STATUSES)},
                "version": {"type": "integer"},
                "your_turn": {"type": "boolean"},
                "choosing": {
                    "type": "boolean",
                    "description": (
                        "Your move is a secret choice of cards (an exchange or a swap) "
                        "made at the same time as your opponent's."
                    ),
                },
                "opponent_chosen": {
                    "type": "boolean",
                    "description": (
                        "In an exchange or a swap, your opponent has chosen their cards "
                        "(which stay hidden until you have chosen yours)."
                    ),
                },
                "to_act": {"type": "array", "items": SEAT},
                "leader": _nullable(SEAT),
                "hand": cards,
                "pending": {
                    **_nullable(cards),
                    "description": "The cards you chose in this exchange or swap, until both have.",
                },
                "opponent_cards": {"type": "integer"},
                "table": {"type": "array", "items": play_entry},
                "suit_order": {"type": "array", "items": SUIT},
                "tricks": TALLY,
                "track": {"type": "integer", "minimum": 0, "description": "0 to track_length."},
                "track_length": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "The track the Shadow must finish (10 by the printed rules).",
                },
                "tricks_per_round": {"type": "integer", "minimum": 1},
                "swap_size": {
                    "type": "integer",
                    "minimum": 1,
                    "description": (
                        "The cards each player gives on a Swap, fewer if the hands hold "
                        "fewer (2 by the printed rules)."
                    ),
                },
                "rounds": {
                    "type": "array",
                    "items": _object(
                        {
                            "keeper": {"type": "integer"},
                            "shadow": {"type": "integer"},
                            "moved": {
                                "type": "integer",
                                "description": "The difference in tricks.",
                            },
                            "advanced": {
                                "type": "integer",
                                "description": (
                                    "How far the round turned the track up: the "
                                    "difference, as far as the track's end."
                                ),
                            },
                        }
                    ),
                },
                "history": {"type": "array", "items": _ref("Trick")},
                "since": {
                    "type": "array",
                    "items": _ref("Trick"),
                    "description": "The tricks of history played since your own last move.",
                },
                "transfers": {
                    "type": "array",
                    "items": _ref("Transfer"),
                    "description": "Every exchange and swap settled, oldest first.",
                },
                "winner": _nullable(SEAT),
                "deadline": {
                    **_nullable({"type": "string", "format": "date-time"}),
                    "description": (
                        "When the move owed must be made, while the game is in play; null "
                        "without one."
                    ),
                },
                "match": {
                    **_nullable(_ref("MatchScore")),
                    "description": "The return match this game is part of, if it is.",
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
                        _ref("Choice"),
                    ],
                },
            }
        ),
    }
