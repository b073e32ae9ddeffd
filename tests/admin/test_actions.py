"""What an admin can do to a game: each action calls the service and lands in the game's log."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape
from typing import Any

import pytest
from sqlalchemy import func, select

from service import games
from service.links import token_for
from service.mail.kinds import written
from service.mail.worker import drain
from service.models import AdminAction, Event, Game, OutboxMessage, Player, db, utcnow
from service.unit_of_work import transaction

from ..factories import one_by_one
from ..helpers import csrf_token, failed_turn_behind_a_newer_one, second_behind_first
from .conftest import ADMIN, shown_deadline, shown_version, submit


def game_page(admin, game_id: int) -> str:
    return admin.get(f"/admin/games/{game_id}").get_data(as_text=True)


def log_rows(html: str) -> list[str]:
    """The rows of the page's log, as text."""
    table = re.search(r'<table class="list log">.*?</table>', html, re.S).group(0)
    rows = re.findall(r"<tr class=\"kind-[a-z]+\">(.*?)</tr>", table, re.S)
    return [" ".join(unescape(re.sub(r"<[^>]+>", " ", row)).split()) for row in rows]


def admin_events(app, game_id: int) -> list[tuple[str, str | None, str | None]]:
    with app.app_context():
        return [
            (event.kind, event.actor, event.note)
            for event in db.session.scalars(
                select(Event).where(Event.game_id == game_id, Event.actor.is_not(None))
            )
        ]


def player_id(app, game_id: int, seat: str) -> int:
    with app.app_context():
        return db.session.get(Game, game_id).player(seat).id


def test_rotating_a_link_kills_the_old_one(app, admin, client, make_game) -> None:
    game = make_game()
    keeper = player_id(app, game["id"], "keeper")
    page = f"/admin/games/{game['id']}"
    response = submit(admin, page, f"{page}/players/{keeper}/rotate", confirm="y")
    assert response.status_code == 303 and response.headers["Location"] == page
    assert client.get(f"/play/{game['keeper']}").status_code == 404
    assert client.get(f"/api/play/{game['keeper']}").status_code == 404
    with app.app_context():
        new_token = token_for(db.session.get(Player, keeper))
    assert new_token != game["keeper"]
    assert client.get(f"/play/{new_token}").status_code == 200
    assert client.get(f"/play/{game['shadow']}").status_code == 200  # the other seat's still works
    html = unescape(game_page(admin, game["id"]))
    assert "The Keeper has a new link; the old one no longer works. Resend it" in html
    assert any("rotated the keeper's link" in row and row.endswith(ADMIN) for row in log_rows(html))
    assert admin_events(app, game["id"]) == [("admin", ADMIN, "rotated the keeper's link")]


def test_resending_a_link_queues_an_email(app, admin, make_game) -> None:
    game = make_game()
    shadow = player_id(app, game["id"], "shadow")
    page = f"/admin/games/{game['id']}"
    assert submit(admin, page, f"{page}/players/{shadow}/resend").status_code == 303
    with app.app_context():
        kinds = db.session.scalars(
            select(OutboxMessage.kind).where(OutboxMessage.player_id == shadow)
        ).all()
    assert kinds.count("link") == 1
    assert admin_events(app, game["id"]) == [("admin", ADMIN, "resent the shadow's link")]
    assert any("resent the shadow's link" in row for row in log_rows(game_page(admin, game["id"])))


def test_a_link_resent_twice_or_rotated_before_it_went_is_one_email(app, admin, make_game) -> None:
    """A second click on "Resend", or a rotation with the link's email still waiting: the
    player gets one email, with the link that works now."""
    game = make_game()
    shadow = player_id(app, game["id"], "shadow")
    page = f"/admin/games/{game['id']}"
    assert submit(admin, page, f"{page}/players/{shadow}/resend").status_code == 303
    assert submit(admin, page, f"{page}/players/{shadow}/resend").status_code == 303
    rotate = f"{page}/players/{shadow}/rotate"
    assert submit(admin, page, rotate, confirm="y", send="y").status_code == 303
    with app.app_context():
        links = db.session.scalars(
            select(OutboxMessage).where(
                OutboxMessage.player_id == shadow, OutboxMessage.kind == "link"
            )
        ).all()
        assert [message.status for message in links] == ["queued"]
        assert token_for(db.session.get(Player, shadow)) in written(links[0]).text
    assert [note for _, _, note in admin_events(app, game["id"])] == [
        "resent the shadow's link",
        "resent the shadow's link",
        "rotated the shadow's link and sent the new one",
    ]


