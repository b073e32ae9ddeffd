"""What a round's end is worth: the Shadow's chance to win the game from there.

A round turns up as many track cards as the difference of the two seats'
tricks. When a round ends with the track finished the Shadow has won; when the
last round ends short of it the Keeper has. In between, the Shadow's chance is
that of the rounds left turning up the rest of the track, each round's
difference drawn from :data:`ROUND_DIFFERENCES`: how often each difference
came up in 600 games of the ``medium`` level against itself. A search that
plays a round out to its end scores it with :func:`round_end_value`, which
makes the Keeper's goal (a small difference) and the Shadow's (a large one)
one number that the track and the round weigh: in the last round only
finishing the track counts, earlier every card turned up counts a little.
"""

from __future__ import annotations

from functools import cache

# Chance of each difference 0 to 10 in one round (a round of ten tricks gives even ones only).
ROUND_DIFFERENCES: tuple[float, ...] = (0.17, 0, 0.35, 0, 0.26, 0, 0.14, 0, 0.06, 0, 0.02)


@cache
def shadow_chance(track: int, rounds_left: int, track_length: int) -> float:
    """The Shadow's chance to win with ``track`` cards up and ``rounds_left`` rounds to play."""
    if track >= track_length:
        return 1.0
    if rounds_left <= 0:
        return 0.0
    return sum(
        chance * shadow_chance(track + difference, rounds_left - 1, track_length)
        for difference, chance in enumerate(ROUND_DIFFERENCES)
        if chance
    )


def round_end_value(track: int, difference: int, rounds_left: int, track_length: int) -> float:
    """The Shadow's chance once a round ends with ``difference``: the track stops at its end."""
    return shadow_chance(min(track_length, track + difference), rounds_left, track_length)
