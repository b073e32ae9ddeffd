"""The playtest page: games between people and stored simulation runs, side by side, with the
same figures for each.

Games against the computer are left out: they measure people against the
computer, every level and seat together, not the balance of the rules. The
statistics page gives them by level and seat.

Finished games are added up by :func:`service.admin.stats.playtest` from
their ``game_figures`` rows; a stored run already holds its figures
(:mod:`service.playtest.runs`). Each becomes a :class:`Source` here, so the
template and the plots read one shape whatever the figures came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from ..models import PlaytestRun
from ..playtest.plots import WinRate, track_plot, win_rate_plot
from ..playtest.runs import LATEST, latest_runs, runs_stored
from ..playtest.simulate import wilson
from ..rules import PRINTED, TRICKS_PER_ROUND, Variant, VariantError
from .stats import Playtest, playtest

# Final-track plots for this many of the latest runs (the table lists more).
PLOTTED_RUNS = 8
# The hex digits of a run's players digest the table shows; the full digest is its title.
PLAYERS_SHOWN = 12


@dataclass(frozen=True)
class Source:
    """The figures of one set of games: people's, or one simulation run.

    Shares are of 1, and None where the source cannot say (a stored run
    knows how the Shadow turned up the track; finished games do not keep it).
    """

    label: str
    kind: str
    games: int
    keeper_wins: int
    tracks: list[int]
    rounds_mean: float | None
    effects_per_game: dict[str, float | None]
    shadow_led: dict[str, float | None]
    taking_share: float | None = None
    shadow_wins_by: dict[str, int] = field(default_factory=dict)
    run: PlaytestRun | None = None

    @property
    def players(self) -> str | None:
        """The :func:`~service.playtest.simulate.players_digest` of a run's players.

        None for games, and for a run stored before runs kept it.
        """
        return self.run.settings.get("players") if self.run else None

    @property
    def players_short(self) -> str | None:
        """The start of :attr:`players`, as the table shows it."""
        return self.players[:PLAYERS_SHOWN] if self.players else None

    @property
    def keeper_win_rate(self) -> float | None:
        """The Keeper's share of the games, or None without games."""
        return self.keeper_wins / self.games if self.games else None

    @property
    def interval(self) -> tuple[float, float]:
        """The 95% Wilson interval of the Keeper's win rate."""
        return wilson(self.keeper_wins, self.games)

    @property
    def track_mean(self) -> float | None:
        """The mean final track."""
        return (
            sum(n * count for n, count in enumerate(self.tracks)) / self.games
            if self.games
            else None
        )


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def from_games(label: str, kind: str, figures: Playtest) -> Source:
    """A source of finished games, from the statistics' sums."""
    games = figures.games
    return Source(
        label=label,
        kind=kind,
        games=games,
        keeper_wins=figures.keeper_wins,
        tracks=figures.tracks,
        rounds_mean=_share(figures.tricks, games * TRICKS_PER_ROUND),
        effects_per_game={
            "reset": _share(figures.effects["reset"], games),
            "swap": _share(figures.effects["swap"], games),
            "steal": _share(figures.effects["steal"], games),
        },
        shadow_led={
            str(n): _share(shadow, played) for n, (played, shadow) in figures.rounds.items()
        },
    )


def from_run(run: PlaytestRun) -> Source:
    """A source of a stored run, from its figures.

    Its label says which level played which seat, every rule it changed (from
    its settings: the stored label is cut short when long), and the seed: runs
    with the same seed play the same deals, and the seed is what replays a run.
    """
    figures: dict[str, Any] = run.figures
    return Source(
        label=(
            f"run {run.id}: {run.keeper_level} (Keeper) v {run.shadow_level} (Shadow), "
            f"{_rules(run.settings['variant'])}, seed {run.settings['seed']}"
        ),
        kind="run",
        games=run.games,
        keeper_wins=run.keeper_wins,
        tracks=[figures["track"][key] for key in sorted(figures["track"], key=int)],
        rounds_mean=figures["rounds_mean"],
        effects_per_game={
            effect: figures["effects"][effect]["per_game"] for effect in ("reset", "swap", "steal")
        },
        shadow_led={
            number: _share(each["shadow_led"], each["played"])
            for number, each in figures["leaders"].items()
        },
        taking_share=figures["track_by"]["taking_share"],
        shadow_wins_by=figures["shadow_wins_by"],
        run=run,
    )


def _rules(options: dict[str, str]) -> str:
    """A stored run's variant options as ``halfway=6 swap_size=1``, in the parameters' order.

    A run stored by other code may hold a parameter this code does not know,
    or a value it now refuses: it is named by its options as stored.
    """
    try:
        described = Variant.from_options(options).describe()
    except VariantError:
        described = " ".join(f"{key}={value}" for key, value in sorted(options.items()))
    return described or "printed rules"


def sources() -> list[Source]:
    """People's games and the stored runs."""
    return [
        from_games("games between people", "human", playtest()),
        *(from_run(run) for run in latest_runs(LATEST)),
    ]


def page() -> dict[str, Any]:
    """What the playtest page shows: the sources, and their plots."""
    found = sources()
    rows = [WinRate(s.label, s.games, s.keeper_win_rate, *s.interval) for s in found]
    games = [source for source in found if source.kind != "run"]
    runs = [source for source in found if source.kind == "run"][:PLOTTED_RUNS]
    tracks: list[tuple[Source, Markup]] = [
        (source, track_plot(source.label, source.tracks)) for source in games + runs
    ]
    return {
        "sources": found,
        # Runs whose Keeper's win rate measures two levels as much as the rules.
        "two_levels": sum(1 for s in found if s.run and s.run.keeper_level != s.run.shadow_level),
        "win_rates": win_rate_plot(rows),
        "tracks": tracks,
        "printed_halfway": PRINTED.halfway,
        # The table lists the latest runs only: the page says so when more are stored.
        "runs_stored": runs_stored(),
        "runs_listed": LATEST,
        "runs_plotted": PLOTTED_RUNS,
    }