def test_extending_the_deadline(app, admin, make_game) -> None:
    game = make_game()
    with app.app_context():
        before = db.session.get(Game, game["id"]).deadline
    page = f"/admin/games/{game['id']}"
    shown = shown_deadline(admin, game["id"])
    assert submit(admin, page, f"{page}/extend", days="4", deadline=shown).status_code == 303
    with app.app_context():
        after = db.session.get(Game, game["id"]).deadline
    assert after - before == timedelta(days=4)
    shown = shown_deadline(admin, game["id"])
    assert submit(admin, page, f"{page}/extend", days="99", deadline=shown).status_code == 400
    assert submit(admin, page, f"{page}/extend", days="2", deadline="soon").status_code == 303
    assert "Extend a deadline by 1 to 60 days." in game_page(admin, game["id"])
    assert admin_events(app, game["id"]) == [("admin", ADMIN, "extended the deadline by 4 days")]


def test_the_same_extension_sent_twice_extends_once(app, admin, make_game) -> None:
    """A second click, or the form sent again from the browser's history: the deadline it
    was written with is gone, so nothing changes, and the page as it is now says why (409), as
    for the other actions on a game that moved on."""
    game = make_game()
    page = f"/admin/games/{game['id']}"
    shown = shown_deadline(admin, game["id"])
    assert submit(admin, page, f"{page}/extend", days="3", deadline=shown).status_code == 303
    with app.app_context():
        once = db.session.get(Game, game["id"]).deadline
        mail = db.session.scalar(select(func.count()).select_from(OutboxMessage))
    again = submit(admin, page, f"{page}/extend", days="3", deadline=shown)
    assert again.status_code == 409
    assert "The deadline changed since this page was loaded" in again.get_data(as_text=True)
    with app.app_context():
        assert db.session.get(Game, game["id"]).deadline == once
        assert db.session.scalar(select(func.count()).select_from(OutboxMessage)) == mail
    assert admin_events(app, game["id"]) == [("admin", ADMIN, "extended the deadline by 3 days")]


def test_a_game_without_a_deadline_has_none_to_extend(app, admin, make_game) -> None:
    game = make_game(days_per_move=0)
    page = f"/admin/games/{game['id']}"
    html = game_page(admin, game["id"])
    assert "Extend the deadline" not in html and "Cancel the game" in html
    any_deadline = "2026-12-01T00:00:00+00:00"
    refused = submit(admin, page, f"{page}/extend", days="4", deadline=any_deadline)
    assert refused.status_code == 400
    with app.app_context():
        assert db.session.get(Game, game["id"]).deadline is None
    assert "This game has no deadline to extend." in refused.get_data(as_text=True)
    assert admin_events(app, game["id"]) == []


def test_cancelling_needs_a_tick_then_ends_the_game(app, admin, make_game) -> None:
    game = make_game()
    page = f"/admin/games/{game['id']}"
    shown = shown_version(admin, game["id"])
    unticked = submit(admin, page, f"{page}/cancel", version=shown)
    assert unticked.status_code == 400 and "Tick the box" in unescape(unticked.text)
    with app.app_context():
        assert db.session.get(Game, game["id"]).status == "active"
    assert submit(admin, page, f"{page}/cancel", confirm="y", version=shown).status_code == 303
    html = game_page(admin, game["id"])
    with app.app_context():
        assert db.session.get(Game, game["id"]).status == "cancelled"
    assert "Cancel the game" not in html and "Download the replay" in html
    assert any("cancelled the game" in row and row.endswith(ADMIN) for row in log_rows(html))
    # Once over, the service refuses (409) and the page, as it stands, says why.
    assert submit(admin, page, f"{page}/players/1/rotate").status_code == 303
    token = re.search(r'name="csrf_token"[^>]*?value="([^"]+)"', html).group(1)
    refused = admin.post(
        f"{page}/forfeit",
        data={"csrf_token": token, "seat": "keeper", "confirm": "y", "version": shown},
    )
    assert refused.status_code == 409
    assert "This game is cancelled." in unescape(refused.get_data(as_text=True))
    assert "This game is cancelled." not in unescape(game_page(admin, game["id"]))


