"""An address that opted out gets none of the emails a stranger can cause, and the pages say
the same as if it had; each such email offers a one-click way to stop them all."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service import games, homes, invitations
from service.links import home_token, serializer
from service.mail import compose
from service.models import Address, Game, Invitation, OutboxMessage, Player, db, utcnow
from service.rematch_rules import blocked
from service.unit_of_work import transaction

from ..conftest import BASE_URL
from ..helpers import ask_for_game, request_invitation
from ..smtp import Received, SMTPServer
from .test_invitations import invited, last_link, path_of
from .test_lost_links import ask as ask_for_links


def opt_out(app: Flask, email: str, how: str) -> None:
    """Record that ``email`` declined an invitation or stopped a game's emails."""
    with app.app_context():
        column = {"declined": "declined_at", "unsubscribed": "unsubscribed_at"}[how]
        db.session.add(Address(email=email, **{column: utcnow()}))
        db.session.commit()


def stop_link(message: Received) -> str:
    """The path of a message's one-click unsubscribe link."""
    return path_of(message.message["List-Unsubscribe"].strip().strip("<>"))


def kinds(app: Flask, recipient: str) -> list[tuple[str, str]]:
    """(kind, status) of the emails to ``recipient``, oldest first."""
    with app.app_context():
        return [
            (m.kind, m.status)
            for m in db.session.scalars(
                select(OutboxMessage)
                .where(OutboxMessage.recipient == recipient)
                .order_by(OutboxMessage.id)
            )
        ]


@pytest.mark.parametrize("how", ["declined", "unsubscribed"])
def test_an_address_that_opted_out_is_not_asked_to_confirm_it(
    app: Flask, client: FlaskClient, smtp_server: SMTPServer, deliver: Callable[[], int], how: str
) -> None:
    """A stranger names it as the creator: the page is the one anyone gets, and no email goes."""
    opt_out(app, "kim@example.com", how)
    page = ask_for_game(client, name="Mallory", email="kim@example.com")
    other = ask_for_game(client, name="Mallory", email="lee@example.com", opponent_email="x@x.org")
    assert page.status_code == other.status_code == 200
    text = page.get_data(as_text=True).replace("kim@example.com", "ADDRESS")
    assert text == other.get_data(as_text=True).replace("lee@example.com", "ADDRESS")
    deliver()
    assert smtp_server.handler.to("kim@example.com") == []
    assert len(smtp_server.handler.to("lee@example.com")) == 1
    assert kinds(app, "kim@example.com") == [("confirm_address", "skipped")]


def as_anyone(text: str, *addresses: str) -> str:
    """``text`` with the addresses named, the tokens of the links and forms (a CSRF token
    holds the second it was made) and the ids left out."""
    for address in addresses:
        text = text.replace(address, "ADDRESS")
    text = re.sub(r"/(me|invitations|unsubscribe)/[^\s<>\"']+", r"/\1/TOKEN", text)
    text = re.sub(r'(name="csrf_token"[^>]*?value=")[^"]+', r"\1TOKEN", text)
    return re.sub(r"\d+", "N", text)  # game ids, the dates of their emails


@pytest.mark.parametrize("how", ["declined", "unsubscribed"])
def test_inviting_an_address_that_opted_out_looks_like_inviting_any(
    app: Flask, client: FlaskClient, smtp_server: SMTPServer, deliver: Callable[[], int], how: str
) -> None:
    """Ann invites Bob, who opted out, and Amy invites Dan: once each has confirmed, their
    pages and emails say the same, and each invitation waits for an answer; Bob gets nothing."""
    opt_out(app, "bob@example.com", how)
    creators = {"ann@example.com": "bob@example.com", "amy@example.com": "dan@example.com"}
    for creator, opponent in creators.items():
        assert ask_for_game(client, email=creator, opponent_email=opponent).status_code == 200
    deliver()
    seen: dict[str, list[str]] = {}
    for creator, opponent in creators.items():
        confirm = last_link(smtp_server, creator, "/invitations/")
        confirmed = client.post(confirm)
        assert confirmed.status_code == 200
        with app.app_context():
            home = f"/me/{home_token(creator)}"
        pages = [confirmed, client.get(confirm), client.get(home)]
        deliver()
        emails = [
            f"{m.message['Subject']}\n{m.text}\n{m.html}" for m in smtp_server.handler.to(creator)
        ]
        seen[creator] = [
            as_anyone(text, creator, opponent)
            for text in [*(page.get_data(as_text=True) for page in pages), *emails]
        ]
        assert "Bob is invited. The game starts when they accept." in seen[creator][0]
    assert seen["ann@example.com"] == seen["amy@example.com"]
    assert smtp_server.handler.to("bob@example.com") == []
    assert kinds(app, "bob@example.com") == [("invite_opponent", "skipped")]
    assert [kind for kind, _ in kinds(app, "dan@example.com")] == ["invite_opponent"]
    with app.app_context():
        assert db.session.scalars(select(Invitation.status)).all() == ["invited"] * 2
        assert db.session.scalars(select(Game.status)).all() == ["waiting"] * 2


