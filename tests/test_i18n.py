"""English and French: choosing the language, the catalogue, the rules' messages, both looks."""

from __future__ import annotations

import gettext
import html
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.pofile import read_po
from flask import Flask, render_template_string
from flask.testing import FlaskClient
from flask_babel import force_locale
from flask_babel import gettext as _
from sqlalchemy import select

from service import addresses, game_text, homes
from service import language as lang
from service.language import recipient_locale
from service.links import home_token
from service.mail.compose import render
from service.models import Game, Player, db
from service.players.annotations import choose_reasons
from service.replies.reading import move_line, read_move
from service.rules import DECK, SEATS, RuleError, apply, new_game

from .conftest import load_game
from .factories import one_by_one
from .helpers import MoveForm, Spoken, error_text
from .rules.helpers import play, playing
from .secrecy import hidden_cards

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "service" / "translations" / "fr" / "LC_MESSAGES"


def seat_player(game_id: int, seat: str) -> Player:
    """The player in ``seat`` of a game (inside an app context)."""
    return db.session.scalars(
        select(Player).where(Player.game_id == game_id, Player.seat == seat)
    ).one()


def text_of(html: str) -> str:
    """The page's visible words: tags, scripts and styles removed."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_browser_language_chooses_the_page_language(client, make_game) -> None:
    game = make_game()
    french = client.get(f"/play/{game['keeper']}", headers={"Accept-Language": "fr-FR,fr;q=0.9"})
    html = french.get_data(as_text=True)
    assert '<html lang="fr">' in html and "À vous de jouer" in html
    assert "Accept-Language" in french.headers["Vary"]
    english = client.get(f"/play/{game['keeper']}", headers={"Accept-Language": "de, en;q=0.5"})
    assert '<html lang="en">' in english.get_data(as_text=True)
    assert "Your move" in client.get(f"/play/{game['keeper']}").get_data(as_text=True)


@pytest.mark.parametrize(
    ("accepted", "language"),
    [
        ("fr-FR, en;q=0.5", "fr"),  # a region's French first, English second
        ("fr-CH,en-GB;q=0.7,en;q=0.3", "fr"),
        ("en-GB, fr;q=0.5", "en"),  # and the other way round
        ("de-DE, fr_BE;q=0.8, en;q=0.5", "fr"),
        ("fr-FR, *;q=0.5", "fr"),
        ("de, *;q=0.5", "en"),
    ],
)
def test_the_browsers_first_language_wins_whatever_its_region(
    client, make_game, accepted: str, language: str
) -> None:
    """The language the browser prefers most of those the service speaks, a region's or not:
    English only second to a region's French is still second."""
    game = make_game()
    page = client.get(f"/play/{game['keeper']}", headers={"Accept-Language": accepted})
    assert f'<html lang="{language}">' in page.get_data(as_text=True)


@pytest.mark.parametrize(
    ("up", "said"),
    [
        (0, "0 carte de la piste sur 10 retournée"),
        (1, "1 carte de la piste sur 10 retournée"),
        (2, "2 cartes de la piste sur 10 retournées"),
    ],
)
def test_the_track_counts_its_cards_face_up_in_french(
    app, client, make_game, up: int, said: str
) -> None:
    """The track says how many of its cards are face up, a noun and its participle agreeing
    with the number: French reads 0 and 1 in the singular."""
    game = make_game(keeper_language="fr")
    with app.app_context():
        stored = db.session.get(Game, game["id"])
        stored.state = {**stored.state, "track": up}
        db.session.commit()
    page = client.get(f"/play/{game['keeper']}").get_data(as_text=True)
    assert f'aria-label="{said}"' in page
    with app.app_context():
        stored = db.session.get(Game, game["id"])
        stored.state = {**stored.state, "phase": "over", "winner": "keeper"}
        stored.status, stored.winner = "finished", "keeper"
        db.session.commit()
    finished = text_of(client.get(f"/play/{game['keeper']}").get_data(as_text=True))
    verb = "sont retournées" if up > 1 else "est retournée"
    assert f"Après la dernière manche, {said.rsplit(' ', 1)[0]} {verb}" in finished
    review = text_of(client.get(f"/play/{game['keeper']}/review").get_data(as_text=True))
    assert f"Le Gardien a gagné, {said}." in review


