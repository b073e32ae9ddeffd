"""Reading a reply: the move in its text, above the quote, and whether a person wrote it."""

from __future__ import annotations

from email import message_from_bytes
from email.message import EmailMessage

import pytest

from service.notes import MAX_LENGTH, from_reply
from service.replies.inbound import READING_POLICY
from service.replies.reading import (
    READ_CHARS,
    Understood,
    automatic,
    body_text,
    html_to_text,
    move_line,
    read_move,
    read_reply,
)
from service.rules.cards import HAND_SIZE

MOVES = [
    ("5H", ["5H"], None),
    ("5h", ["5H"], None),
    ("4S H", ["4S"], "H"),
    ("3H 5C", ["3H", "5C"], None),
    ("play the 5 of hearts", ["5H"], None),
    ("Play the ace of diamonds please", ["1D"], None),
    # The ace as the pages name it in words, its face first, or as a player shortens that.
    ("1 (ace) of hearts", ["1H"], None),
    ("play the 1 ace of hearts", ["1H"], None),
    ("je joue le 1 (as) de trèfle", ["1C"], None),
    ("1 (as) vert", ["1D"], None),
    ("jouer 4♠ cœur", ["4S"], "H"),
    ("give 3H and 5C", ["3H", "5C"], None),
    ("5♥", ["5H"], None),
    ("♠4 ♦", ["4S"], "D"),
    ("je donne le 7 de trèfle et l’as de carreau", ["7C", "1D"], None),
    ("Jouer le cinq de cœur", ["5H"], None),
    ("red 5", ["5H"], None),
    ("potion 4+ naming green", ["4S"], "D"),
    # A colour agrees with the card it names, "une carte violette", as "verte" does.
    ("je joue la potion 4+, violette", ["4S"], "C"),
    ("je joue la potion 4+, verte", ["4S"], "D"),
    ("4 of spades, naming clubs", ["4S"], "C"),
    ("5H, c'est tout", ["5H"], None),
    ("My move: 5H", ["5H"], None),
    ("Move: 5H", ["5H"], None),
    ("Mon coup : 5H", ["5H"], None),
    ("je mets le 5 de cœur", ["5H"], None),
    ("je pose l'as de carreau", ["1D"], None),
    ("I have 5 hours and 2 cards to spare", [], None),
    ("hello there", [], None),
    # "un", "une" and "one" are "a" as often as the ace: no card is read from them.
    ("Je joue un carreau, à toi !", [], None),
    ("Je joue une carte de cœur", [], None),
    ("I will play one heart", [], None),
    ("je joue l'as de carreau", ["1D"], None),
    # The French ace is "l'as de …": the English "as" before a suit is no card.
    ("play 4S as hearts", ["4S"], "H"),
    ("give 4S and 3H, as hearts are useless", ["4S", "3H"], None),
    ("Tu as cœur ?", [], None),  # "do you have hearts?"
    ("Tu as trèfle ?", [], None),
    ("7S", ["7S"], None),
    ("play 4S, and I'd name hearts", ["4S"], "H"),
    ("Je joue 4S, c'est cœur", ["4S"], "H"),
    ("4♠ d'accord, cœur", ["4S"], "H"),
    ("4 d'élixir, cœur", ["4S"], "H"),
    ("4S, H", ["4S"], "H"),
    ("4S H hearts", ["4S"], "H"),
    ("4S then c", ["4S"], None),
    # Cards as the emails show them, a symbol after the rank, however they are separated:
    # the symbol of one card never takes the next one's rank.
    ("give 5♥ 6♥", ["5H", "6H"], None),
    ("give 3♥ 5♣", ["3H", "5C"], None),
    ("3♥\n5♣", ["3H", "5C"], None),
    ("5♥\n6♥\n7♥", ["5H", "6H", "7H"], None),
    ("5♥ ♠4", ["5H", "4S"], None),
    ("♠3½ ♥", ["3S"], "H"),
    ("give ♠3½ ♠4½", ["3S", "4S"], None),
    ("♠3½\n♠4½", ["3S", "4S"], None),
    ("give 5♥ ♠3½ ♠4½", ["5H", "3S", "4S"], None),
    ("give ♥5 ♥6", ["5H", "6H"], None),
    ("♥5 ♠4", ["5H", "4S"], None),
    ("4♦6♦", ["4D", "6D"], None),
    ("give 3♥5♣, thanks", ["3H", "5C"], None),
    ("♠4♦", ["4S"], "D"),
    # A symbol away from the card still names its suit.
    ("♠2½, I name ♣", ["2S"], "C"),
    ("play ♠4½ naming ♥", ["4S"], "H"),
    ("je joue ♠4½, je nomme ♦", ["4S"], "D"),
    ("♥ is my favourite, I play 5♣", ["5C"], None),
    ("I am going to play the seven of diamonds now, nice lead.", ["7D"], None),
    # A word of praise before a sentence's own verb leaves that verb a move's.
    ("Good, I play 5H", ["5H"], None),
    ("Great game! Give 3H 5C", ["3H", "5C"], None),
]


