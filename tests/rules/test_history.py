"""A history entry holds the facts of a trick and no words: readers put them in their language."""

from __future__ import annotations

import re
from typing import Any

from service.rules import SEATS, SUITS, is_elixir

from .helpers import play, playing, random_game, strings

FACTS = {"round", "trick", "leader", "cards", "winner", "effect", "outcome"}
EFFECTS = {None, "reset", "swap", "steal", "none"}
# A card, a suit letter, a seat, an effect, a steal's outcome, a swap's count, or a key of a
# played card: codes, not prose.
CODE = re.compile(r"[1-7][HDCS]|[HDC]|keeper|shadow|reset|swap|steal|none|took|nothing|\d*")
CARD_KEYS = {"seat", "card", "name"}
# Two elixirs meet in one trick too seldom in random games: this game has them meet first.
TWO_ELIXIRS = ("4S 1D 2D 3D 4D 5D 6D 7D 1H 2H", "5S 1C 2C 3C 4C 5C 3H 4H 5H 6H")


def facts_only(entry: dict[str, Any]) -> list[str]:
    """What in ``entry`` is not one of the facts of a trick, as codes."""
    wrong = [f"key {key!r}" for key in sorted(set(entry) ^ FACTS)]
    if wrong:
        return wrong
    lead, follow = entry["cards"]
    if isinstance(entry["round"], bool) or not isinstance(entry["round"], int):
        wrong.append("round")
    if isinstance(entry["trick"], bool) or not isinstance(entry["trick"], int):
        wrong.append("trick")
    if entry["leader"] != lead["seat"] or {lead["seat"], follow["seat"]} != set(SEATS):
        wrong.append("seats")
    if entry["winner"] not in SEATS or entry["effect"] not in EFFECTS:
        wrong.append("winner or effect")
    if set(follow) != {"seat", "card"} or set(lead) - CARD_KEYS:
        wrong.append("cards")
    if "name" in lead and (not is_elixir(lead["card"]) or lead["name"] not in SUITS):
        wrong.append("named suit")
    texts = sorted(strings(list(entry.values())))
    wrong += [
        f"words {text!r}" for text in texts if text not in CARD_KEYS and not CODE.fullmatch(text)
    ]
    return wrong


def test_history_entries_hold_facts_and_no_prose() -> None:
    games = [random_game(seed)[0] for seed in range(40)]
    games.append(play(playing(*TWO_ELIXIRS), ("keeper", "4S", "D"), ("shadow", "5S")))
    entries = [entry for state in games for entry in state["history"]]
    for entry in entries:
        assert facts_only(entry) == [], entry
    # Every kind of effect and of outcome was among them.
    seen = {(entry["effect"], entry["outcome"]) for entry in entries}
    assert {effect for effect, _outcome in seen} == EFFECTS
    assert {("steal", "took"), ("steal", "nothing"), ("swap", "2")} <= seen


def test_the_check_finds_prose() -> None:
    state, _actions = random_game(1)
    entry = state["history"][0]
    assert facts_only(entry) == []
    assert facts_only({**entry, "text": "Steal: Keeper took a trick from Shadow"}) == ["key 'text'"]
    assert facts_only({**entry, "outcome": "took a trick"}) == ["words 'took a trick'"]
    assert facts_only({**entry, "winner": "Keeper"}) == ["winner or effect", "words 'Keeper'"]
