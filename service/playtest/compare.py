"""Two rule sets on the same deals: how much does a rule change move the Keeper's win rate?

Pure like the engine and :mod:`.simulate`, whose games it plays: deal ``n``
of a comparison is game ``n`` of a run with the same seed, played once under
each rule set by the same levels. Most deals end alike under both, so the
question is decided by the deals they disagree on: those the Keeper wins
under one rule set only. Counting them gives the difference of the two win
rates with a paired interval and test, far narrower than two runs' own
intervals side by side.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from ..rules import PRINTED, Variant
from .simulate import (
    TARGET,
    Settings,
    chunk_size,
    chunks,
    game_seed,
    play_game,
    players_digest,
    processes,
    spread,
    wilson,
)


def newcombe_paired(
    both: int, first_only: int, second_only: int, neither: int
) -> tuple[float, float]:
    """The 95% interval of the difference of two paired proportions, first minus second.

    Newcombe's square-and-add (hybrid score) interval for paired data, method
    10 of R. G. Newcombe (1998), "Improved confidence intervals for the
    difference between binomial proportions based on paired data",
    Statistics in Medicine 17: 2635–2650, as Fagerland, Lydersen and Laake
    (2014, Statistics in Medicine 33: 2850–2875) give it: the Wilson interval
    of each proportion, combined through the correlation of the pairs. It
    stays inside −1 to 1 and is sensible with no disagreements or few pairs;
    (−1, 1) for no pairs.
    """
    pairs = both + first_only + second_only + neither
    if not pairs:
        return -1.0, 1.0
    first, second = both + first_only, both + second_only
    rate1, rate2 = first / pairs, second / pairs
    low1, high1 = wilson(first, pairs)
    low2, high2 = wilson(second, pairs)
    margins = first * (pairs - first) * second * (pairs - second)
    # The correlation of the two proportions, pulled towards 0 by half a pair.
    agreement = both * neither - first_only * second_only
    if not margins or 0 <= agreement <= pairs / 2:
        correlation = 0.0
    elif agreement > pairs / 2:
        correlation = (agreement - pairs / 2) / math.sqrt(margins)
    else:
        correlation = agreement / math.sqrt(margins)
    below = _square_and_add(rate1 - low1, high2 - rate2, correlation)
    above = _square_and_add(high1 - rate1, rate2 - low2, correlation)
    difference = rate1 - rate2
    return max(-1.0, difference - below), min(1.0, difference + above)


def _square_and_add(first: float, second: float, correlation: float) -> float:
    """The distance of two correlated errors added: √(first² − 2·r·first·second + second²)."""
    return math.sqrt(max(0.0, first**2 - 2 * correlation * first * second + second**2))


def mcnemar(first_only: int, second_only: int) -> tuple[float, float]:
    """Two-sided p-values of McNemar's test of paired proportions: exact, and mid-p.

    The exact conditional test takes the disagreeing pairs as fair coin
    tosses: twice the binomial tail of the smaller count out of their sum.
    The mid-p test counts only half the probability of the count observed,
    which keeps the test's size near 5% rather than well below it (Fagerland,
    Lydersen and Laake (2013), "The McNemar test for binary matched-pairs
    data: mid-p and asymptotic are better than exact conditional", BMC
    Medical Research Methodology 13: 91). Both are 1 with no disagreements.
    """
    tosses = first_only + second_only
    fewer = min(first_only, second_only)
    # P(X = fewer) for X ~ Binomial(tosses, 1/2), then the tail P(X <= fewer) by the
    # ratio of each term to the next, which needs no huge binomial coefficient.
    point = math.exp(
        math.lgamma(tosses + 1)
        - math.lgamma(fewer + 1)
        - math.lgamma(tosses - fewer + 1)
        - tosses * math.log(2)
    )
    term = total = 1.0
    for count in range(fewer, 0, -1):
        term *= count / (tosses - count + 1)
        total += term
        if term < 1e-17 * total:
            break
    tail = point * total
    return min(1.0, 2 * tail), min(1.0, 2 * tail - point)


@dataclass(frozen=True)
class Comparison:
    """What a comparison plays: ``games`` deals, each under ``variant`` and under ``against``,
    the seats played by the same levels; deal ``n`` is game ``n`` of a run with ``seed``."""

    games: int
    keeper: str
    shadow: str
    variant: Variant
    against: Variant = PRINTED
    seed: int = 1

    def __post_init__(self) -> None:
        self.run(self.variant)  # refuses unknown levels and runs too small or large

    def run(self, variant: Variant) -> Settings:
        """The run of one of the two rule sets, as ``playtest simulate`` would play it."""
        return Settings(
            games=self.games,
            keeper=self.keeper,
            shadow=self.shadow,
            variant=variant,
            seed=self.seed,
        )


@dataclass
class Deals:
    """Deals counted by whether the Keeper won them under the variant and under the other
    rules, and how many were played move for move the same under both (``same``: the change
    made no difference to them); ``+`` adds the counts of two parts of a comparison."""

    both: int = 0
    variant_only: int = 0
    against_only: int = 0
    neither: int = 0
    same: int = 0

    def add(self, variant_won: bool, against_won: bool, same: bool = False) -> None:
        """Count one deal, by whether the Keeper won it under each rule set, and whether it
        was played the same under both."""
        self.same += same
        if variant_won and against_won:
            self.both += 1
        elif variant_won:
            self.variant_only += 1
        elif against_won:
            self.against_only += 1
        else:
            self.neither += 1

    @property
    def total(self) -> int:
        """The deals counted (each is one of both, variant only, against only or neither)."""
        return self.both + self.variant_only + self.against_only + self.neither

    def __add__(self, other: Deals) -> Deals:
        return Deals(
            **{
                each.name: getattr(self, each.name) + getattr(other, each.name)
                for each in fields(self)
            }
        )


def play_deals(job: tuple[Comparison, int, int]) -> Deals:
    """The counts of deals ``start`` to ``stop - 1``, each played under both rule sets."""
    comparison, start, stop = job
    deals = Deals()
    for number in range(start, stop):
        deal_seed = game_seed(comparison.seed, number)
        variant, against = (
            play_game(deal_seed, comparison.keeper, comparison.shadow, rules)
            for rules in (comparison.variant, comparison.against)
        )
        same = variant["history"] == against["history"] and variant["winner"] == against["winner"]
        deals.add(variant["winner"] == "keeper", against["winner"] == "keeper", same)
    return deals


def compare(
    comparison: Comparison, workers: int = 1, progress: Callable[[int], None] | None = None
) -> Deals:
    """Play the comparison in up to ``workers`` processes, cut as ``playtest simulate`` cuts a
    run (:func:`~.simulate.processes`); ``progress`` hears deals done."""
    settings = comparison.run(comparison.variant)
    workers = processes(settings, workers)
    parts = (
        (comparison, start, stop)
        for _, start, stop in chunks(settings, chunk_size(settings, workers))
    )
    return spread(play_deals, parts, workers, Deals(), lambda deals: deals.total, progress)


def _side(variant: Variant, keeper_wins: int, games: int) -> dict[str, Any]:
    """One rule set's figures; a comparison has at least one deal."""
    low, high = wilson(keeper_wins, games)
    rate = keeper_wins / games
    return {
        "rules": variant.options(),
        "keeper_wins": keeper_wins,
        "keeper_win_rate": rate,
        "keeper_win_rate_ci": [low, high],
        "distance_from_even": abs(rate - 0.5),
        "distance_from_even_ci": list(_distances(low, high)),
        "in_target": _in_target(low, high),
    }


