"""Question (a) on graded scores: the score interval of the scores' sums times the item's r
(stats.wald.dispersion), checked against a brute-force quasi-likelihood and by simulation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import norm

from agentsproof.stats import score
from agentsproof.stats.cases import delta_interval
from agentsproof.stats.wald import CASES, DISPERSION_PRIOR, arm_moments, dispersion, interval_from_moments


def _r(w: np.ndarray, wo: np.ndarray) -> float:
    return float(dispersion(*(a[None] for a in arm_moments(w)), *(a[None] for a in arm_moments(wo))))


def test_dispersion_by_hand_and_its_limits():
    """r̂ = Σ (n − 1) v / Σ (n − 1) m(1 − m), capped at 1, shrunk toward 1 by DISPERSION_PRIOR df."""
    w, wo = np.array([0.75, 0.5, 1.0, 0.75]), np.array([0.25, 0.5, 0.0, 0.25])
    v = np.var(w, ddof=1)  # both arms: the same spread, mean 0.75 and 0.25
    r_hat = (2 * 3 * v) / (2 * 3 * 0.75 * 0.25)
    assert _r(w, wo) == pytest.approx((6 * r_hat + DISPERSION_PRIOR) / (6 + DISPERSION_PRIOR))
    assert _r(np.array([1.0, 0.0, 1.0, 1.0]), np.array([0.0, 0.0, 1.0, 0.0])) == 1.0  # pass/fail: r̂ ≥ 1, capped
    assert _r(np.array([0.5]), np.array([0.25])) == 1.0  # one trial: nothing measured
    assert _r(np.array([0.25] * 6), np.array([0.0] * 6)) == pytest.approx(DISPERSION_PRIOR / (10 + DISPERSION_PRIOR))  # no spread seen


def _brute_end(xw: float, xo: float, n: int, r: float, side: float) -> float:
    """One end of the one-case interval found without stats.score: for each candidate Δ the
    restricted quasi-likelihood maximum by a numeric search, then Δ by bisection on the score
    equation (D − Δ)² = z² · r · V(Δ) · 2n/(2n − 1) (no restricted chance near the edge floor here)."""
    d = (xw - xo) / n
    z2 = norm.ppf(1 - score.ALPHA_SHARE * 0.05 / 2) ** 2

    def variance(delta: float) -> float:
        def neg(q: float) -> float:
            a, b = q + delta, q
            return -(xw * np.log(a) + (n - xw) * np.log(1 - a) + xo * np.log(b) + (n - xo) * np.log(1 - b))

        lo, hi = max(1e-9, -delta + 1e-9), min(1 - 1e-9, 1 - delta - 1e-9)
        q = minimize_scalar(neg, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12}).x
        return ((q + delta) * (1 - q - delta) + q * (1 - q)) / n * (2 * n) / (2 * n - 1)

    near, far = d, side
    for _ in range(60):
        mid = (near + far) / 2
        if (d - mid) ** 2 <= z2 * r * variance(mid):
            near = mid
        else:
            far = mid
    return near


def test_one_case_ends_solve_the_quasi_score_equation():
    w, wo = np.array([0.75, 0.5, 1.0, 0.75]), np.array([0.25, 0.5, 0.0, 0.25])
    r = _r(w, wo)
    lo, hi = delta_interval([(list(w), list(wo))], question=CASES)
    assert lo == pytest.approx(_brute_end(3.0, 1.0, 4, r, -1.0), abs=1e-6)
    assert hi == pytest.approx(_brute_end(3.0, 1.0, 4, r, 1.0), abs=1e-6)


def test_pass_fail_scores_get_the_same_interval_with_or_without_the_binary_flag():
    rng = np.random.default_rng(3)
    xw, xo = (rng.random((50, 3, 5)) < 0.6).astype(float), (rng.random((50, 3, 5)) < 0.3).astype(float)
    m = (*arm_moments(xw), *arm_moments(xo))
    flagged = interval_from_moments(*m, question=CASES, binary=np.ones(50, bool))
    unflagged = interval_from_moments(*m, question=CASES)
    assert np.allclose(flagged[0], unflagged[0], atol=1e-9) and np.allclose(flagged[1], unflagged[1], atol=1e-9)


def _coverage(xw: np.ndarray, xo: np.ndarray, truth: float) -> tuple[float, float]:
    lo, hi, _ = interval_from_moments(*arm_moments(xw), *arm_moments(xo), question=CASES, binary=np.zeros(len(xw), bool))
    return float(np.mean((lo <= truth + 1e-9) & (truth <= hi + 1e-9))), float(np.mean(hi - lo))


@pytest.mark.parametrize("p_w,p_wo", [(0.06, 0.03), (0.5, 0.1), (0.97, 0.9)])
@pytest.mark.parametrize("trials", [6, 15])
def test_graded_scores_near_the_edges_cover_and_are_narrower_than_pass_fail(p_w, p_wo, trials):
    """Scores in quarters (Binomial(4, p)/4, variance p(1 − p)/4), one case, 4,000 seeded
    items: coverage ≥ 93 % and narrower than the pass/fail interval of the same sums (what a
    pass/fail score's spread would need); within the 98.5 % top from 15 trials. (With 6
    trials at chances 0.06/0.03, 11 % of items score 0 in all 12 trials — data a pass/fail
    skill gives too, whose interval must reach ±0.36 — and coverage is 99.8 %.)"""
    rng = np.random.default_rng(11)
    runs = 4000
    xw = rng.binomial(4, p_w, (runs, 1, trials)) / 4.0
    xo = rng.binomial(4, p_wo, (runs, 1, trials)) / 4.0
    cov, width = _coverage(xw, xo, p_w - p_wo)
    assert cov >= 0.93 and (trials < 15 or cov <= 0.985)
    n = np.full((runs, 1), float(trials))
    plo, phi, _ = score.score_interval(xw.sum(-1), n, xo.sum(-1), n)
    assert width < 0.7 * float(np.mean(phi - plo))


@pytest.mark.parametrize("trials", [3, 6, 15])
def test_u_shaped_scores_still_hold_93_percent(trials):
    """The case the prior on r is for: scores near 0 or 1 with the odd far one (Beta(0.9, 0.1)
    against Beta(0.1, 0.9), variance 0.045 each): a few trials often show almost no spread."""
    rng = np.random.default_rng(5)
    runs = 4000
    xw, xo = rng.beta(0.9, 0.1, (runs, 1, trials)), rng.beta(0.1, 0.9, (runs, 1, trials))
    cov, _ = _coverage(xw, xo, 0.8)
    assert cov >= 0.93
