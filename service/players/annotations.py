"""What the move page shows beyond the seat's view: the news since the player's last move
(:func:`service.perspective.since_last_move`), the deadline in words, and why each card or
selection is or is not a legal move.

Everything is derived from :func:`service.games.player_view`, never from the game's state.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from babel.dates import TIMEDELTA_UNITS
from flask_babel import format_timedelta

from ..game_text import deadline_text, exchange_elixir_reason, follow_reason
from ..language import ngettext
from ..models import utcnow
from ..perspective import PlayerView, since_last_move
from ..rules import PLAY, is_elixir


def last_move(view: PlayerView) -> dict[str, Any] | None:
    """What the player's own last move did, when it ended a trick (and perhaps a round or the game).

    Read from the history and the player's history mark, so the page after the move's
    redirect says it without the GET changing anything: ``trick`` is the history entry,
    ``round`` the ``(number, result)`` of a round it ended (the page's status line says
    whether that ended the game). ``None`` when the last move only led a card or chose
    cards, or when the player has moved since.
    """
    history = view["history"]
    mark = len(history) - len(view["since"])
    if mark == 0:
        return None
    trick = history[mark - 1]
    me = view["seat"]
    if trick["cards"][1]["seat"] != me:
        return None
    table = view["table"]
    if (table and table[0]["seat"] == me) or any(t["leader"] == me for t in view["since"]):
        return None
    # Every exchange or swap settled since that trick took a choice of the player's too.
    when = (trick["round"], trick["trick"])
    if view["pending"] or any((t["round"], t["after_trick"]) >= when for t in view["transfers"]):
        return None
    ended_round = (
        trick["trick"] == view["tricks_per_round"] and len(view["rounds"]) >= trick["round"]
    )
    result = (trick["round"], view["rounds"][trick["round"] - 1]) if ended_round else None
    return {"trick": trick, "round": result}


def deadline(
    due: str | None, now: datetime | None = None, zone: str | None = None
) -> dict[str, Any] | None:
    """The next move's deadline, ``due`` as the view gives it: ``when`` (a date, in the time
    zone ``zone`` the player's address chose, else in UTC) and ``left`` (``in 6 days``)."""
    if not due:
        return None
    left = datetime.fromisoformat(due) - (now or utcnow())
    return {
        "iso": due,
        "when": deadline_text(due, zone),
        "left": time_left(left),
        "late": left.total_seconds() <= 0,
    }


# A unit is used from two of it on: "in 10 days", not "in 1 week".
THRESHOLD = 2
# A deadline just given (3 days less the request's milliseconds) is still "in 3 days": at
# most a minute, and a hundredth of the unit counted, is read as the whole unit.
SLACK = 60


def time_left(left: timedelta) -> str:
    """How long ``left`` is in words (``in 10 days``, ``2 hours ago``), in whole units and
    never more than it is (but for :data:`SLACK`): rounded, 11 days would read "in 2 weeks"."""
    ahead = left.total_seconds() > 0
    seconds = abs(left.total_seconds())
    whole = seconds
    for _, size in TIMEDELTA_UNITS:
        given = seconds + (min(SLACK, size / 100) if ahead else 0)
        if given >= THRESHOLD * size:
            whole = given // size * size
            break
    shown = timedelta(seconds=whole if ahead else -whole)
    return format_timedelta(shown, add_direction=True, threshold=THRESHOLD)


def choose_reasons(view: PlayerView) -> dict[str, Any]:
    """Why a selection of cards to give is not yet a legal exchange or swap.

    ``count`` maps each possible number of selected cards to its message (empty
    when the number is right); ``elixir`` is the exchange rule when it applies.
    """
    legal = view["legal"]
    assert isinstance(legal, dict), "an exchange or swap is owed"
    size = legal["choose"]
    count = {}
    for selected in range(len(view["hand"]) + 1):
        if selected < size:
            count[selected] = ngettext(
                "Choose %(num)d more card.", "Choose %(num)d more cards.", size - selected
            )
        elif selected == size + 1:
            count[selected] = ngettext(
                "You give only %(num)d card: put one back.",
                "You give only %(num)d cards: put one back.",
                size,
            )
        elif selected > size:
            count[selected] = ngettext(
                "You give only %(num)d card: put %(extra)d back.",
                "You give only %(num)d cards: put %(extra)d back.",
                size,
                extra=selected - size,
            )
        else:
            count[selected] = ""
    elixir = ""
    if legal["must_include_elixir"]:
        held = sum(1 for card in view["hand"] if is_elixir(card))
        elixir = exchange_elixir_reason(held, view["look"])
    return {"count": json.dumps(count), "elixir": elixir}


def play_reasons(view: PlayerView) -> dict[str, str]:
    """Why each card of the hand may not be played now (legal cards are left out)."""
    legal = view["legal"]
    assert isinstance(legal, list), "a play is owed"
    playable = {move["play"] for move in legal}
    if not view["table"]:
        return {}
    reason = follow_reason(view["table"][0], view["hand"], view["look"])
    return {card: reason for card in view["hand"] if card not in playable}


def page_context(view: PlayerView, time_zone: str | None) -> dict[str, Any]:
    """Everything the move page template needs besides the view itself, its times in
    ``time_zone`` (the one the player's address chose; ``None``: UTC)."""
    context: dict[str, Any] = {
        "news": since_last_move(view),
        "last_move": last_move(view),
        "deadline": deadline(view["deadline"], zone=time_zone),
        "time_zone": time_zone,
    }
    if view["choosing"]:
        context["reasons"] = choose_reasons(view)
    elif view["your_turn"] and view["phase"] == PLAY:
        context["reasons"] = play_reasons(view)
    return context
