"""The games list and the game page: filters, seek pagination, and the secrets of a live game."""

from __future__ import annotations

import json
import random
import re
from datetime import timedelta
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select, update

from service import games, homes, notify
from service.admin import listing
from service.game_text import card_name
from service.models import Game, OutboxMessage, Player, db, utcnow
from service.perspective import player_view
from service.replies import answers
from service.replies.reading import Understood
from service.rules import Variant, run, summary, to_act
from service.unit_of_work import transaction

from ..factories import written
from ..helpers import csrf_token, pick_action, redeal, write_queued
from ..secrecy import leaks
from .conftest import play


def new_game(app: Flask, keeper: str, shadow: str, seed: int = 7, **options: Any) -> int:
    with app.app_context(), transaction():
        return games.create_game(
            games.Seating(keeper, keeper.split("@")[0]),
            games.Seating(shadow, shadow.split("@")[0]),
            seed=seed,
            **options,
        ).id


def listed(html: str) -> list[int]:
    """The game ids in the rows of a games list page, in order."""
    return [int(n) for n in re.findall(r'<td><a href="/admin/games/(\d+)">', html)]


def link(html: str, rel: str) -> str | None:
    found = re.search(rf'<a href="([^"]+)" rel="{rel}">', html)
    return found.group(1).replace("&amp;", "&") if found else None


def without_tokens(html: str) -> str:
    """The page without its CSRF tokens: random text in which a card code may appear."""
    return re.sub(r'name="csrf_token"[^>]*?value="[^"]+"', "", html)


def test_list_pages_walk_every_game_once_in_order(app, admin, monkeypatch) -> None:
    monkeypatch.setattr(listing, "PAGE_SIZE", 3)
    ids = [new_game(app, f"k{n}@example.com", f"s{n}@example.com", seed=n) for n in range(8)]
    start = utcnow()
    # Three games share a moment: the id breaks the tie.
    moments = [start, start, start, start - timedelta(hours=1), start + timedelta(hours=1)]
    moments += [start - timedelta(days=n) for n in range(2, 5)]
    with app.app_context():
        for game_id, moment in zip(ids, moments, strict=True):
            db.session.execute(update(Game).where(Game.id == game_id).values(updated_at=moment))
        db.session.commit()
    expected = [i for _, i in sorted(zip(moments, ids, strict=True), reverse=True)]

    pages, url = [], "/admin/games"
    while url:
        html = admin.get(url).get_data(as_text=True)
        pages.append(listed(html))
        url = link(html, "next")
    assert [len(page) for page in pages] == [3, 3, 2]
    assert sum(pages, []) == expected

    back, url = [pages[-1]], link(html, "prev")
    while url:
        html = admin.get(url).get_data(as_text=True)
        back.insert(0, listed(html))
        url = link(html, "prev")
    assert back == pages


def test_list_filters_and_counts(app, admin) -> None:
    first = new_game(app, "ann@example.com", "bob@example.com", seed=1)
    second = new_game(app, "cat@example.com", "ann@example.com", seed=2)
    third = new_game(app, "dan@example.com", "eve@example.com", seed=3)
    fourth = new_game(app, "fay@example.com", "gus@example.com", seed=4, days_per_move=0)
    with app.app_context(), transaction():
        games.cancel_game(third, actor="ada")
    # In the first game the Keeper has chosen: only the Shadow owes the exchange.
    play(app, first, seed=5, until=lambda state: to_act(state) != ["keeper", "shadow"])

    def ids(**query: str) -> list[int]:
        response = admin.get("/admin/games", query_string=query)
        assert response.status_code == 200
        return listed(response.get_data(as_text=True))

    assert sorted(ids()) == [first, second, third, fourth]
    assert ids(status="cancelled") == [third]
    assert sorted(ids(status="active")) == [first, second, fourth]
    assert sorted(ids(email="ANN@example.com ")) == [first, second]
    assert ids(email="nobody@example.com") == []
    with app.app_context():
        owing = db.session.get(Game, first).to_act
    assert ids(to_act=owing) == [first]
    assert sorted(ids(to_act="both")) == [second, fourth]
    assert ids(to_act="none") == [third]
    # By deadline: only games that have one, soonest first.
    with app.app_context():
        soon = utcnow() + timedelta(hours=1)
        db.session.execute(update(Game).where(Game.id == second).values(deadline=soon))
        db.session.commit()
    assert ids(sort="deadline") == [second, first]
    html = admin.get("/admin/games").get_data(as_text=True)
    assert re.search(r">cancelled</a> <strong>1</strong>", html)
    assert re.search(r">active</a> <strong>3</strong>", html)


