"""An email's headers as the SMTP server receives them: ASCII as written, the rest encoded.

The tests read the raw bytes: a parser decodes what an encoded word hides,
and mail clients take a ``List-Unsubscribe`` only as written (RFC 2369, 8058).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from email import message_from_bytes, policy
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.mail.worker import Outgoing, folded_at_spaces
from service.models import OutboxMessage, db

from ..helpers import moves_delivered
from ..smtp import Received, SMTPServer

SENDER = "Partie à deux <jeu@splitmind.test>"
# The headers the service writes in ASCII: each goes out as written.
ASCII = ("List-Unsubscribe", "List-Unsubscribe-Post", "Reply-To", "Message-ID", "In-Reply-To")
ASCII += ("References", "Auto-Submitted")


@pytest.fixture
def app_config(mail_config: dict[str, Any]) -> dict[str, Any]:
    return {**mail_config, "REPLY_ADDRESS": "play@splitmind.test", "MAIL_DEFAULT_SENDER": SENDER}


def header_lines(received: Received) -> dict[str, list[str]]:
    """The lines of each header of the message as it came, by name (the folds kept)."""
    head = re.split(rb"\r?\n\r?\n", received.raw, maxsplit=1)[0].decode("ascii")
    headers: dict[str, list[str]] = {}
    # Each header starts a line; a line that starts with white space continues the one before.
    for field in re.split(r"\r?\n(?![ \t])", head):
        headers[field.split(":", 1)[0]] = re.split(r"\r?\n", field)
    return headers


def test_ascii_headers_go_out_as_written(
    app: Flask,
    client: FlaskClient,
    make_game: Callable[..., dict[str, Any]],
    smtp_server: SMTPServer,
    deliver: Callable[[], int],
) -> None:
    """Unencoded, folded at spaces only, each link whole on one line; a French subject and a
    sender's name with accents encoded, and read back as they were."""
    game = make_game(seed=11, keeper_language="fr")
    deliver()
    moves_delivered(client, game, deliver, 4)
    threaded = [r for r in smtp_server.received if r.message["References"]]
    assert threaded and len(smtp_server.received) > len(threaded)
    assert any(r.message["Reply-To"] for r in threaded)
    for received in smtp_server.received:
        headers = header_lines(received)
        for name in ASCII:
            for line in headers.get(name, []):
                assert "=?" not in line, line
        for lines in headers.values():
            # A longer line is one word, after the header's name on the first line.
            for n, line in enumerate(lines):
                assert len(line) <= 78 or len(line.split()) == 1 + (n == 0), lines
        (unsubscribe,) = headers["List-Unsubscribe"]
        link = str(received.message["List-Unsubscribe"])
        assert unsubscribe == f"List-Unsubscribe: {link}" and len(unsubscribe) > 78
        assert re.fullmatch(r"<http://splitmind\.test/unsubscribe/[\w.-]+>", link)
        if received.message["Reply-To"]:
            assert headers["Reply-To"] == [f"Reply-To: {received.message['Reply-To']}"]
        assert received.message["From"].addresses[0].display_name == "Partie à deux"
        assert "=?" in "".join(headers["From"])
    (french, *_) = smtp_server.handler.to("kim@example.com")
    with app.app_context():
        row = db.session.scalars(
            db.select(OutboxMessage)
            .where(OutboxMessage.recipient == "kim@example.com")
            .order_by(OutboxMessage.id)
        ).first()
        assert row is not None
        subject = row.subject
    assert not subject.isascii()
    assert french.message["Subject"] == subject
    assert "=?utf-8?" in "".join(header_lines(french)["Subject"])


def test_a_sender_in_ascii_goes_out_as_written(app: Flask) -> None:
    with app.test_request_context():
        mail = Outgoing(subject="Hi", recipients=["kim@example.com"], body="Hi", html="<p>Hi")
        mail.sender = "Split Mind <splitmind@splitmind.test>"
        assert b"\r\nFrom: Split Mind <splitmind@splitmind.test>\r\n" in mail.as_bytes()


def test_a_long_ascii_header_folds_at_its_spaces_only() -> None:
    references = " ".join(f"<game{n}.keeper.1700000000@splitmind.test>" for n in range(5))
    folded = folded_at_spaces("References", references, "\r\n")
    assert folded is not None and "=?" not in folded
    lines = folded.removesuffix("\r\n").split("\r\n")
    assert all(len(line) <= 78 for line in lines) and len(lines) == 5
    assert "".join(lines) == f"References: {references}"
    assert folded_at_spaces("Subject", "Un cœur", "\r\n") is None
    assert folded_at_spaces("X-Note", "one\r\ntwo: injected", "\r\n") is None
    assert folded_at_spaces("X-Note", "x" * 991, "\r\n") is None  # 999 characters


def test_a_subject_not_in_ascii_reads_back_as_written_wherever_it_folds(app: Flask) -> None:
    """Where the library folds between two encoded words, a space of the subject fell in
    the fold, and RFC 2047 readers drop it: "le pli 6 :" read "le pli6 :"."""
    subject = "Léa a joué 5♥, vous avez gagné le pli 6\u00a0: à vous d'entamer le pli suivant"
    with app.test_request_context():
        for words in range(30):
            written = "mot " * words + subject
            mail = Outgoing(subject=written, recipients=["kim@example.com"], body="Hi")
            mail.sender = "Split Mind <splitmind@splitmind.test>"
            raw = mail.as_bytes()
            head = raw.split(b"\r\n\r\n")[0].decode("ascii")
            assert all(len(line) <= 78 for line in head.split("\r\n")), head
            read = message_from_bytes(raw, policy=policy.default)
            assert str(read["Subject"]) == written


@pytest.mark.parametrize(
    "written",
    [
        "=?utf-8?b?Q2xhaW0geW91ciBwcml6ZSBhdCBwcml6ZXMuY29t?= invites you to play Split Mind",
        "=?utf-8?q?the_computer_(hard)?= has moved: your move, you are the Keeper",
    ],
)
def test_a_subject_that_reads_as_encoded_words_reads_back_as_written(
    app: Flask, written: str
) -> None:
    """A player's name in a subject, written as an encoded word, is not decoded by the reader
    into other words: the subject is encoded, so that it reads back as it was typed."""
    with app.test_request_context():
        mail = Outgoing(subject=written, recipients=["kim@example.com"], body="Hi")
        mail.sender = "Split Mind <splitmind@splitmind.test>"
        raw = mail.as_bytes()
    read = message_from_bytes(raw, policy=policy.default)
    assert str(read["Subject"]) == written