def test_the_switch_on_a_page_is_kept_in_a_cookie(client, make_game) -> None:
    game = make_game()
    response = client.get("/rules?lang=fr")
    assert "lang=fr" in response.headers["Set-Cookie"]
    assert "HttpOnly" in response.headers["Set-Cookie"]
    html = client.get(f"/play/{game['keeper']}", headers={"Accept-Language": "en"}).get_data(
        as_text=True
    )
    assert "À vous de jouer" in html
    assert 'href="?look=classic&amp;lang=en"' in client.get("/rules?look=classic").get_data(True)


def test_the_header_links_keep_the_players_language(app, client, make_game) -> None:
    """A page in the language its player chose, whatever the browser asks for, links to the
    rules and to the front page in that language too."""
    game = make_game(keeper_language="fr")
    english = {"Accept-Language": "en"}
    with app.app_context():
        home = f"/me/{home_token('kim@example.com')}"
        homes.set_language("kim@example.com", "fr")
        db.session.commit()
    for page in (f"/play/{game['keeper']}", home):
        shown = client.get(page, headers=english).get_data(as_text=True)
        assert '<html lang="fr">' in shown, page
        header = shown.split("</header>")[0]
        links = re.findall(r'<a class="(?:brand|rules-link)" href="([^"]+)"', header)
        assert len(links) == 2, page
        for link in links:
            followed = client.get(html.unescape(link), headers=english)
            assert '<html lang="fr">' in followed.get_data(as_text=True), (page, link)


@pytest.mark.parametrize("app_config", [{"BASE_URL": "https://splitmind.test"}])
def test_the_language_cookie_is_secure_when_the_service_is_served_over_https(client) -> None:
    """As the session's, whatever the request looks like here: behind a proxy that ends
    TLS, the service sees plain HTTP."""
    cookie = client.get("/rules?lang=fr").headers["Set-Cookie"]
    assert "lang=fr" in cookie and "Secure" in cookie and "HttpOnly" in cookie


def test_the_language_links_stay_on_the_site_whatever_the_path(client) -> None:
    """A link on the site to ``/\\evil.example`` is a page not found: its language links
    keep the path as the browser has it, never written out (a browser reads ``/\\`` as
    ``//``, another site)."""
    response = client.get("/%5Cevil.example?x=1")
    assert response.status_code == 404
    links = re.findall(r'href="([^"]*lang=[a-z]+)"', response.get_data(as_text=True))
    assert links == ["?x=1&amp;lang=en", "?x=1&amp;lang=fr"]


def test_the_players_choice_is_stored_by_a_post(app, client, make_game) -> None:
    game = make_game()
    response = client.post(f"/play/{game['shadow']}/language", data={"language": "fr"})
    assert response.status_code == 303
    assert response.headers["Location"].endswith(f"/play/{game['shadow']}?saved=language")
    assert "lang=fr" in response.headers["Set-Cookie"]
    saved = client.get(response.headers["Location"]).get_data(as_text=True)
    notice = "Enregistré\u00a0: la langue de vos pages et de vos e-mails, dans toutes vos parties."
    assert f'<p class="notice" role="status">{notice}</p>' in saved
    # The page read again, or by its plain link, says nothing more.
    assert notice not in client.get(f"/play/{game['shadow']}").get_data(as_text=True)
    # A page kept as rendered is not what the redirect shows: it adds what was saved.
    assert notice in client.get(response.headers["Location"]).get_data(as_text=True)
    with app.app_context():
        assert seat_player(game["id"], "shadow").language == "fr"
        # The address's language, its home page's, its other games' and its digest's.
        assert addresses.language("sam@example.com") == "fr"
    # On another device (no cookie, an English browser) the player's choice still holds.
    other_device = app.test_client()
    html = other_device.get(f"/play/{game['shadow']}", headers={"Accept-Language": "en"})
    assert "À vous de jouer" in html.get_data(as_text=True)
    assert client.post(f"/play/{game['shadow']}/language", data={"language": "xx"}).status_code == (
        400
    )


