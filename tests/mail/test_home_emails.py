"""What the home page's choices do to the emails: the turn-email policy as the outbox honours
it, the daily digest, and a vacation as the opponent reads it."""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import pytest
import time_machine
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service import deadlines, games, homes, notify
from service.games import Seating
from service.links import home_token, token_for
from service.mail.compose import news
from service.models import AddressSettings, Game, OutboxMessage, Player, db
from service.perspective import player_view
from service.unit_of_work import transaction

from ..conftest import load_game
from ..factories import one_by_one, played_against_computer
from ..helpers import kim_owes_after_sam_wrote, pick_action, statements_run
from ..secrecy import hidden_cards, leaks
from ..smtp import Received, SMTPServer
from .test_invitations import path_of

KIM = "kim@example.com"
NOW = datetime(2026, 6, 1, 7, 30, tzinfo=UTC)


def turn_emails(app: Flask, email: str = KIM) -> list[str]:
    """The statuses of the turn emails to ``email``, oldest first."""
    with app.app_context():
        return list(
            db.session.scalars(
                select(OutboxMessage.status)
                .where(OutboxMessage.recipient == email, OutboxMessage.kind == "turn")
                .order_by(OutboxMessage.id)
            )
        )


HOSTILE = '<b>bold</b> & "quoted"'


def block(text: str, heading: str, mark: str) -> list[str]:
    """The lines starting with ``mark`` right after the line ``heading`` in ``text``."""
    lines = text.splitlines()
    after = lines[lines.index(heading) + 1 :]
    return list(itertools.takewhile(lambda line: line.startswith(mark), after))


def until_kim_owes_a_new_move(app: Flask, client: FlaskClient, game: dict, seed: int) -> None:
    """Play random moves until a turn email to Kim is queued."""
    with app.app_context():
        start = len(turn_emails(app))
    for _ in itertools.islice(one_by_one(app, game["id"], seed), 60):
        if len(turn_emails(app)) > start:
            return
    raise AssertionError("Kim was never sent a turn email")


@pytest.mark.parametrize(
    ("policy", "present", "status"),
    [
        ("every_move", True, "sent"),
        ("when_away", False, "sent"),
        ("when_away", True, "queued"),  # held while the page is open
        ("digest", False, "skipped"),
        ("reminders", False, "skipped"),
    ],
)
def test_the_outbox_honours_the_turn_email_policy(
    app: Flask,
    client: FlaskClient,
    make_game,
    deliver: Callable[[], int],
    policy: str,
    present: bool,
    status: str,
) -> None:
    game = make_game(seed=11)
    deliver()
    with app.app_context(), transaction():
        homes.set_email_policy(KIM, policy)
    until_kim_owes_a_new_move(app, client, game, seed=11)
    if present:
        assert client.post(f"/play/{game['keeper']}/seen").status_code == 204
    deliver()
    assert turn_emails(app)[-1] == status


def kims_turn_email_held(app: Flask, client: FlaskClient, make_game, deliver) -> dict:
    """A game in which Kim, "only when away", owes a move whose email waits: her page is open."""
    game = make_game(seed=11)
    deliver()
    with app.app_context(), transaction():
        homes.set_email_policy(KIM, "when_away")
    until_kim_owes_a_new_move(app, client, game, seed=11)
    assert client.post(f"/play/{game['keeper']}/seen").status_code == 204
    deliver()
    assert turn_emails(app)[-1] == "queued"
    return game


def test_a_turn_email_held_for_an_open_page_goes_once_the_page_is_left(
    app: Flask, client: FlaskClient, make_game, deliver: Callable[[], int], smtp_server
) -> None:
    """Kim moved and closed the page before Sam answered: she hears of it once her page has
    been quiet for a while, and not before."""
    kims_turn_email_held(app, client, make_game, deliver)
    received = len(smtp_server.handler.to(KIM))
    with time_machine.travel(datetime.now(UTC) + timedelta(minutes=4)):
        deliver()
    assert turn_emails(app)[-1] == "queued"
    with time_machine.travel(datetime.now(UTC) + timedelta(minutes=6)):
        deliver()
    assert turn_emails(app)[-1] == "sent"
    assert len(smtp_server.handler.to(KIM)) == received + 1