def test_an_address_the_list_is_filtered_by_is_shown_with_the_filters(app, admin) -> None:
    """A game page's address leads to that address's games; the list shows the address among
    its filters, where it can be changed or emptied, and a search looks within its games."""
    first = new_game(app, "k4@example.com", "s4@example.com", seed=1)
    new_game(app, "k4@example.com", "t4@example.com", seed=2)
    other = new_game(app, "x4@example.com", "y4@example.com", seed=3)
    page = admin.get(f"/admin/games/{first}").get_data(as_text=True)
    found = re.search(r'<a href="(/admin/games\?email=[^"]+)">k4@example.com</a>', page)
    assert found, "the game page links the address to its games"

    html = admin.get(found.group(1).replace("&amp;", "&")).get_data(as_text=True)
    assert len(listed(html)) == 2
    filters = re.search(r'<form method="get" class="filters">.*?</form>', html, re.S).group(0)
    assert '<label for="email">Address (whole)</label>' in filters
    field = re.search(r'<input[^>]*name="email"[^>]*>', filters).group(0)
    assert 'inputmode="email"' in field and 'value="k4@example.com"' in field
    # Emptied, the address no longer filters the list: a search finds the other game.
    assert listed(admin.get("/admin/games", query_string={"email": "", "q": "x4"}).text) == [other]


@pytest.mark.parametrize(
    "query",
    [
        {"status": "lost"},
        {"to_act": "everyone"},
        {"after": "yesterday_1"},
        {"before": "1"},
        # Positions the database could not compare: an id past its integer, moments past its years.
        {"after": "2026-01-01T00:00:00+00:00_3000000000"},
        {"after": "0001-01-01T00:00:00+14:00_1"},
        {"before": "9999-12-31T23:59:59-14:00_1"},
        {"sort": "deadline", "after": "0001-01-01T00:00:00+14:00_1"},
    ],
)
def test_list_refuses_what_it_did_not_write(admin, query) -> None:
    assert admin.get("/admin/games", query_string=query).status_code == 400


@pytest.mark.parametrize(
    "query", [{"after": "3000000000"}, {"before": "3000000000"}, {"after": "-1"}, {"after": "x"}]
)
def test_mail_list_refuses_what_it_did_not_write(admin, query) -> None:
    assert admin.get("/admin/mail", query_string=query).status_code == 400


def test_filters_refused_are_named_inside_the_dashboard(admin) -> None:
    refused = admin.get("/admin/games", query_string={"status": "lost", "idle": "0"})
    assert refused.status_code == 400
    page = refused.get_data(as_text=True)
    assert "<h1>These filters are not valid</h1>" in page and 'href="/admin/mail"' in page
    assert "<li>Status: Not a valid choice.</li>" in page
    assert "<li>Idle for at least (days): Number must be between 1 and 3650.</li>" in page
    assert '<a href="/admin/games">The list without filters</a>' in page
    # A word that is no number is told once, in the same words.
    page = admin.get("/admin/games", query_string={"idle": "abc"}).get_data(as_text=True)
    assert "<li>Idle for at least (days): Number must be between 1 and 3650.</li>" in page
    from_csv = admin.get("/admin/mail.csv", query_string={"status": "lost"}).get_data(as_text=True)
    assert '<a href="/admin/mail">The list without filters</a>' in from_csv


