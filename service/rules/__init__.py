"""The Split Mind rules engine: pure, deterministic, no I/O.

Everything the service does with a game goes through these functions:
:func:`new_game`, :func:`legal_actions`, :func:`apply`, :func:`seat_view`. The
numbers of the rules are a :class:`Variant`, the printed game unless a game says
otherwise; the rules themselves are written out in ``docs/rules.md``.
"""

from .cards import DECK, ELIXIRS, SUITS, is_elixir, sort_cards
from .engine import (
    ActionError,
    DealError,
    RuleError,
    State,
    apply,
    choices,
    legal_actions,
    new_game,
    other,
    parse_action,
    summary,
    to_act,
    track_advances,
)
from .match import return_match, shadow_score
from .names import (
    ACTION_KINDS,
    CHOICE_PHASES,
    EXCHANGE,
    OVER,
    PHASES,
    PLAY,
    SEATS,
    SWAP,
    Seat,
)
from .scenario import ScenarioError, export, run
from .seat_view import seat_view
from .variant import (
    PRINTED,
    ROUNDS,
    TRACK_LENGTH,
    TRICKS_PER_ROUND,
    Variant,
    VariantError,
    variant_of,
)

__all__ = [
    "ACTION_KINDS",
    "CHOICE_PHASES",
    "DECK",
    "ELIXIRS",
    "EXCHANGE",
    "OVER",
    "PHASES",
    "PLAY",
    "PRINTED",
    "ROUNDS",
    "SEATS",
    "SUITS",
    "SWAP",
    "TRACK_LENGTH",
    "TRICKS_PER_ROUND",
    "ActionError",
    "DealError",
    "RuleError",
    "ScenarioError",
    "Seat",
    "State",
    "Variant",
    "VariantError",
    "apply",
    "choices",
    "export",
    "is_elixir",
    "legal_actions",
    "new_game",
    "other",
    "parse_action",
    "return_match",
    "run",
    "seat_view",
    "shadow_score",
    "sort_cards",
    "summary",
    "to_act",
    "track_advances",
    "variant_of",
]
