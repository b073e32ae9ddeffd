"""The plain-text part as the SMTP server receives it: ``format=flowed`` (RFC 3676), in lines
a terminal or a phone shows whole, each link unbroken, joined again into the text written."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service.mail.compose import FLOWED_WIDTH, flowed
from service.mail.worker import Outgoing
from service.models import OutboxMessage, db
from service.replies.reading import unflowed

from ..helpers import moves_delivered
from ..smtp import SMTPServer

LINK = re.compile(r"https?://\S+")


def test_every_email_goes_out_flowed_in_short_lines_with_whole_links(
    app: Flask,
    client: FlaskClient,
    make_game: Callable[..., dict[str, Any]],
    smtp_server: SMTPServer,
    deliver: Callable[[], int],
) -> None:
    """A turn email's long sentences and links, in English and French: the text part's
    lines fit in 78 characters but for a link alone on its line, and a client that joins
    the flowed lines reads the email as it was written."""
    game = make_game(seed=11, keeper_language="fr")
    deliver()
    moves_delivered(client, game, deliver, 6)
    assert len(smtp_server.received) > 4
    with app.app_context():
        sent_rows = select(OutboxMessage).where(OutboxMessage.status == "sent")
        written = {row.message_id: row.text_body for row in db.session.scalars(sent_rows)}
    for received in smtp_server.received:
        part = received.message.get_body(preferencelist=("plain",))
        assert part is not None and part.get_param("format") == "flowed"
        sent = part.get_content().replace("\r\n", "\n")
        lines = sent.split("\n")
        for line in lines:
            assert len(line) <= FLOWED_WIDTH or " " not in line.strip(), line
        text = written[received.message["Message-ID"]]
        assert any(len(line) > FLOWED_WIDTH for line in text.split("\n"))
        assert unflowed(sent) == text
        for link in LINK.findall(text):
            assert any(link in line for line in lines), link


@pytest.mark.parametrize(
    "text",
    [
        "From the start, a line that reads as an mbox separator.",
        "> not a quote",
        "  indented " + "word " * 30,
        "trailing spaces   \nnext",
        "See: https://splitmind.test/" + "x" * 120 + " then more words " * 6,
    ],
)
def test_flowed_text_reads_back_as_written(text: str) -> None:
    """Stuffed where a line would read as a quote or a separator; spaces ending a line, which
    would join it to the next, are not the text's."""
    sent = flowed(text)
    assert all(len(line) <= FLOWED_WIDTH or " " not in line.strip() for line in sent.split("\n"))
    assert unflowed(sent) == "\n".join(line.rstrip(" ") for line in text.split("\n"))
    assert not sent.startswith(("From ", ">"))


def test_the_html_part_is_not_flowed(app: Flask) -> None:
    with app.test_request_context():
        mail = Outgoing(subject="Hi", recipients=["kim@example.com"], body="Hi", html="<p>Hi")
        mail.sender = "Split Mind <splitmind@splitmind.test>"
        raw = mail.as_bytes()
    assert raw.count(b'format="flowed"') == 1 and b'text/plain; charset="utf-8"; format' in raw
