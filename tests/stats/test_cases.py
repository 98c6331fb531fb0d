"""Statistics across cases: two-level bootstrap, sign test, verdicts (known values)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from agentsproof.stats.cases import (
    MIN_CASES,
    TIE_BAND,
    delta_interval,
    mean_case_delta,
    outcome,
    power_verdict,
    sign_test_p,
    stratified_permutation_p,
    two_level_interval,
)
from agentsproof.stats.wald import CASES, TASKS, TASKS_T


def _const(deltas: list[float], n: int = 3) -> list[tuple[list[float], list[float]]]:
    """Cases with no spread inside: with scores all = delta, without all 0."""
    return [([d] * n, [0.0] * n) for d in deltas]


def test_two_level_known_value_two_cases_without_spread():
    # resampling 2 cases gives means 0.2, 0.3, 0.4 with chance 1/4, 1/2, 1/4
    assert two_level_interval(_const([0.2, 0.4]), pseudo=0) == pytest.approx((0.2, 0.4))


def test_two_level_known_value_four_cases_binomial():
    # mean of 4 draws from {0, 0, 0, 1}: X/4, X ~ Bin(4, 1/4); P(X<=2) = 0.949, P(X<=3) = 0.996
    lo, hi = two_level_interval(_const([0.0, 0.0, 0.0, 1.0]), pseudo=0)
    assert (lo, hi) == pytest.approx((0.0, 0.75))
    # a 90 % interval drops the X = 3 tail (P(X >= 3) = 0.051 > 0.05)
    assert two_level_interval(_const([0.0, 0.0, 0.0, 1.0]), 0.90, pseudo=0)[1] == pytest.approx(0.5)


def test_two_level_within_case_spread_widens_the_interval():
    cases_flat = _const([0.5] * 6, n=4)
    noisy = [([1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]) for _ in range(6)]  # every case delta 0.5
    assert two_level_interval(cases_flat, pseudo=0) == pytest.approx((0.5, 0.5))
    lo, hi = two_level_interval(noisy, pseudo=0)
    assert lo < 0.5 - 0.1 and hi > 0.5 + 0.1
    # smoothing (one 0 and one 1 per arm and case) pulls extreme arms in, as for one case
    lo_s, hi_s = two_level_interval(_const([1.0] * 5), pseudo=1)
    assert hi_s < 1.0 and lo_s > 0.3


def test_two_level_is_seeded_and_nested_by_level():
    rng = np.random.default_rng(3)
    cases = [(list(rng.random(4)), list(rng.random(4) * 0.6)) for _ in range(7)]
    a, b = two_level_interval(cases), two_level_interval(cases)
    assert a == b
    wide = delta_interval(cases, 0.99)
    narrow = delta_interval(cases, 0.95)
    assert wide[0] <= narrow[0] <= narrow[1] <= wide[1]


def test_one_case_interval_known_value():
    """3/3 against 0/3 (pass/fail: the Miettinen–Nurminen score interval, stats.score): by
    symmetry the restricted pass chances at a candidate Δ are (1 ± Δ)/2, so the score
    variance is 2 · (1 − Δ²)/4/3 · 6/5 = (1 − Δ²)/5 and the lower end solves
    (1 − Δ)² = z²(1 − Δ²)/5: Δ = (5 − z²)/(5 + z²), z that of 0.96 (level + margin)."""
    lo, hi = delta_interval([([1.0] * 3, [0.0] * 3)])
    z2 = norm.ppf(0.98) ** 2
    assert (lo, hi) == pytest.approx(((5 - z2) / (5 + z2), 1.0), abs=1e-6)
    assert delta_interval([([], [0.0])]) is None


def test_one_case_graded_interval_is_the_score_interval_of_the_sums_times_r():
    """Graded scores 1, 0.5, 1 against 0, 0, 0.5: both arms have sample variance 1/12 and
    m(1 − m) = 5/36, so r̂ = 0.6; 4 df shrunk toward 1 by 2: r = (4 · 0.6 + 2)/6 = 11/15.
    The interval is the score interval of the sums (2.5 of 3 against 0.5 of 3) with that r."""
    from agentsproof.stats.score import score_interval
    from agentsproof.stats.wald import DISPERSION_PRIOR, arm_moments, dispersion

    w, wo = np.array([1.0, 0.5, 1.0]), np.array([0.0, 0.0, 0.5])
    r = dispersion(*(a[None] for a in arm_moments(w)), *(a[None] for a in arm_moments(wo)))
    assert DISPERSION_PRIOR == 2.0 and float(r) == pytest.approx(11 / 15)
    lo, hi, _ = score_interval(np.array([2.5]), np.array([3.0]), np.array([0.5]), np.array([3.0]), dispersion=11 / 15)
    assert delta_interval([(list(w), list(wo))]) == pytest.approx((float(lo), float(hi)), abs=1e-12)
    p_lo, p_hi, _ = score_interval(np.array([2.5]), np.array([3.0]), np.array([0.5]), np.array([3.0]))
    assert p_lo < lo < 2 / 3 < hi <= p_hi  # narrower than a pass/fail score's spread would allow


def test_arm_moments_are_the_plain_sample_moments_and_the_t_form_keeps_light_pseudo_trials():
    """arm_moments: (n, mean, sample variance with n − 1; 0 for one trial). The bench's t form
    of (b) still floors with the within-case variance of a 0 and a 1 pseudo-trial of weight
    0.15: scores 0.5, 0.75 (mean 0.625) and 1, 1, 1 by hand."""
    from agentsproof.stats.wald import _pseudo_variance, arm_moments

    assert arm_moments(np.array([0.5, 0.75])) == pytest.approx((2, 0.625, 0.03125))
    assert arm_moments(np.array([0.25])) == pytest.approx((1, 0.25, 0.0))
    w = 0.15
    mw = (1.25 + w) / (2 + 2 * w)
    expected = ((0.25 + 0.5625 + w) / (2 + 2 * w) - mw**2) * (2 + 2 * w) / (1 + 2 * w)
    assert _pseudo_variance(*arm_moments(np.array([0.5, 0.75]))) == pytest.approx(expected)
    m1 = (3 + w) / (3 + 2 * w)
    assert _pseudo_variance(*arm_moments(np.array([1.0, 1.0, 1.0]))) == pytest.approx(((3 + w) / (3 + 2 * w) - m1**2) * (3 + 2 * w) / (2 + 2 * w))
    assert _pseudo_variance(*arm_moments(np.array([0.25]))) == pytest.approx((0.0625 + 1) / 3 - (1.25 / 3) ** 2)  # it, a 0 and a 1


def test_cases_that_all_agree_get_the_stratified_score_interval():
    """Three cases each 3/3 against 0/3, question (a): every case is held at the same
    candidate Δ, so the score variance is 3 · (1 − Δ²)/5 / 9 and the lower end is
    (15 − z²)/(15 + z²) — narrower than one case's, not a zero-width one."""
    lo, hi = delta_interval([([1.0] * 3, [0.0] * 3)] * 3)
    z2 = norm.ppf(0.98) ** 2
    assert (lo, hi) == pytest.approx(((15 - z2) / (15 + z2), 1.0), abs=1e-6)


