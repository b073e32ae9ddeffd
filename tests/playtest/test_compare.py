"""Two rule sets on the same deals: the paired statistics, and the deals they count."""

from __future__ import annotations

import pytest

from service.playtest.compare import (
    Comparison,
    Deals,
    compare,
    comparison_figures,
    mcnemar,
    newcombe_paired,
    play_deals,
)
from service.playtest.report import describe, describe_comparison
from service.playtest.simulate import Settings, figures, simulate
from service.rules import PRINTED, Variant

# The Shadow leads rounds 2 and 3: on the first 20 deals of seed 1 (easy against random)
# the Keeper wins some deals under each rule set only.
VARIANT = Variant(halfway=0)


def comparison(games: int = 12, seed: int = 1, **rules: Variant) -> Comparison:
    return Comparison(
        games=games,
        keeper="easy",
        shadow="random",
        variant=rules.get("variant", VARIANT),
        against=rules.get("against", PRINTED),
        seed=seed,
    )


def test_newcombe_interval_matches_a_published_example() -> None:
    # Cavo et al. (2012) in Fagerland, Lydersen and Laake's paired 2x2 table chapter:
    # 59 both, 6 first only, 16 second only, 80 neither; −0.0621 (−0.1186 to −0.0046).
    assert newcombe_paired(59, 6, 16, 80) == pytest.approx((-0.1186, -0.0046), abs=1e-4)


def test_newcombe_interval_by_hand_with_no_disagreements() -> None:
    # 5 both, 5 neither: both rates 0.5 with the Wilson interval 0.2366–0.7634, so each
    # side is 0.2634; the correlation is (5·5 − 0 − 10/2) / √(5·5·5·5) = 0.8, and the
    # half-width is √(0.2634² − 2·0.8·0.2634² + 0.2634²) = 0.2634·√0.4 = 0.1666.
    assert newcombe_paired(5, 0, 0, 5) == pytest.approx((-0.1666, 0.1666), abs=1e-4)
    # 10 both: both rates 1 (Wilson 0.7225–1), no correlation to use: ±(1 − 0.7225).
    assert newcombe_paired(10, 0, 0, 0) == pytest.approx((-0.2775, 0.2775), abs=1e-4)


def test_newcombe_interval_of_tiny_samples() -> None:
    assert newcombe_paired(0, 0, 0, 0) == (-1.0, 1.0)
    # One pair, won under the first only: rate 1 (Wilson 0.2065–1) against 0 (0–0.7935),
    # no correlation: 1 − √(0.7935² + 0.7935²) = −0.1221 up to 1.
    assert newcombe_paired(0, 1, 0, 0) == pytest.approx((-0.1221, 1.0), abs=1e-4)
    assert newcombe_paired(0, 0, 1, 0) == pytest.approx((-1.0, 0.1221), abs=1e-4)


def test_newcombe_interval_mirrors_when_the_two_swap() -> None:
    low, high = newcombe_paired(40, 13, 5, 42)
    assert low < 8 / 100 < high
    assert newcombe_paired(40, 5, 13, 42) == pytest.approx((-high, -low))


def test_mcnemar_matches_hand_computed_and_published_values() -> None:
    # 1 against 7 of 8 disagreements: exact 2·(1 + 8)/2⁸ = 18/256; mid-p 2·(1 + 8/2)/2⁸.
    assert mcnemar(1, 7) == pytest.approx((18 / 256, 10 / 256))
    assert mcnemar(7, 1) == pytest.approx((18 / 256, 10 / 256))
    # 0 against 3: exact 2/8, mid-p 1/8.
    assert mcnemar(0, 3) == pytest.approx((0.25, 0.125))
    # Cavo et al. (2012), 6 against 16: exact 0.052479, mid-p 0.034690.
    assert mcnemar(6, 16) == pytest.approx((0.052479, 0.034690), abs=1e-6)


def test_mcnemar_without_a_lean_is_one() -> None:
    assert mcnemar(0, 0) == (1.0, 1.0)
    assert mcnemar(4, 4) == pytest.approx((1.0, 1.0))
    assert mcnemar(1, 0) == pytest.approx((1.0, 0.5))


def test_mcnemar_of_many_disagreements_needs_no_huge_numbers() -> None:
    # 26 against 18: 2·Σ C(44, i)/2⁴⁴ for i ≤ 18 = 0.291215.
    exact, mid = mcnemar(26, 18)
    assert exact == pytest.approx(0.291215, abs=1e-6)
    assert mid < exact
    # A million: the normal tail, 2000 apart is z = 2 standard deviations, p = 0.0455.
    assert mcnemar(500_000, 500_000) == pytest.approx((1.0, 1.0))
    assert mcnemar(499_000, 501_000)[1] == pytest.approx(0.0455, abs=1e-4)


