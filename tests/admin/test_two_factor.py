"""Two-factor sign-in: enrolment by QR code, the code after the password, recovery codes each
good once, ADMIN_REQUIRE_2FA sending admins to enrol, and a reset for a lost phone."""

from __future__ import annotations

import contextlib
import functools
import html
import logging
import re
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pyotp
import pytest
import time_machine
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select, update
from werkzeug.test import TestResponse

from service.admin import two_factor
from service.models import AdminAction, AdminRecoveryCode, AdminUser, db, utcnow

from ..helpers import at_once, from_elsewhere, wait_until, waits_on_a_lock
from .conftest import ADMIN, PASSWORD, csrf_token, sign_in, submit


@pytest.fixture
def start() -> datetime:
    """A moment just ahead, when time stands still for a test: sessions signed now stay valid.

    A cookie written then is from the future back in the present: keep its requests inside.
    """
    return datetime.now(UTC).replace(microsecond=0) + timedelta(minutes=1)


def otpauth_uri(page: str) -> str:
    found = re.search(r'href="(otpauth://[^"]+)"', page)
    assert found, "the page has no otpauth link"
    return html.unescape(found.group(1))


def enrol(client: FlaskClient) -> tuple[pyotp.TOTP, list[str]]:
    """Turn two-factor sign-in on through the pages; the app's TOTP and the recovery codes."""
    started = submit(client, "/admin/two-factor", "/admin/two-factor/start", password=PASSWORD)
    assert started.status_code == 200 and started.headers["Cache-Control"] == "no-store"
    page = started.text
    assert "<svg" in page and "QR code for your authenticator app" in page
    totp = pyotp.parse_uri(otpauth_uri(page))
    assert isinstance(totp, pyotp.TOTP) and totp.name == ADMIN and totp.issuer == "Split Mind"
    # Typed in by hand where the camera cannot scan, in groups of four.
    typed = re.search(r'<code class="secret">([A-Z2-7 ]+)</code>', page)
    assert typed and typed.group(1).replace(" ", "") == totp.secret
    response = submit(
        client, "/admin/two-factor", "/admin/two-factor/confirm", code=totp.now(), password=PASSWORD
    )
    assert response.status_code == 200 and response.headers["Cache-Control"] == "no-store"
    codes = re.findall(r"<li><code>([a-z0-9]{5}-[a-z0-9]{5})</code></li>", response.text)
    assert len(codes) == 10 and len(set(codes)) == 10
    return totp, codes


def sign_out(client: FlaskClient) -> None:
    client.post("/admin/logout", data={"csrf_token": csrf_token(client.get("/admin/").text)})


def give_code(client: FlaskClient, code: str) -> TestResponse:
    token = csrf_token(client.get("/admin/login/code").text)
    return client.post("/admin/login/code", data={"csrf_token": token, "code": code})


def stored(app: Flask) -> AdminUser:
    with app.app_context():
        admin = db.session.scalars(select(AdminUser).where(AdminUser.name == ADMIN)).one()
        db.session.expunge(admin)
        return admin


def signed_in(client: FlaskClient) -> bool:
    return client.get("/admin/").status_code == 200


def confirm_after_another_tab(app: Flask, changes: Callable[[pyotp.TOTP], dict[str, Any]]) -> Any:
    """Start setup, let another tab's request write ``changes`` (made from the app's TOTP) to
    the admin's row and commit first, then confirm with the app's code: the confirmation."""
    with app.app_context():
        admin = db.session.scalars(select(AdminUser).where(AdminUser.name == ADMIN)).one()
        assert two_factor.start_enrolment(admin)
        db.session.commit()
        totp = pyotp.TOTP(str(admin.totp_secret))
        with db.engine.begin() as other:
            other.execute(
                AdminUser.__table__.update().where(AdminUser.id == admin.id).values(**changes(totp))
            )
        confirmed = two_factor.confirm_enrolment(admin, totp.now())
        db.session.rollback()
    return confirmed


