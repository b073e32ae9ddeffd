"""A real SMTP server for tests: aiosmtpd in a background thread, with scripted replies."""

from __future__ import annotations

import asyncio
import email
import email.policy
import logging
import re
import socket
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import trustme
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from service.replies.reading import unflowed

# aiosmtpd logs every command at INFO: only its warnings belong in a test's output.
logging.getLogger("mail.log").setLevel(logging.WARNING)


@dataclass
class Received:
    """One message as the server stored it."""

    envelope_to: list[str]
    message: EmailMessage
    raw: bytes  # the message as it came, before any parsing decoded its headers

    @property
    def text(self) -> str:
        """The plain text as a mail client shows it: the lines of a ``format=flowed`` part
        joined where they were broken."""
        part = self.message.get_body(preferencelist=("plain",))
        if part is None:
            return ""
        text = part.get_content()
        return unflowed(text) if part.get_param("format") == "flowed" else text

    @property
    def html(self) -> str:
        part = self.message.get_body(preferencelist=("html",))
        return part.get_content() if part else ""

    def links(self, path: str) -> list[str]:
        """Every link in the text body whose path starts with ``path``."""
        return re.findall(rf"https?://[^\s<>\"]+{re.escape(path)}[^\s<>\"]+", self.text)


@dataclass
class Handler:
    """Stores what it receives; ``replies`` scripts a reply per DATA (default 250).

    ``greeting``, when set, is the reply to every EHLO and HELO (such as "421
    busy"); ``logins`` says whether AUTH succeeds, whatever the credentials;
    the server hangs up, without a reply, on a RCPT TO of an address in
    ``hang_up_on``, and refuses a RCPT TO of an address in ``refuse`` with its
    reply there (such as "550 5.1.1 User unknown"), and every MAIL FROM with
    ``refuse_sender`` when set, and every RCPT TO with ``refuse_every`` when set.
    ``data_delays`` holds the seconds it takes, in turn, before it answers each DATA (a
    filter scanning the message), having stored the message.
    """

    received: list[Received] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    on_data: Callable[[Received], None] | None = None
    greeting: str | None = None
    logins: bool = True
    hang_up_on: set[str] = field(default_factory=set)
    refuse: dict[str, str] = field(default_factory=dict)
    refuse_sender: str | None = None
    refuse_every: str | None = None
    data_delays: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def handle_EHLO(
        self, server: Any, session: Any, envelope: Any, hostname: str, responses: list[str]
    ) -> list[str]:
        if self.greeting:
            return [self.greeting]
        session.host_name = hostname
        return responses

    async def handle_HELO(self, server: Any, session: Any, envelope: Any, hostname: str) -> str:
        if self.greeting:
            return self.greeting
        session.host_name = hostname
        return f"250 {server.hostname}"

    async def handle_MAIL(
        self, server: Any, session: Any, envelope: Any, address: str, mail_options: list[str]
    ) -> str:
        if self.refuse_sender:
            return self.refuse_sender
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return "250 OK"

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, rcpt_options: list[str]
    ) -> str:
        if address in self.hang_up_on:
            server.transport.close()
            return "421 4.3.0 Closing the connection"  # never sent: the connection is gone
        if address in self.refuse:
            return self.refuse[address]
        if self.refuse_every:
            return self.refuse_every
        envelope.rcpt_tos.append(address)
        envelope.rcpt_options.extend(rcpt_options)
        return "250 OK"

    def authenticate(
        self, server: Any, session: Any, envelope: Any, mechanism: str, data: Any
    ) -> AuthResult:
        return AuthResult(success=self.logins, handled=False)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        with self.lock:
            if self.replies:
                reply = self.replies.pop(0)
                if not reply.startswith("250"):
                    return reply
            message = email.message_from_bytes(
                envelope.original_content, policy=email.policy.default
            )
            item = Received(list(envelope.rcpt_tos), message, envelope.original_content)  # type: ignore[arg-type]
            self.received.append(item)
        if self.on_data:
            self.on_data(item)
        if self.data_delays:
            await asyncio.sleep(self.data_delays.pop(0))
        return "250 Message accepted for delivery"

    def to(self, address: str) -> list[Received]:
        """Messages received for one address, oldest first."""
        with self.lock:
            return [item for item in self.received if address in item.envelope_to]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class SMTPServer:
    """aiosmtpd on 127.0.0.1 at a free port, started and stopped by the tests.

    It offers AUTH without TLS, for a client configured with a login, and STARTTLS with
    ``tls_context`` when it is set; with ``ssl_context`` set, it speaks TLS from the start.
    """

    def __init__(self) -> None:
        self.handler = Handler()
        self.port = free_port()
        self.tls_context: ssl.SSLContext | None = None
        self.ssl_context: ssl.SSLContext | None = None
        self.controller = self._controller()

    def _controller(self) -> Controller:
        return Controller(
            self.handler,
            hostname="127.0.0.1",
            port=self.port,
            authenticator=self.handler.authenticate,
            auth_require_tls=False,
            tls_context=self.tls_context,
            ssl_context=self.ssl_context,
        )

    def start(self) -> SMTPServer:
        self.controller.start()
        return self

    def restart(self) -> None:
        """Start again after ``stop``, on the same port, with what it received so far."""
        self.controller = self._controller()
        self.start()

    def stop(self) -> None:
        self.controller.stop()

    def use_tls(self, folder: Path, *, from_the_start: bool = False) -> Path:
        """Start again offering STARTTLS (or speaking TLS from the start) with a certificate
        for 127.0.0.1 from an authority of the test's own, which the machine does not trust;
        returns that authority's certificate, written in ``folder``."""
        authority = trustme.CA()
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        authority.issue_cert("127.0.0.1").configure_cert(context)
        self.stop()
        if from_the_start:
            self.ssl_context = context
        else:
            self.tls_context = context
        self.restart()
        trusted = folder / "authority.pem"
        authority.cert_pem.write_to_path(str(trusted))
        return trusted

    @property
    def received(self) -> list[Received]:
        return self.handler.received
