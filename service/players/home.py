"""A player's home page, ``/me/<token>``: one link per email address, to every game it plays.

GET shows the page and changes nothing. Each setting is a POST form with a
CSRF token (the blueprint is not exempt, unlike the game links): the address
is in the link, but the session cookie proves the form came from this page.
Each POST is one transaction, owned here, then a redirect back to the page,
which then says what was saved (:data:`SAVED`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import (
    Blueprint,
    abort,
    flash,
    g,
    get_flashed_messages,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask.typing import ResponseReturnValue
from flask_wtf import FlaskForm

from .. import homes, invitations
from ..addresses import settings_for
from ..language import gettext, ngettext, remember_language
from ..language import lazy_gettext as _l
from ..links import address_for, signed_home, token_for
from ..mail.compose import match_score, result
from ..models import utcnow
from ..unit_of_work import transaction
from .forms import (
    ButtonForm,
    EmailPolicyForm,
    GameEmailsForm,
    HomeLanguageForm,
    TimeZoneForm,
    VacationForm,
)

bp = Blueprint("home", __name__)

# What the page says once a form was saved, by the form's endpoint. The session keeps the
# endpoint only until the page after the redirect shows it, in that page's language.
SAVED = {
    "emails": _l("Saved: when you get “your move” emails."),
    "language": _l("Saved: the language of your pages and emails."),
    "vacation": _l("Saved: your vacation."),
    "time_zone": _l("Saved: your time zone."),
    "end_vacation": _l("Saved: you are back from vacation."),
    "stop_game": _l("Saved: the emails about that game are stopped."),
    "resume_game": _l("Saved: the emails about that game are back on."),
    "stop_all": _l("Saved: every email is stopped."),
    "resume_all": _l("Saved: your emails are back on."),
    "accept_invitations": _l("Saved: you take invitations again."),
    "withdraw": _l("Saved: the invitation is withdrawn."),
    "moved": _l(
        "Saved: this address has your games, invitations and settings now; the old one's "
        "page link works no more."
    ),
    "replace_link": _l(
        "Saved: this page and each of your games have new links, and the old ones work no more."
    ),
}
SAVED_CATEGORY = "saved"


# Where the session keeps the link it replaced and the new one: the same form sent again (a
# second click, the back button) leads to the new page, in that browser alone.
REPLACED = "home_link_replaced"


def address_of(token: str) -> str:
    """The address a home link belongs to; a tampered or replaced link is not found, but for
    the browser that replaced it, which is sent to the new one (303)."""
    email = address_for(token)
    if email is None:
        replaced = session.get(REPLACED)
        if isinstance(replaced, list) and len(replaced) == 2 and replaced[0] == token:
            abort(redirect(url_for("home.page", token=replaced[1]), code=303))
        abort(404)
    settings = settings_for(email)
    if settings is not None and settings.language:
        g.player_language = settings.language
    return email


@bp.get("/me/<token>")
def page(token: str) -> ResponseReturnValue:
    """The player's games, invitations and settings; ``?before=<game id>`` lists the finished
    games that came before that one (see :func:`homes.overview`)."""
    return _page(address_of(token), token, before=request.args.get("before", type=int))


def _page(
    email: str,
    token: str,
    error: str = "",
    status: int = 200,
    *,
    posted: FlaskForm | None = None,
    invalid: str | None = None,
    before: int | None = None,
) -> ResponseReturnValue:
    """The home page; with ``error``, the refused form ``posted`` as it was typed, its field
    ``invalid`` tied to the error; ``before``: where its list of finished games starts."""
    home = homes.overview(email, before=before)
    policy = (
        posted
        if isinstance(posted, EmailPolicyForm)
        else EmailPolicyForm(formdata=None, policy=home.policy, digest_hour=home.digest_hour)
    )
    # The language stored for the address, not the page's: none ticked while none is stored.
    chosen = home.settings.language if home.settings else None
    language = HomeLanguageForm(formdata=None, language=chosen)
    html = render_template(
        "play/home.html",
        home=home,
        token=token,
        error=error,
        saved=_saved(home),
        policy_form=policy,
        language_form=language,
        vacation_form=VacationForm(
            formdata=None,
            days=posted.days.data if isinstance(posted, VacationForm) else None,
            ends=homes.vacation_seen(home.on_vacation_until),
        ),
        zone_form=(
            posted
            if isinstance(posted, TimeZoneForm)
            else TimeZoneForm(formdata=None, zone=home.time_zone or "")
        ),
        invalid=invalid,
        button=ButtonForm(formdata=None),
        invitation_link=homes.invitation_link,
        play_token=token_for,
        result=result,
        match_score=match_score,
    )
    return html, status


def _saved(home: homes.Home) -> list[str]:
    """What the page says the forms posted just before it saved; a time zone, with the hour
    a digest now comes at there (the first zone chosen keeps the moment the hour had in UTC,
    a later one the hour's number: :func:`.addresses.choose_time_zone`)."""
    said = []
    for name in get_flashed_messages(category_filter=[SAVED_CATEGORY]):
        if name not in SAVED:
            continue
        said.append(str(SAVED[name]))
        if name == "time_zone" and home.policy == "digest" and home.time_zone:
            said.append(
                gettext(
                    "Your daily digest comes at %(hour)02d:00 %(zone)s.",
                    hour=home.digest_hour,
                    zone=home.time_zone,
                )
            )
    return said


def _done(token: str) -> ResponseReturnValue:
    """Back to the page, which says what the form just posted saved."""
    assert request.endpoint is not None  # a view of this blueprint
    flash(request.endpoint.rpartition(".")[2], SAVED_CATEGORY)
    return redirect(url_for("home.page", token=token), code=303)


def _refused(email: str, token: str, form: FlaskForm) -> ResponseReturnValue:
    """The page again, with the first problem of the form posted."""
    if "csrf_token" in form.errors:
        abort(400, gettext("This form could not be checked: reload the page and send it again."))
    field, message = next(
        ((name, str(errors[0])) for name, errors in form.errors.items() if errors), (None, "")
    )
    said = message or gettext("This request could not be understood.")
    return _page(email, token, said, 400, posted=form, invalid=field)


@bp.post("/me/<token>/emails")
def emails(token: str) -> ResponseReturnValue:
    """Choose when a "your move" email goes out."""
    email = address_of(token)
    form = EmailPolicyForm()
    if not form.validate():
        return _refused(email, token, form)
    with transaction():
        homes.set_email_policy(email, form.policy.data or "", form.digest_hour.data)
    return _done(token)


@bp.post("/me/<token>/language")
def language(token: str) -> ResponseReturnValue:
    """Choose the language of the address's pages and emails."""
    email = address_of(token)
    form = HomeLanguageForm()
    if not form.validate() or form.language.data is None:
        return _refused(email, token, form)
    with transaction():
        homes.set_language(email, form.language.data)
    return remember_language(_done(token), form.language.data)  # type: ignore[arg-type]


@bp.post("/me/<token>/time-zone")
def time_zone(token: str) -> ResponseReturnValue:
    """Choose the time zone of the address's emails and home page."""
    return _save(
        token,
        TimeZoneForm,
        "zone",
        homes.set_time_zone,
        lambda email, refused: gettext("That is no time zone: write one such as Europe/Paris."),
    )


@bp.post("/me/<token>/vacation")
def vacation(token: str) -> ResponseReturnValue:
    """Take whole days of vacation: the deadlines of the moves the address owes wait.

    The form says when the vacation it was shown ends: sent twice, or after
    another page changed it, it takes nothing (409) and the page shows it as it is.
    """
    ends = request.form.get("ends")  # None from a form that does not say
    return _save(
        token,
        VacationForm,
        "days",
        lambda email, days: homes.take_vacation(email, days, seen=ends),
        _vacation_refused,
    )


def _vacation_refused(email: str, refused: homes.SettingError) -> str:
    """Why a vacation was refused: that it changed meanwhile, or the days left this year."""
    if isinstance(refused, homes.VacationChanged):
        return gettext("Your vacation changed since this page was loaded: nothing more was taken.")
    left = homes.vacation_left(settings_for(email), utcnow())
    return ngettext(
        "You have %(num)d day of vacation left this year.",
        "You have %(num)d days of vacation left this year.",
        left,
    )


def _save(
    token: str,
    form_class: type[FlaskForm],
    field: str,
    change: Callable[[str, Any], object],
    refusal: Callable[[str, homes.SettingError], str],
) -> ResponseReturnValue:
    """Save one setting from its form with ``change(email, value)``: the page again with the
    form's problem, or with ``refusal(email, error)`` when the service refuses the value
    (:class:`homes.SettingError`), in the reader's words; 409 when it changed meanwhile."""
    email = address_of(token)
    form = form_class()
    value = getattr(form, field).data if form.validate() else None
    if value is None:
        return _refused(email, token, form)
    try:
        with transaction():
            change(email, value)
    except homes.SettingError as exc:
        status = 409 if isinstance(exc, homes.VacationChanged) else 400
        return _page(email, token, refusal(email, exc), status, posted=form, invalid=field)
    return _done(token)


def _one_game(change: Callable[[str, int], None]) -> Callable[[str], ResponseReturnValue]:
    """A view making ``change(email, game id)`` from a form naming one of the address's
    games; 404 for one that is not (:class:`LookupError`)."""

    def view(token: str) -> ResponseReturnValue:
        email = address_of(token)
        form = GameEmailsForm()
        if not form.validate() or form.game.data is None:
            return _refused(email, token, form)
        try:
            with transaction():
                change(email, form.game.data)
        except LookupError:
            abort(404)
        return _done(token)

    return view


bp.add_url_rule(
    "/me/<token>/games/stop", "stop_game", _one_game(homes.stop_game_emails), methods=["POST"]
)
bp.add_url_rule(
    "/me/<token>/games/resume",
    "resume_game",
    _one_game(homes.resume_game_emails),
    methods=["POST"],
)
bp.add_url_rule(
    "/me/<token>/invitations/withdraw",
    "withdraw",
    _one_game(invitations.withdraw),
    methods=["POST"],
)


def _button(change: Callable[[str], None]) -> Callable[[str], ResponseReturnValue]:
    def view(token: str) -> ResponseReturnValue:
        email = address_of(token)
        form = ButtonForm()
        if not form.validate():
            return _refused(email, token, form)
        with transaction():
            change(email)
        return _done(token)

    return view


for rule, endpoint, change in (
    ("/me/<token>/vacation/end", "end_vacation", homes.end_vacation),
    ("/me/<token>/stop-all", "stop_all", homes.stop_all_emails),
    ("/me/<token>/resume-all", "resume_all", homes.resume_all_emails),
    ("/me/<token>/invitations", "accept_invitations", homes.accept_invitations),
):
    bp.add_url_rule(rule, endpoint, _button(change), methods=["POST"])


@bp.post("/me/<token>/link")
def replace_link(token: str) -> ResponseReturnValue:
    """A new link to this page; every copy of the old one stops working."""
    email = address_of(token)
    form = ButtonForm()
    if not form.validate():
        return _refused(email, token, form)
    with transaction():
        key = homes.replace_home_link(email)
    new = signed_home(email, key)
    session[REPLACED] = [token, new]
    return _done(new)
