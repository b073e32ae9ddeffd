"""Each level beats a weaker one, in the playtest lab's terms: the same seeded deals played
with the stronger level in each seat, its wins' 95% Wilson interval clear of one half."""

from __future__ import annotations

import pytest

from service.playtest.simulate import Settings, simulate, wilson

# Games a seat: the hard level searches for seconds a game without its time limit.
MATCHES = {("easy", "random"): 20, ("medium", "easy"): 20, ("hard", "random"): 4}


@pytest.mark.slow
@pytest.mark.parametrize(("stronger", "weaker"), MATCHES, ids=lambda level: level)
def test_a_level_beats_a_weaker_one_in_both_seats(stronger: str, weaker: str) -> None:
    games = MATCHES[stronger, weaker]
    as_keeper = simulate(Settings(games=games, keeper=stronger, shadow=weaker))
    as_shadow = simulate(Settings(games=games, keeper=weaker, shadow=stronger))
    wins = as_keeper.keeper_wins + as_shadow.games - as_shadow.keeper_wins
    low, _ = wilson(wins, 2 * games)
    assert low > 0.5, f"{stronger} won {wins} of {2 * games} games against {weaker}"