def test_declaring_a_forfeit(app, admin, make_game) -> None:
    game = make_game()
    page = f"/admin/games/{game['id']}"
    shown = shown_version(admin, game["id"])
    response = submit(admin, page, f"{page}/forfeit", seat="shadow", confirm="y", version=shown)
    assert response.status_code == 303
    with app.app_context():
        stored = db.session.get(Game, game["id"])
        assert (stored.status, stored.winner) == ("finished", "keeper")
    assert admin_events(app, game["id"]) == [("forfeit", ADMIN, "declared a forfeit by the shadow")]
    rows = log_rows(game_page(admin, game["id"]))
    assert any("declared a forfeit by the shadow" in row and row.endswith(ADMIN) for row in rows)


# The forfeit menu, required, on its first choice: no seat.
MENU_ON_NO_SEAT = (
    '<select id="seat" name="seat" required><option value="">choose who forfeits</option>'
)


def test_a_forfeit_is_declared_only_once_the_admin_chooses_who_forfeits(
    app, admin, make_game
) -> None:
    """The menu starts on no seat; sent so, the forfeit is refused and the form comes back as
    it was sent, saying what it lacks; the confirmation names who forfeited and who wins."""
    game = make_game()
    page = f"/admin/games/{game['id']}"
    html = game_page(admin, game["id"])
    assert MENU_ON_NO_SEAT in html
    before = what_an_action_leaves(app, game["id"])
    version = shown_version(admin, game["id"])

    refused = submit(
        admin, page, f"{page}/forfeit", seat="", reason="Gone quiet", confirm="y", version=version
    )

    assert refused.status_code == 400
    html = unescape(refused.get_data(as_text=True))
    assert "Choose who forfeits: nothing was done." in html
    assert 'value="Gone quiet"' in html and 'checked id="forfeit-confirm"' in html
    assert '<option selected value="">choose who forfeits</option>' in html  # still no seat
    unticked = submit(admin, page, f"{page}/forfeit", seat="", version=version)
    assert unticked.status_code == 400
    assert "Choose who forfeits and tick the box to confirm: nothing was done." in unescape(
        unticked.get_data(as_text=True)
    )
    assert what_an_action_leaves(app, game["id"]) == before

    done = submit(
        admin,
        page,
        f"{page}/forfeit",
        seat="keeper",
        reason="Gone quiet",
        confirm="y",
        version=version,
    )
    assert done.status_code == 303
    assert (
        "The game is over by forfeit: the Keeper forfeited and the Shadow wins; "
        "both players are told."
    ) in unescape(game_page(admin, game["id"]))


def what_an_action_leaves(app, game_id: int) -> tuple[object, ...]:
    """What an admin action on the game would change: the game, its log, the audit trail
    and the outbox."""
    with app.app_context():
        game = db.session.get_one(Game, game_id)
        return (
            game.status,
            game.version,
            game.winner,
            db.session.scalar(select(func.count()).where(Event.game_id == game_id)),
            db.session.scalar(select(func.count()).select_from(AdminAction)),
            db.session.scalar(select(func.count()).select_from(OutboxMessage)),
        )


ENDINGS = {
    "cancel": ({"confirm": "y"}, "cancelled"),
    "forfeit": ({"seat": "shadow", "confirm": "y"}, "finished"),
}


