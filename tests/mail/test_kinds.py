"""Each kind of email is one registry entry and two templates; the worker knows nothing of games."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

import service.invitations
import service.notify
from service.mail import kinds, queue, withdraw, worker
from service.mail.compose import Email
from service.models import Game, OutboxMessage, db

pytestmark = pytest.mark.both_backends


TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "email"
# What the worker must not reach for: the game side registers what it needs to know.
GAME_SIDE = (
    "service.models.Game",
    "service.models.Player",
    "service.rules",
    "service.games",
    "service.notify",
    "service.invitations",
)


def imported_names(path: Path, package: str) -> set[str]:
    """Every module and every name a module imports, relative imports resolved.

    ``from ..models import Game`` in ``service.mail`` gives ``service.models``
    and ``service.models.Game``.
    """
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            base = parts[: len(parts) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            found.add(module)
            found |= {f"{module}.{alias.name}" for alias in node.names}
    return found


def test_each_kind_has_its_templates_and_each_template_a_kind() -> None:
    """``_``-named files are parts the emails include, not emails."""
    assert service.notify and service.invitations  # they register the kinds they send
    emails = {path.name for path in TEMPLATES.iterdir() if not path.name.startswith("_")}
    missing = {f"{name}.{suffix}" for name in kinds.KINDS for suffix in ("txt", "html")} - emails
    assert not missing, f"registered kinds without their templates: {sorted(missing)}"
    unregistered = {name for name in emails if name.rpartition(".")[0] not in kinds.KINDS}
    assert not unregistered, f"templates of no registered kind: {sorted(unregistered)}"


def test_a_kind_is_registered_once() -> None:
    with pytest.raises(ValueError, match="'turn' is already registered"):
        kinds.register(kinds.Kind("turn"))


def test_an_email_of_no_registered_kind_is_not_queued(pg_app: Flask) -> None:
    with pg_app.app_context(), pytest.raises(LookupError, match="no email kind 'postcard'"):
        queue(Email("Hi", "Hi", "<p>Hi</p>"), kind="postcard", recipient="kim@example.com")


def test_a_kind_that_replaces_a_queued_email_is_only_its_entry(
    app: Flask, make_game, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second such kind keeps one email waiting per player, as turn emails do, with no index
    of its own: the database refuses a second one, and a withdrawn one is not sent."""
    monkeypatch.setitem(kinds.KINDS, "nudge", kinds.Kind("nudge", replaces_queued=True))
    game = make_game()
    with app.app_context():
        player = db.session.get(Game, game["id"]).player("shadow")
        for subject in ("first", "second"):
            for kind in ("nudge", "turn"):
                email = Email(subject, subject, subject)
                queue(email, kind=kind, recipient=player.email, player=player)
        db.session.commit()
        waiting = select(OutboxMessage.kind, OutboxMessage.subject).where(
            OutboxMessage.player_id == player.id,
            OutboxMessage.kind.in_(("nudge", "turn")),
            OutboxMessage.status == "queued",
        )
        assert sorted(db.session.execute(waiting).all()) == [
            ("nudge", "second"),
            ("turn", "second"),
        ]
        db.session.add(
            OutboxMessage(
                kind="nudge",
                replace_key=f"nudge:{player.id}",
                recipient=player.email,
                subject="third",
                text_body="",
                html_body="",
                message_id="<third@example.com>",
            )
        )
        with pytest.raises(IntegrityError):
            db.session.flush()
        db.session.rollback()
        withdraw("nudge", player.id)
        db.session.commit()
        assert db.session.execute(waiting).all() == [("turn", "second")]
        with pytest.raises(ValueError, match="a round_end email does not replace an unsent one"):
            withdraw("round_end", player.id)


def test_the_worker_knows_nothing_of_games() -> None:
    imported = imported_names(Path(worker.__file__), "service.mail")
    assert {"service.models.OutboxMessage", "service.mail.kinds"} <= imported
    reached = {name for name in imported if name.startswith(GAME_SIDE)}
    assert not reached, f"the worker imports {sorted(reached)}"
