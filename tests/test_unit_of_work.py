"""The unit of work: the outermost block commits, inner blocks join, an error undoes it all."""

from __future__ import annotations

import ast
import logging
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select

import service
from service import games
from service.models import Address, Event, Game, OutboxMessage, Player, db
from service.rules import to_act
from service.unit_of_work import RolledBack, after_commit, transaction

from .helpers import pick_action

pytestmark = pytest.mark.both_backends


def committed_addresses() -> int:
    """Addresses another connection can see: only what has been committed."""
    with db.engine.connect() as other:
        return other.scalar(select(func.count()).select_from(Address))


def test_the_outermost_block_commits_and_an_inner_one_does_not(ctx: Flask) -> None:
    with transaction():
        with transaction():
            db.session.add(Address(email="kim@example.com"))
        db.session.flush()
        assert committed_addresses() == 0
        with transaction():
            db.session.add(Address(email="sam@example.com"))
        assert committed_addresses() == 0
    assert committed_addresses() == 2


def test_an_exception_rolls_back_every_block(ctx: Flask) -> None:
    with pytest.raises(LookupError), transaction():
        db.session.add(Address(email="kim@example.com"))
        with transaction():
            db.session.add(Address(email="sam@example.com"))
            db.session.flush()
            raise LookupError("the second step fails")
    assert committed_addresses() == 0
    assert db.session.scalars(select(Address)).all() == []


def test_an_inner_failure_caught_in_the_outer_block_still_rolls_back(ctx: Flask) -> None:
    with pytest.raises(RolledBack), transaction():
        db.session.add(Address(email="kim@example.com"))
        try:
            with transaction():
                db.session.add(Address(email="sam@example.com"))
                raise LookupError("the second step fails")
        except LookupError:
            pass
    assert committed_addresses() == 0


def test_after_commit_actions_run_only_after_a_commit(ctx: Flask) -> None:
    seen: list[str] = []
    with transaction():
        db.session.add(Address(email="kim@example.com"))
        with transaction():
            after_commit(lambda: seen.append(f"after the commit: {committed_addresses()}"))
        assert seen == []
    assert seen == ["after the commit: 1"]
    with pytest.raises(LookupError), transaction():
        after_commit(lambda: seen.append("after a rollback"))
        raise LookupError("nothing is committed")
    assert seen == ["after the commit: 1"]


def test_a_failing_after_commit_action_is_logged_and_the_rest_run(
    ctx: Flask, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[str] = []
    with caplog.at_level(logging.ERROR, logger="service.unit_of_work"), transaction():
        db.session.add(Address(email="kim@example.com"))
        after_commit(lambda: 1 / 0)
        after_commit(lambda: seen.append("next"))
    assert seen == ["next"] and committed_addresses() == 1
    assert "an action after the commit failed" in caplog.text


def test_after_commit_needs_a_transaction(ctx: Flask) -> None:
    with pytest.raises(RuntimeError, match="inside a transaction"):
        after_commit(lambda: None)


def committed_version(game_id: int) -> int:
    """The game's version as another connection sees it."""
    with db.engine.connect() as other:
        return other.scalar(select(Game.version).where(Game.id == game_id))


def next_move(game: Game, rng: random.Random) -> tuple[Player, int, dict[str, Any]]:
    """Whoever owes a move, the version they see and a legal move of theirs."""
    player = game.player(to_act(game.state)[0])
    view = games.player_view(player)
    return player, view["version"], pick_action(view, rng)


def test_a_move_can_follow_another_inside_one_transaction(
    app: Flask, make_game: Callable[..., dict[str, Any]]
) -> None:
    """As a computer's reply follows a human's move: the same rules, one commit."""
    game_id = make_game(seed=5)["id"]
    rng = random.Random(5)
    with app.app_context():
        game = db.session.get(Game, game_id)
        with transaction():
            for _ in range(2):
                player, version, action = next_move(game, rng)
                games.apply_move(player.id, version, action)
            assert (game.version, committed_version(game_id)) == (2, 0)
        assert committed_version(game_id) == 2
        moves = db.session.scalars(
            select(Event.seat).where(Event.game_id == game_id, Event.kind == "move")
        ).all()
        assert sorted(moves) == ["keeper", "shadow"]


def test_a_refused_second_move_undoes_the_first(
    app: Flask, make_game: Callable[..., dict[str, Any]]
) -> None:
    game_id = make_game(seed=5)["id"]
    rng = random.Random(5)
    with app.app_context():
        queued = db.session.scalar(select(func.count()).select_from(OutboxMessage))
        game = db.session.get(Game, game_id)
        with pytest.raises(games.StaleVersion), transaction():
            player, version, action = next_move(game, rng)
            games.apply_move(player.id, version, action)
            player, _, action = next_move(game, rng)
            games.apply_move(player.id, 99, action)  # a version the game never had
        db.session.expire_all()
        assert (game.version, committed_version(game_id)) == (0, 0)
        assert db.session.scalars(select(Event.kind).where(Event.game_id == game_id)).all() == [
            "created"
        ]
        assert db.session.scalar(select(func.count()).select_from(OutboxMessage)) == queued


def commits_outside_the_unit_of_work(package: Path) -> list[str]:
    """Every ``….commit()`` call in the package but in :mod:`service.unit_of_work`."""
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "unit_of_work.py" and path.parent == package:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "commit"
            ):
                found.append(f"{path.relative_to(package.parent)}:{node.lineno}")
    return found


def test_only_the_unit_of_work_commits(tmp_path: Path) -> None:
    """A service function that commits could not be combined with another: use transaction()."""
    package = Path(service.__file__).parent
    assert commits_outside_the_unit_of_work(package) == []
    # The check finds one when there is one.
    copy = tmp_path / "service"
    (copy / "mail").mkdir(parents=True)
    (copy / "unit_of_work.py").write_text("db.session.commit()\n")
    (copy / "mail" / "worker.py").write_text("def f():\n    db.session.commit()\n")
    assert commits_outside_the_unit_of_work(copy) == ["service/mail/worker.py:2"]