def _in_target(low: float, high: float) -> bool | None:
    """Whether a win rate whose Wilson interval runs from ``low`` to ``high`` lies in the
    designers' band: ``True`` when the whole interval does, ``False`` when none of it does,
    ``None`` when the deals cannot tell (the interval holds an edge of the band)."""
    if TARGET[0] <= low and high <= TARGET[1]:
        return True
    if high < TARGET[0] or low > TARGET[1]:
        return False
    return None


def _distances(low: float, high: float) -> tuple[float, float]:
    """The distances from an even game (50%) of the rates from ``low`` to ``high``."""
    ends = abs(low - 0.5), abs(high - 0.5)
    return (0.0 if low <= 0.5 <= high else min(ends)), max(ends)


def _lean(low: float, high: float) -> int:
    """The side of 50% a win rate's interval lies on: −1 below, 1 above, 0 holding it."""
    return -1 if high < 0.5 else 1 if low > 0.5 else 0


def nearer_even(
    variant: dict[str, Any], against: dict[str, Any], games: int, difference_ci: list[float]
) -> dict[str, Any]:
    """Which of the two rule sets of a comparison is nearer an even game, and whether by more
    than the noise of its deals.

    ``variant`` and ``against`` are the two sides of :func:`comparison_figures`.
    When both win rates' Wilson intervals lie on the same side of 50%, the
    change in the distance from even is the difference of the rates (or its
    negative, below 50%), so the Newcombe interval of the difference is its
    interval. Otherwise the two rule sets' distances are told apart only when
    the distances their Wilson intervals allow do not overlap: a cruder test,
    which says "within the noise" more often than a paired one would.
    """
    # In wins, exactly: |2·wins − games| is twice a rule set's distance from even, in games.
    nearer = abs(2 * variant["keeper_wins"] - games) - abs(2 * against["keeper_wins"] - games)
    lean = _lean(*variant["keeper_win_rate_ci"])
    if lean and lean == _lean(*against["keeper_win_rate_ci"]):
        low, high = sorted(lean * end for end in difference_ci)
        interval: list[float] | None = [low, high]
        clear = not low <= 0 <= high
    else:
        interval = None
        (low1, high1), (low2, high2) = (
            side["distance_from_even_ci"] for side in (variant, against)
        )
        clear = high1 < low2 or high2 < low1
    return {
        "nearer_even": "variant" if nearer < 0 else "against" if nearer > 0 else None,
        "distance_change": nearer / (2 * games),
        "distance_change_ci": interval,
        "nearer_even_beyond_noise": bool(nearer) and clear,
    }


