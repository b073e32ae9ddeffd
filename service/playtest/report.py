"""A run's figures in words and tables, as ``playtest simulate`` prints them."""

from __future__ import annotations

from typing import Any

EFFECT_NAMES = {
    "reset": "Reset (heart)",
    "swap": "Swap (diamond)",
    "steal": "Steal (club)",
    "none": "two elixirs",
}


# How a rule set's Keeper win rate stands to the designers' band, by its ``in_target``: its
# whole Wilson interval inside the band, none of it, or an edge of the band within it.
BAND_VERDICTS = {
    True: "inside the band",
    False: "outside the band",
    None: "an edge of the band within its interval: more deals would tell",
}


def counted(count: int, thing: str) -> str:
    """``1 game``, ``2,400 games``."""
    return f"{count:,} {thing}{'' if count == 1 else 's'}"


def percent(rate: float | None) -> str:
    """A share of 1 as ``42.5%``, or a dash for none."""
    return "—" if rate is None else f"{100 * rate:.1f}%"


def number(value: float | None, digits: int = 2) -> str:
    """A mean with ``digits`` decimals, or a dash for none."""
    return "—" if value is None else f"{value:.{digits}f}"


def describe(figures: dict[str, Any]) -> str:
    """The figures of a run as lines of text."""
    games = figures["games"]
    low, high = figures["keeper_win_rate_ci"]
    variant = " ".join(f"{key}={value}" for key, value in figures["variant"].items())
    lines = [
        f"{counted(games, 'game')}: {figures['keeper']} as the Keeper, "
        f"{figures['shadow']} as the Shadow, {variant or 'printed rules'}, seed {figures['seed']}",
        f"Keeper wins: {figures['keeper_wins']:,} ({percent(figures['keeper_win_rate'])}, "
        f"95% Wilson interval {percent(low)}–{percent(high)}); "
        f"Shadow wins: {figures['shadow_wins']:,}",
        *levels_differ(figures),
        "",
        f"Final track (mean {number(figures['track_mean'])}):",
    ]
    most = max(figures["track"].values()) or 1
    for track, count in figures["track"].items():
        bar = "#" * round(40 * count / most)
        lines.append(f"  {track:>3}  {count:>8,}  {percent(count / games):>6}  {bar}")
    rounds = ", ".join(
        f"{played} round{'s' if played != '1' else ''}: {count:,} ({percent(count / games)}, "
        f"Keeper wins {percent(figures['keeper_win_rate_by_rounds'][played])})"
        for played, count in figures["rounds"].items()
    )
    lines += ["", f"Rounds a game lasts (mean {number(figures['rounds_mean'])}): {rounds}"]
    difference = figures["trick_difference"]
    by_round = "; ".join(
        f"round {played} {number(each['mean_abs'])}"
        for played, each in difference["by_round"].items()
    )
    lines += [
        f"Trick difference a round (Shadow's tricks minus Keeper's, over "
        f"{counted(difference['rounds'], 'round')}): mean {number(difference['mean'])}, "
        f"mean size {number(difference['mean_abs'])} ({by_round})",
        "  " + ", ".join(f"{d}: {n:,}" for d, n in difference["distribution"].items()),
        "",
        "Elixir effects     fired  per game  track a round with/without  Keeper wins with/without"
        " (games with/without: a rate of few games says little)",
    ]
    for effect, each in figures["effects"].items():
        with_, without = each["keeper_win_rate_with"], each["keeper_win_rate_without"]
        lines.append(
            f"  {EFFECT_NAMES[effect]:<15} {each['fired']:>8,}  {number(each['per_game']):>8}"
            f"  {number(each['track_moved_with']):>13} / {number(each['track_moved_without']):<11}"
            f"  {percent(with_):>9} / {percent(without)}"
            f" ({each['games_with']:,} / {games - each['games_with']:,})"
        )
    steal = figures["effects"]["steal"]
    lines.append(
        f"  (a Steal took a trick in {steal['took']:,} of {counted(steal['fired'], 'Steal')})"
    )
    lines += [
        "  The Keeper's wins with and without an effect are not what the effect is worth: a "
        "game the Shadow wins early",
        "  has fewer tricks for an effect to fire in, so the games without one are more often "
        "the Shadow's. The track",
        "  a round with the effect and without compares rounds instead, each of ten tricks.",
        "",
    ]
    for played, each in figures["leaders"].items():
        lines.append(
            f"Round {played}: played {each['played']:,}, led by the Shadow {each['shadow_led']:,} "
            f"({percent(each['shadow_led'] / each['played'] if each['played'] else None)}); "
            f"Keeper wins {percent(each['keeper_win_rate_keeper_led'])} when the Keeper led, "
            f"{percent(each['keeper_win_rate_shadow_led'])} when the Shadow led"
        )
    if figures["leaders"]:
        lines += [
            "  The track decides who leads these rounds (the Shadow once it reaches the halfway "
            "mark), so the Keeper's wins",
            "  by leader say where the track stood, not what the lead is worth.",
        ]
    track_by, wins_by = figures["track_by"], figures["shadow_wins_by"]
    shadow_wins = figures["shadow_wins"]
    lines += [
        "",
        f"Track turned up by the Shadow taking tricks: {counted(track_by['taking'], 'card')} "
        f"({percent(track_by['taking_share'])}); by giving them away: {track_by['giving']:,}",
        f"Shadow wins mostly by taking: {wins_by['taking']:,} "
        f"({percent(wins_by['taking'] / shadow_wins if shadow_wins else None)}), "
        f"by giving away: {wins_by['giving']:,} "
        f"({percent(wins_by['giving'] / shadow_wins if shadow_wins else None)}), "
        f"as much of each: {wins_by['even']:,}",
    ]
    return "\n".join(lines)


