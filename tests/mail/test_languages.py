"""Emails in the recipient's language and in the game's look."""

from __future__ import annotations

import random
import re
from datetime import timedelta

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service import homes
from service.links import home_token
from service.models import AddressSettings, Game, OutboxMessage, Player, db
from service.perspective import player_view
from service.unit_of_work import transaction

from ..factories import one_by_one
from ..helpers import ask_for_game, from_elsewhere, pick_action, write_queued
from ..secrecy import leaks
from ..smtp import SMTPServer
from .test_invitations import last_link, path_of
from .test_templates import invite

# Words of the standard look, which a classic game's emails never use.
STANDARD_WORDS = {
    "en": ["Keeper", "Shadow", "elixir", "hearts", "diamonds", "clubs", "suit"],
    "fr": ["Gardien", "Ombre", "élixir", "cœur", "carreau", "trèfle"],
}


def outbox(app: Flask, kind: str) -> dict[str, OutboxMessage]:
    """The first queued email of ``kind`` to each recipient, as it would be sent now."""
    write_queued(app)
    with app.app_context():
        rows = db.session.scalars(
            select(OutboxMessage).where(OutboxMessage.kind == kind).order_by(OutboxMessage.id)
        ).all()
        db.session.expunge_all()
    first: dict[str, OutboxMessage] = {}
    for row in rows:
        first.setdefault(row.recipient, row)
    return first


def test_each_player_reads_their_own_language(app: Flask, client: FlaskClient, make_game) -> None:
    """A French Keeper's emails are in French, the English Shadow's in English.

    The moves come from a French page: the page's language is not the recipient's.
    """
    game = make_game(seed=31, keeper_language="fr")
    client.set_cookie("lang", "fr")
    moves = one_by_one(app, game["id"], 31)
    for _ in range(60):
        if len(outbox(app, "turn")) == 2:
            break
        next(moves)
    invitation, turn = outbox(app, "invitation"), outbox(app, "turn")
    number = game["id"]
    kim, sam = "kim@example.com", "sam@example.com"
    assert (
        invitation[kim].subject
        == f"Split Mind, partie {number}\u00a0: vous êtes le Gardien contre Sam"
    )
    assert invitation[sam].subject == f"Split Mind, game {number}: you are the Shadow against Kim"
    assert turn[kim].subject.endswith(f"(Split Mind, partie {number})")
    assert "manche" in turn[kim].subject
    assert turn[sam].subject.endswith(f"(Split Mind, game {number})")
    assert "round" in turn[sam].subject
    for message in (invitation[kim], turn[kim]):
        assert message.text_body.startswith("Bonjour Kim,")
        assert '<html lang="fr">' in message.html_body
        assert message.headers["Content-Language"] == "fr"
    assert "Manche 1, pli" in turn[kim].text_body
    for message in (invitation[sam], turn[sam]):
        assert message.text_body.startswith("Hello Sam,")
        assert '<html lang="en">' in message.html_body
        assert message.headers["Content-Language"] == "en"
    assert "Round 1, trick" in turn[sam].text_body