def test_a_confirmation_checked_against_a_replaced_secret_turns_nothing_on(
    app: Flask, admin_account: str
) -> None:
    """Setup started again in another tab while a code of the first secret is confirmed:
    the code was the old secret's, so two-factor sign-in stays off."""
    new_secret = confirm_after_another_tab(app, lambda _: {"totp_secret": pyotp.random_base32()})
    assert new_secret is None
    assert stored(app).totp_enabled_at is None


def test_two_confirmations_at_once_turn_it_on_once(app: Flask, admin_account: str) -> None:
    """Two tabs confirm with consecutive codes: the one that waited finds it on already, and
    the recovery codes the first page showed stay the ones that work."""

    def confirmed_first(totp: pyotp.TOTP) -> dict[str, Any]:
        return {"totp_enabled_at": utcnow(), "totp_last_step": totp.timecode(utcnow()) - 1}

    assert confirm_after_another_tab(app, confirmed_first) is None
    assert stored(app).totp_enabled_at is not None  # the first tab's


def test_turning_two_factor_on_ends_the_other_sessions(
    app: Flask, admin: FlaskClient, admin_account: str, start: datetime
) -> None:
    """A session signed in with the password alone does not outlive the second factor."""
    other = app.test_client()
    with time_machine.travel(start, tick=False):
        assert sign_in(other).status_code == 303 and signed_in(other)
        enrol(admin)
        assert signed_in(admin)  # the session that turned it on goes on
        assert not signed_in(other)


def test_enrol_then_sign_in_with_the_apps_code(app, admin, caplog, start) -> None:
    with time_machine.travel(start, tick=False), caplog.at_level(logging.DEBUG):
        totp, _ = enrol(admin)
        page = admin.get("/admin/two-factor").text
        assert re.search(rf"On since <time[^>]*>{start:%Y-%m-%d %H:%M} UTC</time>", page)
        sign_out(admin)
        password = sign_in(admin)
        assert password.status_code == 303 and password.headers["Location"] == "/admin/login/code"
        assert not signed_in(admin)  # the password alone is not a sign-in
    with time_machine.travel(start + timedelta(seconds=30), tick=False):
        wrong = give_code(admin, "000000" if totp.now() != "000000" else "111111")
        assert wrong.status_code == 400 and "Wrong code" in wrong.text and not signed_in(admin)
        right = give_code(admin, totp.now())
        assert right.status_code == 303 and right.headers["Location"] == "/admin/"
        assert signed_in(admin)
    assert stored(app).last_login_at == start + timedelta(seconds=30)
    # The secret never reaches the log.
    assert all(totp.secret not in record.getMessage() for record in caplog.records)


@pytest.mark.both_backends
def test_a_code_works_once(app, admin, start) -> None:
    with time_machine.travel(start, tick=False):
        totp, _ = enrol(admin)
    with time_machine.travel(start + timedelta(seconds=30), tick=False):
        sign_out(admin)
        sign_in(admin)
        assert give_code(admin, totp.now()).status_code == 303
        sign_out(admin)
        sign_in(admin)
        assert give_code(admin, totp.now()).status_code == 400
    # The next step's code is accepted, and one step's drift either way.
    with time_machine.travel(start + timedelta(seconds=60), tick=False):
        assert give_code(admin, totp.at(start + timedelta(seconds=90))).status_code == 303


def test_the_enrolment_code_cannot_sign_in_again(app, admin, start) -> None:
    with time_machine.travel(start, tick=False):
        totp, _ = enrol(admin)
        sign_out(admin)
        sign_in(admin)
        assert give_code(admin, totp.now()).status_code == 400


@pytest.mark.both_backends
def test_recovery_codes_sign_in_once_each_and_are_stored_hashed(app, admin, start) -> None:
    with time_machine.travel(start, tick=False):
        _, codes = enrol(admin)
        with app.app_context():
            hashes = db.session.scalars(select(AdminRecoveryCode.code_hash)).all()
        assert len(hashes) == 10 and not set(codes) & set(hashes)
        assert not any(code.replace("-", "") in h for code in codes for h in hashes)
        sign_out(admin)
        sign_in(admin)
        # Spaces and capitals as people type them from paper.
        assert give_code(admin, codes[3].upper().replace("-", " ")).status_code == 303
        assert "9 recovery codes left" in admin.get("/admin/two-factor").text
        sign_out(admin)
        sign_in(admin)
        assert give_code(admin, codes[3]).status_code == 400
        assert give_code(admin, codes[4]).status_code == 303