def test_a_refused_move_is_explained_in_french(app, client, make_game) -> None:
    game = make_game()
    client.set_cookie("lang", "fr")
    form = MoveForm(client.get(f"/play/{game['keeper']}").get_data(as_text=True))
    response = client.post(
        f"/play/{game['keeper']}", data={**form.hidden, "cards": form.checkboxes[:2]}
    )
    assert response.status_code == 422
    assert error_text(response.get_data(as_text=True)) == (
        "Donnez exactement 1 carte dans l’échange de la manche 1."
    )
    assert load_game(app, game["id"]).version == 0


def engine_rule_codes() -> set[str]:
    """Every ``RuleError`` code the engine can raise, read from its source."""
    source = (ROOT / "service" / "rules" / "engine.py").read_text()
    return set(re.findall(r'RuleError\(\s*"([a-z_]+)"', source))


@pytest.mark.parametrize("look", ["standard", "classic"])
def test_every_rule_of_the_engine_has_a_message(ctx: Flask, look: str) -> None:
    params = {"size": 2, "card": "4H", "held": 2, "suit": "H", "phase": "play"}
    codes = engine_rule_codes()
    assert {"choose_count", "exchange_elixir", "follow_suit", "follow_named"} <= codes
    for language in ("en", "fr"):
        with force_locale(language):
            for code in codes:
                message = game_text.rule_message(code, params, look=look, opponent="shadow")
                assert message and "%(" not in message, (language, code)


@pytest.mark.parametrize(
    ("size", "french"),
    [
        (1, "Vous ne donnez qu’une carte\u00a0: reposez-en une."),
        (2, "Vous ne donnez que 2 cartes\u00a0: reposez-en une."),
    ],
)
def test_too_many_cards_chosen_reads_as_french(ctx: Flask, size: int, french: str) -> None:
    """One card is written out ("qu’une"): "que 1 carte" is no French."""
    view = {"legal": {"choose": size, "must_include_elixir": False}, "hand": ["2H", "3H", "4H"]}
    with force_locale("fr"):
        assert json.loads(choose_reasons(view)["count"])[str(size + 1)] == french


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("en", ["You give only 1 card: put 2 back.", "You give only 1 card: put 3 back."]),
        (
            "fr",
            [
                "Vous ne donnez qu’une carte\u00a0: reposez-en 2.",
                "Vous ne donnez qu’une carte\u00a0: reposez-en 3.",
            ],
        ),
    ],
)
def test_cards_chosen_two_too_many_are_two_to_put_back(
    ctx: Flask, language: str, said: list[str]
) -> None:
    """Past one too many, the message counts the cards to put back: not "put one back"."""
    view = {"legal": {"choose": 1, "must_include_elixir": False}, "hand": ["2H", "3H", "4H", "5H"]}
    with force_locale(language):
        count = json.loads(choose_reasons(view)["count"])
    assert [count["3"], count["4"]] == said


@pytest.mark.parametrize(
    ("look", "opponent"), [("standard", "keeper"), ("standard", "shadow"), ("classic", "keeper")]
)
def test_the_seat_to_play_next_reads_as_french(ctx: Flask, look: str, opponent: str) -> None:
    """French contracts "à le" into "au": no message puts a seat, with its article, after "à"
    or "de"."""
    with force_locale("fr"):
        message = game_text.rule_message(
            "not_your_turn", {}, look=look, phase="play", opponent=opponent
        )
        seat = game_text.the_seat(opponent, look)
    assert not re.search(r"\b(à|de) (le|les) ", message), message
    assert seat in message


def test_english_messages_keep_the_engines_wording(ctx: Flask) -> None:
    """In the standard look the page's English is the engine's, less what the page shows."""
    state = new_game(seed=5)  # the Shadow is dealt three elixirs
    refusals = {
        ("keeper", "1H 2H"): "Give exactly 1 different card in the round 1 exchange.",
        ("shadow", "5H"): "You hold 3 elixirs: give at least one of them.",
    }
    for (seat, cards), expected in refusals.items():
        with pytest.raises(RuleError) as refused:
            apply(state, seat, {"exchange": cards.split()})
        error = refused.value
        assert game_text.rule_message(error.code, error.params, phase="exchange") == expected
        assert error.message.startswith(expected.rstrip("."))


