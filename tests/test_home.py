"""The home page of an address, ``/me/<token>``: its link, what it shows, its settings."""

from __future__ import annotations

import itertools
import random
import re
import threading
from datetime import UTC, datetime, timedelta
from html import unescape
from zoneinfo import ZoneInfo

import pytest
import time_machine
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select
from werkzeug.test import TestResponse

from bench.random_play import pick_action
from service import deadlines, games, homes, invitations
from service.links import (
    HOME_SALT,
    address_for,
    home_token,
    home_url,
    new_link_key,
    serializer,
    signed_home,
    token_for,
)
from service.logs import redact
from service.mail import compose
from service.models import (
    Address,
    AddressSettings,
    Event,
    Game,
    Invitation,
    OutboxMessage,
    Player,
    db,
    utcnow,
)
from service.notify import greeting
from service.rules import to_act
from service.unit_of_work import transaction

from .conftest import BASE_URL
from .factories import (
    apply_moves,
    one_by_one,
    planned_moves,
    played,
    played_against_computer,
    written,
)
from .helpers import (
    NEW_GAME_FORM,
    ask_for_game,
    at_once,
    csrf_token,
    from_elsewhere,
    request_invitation,
    statements_run,
    wait_until,
    waits_on_a_lock,
    write_queued,
)
from .secrecy import hidden_cards, leaks
from .test_safe_methods import snapshot

KIM = "kim@example.com"


def home_of(app: Flask, email: str = KIM) -> str:
    with app.app_context():
        return f"/me/{home_token(email)}"


def post(client: FlaskClient, home: str, action: str, **data: object) -> object:
    """Post one of the home page's forms, with the page's CSRF token."""
    token = csrf_token(client.get(home).get_data(as_text=True))
    return client.post(f"{home}/{action}", data={"csrf_token": token, **data})


# --- the link ------------------------------------------------------------------


def test_the_link_names_one_address_and_refuses_tampering(app: Flask, client, make_game) -> None:
    game = make_game(seed=1)
    with app.app_context():
        token = home_token(KIM)
        assert address_for(token) == KIM
        assert home_url(KIM) == f"{BASE_URL}/me/{token}"
        assert address_for(home_token("sam@example.com")) == "sam@example.com"
        assert address_for(token[:-2] + ("AA" if not token.endswith("AA") else "BB")) is None
        assert address_for(game["keeper"]) is None  # a game link is no home link
    response = client.get(f"/me/{token}")
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"  # the link is a credential
    for bad in (token + "x", game["keeper"], "nothing-here"):
        response = client.get(f"/me/{bad}")
        assert response.status_code == 404
        assert "There is nothing at this address." in response.get_data(as_text=True)


def test_the_secret_key_alone_signs_no_home_link(app: Flask, client, make_game) -> None:
    """Each address's home link signs a random key of its own: signing the address with the
    service's key and no key, or any but the stored one, opens nothing."""
    game = make_game(seed=1)
    with app.app_context():
        stored = select(AddressSettings.email, AddressSettings.home_key)
        keys = dict(db.session.execute(stored).all())
        forged = [serializer(HOME_SALT).dumps([KIM, key]) for key in ("", None, "x" * 43)]
        # An admin's corrected address gets one as it takes the seat.
        with transaction():
            player = db.session.scalars(select(Player).where(Player.email == KIM)).one()
            games.correct_address(player.id, "kim.new@example.com", actor="ada")
        corrected = home_token("kim.new@example.com")
    assert sorted(keys) == [KIM, "sam@example.com"]
    assert all(key and len(key) >= 43 for key in keys.values())
    assert len(set(keys.values())) == 2
    for token in forged:
        assert client.get(f"/me/{token}").status_code == 404
    assert corrected is not None and client.get(f"/me/{corrected}").status_code == 200
    assert client.get(f"/play/{game['keeper']}").status_code == 404  # the link went with it


def test_an_address_without_a_key_has_no_home_link(app: Flask) -> None:
    with app.app_context():
        assert home_token("nobody@example.com") is None
        assert home_url("nobody@example.com") is None


def test_logs_never_hold_the_link(app: Flask) -> None:
    with app.app_context():
        token = signed_home(KIM, new_link_key())
    assert redact(f"GET /me/{token}/emails 303") == "GET /me/[redacted]/emails 303"


def test_replacing_the_link_kills_the_old_one(app: Flask, client, make_game) -> None:
    """And the links of the address's games, which whoever had the page could open; the
    opponent's link, and a link an admin revoked, stay as they are."""
    game = make_game(seed=1)
    revoked = make_game(seed=2)
    with app.app_context(), transaction():
        kim = db.session.get_one(Game, revoked["id"]).player("keeper")
        kim.link_key = None
    old = home_of(app)
    response = post(client, old, "link")
    assert response.status_code == 303
    new = response.headers["Location"]
    assert new != old and client.get(new).status_code == 200
    assert app.test_client().get(old).status_code == 404  # whoever else holds it
    assert home_of(app) == new  # the emails from now on bring the new one
    stranger = app.test_client()
    for path in (f"/play/{game['keeper']}", f"/api/play/{game['keeper']}"):
        assert stranger.get(path).status_code == 404
    assert stranger.get(f"/api/play/{game['shadow']}").status_code == 200  # Sam's own
    links = re.findall(r'href="/play/([^"/]+)"', client.get(new).get_data(as_text=True))
    assert links and game["keeper"] not in links
    assert all(stranger.get(f"/api/play/{token}").status_code == 200 for token in links)
    with app.app_context():
        assert db.session.get_one(Game, revoked["id"]).player("keeper").link_key is None


def test_the_replacing_form_sent_again_leads_to_the_new_page(app: Flask, client, make_game) -> None:
    """A second click, or the back button: the browser that replaced the link is sent to the
    new page, and nothing is replaced again; the old link is no one else's way in."""
    make_game(seed=1)
    old = home_of(app)
    form = {"csrf_token": csrf_token(client.get(old).text)}
    first = client.post(f"{old}/link", data=form)
    again = client.post(f"{old}/link", data=form)
    assert first.status_code == again.status_code == 303
    assert again.headers["Location"] == first.headers["Location"] == home_of(app)
    assert client.get(old).headers["Location"] == home_of(app)
    assert app.test_client().get(old).status_code == 404


def test_the_unsubscribe_pages_show_no_link_of_the_address(app: Flask, make_game) -> None:
    """The unsubscribe links in old emails never change: their pages, before and after the
    stop, show neither the home link replaced since nor a game's link, and say where the
    home link is. A game's, from before its seat had the new link that came with the new
    home link, stops nothing (410), as after an admin's rotation."""
    game = make_game(seed=1)
    with app.app_context():
        kim = db.session.scalars(select(Player).where(Player.email == KIM)).one()
        stops = [
            f"/unsubscribe/{compose.unsubscribe_token(kim)}",
            compose.stop_all_url(KIM).removeprefix(BASE_URL),
        ]
    client = app.test_client()
    new = post(client, home_of(app), "link").headers["Location"].removeprefix("/me/")
    for stop, status in zip(stops, (410, 200), strict=True):
        for method in ("GET", "POST", "GET"):  # the page before the stop, the stop, after it
            page = client.open(stop, method=method)
            text = page.get_data(as_text=True)
            assert page.status_code == status
            assert new not in text and game["keeper"] not in text
            assert "/me/" not in text and "/play/" not in text
        said = "about it works" if status == 410 else "in your latest email from this service"
        assert said in text


def test_the_link_survives_a_new_secret_key(app: Flask, make_game) -> None:
    make_game(seed=1)
    old = home_of(app)
    app.config["SECRET_KEY_FALLBACKS"] = [app.config["SECRET_KEY"]]
    app.config["SECRET_KEY"] = "another-test-secret-key"
    assert app.test_client().get(old).status_code == 200
    assert home_of(app) != old


# --- what it shows -------------------------------------------------------------


def test_games_in_play_and_finished_and_invitations(app: Flask, client, make_game) -> None:
    live = make_game(seed=2, days_per_move=3)
    finished = make_game(seed=3)
    written(app, finished["id"], 3)
    with app.app_context():
        request_invitation(KIM, creator="ann@example.com")  # waits for Ann to confirm
        # Asked in Kim's name by anyone who typed it: not hers until she confirms.
        request_invitation("mallory@example.com", creator=KIM)
        sent = request_invitation("bob@example.com", creator=KIM)
        with transaction():
            invitations.confirm(sent)
        waiting = request_invitation(KIM, creator="cat@example.com")
        with transaction():
            invitations.confirm(waiting)
        sent_game, waiting_game = sent.game_id, waiting.game_id
    page = client.get(home_of(app)).get_data(as_text=True)
    live_view = client.get(f"/api/play/{live['keeper']}").get_json()
    assert f"Game {live['id']} against Sam" in page
    assert f"/play/{live['keeper']}" in page and f"/play/{finished['keeper']}" in page
    assert "Your move." in page if live_view["your_turn"] else "Waiting for Sam." in page
    assert f"Round 1 of 3, track {live_view['track']} of 10." in page
    assert "Your move and Sam&#39;s are due" in page  # the opening exchange: both owe it
    assert f"Game {finished['id']} against Sam" in page
    assert "won: the" in page or "You won" in page
    assert f"/rematch/{finished['keeper']}" in page  # the rematch button
    waiting = f"You invited Bob to game {sent_game}: waiting for their answer."
    assert f"{waiting} The invitation expires on" in page
    assert f"Cat invites you to game {waiting_game}. The invitation expires on" in page
    assert "Ann invites" not in page  # Ann has not confirmed her address yet
    assert "mallory" not in page.lower() and "Confirm" not in page
    assert f'href="{home_of(app)}/new?name=Kim"' in page


