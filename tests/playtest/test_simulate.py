"""The simulation: the same seed plays the same games, and its figures add up."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from service.playtest import simulate as simulate_module
from service.playtest.report import describe
from service.playtest.simulate import (
    MOST_CHUNK,
    MOST_GAMES,
    Settings,
    Tally,
    chunk_size,
    chunks,
    figures,
    game_seed,
    play_chunk,
    play_game,
    players_digest,
    processes,
    simulate,
    wilson,
)
from service.rules import Variant


def run(games: int = 12, seed: int = 1, **options: str) -> dict:
    settings = Settings(
        games=games,
        keeper="easy",
        shadow="random",
        variant=Variant.from_options(options),
        seed=seed,
    )
    return figures(settings, simulate(settings))


@pytest.mark.parametrize(
    ("wins", "games", "low", "high"),
    [
        # Published values of the 95% Wilson score interval.
        (0, 10, 0.0, 0.2775),
        (5, 10, 0.2366, 0.7634),
        (50, 100, 0.4038, 0.5962),
        (10, 10, 0.7225, 1.0),
    ],
)
def test_wilson_interval_matches_known_values(wins, games, low, high) -> None:
    found = wilson(wins, games)
    assert found == pytest.approx((low, high), abs=1e-4)


def test_wilson_interval_of_nothing_is_everything() -> None:
    assert wilson(0, 0) == (0.0, 1.0)


def test_a_seed_always_plays_the_same_games() -> None:
    assert run(seed=4) == run(seed=4)
    assert run(seed=4) != run(seed=5)
    assert game_seed(4, 0) != game_seed(5, 0) and game_seed(4, 0) != game_seed(4, 1)


def test_a_game_does_not_depend_on_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clock that races past every search's time limit changes none of the moves."""
    expected = play_game(game_seed(1, 0), "medium", "medium")
    ticks = itertools.count()
    monkeypatch.setattr(time, "thread_time", lambda: 1000.0 * next(ticks))
    assert play_game(game_seed(1, 0), "medium", "medium") == expected


def test_processes_do_not_change_the_figures() -> None:
    settings = Settings(games=8, keeper="easy", shadow="easy", seed=2)
    heard: list[int] = []
    in_two = simulate(settings, workers=2, progress=heard.append)
    assert sum(heard) == 8
    assert figures(settings, in_two) == figures(settings, simulate(settings, workers=1))


def test_a_run_uses_no_more_processes_than_its_parts_or_the_machine() -> None:
    one, many = (Settings(games=games, keeper="easy", shadow="easy") for games in (1, 1000))
    assert processes(one, 500) == processes(many, 1) == 1
    assert processes(many, 500) == os.cpu_count()


def test_the_parts_of_a_run_are_made_as_they_are_played() -> None:
    largest = Settings(games=MOST_GAMES, keeper="easy", shadow="easy")
    parts = chunks(largest, chunk_size(largest, 1))
    assert next(parts) == (largest, 0, MOST_CHUNK)
    assert next(parts) == (largest, MOST_CHUNK, 2 * MOST_CHUNK)


def test_tallies_of_parts_add_up_to_the_tally_of_the_whole() -> None:
    settings = Settings(games=6, keeper="random", shadow="easy", seed=3)
    parts = play_chunk((settings, 0, 2)) + play_chunk((settings, 2, 6))
    assert parts == play_chunk((settings, 0, 6))
    assert Tally() + parts == parts


def test_figures_add_up() -> None:
    found = run(games=30)
    games = found["games"]
    assert games == 30
    assert found["keeper_wins"] + found["shadow_wins"] == games
    assert found["keeper_win_rate"] == found["keeper_wins"] / games
    low, high = found["keeper_win_rate_ci"]
    assert low <= found["keeper_win_rate"] <= high
    assert sum(found["track"].values()) == games
    assert sum(found["rounds"].values()) == games
    assert sum(found["shadow_wins_by"].values()) == found["shadow_wins"]
    assert found["track"]["10"] == found["shadow_wins"]
    # Every track card turned up was turned up one way or the other.
    turned = sum(int(track) * count for track, count in found["track"].items())
    assert found["track_by"]["taking"] + found["track_by"]["giving"] == turned
    played = sum(int(rounds) * count for rounds, count in found["rounds"].items())
    assert found["trick_difference"]["rounds"] == played
    assert sum(found["trick_difference"]["distribution"].values()) == played
    assert found["leaders"]["2"]["played"] == games - found["rounds"]["1"]
    assert found["leaders"]["3"]["played"] == found["rounds"]["3"]
    for effect in found["effects"].values():
        assert effect["games_with"] <= games
    assert found["effects"]["steal"]["took"] <= found["effects"]["steal"]["fired"]
    json.dumps(found)