def comparison_figures(comparison: Comparison, deals: Deals) -> dict[str, Any]:
    """The figures of a comparison as JSON, with stable keys (``playtest compare --json``).

    ``difference`` is the variant's Keeper win rate minus the other rules', a
    share of 1, with its Newcombe interval; ``p_mid`` and ``p_exact`` are
    McNemar's two-sided p-values for no difference. Each side's
    ``distance_from_even`` is how far its Keeper win rate lies from 50% and
    ``in_target`` whether its Wilson interval lies in the designers' band
    (:data:`~.simulate.TARGET`): true, false, or null when the interval holds an edge of it;
    :func:`nearer_even` gives ``nearer_even`` (``variant``, ``against`` or
    None for equally far), ``distance_change`` (the variant's distance minus
    the other rules') and whether that is beyond the noise of the deals.
    """
    games = deals.total
    low, high = newcombe_paired(deals.both, deals.variant_only, deals.against_only, deals.neither)
    p_exact, p_mid = mcnemar(deals.variant_only, deals.against_only)
    agree = deals.both + deals.neither
    variant = _side(comparison.variant, deals.both + deals.variant_only, games)
    against = _side(comparison.against, deals.both + deals.against_only, games)
    return {
        "games": games,
        "keeper": comparison.keeper,
        "shadow": comparison.shadow,
        "seed": comparison.seed,
        "players": players_digest(),
        "variant": variant,
        "against": against,
        "deals": {
            "both": deals.both,
            "variant_only": deals.variant_only,
            "against_only": deals.against_only,
            "neither": deals.neither,
        },
        "agree": agree,
        "same_games": deals.same,
        "agree_rate": agree / games if games else None,
        "difference": (deals.variant_only - deals.against_only) / games if games else None,
        "difference_ci": [low, high],
        "p_mid": p_mid,
        "p_exact": p_exact,
        "target": list(TARGET),
        **nearer_even(variant, against, games, [low, high]),
    }