def test_the_creator_withdraws_an_invitation_from_the_page(app: Flask, client) -> None:
    """An invitation sent to a mistyped address, or to someone who will not answer, need not
    wait out its days: its creator withdraws it, and its link then says it is closed."""
    with app.app_context():
        sent = request_invitation("bob@example.com", creator=KIM)
        received = request_invitation(KIM, creator="cat@example.com")
        with transaction():
            invitations.confirm(sent)
            invitations.confirm(received)
        game_id, theirs = sent.game_id, received.game_id
        answer = invitations.url(sent, "respond").removeprefix(BASE_URL)
    home = home_of(app)
    assert f"Withdraw the invitation to game {game_id}" in client.get(home).text
    assert f"Withdraw the invitation to game {theirs}" not in client.get(home).text
    # Only an invitation the address sent: not one it was sent, nor one of no game.
    for other in (theirs, 0):
        assert post(client, home, "invitations/withdraw", game=str(other)).status_code == 404
    assert post(client, home, "invitations/withdraw", game=str(game_id)).status_code == 303
    page = client.get(home).text
    assert "Saved: the invitation is withdrawn." in page
    assert f"You invited Bob to game {game_id}" not in page
    assert f"Cat invites you to game {theirs}" in page
    assert "This invitation is closed." in client.get(answer).text
    assert client.post(answer, data={"answer": "accept"}).status_code == 409
    with app.app_context():
        assert db.session.get_one(Invitation, sent.id).status == "closed"
        assert db.session.get_one(Game, game_id).status == "cancelled"
        assert db.session.get_one(Invitation, received.id).status == "invited"
    # Sent again (a second click): nothing more to do.
    assert post(client, home, "invitations/withdraw", game=str(game_id)).status_code == 303


def test_a_withdrawn_rematch_may_be_asked_for_again(app: Flask, client, make_game) -> None:
    finished_game(app, make_game, seed=2, rematch=True)
    home = home_of(app)
    with app.app_context():
        asked = db.session.scalars(select(Invitation.game_id)).one()
    assert "Ask Sam for a rematch" not in client.get(home).text
    assert post(client, home, "invitations/withdraw", game=str(asked)).status_code == 303
    assert "Ask Sam for a rematch" in client.get(home).text


def test_finished_games_are_listed_twenty_at_a_time(app: Flask, client, make_game) -> None:
    live = make_game(seed=1)["id"]
    for seed in range(2, 2 + homes.FINISHED_SHOWN + 2):
        finished_game(app, make_game, seed=seed, rematch=False)
    with app.app_context():
        ids = db.session.scalars(
            select(Game.id).where(Game.status != "active").order_by(Game.id.desc())
        ).all()  # each forfeited after the one before: newest first
    home = home_of(app)

    def listed(page: str) -> list[int]:
        return [int(n) for n in re.findall(r"Game (\d+) against Sam</h3>", page)]

    first = client.get(home).get_data(as_text=True)
    assert listed(first) == [live, *ids[:20]]
    assert f'href="{home}?before={ids[19]}#finished-title">Older games</a>' in first
    assert "Newest games" not in first
    older = client.get(f"{home}?before={ids[19]}").get_data(as_text=True)
    assert listed(older) == [live, *ids[20:]]  # the games in play are on every page
    assert f'href="{home}#finished-title">Newest games</a>' in older
    assert "Older games" not in older
    assert "No older game." in client.get(f"{home}?before={ids[-1]}").get_data(as_text=True)
    # A game in play, another address's game, no game: the newest finished games.
    with app.app_context(), transaction():
        ann, bob = games.Seating("ann@example.com", "Ann"), games.Seating("bob@example.com", "Bob")
        other = games.declare_forfeit(games.create_game(ann, bob, seed=40).id, "shadow", "ada").id
    for before in (live, other, 0, 2**40, "x"):
        assert listed(client.get(f"{home}?before={before}").get_data(as_text=True)) == listed(first)


def test_the_games_in_play_list_the_moves_owed_first_soonest_due_first(
    app: Flask, client, make_game
) -> None:
    """Among many games, those where the address owes a move come first, the soonest due
    first and those without deadline after them; then those waiting for the opponent, the
    soonest due first: not the order the games last changed in."""
    no_deadline = make_game(seed=1, days_per_move=0)["id"]
    ten_days = make_game(seed=2, days_per_move=10)["id"]
    two_days = make_game(seed=3, days_per_move=2)["id"]
    waiting_long = make_game(seed=4, days_per_move=9)["id"]
    waiting_soon = make_game(seed=5, days_per_move=4)["id"]
    for game, seed in ((waiting_long, 4), (waiting_soon, 5)):  # Kim has made her exchange
        written(app, game, seed, until=lambda view: not view["your_turn"])
    page = client.get(home_of(app)).get_data(as_text=True)
    listed = [int(n) for n in re.findall(r"Game (\d+) against Sam</h3>", page)]
    assert listed == [two_days, ten_days, no_deadline, waiting_soon, waiting_long]
    assert page.count("Your move.") == 3 and page.count("Waiting for Sam.") == 2


def test_the_deadline_says_whose_move_is_due(app: Flask, client, make_game) -> None:
    game = make_game(days_per_move=3, shadow_name="Léa")
    keeper = client.get(f"/api/play/{game['keeper']}").get_json()
    choice = {"version": 0, **pick_action(keeper, random.Random(3))}
    assert client.post(f"/api/play/{game['keeper']}", json=choice).status_code == 200
    page = client.get(home_of(app) + "?lang=fr").get_data(as_text=True)
    assert "En attente de Léa." in page and "Coup de Léa attendu le" in page
    assert "Votre coup" not in page
    page = client.get(home_of(app, "sam@example.com") + "?lang=fr").get_data(as_text=True)
    assert "Votre coup est attendu le" in page
    with time_machine.travel(datetime.now(UTC) + timedelta(days=3, minutes=1), tick=False):
        page = client.get(home_of(app) + "?lang=fr").get_data(as_text=True)  # before the sweep
        assert "Le coup de Léa était attendu le" in page and "Coup de Léa attendu" not in page


def test_a_finished_game_offers_a_rematch_whatever_the_opponent_declined(
    app: Flask, client, make_game
) -> None:
    """Sam declining an invitation shows nowhere on Kim's home page: the rematch is offered
    as before, and asked for as any invitation is (its email to Sam withheld)."""
    finished = make_game(seed=3)
    written(app, finished["id"], 3)
    # One second for both pages: the CSRF tokens of their forms hold the second they were made.
    with time_machine.travel(datetime.now(UTC), tick=False):
        offered = client.get(home_of(app)).text
        assert "Ask Sam for a rematch" in offered
        with app.app_context(), transaction():
            db.session.add(Address(email="sam@example.com", declined_at=utcnow()))
        assert client.get(home_of(app)).text == offered


def test_the_rematch_page_gives_the_expiry_in_the_players_zone(
    app: Flask, client, make_game
) -> None:
    finished = make_game(seed=3)
    written(app, finished["id"], 3)
    with app.app_context(), transaction():
        homes.set_time_zone(KIM, "Europe/Paris")
    page = client.post(f"/rematch/{finished['keeper']}", follow_redirects=True).text
    expires = r"The invitation expires on [^<]* Europe/Paris\."
    assert re.search(expires, page), page
    assert re.search(expires, client.get(home_of(app)).text)


@pytest.mark.parametrize("seed", [3, 4])  # the Shadow wins one, the Keeper the other
def test_the_rematch_button_invites_the_opponent(app: Flask, client, make_game, seed) -> None:
    finished = make_game(seed=seed)
    written(app, finished["id"], seed)
    assert client.post(f"/rematch/{finished['keeper']}").status_code == 303
    write_queued(app)
    page = client.get(home_of(app)).get_data(as_text=True)
    with app.app_context():
        game = db.session.get_one(Game, finished["id"])
        rematch = invitations.rematch_of(game)
        assert rematch is not None and rematch.opponent_email == "sam@example.com"
        assert f"Rematch: game {rematch.game_id}." in page
        body = db.session.scalars(
            select(Event.note).where(Event.game_id == finished["id"], Event.kind == "rematch")
        ).one()
        assert body == str(rematch.game_id)
        invitation = db.session.scalars(
            select(OutboxMessage.text_body).where(
                OutboxMessage.kind == "invite_opponent",
                OutboxMessage.recipient == "sam@example.com",
            )
        ).one()
        winner = "you" if game.winner == "shadow" else "Kim"
        assert (
            f"It is a rematch of game {finished['id']}, which {winner} won, with the roles swapped."
            in invitation
        )


def test_the_new_game_form_is_filled_in(client: FlaskClient) -> None:
    page = client.get("/new?email=kim%40example.com&name=Kim").get_data(as_text=True)
    assert 'value="kim@example.com"' in page and 'value="Kim"' in page


# --- a new game from the page -----------------------------------------------------------


def ask_from_home(client: FlaskClient, home: str, **changes: str) -> TestResponse:
    """Post the page's new-game form: Kim against Bob, unless ``changes`` say otherwise."""
    form = client.get(f"{home}/new?name=Kim")
    assert form.status_code == 200
    data = {**NEW_GAME_FORM, "name": "Kim", "email": KIM, **changes}
    return client.post(f"{home}/new", data={**data, "csrf_token": csrf_token(form.text)})


