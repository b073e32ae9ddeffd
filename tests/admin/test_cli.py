"""``flask admin create-user`` and ``set-password``: from a prompt or from the environment."""

from __future__ import annotations

from sqlalchemy import select

from service.admin.auth import authenticate
from service.models import AdminAction, AdminUser, db

from .conftest import sign_in


def test_create_user_from_the_environment_then_sign_in(app, runner, client) -> None:
    result = runner.invoke(
        args=["admin", "create-user", "grace"],
        env={"SPLITMIND_ADMIN_PASSWORD": "a long enough password"},
    )
    assert result.exit_code == 0, result.output
    with app.app_context():
        stored = db.session.scalars(select(AdminUser)).one()
        assert stored.name == "grace"
        assert "a long enough password" not in stored.password_hash
    assert sign_in(client, "grace", "a long enough password").status_code == 303


def test_create_user_asks_twice(app, runner) -> None:
    result = runner.invoke(
        args=["admin", "create-user", "grace"],
        input="first password\nother password\nfirst password\nfirst password\n",
    )
    assert result.exit_code == 0, result.output
    assert "do not match" in result.output
    with app.app_context():
        assert authenticate("grace", "first password") is not None
        assert authenticate("grace", "other password") is None


def test_create_user_refuses_bad_names_short_passwords_and_duplicates(runner) -> None:
    env = {"SPLITMIND_ADMIN_PASSWORD": "a long enough password"}
    assert runner.invoke(args=["admin", "create-user", "grace"], env=env).exit_code == 0
    duplicate = runner.invoke(args=["admin", "create-user", "grace"], env=env)
    assert duplicate.exit_code == 2 and "already an admin named grace" in duplicate.output
    in_capitals = runner.invoke(args=["admin", "create-user", "Grace"], env=env)
    assert in_capitals.exit_code == 2 and "already an admin named grace" in in_capitals.output
    bad = runner.invoke(args=["admin", "create-user", "no spaces"], env=env)
    assert bad.exit_code == 2 and "a name is" in bad.output
    short = runner.invoke(
        args=["admin", "create-user", "ada"], env={"SPLITMIND_ADMIN_PASSWORD": "short"}
    )
    assert short.exit_code == 2 and "at least 10 characters" in short.output


def test_a_name_is_refused_before_the_password_is_asked_for(runner) -> None:
    env = {"SPLITMIND_ADMIN_PASSWORD": "a long enough password"}
    assert runner.invoke(args=["admin", "create-user", "grace"], env=env).exit_code == 0
    for args, said in (
        (["create-user", "Grace"], "already an admin named grace"),
        (["create-user", "no spaces"], "a name is"),
        (["set-password", "nobody"], "no admin named nobody"),
    ):
        refused = runner.invoke(args=["admin", *args], input="")  # no password to give
        assert refused.exit_code == 2 and said in refused.output
        assert "Password" not in refused.output


def test_set_password(app, runner) -> None:
    env = {"SPLITMIND_ADMIN_PASSWORD": "the first password"}
    assert runner.invoke(args=["admin", "create-user", "grace"], env=env).exit_code == 0
    env = {"SPLITMIND_ADMIN_PASSWORD": "the second password"}
    assert runner.invoke(args=["admin", "set-password", "grace"], env=env).exit_code == 0
    with app.app_context():
        assert authenticate("grace", "the second password") is not None
        assert authenticate("grace", "the first password") is None
    missing = runner.invoke(args=["admin", "set-password", "nobody"], env=env)
    assert missing.exit_code == 2 and "no admin named nobody" in missing.output


def test_create_user_and_set_password_are_in_the_audit_trail(app, runner) -> None:
    env = {"SPLITMIND_ADMIN_PASSWORD": "the first password"}
    assert runner.invoke(args=["admin", "create-user", "grace"], env=env).exit_code == 0
    env = {"SPLITMIND_ADMIN_PASSWORD": "the second password"}
    assert runner.invoke(args=["admin", "set-password", "grace"], env=env).exit_code == 0
    assert runner.invoke(args=["admin", "set-password", "nobody"], env=env).exit_code == 2
    with app.app_context():
        entries = db.session.execute(
            select(AdminAction.admin, AdminAction.action, AdminAction.note).order_by(AdminAction.id)
        ).all()
    assert [tuple(entry) for entry in entries] == [
        ("the command line", "create_admin", "added admin grace"),
        ("the command line", "set_password", "gave admin grace a new password"),
    ]
