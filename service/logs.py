"""Logging: one format for the web app, gunicorn, the mail worker and the command line.

Every line carries the time, the level, the process id, the logger's name and
the message, as text or as one JSON object (``LOG_FORMAT``). No line carries a
credential: the path of a player link, an invitation, a rematch or an
unsubscribe link is its secret, and it turns up in Flask's "Exception on
/api/play/..." lines, in tracebacks and in gunicorn's own errors; so is the
tag of a reply address (``play+<tag>@example.org``). The filter here rewrites
the message, its arguments and the exception text before any handler writes
them, and writes a line break in the message as its escape: a traceback is the
only text of a record on lines of its own.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Mapping
from typing import Any, TextIO

from flask import Flask
from pythonjsonlogger.json import JsonFormatter

from .config import log_format, log_level
from .links import TOKEN_PATHS
from .replies.tags import TAG_IN_ADDRESS

# A token after its path, even one a client or a hostile visitor mangled: slashes doubled,
# quotes before it, the path in capitals (no route matches it, but gunicorn logs it).
TOKEN_IN_PATH = re.compile(
    "(" + "|".join(re.escape(path) for path in TOKEN_PATHS) + r")([/\"'<>]*)[^/\s?#\"'<>]+",
    re.IGNORECASE,
)
REDACTED = "[redacted]"
# What ends a line for a reader of the log (str.splitlines), written as its escape in a
# message: a message's text from outside (a reply's header, decoded; a path) stays on its
# one line, and no stranger writes a line of their own.
LINE_BREAKS = str.maketrans(
    {char: ascii(char)[1:-1] for char in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"}
)
TEXT_FORMAT = "%(asctime)s %(levelname)s [%(process)d] %(name)s: %(message)s"
# The handler this module installs on the root logger, found again by its name.
HANDLER_NAME = "splitmind"
# aiosmtpd, the reply server's, writes every SMTP command at INFO, reply addresses and all:
# only its warnings and errors are the service's business.
AIOSMTPD_LOGGER = "mail.log"


def redact(text: str, link: str = REDACTED, tag: str = REDACTED) -> str:
    """The text with the token of every credential-carrying path replaced by ``link``, and
    the tag of every reply address by ``tag``."""
    text = TOKEN_IN_PATH.sub(lambda found: found[1] + found[2] + link, text)
    return TAG_IN_ADDRESS.sub(f"+{tag}@", text)


# An email address in a line that may quote one: an admin's note, a mail server's reply.
ADDRESS = re.compile(r"[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)+")
ADDRESS_WRITTEN = "[address]"


def without_addresses(text: str) -> str:
    """The text with every email address in it written ``[address]``: for the log line of
    something that names a player's (an admin's note, a mail server's refusal). The
    database keeps it where an admin reads it, and forgets it when the address is
    erased; a log, kept and copied elsewhere, would not."""
    return ADDRESS.sub(ADDRESS_WRITTEN, text)


class RedactCredentials(logging.Filter):
    """Rewrites a record's message, arguments, exception and stack text without tokens, and
    the message on one line (:data:`LINE_BREAKS`).

    The exception is formatted here, once, and kept as text: a formatter would
    otherwise format it again from ``exc_info``, token and all.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact the record in place; never drops it."""
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # arguments that do not fit the message
            message = f"{record.msg} {record.args}"
        record.msg, record.args = redact(message).translate(LINE_BREAKS), None
        if record.exc_info:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


REDACT = RedactCredentials()


class StderrHandler(logging.StreamHandler):
    """Writes to the ``sys.stderr`` of the moment, like logging's last resort.

    A handler made by one app keeps working when a later one (or a test)
    replaces ``sys.stderr``.
    """

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> TextIO:
        """The current standard error."""
        return sys.stderr

    @stream.setter
    def stream(self, _: TextIO) -> None:
        """Ignored: the stream is always the current standard error."""


def formatter(kind: str) -> logging.Formatter:
    """The formatter for ``LOG_FORMAT`` ``kind``: ``text`` or ``json``."""
    if kind == "json":
        return JsonFormatter(
            "%(levelname)s %(process)d %(name)s %(message)s",
            rename_fields={"levelname": "level", "process": "pid", "name": "logger"},
            timestamp="time",
        )
    return logging.Formatter(TEXT_FORMAT)


def style(logger: logging.Logger, kind: str) -> None:
    """Give a logger configured elsewhere (gunicorn's) the service's format and redaction."""
    logger.addFilter(REDACT)
    for handler in logger.handlers:
        handler.setFormatter(formatter(kind))
        handler.addFilter(REDACT)


def configure(settings: Mapping[str, Any]) -> None:
    """Send every log line to standard error in the configured level and format.

    Replaces the handler an earlier call installed, so each new app (and each
    test) configures logging afresh without doubling lines.
    """
    root = logging.getLogger()
    for handler in list(root.handlers):
        if handler.get_name() == HANDLER_NAME:
            root.removeHandler(handler)
    handler = StderrHandler()
    handler.set_name(HANDLER_NAME)
    handler.setFormatter(formatter(log_format(settings)))
    handler.addFilter(REDACT)
    root.addHandler(handler)
    level = logging.getLevelNamesMapping()[log_level(settings)]
    root.setLevel(level)
    logging.getLogger(AIOSMTPD_LOGGER).setLevel(max(level, logging.WARNING))


def init_app(app: Flask) -> None:
    """Configure logging from the app's settings; Flask's own logger redacts too."""
    configure(app.config)
    app.logger.addFilter(REDACT)
