"""Who may use the dashboard: admin accounts, sign-in and the guard on every admin page.

The account functions flush and log what they did, with the name of the admin
who asked (``None``: the command line); their callers (the ``flask admin``
commands, the admins page, sign-in and sign-out here) own the transaction.

Signing in is one step, or two for an admin with two-factor sign-in on: the
password, then a code (:mod:`.two_factor`). Between the two the session holds
only who is half signed in, for a few minutes.
"""

from __future__ import annotations

import logging
import math
import re
import secrets
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from functools import cache, wraps
from typing import Any, Literal, TypeVar
from urllib.parse import unquote, urlsplit

from flask import (
    current_app,
    flash,
    make_response,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_login import LoginManager, current_user, login_user, logout_user
from flask_wtf.csrf import CSRFError
from limits import parse
from sqlalchemy import func, select
from werkzeug.exceptions import HTTPException, TooManyRequests
from werkzeug.security import check_password_hash, generate_password_hash
from werkzeug.wrappers import Response

from .. import allowances, audit
from ..allowances import Allowance
from ..errors import http_error
from ..extensions import client_network
from ..models import AdminUser, db, new_session_key, utcnow
from ..unit_of_work import transaction
from . import bp, two_factor
from .forms import LoginCodeForm, LoginForm

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,39}")
MIN_PASSWORD = 10
# Failed sign-ins before the form answers 429: for one name from one address (not for a
# name from everywhere, or anyone could lock a known admin out), and from one address
# whatever the names, which leaves room for a few admins behind one office address.
# A wrong code at the second step counts as a failed sign-in too (each step counts its own).
NAME_LOGIN_LIMIT = parse("5 per 15 minutes")
ADDRESS_LOGIN_LIMIT = parse("20 per 15 minutes")
# How the name's limit keys begin (the address, the name and its lockout key follow).
NAME_LOGIN_KEY = "admin-login"
# How the limit keys of the code's step for a name from everywhere begin (the name and its
# lockout key follow): only someone who has the password gets there, so its wrong codes
# count for the account too, or many addresses together could guess the code.
CODE_LOGIN_KEY = "admin-login-code"
# How the limit keys of a signed-in admin's codes begin (the admin's id follows).
ACCOUNT_CODE_KEY = "admin-code"
OPEN_ENDPOINTS = {"admin.login", "admin.login_code", "admin.logout"}
# Where an admin without two-factor sign-in may go when ADMIN_REQUIRE_2FA is on.
ENROLMENT_ENDPOINTS = {
    "admin.two_factor",
    "admin.two_factor_start",
    "admin.two_factor_confirm",
    "admin.logout",
}
# How long the second step waits for its code after the password.
PENDING_SECONDS = 300
# Where the session keeps when its admin signed in (seconds since the epoch).
SIGNED_IN_AT = "admin_signed_in_at"
# Flask-WTF's reasons for a CSRF token that is not the session's: in a signed-in session,
# each says the session began after the form was loaded (none has a token until a page
# made one).
NEWER_SESSION = {"The CSRF tokens do not match.", "The CSRF session token is missing."}

log = logging.getLogger(__name__)
login_manager = LoginManager()
Checked = TypeVar("Checked")


class AccountError(ValueError):
    """An admin account that cannot be created or changed as asked."""


class AlreadyDone(AccountError):
    """The change asked for was made before (a second click, another admin): nothing to do,
    and nothing recorded."""


# A change to an admin account: ``change(name, actor)``.
Change = Callable[[str, str | None], object]


@login_manager.user_loader
def _session_admin(user_id: str) -> AdminUser | None:
    """The admin a session belongs to, on every request.

    ``None`` (back to sign-in) once the sign-in is older than
    ``PERMANENT_SESSION_LIFETIME``: the cookie's own age starts again whenever
    it is rewritten (a flashed message does), so a busy session would never end.
    Otherwise as :func:`load_user` finds it.
    """
    signed_in_at = session.get(SIGNED_IN_AT)
    lifetime = current_app.permanent_session_lifetime.total_seconds()
    if not isinstance(signed_in_at, int) or time.time() - signed_in_at > lifetime:
        return None
    return load_user(user_id)