def test_an_invitation_is_not_sent_once_its_address_has_opted_out(
    app: Flask, client: FlaskClient, smtp_server: SMTPServer, deliver: Callable[[], int]
) -> None:
    """Queued before the opt-out, it is dropped when its turn comes."""
    ask_for_game(client)
    deliver()
    client.post(last_link(smtp_server, "ann@example.com", "/invitations/"))  # Bob is invited
    opt_out(app, "bob@example.com", "declined")
    deliver()
    assert smtp_server.handler.to("bob@example.com") == []
    assert kinds(app, "bob@example.com") == [("invite_opponent", "skipped")]


@pytest.mark.parametrize("how", ["declined", "unsubscribed"])
def test_a_sub_address_of_an_address_that_opted_out_is_opted_out(
    app: Flask, client: FlaskClient, smtp_server: SMTPServer, deliver: Callable[[], int], how: str
) -> None:
    """``bob+x@`` reaches Bob's inbox: the stop Bob asked for holds for it, as creator and as
    opponent, and for a rematch."""
    opt_out(app, "bob@example.com", how)
    ask_for_game(client, email="ann@example.com", opponent_email="Bob+Games@example.com")
    ask_for_game(client, name="Mallory", email="bob+spam@example.com")
    deliver()
    client.post(last_link(smtp_server, "ann@example.com", "/invitations/"))
    deliver()
    assert [m.envelope_to for m in smtp_server.received] == [["ann@example.com"]]
    assert kinds(app, "bob+games@example.com") == [("invite_opponent", "skipped")]
    assert kinds(app, "bob+spam@example.com") == [("confirm_address", "skipped")]
    with app.app_context():
        assert blocked("bob+x@example.com") and not blocked("bobby@example.com")


def test_every_email_a_stranger_can_cause_has_a_one_click_stop_for_the_address(
    app: Flask, client: FlaskClient, make_game, smtp_server: SMTPServer, deliver
) -> None:
    make_game(seed=4)  # Kim plays
    ask_for_game(client, email="kim@example.com", opponent_email="bob@example.com")
    deliver()
    client.post(last_link(smtp_server, "kim@example.com", "/invitations/"))
    ask_for_links(client, "kim@example.com")
    deliver()
    ask_for_game(client, name="Cy", email="cy@example.com", opponent_email="kim@example.com")
    deliver()
    client.post(last_link(smtp_server, "cy@example.com", "/invitations/"))
    deliver()
    subjects = {
        "confirm_address": "confirm your address",
        "your_games": "the link to your games",
        "invite_opponent": "Cy invites you",
    }
    found = {}
    for message in smtp_server.handler.to("kim@example.com"):
        for kind, subject in subjects.items():
            if subject in str(message.message["Subject"]):
                found[kind] = message
    assert found.keys() == subjects.keys()
    links = {stop_link(message) for message in found.values()}
    assert len(links) == 1  # one address, one link
    (link,) = links
    for message in found.values():
        assert message.message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        assert f"{BASE_URL}{link}" in message.text and f"{BASE_URL}{link}" in message.html
    page = client.get(link).get_data(as_text=True)
    assert "This service will send no more emails to kim@example.com" in page
    response = client.post(link, data={"List-Unsubscribe": "One-Click"})
    assert response.status_code == 200
    assert "Done: this service will send no more emails to kim@example.com" in (
        response.get_data(as_text=True)
    )
    with app.app_context():
        assert db.session.get(Address, "kim@example.com").unsubscribed_at is not None
        seats = db.session.scalars(select(Player).where(Player.email == "kim@example.com"))
        assert not any(seat.notify for seat in seats)
    # From now on nothing anyone asks for reaches Kim: a game, the links, an invitation.
    received = len(smtp_server.received)
    ask_for_game(client, email="kim@example.com", opponent_email="dee@example.com")
    ask_for_links(client, "kim@example.com")
    ask_for_game(client, name="Fay", email="fay@example.com", opponent_email="kim@example.com")
    deliver()
    client.post(last_link(smtp_server, "fay@example.com", "/invitations/"))
    deliver()
    assert [m.envelope_to for m in smtp_server.received[received:]] == [["fay@example.com"]]


