"""Prometheus metrics at ``/metrics``, for the operator's scraper alone.

Counters and histograms live in this module and are counted where things
happen: requests here, moves in :mod:`service.games`, emails in the mail
worker, sweeps in :mod:`service.deadlines`, replies in the reply readers
(:mod:`service.replies.servers`). The outbox's depth, the age of its oldest
queued message and of the last signs of life of the mail worker, the IMAP
reader and the LMTP (or SMTP) reply server are read from the database at each
scrape, whichever process wrote them; while the database cannot be read, the
scrape serves the counts without them.

Under gunicorn every worker counts on its own: with ``PROMETHEUS_MULTIPROC_DIR``
set (before the process starts: prometheus-client reads it on import) each
process writes its counts to a file there and a scrape adds the files up. The
mail worker and ``flask tick`` join in when they share the directory. The
files are named by the host and the process id (:func:`process_name`), so
containers sharing one directory, each with its own process ids, never write
to the same file. gunicorn.conf.py marks the files of a worker that exits.

``/metrics`` answers only a request bearing ``Authorization: Bearer
<METRICS_TOKEN>``; without the setting it is not found.
"""

from __future__ import annotations

import hmac
import logging
import os
import socket
import time
from datetime import datetime

from flask import Flask, Response, abort, current_app, g, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    values,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError

from .config import ConfigError
from .errors import is_outage, outage_reason
from .models import (
    ImapReaderHeartbeat,
    InboundServerHeartbeat,
    OutboxMessage,
    WorkerHeartbeat,
    db,
    utcnow,
)

log = logging.getLogger(__name__)

# prometheus-client names a process's files by its pid alone: two containers sharing the
# directory would write to one file. Set before the first metric is made, as it is read then.
HOST = socket.gethostname().replace("_", "-")  # "_" separates the parts of a file's name


def process_name(pid: int) -> str:
    """What the metrics files of the process ``pid`` of this host are named by."""
    return f"{HOST}-{pid}"


def check_multiprocess_dir(path: str) -> None:
    """Refuse a ``PROMETHEUS_MULTIPROC_DIR`` this process cannot write its files in: the
    first metric made would otherwise end the import in a traceback (a directory gone with a
    reboot, a path mistyped, another user's)."""
    if not os.path.isdir(path):
        raise ConfigError(f"PROMETHEUS_MULTIPROC_DIR must be a directory, not {path!r}")
    if not os.access(path, os.W_OK | os.X_OK):
        raise ConfigError(
            f"PROMETHEUS_MULTIPROC_DIR {path!r} must be writable by this user, which it is not"
        )


