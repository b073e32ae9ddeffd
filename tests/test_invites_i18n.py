"""The pages reached from emails and the front page, in French: the new-game form and its
refusals, the invitation, stopping emails, the rematch, the error pages."""

from __future__ import annotations

import re
from html import unescape

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service import homes, invitations
from service.links import home_token
from service.mail import compose
from service.models import Address, Game, Invitation, Player, db, utcnow
from service.unit_of_work import transaction

from .conftest import BASE_URL
from .factories import written
from .helpers import NEW_GAME_FORM
from .helpers import ask_for_game as ask

FRENCH = {"Accept-Language": "fr-FR,fr;q=0.9"}


def text_of(page: str) -> str:
    """The page's visible words: tags removed, entities decoded, spaces collapsed."""
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", page)))


def invitation_link(app: Flask, stage: str) -> str:
    """The path of the only invitation's link for ``stage``: ``confirm`` or ``respond``."""
    with app.app_context():
        invitation = db.session.scalars(select(Invitation)).one()
        return f"/invitations/{invitations.token(invitation, stage)}"


def test_the_new_game_form_in_french(client: FlaskClient) -> None:
    response = client.get("/new", headers=FRENCH)
    html = response.get_data(as_text=True)
    words = text_of(html)
    assert response.status_code == 200 and '<html lang="fr">' in html
    for phrase in (
        "Lancer une partie",
        "Nous vous envoyons d’abord par e-mail un lien",
        "Votre nom",
        "L’adresse e-mail de votre adversaire",
        "Votre rôle",
        "Gardien",
        "Ombre",
        "Au hasard",
        "Un match retour (deux parties, rôles inversés)",
        "Couleurs classiques",
        "Jours par coup",
        "Lancer la partie",
    ):
        assert phrase in words, phrase
    for english in ("Your name", "Keeper", "Random", "Start the game"):
        assert english not in words, english
    assert 'href="?lang=en"' in html
    assert "Your name" in client.get("/new").get_data(as_text=True)


def test_the_forms_refusals_in_french(client: FlaskClient) -> None:
    refusals = [
        ({"email": "not-an-address"}, "Adresse e-mail non valide."),
        ({"days": "0"}, "Écrivez un nombre entier de jours de 1 à 60, ou laissez vide."),
        ({"name": ""}, "Ce champ est obligatoire."),
        ({"opponent_name": "B" * 81}, "Ce champ ne peut pas dépasser 80 caractères."),
        (
            {"email": "dee@example.com", "opponent_email": "dee@example.com"},
            "deux adresses e-mail différentes",
        ),
    ]
    for n, (changes, reason) in enumerate(refusals):
        # Other addresses each time, clear of the per-address limits.
        addresses = {"email": f"ann{n}@example.com", "opponent_email": f"bob{n}@example.com"}
        response = ask(client, FRENCH, **{**addresses, **changes})
        assert response.status_code == 400, changes
        words = text_of(response.get_data(as_text=True))
        assert reason in words, (changes, words)
        assert "Lancer une partie" in words
    english = ask(client, email="cy@example.com", days="61").get_data(as_text=True)
    assert "Write a whole number of days from 1 to 60, or leave it empty." in english
    # A field's problem follows its name after the language's colon; a word that is no number
    # is told once, in the service's words.
    french = ask(client, FRENCH, email="eve@example.com", days="abc").get_data(as_text=True)
    said = "Écrivez un nombre entier de jours de 1 à 60, ou laissez vide."
    assert french.count(said) == 2  # beside the field and in the list at the top
    assert f"délai)</a>\u00a0: {said}</li>" in unescape(french)


def test_an_address_that_asked_for_no_invitations_is_told_to_no_one(
    app: Flask, client: FlaskClient
) -> None:
    with app.app_context():
        db.session.add(Address(email="bob@example.com", declined_at=utcnow()))
        db.session.commit()
    response = ask(client, FRENCH)
    assert response.status_code == 200  # a visitor learns nothing about Bob
    assert "Consultez vos e-mails" in response.get_data(as_text=True)
    page = client.post(invitation_link(app, "confirm"), headers=FRENCH).get_data(as_text=True)
    assert "Merci : l’invitation a été envoyée à Bob." in text_of(page)  # nor the creator