def levels_differ(figures: dict[str, Any]) -> list[str]:
    """What the Keeper's win rate of seats played by two levels does not say, in lines of
    text: the lean of the rules. None when one level plays both seats."""
    keeper, shadow = figures["keeper"], figures["shadow"]
    if keeper == shadow:
        return []
    return [
        f"The seats are played by different levels ({keeper} as the Keeper, {shadow} as the "
        f"Shadow): the Keeper's win rate measures the two levels as much as the rules, so it "
        f"does not say how balanced the rules are; play both seats with one level for that."
    ]


def p_value(p: float) -> str:
    """A p-value to four decimals, or ``< 0.0001`` below that."""
    return "< 0.0001" if p < 0.0001 else f"{p:.4f}"


def points(share: float | None) -> str:
    """A difference of shares of 1 in percentage points with its sign, ``+1.2``."""
    return "—" if share is None else f"{100 * share:+.1f}"


def describe_comparison(figures: dict[str, Any]) -> str:
    """The figures of a comparison of two rule sets on the same deals as lines of text."""
    games = figures["games"]
    sides = {
        side: " ".join(f"{key}={value}" for key, value in figures[side]["rules"].items())
        or "printed rules"
        for side in ("variant", "against")
    }
    width = max(len(name) for name in sides.values())
    lines = [
        f"{counted(games, 'deal')}, each played under both rule sets: "
        f"{figures['keeper']} as the Keeper, {figures['shadow']} as the Shadow, "
        f"seed {figures['seed']}",
        "",
        f"  {'rules':<{width}}  Keeper wins    rate  95% Wilson interval",
    ]
    for side, name in sides.items():
        each = figures[side]
        low, high = each["keeper_win_rate_ci"]
        lines.append(
            f"  {name:<{width}}  {each['keeper_wins']:>11,}  {percent(each['keeper_win_rate']):>6}"
            f"  {percent(low)}–{percent(high)}"
        )
    deals = figures["deals"]
    low, high = figures["difference_ci"]
    lines += [
        "",
        f"Deals the Keeper won under both: {deals['both']:,}; under {sides['variant']} only: "
        f"{deals['variant_only']:,}; under {sides['against']} only: {deals['against_only']:,}; "
        f"under neither: {deals['neither']:,}",
        f"The two agree on {counted(figures['agree'], 'deal')} ({percent(figures['agree_rate'])}); "
        f"the deals they disagree on decide the difference.",
        *_same_games(figures["same_games"], figures["games"]),
        f"Difference in the Keeper's win rate, {sides['variant']} minus {sides['against']}: "
        f"{points(figures['difference'])} points "
        f"(95% Newcombe paired interval {points(low)} to {points(high)})",
        f"McNemar test of no difference: mid-p {p_value(figures['p_mid'])}, "
        f"exact p {p_value(figures['p_exact'])}",
        "",
        *levels_differ(figures),
        *describe_balance(figures, sides),
    ]
    return "\n".join(lines)


