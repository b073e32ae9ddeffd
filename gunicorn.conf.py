"""gunicorn settings for the web app (read from the working directory).

The app is loaded once, in the master, before any worker starts
(``preload_app``): settings the service refuses stop gunicorn with the one-line
message of :class:`service.config.ConfigError` and exit status 1.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
import tempfile
from typing import TYPE_CHECKING, Any

from gunicorn.glogging import Logger

from service import logs
from service.config import check_limit_storage, log_format, log_level, read_settings

if TYPE_CHECKING:
    from gunicorn.arbiter import Arbiter
    from gunicorn.workers.base import Worker

# This machine alone: the reverse proxy in front reaches it here. Behind a proxy
# (TRUSTED_PROXIES) the app believes the client address in X-Forwarded-For, which
# anyone reaching the port directly could write. The container binds all of its
# own interfaces on the command line (Dockerfile).
bind = "127.0.0.1:8000"
workers = 3
preload_app = True
# No management socket: several servers on one machine would share its default path.
control_socket_disable = True
# "-" is gunicorn's standard output; ServiceLogger moves it to standard error, where every
# other line goes. ("/dev/stderr" cannot be opened when standard error is the journal's
# socket, as under systemd.)
accesslog = "-"
# Player, invitation, rematch and unsubscribe paths are credentials, and a page's
# Referer may be one too: the access log records neither the path nor the referrer.
access_log_format = '%(h)s %(t)s "%(m)s" %(s)s %(b)s %(M)sms'

# The workers add up their metrics through files in this directory, which
# prometheus-client reads when the app is imported: set it before. Without one of
# the operator's (shared with the mail worker), each start gets a fresh one.
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="splitmind-metrics-")


class ServiceLogger(Logger):
    """gunicorn's error and access logs in the service's format and level, tokens redacted,
    both on standard error."""

    def setup(self, cfg: Any) -> None:
        """Let gunicorn set up its handlers (again on reload), then restyle them."""
        super().setup(cfg)
        for handler in self.access_log.handlers:
            if isinstance(handler, logging.StreamHandler) and handler.stream is sys.stdout:
                handler.setStream(sys.stderr)
        settings = read_settings()
        logs.style(self.error_log, log_format(settings))
        logs.style(self.access_log, log_format(settings))
        self.error_log.setLevel(log_level(settings))
        self.access_log.setLevel(log_level(settings))  # its lines are INFO lines


logger_class = ServiceLogger


def pre_fork(server: Arbiter, worker: Worker) -> None:
    """Freeze what the master holds (the app, loaded before any worker) before a worker is
    forked from it: the worker's garbage collector never walks those objects again.

    A full collection walks every object a process holds: in a worker, with the app's
    140,000 objects, some 40 ms, during which its request waits, and more as its caches
    fill. Frozen (Python's gc.freeze, meant for this), they are left out of every
    collection, and the pages of memory the workers share with the master stay shared.
    """
    gc.freeze()


def child_exit(server: Arbiter, worker: Worker) -> None:
    """Retire an exited worker's live metrics (its counts stay in the totals)."""
    from prometheus_client import multiprocess

    from service.metrics import process_name

    multiprocess.mark_process_dead(process_name(worker.pid))


def on_starting(server: Arbiter) -> None:
    """Refuse to start several workers that would each keep their own rate-limit counts.

    This runs in the master before any worker, with the worker count gunicorn settled
    on (this file, the command line or GUNICORN_CMD_ARGS).
    """
    check_limit_storage(read_settings(), server.cfg.workers)