@pytest.mark.parametrize(
    "url",
    [
        # Digits that are not 0-9: a number to str.isdigit, none to int.
        "/admin/games?q=%C2%B2",
        "/admin/games?q=%23%E2%91%A0",
        "/admin/games.csv?q=%C2%B2",
        # The last day there is: the day after it is none.
        "/admin/mail?day=9999-12-31",
        "/admin/mail.csv?day=9999-12-31",
    ],
)
def test_odd_filters_find_nothing_rather_than_fail(admin, url) -> None:
    assert admin.get(url).status_code == 200


def hidden_from_admin(state: dict[str, Any]) -> set[str]:
    """The cards no one but a player may know where they are while the game is live.

    Cards played in earlier rounds are public history, though they were dealt again.
    """
    now = state["round"]
    played = {e["card"] for t in state["history"] if t["round"] < now for e in t["cards"]}
    secret = set(state["aside"])
    for seat in ("keeper", "shadow"):
        secret |= set(state["hands"][seat]) | set(state["pending"][seat] or ())
    return secret - played


def test_a_live_game_page_shows_no_hidden_card(app, admin) -> None:
    game_id = new_game(app, "kim@example.com", "sam@example.com", seed=2024)
    rng = random.Random(99)
    checked = swaps = 0
    while True:
        with app.app_context():
            game = db.session.get(Game, game_id)
            state, version = game.state, game.version
            if state["phase"] == "over":
                break
            seat = rng.choice(to_act(state))
            player = game.player(seat)
            action = pick_action(games.player_view(player), rng)
            seed_note = f"seed {state['seed']}"
        html = without_tokens(admin.get(f"/admin/games/{game_id}").get_data(as_text=True))
        secret = hidden_from_admin(state)
        assert not leaks(html, secret), f"the admin sees {leaks(html, secret)} at {version}"
        assert seed_note not in html and ": gave" not in html
        swaps += state["phase"] == "swap"
        checked += 1
        with app.app_context(), transaction():
            games.apply_move(player.id, version, action)
    assert checked > 40
    html = admin.get(f"/admin/games/{game_id}").get_data(as_text=True)
    assert "chose 1 card" not in html  # over: exchanges show their cards
    assert "exchange: gave" in html and seed_note in html


def test_the_game_page_gives_the_games_numbers(app, admin) -> None:
    printed = new_game(app, "kim@example.com", "sam@example.com", seed=5)
    html = admin.get(f"/admin/games/{printed}").get_data(as_text=True)
    assert "<dd>1 of 3</dd>" in html and "<dd>0 of 10</dd>" in html
    assert "<dt>Variant</dt>" not in html
    varied = new_game(app, "kim@example.com", "sam@example.com", seed=6)
    redeal(app, varied, Variant(track_length=15, halfway=8, rounds=4, exchange_sizes=(1, 1, 2, 2)))
    html = admin.get(f"/admin/games/{varied}").get_data(as_text=True)
    assert "<dd>1 of 4</dd>" in html and "<dd>0 of 15</dd>" in html
    assert (
        "<dt>Variant</dt><dd>halfway=8 exchange_sizes=1,1,2,2 track_length=15 rounds=4</dd>" in html
    )


def test_a_live_game_page_says_what_was_chosen_not_which_cards(app, admin) -> None:
    game_id = new_game(app, "kim@example.com", "sam@example.com", seed=11)
    state = play(app, game_id, seed=4, until=lambda s: s["round"] == 2 and s["phase"] == "play")
    html = admin.get(f"/admin/games/{game_id}").get_data(as_text=True)
    assert html.count("exchange: chose 1 card<") == 2
    assert html.count("exchange: chose 2 cards<") == 2
    for trick in state["history"]:
        for entry in trick["cards"]:
            assert card_name(entry["card"]) in html  # plays are public
    assert "Download the replay" not in html and "Set aside" not in html
    assert admin.get(f"/admin/games/{game_id}/replay.json").status_code == 403


