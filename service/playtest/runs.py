"""Stored simulation runs: what ``playtest simulate --save`` writes and the dashboard reads.

The functions flush only; the caller owns the transaction.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from ..models import RUN_VARIANT_LABEL, PlaytestRun, db
from .simulate import Settings

# The dashboard shows this many of the latest runs.
LATEST = 50


def save_run(settings: Settings, figures: dict[str, Any]) -> PlaytestRun:
    """Store a run's settings and its figures (as ``--json`` prints them).

    The variant's label, which the dashboard shows, is cut short with an
    ellipsis when it is too long to store; the settings keep every parameter.
    """
    label = settings.variant.describe()
    if len(label) > RUN_VARIANT_LABEL:
        label = label[: RUN_VARIANT_LABEL - 1] + "…"
    run = PlaytestRun(
        keeper_level=settings.keeper,
        shadow_level=settings.shadow,
        variant=label,
        games=figures["games"],
        keeper_wins=figures["keeper_wins"],
        settings=settings.to_json(),
        figures=figures,
    )
    db.session.add(run)
    db.session.flush()
    return run


def runs_stored() -> int:
    """How many runs are stored."""
    return db.session.scalar(select(func.count()).select_from(PlaytestRun)) or 0


def latest_runs(limit: int = LATEST) -> list[PlaytestRun]:
    """The latest stored runs, newest first."""
    return list(
        db.session.scalars(
            select(PlaytestRun)
            .order_by(PlaytestRun.created_at.desc(), PlaytestRun.id.desc())
            .limit(limit)
        )
    )
