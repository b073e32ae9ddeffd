"""Erasing an address: nothing of it left, its finished games and their figures kept."""

from __future__ import annotations

import time
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select, text

from service import address_change, audit, erasure, games, invitations
from service.addresses import lock_address, settings_for
from service.models import (
    Address,
    AddressSettings,
    AdminAction,
    Base,
    Event,
    Game,
    GameFigures,
    InboundReply,
    OutboxMessage,
    Player,
    db,
)
from service.rematch_rules import blocked
from service.unit_of_work import transaction

from .factories import played
from .helpers import second_behind_first

pytestmark = pytest.mark.parametrize("app", ["postgres"], indirect=True)

KIM = "kim@example.com"


def rows_naming(app: Flask, words: str) -> dict[str, int]:
    """How many rows of each table hold ``words`` anywhere, in any case (a whole row read as
    text): those of the tables that do."""
    found = {}
    with app.app_context():
        for table in Base.metadata.sorted_tables:
            count = db.session.scalar(
                text(f"SELECT count(*) FROM {table.name} AS t WHERE t::text ILIKE :words"),
                {"words": f"%{words}%"},
            )
            if count:
                found[table.name] = count
    return found


def finished_with_traces(app: Flask, make_game) -> dict[str, Any]:
    """A game Kim played to its end, with what the service keeps of her besides: settings,
    an email sent, a reply read, a note to Sam, and an admin's note naming her address."""
    game = make_game(seed=4, keeper_name="Kimberly")
    played(app, game["id"], 4, emails=False)
    with app.app_context(), transaction():
        kim = db.session.scalars(
            select(Player).where(Player.game_id == game["id"], Player.seat == "keeper")
        ).one()
        db.session.merge(AddressSettings(email=KIM, language="fr", time_zone="Europe/Paris"))
        db.session.merge(Address(email=KIM))
        db.session.add(InboundReply(message_id="<r@kim>", player_id=kim.id, outcome="applied"))
        move = db.session.scalars(
            select(Event).where(Event.game_id == game["id"], Event.seat == "keeper").limit(1)
        ).one()
        move.note = "see you Tuesday, Kimberly"
        audit.record("ann", "correct_address", f"corrected the Keeper's address to {KIM}",
                     game_id=game["id"])  # fmt: skip
        db.session.add(
            OutboxMessage(
                kind="turn",
                status="sent",
                game_id=game["id"],
                player_id=kim.id,
                recipient=KIM,
                subject="s",
                text_body=f"to {KIM}",
                html_body="h",
                message_id="<m@kim>",
            )  # fmt: skip
        )
    return game


def test_erasing_an_address_leaves_none_of_it_and_keeps_its_finished_games(
    app: Flask, make_game, runner, client: FlaskClient
) -> None:
    game = finished_with_traces(app, make_game)
    with app.app_context():
        figures_before = db.session.get(GameFigures, game["id"])
        assert figures_before is not None
        winner = figures_before.winner
    assert rows_naming(app, KIM) and rows_naming(app, "Kimberly")
    done = runner.invoke(args=["games", "erase-address", "Kim@Example.com", "--by", "ops", "--yes"])
    assert done.exit_code == 0, done.output
    assert "1 finished game" in done.output
    assert rows_naming(app, KIM) == {}
    assert rows_naming(app, "Kimberly") == {}
    with app.app_context():
        stored = db.session.get_one(Game, game["id"])
        assert stored.status == "finished" and len(stored.players) == 2
        keeper = stored.player("keeper")
        assert keeper.link_key is None and not keeper.notify
        assert db.session.get_one(GameFigures, game["id"]).winner == winner
        entry = db.session.scalars(
            select(AdminAction).where(AdminAction.action == "erase_address")
        ).one()
        assert entry.admin == "the command line (ops)" and entry.game_id is None
    # Sam still reads the game, and its review.
    assert client.get(f"/play/{game['shadow']}").status_code == 200
    assert client.get(f"/play/{game['keeper']}").status_code == 404


def test_an_address_that_stopped_emails_stays_stopped_once_erased(
    app: Flask, make_game, runner
) -> None:
    """A stop is the one thing kept: else anyone could invite the address again."""
    game = make_game(seed=4)
    played(app, game["id"], 4, emails=False)
    with app.app_context(), transaction():
        invitations.stop_all_emails(KIM)
    done = runner.invoke(args=["games", "erase-address", KIM, "--by", "ops", "--yes"])
    assert done.exit_code == 0, done.output
    with app.app_context():
        assert blocked(KIM)
        address = db.session.get_one(Address, KIM)
        assert address.confirmed_at is None and address.bounce_reply is None
        assert db.session.get(AddressSettings, KIM) is None
        assert db.session.scalar(select(func.count()).where(Player.email == KIM)) == 0


