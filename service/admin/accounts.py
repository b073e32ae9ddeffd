"""The admins page (who may use the dashboard) and each admin's own two-factor sign-in.

Account changes go through :mod:`.auth` and :mod:`.two_factor`, which log them
with the acting admin's name; each is one transaction, owned here, with its entry
in the audit trail (never a secret or code). An admin
cannot disable or remove themselves, or lift their own sign-in lockout.
"""

from __future__ import annotations

from flask import current_app, flash, redirect, render_template, url_for
from flask_login import current_user, login_user
from flask_wtf import FlaskForm
from werkzeug.wrappers import Response

from .. import audit
from ..models import AdminUser, db, utcnow
from ..unit_of_work import transaction
from . import auth, bp, two_factor
from .forms import ConfirmForm, EnrolForm, EnrolStartForm, TwoFactorChangeForm


def _back() -> Response:
    return redirect(url_for("admin.admins_page"), code=303)


def _change(change: auth.Change, admin_id: int, success: str, form: FlaskForm | None) -> Response:
    """Check the confirmation, apply ``change`` for the signed-in admin, say how it went."""
    admin = db.session.get(AdminUser, admin_id)
    if admin is None:  # removed meanwhile: a second click, or another admin
        flash("No admin has that account (removed already?): nothing was changed.", "notice")
        return _back()
    if form is not None and not form.validate():
        flash(f"Tick the box to confirm it for {admin.name}.", "error")
        return _back()
    try:
        with transaction():
            change(admin.name, current_user.name)
    except auth.AccountError as exc:
        reason = str(exc)
        category = "notice" if isinstance(exc, auth.AlreadyDone) else "error"
        flash(f"{reason[:1].upper()}{reason[1:]}.", category)
    else:
        flash(success.format(name=admin.name), "notice")
    return _back()


@bp.get("/admins")
def admins_page() -> str:
    """Every admin: enabled or not, locked out or not, two-factor sign-in, last sign-in, and
    what can be done."""
    return render_template(
        "admin/admins.html",
        admins=auth.admins(),
        now=utcnow(),
        confirm_form=ConfirmForm(),
        require_2fa=current_app.config["ADMIN_REQUIRE_2FA"],
    )


@bp.post("/admins/<id:admin_id>/disable")
def disable_admin(admin_id: int) -> Response:
    """Stop another admin from signing in; their sessions stop at once."""
    return _change(auth.disable_admin, admin_id, "{name} can no longer sign in.", ConfirmForm())


@bp.post("/admins/<id:admin_id>/enable")
def enable_admin(admin_id: int) -> Response:
    """Let a disabled admin sign in again."""
    return _change(auth.enable_admin, admin_id, "{name} can sign in again.", FlaskForm())


@bp.post("/admins/<id:admin_id>/remove")
def remove_admin(admin_id: int) -> Response:
    """Delete another admin's account; the games' logs keep their name."""
    return _change(auth.remove_admin, admin_id, "{name} is removed.", ConfirmForm())


@bp.post("/admins/<id:admin_id>/unlock")
def lift_lockout(admin_id: int) -> Response:
    """Let an admin held off by failed sign-ins try again at once."""
    return _change(
        auth.lift_lockout, admin_id, "{name} may try to sign in again at once.", FlaskForm()
    )


@bp.get("/two-factor", endpoint="two_factor")
def two_factor_page() -> str:
    """The signed-in admin's two-factor sign-in: on or off, or set up and waiting for its first
    code. The secret of a setup is never shown here: only the answer to the password that
    started it shows it (:func:`two_factor_start`)."""
    return _two_factor_page(show_secret=False)


def _two_factor_page(*, show_secret: bool) -> str:
    """The two-factor page; ``show_secret``: with the QR code and key of the setup started."""
    admin = current_user
    setting_up = bool(admin.totp_secret) and not admin.two_factor
    uri = two_factor.provisioning_uri(admin) if setting_up and show_secret else ""
    return render_template(
        "admin/two_factor.html",
        admin=admin,
        setting_up=setting_up,
        uri=uri,
        qr=two_factor.qr_code(uri) if uri else "",
        secret=admin.totp_secret if uri else "",
        unused=two_factor.unused_recovery_codes(admin),
        start_form=EnrolStartForm(formdata=None),
        code_form=EnrolForm(formdata=None),
        change_form=TwoFactorChangeForm(formdata=None),
        require_2fa=current_app.config["ADMIN_REQUIRE_2FA"],
    )


def _to_two_factor() -> Response:
    return redirect(url_for("admin.two_factor"), code=303)


