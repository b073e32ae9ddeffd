"""Which language a page or an email is in: English or French, chosen and remembered.

The locale of a request comes from, in order: a ``?lang=`` query parameter
(remembered in a cookie), that cookie, the language the player chose on their
page (``Player.language``, set by a POST), the browser's ``Accept-Language``.
Admin pages are in English. Every email is rendered inside
``recipient_locale(...)``, by :func:`service.mail.compose.render`. What the
game's words are in that language is :mod:`service.game_text`'s business.

Strings are translated with this module's :func:`gettext`, :func:`ngettext`
and :func:`lazy_gettext`, and so are templates' ``_()``, ``gettext`` and
``ngettext``: Flask-Babel's own look the catalogue up afresh for every string,
a page's hundred strings a hundred times; these look it up once per language
and request (:func:`translations`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from babel import Locale
from babel.support import NullTranslations
from flask import Flask, current_app, g, has_request_context, request
from flask_babel import Babel, LazyString, force_locale, get_locale, get_translations
from jinja2 import pass_context
from jinja2.runtime import Context
from markupsafe import Markup
from werkzeug.wrappers import Request, Response

if TYPE_CHECKING:
    from .models import Player

LANGUAGES: dict[str, str] = {"en": "English", "fr": "Français"}
DEFAULT_LANGUAGE = "en"
COOKIE = "lang"
COOKIE_MAX_AGE = 365 * 24 * 3600
# The locale of each language, made once: Flask-Babel would parse the code that
# :func:`select_locale` gives on every request, where it takes a locale as it is.
LOCALES: dict[str, Locale] = {code: Locale.parse(code) for code in LANGUAGES}
# Where a context keeps the catalogue it last looked up, with the locale it is for.
TRANSLATIONS = "splitmind_translations"


def translations() -> NullTranslations:
    """The catalogue of the language in use, looked up once per language and context.

    Kept on ``g`` with the :class:`~babel.Locale` object it is for, which is
    the one Flask-Babel keeps for the context (``babel_locale``): every
    ``force_locale`` (:func:`recipient_locale`, the API's English) puts a new
    one in place and the old one back after, so a forced language, and the
    one restored after it, are looked up afresh. Outside an app context,
    Flask-Babel's untranslated English.
    """
    try:
        state = g._get_current_object()
    except RuntimeError:
        return get_translations()
    locale = getattr(getattr(state, "_flask_babel", None), "babel_locale", None)
    kept = getattr(state, TRANSLATIONS, None)
    if kept is not None and kept[0] is locale:
        return kept[1]
    found = get_translations()
    # Flask-Babel has now chosen the context's locale, if it had not yet.
    locale = getattr(getattr(state, "_flask_babel", None), "babel_locale", None)
    if locale is not None:
        setattr(state, TRANSLATIONS, (locale, found))
    return found


def gettext(string: str, **variables: Any) -> str:
    """``string`` in the language in use, formatted with ``variables`` if any (as
    Flask-Babel's ``gettext``)."""
    text = translations().ugettext(string)
    return elided(text, variables) % variables if variables else text


def ngettext(singular: str, plural: str, num: int, **variables: Any) -> str:
    """The singular or plural of a message for ``num``, in the language in use, formatted
    with ``num`` and ``variables`` (as Flask-Babel's ``ngettext``)."""
    variables.setdefault("num", num)
    return elided(translations().ungettext(singular, plural, num), variables) % variables


# French drops the e of "de" and "que" before a vowel: "le coup d’Ann", "qu’Ann a gagnée".
VOWEL_FIRST = re.compile(r"[AEIOUÀÂÄÆÉÈÊËÎÏÔÖŒÙÛÜaeiouàâäæéèêëîïôöœùûü]")


def elided(text: str, variables: Mapping[str, Any]) -> str:
    """``text``, a message in the language in use, with "de %(name)s" written "d’%(name)s"
    (and "que" so) where the value put there starts with a vowel, in French. A name is
    known only when the message is formatted: the catalogue writes "de" before each."""
    if current_language() != "fr":
        return text
    for name, value in variables.items():
        if isinstance(value, str) and VOWEL_FIRST.match(value) and f"%({name})s" in text:
            text = re.sub(rf"\b([Dd]|[Qq]u)e %\({name}\)s", rf"\1’%({name})s", text)
    return text


def lazy_gettext(string: str, **variables: Any) -> LazyString:
    """:func:`gettext` when the string is used, in the language in use then."""
    return LazyString(gettext, string, **variables)


def language_code(value: object) -> str | None:
    """``value`` if it names a language of the service, else ``None``."""
    return value if isinstance(value, str) and value in LANGUAGES else None


def on_dashboard() -> bool:
    """Whether the request is for the admin dashboard, even at an address it does not have
    (which no route matched): its pages, error pages too, are in English, in its layout."""
    return request.blueprint == "admin" or request.path.startswith("/admin/")


def select_locale() -> Locale | None:
    """The locale of the current request (``None`` outside a request: the default)."""
    if not has_request_context():
        return None
    if on_dashboard():
        return LOCALES[DEFAULT_LANGUAGE]  # the dashboard is in English
    return LOCALES[request_language(request, g.get("player_language"))]


def request_language(asked: Request, stored: str | None) -> str:
    """The language a request off the dashboard is answered in, ``stored`` being the one its
    player chose (if known): the query's, the cookie's, the stored one, the browser's.

    Apart from :func:`select_locale` for :mod:`service.api.shortcut`, which answers a view
    before Flask makes the request's context.
    """
    return (
        language_code(asked.args.get(COOKIE))
        or language_code(asked.cookies.get(COOKIE))
        or language_code(stored)
        or browser_language(asked)
        or DEFAULT_LANGUAGE
    )


def browser_language(asked: Request) -> str | None:
    """The language of the service the browser prefers most (``Accept-Language``), a
    region's or not, or ``None``.

    Its languages are taken in the browser's order of preference, each by its first
    subtag: ``fr-CH, en;q=0.5`` is French. (Werkzeug's ``best_match`` prefers any exact
    match to a region's, and would answer that one in English, and ``en-GB, fr;q=0.5``
    in French.) A wildcard names no language of its own.
    """
    for value, _quality in asked.accept_languages:  # most preferred first
        code = language_code(value.replace("_", "-").partition("-")[0].lower())
        if code is not None:
            return code
    return None


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
        # As the session's: secure when the service is served over HTTPS (BASE_URL), which
        # a request that came through a proxy need not show.
        secure=current_app.config["SESSION_COOKIE_SECURE"],
        # As the session's: the service's path alone (BASE_URL's), no other site of its host.
        path=current_app.config["APPLICATION_ROOT"],
    )
    return response


def language_url(language: str) -> str:
    """This page's address in ``language``: its query with ``lang`` set, as a link relative
    to the page, so the browser keeps the path it asked for.

    Written out, a path a stranger chose (``/\\evil.example``, which a browser
    reads as ``//evil.example``) would send the link to another site.
    """
    args = request.args.to_dict()
    args[COOKIE] = language
    return f"?{urlencode(args)}"


def carried_language() -> str | None:
    """The page's language when its player's stored choice decided it, else ``None``: a
    link off the page (the rules, the front page) carries it as ``?lang=``, as the page
    would otherwise be in the browser's language, and no other page knows the player.
    A language the request chose itself (its query, cookie or browser) needs no carrying.
    """
    if not has_request_context() or on_dashboard():
        return None
    language = current_language()
    return language if language != request_language(request, None) else None


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


@pass_context
def _template_gettext(context: Context, string: str, **variables: Any) -> str:
    """A template's ``_``: Jinja's newstyle ``gettext``, with :func:`elided`."""
    return _in_template(context, translations().ugettext(string), variables)


@pass_context
def _template_ngettext(
    context: Context, singular: str, plural: str, num: int, **variables: Any
) -> str:
    """A template's ``ngettext``: Jinja's newstyle one, with :func:`elided`."""
    variables.setdefault("num", num)
    return _in_template(context, translations().ungettext(singular, plural, num), variables)


def _in_template(context: Context, text: str, variables: dict[str, Any]) -> str:
    """A translated message formatted as Jinja's newstyle callables format it: always a
    format string ("%%" is "%"), its variables escaped in an escaped template."""
    text = elided(text, variables)
    if context.eval_ctx.autoescape:
        text = Markup(text)
    return text % variables


def init_app(app: Flask) -> None:
    """Bind Flask-Babel, the templates' translations, the language switch's template
    globals and the language cookie."""
    Babel(app, locale_selector=select_locale)
    env = app.jinja_env
    env.install_gettext_callables(  # type: ignore[attr-defined]
        gettext=lambda string: translations().ugettext(string),
        ngettext=lambda singular, plural, num: translations().ungettext(singular, plural, num),
        newstyle=True,
        pgettext=lambda context, string: translations().upgettext(context, string),
        npgettext=lambda context, singular, plural, num: translations().unpgettext(
            context, singular, plural, num
        ),
    )
    # Jinja's own newstyle callables, with French elision (:func:`elided`) before formatting.
    env.globals["gettext"] = _template_gettext
    env.globals["ngettext"] = _template_ngettext
    # ``_`` is ``gettext`` itself rather than Jinja's alias that looks ``gettext`` up on each call.
    env.globals["_"] = env.globals["gettext"]
    app.add_template_global(current_language)
    app.add_template_global(language_url)
    app.add_template_global(carried_language)
    app.jinja_env.globals["LANGUAGES"] = LANGUAGES

    @app.after_request
    def keep_language(response: Response) -> Response:
        chosen = language_code(request.args.get(COOKIE))
        if chosen and chosen != request.cookies.get(COOKIE):
            remember_language(response, chosen)
        if request.endpoint == "static" and response.status_code < 400:
            return response  # a file, the same in every language
        return varies_by_language(response)


def varies_by_language(response: Response) -> Response:
    """Say that the answer depends on the request's language (:func:`request_language`):
    on its ``Accept-Language`` and its cookie."""
    response.vary.update(("Accept-Language", "Cookie"))
    return response