def test_an_address_in_a_game_in_play_is_not_erased(app: Flask, make_game, runner) -> None:
    """Its opponent still plays it: the game is ended first (cancelled, say)."""
    game = make_game(seed=4)
    refused = runner.invoke(args=["games", "erase-address", KIM, "--by", "ops", "--yes"])
    assert refused.exit_code != 0
    assert f"game {game['id']}" in refused.output
    assert rows_naming(app, KIM)["players"] == 1
    with app.app_context():
        assert db.session.scalar(select(func.count(AdminAction.id))) == 0


def test_erasing_an_address_never_seen_says_so(app: Flask, runner) -> None:
    done = runner.invoke(
        args=["games", "erase-address", "nobody@example.com", "--by", "ops", "--yes"]
    )
    assert done.exit_code == 0, done.output
    assert "Nothing was stored of that address" in done.output
    assert rows_naming(app, "nobody@example.com") == {}


@pytest.mark.parametrize("text", ["example.com", "kim", "@example.com", "a"])
def test_text_that_is_no_address_erases_nothing(app: Flask, make_game, runner, text) -> None:
    """Part of an address would be found in every email and note that holds it: refused."""
    finished_with_traces(app, make_game)
    before = rows_naming(app, "example.com")
    with app.app_context():
        emails = db.session.scalar(select(func.count(OutboxMessage.id)))
    refused = runner.invoke(args=["games", "erase-address", text, "--by", "ops", "--yes"])
    assert refused.exit_code != 0
    assert "is not an email address" in refused.output
    assert rows_naming(app, "example.com") == before
    with app.app_context():
        assert db.session.scalar(select(func.count(OutboxMessage.id))) == emails
        assert not db.session.scalars(
            select(AdminAction).where(AdminAction.action == "erase_address")
        ).all()


def test_an_address_whose_games_moved_leaves_none_of_it_in_their_logs(
    app: Flask, make_game, runner
) -> None:
    """Kim moved her games to another address: erasing the old one takes it out of the logs
    of the games that moved, which are no longer its own."""
    game = make_game(seed=4)
    with app.app_context(), transaction():
        settings = settings_for(KIM)
        assert settings is not None and settings.home_key is not None
        moving = address_change.Confirmation(
            KIM, "kim@newjob.example", settings.home_key, int(time.time())
        )
        address_change.move(moving)
    assert rows_naming(app, KIM)["events"] == 1
    done = runner.invoke(args=["games", "erase-address", KIM, "--by", "ops", "--yes"])
    assert done.exit_code == 0, done.output
    assert rows_naming(app, KIM) == {}
    with app.app_context():
        logged = select(Event.note).where(
            Event.game_id == game["id"], Event.kind == address_change.MOVE_ADDRESS
        )
        assert "kim@newjob.example" in db.session.scalars(logged).one()


def test_a_request_in_the_name_of_an_address_as_it_is_erased_waits_and_then_applies(
    app: Flask, make_game, postgres_database: str
) -> None:
    """Kim asks for her games' links as her address is erased: the request waits for the
    erasure's commit, then finds the address as new here, and the email goes."""
    game = make_game(seed=4)
    with app.app_context(), transaction():
        games.cancel_game(game["id"], "ops")
        lock_address(KIM)  # the address's row, as any request in its name writes

    def asks() -> None:
        with app.app_context(), transaction():
            invitations.send_links(KIM, None)

    errors = second_behind_first(
        app,
        postgres_database,
        lambda: lock_address(KIM),
        asks,
        first_ends=lambda: erasure.erase_address(KIM, "ops"),
    )
    assert errors == []
    with app.app_context():
        queued = select(OutboxMessage.recipient).where(OutboxMessage.kind == "your_games")
        assert db.session.scalars(queued).all() == [KIM]


def test_an_address_inside_a_longer_one_is_left_alone(app: Flask, make_game, runner) -> None:
    """Erasing kim@example.com takes nothing of joakim@example.com, kim@example.com.au or
    kim@example.community: only the address itself, wherever it is written whole."""
    finished_with_traces(app, make_game)
    others = ["joakim@example.com", "kim@example.com.au", "kim@example.community"]
    with app.app_context(), transaction():
        for n, other in enumerate(others):
            audit.record("ann", "note", f"wrote to {other}, not {KIM}.")
            db.session.add(
                OutboxMessage(
                    kind="your_games",
                    status="sent",
                    recipient=other,
                    subject="s",
                    text_body=f"to {other}.",
                    html_body=f"<a href='mailto:{other}'>{other}</a>",
                    message_id=f"<other{n}@example.org>",
                )
            )
    done = runner.invoke(args=["games", "erase-address", KIM, "--by", "ops", "--yes"])
    assert done.exit_code == 0, done.output
    with app.app_context():
        for other in others:
            assert (
                db.session.scalar(
                    select(func.count(OutboxMessage.id)).where(OutboxMessage.recipient == other)
                )
                == 1
            ), other
        notes = db.session.scalars(
            select(AdminAction.note).where(AdminAction.action == "note")
        ).all()
    assert sorted(notes) == sorted(
        f"wrote to {other}, not {erasure.ERASED_ADDRESS}." for other in others
    )
    assert rows_naming(app, "Kimberly") == {}