def _same_games(same: int, games: int) -> list[str]:
    """What the comparison says of the deals played move for move the same by both rule sets:
    a change that alters no game at all (halfway=6 against the printed 5, on a track that
    stands only at even numbers) should not read as one whose effect is merely small."""
    if same == games:
        return [
            "Every deal was played move for move the same under both rule sets: on these "
            "deals the change changes nothing, whatever the interval below allows."
        ]
    if same:
        were = "was" if same == 1 else "were"
        return [f"Of those, {counted(same, 'deal')} {were} played move for move the same."]
    return []


def describe_balance(figures: dict[str, Any], sides: dict[str, str]) -> list[str]:
    """Which of a comparison's two rule sets is nearer an even game, in lines of text;
    ``sides`` names the rules of ``variant`` and ``against``."""
    low, high = figures["target"]
    width = max(len(name) for name in sides.values())
    lines = [
        f"Distance from an even game (the Keeper winning 50%), in points, and the designers' "
        f"band of {percent(low)} to {percent(high)}:",
    ]
    for side, name in sides.items():
        each = figures[side]
        near, far = each["distance_from_even_ci"]
        lines.append(
            f"  {name:<{width}}  {100 * each['distance_from_even']:>5.1f}  "
            f"(from its Wilson interval {100 * near:.1f} to {100 * far:.1f})  "
            f"{BAND_VERDICTS[each['in_target']]}"
        )
    nearer = figures["nearer_even"]
    if nearer is None:
        lines.append("Both are as far from an even game.")
        return lines
    farther = "against" if nearer == "variant" else "variant"
    by = abs(figures["distance_change"])
    interval = figures["distance_change_ci"]
    if interval is not None:
        # Oriented like the sentence: how much farther the other rules are.
        low, high = sorted(-end if nearer == "variant" else end for end in interval)
        why = (
            "both rule sets lean the same way, so the change in distance is the difference "
            "in the win rate, with its paired interval"
        )
        lines.append(
            f"{sides[nearer]} is nearer an even game than {sides[farther]}, "
            f"by {100 * by:.1f} points (95% interval {points(low)} to {points(high)}): "
            + (
                f"beyond the noise of these deals; {why}."
                if figures["nearer_even_beyond_noise"]
                else f"within the noise of these deals, as the interval holds 0; {why}."
            )
        )
    elif figures["nearer_even_beyond_noise"]:
        lines.append(
            f"{sides[nearer]} is nearer an even game than {sides[farther]}, "
            f"by {100 * by:.1f} points: beyond the noise of these deals, as the distances "
            f"their Wilson intervals allow do not overlap."
        )
    else:
        lines.append(
            f"{sides[nearer]} is nearer an even game than {sides[farther]} by these deals' "
            f"estimates, by {100 * by:.1f} points, but that is within their noise: the distances "
            f"their Wilson intervals allow overlap (one holds 50%, or they lean opposite ways)."
        )
    return lines
