"""Every email template, rendered for a known game and compared with its saved snapshot.

Each email is rendered for English readers (``snapshots/email/<kind>.txt`` and
``.html``) and for French readers (``snapshots/email/fr/``). Run with
``UPDATE_SNAPSHOTS=1`` to rewrite the snapshots after a deliberate change.
"""

from __future__ import annotations

import os
import random
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import time_machine
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service import games, homes, invitations
from service.deadlines import sweep
from service.models import Game, OutboxMessage, db
from service.unit_of_work import transaction

from ..factories import one_by_one, played
from ..helpers import kim_owes_after_sam_wrote
from .test_invitations import last_link

SNAPSHOTS = Path(__file__).resolve().parents[1] / "snapshots" / "email"
NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
KINDS = (
    "invitation", "turn", "round_end", "game_over", "reminder", "game_ended", "link",
    "confirm_address", "invite_opponent", "declined", "your_games", "digest", "deadline_extended",
    "reminded",
)  # fmt: skip


# Words that give away English left in a French email (links are removed first).
ENGLISH = re.compile(
    r"\b(the|you|your|hello|round|trick|track|game|move|link|wins?|won|emails?|rules?)\b", re.I
)


LINK = r"/(play|me|unsubscribe|rematch|invitations)/[A-Za-z0-9_.\-]+"


def normalise(text: str) -> str:
    """Links carry random keys: replace them with a placeholder."""
    return re.sub(LINK, r"/\1/TOKEN", text)


def first_of_each_kind(app: Flask) -> dict[str, OutboxMessage]:
    """The first email of each kind; of the turn emails, its player's last in that game.

    That one also says what the trick before it did. The emails a move queues for both
    players are written by one statement, in no set order: of those, Kim's.
    """
    with app.app_context():
        rows = db.session.scalars(select(OutboxMessage).order_by(OutboxMessage.id)).all()
        db.session.expunge_all()
    found: dict[str, OutboxMessage] = {}
    for number, row in enumerate(rows):
        following = rows[number + 1] if number + 1 < len(rows) else None
        if following is not None and row.recipient != "kim@example.com":
            same = (following.kind, following.game_id) == (row.kind, row.game_id)
            row = following if same and following.recipient == "kim@example.com" else row
        found.setdefault(row.kind, row)
    if "turn" in found:
        player = found["turn"].player_id
        found["turn"] = [r for r in rows if r.kind == "turn" and r.player_id == player][-1]
    return found


def invite(app: Flask, language: str) -> None:
    """Ann asks for a game against Bob, from a page in ``language``."""
    with app.app_context(), transaction():
        invitations.request_game(
            invitations.Request(
                name="Ann",
                email="ann@example.com",
                opponent_name="Bob",
                opponent_email="bob@example.com",
                role="keeper",
                match=False,
                days_per_move=5,
                language=language,
            )
        )


@pytest.fixture(params=["en", "fr"])
def language(request: pytest.FixtureRequest) -> str:
    """The language every player of the snapshot games reads."""
    return request.param


@pytest.fixture
def emails(
    app: Flask, client: FlaskClient, make_game, smtp_server, deliver, language: str
) -> dict[str, OutboxMessage]:
    """One email of each kind, from games played at a fixed time with fixed seeds.

    The worker sends each as soon as it is queued, so each says what was so then.
    """
    readers = {"keeper_language": language, "shadow_language": language}
    with time_machine.travel(NOW, tick=False):
        first = make_game(seed=101, days_per_move=3, **readers)
        deliver()
        for _ in one_by_one(app, first["id"], 1):
            deliver()
        second = make_game(seed=102, days_per_move=3, **readers)
        deliver()
        with app.app_context():
            deadline = db.session.get(Game, second["id"]).deadline
            sweep(deadline - timedelta(hours=12))
            deliver()
            with transaction():  # a game's link is resent while it is open
                games.resend_link(db.session.get(Game, second["id"]).player("keeper").id, "admin")
            deliver()
            sweep(deadline + timedelta(hours=1))
            deliver()
        third = make_game(seed=103, days_per_move=3, **readers)
        deliver()
        with app.app_context(), transaction():
            invitations.send_links("kim@example.com", language)
        invite(app, language)
        deliver()
        client.post(last_link(smtp_server, "ann@example.com", "/invitations/"))
        deliver()
        client.post(
            last_link(smtp_server, "bob@example.com", "/invitations/"), data={"answer": "decline"}
        )
        deliver()
        # The digest below tells of the exchange, a trick and Sam's notes in the third game.
        notes = ["Good luck!", "Well done & have fun <3"]
        kim_owes_after_sam_wrote(client, third, random.Random(103), notes)
        deliver()
        with app.app_context():
            with transaction():
                homes.set_email_policy("kim@example.com", "digest", digest_hour=9)
                homes.set_language("kim@example.com", language)
            sweep(NOW)
        deliver()
        # Made last, so that the digest above does not list it.
        extended = make_game(seed=104, days_per_move=3, **readers)
        with app.app_context(), transaction():
            games.extend_deadline(extended["id"], 2, actor="admin")
        deliver()
    # Two days on, Sam reminds Kim of the move she owes in the third game.
    with time_machine.travel(NOW + timedelta(days=2), tick=False):
        with app.app_context(), transaction():
            waiting = db.session.get_one(Game, third["id"])
            games.remind_opponent(waiting.player("shadow").id, waiting.version)
        deliver()
    return first_of_each_kind(app)