@pytest.mark.parametrize(("text", "cards", "name"), MOVES)
def test_a_move_in_words_symbols_or_notation(text: str, cards: list[str], name: str) -> None:
    assert read_move(text) == Understood(cards, name)


@pytest.mark.parametrize(
    ("text", "cards", "name"),
    [
        # A half written with a decimal comma, as French writes it, or point, or as a fraction:
        # the elixir 4½, never the 5 after the comma nor the 2 under the fraction bar.
        ("4,5 de pique", ["4S"], None),
        ("je joue le 2,5 de pique en annonçant cœur", ["2S"], "H"),
        ("4.5 of spades", ["4S"], None),
        ("4,5♠", ["4S"], None),
        ("4 1/2 of spades, naming hearts", ["4S"], "H"),
        ("je donne 3 1/2 pique et 7 de carreau", ["3S", "7D"], None),
        ("give 5,5S", ["5S"], None),
        # A list of ranks stays one: "4, 5" is two numbers.
        ("4, 5 de cœur", ["5H"], None),
        # A rank with its half is an elixir's, never a colour card's: a suit after it is the
        # suit the elixir names, when the elixir is named by its word or symbol.
        ("4½ de cœur", [], None),
        ("4,5 ♥", [], None),
        ("4½♠", ["4S"], None),
        ("élixir 4½ ♥", ["4S"], "H"),
        ("elixir 4,5 ♦", ["4S"], "D"),
        ("4+ of spades", ["4S"], None),
    ],
)
def test_an_elixirs_half_written_as_a_decimal_or_a_fraction(
    text: str, cards: list[str], name: str | None
) -> None:
    assert read_move(text) == Understood(cards, name)


@pytest.mark.parametrize("text", ["4S hearts, no, diamonds", "4S H D", "♠4 ♦ ♣"])
def test_two_suits_named_are_no_name(text: str) -> None:
    assert read_move(text) == Understood(["4S"], None, two_suits=True)


def test_each_card_is_read_once_and_at_most_a_hand_and_one() -> None:
    assert read_move("7s " * 100_000) == Understood(["7S"])
    every = [f"{rank}{suit}" for suit in "HDCS" for rank in "1234567"]
    assert read_move(" ".join(every * 2)).cards == every[: HAND_SIZE + 1]


