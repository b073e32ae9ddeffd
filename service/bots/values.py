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

# Chance of each difference 0 to 10 in one round (a round of ten tricks gives even ones only).
ROUND_DIFFERENCES: tuple[float, ...] = (0.17, 0, 0.35, 0, 0.26, 0, 0.14, 0, 0.06, 0, 0.02)

# By track length, the Shadow's chances with 0, 1, 2... rounds left: each a tuple of her
# chance with 0, 1, 2... cards of the track up. Worked out a round at a time and kept; a
# tuple replaced whole when it grows, so two threads at once only work one out twice.
_CHANCES: dict[int, tuple[tuple[float, ...], ...]] = {}


def shadow_chance(track: int, rounds_left: int, track_length: int) -> float:
    """The Shadow's chance to win with ``track`` cards up and ``rounds_left`` rounds to play."""
    if track >= track_length:
        return 1.0
    if rounds_left <= 0:
        return 0.0
    return _chances(rounds_left, track_length)[track]


def _chances(rounds_left: int, track_length: int) -> tuple[float, ...]:
    """The Shadow's chance with each number of cards up, 0 to ``track_length``, and
    ``rounds_left`` rounds to play: from no round left, one round before another."""
    rows = _CHANCES.get(track_length) or ((0.0,) * track_length + (1.0,),)
    if len(rows) <= rounds_left:
        grown = list(rows)
        while len(grown) <= rounds_left:
            grown.append(_round_before(grown[-1], track_length))
        rows = _CHANCES[track_length] = tuple(grown)
    return rows[rounds_left]


def _round_before(after: tuple[float, ...], track_length: int) -> tuple[float, ...]:
    """The Shadow's chances one round earlier than ``after``."""
    return (
        *(
            sum(
                chance * after[min(track_length, track + difference)]
                for difference, chance in enumerate(ROUND_DIFFERENCES)
                if chance
            )
            for track in range(track_length)
        ),
        1.0,
    )


def round_end_value(track: int, difference: int, rounds_left: int, track_length: int) -> float:
    """The Shadow's chance once a round ends with ``difference``: the track stops at its end."""
    return shadow_chance(min(track_length, track + difference), rounds_left, track_length)