def test_the_same_rules_agree_on_every_deal() -> None:
    same = comparison(variant=PRINTED)
    deals = compare(same)
    found = comparison_figures(same, deals)
    assert deals.variant_only == deals.against_only == 0
    assert found["agree"] == found["games"] == 12
    assert found["difference"] == 0
    assert found["p_mid"] == found["p_exact"] == 1.0
    low, high = found["difference_ci"]
    assert low < 0 < high


def test_each_side_wins_as_its_own_run_on_the_same_deals() -> None:
    """Deal n is game n of a run with the seed: the counts' margins are the two runs' wins."""
    paired = comparison(games=20)
    found = comparison_figures(paired, compare(paired))
    for side, variant in (("variant", VARIANT), ("against", PRINTED)):
        settings = Settings(games=20, keeper="easy", shadow="random", variant=variant)
        assert found[side]["keeper_wins"] == simulate(settings).keeper_wins
    deals = found["deals"]
    assert sum(deals.values()) == 20
    assert all(deals.values()) and deals["variant_only"] != deals["against_only"]
    assert found["difference"] == (deals["variant_only"] - deals["against_only"]) / 20
    assert found["difference"] == pytest.approx(
        found["variant"]["keeper_win_rate"] - found["against"]["keeper_win_rate"]
    )
    assert found["variant"]["rules"] == {"halfway": "0"}
    assert found["against"]["rules"] == {}


def test_a_seed_always_gives_the_same_comparison() -> None:
    assert compare(comparison(seed=4)) == compare(comparison(seed=4))
    assert compare(comparison(seed=4)) != compare(comparison(seed=5))
    heard: list[int] = []
    assert compare(comparison(seed=4), workers=2, progress=heard.append) == compare(
        comparison(seed=4)
    )
    assert sum(heard) == 12


def test_counts_of_parts_add_up_to_the_whole() -> None:
    whole = comparison(games=6)
    parts = play_deals((whole, 0, 2)) + play_deals((whole, 2, 6))
    assert parts == play_deals((whole, 0, 6))
    assert parts.total == 6 and Deals() + parts == parts


def test_a_comparison_refuses_unknown_levels_and_empty_runs() -> None:
    with pytest.raises(ValueError, match="no level 'genius'"):
        Comparison(games=1, keeper="genius", shadow="easy", variant=VARIANT)
    with pytest.raises(ValueError, match="not 0"):
        Comparison(games=0, keeper="easy", shadow="easy", variant=VARIANT)


def test_the_report_gives_both_rule_sets_and_the_difference() -> None:
    text = describe_comparison(comparison_figures(comparison(), compare(comparison())))
    for words in (
        "12 deals, each played under both rule sets: easy as the Keeper, random as the Shadow",
        "  halfway=0 ",
        "  printed rules ",
        "under halfway=0 only:",
        "Newcombe paired interval",
        "McNemar test of no difference: mid-p",
    ):
        assert words in text, text


def test_the_rules_nearer_an_even_game_with_both_leaning_the_same_way() -> None:
    # exchange_sizes=1,2,1 on seeds 1 and 2 (docs/playtest.md): 48.9% against 47.6%, both
    # intervals below 50%, so the change in distance is minus the difference, +0.2 to +2.3.
    found = comparison_figures(comparison(), Deals(3436, 1451, 1328, 3785))
    assert found["variant"]["distance_from_even"] == pytest.approx(0.0113)
    assert found["against"]["distance_from_even"] == pytest.approx(0.0236)
    # Neither interval is in the band whole, nor out of it: 7,000 deals cannot tell.
    assert found["variant"]["in_target"] is None and found["against"]["in_target"] is None
    assert found["target"] == [0.48, 0.52]
    assert found["nearer_even"] == "variant" and found["nearer_even_beyond_noise"]
    assert found["distance_change"] == pytest.approx(-0.0123)
    low, high = found["difference_ci"]
    assert found["distance_change_ci"] == pytest.approx([-high, -low])
    text = describe_comparison(found)
    for words in (
        "  halfway=0        1.1  (from its Wilson interval 0.2 to 2.1)  an edge of the band "
        "within its interval: more deals would tell",
        "  printed rules    2.4  (from its Wilson interval 1.4 to 3.3)  an edge of the band",
        "halfway=0 is nearer an even game than printed rules, by 1.2 points "
        "(95% interval +0.2 to +2.3): beyond the noise of these deals;",
    ):
        assert words in text, text


def test_a_change_that_changes_no_game_says_so() -> None:
    """On a track that stands only at even numbers, halfway=6 is the printed 5: every deal is
    played the same, and the report says so rather than leave an interval to suggest more."""
    same = comparison(games=6, variant=Variant.from_options({"halfway": "6"}))
    found = comparison_figures(same, compare(same))
    assert found["same_games"] == 6 and found["agree"] == 6
    assert "Every deal was played move for move the same under both rule sets" in (
        describe_comparison(found)
    )
    changed = comparison(games=12)  # halfway=0: three of the twelve deals go the same
    found = comparison_figures(changed, compare(changed))
    assert (found["same_games"], found["agree"]) == (3, 10)
    text = describe_comparison(found)
    assert "Every deal was played" not in text
    assert "Of those, 3 deals were played move for move the same." in text