def test_the_confirmation_and_the_invitation_in_french(app: Flask, client: FlaskClient) -> None:
    response = ask(client, FRENCH)
    page = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "Consultez vos e-mails" in page
    assert "Nous avons envoyé un lien à <strong>ann@example.com</strong>." in page
    confirm = invitation_link(app, "confirm")
    # The creator's page keeps the language of the form, whatever this browser says.
    page = text_of(client.get(confirm, headers={"Accept-Language": "en"}).get_data(as_text=True))
    assert "Confirmez votre adresse" in page
    assert "contre Bob <bob@example.com>, où vous jouez le Gardien." in page
    assert "Confirmer et inviter Bob" in page
    done = text_of(client.post(confirm).get_data(as_text=True))
    assert "Merci : l’invitation a été envoyée à Bob." in done
    # The opponent's page follows their browser: they have chosen no language yet.
    respond = invitation_link(app, "respond")
    assert "An invitation to Split Mind" in client.get(respond).get_data(as_text=True)
    page = text_of(client.get(respond, headers=FRENCH).get_data(as_text=True))
    for phrase in (
        "Une invitation à Split Mind",
        "Ann <ann@example.com> vous invite à une partie de Split Mind",
        "Ann joue le Gardien.",
        "Vous joueriez l’Ombre : vous voulez des plis déséquilibrés, dans un sens ou dans",
        "Vous avez 5 jours pour chaque coup.",
        "Accepter et commencer",
        "Refuser",
        "Refuser en informe Ann et écarte toute invitation ultérieure à votre adresse",
    ):
        assert phrase in page, phrase
    refused = client.post(respond, data={"answer": "maybe"}, headers=FRENCH)
    assert refused.status_code == 400
    assert "Répondez en acceptant ou en refusant." in refused.get_data(as_text=True)
    with app.app_context():
        assert db.session.scalars(select(Invitation)).one().status == "invited"


def test_the_invitation_names_the_roles_in_the_games_look(app: Flask, client: FlaskClient) -> None:
    ask(client, FRENCH, look="classic", role="shadow", format="match", days="")
    page = text_of(client.get(invitation_link(app, "confirm")).get_data(as_text=True))
    assert "un match retour de Split Mind" in page and "Ombre" not in page
    assert "où vous jouez Hyde dans la première." in page
    client.post(invitation_link(app, "confirm"))
    page = text_of(
        client.get(invitation_link(app, "respond"), headers=FRENCH).get_data(as_text=True)
    )
    assert "vous invite à un match retour de Split Mind" in page
    assert "Ann joue Hyde." in page
    assert "Il n’y a pas de délai pour jouer." in page
    english = text_of(client.get(invitation_link(app, "respond")).get_data(as_text=True))
    assert "Ann plays Hyde." in english and "There is no deadline for moves." in english
    assert "You would play Jekyll: you want the tricks shared evenly," in english
    assert "Vous joueriez Jekyll : vous voulez des plis partagés à égalité," in page


def test_a_closed_invitation_in_french(app: Flask, client: FlaskClient) -> None:
    from service import games

    ask(client, FRENCH)
    client.post(invitation_link(app, "confirm"))
    with app.app_context(), transaction():
        games.cancel_game(db.session.scalars(select(Game)).one().id, "alice")
    response = client.post(
        invitation_link(app, "respond"), data={"answer": "accept"}, headers=FRENCH
    )
    assert response.status_code == 409
    assert "Cette invitation est close." in response.get_data(as_text=True)