def test_a_turn_email_held_for_an_open_page_is_withdrawn_by_the_move(
    app: Flask, client: FlaskClient, make_game, deliver: Callable[[], int]
) -> None:
    """Kim, at her page, makes the move: the email that waited for her to leave never goes."""
    game = kims_turn_email_held(app, client, make_game, deliver)
    held = len(turn_emails(app)) - 1
    for mover, _, _ in one_by_one(app, game["id"], 11):
        if mover == "keeper":
            break
    assert turn_emails(app)[held] == "skipped"  # by the move itself, before it fell due
    with app.app_context():
        withdrawn = db.session.scalars(
            select(OutboxMessage.last_error)
            .where(OutboxMessage.recipient == KIM, OutboxMessage.kind == "turn")
            .order_by(OutboxMessage.id)
        ).all()[held]
    assert withdrawn == "skipped: the player moved before it went"
    with time_machine.travel(datetime.now(UTC) + timedelta(minutes=6)):
        deliver()
    assert turn_emails(app)[held] == "skipped"


def test_a_page_open_long_ago_is_away(
    app: Flask, client: FlaskClient, make_game, deliver: Callable[[], int]
) -> None:
    game = make_game(seed=11)
    with app.app_context(), transaction():
        homes.set_email_policy(KIM, "when_away")
    with time_machine.travel(datetime.now(UTC) - timedelta(minutes=6)):
        assert client.post(f"/play/{game['keeper']}/seen").status_code == 204
    until_kim_owes_a_new_move(app, client, game, seed=11)
    deliver()
    assert turn_emails(app)[-1] == "sent"


def test_reminders_still_go_out_with_reminders_only(
    app: Flask, make_game, deliver: Callable[[], int], smtp_server: SMTPServer
) -> None:
    game = make_game(seed=12, days_per_move=3)
    with app.app_context(), transaction():
        homes.set_email_policy(KIM, "reminders")
        homes.set_email_policy("sam@example.com", "reminders")
    deliver()
    with app.app_context():
        deadline = db.session.get_one(Game, game["id"]).deadline
        assert deadline is not None
        assert deadlines.sweep(deadline - timedelta(hours=2)).reminded == [game["id"]]
    deliver()
    due = [m.envelope_to for m in smtp_server.received if "due soon" in str(m.message["Subject"])]
    assert sorted(due) == [[KIM], ["sam@example.com"]]


def test_a_reminder_tells_what_the_opponent_did_and_wrote(
    app: Flask,
    client: FlaskClient,
    make_game,
    deliver: Callable[[], int],
    smtp_server: SMTPServer,
) -> None:
    """With reminders only, the reminder is the one email Kim gets of a move she owes: it
    says what the turn email would of Sam's moves and notes since her last move."""
    game = make_game(seed=21, days_per_move=3)
    with app.app_context(), transaction():
        homes.set_email_policy(KIM, "reminders")
    kim_owes_after_sam_wrote(client, game, random.Random(21), ["Good luck!", HOSTILE])
    deliver()
    assert set(turn_emails(app)) == {"skipped"}
    with app.app_context():
        kim = db.session.get_one(Game, game["id"]).player("keeper")
        expected = [f"- {sentence}" for sentence in news(player_view(kim))]
        deadline = kim.game.deadline
        assert expected and deadline is not None
        assert deadlines.sweep(deadline - timedelta(hours=2)).reminded == [game["id"]]
    deliver()
    (reminder,) = [m for m in smtp_server.handler.to(KIM) if "due soon" in m.text + m.html]
    tells_what_sam_did(app, game, reminder, expected)


