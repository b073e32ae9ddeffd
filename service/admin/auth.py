"""Who may use the dashboard: admin accounts, sign-in and the guard on every admin page.

The account functions flush and log what they did; their callers (the
``flask admin`` commands, sign-in and sign-out here) own the transaction.
"""

from __future__ import annotations

import logging
import re
import secrets
from functools import cache
from urllib.parse import urlsplit

from flask import g, redirect, render_template, request, url_for
from flask_limiter.util import get_remote_address
from flask_login import LoginManager, current_user, login_user, logout_user
from sqlalchemy import select
from werkzeug.security import check_password_hash, generate_password_hash
from werkzeug.wrappers import Response

from ..extensions import limiter
from ..models import AdminUser, db, new_session_key, utcnow
from ..unit_of_work import transaction
from . import bp
from .forms import LoginForm

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,39}")
MIN_PASSWORD = 10
# Failed sign-ins before the form answers 429: for one name from one address (not for a
# name from everywhere, or anyone could lock a known admin out), and from one address
# whatever the names, which leaves room for a few admins behind one office address.
NAME_LOGIN_LIMIT = "5 per 15 minutes"
ADDRESS_LOGIN_LIMIT = "20 per 15 minutes"
OPEN_ENDPOINTS = {"admin.login", "admin.logout"}

log = logging.getLogger(__name__)
login_manager = LoginManager()


class AccountError(ValueError):
    """An admin account that cannot be created or changed as asked."""


@login_manager.user_loader
def load_user(user_id: str) -> AdminUser | None:
    """The admin a session belongs to, on every request.

    ``None`` (back to sign-in) once the account is gone or its session key has
    changed: by signing out, a new password or the account's removal.
    """
    admin_id, _, key = user_id.partition(":")
    admin = db.session.get(AdminUser, int(admin_id)) if admin_id.isdigit() else None
    if admin is None or not secrets.compare_digest(admin.session_key.encode(), key.encode()):
        return None
    return admin


def _named(name: str) -> AdminUser:
    admin = db.session.scalars(select(AdminUser).where(AdminUser.name == name)).first()
    if admin is None:
        raise AccountError(f"there is no admin named {name}")
    return admin


def _checked_password(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise AccountError(f"a password needs at least {MIN_PASSWORD} characters")
    return generate_password_hash(password)


def create_admin(name: str, password: str) -> AdminUser:
    """Add an admin account; the name is what the game logs show for its actions."""
    if not NAME.fullmatch(name):
        raise AccountError(
            "a name is 1 to 40 letters, digits or . _ @ -, starting with a letter or digit"
        )
    if db.session.scalars(select(AdminUser).where(AdminUser.name == name)).first():
        raise AccountError(f"there is already an admin named {name}")
    admin = AdminUser(name=name, password_hash=_checked_password(password))
    db.session.add(admin)
    db.session.flush()
    log.info("admin %s added", name)
    return admin


def set_password(name: str, password: str) -> AdminUser:
    """Give an admin a new password, which signs out every session of theirs."""
    admin = _named(name)
    admin.password_hash = _checked_password(password)
    admin.session_key = new_session_key()
    db.session.flush()
    log.info("admin %s has a new password; their sessions have ended", name)
    return admin


def remove_admin(name: str) -> None:
    """Delete an admin account; its sessions end, and the game logs keep its name."""
    db.session.delete(_named(name))
    db.session.flush()
    log.info("admin %s removed", name)


@cache
def _decoy_hash() -> str:
    return generate_password_hash("not a password anyone has")


def authenticate(name: str, password: str) -> AdminUser | None:
    """The admin with this name and password, or ``None``.

    An unknown name costs as much time as a wrong password, so timing does not
    tell which names exist.
    """
    admin = db.session.scalars(select(AdminUser).where(AdminUser.name == name)).first()
    if admin is None:
        check_password_hash(_decoy_hash(), password)
        return None
    return admin if check_password_hash(admin.password_hash, password) else None


@bp.before_request
def require_admin() -> Response | None:
    """Send anyone not signed in to the sign-in page, from every admin page but sign-in and out."""
    if request.endpoint in OPEN_ENDPOINTS or current_user.is_authenticated:
        return None
    target = request.full_path.rstrip("?") if request.method == "GET" else None
    return redirect(url_for("admin.login", next=target))


def _failed_login(_response: Response) -> bool:
    return bool(g.get("failed_login"))


def _login_name_and_address() -> str:
    name = (request.form.get("name") or "").strip().lower()
    return f"admin-login:{get_remote_address()}:{name}"


def _safe_next(target: str | None) -> str:
    """Where to go after signing in: only a path of the dashboard, never another site."""
    parts = urlsplit(target or "")
    if parts.scheme or parts.netloc or not parts.path.startswith("/admin/"):
        return url_for("admin.games_list")
    return target or url_for("admin.games_list")


@bp.route("/login", methods=["GET", "POST"])
@limiter.limit(ADDRESS_LOGIN_LIMIT, methods=["POST"], deduct_when=_failed_login)
@limiter.limit(
    NAME_LOGIN_LIMIT, key_func=_login_name_and_address, methods=["POST"], deduct_when=_failed_login
)
def login() -> Response | tuple[str, int]:
    """The sign-in form; after too many failed attempts it answers 429 for a while."""
    if current_user.is_authenticated:
        return redirect(_safe_next(request.args.get("next")))
    form = LoginForm()
    error = ""
    if form.validate_on_submit():
        admin = authenticate(form.name.data, form.password.data)
        if admin is not None:
            login_user(admin)
            with transaction():
                admin.last_login_at = utcnow()
            return redirect(_safe_next(request.args.get("next")), code=303)
        g.failed_login = True
        error = "Wrong name or password."
    status = 400 if request.method == "POST" else 200  # HEAD answers as GET does
    return render_template("admin/login.html", form=form, error=error), status


@bp.post("/logout")
def logout() -> Response:
    """Sign out everywhere: a new session key refuses every cookie of this admin, even a copy.

    A POST with the form's CSRF token, so no other site can sign you out.
    """
    if current_user.is_authenticated:
        with transaction():
            current_user.session_key = new_session_key()
    logout_user()
    return redirect(url_for("admin.login"), code=303)
