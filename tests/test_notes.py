"""Notes to the opponent: stored with a move, shown escaped and isolated, refused when too
long or holding control or invisible formatting characters, turned off by either player,
read by admins once a game is over."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from service import games, notes
from service.games import Seating
from service.links import token_for
from service.models import Event, OutboxMessage, db
from service.rules import SEATS
from service.unit_of_work import transaction

from .admin.conftest import admin, admin_account  # noqa: F401  (fixtures)
from .helpers import MoveForm, form_data, pick_action, write_queued

HOSTILE = '<script>alert("x")</script> & <b>bold</b>'


def view_of(client: FlaskClient, token: str) -> dict[str, Any]:
    return client.get(f"/api/play/{token}").get_json()


def move(client: FlaskClient, token: str, rng: random.Random, **extra: Any) -> Any:
    """Post a random legal move through the API, with ``extra`` keys such as the note."""
    view = view_of(client, token)
    body = {"version": view["version"], **pick_action(view, rng), **extra}
    return client.post(f"/api/play/{token}", json=body)


def to_move(client: FlaskClient, game: dict[str, Any]) -> str:
    """A seat that owes a move."""
    return next(seat for seat in SEATS if view_of(client, game[seat])["your_turn"])


def notes_of(app: Flask, game_id: int) -> list[str | None]:
    with app.app_context():
        return list(
            db.session.scalars(
                select(Event.note)
                .where(Event.game_id == game_id, Event.kind == "move")
                .order_by(Event.id)
            )
        )


def page(client: FlaskClient, token: str) -> str:
    response = client.get(f"/play/{token}")
    assert response.status_code == 200
    return response.get_data(as_text=True)


def test_a_note_reaches_the_opponent_escaped(app: Flask, client: FlaskClient, make_game) -> None:
    game = make_game(seed=3)
    rng = random.Random(1)
    assert move(client, game["keeper"], rng, note=HOSTILE).status_code == 200
    assert notes_of(app, game["id"]) == [HOSTILE]
    theirs = page(client, game["shadow"])
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in theirs
    assert "<script>alert" not in theirs
    assert "Notes from Kim" in theirs
    # The writer does not read their own note as the opponent's.
    assert "&lt;script&gt;" not in page(client, game["keeper"])


def test_the_page_form_takes_a_note(app: Flask, client: FlaskClient, make_game) -> None:
    game = make_game(seed=4)
    rng = random.Random(2)
    html = page(client, game["keeper"])
    assert 'name="note" maxlength="280"' in html
    data = form_data(MoveForm(html), pick_action(view_of(client, game["keeper"]), rng))
    response = client.post(f"/play/{game['keeper']}", data={**data, "note": "Bonne chance"})
    assert response.status_code == 303
    assert notes_of(app, game["id"]) == ["Bonne chance"]
    assert "Bonne chance" in page(client, game["shadow"])


def test_a_second_tap_does_not_offer_the_note_sent_again(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """The note went with the move the second tap repeats: the page refusing it, which offers
    the Keeper's lead next, does not fill it in again, to be sent twice with the lead. A note
    the move did not carry (another tab's) comes back as typed."""
    game = make_game(seed=4)
    rng = random.Random(2)
    assert move(client, game["shadow"], rng).status_code == 200  # the first half of the exchange
    html = page(client, game["keeper"])
    data = form_data(MoveForm(html), pick_action(view_of(client, game["keeper"]), rng))
    sent = {**data, "note": "Bonne chance"}
    assert client.post(f"/play/{game['keeper']}", data=sent).status_code == 303
    for note, shown in (("Bonne chance", ""), ("Autre chose", "Autre chose")):
        response = client.post(f"/play/{game['keeper']}", data={**data, "note": note})
        assert response.status_code == 409
        assert f'name="note" maxlength="280" autocomplete="off" value="{shown}"' in response.text
    assert notes_of(app, game["id"]) == [None, "Bonne chance"]


def refused_both_ways(client: FlaskClient, token: str, note: str) -> tuple[dict[str, str], str]:
    """Send ``note`` with a legal move through the API, then through the page's form: both
    are refused with 400. Returns the API's error and the page's HTML."""
    rng = random.Random(3)
    response = move(client, token, rng, note=note)
    assert response.status_code == 400
    error = response.get_json()["error"]
    data = form_data(MoveForm(page(client, token)), pick_action(view_of(client, token), rng))
    response = client.post(f"/play/{token}", data={**data, "note": note})
    assert response.status_code == 400
    return error, response.get_data(as_text=True)


@pytest.mark.parametrize(
    "note",
    ["x" * 281, "two\nlines", "tab\there", "bell\x07", "c1\x85", "line\u2028sep", "para\u2029sep"],
)
def test_a_bad_note_changes_nothing(app: Flask, client: FlaskClient, make_game, note) -> None:
    game = make_game(seed=5)
    error, html = refused_both_ways(client, game["keeper"], note)
    assert error["code"] == "malformed"
    assert "A note holds at most 280 characters" in html
    assert notes_of(app, game["id"]) == []
    assert view_of(client, game["keeper"])["version"] == 0


def test_a_refused_note_is_tied_to_its_field_and_keeps_the_cards_chosen(
    client: FlaskClient, make_game
) -> None:
    """The field of a refused note says it is invalid and points at the refusal, for a screen
    reader; the cards chosen to give are ticked again, as they were sent."""
    game = make_game(seed=5)
    sent = {"version": 0, "kind": "exchange", "cards": ["7D"], "note": "two\nlines"}
    response = client.post(f"/play/{game['keeper']}", data=sent)
    assert response.status_code == 400
    html = response.get_data(as_text=True)
    assert '<p class="error" role="alert" id="move-error">A note holds at most' in html
    assert 'aria-invalid="true" aria-describedby="move-error"' in html
    assert re.search(r'<input type="checkbox" name="cards" value="7D"[^>]* checked>', html)
    # A refusal about no field marks none.
    other = client.post(f"/play/{game['keeper']}", data={**sent, "note": "", "cards": []})
    assert other.status_code == 422
    assert "aria-invalid" not in other.get_data(as_text=True)


@pytest.mark.parametrize("note", [None, "", "   "])
def test_a_null_or_blank_note_is_no_note(app: Flask, client: FlaskClient, make_game, note) -> None:
    """As the OpenAPI document says of a move's note."""
    game = make_game(seed=5)
    assert move(client, game["keeper"], random.Random(5), note=note).status_code == 200
    assert notes_of(app, game["id"]) == [None]


# Invisible format characters (Unicode Cf) that can change how a note reads: a right-to-left
# override, a left-to-right embedding, isolates, marks, the Arabic letter mark, the zero
# width space, the byte order mark.
INVISIBLE = [
    "gg \u202eevah I\u202c ok",
    "a\u202ab",
    "\u2066x\u2069",
    "\u2067x\u2069",
    "\u2068x\u2069",
    "left\u200e",
    "right\u200f",
    "arabic\u061c",
    "zero\u200bwidth",
    "\ufeffbom",
    "h\u3164i",
    "\u115f",
    "a\u2062b",
]


@pytest.mark.parametrize("note", INVISIBLE)
def test_a_note_with_invisible_formatting_changes_nothing(
    app: Flask, client: FlaskClient, make_game, note
) -> None:
    game = make_game(seed=5, keeper_language="fr")
    error, html = refused_both_ways(client, game["keeper"], note)
    assert error["code"] == "malformed" and "invisible formatting" in error["message"]
    assert "caractères de mise en forme invisibles" in html
    assert notes_of(app, game["id"]) == []
    assert view_of(client, game["keeper"])["version"] == 0


# What people write that holds format characters of its own: a family emoji (the joiner),
# a Persian word (the non-joiner), the flag of Wales (tags), a soft hyphen, a word joiner.
WRITTEN = (
    "\U0001f469\u200d\U0001f467 \u05e9\u05dc\u05d5\u05dd",
    "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
    "\U0001f3f4\U000e0067\U000e0062\U000e0077\U000e006c\U000e0073\U000e007f",
    "co\u00adoperate",
    "a\u2060b",
)


@pytest.mark.parametrize("note", WRITTEN)
def test_a_note_keeps_the_format_characters_of_written_text_and_reads_isolated(
    app: Flask, client: FlaskClient, make_game, note
) -> None:
    game = make_game(seed=6)
    assert move(client, game["keeper"], random.Random(4), note=note).status_code == 200
    assert notes_of(app, game["id"]) == [note]
    assert f"<li><bdi>{note}</bdi></li>" in page(client, game["shadow"])


def test_a_note_of_280_characters_and_a_non_string(app, client: FlaskClient, make_game) -> None:
    game = make_game(seed=6)
    rng = random.Random(4)
    assert move(client, game["keeper"], rng, note=17).status_code == 400
    half = move(client, game["keeper"], rng, note="\ud800 a half")
    assert half.status_code == 400
    assert half.get_json()["error"]["message"] == (
        'a note cannot hold a lone surrogate ("\\ud800" to "\\udfff"), half a character'
    )
    assert move(client, game["keeper"], rng, note="é" * 280).status_code == 200
    assert notes_of(app, game["id"]) == ["é" * 280]


def test_either_player_turns_notes_off(app: Flask, client: FlaskClient, make_game) -> None:
    game = make_game(seed=7)
    rng = random.Random(5)
    assert move(client, game["keeper"], rng, note="Zanzibar").status_code == 200
    assert "Zanzibar" in page(client, game["shadow"])
    response = client.post(f"/play/{game['shadow']}/notes-off")
    assert response.status_code == 303
    for seat in SEATS:
        html = page(client, game[seat])
        assert "Zanzibar" not in html and 'name="note"' not in html
        assert "Turn notes off" not in html
        # Both players are told, the one who did not turn them off too.
        assert "Notes are off in this game: neither of you can send one." in html
    # A note sent anyway is dropped, not kept for later.
    assert move(client, game["shadow"], rng, note="hidden").status_code == 200
    assert notes_of(app, game["id"]) == ["Zanzibar", None]
    # Turning off twice is harmless.
    assert client.post(f"/play/{game['keeper']}/notes-off").status_code == 303
    assert client.get(f"/play/{game['keeper']}/notes-off").status_code == 405


def test_the_turn_email_holds_the_opponents_notes(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game(seed=8)
    rng = random.Random(6)
    for number in range(40):
        seat = to_move(client, game)
        assert move(client, game[seat], rng, note=f"{HOSTILE} {number}").status_code == 200
        write_queued(app)
        with app.app_context():
            turns = db.session.scalars(
                select(OutboxMessage).where(
                    OutboxMessage.kind == "turn", OutboxMessage.game_id == game["id"]
                )
            ).all()
            if turns:
                email = turns[-1]
                break
    else:
        raise AssertionError("no turn email")
    assert " wrote:" in email.text_body and f"“{HOSTILE} " in email.text_body
    assert "&lt;script&gt;" in email.html_body and "<script>" not in email.html_body


def test_a_note_with_the_first_half_of_an_exchange_reaches_the_second_by_email(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """Kim exchanges with a note; Sam, who never opens the page, exchanges too (against the
    same version). Sam's next turn email holds Kim's note: no email had shown it."""
    game = make_game(seed=8)
    rng = random.Random(6)
    assert move(client, game["keeper"], rng, note="Good luck, Sam!").status_code == 200
    assert move(client, game["shadow"], rng).status_code == 200
    for _ in range(10):
        if view_of(client, game["shadow"])["your_turn"]:
            break
        assert move(client, game["keeper"], rng).status_code == 200
    write_queued(app)
    with app.app_context():
        email = db.session.scalars(
            select(OutboxMessage)
            .where(OutboxMessage.kind == "turn", OutboxMessage.recipient == "sam@example.com")
            .order_by(OutboxMessage.id.desc())
        ).first()
        assert email is not None and email.text_body is not None
        assert "“Good luck, Sam!”" in email.text_body


def test_the_end_of_a_round_and_of_the_game_hold_the_note_that_came_with_it(
    app: Flask, client: FlaskClient, make_game
) -> None:
    """A note with the move that ends a round (or the game) is in the emails that move
    causes: a player who follows the game by email sees it there or nowhere."""
    game = make_game(seed=8)
    rng = random.Random(6)
    ends: list[tuple[str, str, str]] = []  # (email kind, recipient, the note it must hold)
    for number in range(200):
        seat = to_move(client, game)
        before = view_of(client, game[seat])
        note = f"note {number} from the {seat}"
        assert move(client, game[seat], rng, note=note).status_code == 200
        after = view_of(client, game[seat])
        other = "shadow" if seat == "keeper" else "keeper"
        if after["phase"] == "over":
            ends.append(("game_over", f"{'sam' if other == 'shadow' else 'kim'}@example.com", note))
            write_queued(app)
            break
        if len(after["rounds"]) > len(before["rounds"]):
            ends.append(("round_end", f"{'sam' if other == 'shadow' else 'kim'}@example.com", note))
        write_queued(app)  # as the worker would, before the next move
    assert [kind for kind, _, _ in ends].count("round_end") >= 2
    assert ends[-1][0] == "game_over"
    with app.app_context():
        for kind, recipient, note in ends:
            bodies = [
                (email.text_body or "", email.html_body or "")
                for email in db.session.scalars(
                    select(OutboxMessage).where(
                        OutboxMessage.kind == kind, OutboxMessage.recipient == recipient
                    )
                )
            ]
            assert any(f"“{note}”" in text and note in html for text, html in bodies), (
                kind,
                note,
            )


def test_the_api_gives_the_opponents_notes_and_whether_notes_are_on(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game(seed=8)
    rng = random.Random(6)
    assert client.get(f"/api/play/{game['shadow']}/notes").get_json() == {"on": True, "notes": []}
    for number in range(5):
        seat = to_move(client, game)
        assert move(client, game[seat], rng, note=f"{seat} {number}").status_code == 200
    shadows = client.get(f"/api/play/{game['shadow']}/notes").get_json()
    keepers = notes_of(app, game["id"])
    written = [note for note in keepers if note and note.startswith("keeper")]
    assert shadows == {"on": True, "notes": written[-3:]}
    assert client.post(f"/play/{game['keeper']}/notes-off").status_code == 303
    off = {"on": False, "notes": []}
    assert client.get(f"/api/play/{game['shadow']}/notes").get_json() == off
    assert client.get(f"/api/play/{game['keeper']}/notes").get_json() == off
    assert client.get(f"/api/play/{game['keeper']}x/notes").status_code == 404
    assert client.post(f"/api/play/{game['keeper']}/notes").status_code == 405


def test_admins_read_notes_of_finished_games_only(
    app: Flask,
    client: FlaskClient,
    make_game,
    admin,  # noqa: F811
) -> None:
    game = make_game(seed=9)
    rng = random.Random(7)
    assert move(client, game["keeper"], rng, note="secret plan").status_code == 200
    live = admin.get(f"/admin/games/{game['id']}").get_data(as_text=True)
    assert "secret plan" not in live
    with app.app_context(), transaction():
        games.cancel_game(game["id"], "test")
    over = admin.get(f"/admin/games/{game['id']}").get_data(as_text=True)
    assert "<h2>Notes</h2>" in over and "secret plan" in over


def test_the_french_page_offers_notes(client: FlaskClient, make_game) -> None:
    game = make_game(seed=10, keeper_language="fr")
    html = page(client, game["keeper"])
    assert "Un mot pour Sam" in html and "Couper les mots pour cette partie" in html


def test_the_api_document_allows_a_note_on_every_move(client: FlaskClient) -> None:
    schemas = client.get("/api/openapi.json").get_json()["components"]["schemas"]
    for name in ("PlayMove", "ExchangeMove", "SwapMove"):
        note = schemas[name]["properties"]["note"]
        assert note["type"] == ["string", "null"] and note["maxLength"] == 280
        assert "note" not in schemas[name]["required"]


def test_no_notes_against_the_computer(app: Flask, client: FlaskClient) -> None:
    with app.app_context(), transaction():
        game = games.create_game(Seating("kim@example.com", "Kim"), Seating.the_computer("easy"))
        token, game_id = token_for(game.player("keeper")), game.id
    html = page(client, token)
    assert 'name="note"' not in html and "Turn notes off" not in html
    assert "Notes are off" not in html  # there never were any
    # The API says so, and drops a note sent anyway, as it does while notes are off.
    assert client.get(f"/api/play/{token}/notes").get_json() == {"on": False, "notes": []}
    assert move(client, token, random.Random(3), note="Zanzibar").status_code == 200
    assert notes_of(app, game_id) == [None]


def test_a_closed_game_keeps_its_notes_without_the_button(
    app: Flask, client: FlaskClient, make_game
) -> None:
    game = make_game(seed=11)
    assert move(client, game["keeper"], random.Random(8), note="Zanzibar").status_code == 200
    with app.app_context(), transaction():
        games.cancel_game(game["id"], "test")
    html = page(client, game["shadow"])
    assert "Zanzibar" in html and "Turn notes off" not in html


def test_a_note_drops_the_tags_outside_a_flag_which_carry_text_no_one_sees() -> None:
    wales = WRITTEN[2]
    hidden = "\U000e0041\U000e0042"
    assert notes.clean(f"hi{hidden} from {wales}") == f"hi from {wales}"
    assert notes.clean(f"{wales[1:]} flag-less") == "flag-less"
    assert notes.clean(hidden) is None
    # A flag holds a subdivision's code, not a sentence in tags.
    smuggled = "\U0001f3f4" + "".join(chr(0xE0000 + ord(c)) for c in "resignnow") + "\U000e007f"
    assert notes.clean(f"gg {smuggled}") == "gg \U0001f3f4"
    assert notes.from_reply([f"hi{hidden} from {wales}"]) == f"hi from {wales}"