def _recovery_codes(codes: list[str]) -> tuple[str, int, dict[str, str]]:
    """The page that shows recovery codes, the one time they can be read: never kept by a cache."""
    return (
        render_template("admin/recovery_codes.html", codes=codes),
        200,
        {"Cache-Control": "no-store"},
    )


@bp.post("/two-factor/start")
def two_factor_start() -> Response | tuple[str, int, dict[str, str]]:
    """A new secret for the admin's authenticator app, given the admin's password (two-factor
    sign-in stays as it was); the answer shows it, the only page that does: a session alone
    (a copied cookie) never reads the secret an app will be set up with."""
    if current_user.two_factor:
        flash("Two-factor sign-in is already on.", "error")
        return _to_two_factor()
    form = EnrolStartForm()
    if not form.validate():
        flash("Give your password to set up two-factor sign-in.", "error")
        return _to_two_factor()
    with transaction():
        password = form.password.data or ""
        if not auth.counted_code(lambda: auth.is_password(current_user, password), "enrol"):
            flash("That password is not yours: nothing was set up.", "error")
            return _to_two_factor()
        started = two_factor.start_enrolment(current_user)
    if not started:
        flash("Two-factor sign-in is already on.", "error")
        return _to_two_factor()
    return _two_factor_page(show_secret=True), 200, {"Cache-Control": "no-store"}


@bp.post("/two-factor/confirm")
def two_factor_confirm() -> Response | tuple[str, int, dict[str, str]]:
    """Turn two-factor sign-in on with the app's first code and the admin's password; show
    the recovery codes once."""
    form = EnrolForm()
    if current_user.two_factor or not current_user.totp_secret:
        return _to_two_factor()
    if form.validate():
        with transaction():
            codes = auth.counted_code(lambda: _enrolled(form), "enrol")
            if codes is not None:
                audit.record(current_user.name, "turn_on_2fa", "turned on their two-factor sign-in")
        if codes is not None:
            # This session, with the key that ended the others.
            login_user(current_user._get_current_object())
            return _recovery_codes(codes)
    flash(
        "That password is not yours, or that code is not the one the app shows now: "
        "try again with the next code.",
        "error",
    )
    return _to_two_factor()


def _enrolled(form: EnrolForm) -> list[str] | None:
    """The recovery codes, if the form's password is the admin's and its code turns
    two-factor sign-in on."""
    if not auth.is_password(current_user, form.password.data or ""):
        return None
    return two_factor.confirm_enrolment(current_user, form.code.data or "")


@bp.post("/two-factor/recovery-codes")
def two_factor_recovery_codes() -> Response | tuple[str, int, dict[str, str]]:
    """Ten new recovery codes; the old ones stop working. A code confirms it: a session
    alone (a cookie copied) cannot renew the second factor."""
    form = TwoFactorChangeForm()
    if not current_user.two_factor or not form.validate():
        flash("Tick the box and give a code to replace your recovery codes.", "error")
        return _to_two_factor()
    with transaction():
        if not _second_factor(form):
            return _wrong_code()
        codes = two_factor.new_recovery_codes(current_user)
        audit.record(current_user.name, "new_recovery_codes", "replaced their recovery codes")
    return _recovery_codes(codes)


def _second_factor(form: TwoFactorChangeForm) -> bool:
    """Whether the form's code is the admin's second factor now (spent if it is)."""
    code = form.code.data or ""
    return auth.counted_code(lambda: two_factor.accept_code(current_user, code), "change")


def _wrong_code() -> Response:
    flash("That code is neither the one your app shows now nor an unused recovery code.", "error")
    return _to_two_factor()


@bp.post("/two-factor/off")
def two_factor_off() -> Response:
    """Turn the signed-in admin's two-factor sign-in off, unless every admin must have it; a
    code confirms it."""
    form = TwoFactorChangeForm()
    if current_app.config["ADMIN_REQUIRE_2FA"]:
        flash("Every admin must sign in with two factors here: it cannot be turned off.", "error")
    elif not form.validate():
        flash("Tick the box and give a code to turn two-factor sign-in off.", "error")
    else:
        with transaction():
            # Read again under a lock on the admin's row: of two clicks at once, the second
            # waits for the first and finds it off.
            db.session.refresh(current_user._get_current_object(), with_for_update=True)
            if not current_user.two_factor:
                flash("Two-factor sign-in is off already: nothing was changed.", "notice")
                return _to_two_factor()
            if not _second_factor(form):
                return _wrong_code()
            two_factor.turn_off(current_user)
            audit.record(current_user.name, "turn_off_2fa", "turned off their two-factor sign-in")
        flash("Two-factor sign-in is off: signing in asks for your password alone.", "notice")
    return _to_two_factor()