def test_a_finished_game_shows_its_deal_and_downloads_as_a_replay(app, admin) -> None:
    game_id = new_game(app, "kim@example.com", "sam@example.com", seed=31)
    final = play(app, game_id, seed=8)
    html = admin.get(f"/admin/games/{game_id}").get_data(as_text=True)
    table = re.search(r'<table class="list deal">.*?</table>', html, re.S).group(0)
    shown = [
        [re.findall(r">([^<]+)</span>", cell) for cell in re.findall(r"<td>(.*?)</td>", row)]
        for row in re.findall(r"<tr><th scope=\"row\">.*?</tr>", table)
    ]
    assert shown == [
        [[card_name(card) for card in deal[part]] for part in ("keeper", "shadow", "aside")]
        for deal in final["deals"]
    ]
    response = admin.get(f"/admin/games/{game_id}/replay.json")
    assert response.status_code == 200
    assert response.headers["Content-Disposition"] == (
        f'attachment; filename="split-mind-game-{game_id}.json"'
    )
    outcome = run(json.loads(response.get_data(as_text=True)))
    assert outcome.error is None and summary(outcome.state) == summary(final)


def test_emails_of_a_live_game_are_withheld_until_it_is_over(app, admin) -> None:
    game_id = new_game(app, "kim@example.com", "sam@example.com", seed=5)
    state = play(app, game_id, seed=2, until=lambda s: s["phase"] == "play" and s["trick"] == 3)
    write_queued(app)
    with app.app_context():
        messages = db.session.scalars(
            select(OutboxMessage).where(
                OutboxMessage.game_id == game_id, OutboxMessage.status == "queued"
            )
        ).all()
        ids = [message.id for message in messages]
        assert all("/play/" in message.text_body for message in messages)
    assert len(ids) >= 3
    for message_id in ids:
        page = admin.get(f"/admin/mail/{message_id}").get_data(as_text=True)
        assert "body is withheld" in page and "/play/" not in page
        assert not leaks(without_tokens(page), hidden_from_admin(state))
        assert admin.get(f"/admin/mail/{message_id}/html").status_code == 403
    play(app, game_id, seed=1)
    page = admin.get(f"/admin/mail/{ids[0]}").get_data(as_text=True)
    assert "body is withheld" not in page and "/play/[link hidden]" in page
    assert f'<iframe class="mail-html" sandbox src="/admin/mail/{ids[0]}/html"' in page
    html = admin.get(f"/admin/mail/{ids[0]}/html")
    assert html.status_code == 200 and "/play/[link hidden]" in html.get_data(as_text=True)


def test_every_time_on_the_game_and_mail_pages_names_its_zone(app, admin, make_game) -> None:
    game = make_game(seed=5, days_per_move=3)
    with app.app_context():
        message = db.session.scalars(select(OutboxMessage.id)).first()
    for path in (f"/admin/games/{game['id']}", f"/admin/mail/{message}"):
        times = re.findall(r"<time [^>]*>([^<]*)</time>", admin.get(path).get_data(as_text=True))
        dated = [text for text in times if re.match(r"\d{4}-\d\d-\d\d", text)]
        assert len(dated) >= 2, path
        assert all(text.endswith(" UTC") for text in dated), (path, dated)


