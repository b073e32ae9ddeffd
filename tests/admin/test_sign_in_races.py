"""Sign-in attempts sent at the same instant: of the failed ones, no more are answered than the
limits allow (5 for one name from one address, 20 from one address), and the rest get 429."""

from __future__ import annotations

from collections import Counter

import pyotp
import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service.admin import two_factor
from service.models import AdminUser, db
from service.unit_of_work import transaction

from ..helpers import at_once
from .conftest import ADMIN, PASSWORD, csrf_token, sign_in

pytestmark = pytest.mark.postgres


def post_together(clients: list[FlaskClient], path: str, forms: list[dict[str, str]]) -> Counter:
    """Send each client's form to ``path`` at the same instant; how many got each status."""
    for client, form in zip(clients, forms, strict=True):
        form["csrf_token"] = csrf_token(client.get(path).text)
    return Counter(
        at_once(
            [
                lambda client=client, form=form: client.post(path, data=form).status_code
                for client, form in zip(clients, forms, strict=True)
            ]
        )
    )


@pytest.mark.parametrize(
    ("names", "limit"),
    [([ADMIN] * 15, 5), ([f"guess{n}" for n in range(30)], 20)],
    ids=["one name", "many names"],
)
def test_failed_sign_ins_sent_together_stop_at_the_limit(
    app: Flask, admin_account: str, names: list[str], limit: int
) -> None:
    """Wrong passwords from one address, for one name or for as many names: as many are
    checked as the limit allows, no more, and the address is held off after them."""
    clients = [app.test_client() for _ in names]
    forms = [{"name": name, "password": "a wrong guess"} for name in names]
    statuses = post_together(clients, "/admin/login", forms)
    assert statuses[400] <= limit and statuses[400] + statuses[429] == len(names), statuses
    assert sign_in(app.test_client()).status_code == 429


def test_wrong_codes_sent_together_stop_at_the_limit(app: Flask, admin_account: str) -> None:
    with app.app_context(), transaction():
        admin = db.session.scalars(select(AdminUser).where(AdminUser.name == ADMIN)).one()
        two_factor.start_enrolment(admin)
        assert admin.totp_secret is not None
        assert two_factor.confirm_enrolment(admin, pyotp.TOTP(admin.totp_secret).now())
    clients = [app.test_client() for _ in range(15)]
    for client in clients:
        assert sign_in(client, ADMIN, PASSWORD).headers["Location"] == "/admin/login/code"
    forms = [{"code": "not-a-code"} for _ in clients]
    statuses = post_together(clients, "/admin/login/code", forms)
    assert statuses[400] <= 5 and statuses[400] + statuses[429] == 15, statuses
    with app.app_context():
        secret = db.session.scalars(select(AdminUser.totp_secret)).one()
    token = csrf_token(clients[0].get("/admin/login/code").text)
    right = {"csrf_token": token, "code": pyotp.TOTP(secret).now()}
    assert clients[0].post("/admin/login/code", data=right).status_code == 429