def sign_in_at_once(app: Flask, monkeypatch: Any, code: str, browsers: int = 5) -> list[int]:
    """Give the same code in the second step of several sign-ins at the same instant.

    Each request is held where it asks the time to check the code until all
    have got there (5 seconds at most), so each has read the admin's row
    before any spends the code. Each browser is on an address of its own, and
    the losers are fewer than the wrong codes the account allows, so no lockout
    refuses them.
    """
    gate = threading.Barrier(browsers, timeout=5)

    def held_now() -> datetime:
        with contextlib.suppress(threading.BrokenBarrierError):
            gate.wait()
        return utcnow()

    monkeypatch.setattr(two_factor, "utcnow", held_now)
    clients = [from_elsewhere(app, number) for number in range(1, browsers + 1)]
    for browser in clients:
        assert sign_in(browser).status_code == 303
    answers = at_once([functools.partial(give_code, browser, code) for browser in clients])
    return [answer.status_code for answer in answers]


@pytest.mark.postgres
def test_a_recovery_code_signs_in_one_of_many_sessions_at_once(
    app, admin, start, monkeypatch
) -> None:
    with time_machine.travel(start, tick=False):
        _, codes = enrol(admin)
        statuses = sign_in_at_once(app, monkeypatch, codes[0])
    assert sorted(statuses) == [303] + [400] * (len(statuses) - 1)


@pytest.mark.postgres
def test_an_apps_code_signs_in_one_of_many_sessions_at_once(app, admin, start, monkeypatch) -> None:
    with time_machine.travel(start, tick=False) as clock:
        totp, _ = enrol(admin)
        clock.shift(timedelta(seconds=90))  # past the enrolment code's step and its drift
        statuses = sign_in_at_once(app, monkeypatch, totp.now())
    assert sorted(statuses) == [303] + [400] * (len(statuses) - 1)


def test_new_recovery_codes_replace_the_old_ones(app, admin, start) -> None:
    with time_machine.travel(start, tick=False):
        _, old = enrol(admin)
        unticked = submit(admin, "/admin/two-factor", "/admin/two-factor/recovery-codes")
        assert unticked.status_code == 303
        fresh = submit(
            admin, "/admin/two-factor", "/admin/two-factor/recovery-codes", confirm="y", code=old[1]
        )
        assert fresh.status_code == 200 and fresh.headers["Cache-Control"] == "no-store"
        new = re.findall(r"<li><code>([a-z0-9-]{11})</code></li>", fresh.text)
        assert len(new) == 10 and not set(new) & set(old)
        sign_out(admin)
        sign_in(admin)
        assert give_code(admin, old[0]).status_code == 400
        assert give_code(admin, new[0]).status_code == 303


def test_a_wrong_first_code_leaves_two_factor_off(app, admin) -> None:
    started = submit(admin, "/admin/two-factor", "/admin/two-factor/start", password=PASSWORD)
    totp = pyotp.parse_uri(otpauth_uri(started.text))
    wrong = "123456" if totp.now() != "123456" else "654321"
    response = submit(
        admin, "/admin/two-factor", "/admin/two-factor/confirm", code=wrong, password=PASSWORD
    )
    assert response.status_code == 303
    assert "not the one the app shows now" in admin.get("/admin/two-factor").text
    assert not stored(app).two_factor
    # The right code without the admin's password (a copied session alone) turns nothing on.
    no_password = submit(
        admin, "/admin/two-factor", "/admin/two-factor/confirm", code=totp.now(), password="guess"
    )
    assert no_password.status_code == 303 and not stored(app).two_factor
    sign_out(admin)
    assert sign_in(admin).headers["Location"] == "/admin/"