def test_a_digest_is_withheld_while_a_game_it_tells_of_is_live(app, admin, make_game) -> None:
    """A digest has no game of its own, but tells of each game it lists: what was exchanged
    since the player's last move, and the opponent's notes."""
    first, second = make_game(seed=5), make_game(seed=6)
    with app.app_context(), transaction():
        players = [
            db.session.get_one(Game, game["id"]).player("keeper") for game in (first, second)
        ]
        notify.digest("kim@example.com", players, None)
    write_queued(app)  # and sent, as the worker would have
    with app.app_context(), transaction():
        db.session.execute(update(OutboxMessage).values(status="sent", sent_at=utcnow()))
    with app.app_context():
        digest = db.session.scalars(
            select(OutboxMessage).where(OutboxMessage.kind == "digest")
        ).one()
    page = admin.get(f"/admin/mail/{digest.id}").get_data(as_text=True)
    assert f"withheld while games {first['id']}, {second['id']} are live" in page
    assert admin.get(f"/admin/mail/{digest.id}/html").status_code == 403
    with app.app_context(), transaction():
        games.cancel_game(first["id"], "alice")
    page = admin.get(f"/admin/mail/{digest.id}").get_data(as_text=True)
    assert f"withheld while game {second['id']} is live" in page
    with app.app_context(), transaction():
        games.cancel_game(second["id"], "alice")
    page = admin.get(f"/admin/mail/{digest.id}").get_data(as_text=True)
    assert "withheld" not in page and "/play/[link hidden]" in page


def test_links_in_emails_are_never_shown_to_admins(app, admin, make_game, client) -> None:
    """A link is a seat (or a home page, an invitation, a rematch, an unsubscribe), and a reply
    address's tag a seat too: an admin sees none."""
    from ..factories import one_by_one
    from ..helpers import ask_for_game

    app.config["REPLY_ADDRESS"] = "play@splitmind.test"
    finished = make_game(seed=6)
    write_queued(app)
    for _ in one_by_one(app, finished["id"], 6):
        write_queued(app)
    ask_for_game(client)
    write_queued(app)
    with app.app_context():
        messages = db.session.scalars(select(OutboxMessage)).all()
        tokens = [
            link or tag
            for message in messages
            for link, tag in re.findall(
                r"/(?:play|me|rematch|invitations|unsubscribe)/([A-Za-z0-9_.\-]+)"
                r"|play\+([0-9.a-z]+)@",
                message.text_body + message.html_body + json.dumps(message.headers),
            )
        ]
        ids = [message.id for message in messages]
    assert any("/me/" in message.text_body for message in messages)
    assert any("play+" in json.dumps(message.headers) for message in messages)
    assert tokens and any(message.game_id is None for message in messages)
    for message_id in ids:
        for url in (f"/admin/mail/{message_id}", f"/admin/mail/{message_id}/html"):
            shown = admin.get(url).get_data(as_text=True)
            assert not [token for token in tokens if token in shown], url


def test_the_game_page_says_who_is_on_vacation(app, admin) -> None:
    game_id = new_game(app, "kim@example.com", "sam@example.com", seed=5)
    with app.app_context(), transaction():
        until = homes.take_vacation("sam@example.com", 4)
    html = admin.get(f"/admin/games/{game_id}").get_data(as_text=True)
    assert html.count('<span class="badge">on vacation until') == 1  # Sam's, not Kim's
    assert f"on vacation until {until:%Y-%m-%d %H:%M} UTC" in html
    assert f"the shadow is on vacation until {until:%Y-%m-%dT%H:%M}" in html  # the log


def test_a_game_against_the_computer_names_it_and_offers_no_link_actions(app, admin) -> None:
    with app.app_context(), transaction():
        game = games.create_game(
            games.Seating("kim@example.com", "Kim"), games.Seating.the_computer("hard")
        )
        game_id, kim, bot = game.id, game.player("keeper").id, game.player("shadow").id
    listing_html = admin.get("/admin/games").get_data(as_text=True)
    assert "the computer (hard)" in listing_html
    html = admin.get(f"/admin/games/{game_id}").get_data(as_text=True)
    assert "the computer (hard)" in html and "no address" in html
    assert f"/players/{kim}/resend" in html and f"/players/{bot}/resend" not in html
    assert f"/players/{kim}/rotate" in html and f"/players/{bot}/rotate" not in html
    stats_html = admin.get("/admin/stats").get_data(as_text=True)
    assert 'id="computer-levels"' in stats_html
    # Once Kim has given her card, the computer owes its own: the worker makes that move.
    with app.app_context(), transaction():
        view = games.player_view(db.session.get_one(Player, kim))
        games.apply_move(kim, 0, pick_action(view, random.Random(1)))
    for page in (f"/admin/games/{game_id}", "/admin/games"):
        html = admin.get(page).get_data(as_text=True)
        assert "the Shadow, the computer (hard)" in html, page