def test_spread_between_cases_is_the_t_interval_of_the_case_deltas():
    """Per-case deltas 1, 0.75, 0.5 (c = 3): 0.75 ± t(0.975, 2) · s / √(c − 1) with s = 0.25."""
    cases = [([1.0] * 4, [0.0] * 4), ([1.0, 1.0, 1.0, 0.0], [0.0] * 4), ([1.0, 1.0, 0.0, 0.0], [0.0] * 4)]
    lo, hi = delta_interval(cases, question=TASKS_T)  # the t form of (b), kept for the bench
    assert (lo, hi) == pytest.approx((0.75 - 4.302653 * 0.25 / 2**0.5, 1.0), abs=1e-5)


@pytest.mark.parametrize(
    "cases,delta",
    [
        ([([1.0] * 3, [0.0] * 3)] * 5, 1.0),  # every with-trial 1, every without-trial 0 (issue 23)
        ([([1.0], [0.0])] * 4 + [([1.0], [1.0])], 0.8),
        ([([1.0] * 30, [0.0] * 30)], 1.0),
        ([([0.0] * 6, [1.0] * 6)] * 10, -1.0),
        ([([0.2, 0.9], [0.1]), ([1.0], [0.0, 0.0, 0.5])], None),
    ],
)
def test_the_interval_holds_its_own_delta(cases, delta):
    d = mean_case_delta(cases)
    if delta is not None:
        assert d == pytest.approx(delta)
    for level in (0.5, 0.95, 0.99):
        lo, hi = delta_interval(cases, level)
        assert lo <= d <= hi


