"""Admin accounts: listed, disabled, enabled, removed, shown and let out of a lockout, from the
command line and from the admins page; nobody disables or removes themselves."""

from __future__ import annotations

import logging
import re
import threading
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import delete, select, update
from werkzeug.test import TestResponse

from service.admin.auth import create_admin, wait_message
from service.models import AdminAction, AdminUser, db, utcnow
from service.unit_of_work import transaction

from ..helpers import wait_until, waits_on_a_lock
from ..test_safe_methods import snapshot
from .conftest import ADMIN, csrf_token, sign_in, submit

OTHER = "bob"
OTHER_PASSWORD = "bob's long password"


@pytest.fixture
def other(app: Flask) -> int:
    """A second admin account; its id."""
    with app.app_context(), transaction():
        return create_admin(OTHER, OTHER_PASSWORD).id


def stored(app: Flask, name: str) -> AdminUser | None:
    with app.app_context():
        return db.session.scalars(select(AdminUser).where(AdminUser.name == name)).first()


def signed_in(client: FlaskClient) -> bool:
    return client.get("/admin/").status_code == 200


def test_list_shows_each_admin_with_two_factor_and_last_sign_in(
    app, runner, client, admin_account, other
) -> None:
    with time_machine.travel(datetime(2026, 3, 4, 5, 6, tzinfo=UTC), tick=False):
        assert sign_in(client).status_code == 303
    assert runner.invoke(args=["admin", "disable", OTHER]).exit_code == 0
    result = runner.invoke(args=["admin", "list"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "ada  enabled   2FA off  2026-03-04 05:06 UTC",
        "bob  disabled  2FA off  never",
    ]


def test_list_without_admins_says_how_to_add_one(runner) -> None:
    result = runner.invoke(args=["admin", "list"])
    assert result.exit_code == 0 and "admin create-user NAME" in result.output


def test_disable_refuses_the_sign_in_and_ends_the_open_session(
    app, runner, client, admin_account, caplog
) -> None:
    assert sign_in(client).status_code == 303 and signed_in(client)
    with caplog.at_level(logging.INFO, logger="service.audit"):
        result = runner.invoke(args=["admin", "disable", ADMIN])
    assert result.exit_code == 0 and "can no longer sign in" in result.output
    assert "admin the command line: disabled admin ada (disable_admin)" in caplog.messages
    # Again: what was asked for holds, and the audit trail records it once.
    again = runner.invoke(args=["admin", "disable", ADMIN])
    assert again.exit_code == 0
    assert again.output == "ada can no longer sign in already: nothing was changed.\n"
    assert caplog.messages.count("admin the command line: disabled admin ada (disable_admin)") == 1
    # The session stops working at its next request...
    response = client.get("/admin/")
    assert response.status_code == 302 and response.headers["Location"].startswith("/admin/login")
    # ...and the right password is told the account is disabled; a wrong one learns nothing.
    refused = sign_in(client)
    assert refused.status_code == 403 and "This account is disabled" in refused.text
    assert "This account is disabled" not in sign_in(client, password="wrong guess").text
    assert not signed_in(client)

    assert runner.invoke(args=["admin", "enable", ADMIN]).exit_code == 0
    assert sign_in(client).status_code == 303 and signed_in(client)


def test_commands_name_an_admin_that_exists(runner) -> None:
    for command in ("disable", "enable", "unlock", "reset-2fa"):
        result = runner.invoke(args=["admin", command, "nobody"])
        assert result.exit_code == 2 and "there is no admin named nobody" in result.output, command
    result = runner.invoke(args=["admin", "remove-user", "nobody", "--yes"])
    assert result.exit_code == 2 and "there is no admin named nobody" in result.output


def test_remove_user_from_the_command_line(app, runner, client, admin_account) -> None:
    assert sign_in(client).status_code == 303
    assert runner.invoke(args=["admin", "remove-user", ADMIN], input="n\n").exit_code == 1
    assert stored(app, ADMIN) is not None
    result = runner.invoke(args=["admin", "remove-user", ADMIN, "--yes"])
    assert result.exit_code == 0 and "is removed" in result.output
    assert stored(app, ADMIN) is None and not signed_in(client)


def fail_five_times(client: FlaskClient, name: str = ADMIN) -> None:
    for _ in range(5):
        assert sign_in(client, name=name, password="a wrong guess").status_code == 400


def test_the_lockout_says_how_long_to_wait(client, admin_account) -> None:
    start = datetime(2026, 3, 4, 5, 0, tzinfo=UTC)
    with time_machine.travel(start, tick=False):
        fail_five_times(client)
    with time_machine.travel(start + timedelta(minutes=1, seconds=30), tick=False):
        response = sign_in(client)
    assert response.status_code == 429
    assert "Too many failed sign-ins: try again in 14 minutes." in response.text
    assert response.headers["Retry-After"] == str(13 * 60 + 30)
    assert '<form method="post"' in response.text  # the form, to try again later
    with time_machine.travel(start + timedelta(minutes=16), tick=False):
        assert sign_in(client).status_code == 303


def test_wait_message_rounds_up_to_whole_minutes() -> None:
    assert wait_message(5) == "Too many failed sign-ins: try again in 1 minute."
    assert wait_message(61) == "Too many failed sign-ins: try again in 2 minutes."
    assert wait_message(900) == "Too many failed sign-ins: try again in 15 minutes."


def test_unlock_lets_a_locked_out_admin_try_again(app, runner, client, admin_account) -> None:
    fail_five_times(client)
    assert sign_in(client).status_code == 429
    result = runner.invoke(args=["admin", "unlock", ADMIN])
    assert result.exit_code == 0 and "may try to sign in again" in result.output
    assert sign_in(client).status_code == 303
    # The count starts afresh: five more failures lock the name again.
    client.post("/admin/logout", data={"csrf_token": csrf_token(client.get("/admin/").text)})
    fail_five_times(client)
    assert sign_in(client).status_code == 429


# The admins page.


def test_admins_page_lists_every_admin(app, admin, other) -> None:
    with app.app_context(), transaction():
        db.session.get(AdminUser, other).last_login_at = datetime(2026, 2, 1, 9, 30, tzinfo=UTC)
    page = admin.get("/admin/admins")
    assert page.status_code == 200
    row = re.search(rf'<tr id="admin-{other}">(.*?)</tr>', page.text, re.S)
    assert row and "bob" in row.group(1) and "2026-02-01 09:30" in row.group(1)
    assert "enabled" in row.group(1) and "Disable" in row.group(1)
    own = re.search(
        r"<tr id=\"admin-\d+\">\s*<th scope=\"row\">ada <small>\(you\)(.*?)</tr>", page.text, re.S
    )
    assert own and "never" not in own.group(1) and "<button" not in own.group(1)


def test_disabling_another_admin_asks_for_the_box_then_ends_their_session(
    app, admin, other, caplog
) -> None:
    bob = app.test_client()
    assert sign_in(bob, OTHER, OTHER_PASSWORD).status_code == 303 and signed_in(bob)
    unticked = submit(admin, "/admin/admins", f"/admin/admins/{other}/disable")
    assert unticked.status_code == 303
    assert "Tick the box to confirm it for bob." in admin.get("/admin/admins").text
    assert stored(app, OTHER).disabled_at is None and signed_in(bob)

    with caplog.at_level(logging.INFO, logger="service.audit"):
        done = submit(admin, "/admin/admins", f"/admin/admins/{other}/disable", confirm="y")
    assert done.status_code == 303 and done.headers["Location"] == "/admin/admins"
    assert "bob can no longer sign in." in admin.get("/admin/admins").text
    assert "admin ada: disabled admin bob (disable_admin)" in caplog.messages
    # The audit page lists it under the acting admin.
    assert "disabled admin bob" in admin.get("/admin/audit", query_string={"admin": ADMIN}).text
    assert stored(app, OTHER).disabled_at is not None and not signed_in(bob)

    submit(admin, "/admin/admins", f"/admin/admins/{other}/enable")
    assert stored(app, OTHER).disabled_at is None
    assert sign_in(bob, OTHER, OTHER_PASSWORD).status_code == 303


def test_removing_another_admin_asks_for_the_box(app, admin, other) -> None:
    submit(admin, "/admin/admins", f"/admin/admins/{other}/remove")
    assert stored(app, OTHER) is not None
    submit(admin, "/admin/admins", f"/admin/admins/{other}/remove", confirm="y")
    assert stored(app, OTHER) is None
    assert "bob is removed." in admin.get("/admin/admins").text


def test_an_admin_cannot_disable_or_remove_themselves(app, admin) -> None:
    own = stored(app, ADMIN).id
    for action in ("disable", "remove"):
        response = submit(admin, "/admin/admins", f"/admin/admins/{own}/{action}", confirm="y")
        assert response.status_code == 303
        assert (
            f"You cannot {action} yourself: ask another admin." in admin.get("/admin/admins").text
        )
    assert stored(app, ADMIN).disabled_at is None and signed_in(admin)


def test_an_admin_lifts_another_admins_lockout(app, admin, other) -> None:
    stranger = app.test_client()
    fail_five_times(stranger, OTHER)
    assert sign_in(stranger, OTHER, OTHER_PASSWORD).status_code == 429
    submit(admin, "/admin/admins", f"/admin/admins/{other}/unlock")
    assert "bob may try to sign in again at once." in admin.get("/admin/admins").text
    assert sign_in(stranger, OTHER, OTHER_PASSWORD).status_code == 303


def test_an_admin_cannot_lift_their_own_lockout(app, admin) -> None:
    """Signed in on one device, they stay locked out where the failed sign-ins came from."""
    stranger = app.test_client()
    fail_five_times(stranger)
    own = stored(app, ADMIN)
    response = submit(admin, "/admin/admins", f"/admin/admins/{own.id}/unlock")
    assert response.status_code == 303
    page = admin.get("/admin/admins").text
    assert "You cannot lift the sign-in lockout of yourself: ask another admin." in page
    assert "may try to sign in again" not in page
    after = stored(app, ADMIN)
    assert (after.lockout_key, after.locked_until) == (own.lockout_key, own.locked_until)
    assert after.locked_until is not None
    assert sign_in(stranger).status_code == 429


def lockout_cell(page: str, admin_id: int) -> str:
    row = re.search(rf'<tr id="admin-{admin_id}">(.*?)</tr>', page, re.S)
    assert row, page
    cell = re.search(r'<td data-label="Sign-in">(.*?)</td>', row.group(1), re.S)
    assert cell
    # The lockout is offered to be lifted while it lasts, and only then.
    assert ("Lift sign-in lockout" in row.group(1)) == ("locked out" in cell.group(1))
    return cell.group(1)


def test_admins_page_shows_a_lockout_until_it_ends(app, admin, other, caplog) -> None:
    start = datetime.now(UTC).replace(second=0, microsecond=0) + timedelta(minutes=1)
    stranger = app.test_client()
    with time_machine.travel(start, tick=False), caplog.at_level(logging.WARNING):
        for _ in range(4):
            sign_in(stranger, OTHER, "a wrong guess")
        assert "locked out" not in lockout_cell(admin.get("/admin/admins").text, other)
        sign_in(stranger, OTHER, "a wrong guess")
    until = (start + timedelta(minutes=15)).strftime("%Y-%m-%d %H:%M")
    assert f"admin bob: locked out after failed sign-ins from 127.0.0.1 until {until} UTC" in (
        caplog.messages
    )
    with time_machine.travel(start + timedelta(minutes=5), tick=False):
        cell = lockout_cell(admin.get("/admin/admins").text, other)
        assert "locked out" in cell and f">{until} UTC</time>" in cell and "127.0.0.1" in cell
        assert "enabled" in cell
    with time_machine.travel(start + timedelta(minutes=16), tick=False):
        assert "locked out" not in lockout_cell(admin.get("/admin/admins").text, other)


def test_lifting_a_lockout_clears_it_from_the_admins_page(app, admin, other) -> None:
    fail_five_times(app.test_client(), OTHER)
    assert "locked out" in lockout_cell(admin.get("/admin/admins").text, other)
    submit(admin, "/admin/admins", f"/admin/admins/{other}/unlock")
    assert "locked out" not in lockout_cell(admin.get("/admin/admins").text, other)
    assert stored(app, OTHER).locked_until is None


def test_an_admin_who_is_not_locked_out_has_no_lockout_to_lift(app, admin, other) -> None:
    assert "locked out" not in lockout_cell(admin.get("/admin/admins").text, other)
    before = stored(app, OTHER).lockout_key
    response = submit(admin, "/admin/admins", f"/admin/admins/{other}/unlock")
    assert response.status_code == 303
    page = admin.get("/admin/admins").text
    assert "Admin bob is not locked out: nothing to lift." in page
    assert "may try to sign in again" not in page
    assert stored(app, OTHER).lockout_key == before
    with app.app_context():
        actions = db.session.scalars(select(AdminAction.action)).all()
    assert "lift_lockout" not in actions


def test_actions_on_an_unknown_admin_say_so_and_change_nothing(app, admin) -> None:
    before = snapshot(app)
    for action in ("disable", "enable", "remove", "unlock"):
        response = submit(admin, "/admin/admins", f"/admin/admins/999/{action}", confirm="y")
        assert response.status_code == 303, action
        assert "No admin has that account (removed already?): nothing was changed." in (
            admin.get("/admin/admins").text
        )
    assert snapshot(app) == before


def test_a_change_made_already_says_so_and_records_nothing(app, admin, other, caplog) -> None:
    """A second click, or two admins at once: the second is told, and the audit trail keeps
    one entry of each change."""
    with caplog.at_level(logging.INFO, logger="service.audit"):
        for action, said in (
            ("disable", "bob can no longer sign in."),
            ("disable", "Bob can no longer sign in already: nothing was changed."),
            ("enable", "bob can sign in again."),
            ("enable", "Bob can sign in already: nothing was changed."),
            ("remove", "bob is removed."),
            ("remove", "No admin has that account (removed already?): nothing was changed."),
        ):
            response = submit(
                admin, "/admin/admins", f"/admin/admins/{other}/{action}", confirm="y"
            )
            assert response.status_code == 303
            assert said in admin.get("/admin/admins").text, said
    audited = [message for message in caplog.messages if message.startswith("admin ada:")]
    assert audited == [
        "admin ada: disabled admin bob (disable_admin)",
        "admin ada: enabled admin bob (enable_admin)",
        "admin ada: removed admin bob (remove_admin)",
    ]


@pytest.mark.postgres
@pytest.mark.parametrize(
    ("action", "said"),
    [
        ("disable", "Bob can no longer sign in already: nothing was changed."),
        ("remove", "There is no admin named bob."),
    ],
)
def test_a_change_another_admin_is_making_is_made_once(
    app, admin, other, postgres_database, action, said
) -> None:
    """Two admins at once, or a double click: the second waits for the first's change, then
    finds it made and records nothing (the audit trail keeps the first's entry alone)."""
    made_first = {
        "disable": update(AdminUser).where(AdminUser.id == other).values(disabled_at=utcnow()),
        "remove": delete(AdminUser).where(AdminUser.id == other),
    }[action]
    token = csrf_token(admin.get("/admin/admins").text)
    answers: list[TestResponse] = []
    with app.app_context(), db.engine.connect() as first:
        first.execute(made_first)
        second = threading.Thread(
            target=lambda: answers.append(
                admin.post(
                    f"/admin/admins/{other}/{action}", data={"csrf_token": token, "confirm": "y"}
                )
            )
        )
        second.start()
        wait_until(waits_on_a_lock(postgres_database))
        first.commit()
        second.join(30)
    assert [answer.status_code for answer in answers] == [303]
    assert said in admin.get("/admin/admins").text
    with app.app_context():
        assert db.session.scalars(select(AdminAction).where(AdminAction.admin == ADMIN)).all() == []


@pytest.mark.parametrize("action", ["disable", "remove"])
def test_two_admins_turning_each_other_out_at_once_leave_one_in(
    app, admin, other, postgres_database, action
) -> None:
    """Ada disables (or removes) Bob while Bob does the same to her: the one who waited finds
    they were turned out first and changes nothing, so one admin can still sign in."""
    bob = app.test_client()
    assert sign_in(bob, OTHER, OTHER_PASSWORD).status_code == 303
    ada = stored(app, ADMIN).id
    token = csrf_token(bob.get("/admin/admins").text)
    made_first = {
        "disable": update(AdminUser).where(AdminUser.id == other).values(disabled_at=utcnow()),
        "remove": delete(AdminUser).where(AdminUser.id == other),
    }[action]
    answers: list[TestResponse] = []
    done = threading.Event()

    def bobs_change() -> None:
        answers.append(
            bob.post(f"/admin/admins/{ada}/{action}", data={"csrf_token": token, "confirm": "y"})
        )
        done.set()

    with app.app_context(), db.engine.connect() as first:
        first.execute(made_first)  # Ada's change to Bob, not committed yet
        second = threading.Thread(target=bobs_change)
        second.start()
        waits = waits_on_a_lock(postgres_database)
        wait_until(lambda: done.is_set() or waits())
        first.commit()
        second.join(30)
    assert [answer.status_code for answer in answers] == [303]
    told = bob.get("/admin/login").text
    assert "You were disabled or removed by another admin meanwhile" in told
    left = stored(app, ADMIN)
    assert left is not None and left.disabled_at is None
    assert signed_in(admin)
    with app.app_context():
        assert db.session.scalars(select(AdminAction).where(AdminAction.admin == OTHER)).all() == []
