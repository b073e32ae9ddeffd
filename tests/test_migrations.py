"""The migrations build exactly the schema the models describe, on both databases, and fill in
the columns they add for the rows already there."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from flask import Flask
from flask_migrate import downgrade, upgrade
from sqlalchemy import inspect, select, text

from service import games, invitations
from service.admin.auth import create_admin
from service.extensions import compared
from service.game_text import effect_text
from service.games import Seating
from service.mail import queue, requeue
from service.mail.compose import Email
from service.mail.worker import beat
from service.models import (
    AddressSettings,
    AdminUser,
    Event,
    Game,
    ImapReaderHeartbeat,
    InboundServerHeartbeat,
    Invitation,
    OutboxMessage,
    Player,
    WorkerHeartbeat,
    db,
)
from service.unit_of_work import transaction

from .helpers import failed_turn_behind_a_newer_one, request_invitation
from .rules.helpers import random_game

# The revision before games had a started_at column.
pytestmark = pytest.mark.both_backends


BEFORE_STARTED_AT = "9095681fc52a"
# The revision before admins had a session key.
BEFORE_SESSION_KEYS = "83d3ce401245"
# The revision before each outbox kind was named as its templates.
BEFORE_KINDS_AS_TEMPLATES = "6060eb26bc82"
# The revision before emails that replace one another shared a key.
BEFORE_REPLACE_KEYS = "121060839a6b"
# The revision whose history entries held the engine's English.
BEFORE_FACTS_ONLY = "644fc92f96ed"
# The revision before the computer could play a seat.
BEFORE_COMPUTER = "6986e22d124a"
# The revision before every address with a seat had a home key.
BEFORE_HOME_KEYS = "5e2b9c4a7d13"
# The revision whose digest hours were UTC.
BEFORE_LOCAL_DIGEST_HOURS = "b745c285fdb3"
# The revision before a rematch's invitation kept the game it follows.
BEFORE_FOLLOWED_GAMES = "b08fb740feba"
# The revision before IMAP reply readers left a heartbeat.
BEFORE_IMAP_HEARTBEATS = "d4b7e1f9a2c6"
# The revision before LMTP (or SMTP) reply servers left a heartbeat.
BEFORE_INBOUND_HEARTBEATS = "2d2315ff65da"


def test_migrated_schema_matches_the_models(app: Flask) -> None:
    with app.app_context(), db.engine.connect() as connection:
        context = MigrationContext.configure(
            connection, opts={"compare_type": True, "include_object": compared}
        )
        assert compare_metadata(context, db.metadata) == []


# Foreign keys whose rows are never looked up by it, nor deleted while the table is large.
UNINDEXED_FOREIGN_KEYS = {("admin_actions", "message_id")}


def test_every_foreign_key_leads_an_index() -> None:
    """A table read by what its rows belong to (a player's emails, a game's invitation) is
    read through an index, not scanned whole: as the migrations build it, the models say."""
    missing = set()
    for table in db.metadata.sorted_tables:
        leading = {index.columns[0].name for index in table.indexes if index.columns}
        leading.add(table.primary_key.columns[0].name)
        for key in table.foreign_key_constraints:
            column = key.columns[0].name
            if column not in leading:
                missing.add((table.name, column))
    assert missing == UNINDEXED_FOREIGN_KEYS


def test_one_head(app: Flask) -> None:
    with app.app_context():
        config = app.extensions["migrate"].migrate.get_config()
    assert len(ScriptDirectory.from_config(config).get_heads()) == 1


def _invite(opponent: str) -> Invitation:
    """Ann asks for a game against ``opponent`` and confirms her address."""
    with transaction():
        invitation = request_invitation(opponent)
        invitations.confirm(invitation)
    return invitation


def test_every_address_playing_or_invited_is_given_a_home_key(app: Flask) -> None:
    keys = select(AddressSettings.email, AddressSettings.home_key)
    with app.app_context():
        with transaction():
            games.create_game(Seating("kim@example.com", "Kim"), Seating("sam@example.com", "Sam"))
        _invite("bob@example.com")
        downgrade(revision=BEFORE_HOME_KEYS)
        # As they were: Kim's row had an empty key, the others had no row.
        db.session.execute(text("UPDATE address_settings SET home_key = NULL"))
        db.session.execute(text("DELETE FROM address_settings WHERE email <> 'kim@example.com'"))
        db.session.commit()
        db.session.remove()
        upgrade()
        after = dict(db.session.execute(keys).all())
    assert sorted(after) == [
        "ann@example.com",
        "bob@example.com",
        "kim@example.com",
        "sam@example.com",
    ]
    assert all(key and len(key) >= 43 for key in after.values())
    assert len(set(after.values())) == 4


def test_digest_hours_chosen_as_utc_keep_their_moment_where_the_address_is(app: Flask) -> None:
    chosen = {"ny@example.com": ("America/New_York", 12), "in@example.com": ("Asia/Kolkata", 8)}
    chosen["none@example.com"] = (None, 8)
    chosen["local@example.com"] = ("localtime", 9)  # the server's zone: no zone of the address
    hours = select(AddressSettings.email, AddressSettings.digest_hour)
    zones = select(AddressSettings.email, AddressSettings.time_zone)
    with app.app_context(), time_machine.travel(datetime(2026, 6, 1, tzinfo=UTC), tick=False):
        downgrade(revision=BEFORE_LOCAL_DIGEST_HOURS)
        for email, (zone, hour) in chosen.items():
            db.session.execute(
                text(
                    "INSERT INTO address_settings (email, email_policy, digest_hour, time_zone,"
                    " vacation_days_used) VALUES (:email, 'digest', :hour, :zone, 0)"
                ),
                {"email": email, "hour": hour, "zone": zone},
            )
        # An address that never chose the digest keeps the default hour where it is.
        db.session.execute(
            text(
                "INSERT INTO address_settings (email, email_policy, digest_hour, time_zone,"
                " vacation_days_used) VALUES ('paris@example.com', 'every_move', 8,"
                " 'Europe/Paris', 0)"
            )
        )
        db.session.commit()
        db.session.remove()
        upgrade()
        after = dict(db.session.execute(hours).all())
        after_zones = dict(db.session.execute(zones).all())
        db.session.remove()
        downgrade(revision=BEFORE_LOCAL_DIGEST_HOURS)
        back = dict(db.session.execute(hours).all())
        db.session.remove()
        upgrade()
    # Noon UTC is 8 in New York in June; 8 UTC is 13:30 in Kolkata, and the hour rounds up.
    assert after == {
        "ny@example.com": 8,
        "in@example.com": 14,
        "none@example.com": 8,
        "local@example.com": 9,
        "paris@example.com": 8,
    }
    assert after_zones["local@example.com"] is None and after_zones["paris@example.com"]
    assert back == {**{email: hour for email, (_, hour) in chosen.items()}, "paris@example.com": 8}


def test_the_rematches_asked_for_are_given_the_game_they_follow(app: Flask) -> None:
    with app.app_context():
        with transaction():
            finished = games.create_game(
                Seating("kim@example.com", "Kim"), Seating("sam@example.com", "Sam")
            )
            games.declare_forfeit(finished.id, "shadow", actor="ada")
            rematch = invitations.propose_rematch(finished.player("keeper"))
            fresh = _invite("bob@example.com")
            ids = {"rematch": rematch.id, "fresh": fresh.id, "followed": finished.id}
        downgrade(revision=BEFORE_FOLLOWED_GAMES)
        upgrade()
        followed = dict(db.session.execute(select(Invitation.id, Invitation.follows_game_id)).all())
    assert (followed[ids["rematch"]], followed[ids["fresh"]]) == (ids["followed"], None)


def test_adding_started_at_fills_it_in_for_games_that_started(app: Flask) -> None:
    with app.app_context():
        with transaction():
            in_play = games.create_game(
                Seating("k1@example.com", "K"), Seating("s1@example.com", "S")
            )
            cancelled = games.create_game(
                Seating("k2@example.com", "K"), Seating("s2@example.com", "S")
            )
            games.cancel_game(cancelled.id, actor="ada")
            waiting = _invite("waiting@example.com")
            declined = _invite("declined@example.com")
            invitations.respond(declined, accept=False)
            withdrawn = _invite("withdrawn@example.com")
            games.cancel_game(withdrawn.game_id, actor="ada")
            accepted = _invite("accepted@example.com")
            invitations.respond(accepted, accept=True)
            ended = _invite("ended@example.com")
            invitations.respond(ended, accept=True)
            games.cancel_game(ended.game_id, actor="ada")
        ids = {
            "in play": in_play.id,
            "cancelled in play": cancelled.id,
            "waiting": waiting.game_id,
            "declined": declined.game_id,
            "withdrawn": withdrawn.game_id,
            "accepted": accepted.game_id,
            "accepted, then cancelled": ended.game_id,
        }
        # Created a day before the opponents accepted, so the two moments differ.
        for game in db.session.scalars(select(Game)):
            game.created_at -= timedelta(days=1)
        db.session.commit()
        created = dict(db.session.execute(select(Game.id, Game.created_at)).all())
        accepted_at = dict(
            db.session.execute(
                select(Event.game_id, Event.created_at).where(Event.kind == "started")
            ).all()
        )
        db.session.remove()
        downgrade(revision=BEFORE_STARTED_AT)
        upgrade()
        started = dict(db.session.execute(select(Game.id, Game.started_at)).all())
    assert {name: started[game_id] for name, game_id in ids.items()} == {
        "in play": created[ids["in play"]],
        "cancelled in play": created[ids["cancelled in play"]],
        "waiting": None,
        "declined": None,
        "withdrawn": None,
        "accepted": accepted_at[ids["accepted"]],
        "accepted, then cancelled": accepted_at[ids["accepted, then cancelled"]],
    }


def test_adding_session_keys_gives_each_admin_a_new_random_one(app: Flask) -> None:
    with app.app_context():
        with transaction():
            for name in ("ada", "grace"):
                create_admin(name, "a long enough password")
        before = set(db.session.scalars(select(AdminUser.session_key)))
        db.session.remove()
        downgrade(revision=BEFORE_SESSION_KEYS)
        upgrade()
        keys = set(db.session.scalars(select(AdminUser.session_key)))
    assert len(keys) == 2 and not keys & before
    assert all(len(key) >= 43 for key in keys)  # 256 bits, as a new account gets


def test_naming_kinds_as_their_templates_renames_the_stored_emails(app: Flask) -> None:
    kinds = ("turn", "game_over", "round_end", "game_ended", "your_games", "link")
    with app.app_context():
        for kind in kinds:
            queue(Email(kind, kind, kind), kind=kind, recipient=f"{kind}@example.com")
        db.session.commit()
        db.session.remove()
        downgrade(revision=BEFORE_KINDS_AS_TEMPLATES)
        stored = select(OutboxMessage.recipient, OutboxMessage.kind)
        before = dict(db.session.execute(stored).all())
        db.session.remove()
        upgrade()
        after = dict(db.session.execute(stored).all())
    assert before == {
        "turn@example.com": "turn",
        "game_over@example.com": "over",
        "round_end@example.com": "round",
        "game_ended@example.com": "ended",
        "your_games@example.com": "links",
        "link@example.com": "link",
    }
    assert after == {f"{kind}@example.com": kind for kind in kinds}


def test_replace_keys_are_given_to_the_turn_emails_already_stored(app: Flask) -> None:
    """A player's newer turn email still replaces the waiting one, and keeps a failed one out."""
    with app.app_context():
        game = games.create_game(Seating("k@example.com", "K"), Seating("s@example.com", "S"))
        shadow = game.player("shadow")
        failed = failed_turn_behind_a_newer_one(shadow)
        db.session.commit()
        shadow_id, failed_id = shadow.id, failed.id
        db.session.remove()
        downgrade(revision=BEFORE_REPLACE_KEYS)
        upgrade()
        keys = db.session.execute(select(OutboxMessage.kind, OutboxMessage.replace_key)).all()
        with pytest.raises(
            ValueError, match="A newer turn email for this player is already queued"
        ):
            requeue(failed_id)
        db.session.rollback()
        shadow = db.session.get(Player, shadow_id)
        queue(Email("newer", "newer", "newer"), kind="turn", recipient=shadow.email, player=shadow)
        db.session.commit()
        waiting = db.session.scalars(
            select(OutboxMessage.subject).where(
                OutboxMessage.kind == "turn", OutboxMessage.status == "queued"
            )
        ).all()
    assert sorted(keys, key=str) == [
        ("invitation", None),
        ("invitation", None),
        ("turn", f"turn:{shadow_id}"),
        ("turn", f"turn:{shadow_id}"),
    ]
    assert waiting == ["newer"]


