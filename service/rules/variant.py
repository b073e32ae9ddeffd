"""The numbers of the rules as one value, so that a variant to playtest is a value, not a fork.

``Variant()`` is the printed game. A game dealt with another variant keeps it
in its state (``state["variant"]``, every parameter, as JSON); a state without
one is the printed game, which is how every game stored before variants
existed reads. ``docs/rules.md`` describes each parameter.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, TypeGuard

from .cards import HAND_SIZE
from .names import EXCHANGE, SEATS, Seat

# Every card in hand is played, one a trick: the deal, not the variant, sets this.
TRICKS_PER_ROUND = HAND_SIZE
# A swap comes after a trick, so a hand then holds one card fewer at most.
MOST_SWAPPED = HAND_SIZE - 1
# Far more than a game is played over, few enough that a variant stays small.
MOST_ROUNDS = 1000


class VariantError(ValueError):
    """A variant parameter that is unknown, of the wrong kind or out of its range."""


@dataclass(frozen=True)
class Variant:
    """The rule numbers of a game; the defaults are the printed rules.

    ``halfway``: from round 2 on the Keeper leads a round's first trick while
    the track is below it, the Shadow once it is reached. ``exchange_sizes``:
    the cards each seat gives in each round's exchange (0: no exchange).
    ``swap_size``: the cards each seat gives on a Swap. ``track_length``: the
    track the Shadow must finish. ``rounds``: the rounds the Keeper must last.
    ``first_leader``: who leads the first trick of round 1.
    """

    halfway: int = 5
    exchange_sizes: tuple[int, ...] = (1, 2, 3)
    swap_size: int = 2
    track_length: int = 10
    rounds: int = 3
    first_leader: Seat = "keeper"

    def __post_init__(self) -> None:
        for name in ("halfway", "swap_size", "track_length", "rounds"):
            if not _is_whole(getattr(self, name)):
                raise VariantError(f"{name} is a whole number, not {getattr(self, name)!r}")
        if not isinstance(self.exchange_sizes, tuple):
            raise VariantError(f"exchange_sizes is a tuple of sizes, not {self.exchange_sizes!r}")
        for size in self.exchange_sizes:
            if not _is_whole(size):
                raise VariantError(f"exchange_sizes holds whole numbers, not {size!r}")
        _check_rounds(self.rounds)
        if len(self.exchange_sizes) != self.rounds:
            raise VariantError(
                f"exchange_sizes gives one size per round: {self.rounds} rounds "
                f"but {len(self.exchange_sizes)} sizes"
            )
        for number, size in enumerate(self.exchange_sizes, start=1):
            if not 0 <= size <= HAND_SIZE:
                raise VariantError(
                    f"the round {number} exchange gives 0 to {HAND_SIZE} cards (a hand), not {size}"
                )
        if not 1 <= self.swap_size <= MOST_SWAPPED:
            raise VariantError(
                f"swap_size is 1 to {MOST_SWAPPED} (the most cards held after a trick), "
                f"not {self.swap_size}"
            )
        reachable = self.rounds * TRICKS_PER_ROUND
        if not 1 <= self.track_length <= reachable:
            raise VariantError(
                f"track_length is 1 to {reachable} (the tricks of {self.rounds} "
                f"round{'s' if self.rounds > 1 else ''}), not {self.track_length}"
            )
        if not 0 <= self.halfway <= self.track_length:
            raise VariantError(
                f"halfway is 0 to the track length {self.track_length}, not {self.halfway}"
            )
        if self.first_leader not in SEATS:
            raise VariantError(f"first_leader is keeper or shadow, not {self.first_leader!r}")

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> Variant:
        """The variant of ``KEY=VALUE`` texts, as a command line takes them: ``{"halfway": "6"}``.

        Parameters left out keep their printed value, except that ``rounds``
        alone gives exchanges of 1, 2, … cards and ``exchange_sizes`` alone
        (``"1,1,1"``) sets the number of rounds.
        """
        values: dict[str, Any] = {}
        for key, text in _known(options).items():
            if not isinstance(text, str):
                raise VariantError(f"{key} is given as text, not {text!r}")
            if key == "first_leader":
                values[key] = text.strip()
            elif key == "exchange_sizes":
                values[key] = tuple(_number(key, part, text) for part in text.split(","))
            else:
                values[key] = _number(key, text, text)
        return _build(values)

    @classmethod
    def from_json(cls, data: object) -> Variant:
        """The variant of a JSON object (a scenario's or a state's ``variant``).

        Parameters left out keep their printed value, with ``rounds`` and
        ``exchange_sizes`` completing each other as in :meth:`from_options`.
        """
        if not isinstance(data, Mapping):
            raise VariantError('a variant is an object such as {"halfway": 6}')
        values = dict(_known(data))
        if "exchange_sizes" in values:
            sizes = values["exchange_sizes"]
            if not isinstance(sizes, list):
                raise VariantError(f"exchange_sizes is a list of sizes, not {sizes!r}")
            values["exchange_sizes"] = tuple(sizes)
        return _build(values)

    def most_given(self, kind: str) -> int:
        """The most cards a seat gives at once in an exchange or a swap (``kind``)."""
        return max(self.exchange_sizes) if kind == EXCHANGE else self.swap_size

    def to_json(self) -> dict[str, Any]:
        """Every parameter, as the state and the replay format keep them."""
        data = asdict(self)
        data["exchange_sizes"] = list(self.exchange_sizes)
        return data

    def options(self) -> dict[str, str]:
        """The parameters that differ from the printed game, as :meth:`from_options` reads them."""
        return {
            field.name: _text(getattr(self, field.name))
            for field in fields(self)
            if getattr(self, field.name) != getattr(PRINTED, field.name)
        }

    def describe(self) -> str:
        """The differences from the printed game as ``halfway=6 swap_size=1``; empty for none."""
        return " ".join(f"{key}={value}" for key, value in self.options().items())


def variant_of(state: Mapping[str, Any]) -> Variant:
    """The variant a game is played with: the printed game unless its state holds another."""
    global _last_read
    stored = state.get("variant")
    if stored is None:
        return PRINTED
    seen, variant = _last_read
    if stored != seen:
        variant = Variant.from_json(stored)
        _last_read = (variant.to_json(), variant)
    return variant


def _known(options: Mapping[Any, Any]) -> Mapping[Any, Any]:
    unknown = [key for key in options if key not in PARAMETERS]
    if unknown:
        raise VariantError(
            f"unknown variant parameter {unknown[0]!r}; the parameters are {', '.join(PARAMETERS)}"
        )
    return options


def _is_whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


# A whole number as a person types it: ASCII digits, perhaps a minus sign, nothing else
# (Python's int() also reads "1_0" and the digits of other scripts).
WHOLE = re.compile(r"-?[0-9]+")
# The most of a refused value a message repeats.
SHOWN = 40


def _number(key: str, part: str, text: str) -> int:
    if WHOLE.fullmatch(part.strip()):
        return int(part.strip())
    shown = text if len(text) <= SHOWN else text[:SHOWN] + "…"
    if key == "exchange_sizes":
        raise VariantError(
            f"exchange_sizes is whole numbers separated by commas, such as 1,2,3, not {shown!r}"
        )
    raise VariantError(f"{key} is a whole number, not {shown!r}")


def _text(value: object) -> str:
    if isinstance(value, tuple):
        return ",".join(str(item) for item in value)
    return str(value)


def _check_rounds(rounds: int) -> None:
    if not 1 <= rounds <= MOST_ROUNDS:
        raise VariantError(f"rounds is 1 to {MOST_ROUNDS}, not {rounds}")


def _build(values: dict[str, Any]) -> Variant:
    """A variant from checked-for-name values, with ``rounds`` and ``exchange_sizes`` completed.

    A parameter given alone that the defaults of the others cannot go with is
    refused with a message naming the parameter to give with it, not the
    default the person never gave.
    """
    if "exchange_sizes" not in values and _is_whole(values.get("rounds")):
        rounds = values["rounds"]
        _check_rounds(rounds)  # before it makes as many sizes
        if rounds > HAND_SIZE:
            raise VariantError(
                f"rounds={rounds} needs exchange_sizes too: the default gives round {rounds} "
                f"an exchange of {rounds} cards, more than a hand ({HAND_SIZE}); give one "
                f"size of 0 to {HAND_SIZE} per round"
            )
        values["exchange_sizes"] = tuple(range(1, rounds + 1))
    elif "rounds" not in values and "exchange_sizes" in values:
        values["rounds"] = len(values["exchange_sizes"])
    track_length = values.get("track_length")
    if "halfway" not in values and _is_whole(track_length) and 1 <= track_length < PRINTED.halfway:
        raise VariantError(
            f"track_length={track_length} needs halfway too: the default halfway "
            f"{PRINTED.halfway} is past the end of a track of {track_length}; give halfway "
            f"0 to {track_length}"
        )
    return Variant(**values)


PRINTED = Variant()
ROUNDS = PRINTED.rounds
TRACK_LENGTH = PRINTED.track_length
PARAMETERS = tuple(field.name for field in fields(Variant))
# A game reads its variant at every move and reading one checks it, so the last one
# read is kept, as a copy that no caller's dict can change.
_last_read: tuple[dict[str, Any], Variant] = (PRINTED.to_json(), PRINTED)
