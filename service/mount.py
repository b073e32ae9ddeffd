"""The service under a path of its host: the path of ``BASE_URL`` (``/splitmind`` of
``https://example.org/splitmind``).

Every link a page makes comes from ``url_for``, which starts it with the
request's ``SCRIPT_NAME``; every link an email holds starts with ``BASE_URL``.
:class:`Mount` gives each request the path of ``BASE_URL`` as its
``SCRIPT_NAME``, and takes it off the start of ``PATH_INFO`` when the request
came with it (a proxy passing the whole path on), so that the routes see the
service's own paths. A request without it (a proxy that took it off, gunicorn
given the same ``SCRIPT_NAME``, a health check at the port itself) is served as
it is, its links under the path all the same: the browser only ever sees
addresses under ``BASE_URL``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from flask import Flask

from .config import ConfigError

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment


class Mount:
    """A WSGI app served under ``path``: ``SCRIPT_NAME`` is the path, ``PATH_INFO`` the rest."""

    def __init__(self, wsgi_app: WSGIApplication, path: str) -> None:
        self.wsgi_app = wsgi_app
        self.path = path

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        asked: str = environ.get("PATH_INFO", "")
        if asked == self.path or asked.startswith(f"{self.path}/"):
            environ["PATH_INFO"] = asked[len(self.path) :]
        environ["SCRIPT_NAME"] = self.path
        return self.wsgi_app(environ, start_response)


def init_app(app: Flask) -> None:
    """Serve the app under the path of ``BASE_URL`` (``APPLICATION_ROOT``), if it has one.

    Called once every route is added: a path that starts as one of the service's own
    (``/play``) is refused. A request without it (``/play/<token>``) could not be told from
    one with it, and a log line's ``/play/play/<token>`` would keep the token
    (:mod:`service.logs` redacts the segment after ``/play/``).
    """
    path = app.config["APPLICATION_ROOT"].rstrip("/")
    if not path:
        return
    first = path.split("/")[1]
    if first in {rule.rule.split("/")[1] for rule in app.url_map.iter_rules()}:
        raise ConfigError(
            f"BASE_URL's path must not start with /{first}, where the service has pages of "
            f"its own: choose another, such as https://example.org/splitmind, not "
            f"{app.config['BASE_URL']!r}"
        )
    app.wsgi_app = Mount(app.wsgi_app, path)  # type: ignore[method-assign]