def load_user(user_id: str) -> AdminUser | None:
    """The admin of a session's user id (``id:session key``).

    ``None`` once the account is gone or disabled, or its session key has
    changed: by signing out, a new password or a reset of its two-factor sign-in.
    """
    admin_id, _, key = user_id.partition(":")
    admin = db.session.get(AdminUser, int(admin_id)) if admin_id.isdigit() else None
    if admin is None or not secrets.compare_digest(admin.session_key.encode(), key.encode()):
        return None
    return admin if admin.is_active else None


def _named(name: str, *, locked: bool = False) -> AdminUser:
    """The admin named ``name``; ``locked``: read again under a lock on their row until the
    transaction ends, so that of two changes at once (a double click, two admins) the second
    waits for the first and finds it made."""
    query = select(AdminUser).where(AdminUser.name == name)
    if locked:
        query = query.with_for_update().execution_options(populate_existing=True)
    admin = db.session.scalars(query).first()
    if admin is None:
        raise AccountError(f"there is no admin named {name}")
    return admin


def check_name(name: str, *, new: bool) -> None:
    """Refuse (:class:`AccountError`) a name an account cannot be added under (``new``), or
    that no admin has: before a password is asked for it."""
    if new:
        _check_new_name(name)
    else:
        _named(name)


def _checked_password(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise AccountError(f"a password needs at least {MIN_PASSWORD} characters")
    return generate_password_hash(password)


def create_admin(name: str, password: str, actor: str | None = None) -> AdminUser:
    """Add an admin account; the name is what the game logs show for its actions."""
    _check_new_name(name)
    admin = AdminUser(name=name, password_hash=_checked_password(password))
    db.session.add(admin)
    db.session.flush()
    _audit(actor, "create_admin", f"added admin {name}")
    return admin


def _check_new_name(name: str) -> None:
    if not NAME.fullmatch(name):
        raise AccountError(
            "a name is 1 to 40 letters, digits or . _ @ -, starting with a letter or digit"
        )
    # The sign-in limits and lockout know a name in any case ("Ada" is "ada"): two admins
    # whose names differ only in case would share them.
    taken = db.session.scalars(
        select(AdminUser.name).where(func.lower(AdminUser.name) == name.lower())
    ).first()
    if taken is not None:
        raise AccountError(f"there is already an admin named {taken}")


def set_password(name: str, password: str, actor: str | None = None) -> AdminUser:
    """Give an admin a new password, which signs out every session of theirs."""
    admin = _named(name, locked=True)
    admin.password_hash = _checked_password(password)
    admin.session_key = new_session_key()
    db.session.flush()
    _audit(actor, "set_password", f"gave admin {name} a new password")
    return admin


def admins() -> list[AdminUser]:
    """Every admin account, by name."""
    return list(db.session.scalars(select(AdminUser).order_by(AdminUser.name)))


def _other(name: str, actor: str | None, doing: str) -> AdminUser:
    """The admin named ``name``, locked for the change, who must not be ``actor``: nobody
    locks themselves out."""
    if actor == name:
        raise AccountError(f"you cannot {doing} yourself: ask another admin")
    _still_admin(actor, name)
    return _named(name, locked=True)


def _still_admin(actor: str | None, name: str) -> None:
    """Lock the rows of ``actor`` and of the admin ``name`` they change, in the order of
    their ids, and refuse (:class:`AccountError`) an ``actor`` who was disabled or removed
    meanwhile: of two admins disabling or removing each other at once, the second finds
    they were turned out first, and one admin can still sign in. The command line
    (``None``) acts for whoever runs it."""
    if actor is None:
        return
    locked = db.session.scalars(
        select(AdminUser)
        .where(AdminUser.name.in_({actor, name}))
        .order_by(AdminUser.id)
        .with_for_update()
        .execution_options(populate_existing=True)
    ).all()
    if not any(admin.name == actor and admin.disabled_at is None for admin in locked):
        raise AccountError(
            "you were disabled or removed by another admin meanwhile: nothing was changed"
        )


def _audit(actor: str | None, action: str, note: str) -> None:
    """An account change in the audit trail, by ``actor`` (an admin) or the command line."""
    audit.record(actor or audit.COMMAND_LINE, action, note)


def remove_admin(name: str, actor: str | None = None) -> None:
    """Delete an admin account; its sessions end, and the game logs keep its name."""
    db.session.delete(_other(name, actor, "remove"))
    db.session.flush()
    _audit(actor, "remove_admin", f"removed admin {name}")


def disable_admin(name: str, actor: str | None = None) -> AdminUser:
    """Stop an admin from signing in; their sessions stop working at their next request."""
    admin = _other(name, actor, "disable")
    if admin.disabled_at is not None:
        raise AlreadyDone(f"{name} can no longer sign in already: nothing was changed")
    admin.disabled_at = utcnow()
    db.session.flush()
    _audit(actor, "disable_admin", f"disabled admin {name}")
    return admin


def enable_admin(name: str, actor: str | None = None) -> AdminUser:
    """Let a disabled admin sign in again (sessions from before stay ended)."""
    _still_admin(actor, name)
    admin = _named(name, locked=True)
    if admin.disabled_at is None:
        raise AlreadyDone(f"{name} can sign in already: nothing was changed")
    admin.disabled_at = None
    admin.session_key = new_session_key()
    db.session.flush()
    _audit(actor, "enable_admin", f"enabled admin {name}")
    return admin


def lift_lockout(name: str, actor: str | None = None) -> AdminUser:
    """Let an admin held off by failed sign-ins try again at once, from every address.

    Their name's failed sign-ins are counted under a key that includes
    ``lockout_key``: a new one starts every count afresh. (An address that
    tried too many names is held off whoever it signs in as, until its time is up.)
    Never of oneself (``actor``): whoever is guessing may already be signed in as them.
    An admin who is not locked out has nothing to lift (:class:`AccountError`).
    """
    admin = _other(name, actor, "lift the sign-in lockout of")
    if not admin.locked_out(utcnow()):
        raise AccountError(f"admin {name} is not locked out: nothing to lift")
    admin.lockout_key = secrets.token_urlsafe(12)
    admin.locked_until = admin.locked_from = None
    db.session.flush()
    _audit(actor, "lift_lockout", f"lifted the sign-in lockout of admin {name}")
    return admin


def reset_two_factor(name: str, actor: str | None = None) -> AdminUser:
    """Turn an admin's two-factor sign-in off (a lost phone) and end their sessions.

    They sign in with their password alone, and set it up again (at once when
    ``ADMIN_REQUIRE_2FA`` is on).
    """
    admin = _named(name, locked=True)
    two_factor.turn_off(admin)
    admin.session_key = new_session_key()
    db.session.flush()
    _audit(actor, "reset_2fa", f"reset the two-factor sign-in of admin {name}")
    return admin


@cache
def _decoy_hash() -> str:
    return generate_password_hash("not a password anyone has")


def is_password(admin: AdminUser, password: str) -> bool:
    """Whether ``password`` is the admin's."""
    return check_password_hash(admin.password_hash, password)


def authenticate(name: str, password: str) -> AdminUser | None:
    """The admin with this name, in any case and spaces around it, and password, or ``None``.

    Names are unique whatever their case, as the sign-in limits count them: a
    phone that capitalises "ada" signs Ada in. An unknown name costs as much
    time as a wrong password, so timing does not tell which names exist.
    """
    admin = db.session.scalars(
        select(AdminUser).where(func.lower(AdminUser.name) == name.strip().lower())
    ).first()
    if admin is None:
        check_password_hash(_decoy_hash(), password)
        return None
    return admin if is_password(admin, password) else None


@bp.before_request
def require_admin() -> Response | None:
    """Send anyone not signed in to the sign-in page, from every admin page but sign-in and out.

    With ``ADMIN_REQUIRE_2FA`` on, an admin without two-factor sign-in goes to
    set it up before anything else.
    """
    if request.endpoint in OPEN_ENDPOINTS:
        return None
    if not current_user.is_authenticated:
        if request.method == "POST":
            return sent_signed_out()
        # Where signing in leads: the page asked, its path under the service's own.
        target = (
            request.script_root + request.full_path.rstrip("?") if request.method == "GET" else None
        )
        return redirect(url_for("admin.login", next=target))
    if (
        current_app.config["ADMIN_REQUIRE_2FA"]
        and not current_user.two_factor
        and request.endpoint not in ENROLMENT_ENDPOINTS
    ):
        return redirect(url_for("admin.two_factor"))
    return None


def _pending() -> AdminUser | None:
    """The admin who gave their password and owes a code, while the few minutes last."""
    pending = session.get("admin_pending")
    if not isinstance(pending, dict) or time.time() - pending.get("at", 0) > PENDING_SECONDS:
        return None
    admin = load_user(str(pending.get("id", "")))
    return admin if admin is not None and admin.two_factor else None


def _lockout_key(name: str) -> str:
    if not name:
        return ""
    key = db.session.scalars(
        select(AdminUser.lockout_key).where(func.lower(AdminUser.name) == name)
    ).first()
    return key or ""


def _login_name() -> str:
    """The name this sign-in attempt is for: from the form, or the one half signed in."""
    pending = _pending() if request.endpoint == "admin.login_code" else None
    return (pending.name if pending else request.form.get("name") or "").strip().lower()


def _sign_in_allowances() -> list[Allowance]:
    """What this attempt draws on: its address's failed sign-ins, then its name's from there,
    and at the code's step its name's from everywhere.

    Each step of signing in (the password, the code) counts under its own endpoint.
    """
    address, name, step = client_network(), _login_name(), request.endpoint or ""
    lockout_key = _lockout_key(name)
    drawn = [
        Allowance(ADDRESS_LOGIN_LIMIT, (address, step)),
        Allowance(NAME_LOGIN_LIMIT, (f"{NAME_LOGIN_KEY}:{address}:{name}:{lockout_key}", step)),
    ]
    if step == "admin.login_code" and name:
        drawn.append(Allowance(NAME_LOGIN_LIMIT, (f"{CODE_LOGIN_KEY}:{name}:{lockout_key}", step)))
    return drawn


def _counted(check: Callable[[], Checked]) -> Checked:
    """Check a password or a code once the attempt has drawn on its allowances (429 if one is
    spent): of attempts sent together, no more are checked than the limits allow.

    Only failed sign-ins count: a right one (``check`` returns anything true)
    gives its draw back.
    """
    drawn = _sign_in_allowances()
    refused = allowances.draw(drawn)
    if refused:
        raise _locked_out(refused)
    checked = check()
    if checked:
        allowances.give_back(drawn)
    else:
        _note_lockout(drawn[1:])  # the name's (see _sign_in_allowances)
    return checked


def counted_code(check: Callable[[], Checked], purpose: Literal["enrol", "change"]) -> Checked:
    """Check a code a signed-in admin gives on their account's pages (``enrol``: the first one
    that turns two-factor sign-in on; ``change``: the one that confirms turning it off or new
    recovery codes) once it has drawn on that admin's allowance for the purpose: 429 once
    five were wrong in 15 minutes, as at sign-in. A right code gives its draw back.

    Every page of a change draws on one allowance: a copied session cookie guessing the
    second factor gets five tries, whichever pages it tries them on."""
    drawn = [Allowance(NAME_LOGIN_LIMIT, (f"{ACCOUNT_CODE_KEY}:{current_user.id}", purpose))]
    refused = allowances.draw(drawn)
    if refused:
        seconds = _wait(refused)
        page = render_template(
            "admin/form_refused.html",
            message=f"Too many wrong codes: try again in {_minutes(seconds)}.",
            reason=f"{NAME_LOGIN_LIMIT.amount} wrong codes in {NAME_LOGIN_LIMIT.multiples} minutes",
            back=form_page(),
        )
        raise _too_many(page, seconds)
    checked = check()
    if checked:
        allowances.give_back(drawn)
    return checked


def _note_lockout(name_allowances: Iterable[Allowance]) -> None:
    """When this failure spent the last of one of the name's allowances (from this address,
    or at the code's step from everywhere), note on the admin's row until when it is locked
    out and from where (the address of this failure)."""
    windows = [allowances.window(allowance) for allowance in name_allowances]
    spent = [stats.reset_time for stats in windows if not stats.remaining]
    if not spent:
        return
    name, address = _login_name(), client_network()
    until = datetime.fromtimestamp(math.ceil(max(spent)), UTC)
    with transaction():
        admin = db.session.scalars(
            select(AdminUser).where(func.lower(AdminUser.name) == name)
        ).first()
        if admin is None:
            return
        admin.locked_until, admin.locked_from = until, address
    log.warning(
        "admin %s: locked out after failed sign-ins from %s until %s UTC",
        name,
        address,
        until.strftime("%Y-%m-%d %H:%M"),
    )


def wait_message(seconds: float) -> str:
    """What the sign-in form says while it holds someone off: how long to wait, in minutes."""
    return f"Too many failed sign-ins: try again in {_minutes(seconds)}."


def _minutes(seconds: float) -> str:
    minutes = max(1, math.ceil(seconds / 60))
    return f"{minutes} minute{'s' if minutes > 1 else ''}"


def _wait(spent: Iterable[Allowance]) -> float:
    """Seconds until the longest of the ``spent`` allowances ends."""
    until = max(allowances.window(allowance).reset_time for allowance in spent)
    return max(1.0, until - time.time())


def _too_many(page: str, seconds: float) -> TooManyRequests:
    """429 with ``page``, and ``Retry-After`` saying when to."""
    response = make_response(page, 429)
    response.headers["Retry-After"] = str(math.ceil(seconds))
    return TooManyRequests(response=response)


def _locked_out(spent: Iterable[Allowance]) -> TooManyRequests:
    """429 with the sign-in page, saying when the longest of the ``spent`` allowances ends."""
    seconds = _wait(spent)
    if request.endpoint == "admin.login_code":
        template, form = "admin/login_code.html", LoginCodeForm()
    else:
        template, form = "admin/login.html", LoginForm()
    return _too_many(render_template(template, form=form, error=wait_message(seconds)), seconds)


@bp.errorhandler(TooManyRequests)
def too_many_sign_ins(exc: TooManyRequests) -> Any:
    """The page a spent allowance made (see :func:`_locked_out`), else the usual error page."""
    if exc.response is not None:
        return exc.response
    return http_error(exc)


# What the dashboard says of a form whose CSRF token is not its session's: the session began
# after the page was loaded (each sign-in starts an empty one, :func:`_signed_in`).
FORM_EXPIRED = (
    "This form had expired (you signed in again since it was loaded): nothing was done. "
    "Go back, reload the page and send it again."
)
FORM_UNCHECKED = (
    "This form could not be checked: nothing was done. Go back, reload the page and send it again."
)


@bp.errorhandler(CSRFError)
def form_not_checked(exc: CSRFError) -> Response | tuple[str, int]:
    """A form of the dashboard whose CSRF check failed: nothing was done, and the page says
    so in the dashboard's layout, with a way back to the form's page (400).

    Sent once the admin's session had ended, it is answered as any form sent then
    (:func:`sent_signed_out`); a sign-out then (from another tab left open) goes to the
    sign-in page: there is nothing left to sign out of.
    """
    if not current_user.is_authenticated and request.endpoint == "admin.logout":
        return redirect(url_for("admin.login"), code=303)
    if not current_user.is_authenticated and request.endpoint not in OPEN_ENDPOINTS:
        return sent_signed_out()
    expired = current_user.is_authenticated and exc.description in NEWER_SESSION
    page = render_template(
        "admin/form_refused.html",
        message=FORM_EXPIRED if expired else FORM_UNCHECKED,
        reason=exc.description,
        back=form_page(),
    )
    return page, 400


def _within_dashboard(target: str) -> bool:
    """Whether ``target`` is a path of the dashboard (under the service's path, if it has
    one), never another site's."""
    parts = urlsplit(target)
    unprintable = any(not char.isprintable() for char in target)  # a line break, say
    # Dot segments (also written %2e) and empty ones lead out of /admin/ once resolved.
    segments = unquote(parts.path).split("/")[1:]
    stray = any(segment in ("", ".", "..") for segment in segments[:-1]) or ".." in segments
    return not (
        unprintable
        or parts.scheme
        or parts.netloc
        or stray
        or not parts.path.startswith(url_for("admin.landing"))
    )


def _safe_next(target: str | None) -> str:
    """Where to go after signing in: only a path of the dashboard, never another site."""
    return target if target and _within_dashboard(target) else url_for("admin.landing")


def form_page() -> str | None:
    """The page of the dashboard that the form being sent was on, to go back to: the
    ``Referer``'s path if it is one (the path alone: never another site), else the path
    the form was sent to if it is a page too (it answers a GET); else ``None``."""
    referrer = urlsplit(request.referrer or "")
    page = referrer.path + (f"?{referrer.query}" if referrer.query else "")
    if _within_dashboard(page):
        return page
    try:
        current_app.url_map.bind_to_environ(request.environ).match(method="GET")
    except HTTPException:
        return None
    return request.script_root + request.path


# What the sign-in page says when a form was sent after its admin's session ended.
SENT_SIGNED_OUT = (
    "Your session had ended (you were signed out, or it ran out), so what you sent was not "
    "done. Sign in, then send it again from the page you were on."
)


def sent_signed_out() -> Response:
    """The answer to a form sent once its admin's session had ended (signed out on another
    device, a new password, twelve hours gone): nothing done, the sign-in page saying so,
    and back to the form's page once signed in again (:func:`form_page`)."""
    flash(SENT_SIGNED_OUT, "error")
    return redirect(url_for("admin.login", next=form_page()), code=303)


def _signed_in(admin: AdminUser, target: str | None) -> Response:
    """Start the admin's session afresh, note the time, and go where they were going.

    Nothing of the session before is kept, its CSRF token included: whoever
    planted that session in the browser holds nothing that works after.
    """
    session.clear()
    login_user(admin)
    session[SIGNED_IN_AT] = int(time.time())
    with transaction():
        admin.last_login_at = utcnow()
    return redirect(_safe_next(target), code=303)


def _login_limits(view: Callable[..., Any]) -> Callable[..., Any]:
    """Answer a POST 429 while its address's or its name's allowance is spent, before the view
    reads its form; the view draws on them where it checks a password or a code
    (:func:`_counted`)."""

    @wraps(view)
    def limited(*args: Any, **kwargs: Any) -> Any:
        if request.method == "POST" and (spent := allowances.spent(_sign_in_allowances())):
            raise _locked_out(spent)
        return view(*args, **kwargs)

    return limited


@bp.route("/login", methods=["GET", "POST"])
@_login_limits
def login() -> Response | tuple[str, int]:
    """The sign-in form; after too many failed attempts it says how long to wait (429).

    An admin with two-factor sign-in goes on to the code's step; a disabled
    admin is told so, once their password is right.
    """
    if current_user.is_authenticated:
        return redirect(_safe_next(request.args.get("next")))
    form = LoginForm()
    error = ""
    status = 400 if request.method == "POST" else 200  # HEAD answers as GET does
    if form.validate_on_submit():
        admin = _counted(lambda: authenticate(form.name.data, form.password.data))
        if admin is not None and not admin.is_active:
            error, status = "This account is disabled: another admin can enable it.", 403
        elif admin is not None and admin.two_factor:
            session["admin_pending"] = {
                "id": admin.get_id(),
                "at": int(time.time()),
                "next": request.args.get("next"),
            }
            return redirect(url_for("admin.login_code"), code=303)
        elif admin is not None:
            return _signed_in(admin, request.args.get("next"))
        else:
            error = "Wrong name or password."
    return render_template("admin/login.html", form=form, error=error), status


@bp.route("/login/code", methods=["GET", "POST"])
@_login_limits
def login_code() -> Response | tuple[str, int]:
    """The second step: a code from the authenticator app, or a recovery code."""
    admin = _pending()
    if admin is None:
        if session.pop("admin_pending", None) is not None:
            flash("Sign in again: the code was not given in time.", "error")
        return redirect(url_for("admin.login"), code=303)
    form = LoginCodeForm()
    error = ""
    if form.validate_on_submit():
        with transaction():
            accepted = _counted(lambda: two_factor.accept_code(admin, form.code.data))
        if accepted:
            return _signed_in(admin, session["admin_pending"].get("next"))
        error = "Wrong code, or a code already used."
    status = 400 if request.method == "POST" else 200
    return render_template("admin/login_code.html", form=form, error=error), status


@bp.post("/logout")
def logout() -> Response:
    """Sign out everywhere: a new session key refuses every cookie of this admin, even a copy.

    A POST with the form's CSRF token, so no other site can sign you out; the
    session is emptied, that token with it.
    """
    signed_in = current_user.is_authenticated
    if signed_in:
        with transaction():
            current_user.session_key = new_session_key()
    session.clear()
    logout_user()
    if signed_in:  # said on the sign-in page, in the session just emptied
        flash("You are signed out, on every device.", "notice")
    return redirect(url_for("admin.login"), code=303)