@pytest.mark.parametrize("ending", ENDINGS)
def test_ending_a_game_that_moved_on_since_its_page_was_loaded_is_refused(
    app, admin, make_game, ending: str
) -> None:
    """A move made after the admin loaded the page: cancelling or forfeiting the game as it
    was is refused (409) and changes nothing; from the page as it is now, it is done."""
    game = make_game()
    page = f"/admin/games/{game['id']}"
    form, status = ENDINGS[ending]
    seen = shown_version(admin, game["id"])
    next(one_by_one(app, game["id"], seed=3))  # the game moves on
    before = what_an_action_leaves(app, game["id"])

    refused = submit(admin, page, f"{page}/{ending}", version=seen, **form)

    assert refused.status_code == 409
    html = unescape(refused.get_data(as_text=True))
    assert f"The game has moved on (version {int(seen) + 1}, you sent {seen}): nothing was" in html
    assert f'name="version" value="{int(seen) + 1}"' in html  # the page as it is now
    assert 'checked id="cancel-confirm"' not in html and 'checked id="forfeit-confirm"' not in html
    assert what_an_action_leaves(app, game["id"]) == before
    assert admin_events(app, game["id"]) == []

    now = shown_version(admin, game["id"])
    assert submit(admin, page, f"{page}/{ending}", version=now, **form).status_code == 303
    with app.app_context():
        assert db.session.get_one(Game, game["id"]).status == status
    assert [kind for kind, _, _ in admin_events(app, game["id"])] == [
        "admin" if ending == "cancel" else "forfeit"
    ]


def test_ending_a_game_needs_the_version_its_page_showed(app, admin, make_game) -> None:
    """A cancel or forfeit without the version (a form written by no page) changes nothing."""
    game = make_game()
    page = f"/admin/games/{game['id']}"
    before = what_an_action_leaves(app, game["id"])
    for ending, (form, _) in ENDINGS.items():
        assert submit(admin, page, f"{page}/{ending}", **form).status_code == 303
        assert "This form does not say which version of the game it showed" in game_page(
            admin, game["id"]
        )
        assert submit(admin, page, f"{page}/{ending}", version="x", **form).status_code == 303
    assert what_an_action_leaves(app, game["id"]) == before


@pytest.mark.parametrize("link_action", ["resend", "rotate"])
def test_the_links_of_a_game_that_ended_since_its_page_was_loaded_stay_as_they_are(
    app, admin, client, make_game, link_action: str
) -> None:
    """The page offers no link action once a game is over; a form still open from before the
    end is refused (409): no email, no new link, nothing in the log or the audit trail."""
    game = make_game()
    keeper = player_id(app, game["id"], "keeper")
    page = f"/admin/games/{game['id']}"
    assert f"/players/{keeper}/{link_action}" in game_page(admin, game["id"])
    with app.app_context(), transaction():
        games.declare_forfeit(game["id"], "shadow", actor="bob")
    assert f"/players/{keeper}/{link_action}" not in game_page(admin, game["id"])
    before = what_an_action_leaves(app, game["id"])

    form = {"confirm": "y", "send": "y"} if link_action == "rotate" else {}
    refused = submit(admin, page, f"{page}/players/{keeper}/{link_action}", **form)

    assert refused.status_code == 409
    assert (
        "This game is over: its links are neither resent nor replaced "
        "(its players find it on their home page)."
    ) in unescape(refused.get_data(as_text=True))
    assert what_an_action_leaves(app, game["id"]) == before
    assert [actor for _, actor, _ in admin_events(app, game["id"])] == ["bob"]
    assert client.get(f"/play/{game['keeper']}").status_code == 200  # the same link still works


def test_a_player_of_another_game_is_not_found(app, admin, make_game) -> None:
    first, second = make_game(seed=1), make_game(seed=2)
    other = player_id(app, second["id"], "keeper")
    page = f"/admin/games/{first['id']}"
    assert submit(admin, page, f"{page}/players/{other}/rotate").status_code == 404
    assert submit(admin, page, "/admin/games/999/cancel", confirm="y").status_code == 404
    assert admin.get("/admin/games/999").status_code == 404


