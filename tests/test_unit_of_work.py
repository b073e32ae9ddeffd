"""The unit of work: the outermost block commits, inner blocks join, an error undoes it all."""

from __future__ import annotations

import logging

import pytest
from flask import Flask
from sqlalchemy import func, select

from service.models import Address, db
from service.unit_of_work import RolledBack, after_commit, transaction


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
