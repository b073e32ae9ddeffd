"""Computer players against each other on a variant of the rules, and what their games say.

Pure like the engine: no web or database framework. A run plays ``games``
games dealt from seeds derived from the run's seed, each seat played by a
computer level (:data:`service.bots.LEVELS`), in worker processes, and adds
up a :class:`Tally` of plain counts. Tallies of parts of a run add up to the
tally of the whole, so a run gives the same figures whatever the number of
processes, and :func:`figures` turns a tally into the JSON the command line
prints and the dashboard stores.

The Shadow moves the track by the difference of tricks in either direction:
by taking more tricks than the Keeper, or by giving them away so that the
Keeper takes more. The figures count the track cards each way turns up.
"""

from __future__ import annotations

import hashlib
import math
import multiprocessing
import os
import random
import signal
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Protocol, Self, TypeVar

from ..bots import LEVELS, player
from ..rules import (
    OVER,
    PRINTED,
    SEATS,
    State,
    Variant,
    apply,
    new_game,
    seat_view,
    to_act,
    track_advances,
)

Z95 = 1.959964
# The band the designers aim for: the Keeper wins 50% ± 2% of games.
TARGET = (0.48, 0.52)
EFFECTS = ("reset", "swap", "steal", "none")
# The first round whose leader the track decides (halfway): round 1's leader is a rule, each
# later round's is the track's doing.
FIRST_LED_ROUND = 2
MOST_CHUNK = 200
# Games in one run: a million pins a rate down to a tenth of a percent.
MOST_GAMES = 1_000_000


def wilson(wins: int, games: int) -> tuple[float, float]:
    """The 95% Wilson score interval of ``wins`` out of ``games``; (0, 1) for no games."""
    if not games:
        return 0.0, 1.0
    rate = wins / games
    denominator = 1 + Z95**2 / games
    centre = (rate + Z95**2 / (2 * games)) / denominator
    spread = Z95 * math.sqrt(rate * (1 - rate) / games + Z95**2 / (4 * games**2)) / denominator
    return max(0.0, centre - spread), min(1.0, centre + spread)