def test_the_move_is_read_around_the_quote_and_above_the_signature() -> None:
    text = (
        "Hi!\n\n3C\n\nKim\n-- \nKim Smith, 5H Street\n\n"
        "On Tue, 1 Dec 2026 at 07:00, Split Mind <splitmind@example.org> wrote:\n"
        "> Sam led 5♥: your answer\n> 5H\n"
    )
    assert read_reply(text).written == "Hi!\n3C\nKim"  # the quote below the signature is not read
    wrapped = "5D\nOn Tue, 1 Dec 2026 at 07:00, Split Mind <\nsplitmind@example.org> wrote:\n> 3C"
    assert read_move(read_reply(wrapped).written).cards == ["5D"]
    french = "7♣\n\nLe mar. 1 déc. 2026 à 07:00, Split Mind <s@example.org> a écrit :\n> 5♥"
    assert read_move(read_reply(french).written).cards == ["7C"]
    outlook = "2H\n\n________________________________\nFrom: Split Mind <s@example.org>\n5H"
    assert read_move(read_reply(outlook).written).cards == ["2H"]
    below = "On Tue, Split Mind wrote:\n> Your move\n> Kim led 5H\n\n6H\n"
    assert read_move(read_reply(below).written).cards == ["6H"]  # bottom posting


def test_html_is_read_without_its_quote() -> None:
    html = (
        "<html><head><style>p{color:red}</style></head><body><div dir=ltr>Play the "
        "<b>6&nbsp;of hearts</b><br>thanks</div><div class=gmail_quote>On Tue wrote:"
        "<blockquote>Kim led 5H</blockquote></div></body></html>"
    )
    text = html_to_text(html)
    assert "5H" not in text and "color" not in text
    assert read_move(read_reply(text).written).cards == ["6H"]


def test_html_from_outlook_is_read_up_to_its_copy_of_the_email() -> None:
    html = (
        '<div>5D</div><div id="appendonsend"></div><hr><div id="divRplyFwdMsg">'
        "<b>From:</b> Split Mind</div><div>Your legal moves: 5H, 6H</div>"
    )
    assert read_move(read_reply(html_to_text(html)).written).cards == ["5D"]