def test_the_catalogue_is_complete_and_compiled() -> None:
    """Every string of the code and templates is translated, and the .mo matches the .po."""
    methods = [
        ("service/**.py", "python"),
        ("templates/**.html", "jinja2"),
        ("templates/**.txt", "jinja2"),
    ]
    keywords = {**DEFAULT_KEYWORDS, "_l": None}
    extracted = {
        message if isinstance(message, str) else message[0]
        for _file, _line, message, _comments, _context in extract_from_dir(
            str(ROOT), methods, keywords=keywords
        )
    }
    with open(CATALOGUE / "messages.po", "rb") as po:
        catalogue = read_po(po, locale="fr")
    translated = {m.id if isinstance(m.id, str) else m.id[0]: m for m in catalogue if m.id}
    missing = sorted(extracted - set(translated))
    assert not missing, f"run `make translations` and translate: {missing}"
    for msgid, message in translated.items():
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        assert all(strings) and not message.fuzzy, f"untranslated: {msgid!r}"
    # An entry kept as obsolete beside its live one is a duplicate to gettext's tools (msgfmt
    # refuses the file), though Babel reads it.
    revived = sorted(set(catalogue.obsolete) & set(translated))
    assert not revived, f"obsolete entries of live messages: delete them from the file: {revived}"
    with open(CATALOGUE / "messages.mo", "rb") as mo:
        compiled = gettext.GNUTranslations(mo)
    for msgid, message in translated.items():
        if isinstance(message.id, str):
            assert compiled.gettext(msgid) == message.string, f"run `make translations`: {msgid!r}"


def test_french_punctuation_keeps_to_its_word() -> None:
    """French puts a space before : ; ! ? » and after «, a no-break one, so that a line never
    starts with the mark; and its apostrophe is the typographic one."""
    with open(CATALOGUE / "messages.po", "rb") as po:
        catalogue = read_po(po, locale="fr")
    for message in filter(lambda message: message.id, catalogue):  # not the header
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        for text in strings:
            assert not re.search(r"\s(?<![\u00a0\u202f])[:;!?»]|«\s(?<![\u00a0\u202f])", text), text
            assert "'" not in text, text


def test_recipient_locale_renders_in_the_players_language(app: Flask, make_game) -> None:
    game = make_game()
    with app.app_context():
        player = seat_player(game["id"], "keeper")
        player.language = "fr"
        with recipient_locale(player):
            assert _("Your move") == "À vous de jouer"
            assert game_text.card_words("1H") == "1 (as) de cœur"
        with recipient_locale("en"):
            assert _("Your move") == "Your move"
        with recipient_locale(None):
            assert game_text.card_words("1H") == "1 (ace) of hearts"
        with recipient_locale("xx"):
            assert _("Your move") == "Your move"
    with app.test_request_context(headers={"Accept-Language": "fr"}):
        assert _("Your move") == "À vous de jouer"
        with recipient_locale("en"):
            assert _("Your move") == "Your move"


# The same words in each language: "Your move", "Keeper" and "2 cards".
WORDS = {
    "en": ("Your move", "Keeper", "2 cards"),
    "fr": ("À vous de jouer", "Gardien", "2 cartes"),
}
TEMPLATE = (
    "{{ _('Your move') }}|{{ gettext('Keeper') }}|"
    "{{ ngettext('%(num)d card', '%(num)d cards', 2) }}"
)


def read_in(expected: str) -> None:
    """The strings of templates and of Python, lazy ones too, are all in ``expected``."""
    assert tuple(render_template_string(TEMPLATE).split("|")) == WORDS[expected]
    python = (
        lang.gettext("Your move"),
        str(game_text.SEATS["standard"]["keeper"]),
        lang.ngettext("%(num)d card", "%(num)d cards", 2),
    )
    assert python == WORDS[expected]


@pytest.mark.parametrize(("page", "forced"), [("en", "fr"), ("fr", "en")])
def test_a_forced_language_holds_inside_a_request_and_ends_with_it(
    app: Flask, page: str, forced: str
) -> None:
    """The catalogue a request looked up once gives way to a forced language (an email to a
    reader of the other language, the API's English), and comes back after it."""
    with app.test_request_context(headers={"Accept-Language": page}):
        read_in(page)
        with force_locale(forced):
            read_in(forced)
            with recipient_locale(page):
                read_in(page)
            read_in(forced)
        read_in(page)
        with recipient_locale(forced):
            read_in(forced)
        read_in(page)