def test_the_declined_email_offers_the_stop_too(
    client: FlaskClient, smtp_server: SMTPServer, deliver
) -> None:
    answer = invited(client, smtp_server, deliver)
    client.post(answer, data={"answer": "decline"})
    deliver()
    declined = smtp_server.handler.to("ann@example.com")[-1]
    assert "declined" in str(declined.message["Subject"])
    assert stop_link(declined).startswith("/unsubscribe/")


def test_no_declined_email_to_a_creator_who_stopped_every_email(
    app: Flask, client: FlaskClient, smtp_server: SMTPServer, deliver
) -> None:
    """Queued before the stop or after it, the answer to Ann's invitation reaches her no more."""
    to_bob = invited(client, smtp_server, deliver)
    ask_for_game(client, opponent_name="Dee", opponent_email="dee@example.com")
    deliver()
    client.post(last_link(smtp_server, "ann@example.com", "/invitations/"))
    deliver()
    to_dee = last_link(smtp_server, "dee@example.com", "/invitations/")
    client.post(to_dee, data={"answer": "decline"})
    received = len(smtp_server.handler.to("ann@example.com"))
    stop = client.post(stop_link(smtp_server.handler.to("ann@example.com")[-1]))
    assert "Done: this service will send no more emails" in stop.get_data(as_text=True)
    client.post(to_bob, data={"answer": "decline"})
    deliver()
    assert len(smtp_server.handler.to("ann@example.com")) == received
    assert kinds(app, "ann@example.com")[-2:] == [("declined", "skipped")] * 2


def test_a_rematch_asked_after_stopping_emails_is_answered(
    app: Flask, client: FlaskClient, make_game, smtp_server: SMTPServer, deliver
) -> None:
    """Sam stopped his one game's emails, then asked Kim for a rematch: asking is wanting the
    answer, which reaches him when Kim declines."""
    game = make_game()
    with app.app_context(), transaction():
        stopped = games.declare_forfeit(game["id"], "keeper", "alice").player("shadow")
        invitations.stop_emails(stopped)
    deliver()
    assert client.post(f"/rematch/{game['shadow']}").status_code == 303
    deliver()
    invite = last_link(smtp_server, "kim@example.com", "/invitations/")
    assert_decline_told(client, smtp_server, deliver, invite, "sam@example.com")


def test_an_invitation_made_before_stopping_a_games_emails_is_answered(
    app: Flask, client: FlaskClient, make_game, smtp_server: SMTPServer, deliver
) -> None:
    """Sam invited Ann, then stopped the emails of his one game: that turns invitations to
    him away, not the answer to his own, which reaches him when Ann declines."""
    game = make_game()
    with app.app_context(), transaction():
        invitation = request_invitation("ann@example.com", creator="sam@example.com")
        invitations.confirm(invitation)
        sams = db.session.get_one(Game, game["id"]).player("shadow")
        invitations.stop_emails(sams)
    deliver()
    to_ann = last_link(smtp_server, "ann@example.com", "/invitations/")
    assert_decline_told(client, smtp_server, deliver, to_ann, "sam@example.com")


def assert_decline_told(
    client: FlaskClient, smtp_server: SMTPServer, deliver, invite: str, creator: str
) -> None:
    """Decline the invitation at the path ``invite``: its ``creator`` gets that one email."""
    received = len(smtp_server.handler.to(creator))
    assert client.post(invite, data={"answer": "decline"}).status_code == 200
    deliver()
    (answer,) = smtp_server.handler.to(creator)[received:]
    assert "declined" in str(answer.message["Subject"])