def test_a_game_asked_for_from_the_page_invites_the_opponent_at_once(
    app: Flask, client, make_game
) -> None:
    """The link proves the address: no address to confirm, the invitation goes out at once,
    and the page lists it; the address typed in the form, if any, counts for nothing."""
    make_game()
    home = home_of(app)
    with app.app_context():
        first = db.session.scalar(select(func.max(OutboxMessage.id)))
    page = client.get(home).text
    assert f'href="{home}/new?name=Kim"' in page
    form = client.get(f"{home}/new?name=Kim").text
    assert f"You play from {KIM}" in unescape(form) and 'value="Kim"' in form
    answer = ask_from_home(client, home, email="eve@example.com")
    assert answer.status_code == 200, answer.text
    assert "We sent your invitation to Bob" in answer.text and f'href="{home}"' in answer.text
    with app.app_context():
        invitation = db.session.scalars(select(Invitation)).one()
        assert (invitation.creator_email, invitation.status) == (KIM, "invited")
        sent = db.session.execute(
            select(OutboxMessage.kind, OutboxMessage.recipient).where(OutboxMessage.id > first)
        ).all()
        assert sent == [("invite_opponent", "bob@example.com")]  # nothing to Kim, nor to eve
    assert "Bob" in client.get(home).text.partition('id="invitations-title"')[2]


def test_the_page_s_form_needs_no_address_field(app: Flask, client, make_game) -> None:
    make_game()
    home = home_of(app)
    form = client.get(f"{home}/new?name=Kim")
    assert 'name="email"' not in form.text
    data = {key: value for key, value in NEW_GAME_FORM.items() if key != "email"}
    answer = client.post(f"{home}/new", data={**data, "csrf_token": csrf_token(form.text)})
    assert answer.status_code == 200 and "We sent your invitation to Bob" in answer.text


def test_the_page_s_form_sent_twice_invites_once(app: Flask, client, make_game) -> None:
    make_game()
    home = home_of(app)
    answers = [ask_from_home(client, home) for _ in range(3)]
    assert [answer.status_code for answer in answers] == [200] * 3
    assert len({answer.text for answer in answers}) == 1
    with app.app_context():
        assert db.session.scalars(select(Invitation.status)).all() == ["invited"]


def test_a_stranger_spending_the_public_allowance_does_not_stop_the_owner(
    app: Flask, client, make_game
) -> None:
    """Anyone may type Kim's address in the public form, five times a day; the page's form
    draws on an allowance of its own, which only the link's holder reaches."""
    make_game()
    home = home_of(app)
    strangers = [
        ask_for_game(from_elsewhere(app, number), email=KIM, days=str(number))
        for number in range(1, 7)
    ]
    assert [answer.status_code for answer in strangers] == [200] * 5 + [429]
    assert ask_from_home(client, home).status_code == 200
    with app.app_context():
        statuses = db.session.scalars(select(Invitation.status).order_by(Invitation.id)).all()
        assert statuses == ["unconfirmed"] * 5 + ["invited"]


def test_an_opponent_past_their_allowance_is_not_invited_and_nothing_is_made(
    app: Flask, client, make_game
) -> None:
    make_game()
    home = home_of(app)
    for days in range(1, 4):
        assert ask_from_home(client, home, days=str(days)).status_code == 200
    refused = ask_from_home(client, home, days="4")
    assert refused.status_code == 400
    assert "Nothing was sent: Bob has had as many invitations" in unescape(refused.text)
    with app.app_context():
        assert len(db.session.scalars(select(Invitation)).all()) == 3
        assert len(db.session.scalars(select(Game)).all()) == 4  # make_game's, and three


def test_a_game_against_the_computer_from_the_page_is_a_click_away(
    app: Flask, client, make_game
) -> None:
    make_game()
    home = home_of(app)
    answer = ask_from_home(client, home, opponent="computer", level="easy", opponent_name="")
    assert answer.status_code == 200, answer.text
    link = re.search(r'href="(/play/[^"]+)"[^>]*>Play it now', answer.text)
    assert link is not None
    view = client.get(f"/api{link[1]}").get_json()
    assert view["seat"] == "keeper" and view["status"] == "active"
    assert view["you"] == "Kim"


def test_a_game_against_the_computer_from_the_page_is_vouched_for(
    app: Flask, client, make_game
) -> None:
    """The page's link shows the address is Kim's: her game's emails greet her by her name
    and remind her of a move due, before she has made one."""
    make_game()
    home = home_of(app)
    answer = ask_from_home(client, home, opponent="computer", level="easy", opponent_name="")
    assert answer.status_code == 200, answer.text
    with app.app_context():
        game = db.session.scalars(select(Game).order_by(Game.id.desc())).first()
        kim = next(player for player in game.players if not player.is_computer)
        assert greeting(kim) == "Kim"
        deadlines.sweep(game.deadline - timedelta(hours=23))
        reminders = select(OutboxMessage.recipient).where(OutboxMessage.kind == "reminder")
        assert db.session.scalars(reminders).all() == [KIM]


def test_a_tampered_or_replaced_link_makes_no_game(app: Flask, client, make_game) -> None:
    make_game()
    home = home_of(app)
    token = csrf_token(client.get(home).text)
    for path in (f"{home}x/new", "/me/nonsense/new"):
        assert client.get(path).status_code == 404
        data = {**NEW_GAME_FORM, "csrf_token": token}
        assert client.post(path, data=data).status_code == 404
    with app.app_context():
        assert db.session.scalars(select(Invitation)).all() == []


def test_the_page_never_shows_a_hidden_card(app: Flask, client, make_game) -> None:
    game = make_game(seed=44)
    with app.app_context():
        state = db.session.get_one(Game, game["id"]).state
    moves = one_by_one(app, game["id"], 4)
    for step in range(40):
        for seat, email in (("keeper", KIM), ("shadow", "sam@example.com")):
            page = client.get(home_of(app, email)).get_data(as_text=True)
            secret = hidden_cards(state, seat)
            assert not leaks(page, secret, (game["keeper"], game["shadow"])), step
        if state["phase"] == "over":
            break
        _, _, state = next(moves)


def test_get_and_head_change_nothing(app: Flask, client, make_game) -> None:
    make_game(seed=5)
    home = home_of(app)
    before = snapshot(app)
    for _ in range(2):
        assert client.get(home).status_code == 200
        assert client.head(home).status_code == 200
        assert client.get(home + "x").status_code == 404
    assert snapshot(app) == before


# --- settings ------------------------------------------------------------------


def settings(app: Flask, email: str = KIM) -> AddressSettings | None:
    with app.app_context():
        found = db.session.get(AddressSettings, email)
        if found is not None:
            db.session.expunge(found)
        return found


def chosen(app: Flask, email: str = KIM) -> dict[str, object]:
    """Every column of the address's row of choices."""
    found = settings(app, email)
    assert found is not None
    return {column.key: getattr(found, column.key) for column in AddressSettings.__table__.c}


def test_forms_need_their_csrf_token(app: Flask, client, make_game) -> None:
    make_game(seed=1)
    home = home_of(app)
    before = chosen(app)
    client.get(home)
    for action, data in (
        ("emails", {"policy": "digest", "digest_hour": "7"}),
        ("language", {"language": "fr"}),
        ("vacation", {"days": "2"}),
        ("stop-all", {}),
        ("link", {}),
    ):
        assert client.post(f"{home}/{action}", data=data).status_code == 400, action
    assert chosen(app) == before


def test_the_email_policy_is_saved_and_checked(app: Flask, client, make_game) -> None:
    make_game(seed=1)
    home = home_of(app)
    assert post(client, home, "emails", policy="digest", digest_hour="7").status_code == 303
    saved = settings(app)
    assert saved is not None and (saved.email_policy, saved.digest_hour) == ("digest", 7)
    page = client.get(home).get_data(as_text=True)
    assert re.search(r'value="digest"[^>]*checked|checked[^>]*value="digest"', page)
    assert post(client, home, "emails", policy="every_move", digest_hour="7").status_code == 303
    refused = post(client, home, "emails", policy="digest", digest_hour="24")
    assert refused.status_code == 400
    page = refused.get_data(as_text=True)
    assert "Choose an hour from 0 to 23." in page
    # What was chosen comes back, to be corrected, the hour tied to the error.
    assert re.search(r'value="digest"[^>]*checked|checked[^>]*value="digest"', page)
    field = re.search(r'<input[^>]*name="digest_hour"[^>]*>', page)
    assert field is not None and 'value="24"' in field.group(0)
    assert 'aria-invalid="true"' in field.group(0)
    assert 'aria-describedby="home-error digest-zone"' in field.group(0)
    assert post(client, home, "emails", policy="often", digest_hour="7").status_code == 400
    assert settings(app).email_policy == "every_move"  # type: ignore[union-attr]


def test_each_form_s_button_says_what_it_saves(app: Flask, client, make_game) -> None:
    """A screen reader's list of buttons tells them apart."""
    make_game(seed=1)
    page = client.get(home_of(app)).get_data(as_text=True)
    buttons = re.findall(r"<button[^>]*>([^<]*)</button>", page)
    assert len(buttons) == len(set(buttons)), buttons


def test_the_language_applies_to_every_game(app: Flask, client, make_game) -> None:
    make_game(seed=1)
    make_game(seed=2)
    home = home_of(app)
    response = post(client, home, "language", language="fr")
    assert response.status_code == 303
    with app.app_context():
        languages = db.session.scalars(select(Player.language).where(Player.email == KIM)).all()
        assert languages == ["fr", "fr"]
    assert "Vos parties" in app.test_client().get(home).get_data(as_text=True)
    assert post(client, home, "language", language="de").status_code == 400


def test_each_language_is_named_in_its_own_language(app: Flask, client, make_game) -> None:
    """A screen reader reads "English" on a French page as English: each choice of the
    language setting says which language it is written in, as the header's switch does."""
    make_game(seed=1)
    page = client.get(home_of(app), headers={"Accept-Language": "fr"}).get_data(as_text=True)
    setting = page.split('id="language-title"')[1].split("</section>")[0]
    assert re.search(r'<label lang="en">\s*<input[^>]*value="en"[^>]*>\s*English</label>', setting)
    assert re.search(r'<label lang="fr">\s*<input[^>]*value="fr"[^>]*>\s*Français</label>', setting)