def matches_its_snapshot(emails: dict[str, OutboxMessage], language: str) -> None:
    """Each kind of email is written as its saved snapshot says."""
    assert set(KINDS) <= set(emails), f"missing kinds: {set(KINDS) - set(emails)}"
    update = os.environ.get("UPDATE_SNAPSHOTS") == "1"
    folder = SNAPSHOTS / language if language != "en" else SNAPSHOTS
    for kind in KINDS:
        message = emails[kind]
        rendered = {
            "txt": f"Subject: {message.subject}\nTo: {message.recipient}\n\n"
            + normalise(message.text_body),
            "html": normalise(message.html_body),
        }
        for suffix, text in rendered.items():
            path = folder / f"{kind}.{suffix}"
            if update or not path.exists():
                assert update, f"no snapshot {path.name}: run with UPDATE_SNAPSHOTS=1"
                folder.mkdir(exist_ok=True)
                path.write_text(text)
            assert text == path.read_text(), f"{path.name} differs from its snapshot"


@pytest.mark.slow
def test_every_email_is_written_out_and_matches_its_snapshot(
    emails: dict[str, OutboxMessage], language: str
) -> None:
    """No template syntax or placeholder left, and no English in a French email; then each
    email against its snapshot (one test, as the emails take a whole game to make)."""
    for kind, message in emails.items():
        text = f"{message.subject}\n{message.text_body}\n{message.html_body}"
        for syntax in ("{{", "}}", "{%", "%}", "%(", "{#"):
            assert syntax not in text, (kind, syntax)
        assert f'<html lang="{language}">' in message.html_body
        if language == "fr":
            words = re.sub(r"https?://\S+|<[^>]+>", " ", text).replace("Split Mind by Mail", "")
            assert not ENGLISH.findall(words), (kind, ENGLISH.findall(words))
    matches_its_snapshot(emails, language)


def test_a_game_ended_before_its_round_says_in_which_round(
    app: Flask, make_game, smtp_server, deliver
) -> None:
    """Cancelled once round 1 is over: round 2 is dealt, not played ("after round 2" would
    count it)."""
    game = make_game(seed=9)
    played(app, game["id"], 9, until=lambda view: len(view["rounds"]) >= 1)
    with app.app_context(), transaction():
        games.cancel_game(game["id"], "admin", "a test")
    deliver()
    ended = [r.text for r in smtp_server.received if "Game over" in r.text]
    assert len(ended) == 2 and all("Game over in round 2." in text for text in ended), ended


def test_names_cannot_inject_headers(app: Flask, smtp_server, deliver) -> None:
    with app.app_context(), transaction():
        games.create_game(
            games.Seating("kim@example.com", "Eve\r\nBcc: evil"),
            games.Seating("sam@example.com", "Sam\nSubject: free money"),
        )
    deliver()
    assert all(
        m.envelope_to in (["kim@example.com"], ["sam@example.com"]) for m in smtp_server.received
    )
    for received in smtp_server.received:
        headers = {key.lower() for key in received.message}
        assert "bcc" not in headers
        subjects = received.message.get_all("Subject")
        assert len(subjects) == 1 and "\n" not in str(subjects[0])
    with app.app_context():
        names = db.session.scalars(select(Game)).one().players
        assert {p.name for p in names} == {"Eve Bcc: evil", "Sam Subject: free money"}