def test_history_entries_lose_the_engines_english(app: Flask) -> None:
    state = random_game(217)[0]  # a whole game with every effect, and both ends of a Steal
    outcomes = {(entry["effect"], entry["outcome"]) for entry in state["history"]}
    assert {"reset", "swap", "none"} <= {effect for effect, _outcome in outcomes}
    assert {("steal", "took"), ("steal", "nothing")} <= outcomes
    with app.app_context():
        game = games.create_game(Seating("k@example.com", "K"), Seating("s@example.com", "S"))
        game.state = state
        db.session.commit()
        game_id = game.id
        db.session.remove()
        downgrade(revision=BEFORE_FACTS_ONLY)
        # The state alone: the older schema has none of the columns added to games since.
        stored = select(Game.state).where(Game.id == game_id)
        before = db.session.scalar(stored)
        db.session.remove()
        upgrade()
        after = db.session.scalar(stored)
    # A downgrade writes back the English the engine wrote: the words the API still shows,
    # but for a Steal with nothing to take, which it has said otherwise since.
    assert [entry.pop("text") for entry in before["history"]] == [
        engine_english(entry) for entry in state["history"]
    ]
    assert before == state
    assert after == state


def engine_english(entry: dict) -> str:
    """What the engine wrote into a history entry before entries held facts only."""
    if entry["effect"] == "steal" and entry["outcome"] == "nothing":
        loser = "Shadow" if entry["winner"] == "keeper" else "Keeper"
        return f"Steal: {loser} had no trick to take"
    return effect_text(entry)