def test_an_email_in_french_from_an_english_request(app: Flask) -> None:
    """An email written while an English page renders is in its French reader's language,
    and the page's strings after it are English again."""
    invitation = SimpleNamespace(
        creator_name="Ann", opponent_name="Bob", opponent_email="bob@example.com"
    )
    with app.test_request_context(headers={"Accept-Language": "en"}):
        read_in("en")
        email = render(
            "confirm_address", "fr", invitation=invitation, url="http://x.test/c", stop_all=None
        )
        read_in("en")
        english = render(
            "confirm_address", "en", invitation=invitation, url="http://x.test/c", stop_all=None
        )
    assert email.subject == "Split Mind\u00a0: confirmez votre adresse pour une nouvelle partie"
    assert email.text.startswith("Bonjour,")
    assert '<html lang="fr">' in email.html
    assert english.subject == "Split Mind: confirm your address for a new game"
    assert english.text.startswith("Hello,")


def test_strings_outside_an_app_read_english() -> None:
    assert lang.gettext("Your move") == "Your move"
    assert lang.ngettext("%(num)d card", "%(num)d cards", 1) == "1 card"
    assert str(game_text.SEATS["standard"]["keeper"]) == "Keeper"


@pytest.mark.parametrize(
    ("query", "present", "absent"),
    [
        ("", ["the Keeper", "elixir", "♠", "hearts"], ["Hyde wins", "purple"]),
        ("?look=classic", ["Jekyll", "Hyde", "potion", "red"], ["Keeper", "elixir", "♠"]),
        ("?lang=fr", ["le Gardien", "élixir", "cœur", "Conseils"], ["the Keeper"]),
        ("?lang=fr&look=classic", ["Jekyll", "potion", "rouge"], ["Gardien", "élixir", "cœur"]),
    ],
)
def test_the_full_rules_in_both_languages_and_looks(
    client: FlaskClient, query: str, present: list[str], absent: list[str]
) -> None:
    response = client.get(f"/rules{query}")
    assert response.status_code == 200
    article = text_of(response.get_data(as_text=True).split("<article", 1)[1])
    for word in present:
        assert word in article, word
    for word in absent:
        assert word not in article, word


@pytest.mark.parametrize("look", ["standard", "classic"])
def test_the_french_rules_keep_each_colon_and_guillemet_on_its_words_line(
    client: FlaskClient, look: str
) -> None:
    """French puts a space before : ; ! ? and inside « »: a no-break one, or a narrow phone
    starts a line with the colon or the closing guillemet."""
    html = client.get(f"/rules?look={look}&lang=fr").get_data(as_text=True)
    article = html.split("<article", 1)[1].split("</article>", 1)[0]
    words = re.sub(r"<[^>]+>", "", article)
    loose = re.findall(r".{0,20}(?: [:;!?»]|« )", words)
    assert not loose, loose


@pytest.mark.parametrize("look", ["standard", "classic"])
@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_rules_name_each_effect_as_the_game_names_it(
    client: FlaskClient, look: str, language: str
) -> None:
    """The move page, its emails and the rules in short say "Swap: each gives 2 cards" (in
    French "Troc"): the full rules define each effect under that name, and no other."""
    html = client.get(f"/rules?look={look}&lang={language}").get_data(as_text=True)
    effects = html.split('<dl class="effects">', 1)[1].split("</dl>", 1)[0]
    terms = [text_of(term).strip() for term in re.findall(r"<dt>(.*?)</dt>", effects)]
    with client.application.app_context(), recipient_locale(language):
        names = [game_text.effect_name(effect, look) for effect in ("reset", "swap", "steal")]
    assert len(terms) == 3
    for term, name in zip(terms, names, strict=True):
        assert term.split(":", 1)[1].strip().casefold() == name.casefold(), (term, name)