def test_one_deal_and_one_game_are_counted_in_the_singular() -> None:
    one = comparison(games=1)
    assert describe_comparison(comparison_figures(one, compare(one))).startswith("1 deal, each")
    settings = Settings(games=1, keeper="easy", shadow="random", seed=1)
    assert describe(figures(settings, simulate(settings))).startswith("1 game: easy")


def test_a_rate_is_in_the_band_or_out_of_it_by_its_whole_interval() -> None:
    """48% of 150 deals is on the band's edge, and its interval runs from 40% to 56%: it
    says nothing of the band either way. 50% of 10,000 is in it, 40% out of it."""
    few = comparison_figures(comparison(), Deals(36, 36, 0, 78))
    assert few["variant"]["keeper_win_rate"] == pytest.approx(0.48)
    assert few["variant"]["in_target"] is None
    many = comparison_figures(comparison(), Deals(4000, 1000, 0, 5000))
    assert many["variant"]["in_target"] is True and many["against"]["in_target"] is False
    text = describe_comparison(many)
    assert "inside the band" in text and "outside the band" in text


def test_a_larger_change_may_leave_the_game_less_even() -> None:
    # track_length=11 (docs/playtest.md): +17.4 points, from 45.1% to 62.5%, away from even.
    found = comparison_figures(comparison(), Deals(319, 306, 132, 243))
    assert found["difference"] == pytest.approx(0.174)
    assert found["variant"]["distance_from_even"] == pytest.approx(0.125)
    assert found["against"]["distance_from_even"] == pytest.approx(0.049)
    assert found["nearer_even"] == "against" and found["nearer_even_beyond_noise"]
    assert found["distance_change"] == pytest.approx(0.076)
    assert found["distance_change_ci"] is None
    assert (
        "printed rules is nearer an even game than halfway=0, by 7.6 points: beyond the noise"
        in describe_comparison(found)
    )


def test_a_rule_set_nearer_even_within_the_noise_is_said_to_be() -> None:
    # first_leader=shadow (docs/playtest.md): 47.6% against 45.7%, +1.9 (−0.6 to +4.4).
    found = comparison_figures(comparison(), Deals(643, 784, 727, 846))
    assert found["nearer_even"] == "variant" and not found["nearer_even_beyond_noise"]
    low, high = found["distance_change_ci"]
    assert low < found["distance_change"] < 0 < high
    assert "(95% interval -0.6 to +4.4): within the noise of these deals" in describe_comparison(
        found
    )
    # One rate's interval holds 50%: no interval of the change, and no verdict beyond noise.
    found = comparison_figures(comparison(), Deals(4, 2, 1, 5))
    assert found["distance_change_ci"] is None and not found["nearer_even_beyond_noise"]
    assert "within their noise" in describe_comparison(found)
    # Equally far from even, on either side.
    found = comparison_figures(comparison(), Deals(4, 2, 0, 4))
    assert found["nearer_even"] is None and not found["nearer_even_beyond_noise"]
    assert "Both are as far from an even game." in describe_comparison(found)


def test_the_documented_comparisons_agree_with_their_counts() -> None:
    """Each row of docs/playtest.md's table of comparisons gives the difference, its interval
    and the mid-p that its counts give."""
    from tests.rules.helpers import REPO

    text = (REPO / "docs" / "playtest.md").read_text()
    table = text[text.index("| variant | deals |") :].split("\n\n")[0].splitlines()[2:]
    assert len(table) == 8
    for row in table:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        deals, with_variant, with_against = (
            int(cell.split()[0].replace(",", "")) for cell in cells[1:4]
        )
        variant_only, against_only = (int(n.replace(",", "")) for n in cells[5].split(" / "))
        both = with_against - against_only
        assert with_variant == both + variant_only, row
        low, high = newcombe_paired(
            both, variant_only, against_only, deals - both - variant_only - against_only
        )
        difference = (variant_only - against_only) / deals
        shown = f"{100 * difference:+.1f} ({100 * low:+.1f} to {100 * high:+.1f})"
        assert cells[6].replace("−", "-") == shown, row
        p_mid = mcnemar(variant_only, against_only)[1]
        if cells[7].startswith("<"):
            assert p_mid < float(cells[7].lstrip("< ")), row
        else:
            decimals = len(cells[7].split(".")[1])
            assert cells[7] == f"{p_mid:.{decimals}f}", row


def test_a_comparison_of_two_levels_says_its_balance_is_not_the_rules() -> None:
    text = describe_comparison(comparison_figures(comparison(4), compare(comparison(4))))
    note = text.index("The seats are played by different levels (easy as the Keeper")
    assert note < text.index("Distance from an even game"), text
    same = Comparison(games=4, keeper="easy", shadow="easy", variant=VARIANT)
    assert "different levels" not in describe_comparison(comparison_figures(same, compare(same)))