def test_the_enrolment_page_changes_nothing_on_get(app, admin) -> None:
    page = admin.get("/admin/two-factor")
    assert page.status_code == 200 and "Set up two-factor sign-in" in page.text
    assert "otpauth://" not in page.text and stored(app).totp_secret is None


def test_the_second_step_waits_five_minutes(app, admin, start) -> None:
    with time_machine.travel(start, tick=False):
        totp, _ = enrol(admin)
        sign_out(admin)
        sign_in(admin)
    later = start + timedelta(minutes=6)
    with time_machine.travel(later, tick=False):
        response = admin.get("/admin/login/code")
        assert response.status_code == 303 and response.headers["Location"] == "/admin/login"
        assert "Sign in again" in admin.get("/admin/login").text
        token = csrf_token(admin.get("/admin/login").text)
        late = admin.post("/admin/login/code", data={"csrf_token": token, "code": totp.now()})
        assert late.status_code == 303 and not signed_in(admin)


def test_the_second_step_without_a_password_goes_to_sign_in(client, admin_account) -> None:
    response = client.get("/admin/login/code")
    assert response.status_code == 303 and response.headers["Location"] == "/admin/login"
    assert "Sign in again" not in client.get("/admin/login").text


def test_wrong_codes_count_as_failed_sign_ins(app, admin, start) -> None:
    with time_machine.travel(start, tick=False):
        totp, _ = enrol(admin)
        sign_out(admin)
        sign_in(admin)
        wrong = "000000" if totp.now() != "000000" else "111111"
        for _ in range(5):
            assert give_code(admin, wrong).status_code == 400
        locked = give_code(admin, totp.now())
        assert locked.status_code == 429
        assert "Too many failed sign-ins: try again in 15 minutes." in locked.text


@pytest.mark.parametrize("digits", ["\uff10", "\u0660"], ids=["fullwidth", "arabic-indic"])
def test_digits_other_than_ascii_are_a_wrong_code(app, admin, start, digits) -> None:
    """str.isdigit takes them; the code the app shows is never written with them."""
    with time_machine.travel(start, tick=False):
        totp, _ = enrol(admin)
        sign_out(admin)
        sign_in(admin)
        code = "".join(chr(ord(digits) + int(d)) for d in totp.now())
        refused = give_code(admin, code)
        assert refused.status_code == 400 and "Wrong code" in refused.text


def test_reset_2fa_for_a_lost_phone(app, runner, admin, start) -> None:
    with time_machine.travel(start, tick=False):
        enrol(admin)
    result = runner.invoke(args=["admin", "reset-2fa", ADMIN])
    assert result.exit_code == 0 and "password alone" in result.output
    assert not signed_in(admin)  # the session ended with it
    assert sign_in(admin).headers["Location"] == "/admin/"
    with app.app_context():
        assert db.session.scalars(select(AdminRecoveryCode)).all() == []
    admin_row = stored(app)
    assert admin_row.totp_secret is None and not admin_row.two_factor
    listing = runner.invoke(args=["admin", "list"]).output
    assert "2FA off" in listing


def test_changing_it_takes_a_second_factor_and_counts_wrong_ones(app, admin, start) -> None:
    """A signed-in session alone (a copied cookie) neither turns the second factor off nor
    renews its codes; five wrong codes in a row, and the page refuses for a while."""
    with time_machine.travel(start, tick=False):
        _, codes = enrol(admin)
        # Both pages of a change draw on one allowance: five wrong codes in all, not each.
        for page in ["off", "recovery-codes"] * 2 + ["off"]:
            wrong = submit(
                admin, "/admin/two-factor", f"/admin/two-factor/{page}", confirm="y", code="000000"
            )
            assert wrong.status_code == 303
        assert "neither the one your app shows now" in admin.get("/admin/two-factor").text
        assert stored(app).two_factor
        spent = submit(
            admin, "/admin/two-factor", "/admin/two-factor/off", confirm="y", code=codes[0]
        )
        assert spent.status_code == 429 and stored(app).two_factor
        assert 0 < int(spent.headers["Retry-After"]) <= 15 * 60
        assert "Too many wrong codes: try again in 15 minutes." in spent.text
        assert "<h1>Nothing was done</h1>" in spent.text and 'href="/admin/games"' in spent.text
    with time_machine.travel(start + timedelta(minutes=16), tick=False):
        right = submit(
            admin, "/admin/two-factor", "/admin/two-factor/off", confirm="y", code=codes[0]
        )
        assert right.status_code == 303 and not stored(app).two_factor