def _message(**headers: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = headers.pop("From", "Kim <kim@example.com>")
    for key, value in headers.items():
        message[key.replace("_", "-")] = value
    message.set_content("5H")
    return message


def test_a_person_s_reply_is_not_automatic() -> None:
    assert automatic(_message(Subject="Re: your move"), "kim@example.com") is None
    assert automatic(_message(Auto_Submitted="no"), "kim@example.com") is None


@pytest.mark.parametrize(
    "headers",
    [
        {"Auto_Submitted": "auto-replied"},
        {"Precedence": "bulk"},
        {"Precedence": "junk"},
        {"X_Autoreply": "yes"},
        {"Subject": "Out of office: back on Monday"},
        {"Subject": "Réponse automatique : absent"},
        {"Subject": "Risposta automatica: fuori ufficio"},
        {"Subject": "Respuesta automática: de vacaciones"},
        {"Subject": "Resposta automática: ausente"},
        {"Subject": "Automatisch antwoord: afwezig"},
        {"Subject": "Afwezig: tot maandag"},
        {"From": "MAILER-DAEMON@example.com"},
        {"Precedence": "auto_reply"},
        {"Subject": "Auto Response: Re: your move"},
        {"Subject": "Automatic response: I am away"},
        {"Subject": "Autoresponse: back soon"},
        {"Subject": "Automatiskt svar: Split Mind"},
        {"Subject": "Automatisk svar: Split Mind"},
        {"Subject": "Autosvar: Split Mind"},
        {"Subject": "Automaattinen vastaus: Split Mind"},
        {"Subject": "Automatyczna odpowiedź: Split Mind"},
        {"Subject": "Odpowiedź automatyczna: Split Mind"},
        {"Subject": "Automatická odpověď: Split Mind"},
        {"Subject": "Otomatik yanıt: Split Mind"},
        {"Subject": "Автоматический ответ: Split Mind"},
        {"Subject": "自動応答: Split Mind"},
        {"Subject": "自动回复: Split Mind"},
        {"From": "Mail Delivery Subsystem <mailer_daemon@example.com>"},
        {"From": "do-not-reply@example.com"},
        {"From": "donotreply@example.com"},
    ],
)
def test_auto_replies_and_bounces_are_told_apart(headers: dict[str, str]) -> None:
    assert automatic(_message(**headers), "kim@example.com") is not None


def test_a_bounce_has_a_null_sender_or_a_report() -> None:
    assert automatic(_message(), "") is not None
    # Read from a mailbox: the envelope sender its server wrote down.
    assert automatic(_message(Return_Path="<>")) is not None
    assert automatic(_message(Return_Path="<kim@example.com>")) is None
    report = EmailMessage()
    report["From"] = "kim@example.com"
    report.set_content("failed")
    report.add_attachment("x", subtype="delivery-status")
    report.replace_header("Content-Type", "multipart/report; report-type=delivery-status")
    assert automatic(report, "x@example.com") is not None


@pytest.mark.parametrize(
    ("html", "text"),
    [
        # A line per <div>, as iOS Mail, Outlook and webmail write them; <div><br></div> is
        # an empty line; paragraphs are set apart by one.
        ("<div>7D</div><div>Nice lead, Kim.</div>", "7D\nNice lead, Kim."),
        ("<div>7D</div>\n<div>Nice lead, Kim.</div>", "7D\nNice lead, Kim."),
        ("<div>7D</div><div><br></div><div>Cheers</div>", "7D\n\nCheers"),
        ("<div><div>7D</div></div><div>Nice</div>", "7D\nNice"),
        ("7D<br>Nice lead", "7D\nNice lead"),
        ("<div>7D<br/>Nice lead</div>", "7D\nNice lead"),
        ("<div>7D</div><div>&nbsp;</div><div>Cheers</div>", "7D\n\nCheers"),
        ("<p>7D</p><p>Cheers</p>", "7D\n\nCheers"),
        # Outlook on the desktop: a paragraph a line, an empty one holding a no-break space.
        (
            "<p class=MsoNormal>7D</p><p class=MsoNormal>Nice lead</p>"
            "<p class=MsoNormal><o:p>&nbsp;</o:p></p><p class=MsoNormal>Cheers</p>",
            "7D\nNice lead\n\nCheers",
        ),
        # Preformatted text keeps its line breaks, however written.
        ("<pre>7D\n\nNice lead</pre>", "7D\n\nNice lead"),
        ("<pre>7D\r\nNice lead</pre><p>Cheers</p>", "7D\nNice lead\n\nCheers"),
        ("<div><pre>give 3H\n5C</pre></div>", "give 3H\n5C"),
    ],
)
def test_html_lines_are_read_as_the_client_shows_them(html: str, text: str) -> None:
    assert html_to_text(html).strip("\n") == text


def test_a_note_under_a_move_in_html_lines_is_read() -> None:
    reply = read_reply(html_to_text("<div>7D</div><div>Nice lead, Kim.</div><div><br></div>"))
    assert from_reply(reply.note) == "Nice lead, Kim."


def test_a_flowed_text_part_is_read_with_its_lines_joined() -> None:
    """Thunderbird wraps long lines with a space before each soft break (RFC 3676)."""
    message = EmailMessage()
    message.set_content("x")
    message.set_payload(
        "I am going to play the seven of \r\ndiamonds now, \r\nnice lead.\r\n"
        "-- \r\nKim\r\n> the \r\n> quote\r\n"
    )
    message.set_param("format", "flowed")
    text = body_text(message)
    assert text.splitlines()[:2] == [
        "I am going to play the seven of diamonds now, nice lead.",
        "-- ",
    ]
    assert "> the quote" in text
    assert read_move(read_reply(text).move).cards == ["7D"]
    message.set_param("delsp", "yes")
    assert body_text(message).startswith("I am going to play the seven ofdiamonds")


def test_the_body_is_plain_text_or_html_made_text() -> None:
    both = _message()
    both.add_alternative("<p>6H</p>", subtype="html")
    assert body_text(both).strip() == "5H"
    html_only = EmailMessage()
    html_only.set_content("<p>Play 7&#9827;</p>", subtype="html")
    assert read_move(body_text(html_only)).cards == ["7C"]


def test_an_empty_plain_part_gives_way_to_the_html() -> None:
    """Some clients send a blank plain-text alternative beside the HTML that holds the move."""
    message = EmailMessage()
    message.set_content(" \n\n")
    message.add_alternative("<div>play ♠3½</div>", subtype="html")
    assert read_move(body_text(message)).cards == ["3S"]


def _raw(headers: str, body: bytes) -> EmailMessage:
    source = f"From: kim@example.com\r\nSubject: Re: your move\r\n{headers}\r\n\r\n".encode()
    return message_from_bytes(source + body, policy=READING_POLICY)  # type: ignore[return-value]


@pytest.mark.parametrize(
    "headers",
    [
        "Content-Type: text/plain; charset*=utf-16''x",  # a charset the library reads as a tuple
        "Content-Type: text/plain; charset=no-such-charset",
    ],
)
def test_a_charset_the_library_cannot_use_is_read_as_utf8(headers: str) -> None:
    assert read_move(body_text(_raw(headers, b"play 3C"))).cards == ["3C"]


def test_a_base64_body_is_read_as_well_as_it_decodes() -> None:
    """A body missing its padding, or with a signature after it, still holds the move."""
    headers = "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64"
    for body in (b"cGxheSAzQw==", b"cGxheSAzQw", b"cGxheSAzQw==\r\n\r\n-- \r\nKim"):
        assert read_move(body_text(_raw(headers, body))).cards == ["3C"], body


def _html_only(html: str) -> EmailMessage:
    message = EmailMessage()
    message.set_content(html, subtype="html")
    return message


def test_a_long_reply_is_read_up_to_its_first_characters() -> None:
    plain = _message()
    plain.set_content("5H\n" + "hello\n" * (1_000_000 // len("hello\n")) + "6D\n")
    assert body_text(plain).startswith("5H\n")
    assert len(body_text(plain)) == READ_CHARS and "6D" not in body_text(plain)
    filler = "<p>hello</p>" * (1_000_000 // len("<p>hello</p>"))
    text = body_text(_html_only(f"<p>5H</p>{filler}<p>6D</p>"))
    assert read_move(text).cards == ["5H"]


def test_a_megabyte_of_html_elements_left_open_is_read() -> None:
    """Were the open elements searched at each tag, this would take hours."""
    text = body_text(_html_only("<div>5H" * (1_000_000 // len("<div>5H"))))
    assert text.split() == ["5H"] * (READ_CHARS // len("<div>5H"))
    assert read_move(read_reply(text).written).cards == ["5H"]
    quoted = html_to_text("<blockquote>5H" * 20_000 + "</blockquote>" * 20_000 + "6D</p>")
    assert quoted == "6D"


QUOTE = "On Tue, 1 Dec 2026, Split Mind <play@example.org> wrote:\n> Your move.\n> 5H or 7D\n"


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ("7D\nNice lead, Kim.\n\n" + QUOTE, "Nice lead, Kim."),
        ("Nice lead, Kim.\n7D\n\n" + QUOTE, "Nice lead, Kim."),
        ("7D\nNice lead,\nKim.\n" + QUOTE, "Nice lead, Kim."),
        # A greeting or a sign-off set apart, a signature, the quote and what is under it.
        ("Hi Kim,\n\n7D\nNice lead.\n\nCheers,\nLéa\n+33 6 12\n\n" + QUOTE, "Nice lead."),
        ("7D\n-- \nLéa, +33 6 12\n" + QUOTE, None),
        ("7D\nSent from my phone\n" + QUOTE, None),
        (QUOTE + "\n7D\nNice lead, Kim.\n", None),
        # The move's own line is the move's; a paragraph without a card says nothing.
        ("7D, nice lead Kim\n\n" + QUOTE, None),
        ("Nice lead, Kim.\n\n7D\n\n" + QUOTE, None),
        ("Nice lead, Kim.\n\n" + QUOTE, None),
        ("3H\n5C\n" + QUOTE, None),
    ],
)
def test_a_note_is_the_rest_of_the_moves_paragraph_above_the_quote(
    text: str, note: str | None
) -> None:
    assert from_reply(read_reply(text).note) == note


def test_a_reply_s_note_is_one_line_of_visible_text_at_most_the_longest_note() -> None:
    hidden = "7D\nNice\u202e lead\u200b,\tKim\x07.\n" + QUOTE
    assert from_reply(read_reply(hidden).note) == "Nice lead, Kim."
    long = from_reply(read_reply("7D\n" + "word " * 100 + "\n" + QUOTE).note)
    assert long is not None and len(long) == MAX_LENGTH and long.endswith("…")


TURN = "Hello Kim,\n\nYour hand: 3♣, 5♥.\nYour legal moves:\n- 3♣\n- 5♥\n"
DE_HEADERS = (
    "Von: Split Mind <games@splitmind.test>\nGesendet: Dienstag, 1. Dezember 2026 10:00\n"
    "An: Kim <kim@example.com>\nBetreff: Your lead (Split Mind, game 1)\n"
)
IT_HEADERS = (
    "Da: Split Mind <games@splitmind.test>\nInviato: martedì 1 dicembre 2026 10:00\n"
    "A: Kim <kim@example.com>\nOggetto: Your lead\n"
)
NL_HEADERS = "Van: Split Mind\nVerzonden: dinsdag 1 december 2026 10:00\nAan: Kim\nOnderwerp: x\n"
ES_HEADERS = "De: Split Mind\nEnviado: martes, 1 de diciembre de 2026 10:00\nPara: Kim\nAsunto: x\n"


@pytest.mark.parametrize("headers", [DE_HEADERS, IT_HEADERS, NL_HEADERS, ES_HEADERS])
def test_no_move_is_read_from_a_copy_of_the_email_under_a_header_block(headers: str) -> None:
    text = f"ok, weiter\n\n{headers}\n{TURN}"
    assert read_move(read_reply(text).move).cards == []
    assert read_reply(text).note == []


@pytest.mark.parametrize("headers", [DE_HEADERS, IT_HEADERS, NL_HEADERS, ES_HEADERS])
def test_a_header_block_right_under_the_text_is_no_note(headers: str) -> None:
    text = f"3D\nschöner Zug\nKim\n{headers}\n{TURN}"
    assert read_move(read_reply(text).move).cards == ["3D"]
    assert from_reply(read_reply(text).note) == "schöner Zug Kim"


@pytest.mark.parametrize(
    "line",
    ["Da: domani gioco meglio", "A: te la mossa", "Von: mir aus"],
)
def test_a_sentence_starting_like_a_header_is_read(line: str) -> None:
    assert from_reply(read_reply(f"3D\n{line}\n\n{QUOTE}").note) == line


@pytest.mark.parametrize(
    "rest",
    [
        "Von meinem iPhone gesendet\n",
        "Get Outlook for iOS<https://aka.ms/o0ukef>\n",
        "Inviato da iPhone\n",
        "Verstuurd vanaf mijn iPhone\n",
        "Enviado desde mi iPhone\n",
        "Am Di., 1. Dez. 2026 um 10:00 Uhr schrieb Split Mind <games@splitmind.test>:\n",
        "Am Di., 1. Dez. 2026 um 10:00 Uhr schrieb Split Mind <\ngames@splitmind.test>:\n",
        "Le mar. 1 déc. 2026 à 10:00, Split Mind <games@splitmind.test> a\nécrit :\n",
        "Il giorno mar 1 dic 2026 alle ore 10:00 Split Mind <g@s.test> ha scritto:\n",
        "Op di 1 dec. 2026 om 10:00 schreef Split Mind <g@s.test>:\n",
        "El mar, 1 dic 2026 a las 10:00, Split Mind (<g@s.test>) escribió:\n",
        "---------- Weitergeleitete Nachricht ---------\n",
        "-----Ursprüngliche Nachricht-----\n",
        "Sent from Yahoo Mail on Android\n",
        "Sent from Yahoo Mail for iPhone\n",
        "Envoyé de Yahoo Mail pour Android\n",
        "Sent from Mail for Windows\n",
        "Envoyé à partir de Courrier pour Windows\n",
        "Sent from Outlook\n",
    ],
)
def test_a_signature_or_quote_intro_right_under_the_move_is_no_note(rest: str) -> None:
    text = f"3D\n{rest}> Your hand: 3♣, 5♥.\n"
    assert read_move(read_reply(text).move).cards == ["3D"]
    assert read_reply(text).note == []


def test_a_quote_intro_over_an_unmarked_copy_ends_the_reply() -> None:
    text = f"ok\nAm 01.12.2026 schrieb Split Mind <games@splitmind.test>:\n{TURN}"
    assert read_move(read_reply(text).move).cards == []


@pytest.mark.parametrize(
    ("text", "note"),
    [("3D\nnice 5H!", "nice 5H!"), ("3D\nI'm as red as a tomato", "I'm as red as a tomato")],
)
def test_a_card_named_in_a_sentence_under_the_move_is_the_note_s(text: str, note: str) -> None:
    assert read_move(read_reply(f"{text}\n\n{QUOTE}").move).cards == ["3D"]
    assert from_reply(read_reply(f"{text}\n\n{QUOTE}").note) == note


def test_a_move_over_several_lines_of_cards_is_read_whole() -> None:
    assert read_move(read_reply(f"give 3H\nand 5C\n\n{QUOTE}").move).cards == ["3H", "5C"]
    assert read_move(read_reply(f"4S\nhearts\n{QUOTE}").move) == Understood(["4S"], "H")


@pytest.mark.parametrize(
    ("text", "cards", "name"),
    [case for case in MOVES if case[1]],
)
def test_a_move_written_alone_or_after_its_verb_is_a_move_s_line(
    text: str, cards: list[str], name: str | None
) -> None:
    assert move_line(text)
    assert read_move(read_reply(f"{text}\n\n{QUOTE}").move) == Understood(cards, name)


@pytest.mark.parametrize(
    "text",
    [
        "D'accord, je regarde ça ce soir vers 7h.",  # 7 o'clock: 7♥
        "Pas le temps, je joue ce soir vers 7h.",
        "Can't play now, I'll do it in 2h.",  # two hours: 2♥
        "wait 5s",  # five seconds: the elixir ♠5½
        "Do you still have 3 hearts?",  # a count of cards: 3♥
        "I hold 2 elixirs, which one should I give?",  # ♠2½, given in an exchange
        "I won't play 5H",
        "je ne joue pas le 5H",
        "5H for me",
        "je mets le 7 de cœur de côté pour la fin",  # set aside: kept, not played
        "je pose le 7 de trèfle de côté",
        # A card kept is no card given: "give 3H, keep 5C" gives one card, too few for two
        "give 3H, keep 5C",
        "give 3H and 6D, keeping 5C",
        "je donne le 3 de cœur et je garde le 5 de trèfle",
        # Cards offered as alternatives are not all given: "give 3H or 5C" is no exchange of two
        "give 3H or 5C",
        "je donne 3H ou 5C",
        # French past participles tell what was done: "you gave me", "well played", "played"
        "Tu m'as donné le 3 de cœur, merci !",
        "Bien joué, le 5 de cœur !",
        "J'ai joué 5H",
        "Sam a joue\u0301 le 7 de trèfle",  # the accent as a combining character
        # A verb right after praise remarks on a move made: "thanks for giving", "nice lead"
        "Thanks for giving the 3H",
        "Nice lead, 5H!",
        "Nice play 5H",
        "Bravo pour donner le 3 de cœur",
    ],
)
def test_a_card_named_in_a_sentence_is_no_move(text: str) -> None:
    reply = read_reply(f"{text}\n\n{QUOTE}")
    assert read_move(reply.move).cards == []
    assert reply.sentence == text
    assert not move_line(text)


def test_a_card_named_in_a_sentence_above_the_move_is_not_the_move() -> None:
    reply = read_reply(f"Keeping my 7H for later.\n\ngive 3H\n\n{QUOTE}")
    assert read_move(reply.move).cards == ["3H"]
    assert not reply.unclear and reply.sentence == ""


@pytest.mark.parametrize(
    "text",
    [
        "5H\n\nno wait, 6H",  # a correction set apart
        "5H\nno, 6H",  # or right under
        "5H\n\n6H",  # two moves
        "5H\nplay 6H instead",
        "5H\nor 6H",  # an alternative
        f"5H\n\n{QUOTE}\n6H",  # one above the quote, one below
    ],
)
def test_a_card_under_the_move_that_may_be_the_move_makes_the_reply_unclear(text: str) -> None:
    assert read_reply(f"{text}\n\n{QUOTE}").unclear


@pytest.mark.parametrize("text", ["5H\nnice 6H!", "5H\nthanks\n\nCheers, Kim", "give 3H\nand 5C"])
def test_a_note_naming_a_card_leaves_the_reply_clear(text: str) -> None:
    assert not read_reply(f"{text}\n\n{QUOTE}").unclear


@pytest.mark.parametrize(
    ("body", "read"),
    [
        # A multipart/related part holding no parts: the standard library takes the first
        # character of its text for a part, and raises.
        (b"--A\r\nContent-Type: multipart/related; boundary=C\r\n\r\n6H\r\n--A--\r\n", ""),
        (
            b"--A\r\nContent-Type: text/plain\r\n\r\n6H\r\n"
            b"--A\r\nContent-Type: multipart/related; boundary=C\r\n\r\nx\r\n--A--\r\n",
            "6H",
        ),
    ],
)
def test_a_malformed_structure_is_read_as_well_as_it_can_be(body: bytes, read: str) -> None:
    message = _raw("Content-Type: multipart/mixed; boundary=A", body)
    assert body_text(message).strip() == read


@pytest.mark.parametrize(
    ("text", "name", "note"),
    [
        ("4S\nhearts please", "H", []),
        ("♠4½\ncoeur", "H", []),
        ("♠4½\ncœur s'il te plaît", "H", []),
        ("play the 4 of spades\nI name clubs\nthanks Kim", "C", ["thanks Kim"]),
        ("potion 4+\ngreen please", "D", []),
        ("4S\nhearts and clubs", None, []),  # two suits: neither is the name
    ],
)
def test_the_suit_an_elixir_names_may_stand_on_the_line_under_it(
    text: str, name: str | None, note: list[str]
) -> None:
    reply = read_reply(f"{text}\n\n{QUOTE}")
    assert read_move(reply.move).cards == ["4S"] and read_move(reply.move).name == name
    assert reply.note == note and not reply.unclear


@pytest.mark.parametrize(
    "text",
    [
        "4S hearts\nclubs please",  # the card's line names its suit: the next line is a note
        "4S\nthanks\nhearts please",  # not the line right under the card's
        "4S\n\nhearts please",  # another paragraph
        "5H\nclubs please",  # no elixir: nothing to name
        "4S\nno hearts",  # denied
        "4S\nhearts?",  # asked
        "4S\nhearts or clubs, you choose",  # alternatives
        # A letter under the card is an initial signing the reply, not a suit's letter
        "4S\nH.",
        "♠4½\nD",
        "potion 4+\nC.",
    ],
)
def test_a_suit_under_an_elixir_names_it_only_right_under_a_card_naming_none(text: str) -> None:
    """The name read is the card's line's own: "H" or none."""
    card_line = text.split("\n")[0]
    assert read_move(read_reply(f"{text}\n\n{QUOTE}").move).name == read_move(card_line).name