def tells_what_sam_did(
    app: Flask, game: dict[str, Any], email: Received, news: list[str]
) -> list[str]:
    """Whether Kim's ``email`` gives ``news`` since her last move and quotes Sam's notes (his
    hostile one escaped in the HTML part), and no card Kim may not see: the notes quoted."""
    assert block(email.text, "Since your last move:", "- ") == news
    notes = block(email.text, "Sam wrote:", "“")
    assert f"“{HOSTILE}”" in notes
    assert "Since your last move:" in email.html and "Sam wrote:" in email.html
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; &#34;quoted&#34;" in email.html
    assert "<b>bold" not in email.html
    state = load_game(app, game["id"]).state
    body = email.text + email.html
    assert not leaks(body, hidden_cards(state, "keeper"), (game["keeper"], game["shadow"]))
    return notes


def test_the_daily_digest(
    app: Flask,
    client: FlaskClient,
    make_game,
    deliver: Callable[[], int],
    smtp_server: SMTPServer,
) -> None:
    with time_machine.travel(NOW, tick=False):
        made = [make_game(seed=n, days_per_move=3) for n in (21, 22)]
        with app.app_context(), transaction():
            homes.set_email_policy(KIM, "digest", digest_hour=8)
        deliver()
        smtp_server.received.clear()
        with app.app_context():
            assert deadlines.sweep(NOW).digests == []  # not yet 08:00
    for moment in (NOW.replace(hour=8, minute=5), NOW.replace(hour=9)):
        with time_machine.travel(moment, tick=False), app.app_context():
            expected = [KIM] if moment.hour == 8 else []
            assert deadlines.sweep(moment).digests == expected  # once a day
    deliver()
    (digest,) = smtp_server.handler.to(KIM)
    assert str(digest.message["Subject"]) == "Split Mind: 2 moves wait for you"
    for game in made:
        assert f"/play/{game['keeper']}" in digest.text
        assert f"Game {game['id']}: you are the Keeper against Sam." in digest.text
    with app.app_context():
        assert [path_of(link) for link in digest.links("/me/")] == [f"/me/{home_token(KIM)}"]
    assert digest.message["List-Unsubscribe"]
    # The next day, again; not to an address that owes nothing.
    with app.app_context(), transaction():
        for player in db.session.scalars(select(Player).where(Player.email == KIM)):
            player.game.status = "finished"
    with time_machine.travel(NOW + timedelta(days=1, hours=1), tick=False), app.app_context():
        assert deadlines.sweep().digests == []


def kims_digest(app: Flask, deliver: Callable[[], int], smtp_server: SMTPServer) -> Received:
    """Kim asks for the digest at 8 and gets it at 08:05 on NOW's day: the email sent."""
    with time_machine.travel(NOW.replace(hour=8, minute=5), tick=False):
        with app.app_context():
            with transaction():
                homes.set_email_policy(KIM, "digest", digest_hour=8)
            assert deadlines.sweep().digests == [KIM]
        deliver()
    (digest,) = [m for m in smtp_server.handler.to(KIM) if "wait" in str(m.message["Subject"])]
    return digest


def test_the_digest_lists_the_soonest_due_first(
    app: Flask, make_game, deliver: Callable[[], int], smtp_server: SMTPServer
) -> None:
    """Each game of a digest is a move owed: the one due first comes first, one without a
    deadline last, whatever order the games were made in."""
    with time_machine.travel(NOW, tick=False):
        made = [make_game(seed=n, days_per_move=days) for n, days in ((21, 0), (22, 9), (23, 2))]
        deliver()
    digest = kims_digest(app, deliver, smtp_server)
    listed = [int(n) for n in re.findall(r"Game (\d+): you are", digest.text)]
    assert listed == [made[2]["id"], made[1]["id"], made[0]["id"]]


@pytest.fixture
def sam_wrote(client: FlaskClient, make_game) -> dict[str, Any]:
    """A game of three days a move, at NOW: Kim owes a move after Sam's exchange, a trick
    and two notes, one of them hostile."""
    with time_machine.travel(NOW, tick=False):
        game = make_game(seed=21, days_per_move=3)
        kim_owes_after_sam_wrote(client, game, random.Random(21), ["Good luck!", HOSTILE])
    return game