def test_accepting_after_stopping_every_email_takes_that_games_emails(
    app: Flask, client: FlaskClient, smtp_server: SMTPServer, deliver
) -> None:
    """Bob stopped every email, then accepted the invitation he had been sent before: accepting
    is wanting the game, whose page says his link is in his email. He gets that game's
    emails; invitations stay turned away."""
    to_bob = invited(client, smtp_server, deliver)
    client.post(stop_link(smtp_server.handler.to("bob@example.com")[-1]))
    assert client.post(to_bob, data={"answer": "accept"}).status_code == 303
    deliver()
    assert smtp_server.handler.to("bob@example.com")[-1].links("/play/")
    assert "your link is in your email" in client.get(to_bob).get_data(as_text=True)
    with app.app_context():
        assert blocked("bob@example.com")
        assert not invitations.stopped_all_emails("bob@example.com")


def test_a_stranger_naming_the_address_does_not_undo_its_stop(
    app: Flask, client: FlaskClient, smtp_server: SMTPServer, deliver
) -> None:
    """A request that names Ann as the opponent makes her a seat in a game that has not
    started: that seat takes no email back for her."""
    to_bob = invited(client, smtp_server, deliver)
    stop = client.post(stop_link(smtp_server.handler.to("ann@example.com")[-1]))
    assert "Done: this service will send no more emails" in stop.get_data(as_text=True)
    stranger = client.__class__(app, app.response_class)
    ask_for_game(stranger, name="Cy", email="cy@example.com", opponent_email="ann@example.com")
    received = len(smtp_server.handler.to("ann@example.com"))
    client.post(to_bob, data={"answer": "decline"})
    deliver()
    assert len(smtp_server.handler.to("ann@example.com")) == received
    assert kinds(app, "ann@example.com")[-1] == ("declined", "skipped")


def test_a_declined_email_still_reaches_a_creator_who_declined_another_invitation(
    app: Flask, client: FlaskClient, smtp_server: SMTPServer, deliver
) -> None:
    """Declining turns away invitations to the address, not the answers to its own."""
    to_bob = invited(client, smtp_server, deliver)
    ask_for_game(client, name="Cy", email="cy@example.com", opponent_email="ann@example.com")
    deliver()
    client.post(last_link(smtp_server, "cy@example.com", "/invitations/"))
    deliver()
    client.post(
        last_link(smtp_server, "ann@example.com", "/invitations/"), data={"answer": "decline"}
    )
    with app.app_context():
        assert db.session.get_one(Address, "ann@example.com").declined_at is not None
    client.post(to_bob, data={"answer": "decline"})
    deliver()
    assert kinds(app, "ann@example.com")[-1] == ("declined", "sent")


def test_a_game_email_queued_before_its_stop_is_not_sent(
    app: Flask, client: FlaskClient, make_game, smtp_server: SMTPServer, deliver
) -> None:
    """A stop applies at once, to the emails about the game already waiting to go too."""
    game = make_game(seed=1)  # each player's first email is queued
    with app.app_context():
        kim = db.session.get_one(Game, game["id"]).player("keeper")
        stop = f"/unsubscribe/{compose.unsubscribe_token(kim)}"
    client.post(stop)
    deliver()
    assert smtp_server.handler.to("kim@example.com") == []
    assert kinds(app, "kim@example.com") == [("invitation", "skipped")]
    assert len(smtp_server.handler.to("sam@example.com")) == 1


def test_no_links_email_to_an_address_that_stopped_the_emails_of_every_game_it_plays(
    app: Flask, client: FlaskClient, make_game, smtp_server: SMTPServer, deliver
) -> None:
    first, second = make_game(seed=1), make_game(seed=2)
    deliver()
    with app.app_context():
        kim = {
            game["id"]: db.session.scalars(
                select(Player).where(Player.game_id == game["id"], Player.seat == "keeper")
            ).one()
            for game in (first, second)
        }
        stops = {game_id: compose.unsubscribe_token(player) for game_id, player in kim.items()}
    client.post(f"/unsubscribe/{stops[first['id']]}")
    smtp_server.received.clear()
    ask_for_links(client, "kim@example.com")
    deliver()
    (email,) = smtp_server.received  # one game still emails Kim: the home link goes
    assert len(email.links("/me/")) == 2  # in the text and in the footer, the same link
    assert len(set(email.links("/me/"))) == 1
    client.post(f"/unsubscribe/{stops[second['id']]}")
    ask_for_links(client, "kim@example.com")
    deliver()
    assert len(smtp_server.received) == 1
    assert kinds(app, "kim@example.com")[-1] == ("your_games", "skipped")


