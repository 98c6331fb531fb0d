"""The verdict of each part (needed / removable / unclear), Holm across the parts, and the
non-inferiority test of the smallest skill, on scores whose answer is plain."""

from __future__ import annotations

from agentsproof.stats.ablation import decide, non_inferior, one_sided_p, part_effect
from agentsproof.stats.cases import delta_interval


def _case(without: list[float], whole: list[float]) -> tuple[list[float], list[float]]:
    return without, whole


def test_a_part_that_matters_is_needed_and_one_that_does_nothing_is_removable_with_enough_trials():
    whole = [1.0] * 60
    needed = part_effect("ticket", [_case([0.0] * 60, whole)] * 2, 30, 0.05)
    idle = part_effect("history", [_case([1.0] * 60, whole)] * 2, 50, 0.05)
    decide([needed, idle])
    assert needed.verdict == "needed" and needed.effect == -1.0 and needed.interval[1] < 0
    assert idle.verdict == "removable" and idle.effect == 0.0 and idle.interval[0] > -0.05
    assert needed.per_1k_tokens == -1.0 * 1000 / 30


def test_too_few_trials_for_the_margin_is_unclear_not_removable():
    whole = [1.0] * 8
    idle = part_effect("history", [_case([1.0] * 8, whole)] * 2, 50, 0.05)
    decide([idle])
    assert idle.verdict == "unclear" and idle.interval[0] < -0.05


def test_the_p_value_matches_the_interval_it_comes_from():
    cases = [_case([1.0] * 25 + [0.0] * 5, [1.0] * 28 + [0.0] * 2)] * 3
    p = one_sided_p(cases, 0.0, "upper", "cases")
    assert 0 < p < 0.5
    assert delta_interval(cases, 1 - 2 * p * 1.05, "cases")[1] < 0 <= delta_interval(cases, 1 - 2 * p * 0.95, "cases")[1]


def test_holm_makes_a_borderline_part_unclear_among_many():
    whole = [1.0] * 30
    borderline = [_case([1.0] * 20 + [0.0] * 10, whole)]  # alone: needed
    alone = part_effect("a", borderline, 10, 0.05)
    decide([alone])
    crowd = [part_effect(f"p{i}", borderline if i == 0 else [_case(whole, whole)], 10, 0.05) for i in range(40)]
    decide(crowd)
    assert alone.verdict == "needed"
    assert crowd[0].p_needed_adjusted > alone.p_needed_adjusted


def test_the_smallest_skill_is_non_inferior_only_within_the_margin():
    whole = [1.0] * 80
    assert non_inferior([_case([1.0] * 80, whole)] * 2, 0.05)["non_inferior"] is True
    worse = non_inferior([_case([1.0] * 40 + [0.0] * 40, whole)] * 2, 0.05)
    assert worse["non_inferior"] is False and worse["effect"] == -0.5


def test_no_scored_pair_gives_no_effect_and_no_verdict():
    e = part_effect("x", [_case([], [1.0])], 10, 0.05)
    decide([e])
    assert e.effect is None and e.interval is None and e.verdict == "unclear"