@pytest.mark.both_backends
def test_the_digest_tells_what_the_opponent_did_and_wrote(
    app: Flask, sam_wrote: dict[str, Any], deliver: Callable[[], int], smtp_server: SMTPServer
) -> None:
    """After Sam's exchange, a trick and Sam's notes, Kim's digest says what her turn email
    said of them (the email it stands for), the notes escaped in its HTML part, and no card
    Kim may not see."""
    game = sam_wrote
    with time_machine.travel(NOW, tick=False):
        deliver()
    turn = smtp_server.handler.to(KIM)[-1]
    news = block(turn.text, "Since your last move:", "- ")
    notes = block(turn.text, "Sam wrote:", "“")
    assert news and f"“{HOSTILE}”" in notes
    digest = kims_digest(app, deliver, smtp_server)
    assert tells_what_sam_did(app, game, digest, news) == notes


def test_a_digest_quotes_no_note_once_notes_are_off(
    app: Flask,
    client: FlaskClient,
    sam_wrote: dict[str, Any],
    deliver: Callable[[], int],
    smtp_server: SMTPServer,
) -> None:
    with time_machine.travel(NOW, tick=False):
        assert client.post(f"/play/{sam_wrote['shadow']}/notes-off").status_code == 303
        deliver()
    digest = kims_digest(app, deliver, smtp_server)
    assert "Since your last move:" in digest.text and "Since your last move:" in digest.html
    for part in (digest.text, digest.html):
        assert "wrote:" not in part and "Good luck" not in part and "bold" not in part


def test_a_digest_of_a_game_against_the_computer_quotes_no_note(
    app: Flask, client: FlaskClient, deliver: Callable[[], int], smtp_server: SMTPServer
) -> None:
    """The computer writes no note; Kim's own notes to it are not quoted back to her."""
    with time_machine.travel(NOW, tick=False):
        with app.app_context(), transaction():
            computer = Seating.the_computer("easy")
            game = games.create_game(Seating(KIM, "Kim"), computer, seed=21, days_per_move=3)
            game_id, token = game.id, token_for(game.player("keeper"))
        view = client.get(f"/api/play/{token}").get_json()
        body = {"version": view["version"], **pick_action(view, random.Random(21))}
        response = client.post(f"/api/play/{token}", json={**body, "note": "Hello, machine"})
        assert response.status_code == 200
        played_against_computer(
            app, game_id, 21, until=lambda view: bool(view["history"]) and view["your_turn"]
        )
        deliver()
    digest = kims_digest(app, deliver, smtp_server)
    assert "Since your last move:" in digest.text and "Since your last move:" in digest.html
    for part in (digest.text, digest.html):
        assert "wrote:" not in part and "machine" not in part