def test_each_saved_form_is_confirmed_once_in_the_pages_language(
    app: Flask, client, make_game
) -> None:
    """After a form's redirect the page says what was saved, in its language, and only once."""
    game = make_game(seed=1)
    home = home_of(app)
    saved = post(client, home, "language", language="fr")
    assert saved.status_code == 303
    page = client.get(saved.headers["Location"]).get_data(as_text=True)
    assert "Enregistré\u00a0: la langue de vos pages et de vos e-mails." in page
    assert '<html lang="fr"' in page
    assert "Enregistré" not in client.get(home).get_data(as_text=True)  # said once
    post(client, home, "language", language="en")
    client.get(home)
    for action, data, said in (
        ("emails", {"policy": "digest", "digest_hour": "7"}, "when you get “your move” emails"),
        ("vacation", {"days": "2"}, "your vacation"),
        ("vacation/end", {}, "you are back from vacation"),
        ("games/stop", {"game": str(game["id"])}, "the emails about that game are stopped"),
        ("games/resume", {"game": str(game["id"])}, "the emails about that game are back on"),
        ("stop-all", {}, "every email is stopped"),
        ("resume-all", {}, "your emails are back on"),
        ("invitations", {}, "you take invitations again"),
        (
            "link",
            {},
            "this page and each of your games have new links, and the old ones work no more",
        ),
    ):
        response = post(client, home, action, **data)
        assert response.status_code == 303, action
        home = response.headers["Location"]
        page = client.get(home).get_data(as_text=True)
        assert f'<p class="notice" role="status">Saved: {said}.</p>' in page, action
    # A refused form saves nothing, and says so as before.
    refused = post(client, home, "emails", policy="digest", digest_hour="24")
    assert "Saved:" not in refused.get_data(as_text=True)


def test_stopping_and_undoing(app: Flask, client, make_game) -> None:
    game = make_game(seed=1)
    home = home_of(app)
    page = client.get(home).get_data(as_text=True)
    assert "Invitations to new games still reach you." in page
    assert post(client, home, "games/stop", game=str(game["id"])).status_code == 303
    with app.app_context():
        player = db.session.scalars(select(Player).where(Player.email == KIM)).one()
        assert not player.notify
        # Stopped by its player on their own page: invitations, rematches included, still come.
        assert not invitations.blocked(KIM)
    page = client.get(home).get_data(as_text=True)
    assert f"Email me about game {game['id']} again" in page
    assert "nobody can invite you" not in page
    assert post(client, home, "games/resume", game=str(game["id"])).status_code == 303
    with app.app_context():
        assert db.session.scalars(select(Player.notify).where(Player.email == KIM)).one()
        assert not invitations.blocked(KIM)
    # A game of someone else's is not the address's to change.
    other = make_game(seed=2)
    with app.app_context(), transaction():
        db.session.get_one(Game, other["id"]).players[0].email = "zoe@example.com"
    assert post(client, home, "games/stop", game=str(other["id"])).status_code == 404
    # Nor is a number no game can have, however large.
    for number in ("0", "-3000000000", "3000000000", "9" * 20):
        assert post(client, home, "games/resume", game=number).status_code == 404, number
    # Every email, and back; the choice of when to email stays, and says it is not used.
    stopped = "You stopped all emails: none is sent, whatever you choose here,"
    assert stopped not in client.get(home).get_data(as_text=True)
    assert post(client, home, "stop-all").status_code == 303
    with app.app_context():
        assert invitations.stopped_all_emails(KIM)
    assert stopped in client.get(home).get_data(as_text=True)
    assert post(client, home, "resume-all").status_code == 303
    with app.app_context():
        assert not invitations.stopped_all_emails(KIM) and not invitations.blocked(KIM)
    assert stopped not in client.get(home).get_data(as_text=True)


def test_a_game_whose_invitation_was_declined_is_not_among_the_games_played(
    app: Flask, client, make_game
) -> None:
    make_game(seed=1)
    declined = ann_invites_and_kim_declines(app)
    with app.app_context():
        assert db.session.get_one(Game, declined).status == "cancelled"
    for address in (KIM, "ann@example.com"):
        page = unescape(client.get(home_of(app, address)).get_data(as_text=True))
        assert f"Game {declined}" not in page, address
        assert "cancelled by the server" not in page


def ann_invites_and_kim_declines(app: Flask) -> int:
    """Ann asks for a game with Kim, confirms, and Kim declines: the id of its game."""
    with app.app_context():
        invitation = request_invitation(KIM, creator="ann@example.com")
        with transaction():
            invitations.confirm(invitation)
        with transaction():
            invitations.respond(invitation, accept=False)
        return invitation.game_id


def test_a_declined_invitation_can_be_taken_back(app: Flask, client, make_game) -> None:
    make_game(seed=1)
    ann_invites_and_kim_declines(app)
    home = home_of(app)
    page = client.get(home).get_data(as_text=True)
    assert "You declined an invitation, so nobody can invite you to a game here." in page
    # Beside the new-game button: a game against the computer sends Kim no email either.
    warning = "While your address takes no invitations, a game you start against the computer"
    assert warning in page and 'href="#invitations-settings"' in page
    assert post(client, home, "invitations").status_code == 303
    with app.app_context():
        assert not invitations.blocked(KIM)
        assert db.session.get_one(Address, KIM).declined_at is None
    assert warning not in client.get(home).get_data(as_text=True)


def test_a_game_started_while_emails_were_stopped_sends_them_once_invitations_are_taken(
    app: Flask, client, make_game
) -> None:
    """Kim stopped a game's emails from an email's link, which turns invitations away, then
    asked the public page for a game against the computer: it started without emails. Its
    page says she did not stop them, and taking invitations again sends them; the game
    whose emails she stopped stays stopped."""
    stopped = make_game(seed=1)
    with app.app_context():
        kim = db.session.scalars(select(Player).where(Player.email == KIM)).one()
        stop = f"/unsubscribe/{compose.unsubscribe_token(kim)}"
    assert client.post(stop).status_code == 200
    sent = ask_for_game(
        client, name="Kim", email=KIM, opponent="computer", level="easy", opponent_name=""
    )
    assert sent.status_code == 200, sent.text
    assert "we sent your link to" in sent.text
    assert "Nothing arrived? Your address may have stopped this service’s emails" in sent.text
    with app.app_context():
        (silent,) = db.session.scalars(
            select(Player).where(Player.email == KIM, Player.game_id != stopped["id"])
        )
        assert not silent.notify
        silent_game = silent.game_id
    home = home_of(app)
    page = client.get(home).text
    withheld, _, own = page.partition("Games whose emails you stopped")
    assert "Games that started without emails" in withheld
    assert f"Game {silent_game}: no email about it." in withheld
    assert f">Email me about game {silent_game}</button>" in withheld
    assert f"Game {stopped['id']}: no email about it." in own
    assert f">Email me about game {stopped['id']} again</button>" in own
    assert f"Game {silent_game}:" not in own
    assert post(client, home, "invitations").status_code == 303
    with app.app_context():
        notify = dict(
            db.session.execute(
                select(Player.game_id, Player.notify).where(Player.email == KIM)
            ).all()
        )
    assert notify == {stopped["id"]: False, silent_game: True}
    page = client.get(home).text
    assert "Games that started without emails" not in page
    assert f"Game {stopped['id']}: no email about it." in page


def test_a_game_whose_withheld_emails_were_taken_stays_stopped_once_stopped(
    app: Flask, client, make_game
) -> None:
    """Taken again from its own button, then stopped by the player: taking invitations again
    leaves it stopped, as any game the player stopped."""
    with app.app_context(), transaction():
        db.session.add(Address(email=KIM, declined_at=utcnow()))
    ask_for_game(client, name="Kim", email=KIM, opponent="computer", level="easy", opponent_name="")
    with app.app_context():
        game_id = db.session.scalars(select(Player.game_id).where(Player.email == KIM)).one()
    home = home_of(app)
    assert post(client, home, "games/resume", game=str(game_id)).status_code == 303
    assert post(client, home, "games/stop", game=str(game_id)).status_code == 303
    assert post(client, home, "invitations").status_code == 303
    with app.app_context():
        assert not db.session.scalars(select(Player.notify).where(Player.email == KIM)).one()
    page = client.get(home).text
    assert "Games that started without emails" not in page
    assert (
        f"Game {game_id}: no email about it." in page.partition("Games whose emails you stopped")[2]
    )


def test_taking_invitations_again_sends_the_withheld_emails_of_the_whole_inbox(
    app: Flask, client
) -> None:
    """Kim's stop at kim@ held for kim+games@, whose game against the computer started
    without emails: kim@ taking invitations again sends them. kim+quiet@, which declined
    itself, still takes none, and its game stays silent."""
    with app.app_context(), transaction():
        db.session.add(Address(email=KIM, unsubscribed_at=utcnow()))
        db.session.add(Address(email="kim+quiet@example.com", declined_at=utcnow()))
        games.create_game(games.Seating(KIM, "Kim"), games.Seating("sam@example.com", "Sam"))
    for address in ("kim+games@example.com", "kim+quiet@example.com"):
        asked = ask_for_game(
            client, name="Kim", email=address, opponent="computer", level="easy", opponent_name=""
        )
        assert asked.status_code == 200, asked.text
    silent = select(Player.email, Player.notify).where(Player.email.like("kim+%"))
    with app.app_context():
        assert dict(db.session.execute(silent).all()) == {
            "kim+games@example.com": False,
            "kim+quiet@example.com": False,
        }
    assert post(client, home_of(app), "invitations").status_code == 303
    with app.app_context():
        assert dict(db.session.execute(silent).all()) == {
            "kim+games@example.com": True,
            "kim+quiet@example.com": False,
        }