def test_list_shows_two_factor_on(runner, admin) -> None:
    enrol(admin)
    assert "ada  enabled  2FA on" in runner.invoke(args=["admin", "list"]).output


def test_an_admin_may_turn_it_off_when_not_required(app, admin) -> None:
    _, codes = enrol(admin)
    submit(admin, "/admin/two-factor", "/admin/two-factor/off", confirm="y", code=codes[0])
    assert not stored(app).two_factor
    sign_out(admin)
    assert sign_in(admin).headers["Location"] == "/admin/"


def test_turning_it_off_twice_says_it_is_off_already(app, admin) -> None:
    """The form sent again (a second click, the browser's history): nothing to do, and no
    wrong code said or counted."""
    _, codes = enrol(admin)
    token = csrf_token(admin.get("/admin/two-factor").text)
    for code in codes[:2]:
        sent = admin.post(
            "/admin/two-factor/off", data={"csrf_token": token, "confirm": "y", "code": code}
        )
        assert sent.status_code == 303
    page = admin.get("/admin/two-factor").text
    assert "Two-factor sign-in is off already: nothing was changed." in page
    assert "neither the one your app shows now" not in page


@pytest.mark.postgres
def test_turning_it_off_while_another_tab_does_waits_and_finds_it_off(
    app, admin, postgres_database
) -> None:
    """Two clicks at once: the second waits for the first, then finds it off and records
    nothing."""
    _, codes = enrol(admin)
    token = csrf_token(admin.get("/admin/two-factor").text)
    answers: list[TestResponse] = []
    with app.app_context(), db.engine.connect() as first:
        first.execute(update(AdminUser).where(AdminUser.name == ADMIN).values(totp_enabled_at=None))
        second = threading.Thread(
            target=lambda: answers.append(
                admin.post(
                    "/admin/two-factor/off",
                    data={"csrf_token": token, "confirm": "y", "code": codes[0]},
                )
            )
        )
        second.start()
        wait_until(waits_on_a_lock(postgres_database))
        first.commit()
        second.join(30)
    assert [answer.status_code for answer in answers] == [303]
    assert "Two-factor sign-in is off already" in admin.get("/admin/two-factor").text
    with app.app_context():
        off = select(AdminAction).where(AdminAction.action == "turn_off_2fa")
        assert db.session.scalars(off).all() == []


def test_turning_it_on_and_off_and_new_recovery_codes_are_in_the_audit_trail(
    app, admin, start
) -> None:
    with time_machine.travel(start, tick=False):
        totp, codes = enrol(admin)
        submit(admin, "/admin/two-factor", "/admin/two-factor/recovery-codes")  # not ticked
        fresh = submit(
            admin,
            "/admin/two-factor",
            "/admin/two-factor/recovery-codes",
            confirm="y",
            code=codes[0],
        )
        new = re.findall(r"<li><code>([a-z0-9-]{11})</code></li>", fresh.text)
        submit(admin, "/admin/two-factor", "/admin/two-factor/off", confirm="y", code=new[0])
    with app.app_context():
        entries = db.session.execute(
            select(AdminAction.action, AdminAction.note)
            .where(AdminAction.admin == ADMIN)
            .order_by(AdminAction.id)
        ).all()
    assert [tuple(entry) for entry in entries] == [
        ("turn_on_2fa", "turned on their two-factor sign-in"),
        ("new_recovery_codes", "replaced their recovery codes"),
        ("turn_off_2fa", "turned off their two-factor sign-in"),
    ]
    assert not any(secret in note for secret in [totp.secret, *codes, *new] for _, note in entries)


