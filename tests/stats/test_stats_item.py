"""item_stats: the contract keys and the values of each statistic against known numbers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import item

from agentsproof.stats.intervals import (
    clopper_pearson,
    delta_ci,
    hake_gain,
    pass_at_k,
    pass_hat_k,
    pass_k_interval,
    permutation_p,
    wilson,
)

CONTRACT = {
    "with", "without", "delta", "delta_ci", "delta_ci_method", "p_value", "p_value_method", "normalized_gain",
    "pass_at_k", "pass_hat_k", "grade_low", "grade_high", "grade_label", "enough_data", "note", "flaky_checks",
    "non_discriminating_checks", "cases", "verdict", "verdict_reasons", "pass_rate_ci_method", "delta_ci_level", "question", "question_note", "questions",
    "delta_basis",
}


@pytest.mark.parametrize(
    "passed,total,lo,hi",
    [(5, 5, 0.5655, 1.0), (8, 10, 0.4902, 0.9433), (0, 10, 0.0, 0.2775), (50, 100, 0.4038, 0.5962), (1, 3, 0.0615, 0.7923)],
)
def test_wilson_known_values(passed, total, lo, hi):
    got = wilson(passed, total)
    assert got == pytest.approx((lo, hi), abs=1e-4)


@pytest.mark.parametrize(
    "passed,total,lo,hi",
    [(5, 5, 0.025**0.2, 1.0), (0, 10, 0.0, 1 - 0.025**0.1), (1, 1, 0.025, 1.0), (50, 100, 0.3983, 0.6017)],
)
def test_clopper_pearson_known_values(passed, total, lo, hi):
    assert clopper_pearson(passed, total) == pytest.approx((lo, hi), abs=1e-4)
    assert clopper_pearson(0, 0) is None


@pytest.mark.parametrize("n,c,k", [(10, 3, 3), (30, 29, 20), (6, 6, 2), (6, 0, 5)])
def test_pass_k_intervals_hold_their_estimates(n, c, k):
    cis = pass_k_interval(n, c, k)
    lo, hi = cis["pass_at_k"]
    assert lo <= pass_at_k(n, c, k) <= hi
    lo, hi = cis["pass_hat_k"]
    assert lo <= pass_hat_k(n, c, k) <= hi


def test_wilson_no_trials():
    assert wilson(0, 0) is None


def test_pass_at_k_and_pass_hat_k_unbiased_estimators():
    # 5 trials, 3 passed, k = 3: pass@3 = 1 - C(2,3)/C(5,3) = 1; pass^3 = C(3,3)/C(5,3) = 0.1
    assert pass_at_k(5, 3, 3) == 1.0
    assert pass_hat_k(5, 3, 3) == pytest.approx(0.1)
    # 10 trials, 2 passed, k = 3: 1 - C(8,3)/C(10,3) = 1 - 56/120
    assert pass_at_k(10, 2, 3) == pytest.approx(1 - 56 / 120)
    assert pass_hat_k(10, 2, 3) == 0.0
    # brute force: the share of k-subsets with at least one / only passes
    outcomes = [1, 1, 0, 1, 0, 0, 0]
    subsets = list(itertools.combinations(outcomes, 3))
    assert pass_at_k(7, 3, 3) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))
    assert pass_hat_k(7, 3, 3) == pytest.approx(sum(all(s) for s in subsets) / len(subsets))


def test_hake_gain():
    assert hake_gain(0.8, 0.6) == pytest.approx(0.5)
    assert hake_gain(1.0, 1.0) is None
    assert hake_gain(0.2, 0.6) == pytest.approx(-1.0)


def test_exact_permutation_p_matches_brute_force():
    w, wo = [0.9, 0.4, 1.0, 0.7], [0.2, 0.5, 0.1, 0.7, 0.3]
    pooled = w + wo
    obs = sum(w)
    sums = [sum(pooled[i] for i in c) for c in itertools.combinations(range(9), 4)]
    expected = sum(s >= obs - 1e-9 for s in sums) / len(sums)
    p, method = permutation_p(w, wo)
    assert p == pytest.approx(expected)
    assert method.startswith("one-sided exact permutation")
    # 5/5 against 0/5: only one relabelling out of C(10,5) = 252 is as extreme
    assert permutation_p([1] * 5, [0] * 5)[0] == pytest.approx(1 / 252)


def test_large_arms_use_seeded_monte_carlo():
    rng = np.random.default_rng(3)
    w, wo = list(rng.random(15)), list(rng.random(15))
    p1, m1 = permutation_p(w, wo)
    p2, _ = permutation_p(w, wo)
    assert p1 == p2 and "10000 random relabellings, seed 0" in m1


def test_item_stats_contract_and_values():
    it = item([1, 1, 1, 0.5, 1], [0, 0.5, 0, 0, 0])
    s = it.stats
    assert set(s) == CONTRACT
    assert s["with"]["n"] == 5 and s["with"]["errored"] == 0
    assert s["with"]["mean"] == pytest.approx(0.9) and s["without"]["mean"] == pytest.approx(0.1)
    assert s["with"]["sd"] == pytest.approx(np.std([1, 1, 1, 0.5, 1], ddof=1))
    assert s["with"]["pass_rate"] == 1.0 and s["with"]["pass_rate_ci"] == pytest.approx([0.025**0.2, 1.0], abs=1e-4)
    assert "Clopper–Pearson" in s["pass_rate_ci_method"]
    assert s["delta"] == pytest.approx(0.8)
    lo, hi = s["delta_ci"]
    assert -1 <= lo < 0.8 < hi <= 1
    assert s["question"] == "cases" and s["delta_ci_method"].startswith("on these cases (a): the stratified score interval of the scores' sums")
    assert s["questions"]["tasks"]["delta_ci"] is None  # one case says nothing of other tasks
    assert s["p_value"] < 0.05 and "exact permutation" in s["p_value_method"]
    assert s["normalized_gain"] == pytest.approx(0.8 / 0.9)
    # k is the run's own: 5 scored with-arm trials (pass@5, pass^5)
    # with k = n the unbiased estimate is an outcome (0 or 1), not a rate: only the interval is given
    assert s["pass_at_k"]["k"] == 5 and s["pass_at_k"]["value"] is None and s["pass_hat_k"]["value"] is None
    assert "not a rate" in s["pass_hat_k"]["note"]
    assert s["pass_at_k"]["ci"][1] == 1.0 and s["pass_hat_k"]["ci"] == pytest.approx([0.025, 1.0])
    assert s["enough_data"] is True and s["note"] is None
    from agentsproof.model.results import compute_grade

    assert s["grade_low"] == compute_grade(lo) and s["grade_high"] == compute_grade(hi)
    expected = "A on this case (95 % interval within A)" if s["grade_low"] == "A" else f"A on this case (95 % interval spans {s['grade_low']}–A)"
    assert s["grade_label"].startswith(expected + "; for tasks like these not settled yet: about ")


def test_grade_label_spans_bands_on_weak_evidence():
    s = item([1, 0, 1, 0.5], [0.5, 0, 1, 0]).stats
    assert s["grade_low"] == "F" and s["grade_high"] == "A"
    assert s["grade_label"].startswith("B on this case (95 % interval spans F–A); ")  # delta 0.625 - 0.375 = 0.25


@pytest.mark.parametrize("c", [1, 2, 3, 4])
def test_pass_hat_k_with_k_equal_n_prints_no_zero(c):
    """4 of 5 trials passed: pass^5 is unknown but not 0 (its interval reaches well above 0.2)."""
    s = item([1.0] * c + [0.0] * (5 - c), [0.0] * 5).stats
    assert s["pass_hat_k"]["k"] == 5 and s["pass_hat_k"]["value"] is None
    lo, hi = s["pass_hat_k"]["ci"]
    assert lo < hi and hi > (c / 5) ** 5


def test_five_cases_answer_tasks_like_these_with_a_case_level_p():
    """The issue's item (5 cases × 6 trials: 1 vs 0 on three, 0.2 vs 0.8 on two; delta +0.36):
    the grade answers (b), its p-value is the sign-flip test over cases (7/32, not the
    trial permutation's 0.01), so no A/B rests on it; (a) is reported beside."""
    cases = [([1.0] * 6, [0.0] * 6)] * 3 + [([1.0, 0, 0, 0, 0, 0], [1.0, 1, 1, 1, 1, 0])] * 2
    it = item([x for w, _ in cases for x in w], [x for _, wo in cases for x in wo])
    for k, t in enumerate(it.with_arm.trials + it.without_arm.trials):
        t.case = f"c{(k % 30) // 6}"
    from agentsproof.stats import item_stats

    s = item_stats(it)
    assert s["question"] == "tasks" and "tasks like these" in s["question_note"]
    assert s["p_value"] == pytest.approx(7 / 32) and "sign-flip" in s["p_value_method"]
    assert s["questions"]["cases"]["p_value"] < 0.05
    lo, hi = s["delta_ci"]
    assert lo < 0 < hi and s["verdict"] == "underpowered"
    a_lo, a_hi = s["questions"]["cases"]["delta_ci"]
    assert lo <= a_lo and a_hi <= hi


def test_a_point_f_whose_interval_reaches_zero_says_harm_not_shown():
    s = item([1, 0, 1, 0, 0], [1, 0, 1, 1, 0]).stats  # delta −0.20, the interval well across 0
    assert s["grade_low"] == "F" and s["grade_high"] != "F"
    assert s["grade_label"].startswith(f"F on this case (harm not shown: 95 % interval spans F–{s['grade_high']}); ")
    clear = item([0.0] * 15, [1.0] * 15).stats  # a harm the interval does show
    assert clear["grade_label"].startswith("F on this case (95 % interval within F); ")


def test_grade_ends_come_from_the_printed_numbers():
    """The label's ends are the grades of the interval as printed (two decimals): an end of
    +0.1496 prints "+0.15" and is a B, not the C its unrounded value would give."""
    from agentsproof.model.results import compute_grade

    assert compute_grade(0.1496) == "B" and compute_grade(-0.004) == "C"


def test_too_few_trials_says_so():
    s = item([1, None, 1], [0, 0, None]).stats
    assert s["enough_data"] is False
    assert "too few trials" in s["note"] and "2 scored" in s["note"]
    assert s["with"]["errored"] == 1 and s["without"]["errored"] == 1
    assert s["pass_at_k"]["k"] == 2


def test_no_scored_arm_gives_nulls_and_a_note():
    s = item([None, None, None], [0, 1, 0]).stats
    assert set(s) == CONTRACT
    assert s["delta"] is None and s["delta_ci"] is None and s["p_value"] is None and s["grade_label"] is None
    assert "with-skill arm has no scored trial" in s["note"]
    assert s["enough_data"] is False


def test_delta_ci_covers_the_true_delta():
    """Seeded: intervals for a moderate effect cover the true delta in about 95 % of evals."""
    rng = np.random.default_rng(11)
    hits, n_evals = 0, 300
    for _ in range(n_evals):
        w = rng.binomial(4, 0.75, 10) / 4
        wo = rng.binomial(4, 0.45, 10) / 4
        lo, hi = delta_ci(list(w), list(wo))
        hits += lo <= 0.30 <= hi
    assert hits / n_evals >= 0.92


def test_no_true_effect_rarely_reported_significant():
    """A skill with no effect: p < 0.05 (a 'significant improvement') in at most 5 % of evals."""
    rng = np.random.default_rng(2024)
    n_evals, significant = 400, 0
    for i in range(n_evals):
        n = 5 if i % 2 else 15  # exact test at 5/arm, Monte Carlo at 15/arm
        w = list(rng.binomial(3, 0.6, n) / 3)
        wo = list(rng.binomial(3, 0.6, n) / 3)
        significant += permutation_p(w, wo)[0] < 0.05
    assert significant / n_evals <= 0.05


def test_flaky_and_non_discriminating_checks_in_stats_and_suggestions():
    from agentsproof.executor.suggestions import suggestions_for

    with_checks = [[("HELLO", True), ("-- bot", i % 2 == 0)] for i in range(4)]
    without_checks = [[("HELLO", True), ("-- bot", False)] for _ in range(9)] + [[("HELLO", False), ("-- bot", False)]]
    it = item([1.0, 0.5, 1.0, 0.5], [0.5] * 9 + [0.0], with_checks=with_checks, without_checks=without_checks)
    s = it.stats
    assert s["flaky_checks"] == [
        {"arm": "with", "kind": "mustContain", "target": "-- bot", "passed": 2, "total": 4},
        {"arm": "without", "kind": "mustContain", "target": "HELLO", "passed": 9, "total": 10},
    ]
    assert s["non_discriminating_checks"] == [{"kind": "mustContain", "target": "HELLO", "baseline_passed": 9, "baseline_total": 10}]
    tips = suggestions_for(it)
    assert any(t.startswith("Flaky: mustContain '-- bot' passed 2/4 with-skill trials") for t in tips)
    assert any(t.startswith("Non-discriminating: mustContain 'HELLO' passes in 9/10 baseline trials") for t in tips)


def test_check_at_89_percent_of_baseline_is_not_non_discriminating():
    without_checks = [[("x", i < 8)] for i in range(9)]  # 8/9 = 0.889
    it = item([1.0] * 9, [0.5] * 9, without_checks=without_checks)
    assert it.stats["non_discriminating_checks"] == []