def test_a_sub_address_s_page_says_its_inbox_takes_no_invitations(app: Flask, client) -> None:
    """Kim declined as kim@: kim+games@ reaches that inbox, so its page warns, says why, and
    takes invitations again for both."""
    with app.app_context(), transaction():
        db.session.add(Address(email=KIM, declined_at=utcnow()))
        games.create_game(
            games.Seating("kim+games@example.com", "Kim"), games.Seating("sam@example.com", "Sam")
        )
    home = home_of(app, "kim+games@example.com")
    page = client.get(home).get_data(as_text=True)
    assert "While your address takes no invitations" in page
    assert "You declined an invitation, so nobody can invite you to a game here." in page
    assert "You stopped emails" not in page
    assert post(client, home, "invitations").status_code == 303
    with app.app_context():
        assert not invitations.blocked("kim+games@example.com") and not invitations.blocked(KIM)


# --- vacation ------------------------------------------------------------------

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def kim_owes(app: Flask, game_id: int) -> bool:
    with app.app_context():
        return db.session.get_one(Game, game_id).to_act in ("keeper", "both")


def test_vacation_pauses_the_deadlines_of_moves_owed(app: Flask, client, make_game) -> None:
    with time_machine.travel(NOW, tick=False):
        game = make_game(seed=9, days_per_move=2)
        moves = one_by_one(app, game["id"], 9)
        while not kim_owes(app, game["id"]):
            next(moves)
        with app.app_context():
            before = db.session.get_one(Game, game["id"]).deadline
        assert post(client, home_of(app), "vacation", days="5").status_code == 303
        with app.app_context():
            paused = db.session.get_one(Game, game["id"])
            assert paused.deadline == before + timedelta(days=5)  # type: ignore[operator]
            assert homes.vacation_left(db.session.get(AddressSettings, KIM), NOW) == 25
        # Sam's page and home page say so, and Kim's do not.
        assert "Kim is on vacation until" in client.get(f"/play/{game['shadow']}").get_data(
            as_text=True
        )
        sam_home = client.get(home_of(app, "sam@example.com")).get_data(as_text=True)
        assert "Kim is on vacation until" in sam_home
        assert (
            "on vacation until"
            not in client.get(home_of(app)).get_data(as_text=True).split("Games in play")[1]
        )
        assert "on vacation until" not in client.get(f"/play/{game['keeper']}").get_data(
            as_text=True
        )
    # The old deadline passes: nothing happens; the new one ends the game.
    with app.app_context():
        assert deadlines.sweep(before + timedelta(hours=1)).expired == []  # type: ignore[operator]
        later = before + timedelta(days=5, hours=1)  # type: ignore[operator]
        assert deadlines.sweep(later).expired == [game["id"]]


def test_a_vacation_taken_after_the_deadline_passed_does_not_bring_it_back(
    app: Flask, client, make_game
) -> None:
    """Between the deadline and the sweep that ends the game, going away saves nothing."""
    with time_machine.travel(NOW, tick=False):
        game = make_game(seed=9, days_per_move=2)
        with app.app_context():
            passed = db.session.get_one(Game, game["id"]).deadline
        assert passed is not None
    with time_machine.travel(passed + timedelta(hours=3), tick=False):
        assert post(client, home_of(app), "vacation", days="1").status_code == 303
        with app.app_context():
            assert db.session.get_one(Game, game["id"]).deadline == passed
            assert deadlines.sweep().expired == [game["id"]]


def test_a_deadline_reminder_waits_for_the_end_of_the_vacation(
    app: Flask, client, make_game
) -> None:
    """Kim, reminded ten hours before the deadline, goes away for five days: the deadline
    moves back by them, and its new reminder, due while Kim is still away, goes once Kim
    is back, as the opponent's own reminder would."""
    game = make_game(seed=9, days_per_move=2)  # both owe the exchange
    with app.app_context():
        due = db.session.get_one(Game, game["id"]).deadline
    assert due is not None
    with time_machine.travel(due - timedelta(hours=10), tick=False):
        with app.app_context():
            assert deadlines.sweep().reminded == [game["id"]]
        assert post(client, home_of(app), "vacation", days="5").status_code == 303
    back = due - timedelta(hours=10) + timedelta(days=5)
    with app.app_context():
        assert db.session.get_one(Game, game["id"]).deadline == due + timedelta(days=5)
        assert deadlines.sweep(back - timedelta(hours=13)).reminded == []  # still away
        with transaction():  # read again under the game's lock: still away
            assert games.remind(game["id"], back - timedelta(hours=12)) is None
        assert deadlines.sweep(back - timedelta(minutes=1)).reminded == []
        assert deadlines.sweep(back + timedelta(minutes=1)).reminded == [game["id"]]
        assert deadlines.sweep(back + timedelta(minutes=2)).reminded == []


def test_two_vacations_at_once_pause_a_move_both_owe_once(app: Flask, make_game) -> None:
    """Both owe the exchange and both go away for the same five days, then Sam for two more:
    seven days are paused, not twelve."""
    with time_machine.travel(NOW, tick=False):
        game = make_game(seed=9, days_per_move=2)
        with app.app_context():
            before = db.session.get_one(Game, game["id"]).deadline
            with transaction():
                homes.take_vacation(KIM, 5)
            with transaction():
                homes.take_vacation("sam@example.com", 7)
            after = db.session.get_one(Game, game["id"]).deadline
    assert before is not None and after == before + timedelta(days=7)


def test_coming_back_at_once_gives_back_what_the_opponents_vacation_does_not_pause(
    app: Flask, make_game
) -> None:
    """Both owe the exchange, a day left: Kim goes away for five days, Sam for thirty and
    comes back a minute later. The deadline is Kim's five days later, no more."""
    game = make_game(seed=9, days_per_move=7)
    with app.app_context():
        due = db.session.get_one(Game, game["id"]).deadline
    assert due is not None
    with time_machine.travel(due - timedelta(days=1), tick=False), app.app_context():
        with transaction():
            homes.take_vacation(KIM, 5)
        with transaction():
            homes.take_vacation("sam@example.com", 30)
        assert db.session.get_one(Game, game["id"]).deadline == due + timedelta(days=30)
    with time_machine.travel(due - timedelta(days=1, minutes=-1), tick=False), app.app_context():
        with transaction():
            homes.end_vacation("sam@example.com")
        assert db.session.get_one(Game, game["id"]).deadline == due + timedelta(days=5)


def test_a_move_owed_during_a_vacation_counts_from_its_end(app: Flask, client, make_game) -> None:
    with time_machine.travel(NOW, tick=False):
        game = make_game(seed=9, days_per_move=2)
        with app.app_context(), transaction():
            until = homes.take_vacation("sam@example.com", 10)
        for _ in itertools.islice(one_by_one(app, game["id"], 9), 30):
            with app.app_context():
                current = db.session.get_one(Game, game["id"])
                if current.to_act in ("shadow", "both"):
                    assert current.deadline == until + timedelta(days=2)
                else:  # or the deadline both seats were given, kept for the second half
                    assert current.deadline in (NOW + timedelta(days=2), until + timedelta(days=2))


def test_a_finished_game_against_the_computer_shows_its_rematch(
    app: Flask, client, make_game
) -> None:
    """As the game's page does: once the rematch has started, the home page names it and
    offers no other; a game over is no longer listed among those whose emails are stopped."""
    with app.app_context(), transaction():
        game = games.create_game(
            games.Seating(KIM, "Kim"), games.Seating.the_computer("easy"), seed=3
        )
        game_id, kim = game.id, game.player("keeper")
        token = token_for(kim)
        homes.stop_game_emails(KIM, game_id)
    written(app, game_id, 3)
    home = home_of(app)
    page = client.get(home).get_data(as_text=True)
    assert "Ask the computer (easy) for a rematch" in page
    assert "Games whose emails you stopped" not in page
    assert client.post(f"/rematch/{token}").status_code == 303
    page = client.get(home).get_data(as_text=True)
    assert f"Rematch: game {game_id + 1}." in page
    assert "Ask the computer (easy) for a rematch" not in page


def test_the_home_page_gives_times_in_the_addresss_time_zone(app: Flask, client, make_game) -> None:
    """Once a move page has told the address's time zone, the emails use it, and so does
    the home page and the move page: deadlines and vacations alike, each time marked with
    the zone it is in, so that the page's script leaves it as it is."""
    with time_machine.travel(NOW, tick=False):
        game = make_game(seed=1, days_per_move=2)
        with app.app_context(), transaction():
            homes.set_time_zone(KIM, "Europe/Paris")
            homes.take_vacation("sam@example.com", 3)
        page = unescape(client.get(home_of(app)).get_data(as_text=True))
        move_page = client.get(f"/play/{game['keeper']}").get_data(as_text=True)
    move_page = unescape(move_page)
    for text in (
        '<time datetime="2026-06-04T12:00:00+00:00" data-zone="Europe/Paris">'
        "Jun 4, 2026, 2:00\u202fPM Europe/Paris</time>",
        '<time datetime="2026-06-06T12:00:00+00:00" data-zone="Europe/Paris">'
        "Jun 6, 2026, 2:00\u202fPM Europe/Paris</time>",
    ):
        assert text in move_page
    assert "PM UTC" not in move_page
    assert "Your move and Sam's are due Jun 6, 2026, 2:00\u202fPM Europe/Paris." in page
    assert "Sam is on vacation until Jun 4, 2026, 2:00\u202fPM Europe/Paris." in page
    assert "PM UTC" not in page


