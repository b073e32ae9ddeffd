"""What templates may call: the game's words, the engine's phase names, card codes.

Pages and emails name cards, suits, seats and effects with the filters of
:mod:`service.game_text` (``card_name``, ``seat_name``, ``suit_name``,
``effect_text``, ``trick_effect``, ``player_name``...), in the reader's language and the
game's look; the admin pages use the same filters, in English. ``suit_of`` and the test ``elixir``
name nothing: they read a card's code, for styles and forms. Every template
compares a view's ``phase`` with the globals ``EXCHANGE``, ``PLAY``, ``SWAP``
and ``OVER``, the engine's own names. The answers to replies are worded by
:mod:`service.replies.answers`, and the move an email asks for (hand, suit order, legal
moves) by :mod:`service.move_text`.
"""

from __future__ import annotations

from flask import Flask

from . import game_text, invitations, move_text
from .addresses import in_ascii
from .replies import answers
from .rules import EXCHANGE, OVER, PLAY, SWAP, is_elixir
from .rules.cards import suit_of

GAME_WORDS = (
    game_text.card_name,
    game_text.card_words,
    game_text.suit_name,
    game_text.suit_symbol,
    game_text.seat_name,
    game_text.the_seat,
    game_text.upfirst,
    game_text.effect_name,
    game_text.effect_text,
    game_text.trick_effect,
    game_text.deadline_text,
    game_text.player_name,
)


def init_app(app: Flask) -> None:
    """Register the filters and the phase names."""
    for words in GAME_WORDS:
        app.add_template_filter(words)
    app.add_template_global(game_text.elixir_word)
    app.add_template_global(game_text.rules_summary)
    app.add_template_global(game_text.move_due)
    app.add_template_global(game_text.invitee_role)
    app.add_template_global(game_text.days_per_move_text)
    app.add_template_global(game_text.rematch_line)
    app.add_template_global(invitations.expires_at, "invitation_expires_at")
    app.add_template_global(invitations.as_its_creator_reads, "invitation_as_its_creator_reads")
    app.add_template_global(game_text.move_due_on)
    app.add_template_global(game_text.early_match_winner)
    app.add_template_filter(suit_of, "suit_of")
    app.add_template_filter(in_ascii, "in_ascii")
    app.add_template_test(is_elixir, "elixir")
    app.jinja_env.globals.update(EXCHANGE=EXCHANGE, PLAY=PLAY, SWAP=SWAP, OVER=OVER)
    app.jinja_env.globals.update(answers.TEMPLATE_FUNCTIONS)
    app.jinja_env.globals.update(move_text.TEMPLATE_FUNCTIONS)
