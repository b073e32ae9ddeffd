"""gunicorn settings for the web app (read from the working directory).

The app is loaded once, in the master, before any worker starts
(``preload_app``): settings the service refuses stop gunicorn with the one-line
message of :class:`service.config.ConfigError` and exit status 1.
"""

from __future__ import annotations

from typing import Any

from gunicorn.glogging import Logger

from service import logs
from service.config import log_format, log_level, read_settings

bind = "0.0.0.0:8000"
workers = 3
preload_app = True
# No management socket: several servers on one machine would share its default path.
control_socket_disable = True
accesslog = "-"
# Player, invitation, rematch and unsubscribe paths are credentials, and a page's
# Referer may be one too: the access log records neither the path nor the referrer.
access_log_format = '%(h)s %(t)s "%(m)s" %(s)s %(b)s %(M)sms'


class ServiceLogger(Logger):
    """gunicorn's error and access logs in the service's format and level, tokens redacted."""

    def setup(self, cfg: Any) -> None:
        """Let gunicorn set up its handlers (again on reload), then restyle them."""
        super().setup(cfg)
        settings = read_settings()
        logs.style(self.error_log, log_format(settings))
        logs.style(self.access_log, log_format(settings))
        self.error_log.setLevel(log_level(settings))


logger_class = ServiceLogger