def test_requeueing_a_failed_message(app, admin, make_game) -> None:
    make_game()
    with app.app_context():
        message = db.session.scalars(select(OutboxMessage)).first()
        message.status, message.attempts, message.last_error = "failed", 5, "550 no such user"
        db.session.commit()
        message_id = message.id
    page = f"/admin/mail/{message_id}"
    html = admin.get(page).get_data(as_text=True)
    assert "550 no such user" in html and "Queue it again" in html
    # A permanent refusal is sent again only once the admin confirms it.
    assert 'id="requeue-confirm"' in html
    assert submit(admin, page, f"{page}/requeue").status_code == 303
    assert "tick the box to confirm" in admin.get(page).get_data(as_text=True)
    with app.app_context():
        assert db.session.get(OutboxMessage, message_id).status == "failed"
    assert submit(admin, page, f"{page}/requeue", confirm="y").status_code == 303
    with app.app_context():
        message = db.session.get(OutboxMessage, message_id)
        assert (message.status, message.attempts) == ("queued", 0)
    assert "The message is queued again." in admin.get(page).get_data(as_text=True)
    submit(admin, "/admin/mail", f"{page}/requeue", confirm="y")
    assert "is queued, not failed" in admin.get(page).get_data(as_text=True)
    assert submit(admin, "/admin/mail", "/admin/mail/999/requeue").status_code == 404


def test_withdrawing_a_queued_message(app, admin, make_game) -> None:
    make_game()
    with app.app_context():
        message_id, kept = db.session.scalars(select(OutboxMessage.id).order_by(OutboxMessage.id))
    page = f"/admin/mail/{message_id}"
    assert 'id="withdraw-confirm"' in admin.get(page).get_data(as_text=True)
    # Nothing happens until the admin ticks that they mean it.
    assert submit(admin, page, f"{page}/withdraw").status_code == 303
    assert "Tick the box to confirm" in admin.get(page).get_data(as_text=True)
    assert submit(admin, page, f"{page}/withdraw", confirm="y").status_code == 303
    html = admin.get(page).get_data(as_text=True)
    assert "The message is withdrawn: it will not be sent." in html
    assert "skipped: withdrawn by an admin (ada)" in html and 'id="withdraw-confirm"' not in html
    with app.app_context():
        assert db.session.get_one(OutboxMessage, message_id).status == "skipped"
        (entry,) = db.session.scalars(select(AdminAction).where(AdminAction.action == "withdraw"))
        assert (entry.admin, entry.message_id) == ("ada", message_id)
        assert drain() == 1  # the other invitation alone
        statuses = [db.session.get_one(OutboxMessage, n).status for n in (message_id, kept)]
        assert statuses == ["skipped", "sent"]
    submit(admin, "/admin/mail", f"{page}/withdraw", confirm="y")
    assert "is skipped, not queued" in admin.get(page).get_data(as_text=True)
    assert submit(admin, "/admin/mail", "/admin/mail/999/withdraw", confirm="y").status_code == 404


def test_trying_a_message_waiting_for_its_next_attempt_now(app, admin, make_game) -> None:
    """After temporary refusals a message waits hours for its next attempt (up to twelve):
    once the cause is mended (the relay's disk full, say), the admin has it tried at the
    worker's next pass, with its attempts kept, rather than withdraw it and lose it."""
    make_game()
    with app.app_context():
        message_id, kept = db.session.scalars(select(OutboxMessage.id).order_by(OutboxMessage.id))
        message = db.session.get_one(OutboxMessage, message_id)
        message.attempts, message.last_error = 4, "452 4.3.1 Insufficient system storage"
        message.next_attempt_at = utcnow() + timedelta(hours=4)
        db.session.commit()
    page = f"/admin/mail/{message_id}"
    assert "Try it now" in admin.get(page).get_data(as_text=True)
    assert "Try it now" not in admin.get(f"/admin/mail/{kept}").get_data(as_text=True)
    assert submit(admin, page, f"{page}/retry").status_code == 303
    html = unescape(admin.get(page).get_data(as_text=True))
    assert "The message is tried again at the worker's next pass." in html
    with app.app_context():
        message = db.session.get_one(OutboxMessage, message_id)
        assert (message.status, message.attempts) == ("queued", 4)
        assert message.next_attempt_at <= utcnow()
        (entry,) = db.session.scalars(select(AdminAction).where(AdminAction.action == "retry"))
        assert (entry.admin, entry.message_id) == ("ada", message_id)
        assert drain() == 2
        statuses = [db.session.get_one(OutboxMessage, n).status for n in (message_id, kept)]
        assert statuses == ["sent", "sent"]
    submit(admin, "/admin/mail", f"{page}/retry")
    assert "is sent, not queued" in admin.get(page).get_data(as_text=True)
    assert submit(admin, "/admin/mail", "/admin/mail/999/retry").status_code == 404