def test_an_address_that_declined_an_invitation_still_gets_its_links(
    app: Flask, client: FlaskClient, make_game, smtp_server: SMTPServer, deliver
) -> None:
    """Declining turns away invitations, not the links to the games the address plays; the
    page says who is sent nothing."""
    make_game(seed=1)
    opt_out(app, "kim@example.com", "declined")
    deliver()
    smtp_server.received.clear()
    page = client.get("/links").get_data(as_text=True)
    assert "An address that stopped the emails of every game it played here is sent nothing" in (
        page
    )
    ask_for_links(client, "kim@example.com")
    deliver()
    assert kinds(app, "kim@example.com")[-1] == ("your_games", "sent")


def test_a_stop_link_that_is_not_ours_is_not_found(client: FlaskClient, app: Flask) -> None:
    with app.app_context():
        forged = compose.stop_all_url("kim@example.com")[len(BASE_URL) :] + "x"
    assert client.get(forged).status_code == 404
    assert client.post(forged).status_code == 404
    with app.app_context():
        assert db.session.scalars(select(Invitation)).all() == []
        assert db.session.get(Address, "kim@example.com") is None


def legacy_unsubscribe_token(player: Player) -> str:
    """An unsubscribe token as emails sent before tokens signed the link key carry: a bare id."""
    return serializer(compose.UNSUBSCRIBE_SALT).dumps(player.id)


@pytest.mark.parametrize("change", ["correct_address", "rotate_link"])
def test_a_game_emails_stop_link_stops_nothing_once_an_admin_gave_the_seat_a_new_link(
    app: Flask, client: FlaskClient, make_game, change: str
) -> None:
    """Whoever holds an email sent before (the old address, or whoever the link leaked to)
    cannot stop the emails of the seat's player now, nor turn invitations from their address;
    the stop link of an email sent since works."""
    game = make_game(seed=1)
    with app.app_context():
        sam = db.session.get_one(Game, game["id"]).player("shadow")
        kim = db.session.get_one(Game, game["id"]).player("keeper")
        old = [compose.unsubscribe_token(sam), legacy_unsubscribe_token(sam)]
        kim_legacy = legacy_unsubscribe_token(kim)
        sam_id = sam.id
    with app.app_context(), transaction():
        if change == "correct_address":
            games.correct_address(sam_id, "rightful@example.org", "ada")
        else:
            games.rotate_link(sam_id, "ada")
    for token in old:
        for method in (client.get, client.post):
            response = method(f"/unsubscribe/{token}")
            assert response.status_code == 410
            assert "This link no longer stops anything" in response.get_data(as_text=True)
    # The other seat of a game an admin changed: a bare id cannot tell whose link changed.
    assert client.post(f"/unsubscribe/{kim_legacy}").status_code == 410
    with app.app_context():
        sam = db.session.get_one(Player, sam_id)
        assert sam.notify and sam.email is not None and not invitations.blocked(sam.email)
        new = compose.unsubscribe_token(sam)
    assert client.post(f"/unsubscribe/{new}").status_code == 200
    with app.app_context():
        sam = db.session.get_one(Player, sam_id)
        assert not sam.notify and sam.email is not None and invitations.blocked(sam.email)


def test_an_email_queued_before_its_link_was_rotated_carries_the_stop_link_of_now(
    app: Flask, client: FlaskClient, make_game, smtp_server: SMTPServer, deliver
) -> None:
    """The stop link in the header is written when the email goes, as the links in its body."""
    game = make_game(seed=1)  # each player's invitation is queued
    with app.app_context(), transaction():
        games.rotate_link(db.session.get_one(Game, game["id"]).player("shadow").id, "ada")
    deliver()
    (invitation,) = smtp_server.handler.to("sam@example.com")
    assert client.post(stop_link(invitation)).status_code == 200
    with app.app_context():
        assert not db.session.get_one(Game, game["id"]).player("shadow").notify