@cache
def players_digest() -> str:
    """A SHA-256 of the code that decides how a run's games are played, in hex.

    That is the source of the computer players (``service/bots/``, whose
    :data:`~service.bots.LEVELS` holds each level's budgets), of the engine
    (``service/rules/``) and of this module, which seats them and seeds them.
    Two runs with the same settings and the same digest play the same games;
    after a change to any of that code the digest differs, so a stored run
    says which players played it.
    """
    here = Path(__file__).resolve()
    service = here.parent.parent
    paths = [*sorted(service.glob("bots/*.py")), *sorted(service.glob("rules/*.py")), here]
    digest = hashlib.sha256()
    for path in paths:
        digest.update(f"{path.relative_to(service).as_posix()}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def game_seed(seed: int, number: int) -> int:
    """The deal seed of game ``number`` of a run with ``seed``: runs with other seeds differ."""
    return random.Random(f"playtest:{seed}:{number}").getrandbits(48)


def play_game(deal_seed: int, keeper: str, shadow: str, variant: Variant = PRINTED) -> State:
    """One game to its end, each seat played by its level, dealt from ``deal_seed``.

    The players search without their time limit (their budgets of play-outs
    bound them), so a game never depends on how fast or busy the machine is.
    """
    levels = {"keeper": keeper, "shadow": shadow}
    players = {seat: player(levels[seat], timed=False) for seat in SEATS}
    rngs = {seat: random.Random(f"{deal_seed}:{seat}") for seat in SEATS}
    state = new_game(seed=deal_seed, variant=variant)
    while state["phase"] != OVER:
        seat = to_act(state)[0]
        action = players[seat].choose(seat_view(state, seat), rngs[seat])
        state = apply(state, seat, action)
    return state


@dataclass
class Tally:
    """Counts over finished games; ``+`` adds two tallies (of two parts of a run).

    Per round: ``differences`` counts the Shadow's tricks minus the Keeper's.
    Per effect: how often it fired, in how many rounds, the track those rounds
    moved against the rounds without it, and the Keeper's wins in games with it.
    """

    games: int = 0
    keeper_wins: int = 0
    tracks: Counter[int] = field(default_factory=Counter)
    rounds: Counter[int] = field(default_factory=Counter)
    keeper_wins_by_rounds: Counter[int] = field(default_factory=Counter)
    differences: Counter[int] = field(default_factory=Counter)
    round_differences: Counter[tuple[int, int]] = field(default_factory=Counter)
    fired: Counter[str] = field(default_factory=Counter)
    stolen: int = 0
    effect_rounds: Counter[str] = field(default_factory=Counter)
    effect_moved: Counter[str] = field(default_factory=Counter)
    quiet_rounds: Counter[str] = field(default_factory=Counter)
    quiet_moved: Counter[str] = field(default_factory=Counter)
    effect_games: Counter[str] = field(default_factory=Counter)
    effect_keeper_wins: Counter[str] = field(default_factory=Counter)
    # (round, leader) -> rounds played, and the Keeper's wins of their games.
    leaders: Counter[tuple[int, str]] = field(default_factory=Counter)
    leader_keeper_wins: Counter[tuple[int, str]] = field(default_factory=Counter)
    # Track cards the Shadow turned up by taking tricks, and by giving them away.
    taken: int = 0
    given: int = 0
    # Shadow wins by the way that turned up more of the track ("even" when both did as much).
    shadow_wins_by: Counter[str] = field(default_factory=Counter)

    def add(self, state: State) -> None:
        """Count one finished game."""
        keeper_won = state["winner"] == "keeper"
        self.games += 1
        self.keeper_wins += keeper_won
        self.tracks[state["track"]] += 1
        self.rounds[len(state["rounds"])] += 1
        self.keeper_wins_by_rounds[len(state["rounds"])] += keeper_won
        fired: Counter[tuple[int, str]] = Counter()
        leaders: dict[int, str] = {}
        for trick in state["history"]:
            if trick["effect"]:
                fired[trick["round"], trick["effect"]] += 1
                self.fired[trick["effect"]] += 1
                self.stolen += trick["outcome"] == "took"
            if trick["trick"] == 1:
                leaders[trick["round"]] = trick["leader"]
        taken, given = 0, 0
        advances = zip(state["rounds"], track_advances(state), strict=True)
        for number, (result, moved) in enumerate(advances, start=1):
            difference = result["shadow"] - result["keeper"]
            self.differences[difference] += 1
            self.round_differences[number, difference] += 1
            if difference > 0:
                taken += moved
            else:
                given += moved
            for effect in EFFECTS:
                if fired[number, effect]:
                    self.effect_rounds[effect] += 1
                    self.effect_moved[effect] += moved
                else:
                    self.quiet_rounds[effect] += 1
                    self.quiet_moved[effect] += moved
            if number >= FIRST_LED_ROUND:
                self.leaders[number, leaders[number]] += 1
                self.leader_keeper_wins[number, leaders[number]] += keeper_won
        for effect in {effect for _, effect in fired}:
            self.effect_games[effect] += 1
            self.effect_keeper_wins[effect] += keeper_won
        self.taken += taken
        self.given += given
        if not keeper_won:
            way = "taking" if taken > given else "giving" if given > taken else "even"
            self.shadow_wins_by[way] += 1

    def __add__(self, other: Tally) -> Tally:
        total = Tally()
        for name, value in vars(self).items():
            setattr(total, name, value + getattr(other, name))
        return total


@dataclass(frozen=True)
class Settings:
    """What a run plays: how many games, the level of each seat, the rules, the seed."""

    games: int
    keeper: str
    shadow: str
    variant: Variant = PRINTED
    seed: int = 1

    def __post_init__(self) -> None:
        for seat in SEATS:
            if getattr(self, seat) not in LEVELS:
                raise ValueError(
                    f"no level {getattr(self, seat)!r}; the levels are {', '.join(LEVELS)}"
                )
        if not 1 <= self.games <= MOST_GAMES:
            raise ValueError(f"a run plays 1 to {MOST_GAMES} games, not {self.games}")

    def to_json(self) -> dict[str, Any]:
        """The settings as stored with a run's figures, with the :func:`players_digest`."""
        return {
            "games": self.games,
            "keeper": self.keeper,
            "shadow": self.shadow,
            "variant": self.variant.options(),
            "seed": self.seed,
            "players": players_digest(),
        }


def play_chunk(job: tuple[Settings, int, int]) -> Tally:
    """The tally of games ``start`` to ``stop - 1`` of a run (a worker process's share)."""
    settings, start, stop = job
    tally = Tally()
    for number in range(start, stop):
        tally.add(
            play_game(
                game_seed(settings.seed, number), settings.keeper, settings.shadow, settings.variant
            )
        )
    return tally


def chunk_size(settings: Settings, workers: int) -> int:
    """Games in a part of the run: small enough for a steady progress bar and even workers."""
    return max(1, min(MOST_CHUNK, settings.games // (20 * max(1, workers))))


def chunks(settings: Settings, size: int) -> Iterator[tuple[Settings, int, int]]:
    """The run cut into parts of ``size`` games, each made when it is played."""
    for start in range(0, settings.games, size):
        yield settings, start, min(settings.games, start + size)


def processes(settings: Settings, workers: int) -> int:
    """The processes a run asking for ``workers`` is played in: no more than the machine's
    processors, nor than the parts of the run."""
    workers = max(1, min(workers, os.cpu_count() or 1))
    return min(workers, math.ceil(settings.games / chunk_size(settings, workers)))


def simulate(
    settings: Settings, workers: int = 1, progress: Callable[[int], None] | None = None
) -> Tally:
    """Play the run in up to ``workers`` processes (1: in this one; see :func:`processes`);
    ``progress`` hears games done."""
    workers = processes(settings, workers)
    parts = chunks(settings, chunk_size(settings, workers))
    return spread(play_chunk, parts, workers, Tally(), lambda tally: tally.games, progress)


class Adds(Protocol):
    """What a part of a run gives: parts add up."""

    def __add__(self, other: Self) -> Self: ...


Part = TypeVar("Part")
Sum = TypeVar("Sum", bound=Adds)


def spread(
    play: Callable[[Part], Sum],
    parts: Iterable[Part],
    workers: int,
    total: Sum,
    count: Callable[[Sum], int],
    progress: Callable[[int], None] | None,
) -> Sum:
    """``play`` each part, in this process (``workers`` 1) or in up to ``workers`` new ones,
    and add what they give to ``total``; ``progress`` hears the ``count`` of each part.

    An interrupt raises :class:`Interrupted` with the sum of the parts added before it.
    """
    if workers <= 1:
        return _add_up(map(play, parts), total, count, progress)
    with multiprocessing.get_context("spawn").Pool(workers, _leave_interrupts) as pool:
        return _add_up(pool.imap(play, parts), total, count, progress)


def _leave_interrupts() -> None:
    """In a worker process: leave Ctrl-C to the process that started it, which stops the
    workers, rather than print a traceback from each."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Interrupted(KeyboardInterrupt):
    """An interrupt (Ctrl-C) during a run, holding what the parts played before it add up to.

    Parts are added in their order, so ``done`` is the sum of the first
    ``played`` games (or deals) of the run: what a run of that many with the
    same seed gives.
    """

    def __init__(self, done: Any, played: int) -> None:
        super().__init__()
        self.done = done
        self.played = played


def _add_up(
    done: Iterable[Sum],
    total: Sum,
    count: Callable[[Sum], int],
    progress: Callable[[int], None] | None,
) -> Sum:
    try:
        for part in done:
            total = total + part
            if progress is not None:
                progress(count(part))
    except KeyboardInterrupt:
        raise Interrupted(total, count(total)) from None
    return total


def _rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _mean(total: int, count: int) -> float | None:
    return total / count if count else None


def figures(settings: Settings, tally: Tally) -> dict[str, Any]:
    """The figures of a run as JSON, with stable keys (the command's ``--json`` line).

    Rates are shares of 1; an interval is ``[low, high]``; a figure with
    nothing to count is ``null``.
    """
    variant = settings.variant
    games = tally.games
    low, high = wilson(tally.keeper_wins, games)
    shadow_wins = games - tally.keeper_wins
    rounds_played = sum(tally.differences.values())
    return {
        "games": games,
        "keeper": settings.keeper,
        "shadow": settings.shadow,
        "variant": variant.options(),
        "seed": settings.seed,
        "players": players_digest(),
        "keeper_wins": tally.keeper_wins,
        "shadow_wins": shadow_wins,
        "keeper_win_rate": _rate(tally.keeper_wins, games),
        "keeper_win_rate_ci": [low, high],
        "track": {str(n): tally.tracks[n] for n in range(variant.track_length + 1)},
        "track_mean": _mean(sum(n * count for n, count in tally.tracks.items()), games),
        "rounds": {str(n): tally.rounds[n] for n in range(1, variant.rounds + 1)},
        "rounds_mean": _mean(sum(n * count for n, count in tally.rounds.items()), games),
        "keeper_win_rate_by_rounds": {
            str(n): _rate(tally.keeper_wins_by_rounds[n], tally.rounds[n])
            for n in range(1, variant.rounds + 1)
        },
        "trick_difference": {
            "rounds": rounds_played,
            "mean": _mean(sum(d * n for d, n in tally.differences.items()), rounds_played),
            "mean_abs": _mean(sum(abs(d) * n for d, n in tally.differences.items()), rounds_played),
            "distribution": {str(d): tally.differences[d] for d in sorted(tally.differences)},
            "by_round": {
                str(number): {
                    "rounds": sum(
                        n for (r, _), n in tally.round_differences.items() if r == number
                    ),
                    "mean_abs": _mean(
                        sum(
                            abs(d) * n
                            for (r, d), n in tally.round_differences.items()
                            if r == number
                        ),
                        sum(n for (r, _), n in tally.round_differences.items() if r == number),
                    ),
                }
                for number in range(1, variant.rounds + 1)
            },
        },
        "effects": {
            effect: {
                "fired": tally.fired[effect],
                "per_game": _mean(tally.fired[effect], games),
                "games_with": tally.effect_games[effect],
                "track_moved_with": _mean(tally.effect_moved[effect], tally.effect_rounds[effect]),
                "track_moved_without": _mean(tally.quiet_moved[effect], tally.quiet_rounds[effect]),
                "keeper_win_rate_with": _rate(
                    tally.effect_keeper_wins[effect], tally.effect_games[effect]
                ),
                "keeper_win_rate_without": _rate(
                    tally.keeper_wins - tally.effect_keeper_wins[effect],
                    games - tally.effect_games[effect],
                ),
                **({"took": tally.stolen} if effect == "steal" else {}),
            }
            for effect in EFFECTS
        },
        "leaders": {
            str(number): {
                "played": tally.leaders[number, "keeper"] + tally.leaders[number, "shadow"],
                "shadow_led": tally.leaders[number, "shadow"],
                "keeper_win_rate_keeper_led": _rate(
                    tally.leader_keeper_wins[number, "keeper"], tally.leaders[number, "keeper"]
                ),
                "keeper_win_rate_shadow_led": _rate(
                    tally.leader_keeper_wins[number, "shadow"], tally.leaders[number, "shadow"]
                ),
            }
            for number in range(FIRST_LED_ROUND, variant.rounds + 1)
        },
        "track_by": {
            "taking": tally.taken,
            "giving": tally.given,
            "taking_share": _rate(tally.taken, tally.taken + tally.given),
        },
        "shadow_wins_by": {
            "taking": tally.shadow_wins_by["taking"],
            "giving": tally.shadow_wins_by["giving"],
            "even": tally.shadow_wins_by["even"],
        },
    }
