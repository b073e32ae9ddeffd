"""Which language a page or an email is in: English or French, chosen and remembered.

The locale of a request comes from, in order: a ``?lang=`` query parameter
(remembered in a cookie), that cookie, the language the player chose on their
page (``Player.language``, set by a POST), the browser's ``Accept-Language``.
Admin pages are in English. Every email is rendered inside
``recipient_locale(...)``, by :func:`service.mail.compose.render`. What the
game's words are in that language is :mod:`service.game_text`'s business.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from flask import Flask, g, has_request_context, request
from flask_babel import Babel, force_locale, get_locale
from werkzeug.wrappers import Response

if TYPE_CHECKING:
    from .models import Player

LANGUAGES: dict[str, str] = {"en": "English", "fr": "Français"}
DEFAULT_LANGUAGE = "en"
COOKIE = "lang"
COOKIE_MAX_AGE = 365 * 24 * 3600


def language_code(value: object) -> str | None:
    """``value`` if it names a language of the service, else ``None``."""
    return value if isinstance(value, str) and value in LANGUAGES else None


def select_locale() -> str | None:
    """The language of the current request (``None`` outside a request: the default)."""
    if not has_request_context():
        return None
    if request.blueprint == "admin":
        return DEFAULT_LANGUAGE  # the dashboard is in English
    return (
        language_code(request.args.get(COOKIE))
        or language_code(request.cookies.get(COOKIE))
        or language_code(g.get("player_language"))
        or request.accept_languages.best_match(list(LANGUAGES))
    )


def current_language() -> str:
    """The two-letter code of the language now in use."""
    locale = get_locale()
    return locale.language if locale else DEFAULT_LANGUAGE


def remember_language(response: Response, language: str) -> Response:
    """Keep the chosen language in a cookie (a browser setting, never a database write)."""
    response.set_cookie(
        COOKIE,
        language,
        max_age=COOKIE_MAX_AGE,
        samesite="Lax",
        httponly=True,
        secure=request.is_secure,
    )
    return response


def language_url(language: str) -> str:
    """This page's address in ``language``: the same path and query, with ``lang`` set."""
    args = request.args.to_dict()
    args[COOKIE] = language
    return f"{request.path}?{urlencode(args)}"


@contextmanager
def recipient_locale(recipient: Player | str | None) -> Iterator[None]:
    """Render in the recipient's language: a :class:`Player`, a language code, or ``None``.

    A player without a stored language, an unknown code and ``None`` all give
    English. Use it around everything that renders an email::

        with recipient_locale(player):
            subject = gettext("Your move")
            html = render_template("email/turn.html", ...)
    """
    language = recipient if isinstance(recipient, str | None) else recipient.language
    with force_locale(language_code(language) or DEFAULT_LANGUAGE):
        yield


def init_app(app: Flask) -> None:
    """Bind Flask-Babel, the language switch's template globals and the language cookie."""
    Babel(app, locale_selector=select_locale)
    app.add_template_global(current_language)
    app.add_template_global(language_url)
    app.jinja_env.globals["LANGUAGES"] = LANGUAGES

    @app.after_request
    def keep_language(response: Response) -> Response:
        chosen = language_code(request.args.get(COOKIE))
        if chosen and chosen != request.cookies.get(COOKIE):
            remember_language(response, chosen)
        response.vary.update(("Accept-Language", "Cookie"))
        return response
