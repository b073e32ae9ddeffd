"""Schemathesis fuzzes the JSON API from its own OpenAPI document, and finds nothing.

It runs every phase an outside ``schemathesis run`` would (examples, coverage
with the methods the document leaves out, fuzzing, then the stateful phase
following the document's links from a view's version to a move) with every
check, on valid and invalid requests. It calls the app directly (WSGI, no
server) on PostgreSQL, set up as in production, with the real link of one seat
of a dealt game; the opponent answers each time it owes a move, so the game
moves on through its phases.

The run goes through Schemathesis's engine, the one behind ``schemathesis run``:
its pytest loader for fixtures (``schemathesis.pytest.from_fixture``) renames
test items through an attribute pytest 9.2 no longer has.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
import schemathesis
from flask import Flask
from schemathesis.engine import events, from_schema

from service import games
from service.games import Seating, create_game
from service.links import token_for
from service.models import Player, db
from service.perspective import player_view
from service.rules import SEATS, other
from service.unit_of_work import transaction

from .helpers import pick_action

pytestmark = pytest.mark.postgres

# Statuses that answer a request the document allows: a view may be unchanged since the
# ETag sent (304, and If-None-Match: * matches any), a move may be stale (409) or
# illegal in the game's state (422), which no schema can say in advance.
ACCEPTED = [200, 304, 409, 422]
# The status that refuses a request the document forbids: 400, whatever the game's state.
REFUSED = [400]
Answer = tuple[str, str, int | None]  # phase, method, status


@pytest.fixture
def app_config() -> dict[str, Any]:
    """Production settings; mail stays in the outbox, so this server is never called."""
    return {
        "SPLITMIND_ENV": "production",
        "SECRET_KEY": "a production-length key for the fuzzed app",
        "BASE_URL": "https://splitmind.test",
        "MAIL_SERVER": "127.0.0.1",
        "MAIL_DEFAULT_SENDER": "Split Mind <play@splitmind.test>",
        "TESTING": False,
    }


def fuzz_config(token: str) -> schemathesis.Config:
    """Every check, both kinds of data, a bounded and repeatable run, on this link."""
    return schemathesis.Config.from_dict(
        {
            "seed": 5,
            "generation": {"mode": "all", "max-examples": 25, "deterministic": True},
            "checks": {
                "positive_data_acceptance": {"expected-statuses": ACCEPTED},
                "negative_data_rejection": {"expected-statuses": REFUSED},
            },
            # Follow the version link even after refusals: most random cards are not
            # in the hand, and the moves that are must still name the current version.
            # Ten scenarios of up to six steps reach every answer (200, 304, 400, 409
            # and 422) for either seat; 25 took two fifths of the run for no more.
            "phases": {"stateful": {"link-calibration": False, "generation": {"max-examples": 10}}},
            "parameters": {"path.token": token},
        }
    )


def answer_as_opponent(app: Flask, player_id: int, rng: random.Random) -> None:
    """The opponent of the fuzzed seat makes a random legal move whenever it owes one."""
    with app.app_context():
        opponent = db.session.get(Player, player_id)
        assert opponent is not None
        view = player_view(opponent)
        if view["your_turn"]:
            with transaction():
                games.apply_move(opponent.id, view["version"], pick_action(view, rng))


def run_schemathesis(schema: schemathesis.BaseSchema) -> tuple[list[str], Counter[Answer]]:
    """Every failure Schemathesis reports, and how often each phase got each answer."""
    failures: dict[str, None] = {}  # in order, once each
    answers: Counter[Answer] = Counter()
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            for checks in event.recorder.checks.values():
                for info in (check.failure_info for check in checks if check.failure_info):
                    found = info.failure
                    report = (
                        f"{found.operation}: {found.title}\n{found.message}\n{info.code_sample}"
                    )
                    failures[report] = None
            for interaction in event.recorder.interactions.values():
                status = interaction.response.status_code if interaction.response else None
                answers[event.phase.value, interaction.request.method, status] += 1
        elif isinstance(event, events.NonFatalError):
            failures[f"{event.label}: {event.info}"] = None
        elif isinstance(event, events.FatalError):
            failures[f"Schemathesis stopped: {event.exception!r}"] = None
        elif isinstance(event, events.EngineFinished):
            failures.update(dict.fromkeys(f"{f.title}\n{f.message}" for f in event.failures))
    return list(failures), answers


@pytest.mark.parametrize("seat", SEATS)
@pytest.mark.slow
def test_schemathesis_finds_nothing(pg_app: Flask, seat: str) -> None:
    """No server error, undocumented answer, refused valid move or accepted invalid one."""
    with pg_app.app_context(), transaction():
        game = create_game(
            Seating("kim@example.com", "Kim"), Seating("sam@example.com", "Sam"), seed=5
        )
        token = token_for(game.player(seat))
        opponent = game.player(other(seat)).id
    schema = schemathesis.openapi.from_wsgi("/api/openapi.json", pg_app, config=fuzz_config(token))
    rng = random.Random(5)

    @schema.hook
    def after_call(
        context: schemathesis.HookContext, case: schemathesis.Case, response: schemathesis.Response
    ) -> None:
        answer_as_opponent(pg_app, opponent, rng)

    failures, answers = run_schemathesis(schema)
    assert not failures, "\n\n".join(failures)
    # The run tried a method the document leaves out, and followed the links: a
    # move reaches the rules (422) only when it names the version the view gave.
    assert answers["coverage", "TRACE", 405] and answers["stateful", "POST", 422], answers