def test_the_computer_has_no_link_to_resend_or_rotate(app, admin) -> None:
    with app.app_context(), transaction():
        game = games.create_game(
            games.Seating("kim@example.com", "Kim"), games.Seating.the_computer("easy")
        )
        game_id, bot = game.id, game.player("shadow").id
    for action in ("resend", "rotate"):
        response = admin.post(
            f"/admin/games/{game_id}/players/{bot}/{action}",
            data={
                "csrf_token": csrf_token(
                    admin.get(f"/admin/games/{game_id}").get_data(as_text=True)
                ),
                "confirm": "y",
            },
            follow_redirects=True,
        )
        assert "the computer plays the Shadow: it has no link" in response.get_data(as_text=True)


def test_the_round_that_ends_the_track_moved_it_as_far_as_was_left(
    app: Flask, admin, make_game, runner
) -> None:
    """Seed 3's rounds differ by 2, 4 and 6 tricks: the last moves the track the 4 left."""
    game = make_game(seed=3)
    written(app, game["id"], seed=3)
    html = admin.get(f"/admin/games/{game['id']}").get_data(as_text=True)
    assert "the track moved by 6" not in html
    assert html.count("the track moved by 4") == 2
    shown = runner.invoke(args=["games", "show", str(game["id"])]).output
    assert [line.rpartition("track +")[2] for line in shown.splitlines() if "track +" in line] == [
        "2",
        "4",
        "4",
    ]


def test_an_answers_subject_naming_a_choice_is_withheld_while_live(app, admin) -> None:
    """The answer to a reply names the move in its subject: for an exchange, the cards chosen,
    which the opponent has not seen. The mail list, the message's page and the CSV keep it
    back while the game is live, as they keep back its body."""
    game_id = new_game(app, "kim@example.com", "sam@example.com", seed=5)
    with app.app_context():
        keeper = db.session.get_one(Game, game_id).player("keeper")
        given = pick_action(player_view(keeper), random.Random(3))["exchange"]
        db.session.remove()
    with app.app_context(), transaction():
        keeper = db.session.get_one(Game, game_id).player("keeper")
        games.apply_move(keeper.id, 0, {"exchange": given})
        facts = answers.facts(
            "applied",
            understood=Understood(cards=given),
            written=" ".join(given),
            action={"exchange": given},
        )
        notify.answer(keeper, None, answer=facts)
    write_queued(app)
    with app.app_context(), transaction():
        message = db.session.scalars(
            select(OutboxMessage).where(OutboxMessage.kind == "answer")
        ).one()
        assert leaks(message.subject, set(given))  # the player's own email names them
        message.status, message.sent_at = "sent", utcnow()
        message_id = message.id
    secret = set(given)
    pages = {
        "list": admin.get("/admin/mail").get_data(as_text=True),
        "message": admin.get(f"/admin/mail/{message_id}").get_data(as_text=True),
        "csv": admin.get("/admin/mail.csv").get_data(as_text=True),
    }
    for name, page in pages.items():
        assert not leaks(without_tokens(page), secret), name
    with app.app_context(), transaction():
        games.cancel_game(game_id, "alice")
    page = admin.get("/admin/mail").get_data(as_text=True)
    assert leaks(without_tokens(page), secret)  # over: the subject is shown again
