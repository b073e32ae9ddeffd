"""Which requests the rate limiter looks at.

Limits guard the forms a stranger can send (the lobby's, the lost-links form,
the admin's sign-in). A player's links carry their own credential and are
limited nowhere, nor are the front page and the rules: the limiter is told to
skip their blueprints
(:data:`service.extensions.UNLIMITED_BLUEPRINTS`), and these tests make sure
that no limit declared there would go unenforced.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from flask_limiter.util import get_qualified_name
from limits import parse

from service import allowances
from service.extensions import UNLIMITED_BLUEPRINTS, limiter
from service.links import home_token


def declared_limits(app: Flask, endpoint: str) -> list[Any]:
    """The limits declared on an endpoint's view and on its blueprint."""
    view = app.view_functions[endpoint]
    blueprint = endpoint.rpartition(".")[0]
    with app.app_context():
        return [
            *limiter.limit_manager.decorated_limits(get_qualified_name(view)),
            *(limiter.limit_manager.blueprint_limits(app, blueprint) if blueprint else []),
        ]


def test_no_route_the_limiter_skips_declares_a_limit(app: Flask) -> None:
    skipped = [
        rule.endpoint
        for rule in app.url_map.iter_rules()
        if rule.endpoint.rpartition(".")[0] in UNLIMITED_BLUEPRINTS
    ]
    assert {"players.play", "api.view", "home.page"} <= set(skipped)
    assert {endpoint: declared_limits(app, endpoint) for endpoint in skipped} == dict.fromkeys(
        skipped, []
    )
    # The lobby's forms are limited, and the check above would see it.
    assert declared_limits(app, "lobby.new_game")


@pytest.mark.parametrize("app_config", [{"RATELIMIT_DEFAULT": "2 per minute"}])
def test_a_players_links_are_not_limited_where_other_pages_are(
    app: Flask, make_game: Callable[..., dict[str, Any]]
) -> None:
    """Under a default limit of two requests a minute, which applies to an invitation's link."""
    game = make_game()
    with app.app_context():
        home = home_token("kim@example.com")
    client = app.test_client()
    try:
        for path in (f"/play/{game['keeper']}", f"/api/play/{game['keeper']}", f"/me/{home}"):
            assert [client.get(path).status_code for _ in range(4)] == [200] * 4, path
        invitation = "/invitations/no-such-invitation"
        assert [client.get(invitation).status_code for _ in range(3)] == [404, 404, 429]
    finally:
        # Flask-Limiter keeps default limits on its one instance for the process's later apps.
        limiter.limit_manager.set_default_limits([])


@pytest.mark.parametrize("path", ["/new", "/links"])
def test_a_post_without_its_csrf_token_counts_against_the_limit(app: Flask, path: str) -> None:
    """Every POST of a limited form counts: one the CSRF check refuses too, so that sending
    forms without a token costs a client its allowance like any other."""
    client = app.test_client()
    answers = [client.post(path, data={"email": "kim@example.com"}) for _ in range(12)]
    assert [answer.status_code for answer in answers] == [400] * 10 + [429] * 2
    # A refusal says when to try again: before the hour's window ends; nothing else does.
    assert 0 < int(answers[-1].headers["Retry-After"]) <= 3600
    assert "Retry-After" not in answers[0].headers


def test_an_ipv6_client_is_counted_by_its_64_block(app: Flask) -> None:
    """An IPv6 host has a whole /64 to pick addresses from: one count per address would be no
    limit. An IPv4 address, and one mapped into IPv6, count on their own."""
    client = app.test_client()

    def post(address: str) -> int:
        return client.post(
            "/links", data={"email": "kim@example.com"}, environ_base={"REMOTE_ADDR": address}
        ).status_code

    block = [post(f"2001:db8:1:2::{n:x}") for n in range(1, 12)]
    assert block == [400] * 10 + [429]
    assert post("2001:db8:1:3::1") == 400  # the next /64 is another client
    mapped = [post("::ffff:192.0.2.7") for _ in range(10)]
    assert mapped == [400] * 10 and post("192.0.2.7") == 429
    assert post("192.0.2.8") == 400


@pytest.mark.parametrize("app_config", [{"RATELIMIT_DEFAULT": "2 per minute"}])
def test_a_post_without_its_csrf_token_counts_against_a_default_limit(app: Flask) -> None:
    """The limiter's own hook, which checks the default limits, runs before the CSRF check."""
    client = app.test_client()
    try:
        statuses = [client.post("/admin/login", data={}).status_code for _ in range(3)]
        assert statuses == [400, 400, 429]
    finally:
        limiter.limit_manager.set_default_limits([])


def test_a_draw_refused_part_way_gives_back_what_it_drew(app: Flask) -> None:
    """An allowance that passed the test but was taken before its draw (here by the same
    request's own first draw) refuses the request, and the draws before it are undone."""
    once = allowances.Allowance(parse("1 per day"), ("tests", "a-draw-refused-part-way"))
    with app.test_request_context():
        assert allowances.draw([once, once]) == [once]
        assert allowances.window(once).remaining == 1
        assert allowances.draw([once]) == []
        assert allowances.window(once).remaining == 0