def test_the_computer_seats_survive_a_downgrade_with_an_address_no_mail_reaches(
    app: Flask,
) -> None:
    with app.app_context():
        with transaction():
            game = games.create_game(
                Seating("kim@example.com", "Kim"), Seating.the_computer("hard")
            )
            people = games.create_game(
                Seating("ann@example.com", "Ann"), Seating("bob@example.com", "Bob")
            )
            game_id, people_id = game.id, people.id
        db.session.remove()
        downgrade(revision=BEFORE_COMPUTER)
        rows = db.session.execute(
            text("SELECT game_id, seat, email FROM players ORDER BY game_id, seat")
        ).all()
        db.session.remove()
        upgrade()
        after = db.session.execute(
            select(Player.game_id, Player.seat, Player.email, Player.computer_level)
        ).all()
    assert sorted(map(tuple, rows)) == [
        (game_id, "keeper", "kim@example.com"),
        (game_id, "shadow", "computer@splitmind.invalid"),
        (people_id, "keeper", "ann@example.com"),
        (people_id, "shadow", "bob@example.com"),
    ]
    assert all(level is None for *_, level in after)


def test_a_machine_without_a_zone_database_forgets_no_stored_time_zone(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the zone files (no tzdata on the host), no name is known to be a time zone:
    the zones stored stay, for when the files are installed, rather than being forgotten."""
    zones = select(AddressSettings.email, AddressSettings.time_zone)
    with app.app_context():
        downgrade(revision=BEFORE_LOCAL_DIGEST_HOURS)
        db.session.execute(
            text(
                "INSERT INTO address_settings (email, email_policy, digest_hour, time_zone,"
                " vacation_days_used) VALUES ('ny@example.com', 'digest', 12,"
                " 'America/New_York', 0)"
            )
        )
        db.session.commit()
        db.session.remove()
        monkeypatch.setattr("zoneinfo.available_timezones", set)
        upgrade()
        after = dict(db.session.execute(zones).all())
    assert after == {"ny@example.com": "America/New_York"}


@pytest.mark.parametrize(
    ("kept", "added", "before"),
    [
        (WorkerHeartbeat, ImapReaderHeartbeat, BEFORE_IMAP_HEARTBEATS),
        (ImapReaderHeartbeat, InboundServerHeartbeat, BEFORE_INBOUND_HEARTBEATS),
    ],
    ids=["imap readers", "inbound servers"],
)
def test_a_readers_heartbeats_come_and_go_alone(
    app: Flask,
    kept: type[WorkerHeartbeat | ImapReaderHeartbeat],
    added: type[ImapReaderHeartbeat | InboundServerHeartbeat],
    before: str,
) -> None:
    """Each kind of process beats in a table of its own: the older kind's rows stay through
    a downgrade, and the newer kind's table starts again empty (its gauge absent until one
    of its processes beats)."""
    kept_table, added_table = kept.__tablename__, added.__tablename__
    with app.app_context():
        beat(kept)
        beat(added)
        db.session.remove()
        downgrade(revision=before)
        tables = inspect(db.engine).get_table_names()
        kept_rows = db.session.execute(text(f"SELECT count(*) FROM {kept_table}")).scalar()
        db.session.remove()
        upgrade()
        added_rows = db.session.scalars(select(added)).all()
    assert added_table not in tables
    assert kept_rows == 1
    assert added_rows == []
