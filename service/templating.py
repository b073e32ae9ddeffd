"""Template filters for the English-only admin pages, and the engine's phase names.

They show cards, seats, suits and effects with the engine's own English names
(:mod:`service.rules.labels`). Pages and emails that players read in their
language use the filters of :mod:`service.i18n` instead (``card_name``,
``seat_name``, ``suit_name``, ``effect_text``...). ``suit_of`` and the test
``elixir`` name nothing: they read a card's code, for styles and forms.
Every template compares a view's ``phase`` with the globals ``EXCHANGE``,
``PLAY``, ``SWAP`` and ``OVER``, the engine's own names.
"""

from __future__ import annotations

from flask import Flask

from .rules import EXCHANGE, OVER, PLAY, SWAP, is_elixir
from .rules.cards import suit_of
from .rules.labels import card_label, effect_label, seat_label, suit_label


def init_app(app: Flask) -> None:
    """Register the filters and the phase names."""
    app.add_template_filter(card_label, "card")
    app.add_template_filter(seat_label, "seat")
    app.add_template_filter(suit_label, "suit")
    app.add_template_filter(effect_label, "effect")
    app.add_template_filter(suit_of, "suit_of")
    app.add_template_test(is_elixir, "elixir")
    app.jinja_env.globals.update(EXCHANGE=EXCHANGE, PLAY=PLAY, SWAP=SWAP, OVER=OVER)