def test_between_case_spread_widens_the_interval():
    """Cases that disagree (+1, +1, −1 …) are wider than the within-case noise alone says."""
    agree = [([1.0] * 6, [0.0] * 6)] * 6
    disagree = [([1.0] * 6, [0.0] * 6)] * 3 + [([0.0] * 6, [1.0] * 6)] * 3
    for q in (TASKS, TASKS_T):
        a, b = delta_interval(agree, question=q), delta_interval(disagree, question=q)
        assert b[1] - b[0] > 1.5 * (a[1] - a[0])
        assert b[0] < 0 < b[1]


def test_coverage_of_the_item_interval_in_a_seeded_simulation():
    """Case effects vary around 0.2: (a) holds the mean effect of the cases drawn in 93–99 %
    of 1,000 runs, (b) the 0.2 of tasks like these in at least 95 % (bench/coverage.py
    measures the whole grid)."""
    rng = np.random.default_rng(0)
    hits = {CASES: 0, TASKS: 0}
    runs = 1000
    for _ in range(runs):
        effects = np.clip(rng.normal(0.2, 0.1, 8), -0.4, 0.6)
        cases = []
        for e in effects:
            p_wo = 0.4
            cases.append((list((rng.random(4) < p_wo + e).astype(float)), list((rng.random(4) < p_wo).astype(float))))
        lo, hi = delta_interval(cases, question=CASES)
        hits[CASES] += lo <= effects.mean() <= hi
        lo, hi = delta_interval(cases, question=TASKS)
        hits[TASKS] += lo <= 0.2 <= hi
    assert 0.93 <= hits[CASES] / runs <= 0.99
    assert hits[TASKS] / runs >= 0.95


def _skewed(rng, n_cases, trials, gain=0.8, share=0.25, base=0.1):
    """A specialised skill: it helps ``share`` of the tasks by ``gain``, the rest not at all."""
    cases = []
    for _ in range(n_cases):
        e = gain if rng.random() < share else 0.0
        cases.append((list((rng.random(trials) < base + e).astype(float)), list((rng.random(trials) < base).astype(float))))
    return cases


@pytest.mark.parametrize("n_cases", [5, 10])
def test_tasks_interval_holds_skewed_task_effects_where_the_t_interval_does_not(n_cases):
    """A skill that helps a quarter of the tasks by +0.8 (true effect on tasks like these
    0.2): a 5-case sample often holds none of them and the t interval sits tight around 0;
    the betting interval holds 0.2 in at least 95 % of items and is almost never 'settled'
    in a band without it."""
    rng = np.random.default_rng(3)
    from agentsproof.model.results import compute_grade

    runs, hold, hold_t, wrong = 600, 0, 0, 0
    for _ in range(runs):
        cases = _skewed(rng, n_cases, 6)
        lo, hi = delta_interval(cases)  # the default from 5 cases: (b)
        hold += lo <= 0.2 <= hi
        wrong += compute_grade(lo) == compute_grade(hi) != compute_grade(0.2)
        lo, hi = delta_interval(cases, question=TASKS_T)
        hold_t += lo <= 0.2 <= hi
    assert hold / runs >= 0.95 and wrong / runs < 0.05
    assert hold_t / runs < (0.9 if n_cases == 5 else 0.95)  # the interval before assumed symmetric task effects


def test_tasks_interval_is_exact_for_a_bounded_mean():
    """Known values, against the limit of any interval valid for every distribution: five
    cases that all gain +1 come from a distribution with a share e of its mass at −1 with
    chance (1 − e)^5, which is 2.5 % at e = 0.522 (mean −0.04): a lower end above −0.04
    would miss that distribution more than 2.5 % of the time. The betting interval is
    close to that limit (−0.07), so it cannot rule out an F; ten cases can (limit +0.38)."""
    lo, hi = delta_interval([([1.0] * 3, [0.0] * 3)] * 5, question=TASKS)
    limit5 = 1 - 2 * (1 - 0.025 ** (1 / 5))
    assert hi == 1.0 and limit5 - 0.05 < lo <= limit5 < 0.0
    lo, hi = delta_interval([([1.0] * 3, [0.0] * 3)] * 10, question=TASKS)
    limit10 = 1 - 2 * (1 - 0.025 ** (1 / 10))
    assert hi == 1.0 and limit10 - 0.05 < lo <= limit10
    assert delta_interval([([1.0] * 3, [0.0] * 3)], question=TASKS) == (-1.0, 1.0)  # one case: nothing about others