def test_a_failed_turn_email_behind_a_newer_one_is_not_queued_again(app, admin, make_game) -> None:
    game = make_game()
    with app.app_context():
        player = db.session.get(Game, game["id"]).player("shadow")
        failed = failed_turn_behind_a_newer_one(player, "550 no such user")
        db.session.commit()
        message_id = failed.id
    page = f"/admin/mail/{message_id}"
    assert submit(admin, page, f"{page}/requeue", confirm="y").status_code == 303
    assert "A newer turn email for this player is already queued." in admin.get(page).get_data(
        as_text=True
    )
    with app.app_context():
        assert db.session.get(OutboxMessage, message_id).status == "failed"


def test_mail_list_filters(app, admin, make_game) -> None:
    game = make_game(seed=1)
    with app.app_context():
        messages = db.session.scalars(select(OutboxMessage).order_by(OutboxMessage.id)).all()
        messages[0].status = "failed"
        db.session.commit()
        ids = [m.id for m in messages]
        to_sam = [m.id for m in messages if m.recipient == "sam@example.com"]

    def listed(**query: str) -> list[int]:
        html = admin.get("/admin/mail", query_string=query).get_data(as_text=True)
        return [int(n) for n in re.findall(r'<td><a href="/admin/mail/(\d+)">', html)]

    assert listed() == sorted(ids, reverse=True)
    assert listed(status="failed") == [ids[0]]
    assert listed(recipient="Sam@example.com") == sorted(to_sam, reverse=True)
    # From a player, or from a message's address, to that address's mail in one click.
    to_address = '<a href="/admin/mail?recipient=sam@example.com"'
    assert to_address in admin.get("/admin/mail").get_data(as_text=True)
    assert to_address in admin.get(f"/admin/games/{game['id']}").get_data(as_text=True)
    assert admin.get("/admin/mail", query_string={"status": "lost"}).status_code == 400


@pytest.mark.parametrize(
    ("link_action", "fields", "confirmation"),
    [
        ("resend", {}, "The Shadow's link is on its way to sam.new@example.com."),
        (
            "rotate",
            {"confirm": "y", "send": "y"},
            "The Shadow has a new link; the old one no longer works. "
            "It is on its way to sam.new@example.com.",
        ),
    ],
)
def test_a_link_sent_behind_another_admins_correction_names_the_address_it_went_to(
    app, admin, make_game, postgres_database, link_action, fields, confirmation
) -> None:
    """Another admin corrects the Shadow's address while "Resend link" (or "Rotate link")
    waits for the game: the link goes to the corrected address, and the confirmation says
    that one, not the address the page was loaded with."""
    game = make_game()
    shadow = player_id(app, game["id"], "shadow")
    page = f"/admin/games/{game['id']}"
    token = csrf_token(admin.get(page).text)
    answers: list[Any] = []
    errors = second_behind_first(
        app,
        postgres_database,
        lambda: games.correct_address(shadow, "sam.new@example.com", actor="bob"),
        lambda: answers.append(
            admin.post(
                f"{page}/players/{shadow}/{link_action}", data={"csrf_token": token, **fields}
            )
        ),
    )
    assert errors == [] and [answer.status_code for answer in answers] == [303]
    said = unescape(game_page(admin, game["id"]))
    assert confirmation in said
    assert "sam@example.com" not in re.sub(r"corrected the shadow's address from \S+", "", said)
    with app.app_context():
        sent_to = db.session.scalars(
            select(OutboxMessage.recipient).where(
                OutboxMessage.player_id == shadow,
                OutboxMessage.kind == "link",
                OutboxMessage.status == "queued",
            )
        ).all()
    assert sent_to == ["sam.new@example.com"]