class TestRequired:
    """With ADMIN_REQUIRE_2FA=true."""

    @pytest.fixture
    def app_config(self) -> dict[str, Any]:
        return {"ADMIN_REQUIRE_2FA": "true"}

    def test_an_admin_without_it_is_sent_to_enrol_before_anything_else(self, app, admin) -> None:
        for page in ("/admin/", "/admin/mail", "/admin/admins", "/admin/games/1"):
            response = admin.get(page)
            assert response.status_code == 302, page
            assert response.headers["Location"] == "/admin/two-factor", page
        forced = admin.post("/admin/games/1/cancel", data={"confirm": "y"})
        assert forced.status_code in (302, 400)  # no CSRF token: refused either way
        page = admin.get("/admin/two-factor")
        assert page.status_code == 200 and "set yours up to use the dashboard" in page.text
        enrol(admin)
        assert signed_in(admin)

    def test_it_cannot_be_turned_off(self, app, admin) -> None:
        enrol(admin)
        submit(admin, "/admin/two-factor", "/admin/two-factor/off", confirm="y")
        assert stored(app).two_factor
        assert "it cannot be turned off" in admin.get("/admin/two-factor").text

    def test_sign_out_stays_open(self, admin) -> None:
        token = csrf_token(admin.get("/admin/two-factor").text)
        response = admin.post("/admin/logout", data={"csrf_token": token})
        assert response.status_code == 303 and response.headers["Location"] == "/admin/login"


@pytest.mark.both_backends
def test_removing_an_admin_removes_their_recovery_codes(app, runner, admin) -> None:
    enrol(admin)
    assert runner.invoke(args=["admin", "remove-user", ADMIN, "--yes"]).exit_code == 0
    with app.app_context():
        assert db.session.scalars(select(AdminRecoveryCode)).all() == []


def test_wrong_codes_from_many_addresses_lock_the_second_step_out(
    app, admin, runner, start
) -> None:
    """Only someone who has the password reaches the code's step: its wrong codes count for
    the account, wherever they come from, or many addresses would guess the code at leisure."""
    with time_machine.travel(start, tick=False):
        totp, codes = enrol(admin)
        sign_out(admin)
        wrong = "000000" if totp.now() != "000000" else "111111"
        for number in range(1, 4):
            guesser = from_elsewhere(app, number)
            assert sign_in(guesser).status_code == 303
            answers = [give_code(guesser, wrong).status_code for _ in range(2)]
            assert answers == ([400, 400] if number < 3 else [400, 429])
        # The admin, from their own address, may still sign in with a password and a code.
        elsewhere = from_elsewhere(app, 9)
        assert sign_in(elsewhere).status_code == 303
        assert give_code(elsewhere, codes[0]).status_code == 429
        # The admins page shows the lockout, and another admin can lift it.
        assert stored(app).locked_until is not None
        assert runner.invoke(args=["admin", "unlock", ADMIN]).exit_code == 0
        assert give_code(elsewhere, codes[0]).status_code == 303


def test_a_session_alone_never_reads_the_secret_of_a_setup(app, admin) -> None:
    """A copy of the session's cookie, without the password, can neither start a setup nor
    read the secret of one its admin started: it would hold the second factor once the admin
    turned it on with that secret."""
    copy = app.test_client()
    copy.set_cookie("session", admin.get_cookie("session").value)
    assert submit(copy, "/admin/two-factor", "/admin/two-factor/start").status_code == 303
    assert stored(app).totp_secret is None
    started = submit(admin, "/admin/two-factor", "/admin/two-factor/start", password=PASSWORD)
    assert started.status_code == 200 and "<svg" in started.text
    totp = pyotp.parse_uri(otpauth_uri(started.text))
    assert totp.secret == stored(app).totp_secret
    for reader in (copy, admin):
        page = reader.get("/admin/two-factor").text
        assert "otpauth://" not in page and totp.secret not in page.replace(" ", "")
        assert "Turn two-factor sign-in on" in page  # the code is still asked for
    response = submit(
        admin, "/admin/two-factor", "/admin/two-factor/confirm", code=totp.now(), password=PASSWORD
    )
    assert response.status_code == 200 and stored(app).two_factor
