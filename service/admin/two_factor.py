"""Two-factor sign-in: codes from an authenticator app (TOTP, RFC 6238) and recovery codes.

Enrolment starts with a fresh secret on the admin's row, shown once as a QR
code; the first code it produces turns two-factor sign-in on and hands out ten
recovery codes, each good for one sign-in and kept only as a SHA-256 hash (they
are random, so a slow hash adds nothing). A code of either kind works once,
however many sign-ins give it at the same moment.
The secret is never logged. Like the account functions of :mod:`.auth`, these
flush and log; their callers own the transaction.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from datetime import datetime

import pyotp
import segno
from markupsafe import Markup
from sqlalchemy import or_, update

from ..models import AdminRecoveryCode, AdminUser, db, new_session_key, utcnow

ISSUER = "Split Mind"
RECOVERY_CODES = 10
# Time steps accepted either side of the current one: a phone's clock may be a little off.
DRIFT_STEPS = 1
RECOVERY_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o or 1/l/i to misread

log = logging.getLogger(__name__)


def start_enrolment(admin: AdminUser) -> bool:
    """A new secret for the admin to scan; two-factor sign-in stays off until a code confirms it.

    The admin's row is read again under a lock: a confirmation that turned two-factor
    sign-in on meanwhile (another tab) is kept, and ``False`` says nothing was started.
    """
    db.session.refresh(admin, with_for_update=True)
    if admin.two_factor:
        return False
    admin.totp_secret = pyotp.random_base32()
    admin.totp_enabled_at = None
    admin.totp_last_step = None
    db.session.flush()
    log.info("admin %s started setting up two-factor sign-in", admin.name)
    return True


def provisioning_uri(admin: AdminUser) -> str:
    """The ``otpauth://`` address an authenticator app reads from the QR code."""
    assert admin.totp_secret is not None
    return pyotp.TOTP(admin.totp_secret).provisioning_uri(name=admin.name, issuer_name=ISSUER)


def qr_code(uri: str) -> Markup:
    """The address as an inline SVG QR code, dark on light whatever the page's colours."""
    svg = segno.make(uri, error="m").svg_inline(
        scale=4, border=3, dark="#000", light="#fff", title="QR code for your authenticator app"
    )
    return Markup(svg)  # segno writes the SVG and escapes the address in it


def _normalized(code: str) -> str:
    return "".join(code.split()).replace("-", "").lower()


def _hash(code: str) -> str:
    return hashlib.sha256(_normalized(code).encode()).hexdigest()


def _accept_totp(admin: AdminUser, code: str, now: datetime) -> bool:
    """Whether ``code`` is the authenticator's for now (or a step either side), and not used yet.

    Its step is spent in one statement, on the condition that no code of that
    step or a later one was, and that the secret it was checked against is still
    the admin's: of sign-ins giving the same code at once, the first to update the
    row gets in, and the others, waiting on its lock, find the step spent; a
    confirmation racing a new secret (setup started again in another tab) finds
    the secret changed, and one racing another confirmation finds it on.
    """
    if admin.totp_secret is None or not code.isascii():  # other digits (１２３) are no code
        return False
    totp = pyotp.TOTP(admin.totp_secret)
    current = totp.timecode(now)
    steps = range(current - DRIFT_STEPS, current + DRIFT_STEPS + 1)
    step = next((s for s in steps if secrets.compare_digest(totp.generate_otp(s), code)), None)
    if step is None:
        return False
    unspent = [
        AdminUser.id == admin.id,
        AdminUser.totp_secret == admin.totp_secret,
        or_(AdminUser.totp_last_step.is_(None), AdminUser.totp_last_step < step),
    ]
    if admin.totp_enabled_at is None:
        # A confirmation turns it on once: another at the same moment finds it on.
        unspent.append(AdminUser.totp_enabled_at.is_(None))
    spent = db.session.execute(
        update(AdminUser).where(*unspent).values(totp_last_step=step).returning(AdminUser.id)
    ).scalar()
    return spent is not None


def confirm_enrolment(admin: AdminUser, code: str) -> list[str] | None:
    """Turn two-factor sign-in on with a first code from the app: recovery codes, or ``None``.

    Every other session of the admin ends (a new session key): one signed in with
    the password alone must not stay, nor replace the recovery codes; the caller
    signs the current one in again with the new key.
    """
    if admin.totp_secret is None or not _accept_totp(admin, _normalized(code), utcnow()):
        return None
    admin.totp_enabled_at = utcnow()
    admin.session_key = new_session_key()
    codes = new_recovery_codes(admin)
    log.info("admin %s turned two-factor sign-in on", admin.name)
    return codes


def new_recovery_codes(admin: AdminUser) -> list[str]:
    """Replace the admin's recovery codes with fresh ones; the only time they are readable."""
    admin.recovery_codes.clear()
    codes = []
    for _ in range(RECOVERY_CODES):
        code = "".join(secrets.choice(RECOVERY_ALPHABET) for _ in range(10))
        codes.append(f"{code[:5]}-{code[5:]}")
        admin.recovery_codes.append(AdminRecoveryCode(code_hash=_hash(code)))
    db.session.flush()
    log.info("admin %s has new recovery codes", admin.name)
    return codes


def unused_recovery_codes(admin: AdminUser) -> int:
    """How many of the admin's recovery codes are left."""
    return sum(1 for code in admin.recovery_codes if code.used_at is None)


def accept_code(admin: AdminUser, code: str) -> bool:
    """Whether ``code`` signs the admin in: the app's current code or an unused recovery code.

    Either is spent by it, in one conditional statement: the same code is
    refused the next time, and of sign-ins giving it at once all but one.
    """
    if not admin.two_factor:
        return False
    typed = _normalized(code)
    if typed.isdigit() and len(typed) == 6:
        return _accept_totp(admin, typed, utcnow())
    spent = db.session.execute(
        update(AdminRecoveryCode)
        .where(
            AdminRecoveryCode.admin_id == admin.id,
            AdminRecoveryCode.code_hash == _hash(typed),
            AdminRecoveryCode.used_at.is_(None),
        )
        .values(used_at=utcnow())
        .returning(AdminRecoveryCode.id)
    ).first()
    if spent is None:
        return False
    log.info("admin %s signed in with a recovery code", admin.name)
    return True


def turn_off(admin: AdminUser) -> None:
    """Forget the admin's secret and recovery codes: signing in asks for the password alone."""
    admin.totp_secret = None
    admin.totp_enabled_at = None
    admin.totp_last_step = None
    admin.recovery_codes.clear()
    db.session.flush()
    log.info("admin %s's two-factor sign-in is off", admin.name)