@pytest.mark.parametrize("look", ["standard", "classic"])
@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_rules_say_how_to_write_a_move_in_a_reply(
    client: FlaskClient, look: str, language: str
) -> None:
    """In the cards' own words, then short; each example quoted reads as the move it shows."""
    html = client.get(f"/rules?look={look}&lang={language}").get_data(as_text=True)
    assert 'id="replies"' in html
    section = text_of(html.split('id="replies"', 1)[1].split("<h2", 1)[0])
    with client.application.app_context(), recipient_locale(language):
        words = [game_text.card_name(card, look) for card in ("6H", "4S", "3H", "5C")]
    assert all(word in section for word in words), section
    examples = re.findall(r"[“«]\s?([^”»]+?)\s?[”»]", section)
    expected = [(["6H"], None), (["4S"], "H"), (["3H", "5C"], None)]
    read = [(found.cards, found.name) for found in map(read_move, examples)]
    assert all(move in read for move in expected), (examples, read)
    assert all(move in expected for move in read), (examples, read)
    assert all(map(move_line, examples)), examples  # each on a line of its own is a move
    assert "4S H" in section and "3H 5C" in section


@pytest.mark.parametrize("look", ["standard", "classic"])
@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_rules_name_their_cards_and_symbols_in_words(
    client: FlaskClient, look: str, language: str
) -> None:
    """The full rules write cards as a move page does ("♠4½ beats a 4"): a screen reader
    hears each in words, and the examples of a reply, heard so, are still the moves shown."""
    html = client.get(f"/rules?look={look}&lang={language}").get_data(as_text=True)
    article = html.split("<article", 1)[1].split("</article>", 1)[0]
    said = Spoken(article)
    assert not re.search("[♥♦♣♠]", said.text), re.findall(".{30}[♥♦♣♠].{30}", said.text)
    with client.application.app_context(), recipient_locale(language):
        assert game_text.card_words("4S", look) in said.labels
    replies = Spoken(article.split('id="replies"', 1)[1].split("<h2", 1)[0]).text
    examples = re.findall(r"[“«]\s?([^”»]+?)\s?[”»]", replies)
    expected = [(["6H"], None), (["4S"], "H"), (["3H", "5C"], None)]
    read = [(found.cards, found.name) for found in map(read_move, examples)]
    assert all(move in read for move in expected), (examples, read)
    assert all(move in expected for move in read), (examples, read)


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_classic_look_reads_right_everywhere(client, make_game, language: str) -> None:
    game = make_game(seed=5, look="classic")
    client.set_cookie("lang", language)
    state = load_game(client.application, game["id"]).state
    moves = one_by_one(client.application, game["id"], 2)
    standard_words = {
        "en": ["Keeper", "Shadow", "elixir", "hearts", "diamonds", "clubs", "suit"],
        "fr": ["Gardien", "Ombre", "élixir", "cœur", "carreau", "trèfle"],
    }[language]
    for _step in range(40):
        for seat in SEATS:
            html = client.get(f"/play/{game[seat]}").get_data(as_text=True)
            words = text_of(html)
            for symbol in "♥♦♣♠":
                assert symbol not in words
            for word in standard_words:
                assert not re.search(rf"\b{word}", words, re.I), (word, words)
        if state["phase"] == "over":
            break
        _, _, state = next(moves)


# The Keeper leads an elixir naming clubs and the Shadow answers with a club: a Steal, but the
# Shadow has no trick yet to lose.
STEAL_FROM_NOBODY = ("4S 1D 2D 3D 4D 5D 6D 7D 1H 2H", "1C 2C 3C 4C 5C 6C 3H 4H 5H 6H")