def test_a_time_zone_this_machine_does_not_know_gives_times_in_utc(
    app: Flask, client, make_game
) -> None:
    """Stored elsewhere, say: the page's times are in UTC, which its script then shows in
    the browser's zone, unmarked by a zone it is not in."""
    with time_machine.travel(NOW, tick=False):
        game = make_game(seed=1, days_per_move=2)
        with app.app_context(), transaction():
            homes.set_time_zone(KIM, "Europe/Paris")
            db.session.get_one(AddressSettings, KIM).time_zone = "Mars/Olympus_Mons"
        for _ in range(2):  # rendered, then kept
            move_page = unescape(client.get(f"/play/{game['keeper']}").get_data(as_text=True))
            assert "data-zone" not in move_page
            assert '<time datetime="2026-06-03T12:00:00+00:00">Jun 3, 2026' in move_page
            assert "PM UTC</time>" in move_page


def test_a_time_zone_this_machine_no_longer_knows_is_said_as_utc_and_replaced(
    app: Flask, client, make_game
) -> None:
    """Kim's zone, chosen when it was known, is none this machine knows now: her digest comes
    at its hour of UTC, and the home page says so, not that its times are in a zone they are
    not in. The zone her browser reports next is kept, as the first would be."""
    with time_machine.travel(NOW, tick=False):
        game = make_game(seed=1, days_per_move=2)
        with app.app_context(), transaction():
            homes.set_time_zone(KIM, "Europe/Paris")
            homes.set_email_policy(KIM, "digest", digest_hour=8)
            db.session.get_one(AddressSettings, KIM).time_zone = "Mars/Olympus_Mons"
        page = unescape(client.get(home_of(app)).get_data(as_text=True))
        assert "Mars/Olympus_Mons" not in page
        assert "UTC time" in page and "times are in UTC" in page
        url = f"/play/{game['keeper']}/time-zone"
        assert client.post(url, data={"zone": "Asia/Tokyo"}).status_code == 204
        with app.app_context():
            settings = db.session.get_one(AddressSettings, KIM)
            # 8 o'clock UTC, the hour its digest came at, is 17 o'clock in Tokyo.
            assert (settings.time_zone, settings.digest_hour) == ("Asia/Tokyo", 17)


def test_the_vacation_allowance(app: Flask, client, make_game) -> None:
    make_game(seed=1)
    home = home_of(app)
    with time_machine.travel(NOW, tick=False):
        assert post(client, home, "vacation", days="20").status_code == 303
        refused = post(client, home, "vacation", days="11")
        assert refused.status_code == 400
        assert "You have 10 days of vacation left this year." in refused.get_data(as_text=True)
        field = re.search(r'<input[^>]*name="days"[^>]*>', refused.get_data(as_text=True))
        assert field is not None and 'value="11"' in field.group(0)
        assert 'aria-invalid="true"' in field.group(0)
        assert post(client, home, "vacation", days="0").status_code == 400
        assert post(client, home, "vacation", days="10").status_code == 303
        assert "You have 0 days left this year." in client.get(home).get_data(as_text=True)
    with time_machine.travel(NOW.replace(year=2027), tick=False):
        assert "You have 30 days left this year." in client.get(home).get_data(as_text=True)
        assert post(client, home, "vacation", days="29").status_code == 303
        assert "You have 1 day left this year." in client.get(home).get_data(as_text=True)
        refused = post(client, home, "vacation", days="2").get_data(as_text=True)
        assert "You have 1 day of vacation left this year." in refused


def vacation_seen(page: str) -> str:
    """The end of the vacation the page's vacation form says it was shown."""
    found = re.search(r'name="ends"[^>]*value="([^"]*)"', page)
    assert found is not None
    return found.group(1)


def test_the_same_vacation_form_sent_twice_takes_its_days_once(
    app: Flask, client, make_game
) -> None:
    make_game(seed=1)
    home = home_of(app)
    with time_machine.travel(NOW, tick=False):
        page = client.get(home).text
        form = {
            "csrf_token": csrf_token(page),
            "ends": vacation_seen(page),
            "days": "3",
        }
        assert form["ends"] == ""  # not away yet
        assert client.post(f"{home}/vacation", data=form).status_code == 303
        again = client.post(f"{home}/vacation", data=form)
        assert again.status_code == 409
        assert "Your vacation changed since this page was loaded" in again.text
        with app.app_context():
            settings = db.session.get_one(AddressSettings, KIM)
            assert settings.vacation_days_used == 3
            assert settings.vacation_until == NOW + timedelta(days=3)
        # The page sent back shows the vacation as it is: sent from it, it adds to it.
        form["ends"] = vacation_seen(again.text)
        assert client.post(f"{home}/vacation", data=form).status_code == 303
        with app.app_context():
            assert db.session.get_one(AddressSettings, KIM).vacation_days_used == 6


def test_a_new_time_zone_says_when_the_digest_now_comes(app: Flask, client, make_game) -> None:
    """Chosen at 04:00 while no zone was known (UTC), the digest keeps its moment, which in
    Tokyo is 13:00: the page says so, not only that the zone was saved."""
    make_game(seed=1)
    home = home_of(app)
    with app.app_context(), transaction():
        homes.set_email_policy(KIM, "digest", digest_hour=4)
    saved = client.post(
        f"{home}/time-zone",
        data={"csrf_token": csrf_token(client.get(home).text), "zone": "Asia/Tokyo"},
    )
    page = client.get(saved.headers["Location"]).text
    assert "Saved: your time zone." in page
    assert "Your daily digest comes at 13:00 Asia/Tokyo." in page
    # A later zone keeps the hour's number: the page says so, not the moment.
    form = {"csrf_token": csrf_token(client.get(home).text), "zone": "Europe/Paris"}
    page = client.get(client.post(f"{home}/time-zone", data=form).headers["Location"]).text
    assert "Your daily digest comes at 13:00 Europe/Paris." in page


def test_coming_back_in_the_next_year_promises_no_days_back(app: Flask, client, make_game) -> None:
    """The days of a vacation taken in December were that year's: coming back in January
    gives none back, and the button does not say it would."""
    make_game(seed=1)
    home = home_of(app)
    december = NOW.replace(month=12, day=28)
    with time_machine.travel(december, tick=False):
        assert post(client, home, "vacation", days="10").status_code == 303
        page = client.get(home).get_data(as_text=True)
        assert "Come back now: the whole days not used return to this year" in page
    with time_machine.travel(december + timedelta(days=5), tick=False):
        page = client.get(home).get_data(as_text=True)
        assert "Come back now</button>" in page and "return to this year" not in page


def test_presence_is_a_post_of_its_own(app: Flask, client, make_game) -> None:
    game = make_game(seed=1)
    before = snapshot(app)
    client.get(f"/play/{game['keeper']}")
    client.get(f"/api/play/{game['keeper']}")
    assert snapshot(app) == before
    assert client.post(f"/play/{game['keeper']}/seen").status_code == 204
    assert client.post(f"/play/{game['keeper']}x/seen").status_code == 404
    with app.app_context():
        player = db.session.scalars(select(Player).where(Player.email == KIM)).one()
        assert player.seen_at is not None


def test_the_game_page_links_home(app: Flask, client, make_game) -> None:
    game = make_game(seed=1)
    page = client.get(f"/play/{game['keeper']}").get_data(as_text=True)
    assert f'href="{home_of(app)}"' in page


def test_coming_back_early(app: Flask, client, make_game) -> None:
    with time_machine.travel(NOW, tick=False):
        game = make_game(seed=9, days_per_move=2)  # both owe the exchange
        with app.app_context():
            before = db.session.get_one(Game, game["id"]).deadline
        home = home_of(app)
        assert post(client, home, "vacation", days="10").status_code == 303
        assert "Come back now" in client.get(home).get_data(as_text=True)
    with app.app_context():
        reminded = deadlines.sweep(NOW + timedelta(days=11, hours=1)).reminded  # before the end
        assert reminded == [game["id"]]
    with time_machine.travel(NOW + timedelta(days=3, hours=5), tick=False):
        assert post(client, home, "vacation/end").status_code == 303
        with app.app_context():
            paused = db.session.get_one(Game, game["id"])
            # Paused for the time away, no more.
            assert paused.deadline == before + timedelta(days=3, hours=5)  # type: ignore[operator]
            # The reminder gave the later deadline: the earlier one is reminded of again.
            assert not paused.reminded
            settings = db.session.get_one(AddressSettings, KIM)
            assert homes.vacation_left(settings, NOW) == 26  # 6 whole days unused came back
        page = client.get(home).get_data(as_text=True)
        assert "Come back now" not in page and "You have 26 days left this year." in page
        assert "on vacation until" not in client.get(f"/play/{game['shadow']}").get_data(
            as_text=True
        )


def test_coming_back_early_tells_both_players_the_earlier_deadline(
    app: Flask, client, make_game
) -> None:
    """Sam may have counted on the deadline Kim's vacation gave: both are told the earlier
    one, each in their own language and time zone."""
    with time_machine.travel(NOW, tick=False):
        game = make_game(seed=9, days_per_move=2, shadow_language="fr")  # both owe the exchange
        with app.app_context(), transaction():
            homes.set_time_zone("sam@example.com", "Europe/Paris")
            homes.take_vacation(KIM, 10)
        write_queued(app)
    with time_machine.travel(NOW + timedelta(days=3, hours=5), tick=False):
        assert post(client, home_of(app), "vacation/end").status_code == 303
        write_queued(app)
        with app.app_context():
            told = {
                row.recipient: row
                for row in db.session.scalars(
                    select(OutboxMessage).where(OutboxMessage.kind == "deadline_extended")
                )
            }
            deadline = db.session.get_one(Game, game["id"]).deadline
    assert set(told) == {KIM, "sam@example.com"}
    assert told[KIM].subject == f"Split Mind, game {game['id']}: the deadline is brought forward"
    assert (
        f"You are back from vacation early, so the deadline of game {game['id']} is brought "
        "forward: the next move is due by"
    ) in told[KIM].text_body
    sam = told["sam@example.com"]
    assert sam.subject == f"Split Mind, partie {game['id']}\u00a0: le délai est avancé"
    assert "Kim est de retour de vacances plus tôt que prévu" in sam.text_body
    assert deadline is not None
    paris = deadline.astimezone(ZoneInfo("Europe/Paris"))
    assert f"{paris:%H:%M}" in sam.text_body and "Europe/Paris" in sam.text_body