def test_stopping_emails_in_the_players_language(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game(keeper_language="fr")
    with app.app_context():
        players = db.session.scalars(select(Player).where(Player.game_id == game["id"])).all()
        links = {p.seat: f"/unsubscribe/{compose.unsubscribe_token(p)}" for p in players}
        shadow_id = next(p.id for p in players if p.seat == "shadow")
    html = client.get(links["keeper"]).get_data(as_text=True)
    words = text_of(html)
    assert f"Ne plus recevoir d’e-mails sur la partie {game['id']}" in words
    assert "(vos tours de jeu, les rappels, le résultat)" in words
    assert 'href="?lang=en"' in html
    done = text_of(client.post(links["keeper"]).get_data(as_text=True))
    assert f"C’est fait : vous ne recevrez plus d’e-mails sur la partie {game['id']}." in done
    # The Shadow chose no language: the browser decides, and a link can switch it.
    assert "Stop these emails" in client.get(links["shadow"]).get_data(as_text=True)
    switched = client.get(f"{links['shadow']}?lang=fr")
    assert "Ne plus recevoir ces e-mails" in switched.get_data(as_text=True)
    assert "lang=fr" in switched.headers["Set-Cookie"]
    with app.app_context():
        shadow = db.session.get(Player, shadow_id)
        assert shadow.language is None and shadow.notify


def test_the_rematch_page_in_french(app: Flask, client: FlaskClient, make_game) -> None:
    game = make_game(seed=30, look="classic")
    open_game = client.get(f"/rematch/{game['keeper']}", headers=FRENCH)
    assert open_game.status_code == 409
    assert f"La partie {game['id']} est encore en cours : terminez-la d’abord." in text_of(
        open_game.get_data(as_text=True)
    )
    written(app, game["id"], 30)
    words = text_of(client.get(f"/rematch/{game['keeper']}", headers=FRENCH).get_data(as_text=True))
    assert "Rejouer" in words
    assert "Invitez Sam à une nouvelle partie, rôles inversés : vous serez Hyde." in words
    assert "Inviter Sam" in words
    english = text_of(client.get(f"/rematch/{game['shadow']}").get_data(as_text=True))
    assert "you will be Jekyll." in english
    sent = client.post(f"/rematch/{game['keeper']}", headers=FRENCH, follow_redirects=True)
    sent = text_of(sent.get_data(as_text=True))
    assert "Merci : l’invitation a été envoyée à Sam." in sent
    asked = text_of(
        client.post(f"/rematch/{game['shadow']}", headers=FRENCH, follow_redirects=True).text
    )
    assert "Kim vous propose déjà une nouvelle partie" in asked
    # The invitation to the opponent is in the requester's language (none chosen: English).
    with app.app_context():
        assert db.session.scalars(select(Invitation)).one().language is None


def test_rematch_refusals_in_french(app: Flask, client: FlaskClient, make_game) -> None:
    from service import games

    cancelled, live = make_game(seed=31), make_game(seed=32)
    with app.app_context(), transaction():
        games.cancel_game(cancelled["id"], "alice")
    for token, reason in (
        (cancelled["keeper"], f"La partie {cancelled['id']} a été annulée : pas de revanche."),
        (live["keeper"], f"La partie {live['id']} est encore en cours : terminez-la d’abord."),
    ):
        response = client.post(f"/rematch/{token}", headers=FRENCH)
        assert response.status_code == 409
        assert reason in text_of(response.get_data(as_text=True))


def test_error_pages_in_french(client: FlaskClient, make_game) -> None:
    for path in ("/nowhere", "/play/forged", "/invitations/forged", "/rematch/forged"):
        response = client.get(path, headers=FRENCH)
        assert response.status_code == 404
        html = response.get_data(as_text=True)
        assert '<html lang="fr">' in html and "Il n’y a rien à cette adresse." in html
        # A link replaced since its email was sent: the way to the links of now.
        assert re.search(r'<a href="/links">[^<]+</a>', html), html
        assert "There is nothing at this address." in client.get(path).get_data(as_text=True)
    # The API keeps its English whatever the browser says.
    api = client.get("/api/play/forged", headers=FRENCH)
    assert api.get_json()["error"]["message"] == "There is nothing at this address."
    game = make_game()
    wrong_method = client.get(f"/play/{game['keeper']}/language", headers=FRENCH)
    assert wrong_method.status_code == 405
    assert "Cette adresse n’accepte pas ce type de demande." in wrong_method.get_data(as_text=True)
    no_token = client.post("/new", data=NEW_GAME_FORM, headers=FRENCH)
    assert no_token.status_code == 400
    assert "Ce formulaire n’a pas pu être vérifié" in no_token.get_data(as_text=True)


def test_too_many_requests_in_french(client: FlaskClient) -> None:
    statuses = [
        ask(client, FRENCH, opponent_email=f"friend{n}@example.com").status_code for n in range(6)
    ]
    assert statuses == [200] * 5 + [429]
    response = ask(client, FRENCH, opponent_email="friend9@example.com")
    assert "Rien n’a été envoyé : ann@example.com a reçu autant d’e-mails de ce formulaire" in (
        text_of(response.get_data(as_text=True))
    )
    # Past the limit of this machine's requests, before any form is read.
    for n in range(4):  # the eighth to the eleventh of its ten an hour
        response = ask(client, FRENCH, opponent_email=f"friend{10 + n}@example.com")
    assert response.status_code == 429
    assert "Trop de demandes : patientez un moment, puis réessayez." in text_of(
        response.get_data(as_text=True)
    )


def test_an_error_on_a_players_page_refused_before_its_view_is_in_their_language(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """A method the page does not take, a body it does not read, a stale form: refused
    before the view reads the player, in the language stored for them all the same."""
    game = make_game(keeper_language="fr")
    with app.app_context():
        with transaction():
            homes.set_language("kim@example.com", "fr")
        home = f"/me/{home_token('kim@example.com')}"
    english = {"Accept-Language": "en"}
    play = f"/play/{game['keeper']}"
    for response in (
        client.put(play, headers=english),
        client.post(play, json={"version": 0}, headers=english),
        client.post(f"{home}/emails", data={"csrf_token": "stale"}, headers=english),
        client.post(play, data={"note": "a\0b"}, headers=english),
    ):
        assert response.status_code in (400, 405, 415), response.status_code
        assert '<html lang="fr">' in response.text, response.status_code
    # A link that is no one's is not looked up: the browser's language.
    assert '<html lang="en">' in client.put("/play/no.such", headers=english).text


def test_the_stop_for_an_address_is_in_the_language_of_its_emails(
    app: Flask, client: FlaskClient
) -> None:
    with app.app_context():
        with transaction():
            homes.set_language("kim@example.com", "fr")
        stop = compose.stop_all_url("kim@example.com").removeprefix(BASE_URL)
    for response in (
        client.get(stop, headers={"Accept-Language": "en"}),
        client.post(stop, headers={"Accept-Language": "en"}),
    ):
        assert response.status_code == 200 and '<html lang="fr">' in response.text