@pytest.mark.parametrize("old_text", [False, True], ids=["facts", "facts and old English text"])
def test_a_french_reader_reads_the_engines_history_in_french(
    app: Flask, client: FlaskClient, make_game, old_text: bool
) -> None:
    game = make_game()  # Kim keeps, Sam is the Shadow
    state = play(playing(*STEAL_FROM_NOBODY), ("keeper", "4S", "C"), ("shadow", "2C"))
    assert state["history"][-1]["effect"] == "steal"
    if old_text:  # as stored by the engine before history entries held only facts
        english = "Steal: Shadow had no trick to take"
        state["history"] = [{**entry, "text": english} for entry in state["history"]]
    with app.app_context():
        stored = db.session.get(Game, game["id"])
        stored.state, stored.to_act = state, "keeper"
        db.session.commit()
    client.set_cookie("lang", "fr")
    # Sam, the Shadow, reads of himself as "vous".
    said = {"keeper": "Vol : rien à prendre à Sam", "shadow": "Vol : rien à vous prendre"}
    for seat in SEATS:
        words = text_of(client.get(f"/play/{game[seat]}").get_data(as_text=True))
        assert said[seat] in words, seat
        assert "Steal" not in words and "to take" not in words
    # The API's text is made from the same facts, in English, whatever is stored.
    history = client.get(f"/api/play/{game['keeper']}").get_json()["history"]
    assert [entry["text"] for entry in history] == ["Steal: nothing to take from Shadow"]


def french_forms(card: str) -> list[str]:
    """Every way a French page writes a card, in both looks."""
    return [game_text.card_name(card, look) for look in ("standard", "classic")] + [
        game_text.card_words(card, look) for look in ("standard", "classic")
    ]


def test_french_pages_name_no_hidden_card(app, client, make_game) -> None:
    game = make_game(seed=2024)
    client.set_cookie("lang", "fr")
    state = load_game(app, game["id"]).state
    moves = one_by_one(app, game["id"], 8)
    with app.test_request_context(headers={"Accept-Language": "fr"}):
        forms = {card: french_forms(card) for card in DECK}
    assert forms["1H"][2] == "1 (as) de cœur"
    for _step in range(300):
        if state["phase"] == "over":
            break
        for seat in SEATS:
            html = client.get(f"/play/{game[seat]}").get_data(as_text=True)
            for card in hidden_cards(state, seat):
                for form in forms[card]:
                    pattern = rf"(?<![0-9A-Za-z]){re.escape(form)}(?![0-9A-Za-z½+])"
                    assert not re.search(pattern, html), f"{seat} sees {card} as {form!r}"
        _, _, state = next(moves)
    else:
        raise AssertionError("the game did not end")


def test_choosing_a_language_by_link_writes_nothing(app, client, make_game) -> None:
    from .test_safe_methods import snapshot

    game = make_game()
    before = snapshot(app)
    for url in (f"/play/{game['keeper']}?lang=fr", "/rules?lang=fr&look=classic", "/?lang=en"):
        assert client.get(url).status_code == 200
        assert client.head(url).status_code == 200
    assert snapshot(app) == before


def test_french_elides_de_and_que_before_a_name_that_starts_with_a_vowel(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """ "Coup d’Ann", "En attente d’Ann": French drops the e of "de" before a vowel. The
    catalogue writes "de %(name)s"; the name is known when the message is formatted. Other
    names, and other languages, keep "de"."""
    game = make_game(keeper_language="fr", shadow_name="Ann", shadow_language="fr", days_per_move=3)
    page = html.unescape(client.get(f"/play/{game['keeper']}").get_data(as_text=True))
    assert "d’Ann" in page and "de Ann" not in page
    sam = html.unescape(client.get(f"/play/{game['shadow']}").get_data(as_text=True))
    assert "de Kim" in sam
    with app.app_context(), force_locale("fr"):
        assert lang.gettext("Waiting for %(name)s.", name="Ève") == "En attente d’Ève."
        assert lang.gettext("Waiting for %(name)s.", name="Kim") == "En attente de Kim."
        assert render_template_string("{{ _('Waiting for %(name)s.', name='Ann') }}") == (
            "En attente d’Ann."
        )
    with app.app_context(), force_locale("en"):
        assert lang.gettext("Waiting for %(name)s.", name="Ann") == "Waiting for Ann."


def test_every_rules_link_of_a_page_in_the_players_language_carries_it(
    client: FlaskClient, make_game
) -> None:
    """A player who chose French, reading from an English browser: the header's rules link
    and the one under the short rules both open the rules in French."""
    token = make_game(keeper_language="fr")["keeper"]
    page = client.get(f"/play/{token}", headers={"Accept-Language": "en"}).get_data(as_text=True)
    assert 'lang="fr"' in page
    rules = re.findall(r'href="(/rules[^"]*)"', page)
    assert len(rules) >= 2
    assert all("lang=fr" in link for link in rules), rules