if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    check_multiprocess_dir(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    values.ValueClass = values.MultiProcessValue(lambda: process_name(os.getpid()))
elif "PROMETHEUS_MULTIPROC_DIR" in os.environ:
    # Empty, it is unset, as every setting is: prometheus-client, which asks only whether it
    # is there, would write its files in the working directory (one the service may not
    # write in), named by the process id alone.
    del os.environ["PROMETHEUS_MULTIPROC_DIR"]
    values.ValueClass = values.MutexValue

REQUEST_SECONDS = Histogram(
    "splitmind_http_request_duration_seconds",
    "Time to answer a request, by route (the URL rule, never the path), method and status",
    ["route", "method", "status"],
)
MOVES = Counter(
    "splitmind_moves",
    "Moves applied: a person's (page, API, reply) and the computer's",
)
MAIL = Counter(
    "splitmind_mail",
    "Emails the worker handled, by outcome: sent, failed (given up), deferred (to retry), "
    "skipped (no longer wanted)",
    ["outcome"],
)
SWEEPS = Counter("splitmind_sweeps", "Deadline sweeps run (reminders and timeouts)")
# What a reply reader (LMTP, SMTP, IMAP) made of a message: a few fixed words, never a reason
# (one may name the sender), so that no address or tag is ever a label.
REPLY_OUTCOMES = (
    "applied",  # a move, applied and answered
    "refused",  # read, nothing changed, answered why (within the answer limits)
    "duplicate",  # read before (the same Message-ID)
    "automatic",  # an auto-reply or a bounce, dropped
    "not_ours",  # no valid reply tag (refused at RCPT TO by LMTP), dropped
    "overlong",  # a header too long to parse, dropped
    "failed",  # could not be read at all: refused for good (554), or set aside by IMAP
    "deferred",  # put off by a database outage, to be read again
)
REPLIES = Counter(
    "splitmind_replies",
    "Messages the reply readers (LMTP, SMTP, IMAP) handled, by outcome: "
    + ", ".join(REPLY_OUTCOMES),
    ["outcome"],
)
# Each outcome there at 0 from the start: a rule on its rate sees the first one counted.
for _outcome in REPLY_OUTCOMES:
    REPLIES.labels(outcome=_outcome)

# Outbox statuses that stay few in a healthy service: counting them reads a short index range.
DEPTH_STATUSES = ("queued", "failed")
METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
UNMATCHED = "unmatched"


def count_request(route: str, method: str, status: int, started: float) -> None:
    """Count one request answered, by its route's rule, begun at ``started``
    (:func:`time.perf_counter`)."""
    REQUEST_SECONDS.labels(
        route=route, method=method if method in METHODS else "other", status=str(status)
    ).observe(time.perf_counter() - started)


def count_mail(status: str) -> None:
    """Count one email the worker handled, by the status it was left in."""
    MAIL.labels(outcome="deferred" if status == "queued" else status).inc()


def count_reply(outcome: str) -> None:
    """Count one message a reply reader handled, by its outcome (:data:`REPLY_OUTCOMES`)."""
    REPLIES.labels(outcome=outcome).inc()


class OutboxCollector(Collector):
    """The outbox's depth and its oldest queued message's age, read when scraped.

    Both queries read the ``(status, id)`` index: their cost follows the
    messages waiting or failed, never the messages sent. A database that cannot
    be read (down, too slow: :func:`service.errors.is_outage`) leaves both out,
    says so in ``splitmind_database_up`` and in one warning line, and lets the
    scrape serve the processes' counts, which an outage is when they matter.
    """

    def collect(self) -> list[Metric]:
        """Query the outbox (inside the scrape's request)."""
        up = GaugeMetricFamily(
            "splitmind_database_up",
            "1 when the scrape read the outbox from the database; 0 when the database could "
            "not be read, and the outbox's gauges are left out",
        )
        # Here: the computer's module moves games, which count in this module.
        from .computer import longest_owed

        try:
            counts, oldest = read_outbox()
            beat = db.session.scalar(select(func.max(WorkerHeartbeat.beat_at)))
            read = db.session.scalar(select(func.max(ImapReaderHeartbeat.beat_at)))
            listened = db.session.scalar(select(func.max(InboundServerHeartbeat.beat_at)))
            owed = longest_owed(utcnow())
        except SQLAlchemyError as exc:
            if not is_outage(exc):
                raise
            db.session.rollback()
            log.warning(
                "database unavailable: %s; /metrics served without the outbox",
                outage_reason(exc),
            )
            up.add_metric([], 0)
            return [up]
        up.add_metric([], 1)
        depth = GaugeMetricFamily(
            "splitmind_outbox_messages",
            "Emails in the outbox waiting to be sent (queued) or given up on (failed)",
            labels=["status"],
        )
        for status in DEPTH_STATUSES:
            depth.add_metric([status], counts.get(status, 0))
        age = GaugeMetricFamily(
            "splitmind_outbox_oldest_queued_age_seconds",
            "Seconds the most overdue queued email has been due, unsent: how far the mail "
            "worker is behind; 0 when none is due",
            value=(utcnow() - oldest).total_seconds() if oldest else 0.0,
        )
        worker = GaugeMetricFamily(
            "splitmind_mail_worker_last_pass_age_seconds",
            "Seconds since a mail worker last passed (it passes at least once a poll, and "
            "between batches); absent until one has",
        )
        if beat is not None:
            worker.add_metric([], (utcnow() - beat).total_seconds())
        reader = GaugeMetricFamily(
            "splitmind_imap_reader_last_read_age_seconds",
            "Seconds since an IMAP reply reader last read its folder (a pass, or a spell of "
            "IDLE the server ended as asked); absent until one has",
        )
        if read is not None:
            reader.add_metric([], (utcnow() - read).total_seconds())
        server = GaugeMetricFamily(
            "splitmind_inbound_server_last_beat_age_seconds",
            "Seconds since a reply server (mail inbound, LMTP or SMTP) last wrote that it "
            "listens (every few seconds, whether or not replies come); absent until one has",
        )
        if listened is not None:
            server.add_metric([], (utcnow() - listened).total_seconds())
        computer = GaugeMetricFamily(
            "splitmind_computer_move_wait_seconds",
            "Seconds the computer's longest-owed move has waited since its game's last change "
            "(the mail worker makes it, after BOT_DELAY_SECONDS); 0 when it owes none",
            value=(utcnow() - owed).total_seconds() if owed else 0.0,
        )
        return [up, depth, age, worker, reader, server, computer]


def read_outbox() -> tuple[dict[str, int], datetime | None]:
    """How many messages each status of :data:`DEPTH_STATUSES` holds, and since when the
    most overdue queued message has been due (``None``: none is due; one held or put off
    until later, a turn email while its player's page is open or a retry, is not yet)."""
    counts = dict(
        db.session.execute(
            select(OutboxMessage.status, func.count())
            .where(OutboxMessage.status.in_(DEPTH_STATUSES))
            .group_by(OutboxMessage.status)
        ).all()
    )
    # The (status, next_attempt_at) index: the first queued message due is the most overdue.
    oldest = db.session.scalar(
        select(OutboxMessage.next_attempt_at)
        .where(OutboxMessage.status == "queued", OutboxMessage.next_attempt_at <= utcnow())
        .order_by(OutboxMessage.next_attempt_at)
        .limit(1)
    )
    return counts, oldest


def exposition() -> bytes:
    """Every metric in Prometheus' text format: this process's, or all processes' added up."""
    directory = current_app.config["PROMETHEUS_MULTIPROC_DIR"]
    counted = REGISTRY
    if directory:
        counted = CollectorRegistry()
        MultiProcessCollector(counted, path=directory)
    outbox = CollectorRegistry(auto_describe=False)
    outbox.register(OutboxCollector())
    return generate_latest(counted) + generate_latest(outbox)


def scrape() -> Response:
    """``GET /metrics``: not found without ``METRICS_TOKEN``, refused without the token."""
    token = current_app.config["METRICS_TOKEN"]
    if not token:
        abort(404)
    # Read from the header itself: Werkzeug's parser raises on a Basic value that is not
    # ASCII, which a stranger may send. The scheme's name is case-insensitive (RFC 9110).
    scheme, _, given = request.headers.get("Authorization", "").strip().partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        given.strip().encode(), token.encode()
    ):
        return Response(
            "a Bearer token is required\n",
            401,
            {"WWW-Authenticate": 'Bearer realm="metrics"'},
            mimetype="text/plain",
        )
    return Response(exposition(), content_type=CONTENT_TYPE_LATEST)


# Where the first part of the service to see a request (:mod:`service.api.shortcut`, ahead
# of Flask) keeps in its environ when it did (:func:`time.perf_counter`): the request's time
# counts from then.
STARTED = "splitmind.started"


def start_timer() -> None:
    """Start timing the request (see :data:`STARTED`)."""
    g.request_started = request.environ.get(STARTED) or time.perf_counter()


def init_app(app: Flask) -> None:
    """Time every request and serve ``/metrics``.

    Call it before other extensions add ``before_request`` hooks, so a request
    they answer early (a rate limit) is timed too.
    """
    app.before_request(start_timer)

    @app.after_request
    def observe(response: Response) -> Response:
        started = g.pop("request_started", None)
        if started is not None:
            count_request(
                request.url_rule.rule if request.url_rule else UNMATCHED,
                request.method,
                response.status_code,
                started,
            )
        return response

    app.add_url_rule("/metrics", "metrics", scrape)