@pytest.mark.both_backends
def test_a_digest_reads_its_games_together_and_each_games_notes_alone(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """Its games, their players and return matches are read together: each game more costs
    only the reads of its notes (two statements), never its game, players or match."""
    sam = Seating("sam@example.com", "Sam")
    with time_machine.travel(NOW, tick=False):
        first = make_game(seed=21, days_per_move=3)
        kim_owes_after_sam_wrote(client, first, random.Random(21), ["Good luck!"])
        with app.app_context(), transaction():
            games.create_match(Seating(KIM, "Kim"), sam, seed=25, days_per_move=3)
        two = statements_to_write_a_digest(app, games_listed=2)
        for seed in (22, 23):
            game = make_game(seed=seed, days_per_move=3)
            kim_owes_after_sam_wrote(client, game, random.Random(seed), ["Hi", "Well played"])
        with app.app_context(), transaction():
            computer = Seating.the_computer("easy")
            games.create_game(Seating(KIM, "Kim"), computer, seed=24, days_per_move=3)
            games.create_match(Seating(KIM, "Kim"), sam, seed=26, days_per_move=3)
        assert statements_to_write_a_digest(app, games_listed=6) <= two + 2 * 4


def statements_to_write_a_digest(app: Flask, games_listed: int) -> int:
    """How many SQL statements writing Kim's digest runs, from a fresh session."""
    with app.app_context():
        with transaction():
            players = db.session.scalars(
                select(Player).where(Player.email == KIM).order_by(Player.id)
            ).all()
            notify.digest(KIM, [p for p in players if notify.in_digest(p)], None)
        message = db.session.scalars(
            select(OutboxMessage)
            .where(OutboxMessage.kind == "digest")
            .order_by(OutboxMessage.id.desc())
        ).first()
        assert message is not None
        db.session.expunge_all()
        with statements_run(app) as statements:
            email = notify.write_digest(message)
        assert email is not None and email.text.count("/play/") == games_listed
        return len(statements)


DAY = timedelta(days=1)


def digests_at(
    app: Flask, make_game, since: datetime, hour: int, zone: str, moments: list[datetime]
) -> list[list[str]]:
    """Kim, owing a move since ``since``, asks for the digest at ``hour`` of ``zone``: the
    addresses each sweep at ``moments`` sends a digest to."""
    with time_machine.travel(since, tick=False):
        make_game(seed=21)
        with app.app_context(), transaction():
            homes.set_time_zone(KIM, zone)
            homes.set_email_policy(KIM, "digest", digest_hour=hour)
    sent = []
    for moment in moments:
        with time_machine.travel(moment, tick=False), app.app_context():
            sent.append(deadlines.sweep(moment).digests)
    return sent


def test_the_digest_hour_is_the_address_s_own(app: Flask, make_game) -> None:
    """8 o'clock in New York (UTC-4 in June) is 12:00 UTC: the digest waits for it, once."""
    hours = [NOW.replace(hour=hour, minute=5) for hour in (8, 11, 12, 13, 23)]
    # After midnight UTC it is still the same day in New York: no second digest.
    moments = [*hours, NOW + timedelta(days=1, hours=-5)]
    sent = digests_at(app, make_game, NOW, 8, "America/New_York", moments)
    assert sent == [[], [], [KIM], [], [], []]


def test_a_later_hour_chosen_after_the_days_digest_sends_no_second(
    app: Flask, make_game, deliver: Callable[[], int]
) -> None:
    """Kim's digest of 8 o'clock in New York (12:00 UTC) went; Kim then asks for it at 18
    (22:00 UTC): it comes at 18 from the next day on, not a second time that day. An hour
    chosen before the day's digest went is that day's."""
    change = partial(homes.set_email_policy, KIM, "digest", digest_hour=18)
    assert changed_after_the_days_digest(app, make_game, deliver, change, 22) == [[], [KIM]]
    # The next day, before 18: an earlier hour, already past, brings that day's at once.
    with time_machine.travel(NOW.replace(hour=13) + 2 * DAY, tick=False), app.app_context():
        with transaction():
            homes.set_email_policy(KIM, "digest", digest_hour=8)
        assert deadlines.sweep().digests == [KIM]


def test_a_zone_chosen_after_the_days_digest_sends_no_second(
    app: Flask, make_game, deliver: Callable[[], int]
) -> None:
    """Kim's digest of 8 o'clock in New York (12:00 UTC) went; Kim then moves to Los Angeles,
    where 8 o'clock is 15:00 UTC the same day: the next comes there the next day."""
    change = partial(homes.set_time_zone, KIM, "America/Los_Angeles")
    assert changed_after_the_days_digest(app, make_game, deliver, change, 15) == [[], [KIM]]


def changed_after_the_days_digest(
    app: Flask, make_game, deliver: Callable[[], int], change: Callable[[], object], hour: int
) -> list[list[str]]:
    """Kim's digest of 8 o'clock in New York (12:00 UTC) goes; at 13:00 UTC ``change`` is
    made; the digests the sweeps send at ``hour`` UTC that day and the next."""
    moments = [NOW.replace(hour=12, minute=5)]
    assert digests_at(app, make_game, NOW, 8, "America/New_York", moments) == [[KIM]]
    deliver()
    with time_machine.travel(NOW.replace(hour=13), tick=False), app.app_context(), transaction():
        change()
    sent = []
    for moment in (NOW.replace(hour=hour, minute=5), NOW.replace(hour=hour, minute=5) + DAY):
        with time_machine.travel(moment, tick=False), app.app_context():
            sent.append(deadlines.sweep(moment).digests)
            deliver()
    return sent


def test_one_digest_on_the_night_the_clocks_go_back(app: Flask, make_game) -> None:
    """1 o'clock comes twice in New York on 1 November 2026 (05:00 and 06:00 UTC)."""
    night = datetime(2026, 11, 1, 4, 30, tzinfo=UTC)
    moments = [night.replace(hour=hour, minute=5) for hour in (5, 6, 7)]
    assert digests_at(app, make_game, night, 1, "America/New_York", moments) == [[KIM], [], []]


def test_one_digest_on_the_day_the_clocks_jump_past_its_hour(app: Flask, make_game) -> None:
    """On 27 September 2026 the Chatham Islands' clocks jump from 02:45 to 03:45 (14:00 UTC on
    the 26th): 3 o'clock never comes, and its digest goes once, at the jump."""
    eve = datetime(2026, 9, 26, 13, 0, tzinfo=UTC)
    moments = [eve.replace(minute=55), eve.replace(hour=14), eve.replace(hour=14, minute=15)]
    moments.append(eve.replace(hour=15))
    assert digests_at(app, make_game, eve, 3, "Pacific/Chatham", moments) == [[], [KIM], [], []]


def test_a_digest_at_a_midnight_the_clocks_skip_still_goes_that_day(
    app: Flask, make_game, deliver: Callable[[], int]
) -> None:
    """Santiago's clocks jump from midnight to 1 o'clock on 6 September 2026 (04:00 UTC). Kim
    asks at 23:30 the evening before for the digest at 0 o'clock and gets that day's at once;
    the 6th has its own, at the jump, though its midnight never comes."""
    eve = datetime(2026, 9, 6, 3, 30, tzinfo=UTC)
    sent = digests_at(app, make_game, eve, 0, "America/Santiago", [eve.replace(minute=35)])
    for moment in (eve.replace(hour=4, minute=5), eve.replace(hour=12)):
        deliver()
        with time_machine.travel(moment, tick=False), app.app_context():
            sent.append(deadlines.sweep(moment).digests)
    assert sent == [[KIM], [KIM], []]


def test_a_zone_learnt_later_keeps_the_moment_of_the_hour_chosen(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """Chosen as 8 while the page said UTC; the move page then reports New York (UTC-4 in
    June): the digest still goes at 08:00 UTC, which is 4 there."""
    with time_machine.travel(NOW, tick=False):
        game = make_game(seed=21)
        with app.app_context(), transaction():
            homes.set_email_policy(KIM, "digest", digest_hour=8)
        zone = {"zone": "America/New_York"}
        assert client.post(f"/play/{game['keeper']}/time-zone", data=zone).status_code == 204
    with app.app_context():
        settings = db.session.get_one(AddressSettings, KIM)
        assert (settings.time_zone, settings.digest_hour) == ("America/New_York", 4)


def test_a_half_hour_zone_learnt_after_the_days_digest_sends_no_second(
    app: Flask, client: FlaskClient, make_game, deliver: Callable[[], int]
) -> None:
    """8 UTC is 13:30 in Kolkata, read as 14 (08:30 UTC): the digest of 08:00 UTC served the
    day, and the next goes the next day at 08:30 UTC."""
    with time_machine.travel(NOW.replace(hour=7), tick=False):
        game = make_game(seed=21)
        with app.app_context(), transaction():
            homes.set_email_policy(KIM, "digest", digest_hour=8)
    sent = []
    for moment in (NOW.replace(hour=8, minute=5), NOW.replace(hour=9), NOW.replace(hour=12)):
        with time_machine.travel(moment, tick=False), app.app_context():
            if moment.hour == 9:
                zone = {"zone": "Asia/Kolkata"}
                assert (
                    client.post(f"/play/{game['keeper']}/time-zone", data=zone).status_code == 204
                )
            sent.append(deadlines.sweep(moment).digests)
            deliver()
    next_day = NOW.replace(hour=8, minute=35) + timedelta(days=1)
    with time_machine.travel(next_day, tick=False), app.app_context():
        sent.append(deadlines.sweep(next_day).digests)
    assert sent == [[KIM], [], [], [KIM]]


def test_a_digest_queued_before_a_stop_is_not_sent(
    app: Flask, make_game, deliver: Callable[[], int]
) -> None:
    with time_machine.travel(NOW.replace(hour=8), tick=False):
        make_game(seed=21)
        deliver()
        with app.app_context():
            with transaction():
                homes.set_email_policy(KIM, "digest", digest_hour=8)
            assert deadlines.sweep().digests == [KIM]
            with transaction():
                homes.stop_all_emails(KIM)
        deliver()
        with app.app_context():
            status = db.session.scalars(
                select(OutboxMessage.status).where(OutboxMessage.kind == "digest")
            ).one()
            assert status == "skipped"


def queue_kims_digest(
    app: Flask, make_game, deliver: Callable[[], int], smtp_server: SMTPServer
) -> None:
    """A game of seven days a move, the emails of its start sent; Kim asks for the digest at
    8, and the sweep of 08:00 on NOW's day (the caller's moment) queues it, not yet sent."""
    make_game(seed=21, days_per_move=7)
    deliver()
    smtp_server.received.clear()
    with app.app_context():
        with transaction():
            homes.set_email_policy(KIM, "digest", digest_hour=8)
        assert deadlines.sweep().digests == [KIM]


def test_a_digest_not_yet_sent_is_not_joined_by_another(
    app: Flask, make_game, deliver: Callable[[], int], smtp_server: SMTPServer
) -> None:
    """The mail server down for days, the digests do not pile up: one waits, written when
    it goes, with the news of that moment."""
    with time_machine.travel(NOW.replace(hour=8), tick=False):
        queue_kims_digest(app, make_game, deliver, smtp_server)
    for days in (1, 2):
        later = NOW.replace(hour=8) + timedelta(days=days)
        with time_machine.travel(later, tick=False), app.app_context():
            assert deadlines.sweep().digests == []
    deliver()
    assert len(smtp_server.handler.to(KIM)) == 1
    later = NOW.replace(hour=8) + timedelta(days=3)
    with time_machine.travel(later, tick=False), app.app_context():
        assert deadlines.sweep().digests == [KIM]  # the day after one went


def move_until(client: FlaskClient, tokens: dict[str, Any], kim_owes: bool) -> None:
    """Random moves, Kim's while she owes one and Sam's while she does not, until Kim owes one
    (``kim_owes``) or none."""
    rng = random.Random(5)
    for _ in range(40):
        view = client.get(f"/api/play/{tokens['keeper']}").get_json()
        if view["your_turn"] == kim_owes:
            return
        seat = "keeper" if view["your_turn"] else "shadow"
        view = client.get(f"/api/play/{tokens[seat]}").get_json()
        body = {"version": view["version"], **pick_action(view, rng)}
        assert client.post(f"/api/play/{tokens[seat]}", json=body).status_code == 200
    raise AssertionError("the game never came where it was wanted")


def test_a_digest_that_waited_lists_the_moves_owed_when_it_goes(
    app: Flask,
    client: FlaskClient,
    make_game,
    deliver: Callable[[], int],
    smtp_server: SMTPServer,
) -> None:
    """The mail server down for a day, the digest that waited stands for the one the next
    morning does not queue: it lists the move Kim came to owe meanwhile too, which no turn
    email told her of."""
    with time_machine.travel(NOW.replace(hour=8), tick=False):
        other = make_game(seed=22, days_per_move=7)
        move_until(client, other, kim_owes=False)  # Kim chose her half of the exchange
        queue_kims_digest(app, make_game, deliver, smtp_server)
    with time_machine.travel(NOW.replace(hour=12), tick=False):
        move_until(client, other, kim_owes=True)
    next_day = NOW.replace(hour=8) + timedelta(days=1)
    with time_machine.travel(next_day, tick=False):
        with app.app_context():
            assert deadlines.sweep().digests == []  # the one waiting stands for it
        deliver()
    (digest,) = [m for m in smtp_server.handler.to(KIM) if "wait" in str(m.message["Subject"])]
    assert str(digest.message["Subject"]) == "Split Mind: 2 moves wait for you"
    assert f"/play/{other['keeper']}" in digest.text


def test_a_digest_is_written_in_the_language_chosen_by_the_time_it_goes(
    app: Flask, make_game, deliver: Callable[[], int], smtp_server: SMTPServer
) -> None:
    with time_machine.travel(NOW.replace(hour=8), tick=False):
        queue_kims_digest(app, make_game, deliver, smtp_server)  # in English
        with app.app_context(), transaction():
            homes.set_language(KIM, "fr")  # the mail server down meanwhile
        deliver()
    (digest,) = smtp_server.handler.to(KIM)
    assert str(digest.message["Subject"]).startswith("Split Mind\u00a0: 1 coup vous attend")


def test_the_opponent_reads_of_a_vacation(
    app: Flask,
    client: FlaskClient,
    make_game,
    deliver: Callable[[], int],
    smtp_server: SMTPServer,
) -> None:
    game = make_game(seed=11)
    with app.app_context(), transaction():
        homes.take_vacation(KIM, 3)
    deliver()
    smtp_server.received.clear()
    for _ in itertools.islice(one_by_one(app, game["id"], 3), 40):
        deliver()
        if smtp_server.handler.to("sam@example.com"):
            break
    to_sam = smtp_server.handler.to("sam@example.com")
    assert to_sam and all("Kim is on vacation until" in m.text for m in to_sam)
    assert all("on vacation" not in m.text for m in smtp_server.handler.to(KIM))


def test_a_vacation_is_not_told_once_the_game_is_over(
    app: Flask,
    client: FlaskClient,
    make_game,
    deliver: Callable[[], int],
    smtp_server: SMTPServer,
) -> None:
    """A closed game has no deadline for a vacation to hold: its last email and its page say
    nothing of one, where the emails of the game in play did."""
    game = make_game(seed=11)
    with app.app_context(), transaction():
        homes.take_vacation(KIM, 3)
    deliver()
    for _ in one_by_one(app, game["id"], 3):
        deliver()
    to_sam = smtp_server.handler.to("sam@example.com")
    during, last = to_sam[:-1], to_sam[-1]
    assert "game over" in last.message["Subject"], last.message["Subject"]
    assert any(
        "Kim is on vacation until" in m.text
        and "their deadlines are suspended until then." in m.text
        for m in during
    )
    assert "on vacation" not in last.text
    assert "on vacation" not in client.get(f"/play/{game['shadow']}").get_data(as_text=True)


NO_MOVE_BY_REPLY = "Replying to this email makes no move: play each game from its link."


@pytest.mark.parametrize("reply_address", [None, "play@splitmind.test"])
def test_a_digest_says_a_reply_to_it_makes_no_move(
    app: Flask,
    sam_wrote: dict[str, Any],
    deliver: Callable[[], int],
    smtp_server: SMTPServer,
    reply_address: str | None,
) -> None:
    """The digest stands for turn emails, which a player may answer with a move when replies
    are read; the digest has no reply address of a game (it may list several), so a move
    written in a reply to it would go to the service's own address and be made nowhere.
    The digest says so, while replies are read at all."""
    app.config["REPLY_ADDRESS"] = reply_address
    with time_machine.travel(NOW, tick=False):
        deliver()
    digest = kims_digest(app, deliver, smtp_server)
    assert digest.message["Reply-To"] is None
    said = NO_MOVE_BY_REPLY in digest.text and NO_MOVE_BY_REPLY in digest.html
    assert said == (reply_address is not None)