def test_the_figures_follow_the_games_played() -> None:
    settings = Settings(games=3, keeper="easy", shadow="easy", seed=9)
    tally = Tally()
    states = [play_game(game_seed(9, number), "easy", "easy") for number in range(3)]
    for state in states:
        tally.add(state)
    found = figures(settings, tally)
    assert found["keeper_wins"] == sum(state["winner"] == "keeper" for state in states)
    assert found == figures(settings, simulate(settings))
    fired = sum(1 for state in states for trick in state["history"] if trick["effect"] == "swap")
    assert found["effects"]["swap"]["fired"] == fired


def test_a_variant_changes_the_rules_played() -> None:
    one_round = run(rounds="1")
    assert one_round["rounds"] == {"1": 12}
    assert one_round["leaders"] == {}
    assert one_round["variant"] == {"rounds": "1", "exchange_sizes": "1"}
    shadow_first = play_game(5, "easy", "easy", Variant(first_leader="shadow"))
    assert shadow_first["history"][0]["leader"] == "shadow"
    always_shadow = run(games=20, halfway="0")
    assert always_shadow["leaders"]["2"]["shadow_led"] == always_shadow["leaders"]["2"]["played"]
    # Five rounds: the track decides who leads each of rounds 2 to 5, and each is counted.
    longer = run(games=20, rounds="5", track_length="20")
    assert list(longer["leaders"]) == ["2", "3", "4", "5"]
    reached = {
        number: sum(count for rounds, count in longer["rounds"].items() if int(rounds) >= number)
        for number in range(2, 6)
    }
    assert {int(number): each["played"] for number, each in longer["leaders"].items()} == reached
    assert longer["leaders"]["5"]["played"] > 0
    short = run(games=20, track_length="4", halfway="2")
    assert set(short["track"]) == {"0", "1", "2", "3", "4"}
    assert short["shadow_wins"] > run(games=20)["shadow_wins"]


def test_a_run_names_its_players_by_a_digest_of_their_code(tmp_path, monkeypatch) -> None:
    digest = players_digest()
    assert len(digest) == 64 and int(digest, 16) >= 0
    settings = Settings(games=2, keeper="easy", shadow="random")
    assert settings.to_json()["players"] == digest
    assert figures(settings, simulate(settings))["players"] == digest
    # A copy of the code has the same digest; a change to a player's code gives another.
    service = Path(simulate_module.__file__).resolve().parent.parent
    for package in ("bots", "rules"):
        shutil.copytree(
            service / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    (tmp_path / "playtest").mkdir()
    copy = tmp_path / "playtest" / "simulate.py"
    shutil.copy(service / "playtest" / "simulate.py", copy)
    monkeypatch.setattr(simulate_module, "__file__", str(copy))
    assert players_digest.__wrapped__() == digest
    budgets = tmp_path / "bots" / "__init__.py"
    budgets.write_text(budgets.read_text().replace("playouts=40", "playouts=41"))
    assert players_digest.__wrapped__() != digest


def test_settings_refuse_unknown_levels_and_empty_runs() -> None:
    with pytest.raises(ValueError, match="no level 'genius'"):
        Settings(games=1, keeper="genius", shadow="easy")
    for games in (0, MOST_GAMES + 1):
        with pytest.raises(ValueError, match=f"1 to {MOST_GAMES} games, not {games}"):
            Settings(games=games, keeper="easy", shadow="easy")


def test_the_report_names_every_figure() -> None:
    text = describe(run(games=10))
    for words in (
        "Keeper wins",
        "Wilson",
        "Final track",
        "Rounds a game lasts",
        "Trick difference",
        "Steal",
        "Round 2",
        "Round 3",
        "by giving them away",
    ):
        assert words in text


def test_a_run_of_one_game_reads_in_the_singular() -> None:
    settings = Settings(
        games=1, keeper="random", shadow="random", variant=Variant(rounds=1, exchange_sizes=(1,))
    )
    text = describe(figures(settings, simulate(settings)))
    assert "over 1 round)" in text
    assert " 1 times" not in text and ": 1 cards" not in text


def test_a_run_of_two_levels_says_its_rate_is_not_the_rules_balance() -> None:
    # easy as the Keeper against random as the Shadow: the better player holds one seat.
    text = describe(run(games=4))
    assert "The seats are played by different levels (easy as the Keeper, random as the " in text
    assert "does not say how balanced the rules are" in text
    settings = Settings(games=4, keeper="easy", shadow="easy")
    assert "different levels" not in describe(figures(settings, simulate(settings)))


def test_the_report_does_not_read_won_games_by_effect_or_leader_as_their_worth() -> None:
    text = describe(run(games=6))
    assert "The Keeper's wins with and without an effect are not what the effect is worth" in text
    assert "by leader say where the track stood, not what the lead is worth." in text
    # A game of one round has no round whose leader the track decides.
    one_round = describe(run(games=2, rounds="1"))
    assert "not what the lead is worth" not in one_round
