"""The worth of a round's end: the Shadow's chance to win the game from there."""

from __future__ import annotations

import pytest

from service.bots.values import ROUND_DIFFERENCES, round_end_value, shadow_chance


def test_the_differences_are_a_distribution_of_even_numbers() -> None:
    assert sum(ROUND_DIFFERENCES) == pytest.approx(1)
    assert len(ROUND_DIFFERENCES) == 11
    assert all(chance == 0 for difference, chance in enumerate(ROUND_DIFFERENCES) if difference % 2)


def test_a_finished_track_wins_and_no_rounds_left_loses() -> None:
    assert shadow_chance(10, 2, 10) == 1.0
    assert shadow_chance(10, 0, 10) == 1.0
    assert shadow_chance(9, 0, 10) == 0.0


def test_the_last_round_counts_only_finishing_the_track() -> None:
    assert [round_end_value(6, difference, 0, 10) for difference in (0, 2, 3, 4, 6)] == [
        0.0,
        0.0,
        0.0,
        1.0,
        1.0,
    ]


@pytest.mark.parametrize("rounds_left", [1, 2])
def test_every_card_turned_up_helps_the_shadow_earlier(rounds_left: int) -> None:
    chances = [round_end_value(0, difference, rounds_left, 10) for difference in range(0, 11, 2)]
    assert chances == sorted(chances)
    assert 0 < chances[0] < chances[-2] < chances[-1] == 1.0


def test_a_shorter_track_is_easier_for_the_shadow() -> None:
    assert shadow_chance(0, 2, 6) > shadow_chance(0, 2, 10)


def recursive_chance(track: int, rounds_left: int, track_length: int) -> float:
    """The Shadow's chance as first written: a call per round left (too deep for 1,000)."""
    if track >= track_length:
        return 1.0
    if rounds_left <= 0:
        return 0.0
    return sum(
        chance * recursive_chance(track + difference, rounds_left - 1, track_length)
        for difference, chance in enumerate(ROUND_DIFFERENCES)
        if chance
    )


@pytest.mark.parametrize("track_length", [6, 10, 14])
def test_the_chances_are_worked_out_as_the_recursion_works_them(track_length: int) -> None:
    for rounds_left in range(7):
        for track in range(track_length + 3):
            expected = recursive_chance(track, rounds_left, track_length)
            assert shadow_chance(track, rounds_left, track_length) == expected


def test_a_thousand_rounds_need_no_deep_recursion() -> None:
    assert round_end_value(0, 0, 1000, 10) == pytest.approx(1.0)
    assert shadow_chance(0, 1000, 40) > shadow_chance(0, 10, 40) > 0