def test_invitation_emails_are_in_the_creators_language(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    """The opponent has no language yet: their invitation is in the creator's.

    Once the game starts, the creator plays in their language and the opponent in the one
    they accepted in: here a page that had no language to go by, in English.
    """
    invite(app, "fr")
    deliver()
    client.post(last_link(smtp_server, "ann@example.com", "/invitations/"))
    deliver()
    client.post(
        last_link(smtp_server, "bob@example.com", "/invitations/"), data={"answer": "accept"}
    )
    confirm, opponent = outbox(app, "confirm_address"), outbox(app, "invite_opponent")
    started = outbox(app, "invitation")
    assert confirm["ann@example.com"].subject.startswith("Split Mind\u00a0: confirmez")
    assert opponent["bob@example.com"].subject == "Ann vous invite à jouer à Split Mind"
    assert started["ann@example.com"].text_body.startswith("Bonjour Ann,")
    assert started["bob@example.com"].text_body.startswith("Hello Bob,")


def test_an_invitation_speaks_the_language_its_opponents_address_chose(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    """Bob chose English on his home page: Ann's French invitation reaches him in English,
    while her own emails stay in the French she asked in."""
    with app.app_context(), transaction():
        db.session.add(AddressSettings(email="bob@example.com", language="en"))
    invite(app, "fr")
    deliver()
    client.post(last_link(smtp_server, "ann@example.com", "/invitations/"))
    deliver()
    confirm, opponent = outbox(app, "confirm_address"), outbox(app, "invite_opponent")
    assert confirm["ann@example.com"].subject.startswith("Split Mind\u00a0: confirmez")
    assert opponent["bob@example.com"].subject == "Ann invites you to play Split Mind"


def test_what_became_of_an_invitation_reaches_its_creator_in_the_language_chosen_since(
    app: Flask, client: FlaskClient, smtp_server, deliver
) -> None:
    """Ann asked and confirmed in French, then chose English for every email on her home
    page: Bob's decline reaches her in English, as her games' emails do."""
    invite(app, "fr")
    deliver()
    client.post(last_link(smtp_server, "ann@example.com", "/invitations/") + "?lang=fr")
    deliver()
    with app.app_context(), transaction():
        homes.set_language("ann@example.com", "en")
    client.post(
        last_link(smtp_server, "bob@example.com", "/invitations/"), data={"answer": "decline"}
    )
    deliver()
    subject, text = received(smtp_server, "ann@example.com")[-1]
    assert "Bob" in subject and text.startswith("Hello Ann,"), (subject, text)


def received(smtp_server: SMTPServer, address: str) -> list[tuple[str, str]]:
    """The subject and text of every email the SMTP server received for ``address``."""
    return [(str(m.message["Subject"]), m.text) for m in smtp_server.handler.to(address)]


def play_until_turn_email(app: Flask, smtp_server: SMTPServer, deliver, address: str) -> None:
    """Both players move through the API until ``address`` has had a French "your move" email."""
    client = from_elsewhere(app, 9)
    seats = ("ann@example.com", "bob@example.com")
    links = [path_of(smtp_server.handler.to(a)[-1].links("/play/")[0]) for a in seats]
    rng = random.Random(3)
    for _ in range(40):
        if any("manche" in subject for subject, _ in received(smtp_server, address)):
            return
        for link in links:
            view = client.get(f"/api{link}").get_json()
            if view["your_turn"]:
                body = {"version": view["version"], **pick_action(view, rng)}
                assert client.post(f"/api{link}", json=body).status_code == 200
            deliver()  # before the other player moves, which withdraws their turn email
    raise AssertionError(f"no turn email in French for {address}")


@pytest.mark.parametrize("way", ["accept-language", "cookie"])
def test_the_language_an_invitee_accepts_in_is_theirs(
    app: Flask, smtp_server: SMTPServer, deliver, way: str
) -> None:
    """Bob answers his invitation on a French page: his game's emails are in French from its
    first, as the SMTP server receives them, and French is his address's language, which
    his home page shows ticked."""
    ann, bob = from_elsewhere(app, 1), from_elsewhere(app, 2)
    if way == "cookie":
        bob.set_cookie("lang", "fr")
    headers = {"Accept-Language": "fr-FR,fr;q=0.9"} if way == "accept-language" else {}
    ask_for_game(ann)  # Ann asks, and confirms, in English
    deliver()
    ann.post(last_link(smtp_server, "ann@example.com", "/invitations/"))
    deliver()
    respond = last_link(smtp_server, "bob@example.com", "/invitations/")
    assert "Accepter et commencer" in bob.get(respond, headers=headers).get_data(as_text=True)
    assert bob.post(respond, data={"answer": "accept"}, headers=headers).status_code == 303
    deliver()
    play_until_turn_email(app, smtp_server, deliver, "bob@example.com")
    invitation, *game_emails = received(smtp_server, "bob@example.com")
    assert invitation[0] == "Ann invites you to play Split Mind"  # written in Ann's language
    assert game_emails[0][0].startswith("Split Mind, partie")  # the start of the game
    for _, text in game_emails:
        assert text.startswith("Bonjour Bob,")
    for _, text in received(smtp_server, "ann@example.com")[1:]:  # after her address's
        assert text.startswith("Hello Ann,")
    with app.app_context():
        assert db.session.get_one(AddressSettings, "bob@example.com").language == "fr"
        assert db.session.get(AddressSettings, "ann@example.com").language == "en"
        home = f"/me/{home_token('bob@example.com')}"
    # Whatever the page's language, the radio shows the stored one.
    page = app.test_client().get(home + "?lang=en").get_data(as_text=True)
    assert re.search(r'checked[^>]*value="fr"|value="fr"[^>]*checked', page)
    assert not re.search(r'checked[^>]*value="en"|value="en"[^>]*checked', page)


def test_the_language_a_creator_confirms_in_is_theirs(
    app: Flask, smtp_server: SMTPServer, deliver
) -> None:
    """Ann asks on an English page but confirms on a French one: her game is in French, and
    so is her address, which had no language; one the address chose before stays."""
    ann, bob = from_elsewhere(app, 1), from_elsewhere(app, 2)
    with app.app_context(), transaction():
        db.session.add(AddressSettings(email="bob@example.com", language="en"))
    ask_for_game(ann)
    deliver()
    confirm = last_link(smtp_server, "ann@example.com", "/invitations/")
    assert ann.post(confirm + "?lang=fr").status_code == 200
    deliver()
    respond = last_link(smtp_server, "bob@example.com", "/invitations/")
    # Bob's browser asks for French, but his address chose English: the page, and his game, are.
    french = {"Accept-Language": "fr"}
    assert "You would play" in bob.get(respond, headers=french).get_data(as_text=True)
    assert bob.post(respond, data={"answer": "accept"}, headers=french).status_code == 303
    deliver()
    # His invitation, too, speaks the language his address chose.
    assert received(smtp_server, "bob@example.com")[0][0] == "Ann invites you to play Split Mind"
    assert smtp_server.handler.to("ann@example.com")[-1].text.startswith("Bonjour Ann,")
    assert smtp_server.handler.to("bob@example.com")[-1].text.startswith("Hello Bob,")
    with app.app_context():
        assert db.session.get_one(AddressSettings, "ann@example.com").language == "fr"
        assert db.session.get_one(AddressSettings, "bob@example.com").language == "en"


def test_a_game_made_by_an_admin_keeps_its_languages(app: Flask, client, make_game) -> None:
    """A game made by the command line or an admin stores no address's language: its seats
    keep the ones it was made with, and the home page says that none is chosen."""
    make_game(keeper_language="fr")
    with app.app_context():
        languages = dict(db.session.execute(select(Player.email, Player.language)).all())
        assert languages == {"kim@example.com": "fr", "sam@example.com": None}
        # The addresses' rows hold their home links' keys, and no language.
        assert db.session.scalars(select(AddressSettings.language)).all() == [None, None]
        home = f"/me/{home_token('sam@example.com')}"
    page = client.get(home).get_data(as_text=True)
    assert "No language chosen yet" in page
    assert "checked" not in page.partition('id="language-title"')[2].partition("</section>")[0]


def test_a_game_made_by_an_admin_speaks_the_language_an_address_chose(
    app: Flask, make_game
) -> None:
    """A seat made without a language takes the one its address chose on its home page, as
    the home page shows it; one made with a language keeps it."""
    with app.app_context(), transaction():
        db.session.add(AddressSettings(email="sam@example.com", language="fr"))
        db.session.add(AddressSettings(email="kim@example.com", language="fr"))
    make_game(keeper_language="en")
    with app.app_context():
        languages = dict(db.session.execute(select(Player.email, Player.language)).all())
    assert languages == {"kim@example.com": "en", "sam@example.com": "fr"}


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.slow
def test_the_classic_look_reads_right_in_every_email(
    app: Flask, client: FlaskClient, make_game, language: str
) -> None:
    game = make_game(seed=5, look="classic", keeper_language=language, shadow_language=language)
    for _ in one_by_one(app, game["id"], 2):
        write_queued(app)
    with app.app_context():
        messages = db.session.scalars(select(OutboxMessage)).all()
        kinds = {message.kind for message in messages}
        texts = [f"{m.subject}\n{m.text_body}\n{m.html_body}" for m in messages]
    assert {"invitation", "turn", "round_end", "game_over"} <= kinds
    for text in texts:
        words = re.sub(r"https?://\S+|<[^>]+>", " ", text)
        for symbol in "♥♦♣♠":
            assert symbol not in words
        for word in STANDARD_WORDS[language]:
            assert not re.search(rf"\b{word}", words, re.I), (word, words)
    assert any("Jekyll" in text and "Hyde" in text for text in texts)
    assert any("potion" in text for text in texts)


def test_an_unknown_language_reads_english(app: Flask, make_game) -> None:
    game = make_game(keeper_language="xx")
    invitation = outbox(app, "invitation")["kim@example.com"]
    assert invitation.subject == f"Split Mind, game {game['id']}: you are the Keeper against Sam"


def test_a_card_named_in_french_is_caught_as_a_leak() -> None:
    assert leaks("Dernier pli : Sam 1 (as) de cœur", {"1H"})
    assert leaks("Kim a joué 7 violet.", {"7C"})
    assert leaks("Sam entame avec élixir 4½.", {"4S"})
    assert not leaks("Manche 1, pli 7 : à vous d’entamer.", {"7C", "1H"})


def test_a_player_sets_a_language_the_service_speaks(app: Flask, make_game) -> None:
    game = make_game()
    with app.app_context():
        sam = db.session.scalars(
            select(Player).where(Player.game_id == game["id"], Player.seat == "shadow")
        ).one()
        with transaction():
            homes.set_language("sam@example.com", "fr")
        with pytest.raises(ValueError, match="no language 'xx'"), transaction():
            homes.set_language("sam@example.com", "xx")
        db.session.expire_all()
        assert db.session.get(Player, sam.id).language == "fr"


def test_the_subject_of_a_game_s_end_says_who_wins(app: Flask, make_game) -> None:
    """Each player reads the outcome in the subject, in their own language; a forfeit's
    ending too."""
    from service import games

    from ..factories import played

    game = make_game(seed=30, keeper_language="fr")
    view = played(app, game["id"], 30, emails=False)
    over = outbox(app, "game_over")
    kim, sam = "kim@example.com", "sam@example.com"
    number = game["id"]
    if view["winner"] == "keeper":
        assert (
            over[kim].subject == f"Split Mind, partie {number}\u00a0: partie terminée, vous gagnez"
        )
        assert over[sam].subject == f"Split Mind, game {number}: game over, Kim wins"
    else:
        assert over[kim].subject == f"Split Mind, partie {number}\u00a0: partie terminée, Sam gagne"
        assert over[sam].subject == f"Split Mind, game {number}: game over, you win"
    forfeited = make_game(seed=31)
    with app.app_context(), transaction():
        games.declare_forfeit(forfeited["id"], "shadow", "alice")
    ended = subjects(app, "game_ended", forfeited["id"])
    assert ended[kim] == f"Split Mind, game {forfeited['id']}: ended by forfeit, you win"
    assert ended[sam] == f"Split Mind, game {forfeited['id']}: ended by forfeit, Kim wins"
    # Kim gives her card; Sam lets the deadline pass.
    late = make_game(seed=32, days_per_move=2)
    with app.app_context(), transaction():
        game = db.session.get_one(Game, late["id"])
        kim_view = player_view(game.player("keeper"))
        games.apply_move(game.player("keeper").id, 0, pick_action(kim_view, random.Random(1)))
    with app.app_context(), transaction():
        game = db.session.get_one(Game, late["id"])
        assert games.expire(game.id, game.deadline + timedelta(hours=1)) is not None
    ended = subjects(app, "game_ended", late["id"])
    assert ended[kim] == f"Split Mind, game {late['id']}: ended by timeout, you win"
    assert ended[sam] == f"Split Mind, game {late['id']}: ended by timeout, Kim wins"


def subjects(app: Flask, kind: str, game_id: int) -> dict[str, str]:
    """The subject of each queued email of ``kind`` about the game, by recipient, as it would
    be sent now."""
    write_queued(app)
    with app.app_context():
        rows = db.session.scalars(
            select(OutboxMessage).where(
                OutboxMessage.kind == kind, OutboxMessage.game_id == game_id
            )
        ).all()
        return {row.recipient: row.subject or "" for row in rows}
