"""Print the outbox's delivery throughput next to a plain smtplib loop, as a ratio.

Both send the same messages to the same local aiosmtpd server over one
connection; the outbox also claims, locks and marks each row in PostgreSQL,
and writes each email from its templates as it sends it.

    python bench/mail.py [--messages N] [--postgres URL]
"""

from __future__ import annotations

import argparse
import smtplib
import socket
import sys
import time
from email.message import EmailMessage
from pathlib import Path

from aiosmtpd.controller import Controller

# The repository's root, not bench/ (whose http.py would hide the standard library's).
HERE = Path(__file__).resolve().parent
sys.path[:] = [str(HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != HERE]

from bench.scratch import scratch_app  # noqa: E402
from service.games import Seating, create_game  # noqa: E402
from service.mail.worker import drain  # noqa: E402
from service.models import OutboxMessage, db  # noqa: E402
from service.unit_of_work import transaction  # noqa: E402


class Sink:
    """An SMTP server that counts what it accepts."""

    def __init__(self) -> None:
        self.count = 0

    async def handle_DATA(self, server, session, envelope) -> str:
        self.count += 1
        return "250 OK"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--postgres", default="postgresql://root@127.0.0.1:5432/test")
    args = parser.parse_args()

    sink = Sink()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        config = {"MAIL_SERVER": "127.0.0.1", "MAIL_PORT": str(port)}
        with scratch_app(args.postgres, **config) as (app, _), app.app_context():
            with transaction():
                for n in range(args.messages // 2):
                    seats = Seating(f"k{n}@example.com", "K"), Seating(f"s{n}@example.com", "S")
                    create_game(*seats)

            started = time.perf_counter()
            sent = drain()
            outbox_seconds = time.perf_counter() - started
            # Written by the worker as it sent them.
            rows = db.session.scalars(db.select(OutboxMessage)).all()
            fields = [_fields(row) for row in rows]
            db.session.rollback()

        # The same messages, built from the same stored fields, sent in a loop.
        started = time.perf_counter()
        with smtplib.SMTP("127.0.0.1", port) as smtp:
            for message in fields:
                smtp.send_message(_plain(message))
        plain_seconds = time.perf_counter() - started
    finally:
        controller.stop()

    outbox_rate = sent / outbox_seconds
    plain_rate = len(fields) / plain_seconds
    print(f"messages:               {sent}")
    print(f"outbox worker:          {outbox_rate:,.0f} messages/second")
    print(f"plain smtplib loop:     {plain_rate:,.0f} messages/second")
    print(f"ratio (outbox / plain): {outbox_rate / plain_rate:.2f}  (target: at least 0.5)")


def _fields(row: OutboxMessage) -> dict:
    return {
        "to": row.recipient,
        "subject": row.subject,
        "id": row.message_id,
        "headers": dict(row.headers or {}),
        "text": row.text_body,
        "html": row.html_body,
    }


def _plain(fields: dict) -> EmailMessage:
    message = EmailMessage()
    message["From"] = "Split Mind <splitmind@localhost>"
    message["To"] = fields["to"]
    message["Subject"] = fields["subject"]
    message["Message-ID"] = fields["id"]
    for key, value in fields["headers"].items():
        message[key] = value
    message.set_content(fields["text"])
    message.add_alternative(fields["html"], subtype="html")
    return message


if __name__ == "__main__":
    main()