def test_sign_flip_p_tests_the_mean_over_tasks():
    """The issue's item: 1 vs 0 on three cases, 0.2 vs 0.8 on two (delta +0.36): trials
    permuted within cases give p = 0.001, but the mean over tasks is far from shown."""
    from agentsproof.stats.tasks import sign_flip_p

    cases = [([1.0] * 6, [0.0] * 6)] * 3 + [([1.0, 0, 0, 0, 0, 0], [1.0, 1, 1, 1, 1, 0])] * 2
    assert stratified_permutation_p(cases) < 0.05
    p = sign_flip_p([1.0, 1.0, 1.0, -2 / 3, -2 / 3])
    assert p == pytest.approx(7 / 32)  # the sign patterns whose mean reaches the observed one: 7 of 32
    assert sign_flip_p([1.0] * 5) == pytest.approx(1 / 32)


def test_case_level_p_null_with_mean_zero_case_effects():
    """Case effects that average zero but vary (+0.4 / −0.4): p < 0.05 in at most 5 % of items
    for the sign-flip test; the trial permutation finds 'effects' far more often."""
    from agentsproof.stats.tasks import sign_flip_p

    rng = np.random.default_rng(5)
    flip, perm, runs = 0, 0, 300
    for _ in range(runs):
        cases = []
        for _k in range(6):
            e = 0.4 if rng.random() < 0.5 else -0.4  # tasks drawn at random: the effect over tasks is 0
            cases.append((list((rng.random(6) < 0.5 + e).astype(float)), list((rng.random(6) < 0.5).astype(float))))
        ds = [np.mean(w) - np.mean(wo) for w, wo in cases]
        flip += sign_flip_p(ds) < 0.05
        perm += stratified_permutation_p(cases, resamples=999, seed=int(rng.integers(1 << 30))) < 0.05
    assert flip / runs <= 0.05
    assert perm / runs > 0.05


@pytest.mark.parametrize(
    "wins,losses,p",
    [(5, 0, 1 / 32), (4, 1, 6 / 32), (0, 0, 1.0), (3, 3, 42 / 64), (0, 4, 1.0), (10, 0, 1 / 1024)],
)
def test_sign_test_known_values(wins, losses, p):
    assert sign_test_p(wins, losses) == pytest.approx(p)


def test_tie_band():
    assert outcome(TIE_BAND) == "tie" and outcome(-TIE_BAND) == "tie" and outcome(0.0) == "tie"
    assert outcome(TIE_BAND + 0.01) == "win" and outcome(-TIE_BAND - 0.01) == "loss"


def test_mean_case_delta_weighs_cases_equally():
    cases = [([1.0] * 9, [0.0] * 9), ([0.0], [0.0])]
    assert mean_case_delta(cases) == pytest.approx(0.5)


def test_stratified_permutation_p():
    strong = [([1.0, 1.0, 1.0], [0.0, 0.0, 0.0]) for _ in range(5)]
    none = [([0.0, 1.0, 0.0], [1.0, 0.0, 0.0]) for _ in range(5)]
    assert stratified_permutation_p(strong) < 0.01
    assert stratified_permutation_p(none) > 0.3


def test_power_verdict():
    assert power_verdict(MIN_CASES, "A", "A") == ("settled", [])
    verdict, reasons = power_verdict(1, "A", "A")
    assert verdict == "underpowered" and "1 case" in reasons[0]
    verdict, reasons = power_verdict(6, "B", "A")
    assert verdict == "underpowered" and reasons == ["the interval spans B–A"]


def test_a_grade_adaptive_settles_is_within_one_band_in_the_report():
    """The stopping rule and the report use one interval: every settled grade is 'CI within' it."""
    from agentsproof.model.results import compute_grade
    from agentsproof.stats.adaptive import planned_looks, settled_grade

    rng = np.random.default_rng(11)
    settled = 0
    for _ in range(500):
        pw, pwo = rng.uniform(0.2, 1.0), rng.uniform(0.0, 0.6)
        n = int(rng.choice([5, 8, 11, 15]))
        ncases = int(rng.choice([1, 1, 5]))
        cases = [(list((rng.random(n) < pw).astype(float)), list((rng.random(n) < pwo).astype(float))) for _ in range(ncases)]
        ws = [x for c in cases for x in c[0]]
        wos = [x for c in cases for x in c[1]]
        grade = settled_grade(ws, wos, len(planned_looks(15)), cases=cases if ncases > 1 else None)
        if grade is None:
            continue
        settled += 1
        lo, hi = delta_interval(cases)
        assert compute_grade(lo) == compute_grade(hi) == grade
    assert settled >= 10