def test_a_stop_link_from_before_links_signed_the_key_still_works(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """Emails already sent carry a token of the player's id alone: for a seat whose link no
    admin has changed, it stops the game's emails as it did."""
    game = make_game(seed=1)
    other = make_game(seed=2)
    with app.app_context(), transaction():
        kim = db.session.get_one(Game, game["id"]).player("keeper")
        token = legacy_unsubscribe_token(kim)
        # An admin's new link in another game takes nothing from this one's links.
        games.rotate_link(db.session.get_one(Game, other["id"]).player("keeper").id, "ada")
    assert client.get(f"/unsubscribe/{token}").status_code == 200
    assert client.post(f"/unsubscribe/{token}").status_code == 200
    with app.app_context():
        assert not db.session.get_one(Game, game["id"]).player("keeper").notify


def test_a_game_over_offers_a_rematch_whatever_the_opponent_stopped(
    app: Flask, make_game, smtp_server: SMTPServer, deliver: Callable[[], int]
) -> None:
    """Sam stopped the game's emails, which turns invitations away: Kim's game-over email
    offers the rematch link all the same, as a missing one would tell Kim what Sam chose."""
    from ..factories import played

    game = make_game(seed=30)
    with app.app_context(), transaction():
        invitations.stop_emails(db.session.get_one(Game, game["id"]).player("shadow"))
    played(app, game["id"], 30, emails=False)
    deliver()
    (kim_over,) = smtp_server.handler.to("kim@example.com")
    assert "The whole game, trick by trick:" in kim_over.text
    assert len(kim_over.links("/rematch/")) == 1


def test_a_stop_from_a_sub_address_holds_for_the_whole_inbox(
    app: Flask, client: FlaskClient, smtp_server: SMTPServer, deliver: Callable[[], int]
) -> None:
    """A stranger names ``kim+1@`` and Kim stops every email with its one-click link: naming
    ``kim+2@`` or ``kim@`` next reaches the same inbox, and sends nothing; the page of
    ``kim+1@`` takes invitations again for the whole inbox."""
    ask_for_game(client, name="Mallory", email="kim+1@example.com")
    deliver()
    (message,) = smtp_server.handler.to("kim+1@example.com")
    stopped = client.post(stop_link(message), data={"List-Unsubscribe": "One-Click"})
    assert stopped.status_code == 200
    kims_inbox_is_sent_nothing(app, client, deliver)
    assert [m.envelope_to for m in smtp_server.received] == [["kim+1@example.com"]]
    with app.app_context(), transaction():
        homes.accept_invitations("kim+1@example.com")
    with app.app_context():
        assert not blocked("kim+1@example.com") and not blocked("kim+3@example.com")


def kims_inbox_is_sent_nothing(app: Flask, client: FlaskClient, deliver: Callable[[], int]) -> None:
    """Requests naming ``kim+2@`` and ``kim@``, the same inbox, send it nothing."""
    ask_for_game(client, name="Mallory", email="kim+2@example.com")
    ask_for_game(client, name="Mallory", email="kim@example.com")
    deliver()
    assert kinds(app, "kim+2@example.com") == [("confirm_address", "skipped")]
    assert kinds(app, "kim@example.com") == [("confirm_address", "skipped")]


def test_a_game_s_stop_from_a_sub_address_turns_invitations_away_from_the_whole_inbox(
    app: Flask, client: FlaskClient, smtp_server: SMTPServer, deliver: Callable[[], int]
) -> None:
    """Kim plays as ``kim+games@`` and follows the unsubscribe link of that game's email,
    which turns invitations away: naming ``kim+2@`` or ``kim@`` next reaches the same
    inbox, and sends nothing, as after a stop of every email; her page undoes it."""
    with app.app_context(), transaction():
        game = games.create_game(
            games.Seating("kim+games@example.com", "Kim"), games.Seating("sam@example.com", "Sam")
        )
        stop = f"/unsubscribe/{compose.unsubscribe_token(game.player('keeper'))}"
    deliver()
    assert client.post(stop).status_code == 200
    kims_inbox_is_sent_nothing(app, client, deliver)
    with app.app_context(), transaction():
        homes.accept_invitations("kim+games@example.com")
    with app.app_context():
        assert not blocked("kim+2@example.com") and not blocked("kim@example.com")