def test_a_deadline_brought_forward_as_near_as_a_reminder_is_the_reminder(
    app: Flask, client, make_game
) -> None:
    """Kim, reminded ten hours before the deadline, goes away for five days and comes back an
    hour later: the email that brings the deadline forward to ten hours away reminds both
    players, as an admin's extension does; the sweep sends no "due soon" about it (one
    brought forward to days away is reminded of in its own time: test_coming_back_early)."""
    game = make_game(seed=9, days_per_move=2)  # both owe the exchange
    with app.app_context():
        due = db.session.get_one(Game, game["id"]).deadline
    assert due is not None
    home = home_of(app)
    with time_machine.travel(due - timedelta(hours=10), tick=False):
        with app.app_context():
            assert deadlines.sweep().reminded == [game["id"]]
        assert post(client, home, "vacation", days="5").status_code == 303
    with time_machine.travel(due - timedelta(hours=9), tick=False):
        assert post(client, home, "vacation/end").status_code == 303
        with app.app_context():
            assert db.session.get_one(Game, game["id"]).deadline == due + timedelta(hours=1)
            assert deadlines.sweep().reminded == []


def test_coming_back_early_leaves_the_opponent_their_vacation(
    app: Flask, client, make_game
) -> None:
    """Both owe the exchange, whose deadline counts from the end of the longer vacation,
    Sam's: Kim's early return takes nothing off it, and Sam, still away, does not time out
    once Kim has chosen."""
    with time_machine.travel(NOW, tick=False):
        with app.app_context(), transaction():
            homes.take_vacation(KIM, 3)
            sam_back = homes.take_vacation("sam@example.com", 14)
        game = make_game(seed=9, days_per_move=1)  # both owe the exchange
        with app.app_context():
            current = db.session.get_one(Game, game["id"])
            assert current.deadline == sam_back + timedelta(days=1)
            kim_chooses = next(m for m in planned_moves(current.state, 9) if m[0] == "keeper")
        assert post(client, home_of(app), "vacation/end").status_code == 303
        with app.app_context():
            assert db.session.get_one(Game, game["id"]).deadline == sam_back + timedelta(days=1)
            assert homes.vacation_left(db.session.get_one(AddressSettings, KIM), NOW) == 30
        apply_moves(app, game["id"], [kim_chooses])
    with app.app_context():
        assert deadlines.sweep(NOW + timedelta(days=12, hours=1)).expired == []
        assert deadlines.sweep(sam_back + timedelta(hours=1)).expired == []
        expired = deadlines.sweep(sam_back + timedelta(days=1, hours=1)).expired
        assert expired == [game["id"]]


def posts_at_once(app: Flask, home: str, action: str, count: int, **data: object) -> list[int]:
    """The same form of the home page posted from ``count`` browsers at the same instant."""
    clients = [app.test_client() for _ in range(count)]
    tokens = [csrf_token(client.get(home).get_data(as_text=True)) for client in clients]
    return at_once(
        [
            lambda client=client, token=token: (
                client.post(f"{home}/{action}", data={"csrf_token": token, **data}).status_code
            )
            for client, token in zip(clients, tokens, strict=True)
        ]
    )


@pytest.mark.postgres
def test_vacations_asked_at_the_same_instant_apply_one_after_the_other(
    app: Flask, make_game
) -> None:
    """Each request reads the address's row under its lock: the days granted never pass the
    allowance, each deadline moves once per day granted, and a second "Come back now"
    finds the vacation over."""
    with time_machine.travel(NOW, tick=False):
        game = make_game(seed=9, days_per_move=5)  # both owe the exchange
        with app.app_context():
            before = db.session.get_one(Game, game["id"]).deadline
            assert before is not None
        home = home_of(app)
        statuses = posts_at_once(app, home, "vacation", 6, days="15")
        assert sorted(statuses) == [303, 303, 400, 400, 400, 400]
        with app.app_context():
            assert db.session.get_one(Game, game["id"]).deadline == before + timedelta(days=30)
            assert db.session.get_one(AddressSettings, KIM).vacation_days_used == 30
    back = NOW + timedelta(days=3)
    with time_machine.travel(back, tick=False):
        assert posts_at_once(app, home, "vacation/end", 2) == [303, 303]
        with app.app_context():
            assert db.session.get_one(Game, game["id"]).deadline == before + timedelta(days=3)
            settings = db.session.get_one(AddressSettings, KIM)
            assert settings.vacation_until == back and settings.vacation_days_used == 3
            notes = db.session.scalars(
                select(Event.note).where(Event.game_id == game["id"], Event.kind == "vacation")
            ).all()
            assert notes.count("back from vacation") == 1


@pytest.mark.postgres
def test_a_vacation_taken_as_the_opponent_moves_pauses_the_move_it_makes_owed(
    app: Flask, make_game
) -> None:
    """Sam's move, which makes Kim owe one, holds the game's lock as Kim goes away: her
    vacation waits for it, then pauses the deadline that move gave her."""
    with time_machine.travel(NOW, tick=False):
        game = make_game(seed=9, days_per_move=5)
        with app.app_context(), transaction():
            kim, sam = db.session.get_one(Game, game["id"]).players
            kim_view = games.player_view(kim)
            games.apply_move(kim.id, 0, pick_action(kim_view, random.Random(1)))
            sam_id = sam.id
        with app.app_context():
            sam = db.session.get_one(Player, sam_id)
            sam_move = pick_action(games.player_view(sam), random.Random(2))
        away = threading.Thread(target=lambda: vacation(app, 10))
        with app.app_context(), transaction():
            games.apply_move(sam_id, 1, sam_move)  # the game locked until this block ends
            away.start()
            away.join(1)  # Kim's vacation waits for the lock (or, unlocked, is done)
        away.join(10)
        with app.app_context():
            stored = db.session.get_one(Game, game["id"])
            assert "keeper" in to_act(stored.state)
            assert stored.deadline == NOW + timedelta(days=10 + 5)


@pytest.mark.postgres
def test_a_move_waiting_for_a_vacation_taken_meanwhile_counts_its_deadline_from_its_end(
    app: Flask, make_game, postgres_database: str
) -> None:
    """Kim's vacation holds the game's lock as Sam moves: his move, which makes her owe one,
    waits for it, then sees her away and counts her deadline from her return."""
    with time_machine.travel(NOW, tick=False):
        game = make_game(seed=9, days_per_move=5)
        with app.app_context(), transaction():
            kim, sam = db.session.get_one(Game, game["id"]).players
            games.apply_move(kim.id, 0, pick_action(games.player_view(kim), random.Random(1)))
            sam_id = sam.id
        with app.app_context():
            sam_move = pick_action(
                games.player_view(db.session.get_one(Player, sam_id)), random.Random(2)
            )
        taken, release = threading.Event(), threading.Event()

        def away() -> None:
            with app.app_context(), transaction():
                homes.take_vacation(KIM, 10)  # locks each game of Kim's, this one too
                taken.set()
                release.wait(30)

        def move() -> None:
            with app.app_context(), transaction():
                games.apply_move(sam_id, 1, sam_move)

        vacationing, moving = threading.Thread(target=away), threading.Thread(target=move)
        vacationing.start()
        assert taken.wait(30)
        moving.start()
        wait_until(waits_on_a_lock(postgres_database))  # Sam's move waits for the vacation
        release.set()
        vacationing.join(30)
        moving.join(30)
        with app.app_context():
            stored = db.session.get_one(Game, game["id"])
            assert stored.version == 2 and "keeper" in to_act(stored.state)
            assert stored.deadline == NOW + timedelta(days=10 + 5)


def vacation(app: Flask, days: int) -> None:
    """Kim goes away for ``days`` days, in a transaction of her own."""
    with app.app_context(), transaction():
        homes.take_vacation(KIM, days)


def home_page_statements(app: Flask) -> list[str]:
    """The SQL statements one visit of Kim's home page runs."""
    with statements_run(app) as statements:
        assert app.test_client().get(home_of(app)).status_code == 200
    return [sql for sql, _ in statements]


def finished_game(app: Flask, make_game, seed: int, rematch: bool) -> None:
    """A game the shadow forfeited, and (``rematch``) the keeper's rematch proposed after it."""
    game_id = make_game(seed=seed)["id"]
    with app.app_context(), transaction():
        game = games.declare_forfeit(game_id, "shadow", "ada")
        if rematch:
            invitations.propose_rematch(game.player("keeper"))


def return_match(app: Flask, seed: int, forfeit: bool) -> None:
    """A return match of Kim's, its first game in play, or (``forfeit``) forfeited by Sam."""
    with app.app_context(), transaction():
        kim, sam = games.Seating(KIM, "Kim"), games.Seating("sam@example.com", "Sam")
        first = games.create_match(kim, sam, seed=seed)
        if forfeit:
            games.declare_forfeit(first.id, "shadow", "ada")