def test_a_cancel_sent_unticked_comes_back_with_its_reason(app, admin, make_game) -> None:
    """The reason the players would read, typed but the box left unticked: the form comes
    back as it was sent (400), saying what it lacks, rather than empty."""
    game = make_game()
    page = f"/admin/games/{game['id']}"
    before = what_an_action_leaves(app, game["id"])
    version = shown_version(admin, game["id"])
    reason = "Kim asked us to end it: moving house"
    refused = submit(admin, page, f"{page}/cancel", reason=reason, version=version)
    assert refused.status_code == 400
    html = unescape(refused.get_data(as_text=True))
    assert "Tick the box to confirm that the game is to be cancelled." in html
    assert f'value="{reason}"' in html
    assert what_an_action_leaves(app, game["id"]) == before


def typed_value(html: str, field_id: str) -> str | None:
    """The value the page's input ``field_id`` is filled in with."""
    found = re.search(rf'<input [^>]*\bid="{field_id}"[^>]*>', html)
    assert found is not None, f"no input {field_id}"
    value = re.search(r'\bvalue="([^"]*)"', found.group(0))
    return unescape(value.group(1)) if value else None


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("sam at example", "'sam at example' is not an email address"),
        ("", "Give the corrected address."),
    ],
)
def test_an_address_refused_comes_back_as_it_was_typed(
    app, admin, make_game, typed: str, said: str
) -> None:
    """A corrected address refused: the page comes back (400) saying why, the address as the
    admin typed it in the seat's form (the other seat's form as it was), nothing changed."""
    game = make_game()
    page = f"/admin/games/{game['id']}"
    shadow, keeper = (player_id(app, game["id"], seat) for seat in ("shadow", "keeper"))
    with app.app_context():
        old = db.session.get_one(Player, shadow).email
        keepers = db.session.get_one(Player, keeper).email
    before = what_an_action_leaves(app, game["id"])

    refused = submit(admin, page, f"{page}/players/{shadow}/address", email=typed, shown=old)

    assert refused.status_code == 400
    html = unescape(refused.get_data(as_text=True))
    assert said in html
    assert typed_value(html, f"address-{shadow}") == typed
    assert typed_value(html, f"address-{keeper}") == keepers
    assert what_an_action_leaves(app, game["id"]) == before


@pytest.mark.parametrize("typed", ["99", "0", "three"])
def test_an_extension_refused_comes_back_as_it_was_typed(app, admin, make_game, typed) -> None:
    """A number of days out of range, or no number: the page comes back (400) saying so,
    the days as typed, the deadline unchanged."""
    game = make_game()
    page = f"/admin/games/{game['id']}"
    before = what_an_action_leaves(app, game["id"])
    shown = shown_deadline(admin, game["id"])

    refused = submit(admin, page, f"{page}/extend", days=typed, deadline=shown)

    assert refused.status_code == 400
    html = unescape(refused.get_data(as_text=True))
    assert "Extend a deadline by 1 to 60 days." in html
    assert typed_value(html, "days") == typed
    assert shown_deadline(admin, game["id"]) == shown
    assert what_an_action_leaves(app, game["id"]) == before


@pytest.mark.parametrize("ending", ENDINGS)
def test_an_ending_with_too_long_a_reason_comes_back_as_it_was_typed(
    app, admin, make_game, ending: str
) -> None:
    """A reason longer than the players' email takes (sent by a browser that ignores the
    field's length): the page comes back (400) saying so, the reason and tick kept."""
    game = make_game()
    page = f"/admin/games/{game['id']}"
    before = what_an_action_leaves(app, game["id"])
    form, _ = ENDINGS[ending]
    reason = "Moving house. " * 30

    refused = submit(
        admin,
        page,
        f"{page}/{ending}",
        reason=reason,
        version=shown_version(admin, game["id"]),
        **form,
    )

    assert refused.status_code == 400
    html = unescape(refused.get_data(as_text=True))
    assert f"A reason is at most {games.MAX_REASON} characters." in html
    assert typed_value(html, f"{ending}-reason") == reason
    assert f'checked id="{ending}-confirm"' in html
    assert what_an_action_leaves(app, game["id"]) == before