def test_a_home_page_costs_the_same_queries_for_more_games(app: Flask, make_game) -> None:
    """Each game's line reads its game and players from two statements for all of them, its
    return match's games from three more, and the finished games' rematches (or why none can
    follow) from two more."""
    make_game(seed=1)
    finished_game(app, make_game, seed=2, rematch=True)
    finished_game(app, make_game, seed=3, rematch=False)
    return_match(app, seed=4, forfeit=False)
    return_match(app, seed=5, forfeit=True)
    few = home_page_statements(app)
    for seed in range(6, 18):
        if seed % 4 == 0:
            make_game(seed=seed)
        elif seed % 4 == 1:
            return_match(app, seed=seed, forfeit=seed % 3 == 0)
        else:
            finished_game(app, make_game, seed=seed, rematch=seed % 2 == 0)
    many = home_page_statements(app)
    assert len(many) == len(few) == 16, "\n".join(many)
    # The rematches asked for after every finished game.
    assert sum("FROM events " in statement for statement in many) == 1
    # Kim's own, and whether Kim's inbox takes invitations: not the opponents', which would
    # tell Kim what they chose (a rematch to one that takes none is asked for all the same).
    assert sum("FROM addresses " in statement for statement in many) == 2
    page = app.test_client().get(home_of(app)).get_data(as_text=True)
    # Four rematches asked for; four finished games and two forfeited matches can ask for one.
    assert page.count("Rematch: game ") == 4 and page.count("for a rematch</button>") == 6


def test_the_address_chooses_its_time_zone(app: Flask, client, make_game) -> None:
    """Chosen on the home page, the time zone gives the times of its page and emails, and a
    move page's report of another does not replace it; a name that is none is refused."""
    with time_machine.travel(NOW, tick=False):
        game = make_game(seed=1, days_per_move=2)
        home = home_of(app)
        page = client.get(home).get_data(as_text=True)
        assert "No time zone known yet" in page
        refused = post(client, home, "time-zone", zone="Mars/Olympus")
        assert refused.status_code == 400
        # What was typed comes back, to be corrected, tied to the error.
        ids = re.findall(r'\bid="([^"]+)"', refused.get_data(as_text=True))
        assert len(ids) == len(set(ids))  # many forms, no id twice
        field = re.search(r'<input[^>]*name="zone"[^>]*>', refused.get_data(as_text=True))
        assert field is not None and 'value="Mars/Olympus"' in field.group(0)
        assert 'aria-invalid="true"' in field.group(0)
        assert 'aria-describedby="home-error"' in field.group(0)
        assert "That is no time zone: write one such as Europe/Paris." in refused.get_data(
            as_text=True
        )
        saved = client.get(post(client, home, "time-zone", zone=" Asia/Tokyo ").headers["Location"])
        page = unescape(saved.get_data(as_text=True))
        assert "Saved: your time zone." in page
        assert "Your emails and this page give times in Asia/Tokyo." in page
        assert "due Jun 3, 2026, 9:00\u202fPM Asia/Tokyo." in page
        client.post(f"/play/{game['keeper']}/time-zone", data={"zone": "Europe/Paris"})
    with app.app_context():
        assert db.session.get_one(AddressSettings, KIM).time_zone == "Asia/Tokyo"


def test_a_digest_hour_keeps_its_moment_when_a_first_time_zone_is_chosen(
    app: Flask, client, make_game
) -> None:
    """Eight, read in UTC while no zone was known, is five in the afternoon in Tokyo; a later
    zone keeps the hour's number, as a clock on the wall does."""
    make_game(seed=1)
    home = home_of(app)
    with time_machine.travel(NOW, tick=False):
        assert post(client, home, "emails", policy="digest", digest_hour="8").status_code == 303
        assert post(client, home, "time-zone", zone="Asia/Tokyo").status_code == 303
        with app.app_context():
            assert db.session.get_one(AddressSettings, KIM).digest_hour == 17
        assert post(client, home, "time-zone", zone="Europe/Paris").status_code == 303
    with app.app_context():
        settings = db.session.get_one(AddressSettings, KIM)
        assert (settings.time_zone, settings.digest_hour) == ("Europe/Paris", 17)


def test_the_french_email_choices_read_as_french(app: Flask, client, make_game) -> None:
    make_game()
    page = unescape(client.get(home_of(app) + "?lang=fr").get_data(as_text=True))
    assert "à chaque coup que je dois jouer</label>" in page
    assert "à chaque coup que je dois jouer, une fois que la page" in page
    assert "qui est le mien" not in page


def test_a_stop_by_an_emails_link_leaves_the_page_saying_one_thing(
    app: Flask, client, make_game
) -> None:
    """The unsubscribe link in a game's email turns invitations away too: the page then says
    nowhere that they still reach the address."""
    make_game(seed=1)
    make_game(seed=2)  # a game whose emails still come: the page offers to stop them
    with app.app_context():
        kim = db.session.scalars(select(Player).where(Player.email == KIM)).first()
        stop = f"/unsubscribe/{compose.unsubscribe_token(kim)}"
    before = unescape(client.get(home_of(app)).text)
    assert "Invitations to new games still reach you." in before
    assert client.post(stop).status_code == 200
    page = unescape(client.get(home_of(app)).text)
    assert "You stopped emails, so nobody can invite you to a game here." in page
    assert "Invitations stay as they are: you take none now (see below)." in page
    assert "still reach you" not in page and "you still get the invitations" not in page


@pytest.mark.parametrize("stop", ["stop-all", "games/stop"])
def test_a_return_match_s_second_game_keeps_the_stop_of_its_first(
    app: Flask, client, stop: str
) -> None:
    """Kim stopped the emails of the first game of a return match (or every email): the
    second game, which starts without her, sends her none either, and her page says so."""
    with app.app_context(), transaction():
        kim, sam = games.Seating(KIM, "Kim"), games.Seating("sam@example.com", "Sam")
        first = games.create_match(kim, sam, seed=4).id
    home = home_of(app)
    assert post(client, home, stop, game=str(first)).status_code == 303
    played(app, first, seed=4, emails=False)
    with app.app_context():
        second = db.session.scalars(select(Game).where(Game.match_game == 2)).one()
        assert second.status == "active"
        assert not next(player for player in second.players if player.email == KIM).notify
        to_kim = select(OutboxMessage.kind).where(
            OutboxMessage.recipient == KIM, OutboxMessage.game_id == second.id
        )
        assert db.session.scalars(to_kim).all() == []
    page = client.get(home).text
    assert f"Email me about game {second.id} again" in page


def test_a_return_match_s_second_game_withholds_what_its_first_withheld(app: Flask, client) -> None:
    """A return match against the computer asked for while Kim's address took no
    invitations started without emails: so does its second game, which taking invitations
    again then sends, as the page says."""
    with app.app_context(), transaction():
        db.session.add(Address(email=KIM, declined_at=utcnow()))
    sent = ask_for_game(
        client,
        name="Kim",
        email=KIM,
        opponent="computer",
        level="easy",
        opponent_name="",
        format="match",
    )
    assert sent.status_code == 200, sent.text
    with app.app_context():
        first = db.session.scalars(select(Player.game_id).where(Player.email == KIM)).one()
    played_against_computer(app, first, emails=False)
    with app.app_context():
        second = db.session.scalars(select(Game).where(Game.match_game == 2)).one()
        assert not next(player for player in second.players if player.email == KIM).notify
        second_id = second.id
    emailed_once_invitations_are_taken(app, client, home_of(app), second_id)


def emailed_once_invitations_are_taken(app: Flask, client, home: str, game_id: int) -> None:
    """Kim's game ``game_id`` is listed on her home page among the games that started without
    emails, and taking invitations again there turns its emails on."""
    withheld = client.get(home).text.partition("Games whose emails you stopped")[0]
    assert f">Email me about game {game_id}</button>" in withheld
    assert post(client, home, "invitations").status_code == 303
    with app.app_context():
        kim = select(Player.notify).where(Player.email == KIM, Player.game_id == game_id)
        assert db.session.scalars(kim).one()


def test_a_rematch_against_the_computer_started_while_invitations_are_off_sends_no_email(
    app: Flask, client
) -> None:
    """As the page says, a game started against the computer while the address takes no
    invitations sends it no email: its rematch, asked for from this page, too. It is
    listed among the games that started without emails, which taking invitations sends."""
    with app.app_context(), transaction():
        game = games.create_game(
            games.Seating(KIM, "Kim"), games.Seating.the_computer("easy"), seed=3
        )
        game_id, token = game.id, token_for(game.player("keeper"))
    written(app, game_id, 3)
    home = home_of(app)
    assert post(client, home, "stop-all").status_code == 303
    page = client.get(home).text
    assert "a game you start against the computer sends it no email" in page
    assert client.post(f"/rematch/{token}").status_code == 303
    with app.app_context():
        new = db.session.scalars(
            select(Player).where(Player.email == KIM, Player.game_id != game_id)
        ).one()
        assert not new.notify
        to_kim = select(OutboxMessage.kind).where(
            OutboxMessage.recipient == KIM, OutboxMessage.game_id == new.game_id
        )
        assert db.session.scalars(to_kim).all() == []
        new_game = new.game_id
    emailed_once_invitations_are_taken(app, client, home, new_game)


def test_no_game_to_stop_offers_no_stop(app: Flask, client, make_game) -> None:
    """Once every game in play has its emails stopped, the page offers no section to stop
    the emails of one: it would have no button in it."""
    game = make_game(seed=1)
    home = home_of(app)
    assert "Stop the emails about one game" in client.get(home).text
    assert post(client, home, "games/stop", game=str(game["id"])).status_code == 303
    page = client.get(home).text
    assert f"Email me about game {game['id']} again" in page
    assert "Stop the emails about one game" not in page
