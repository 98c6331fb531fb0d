"""The stratified Miettinen–Nurminen score interval of question (a) on pass/fail scores."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar
from scipy.stats import binom, norm

from agentsproof.stats import score
from agentsproof.stats.cases import delta_interval
from agentsproof.stats.score import ALPHA_SHARE, EDGE_FLOOR, score_interval
from agentsproof.stats.wald import CASES


def _one(xw: int, nw: int, xo: int, no: int, level: float, edge_floor: float = EDGE_FLOOR) -> tuple[float, float]:
    lo, hi, _ = score_interval(np.array([xw]), np.array([nw]), np.array([xo]), np.array([no]), level, edge_floor)
    return float(lo), float(hi)


@pytest.mark.parametrize(
    "counts,expected",
    [  # Newcombe (1998), Statistics in Medicine 17:873, Table II, the Miettinen–Nurminen column
        ((56, 70, 48, 80), (0.0528, 0.3382)),
        ((9, 10, 3, 10), (0.1700, 0.8406)),
        ((6, 7, 2, 7), (0.0342, 0.8534)),
        ((5, 56, 0, 29), (-0.0326, 0.1933)),
        ((0, 10, 0, 20), (-0.1658, 0.2844)),
        ((10, 10, 0, 20), (0.7156, 1.0)),
    ],
)
def test_one_case_matches_the_published_miettinen_nurminen_interval(counts, expected):
    # the report's z is that of the level 1 − ALPHA_SHARE · α: ask for the level whose z is 95 %'s;
    # the published interval has no edge floor
    assert _one(*counts, 1 - 0.05 / ALPHA_SHARE, edge_floor=0.0) == pytest.approx(expected, abs=1e-4)


def _brute(cases: list[tuple[int, int, int, int]], level: float) -> tuple[float, float]:
    """The same interval computed another way: each case's restricted maximum-likelihood
    pair by numerical maximisation (not the cubic), the ends by root finding."""
    z = norm.ppf(1 - ALPHA_SHARE * (1 - level) / 2)
    c = len(cases)
    d = sum(xw / nw - xo / no for xw, nw, xo, no in cases) / c

    def var(delta: float) -> float:
        total = 0.0
        for xw, nw, xo, no in cases:
            lo_p, hi_p = max(0.0, -delta), min(1.0, 1.0 - delta)

            def nll(p: float, xw=xw, nw=nw, xo=xo, no=no) -> float:
                q = p + delta
                eps = 1e-300
                return -(xw * np.log(max(q, eps)) + (nw - xw) * np.log(max(1 - q, eps)) + xo * np.log(max(p, eps)) + (no - xo) * np.log(max(1 - p, eps)))

            p = minimize_scalar(nll, bounds=(lo_p, hi_p), method="bounded", options={"xatol": 1e-12}).x
            q = p + delta
            e_w, e_o = EDGE_FLOOR / (nw + 1), EDGE_FLOOR / (no + 1)
            q, p = min(max(q, e_w), 1 - e_w), min(max(p, e_o), 1 - e_o)
            total += (q * (1 - q) / nw + p * (1 - p) / no) * (nw + no) / (nw + no - 1)
        return total / c**2

    def f(delta: float) -> float:
        return (d - delta) ** 2 - z * z * var(delta)

    lo = -1.0 if f(-1.0 + 1e-9) <= 0 else brentq(f, -1.0 + 1e-9, d - 1e-12)
    hi = 1.0 if f(1.0 - 1e-9) <= 0 else brentq(f, d + 1e-12, 1.0 - 1e-9)
    return lo, hi


@pytest.mark.parametrize("seed", range(6))
def test_stratified_interval_matches_a_brute_force_computation(seed):
    rng = np.random.default_rng(seed)
    c = int(rng.integers(1, 6))
    nw, no = rng.integers(2, 12, c), rng.integers(2, 12, c)
    xw, xo = rng.binomial(nw, 0.7), rng.binomial(no, 0.4)
    cases = list(zip(xw.tolist(), nw.tolist(), xo.tolist(), no.tolist(), strict=True))
    lo, hi, _ = score_interval(xw, nw, xo, no, 0.95)
    assert (float(lo), float(hi)) == pytest.approx(_brute(cases, 0.95), abs=2e-5)


def test_holds_its_delta_is_clipped_and_nests_by_level():
    rng = np.random.default_rng(1)
    n = rng.integers(1, 31, (500, 4))
    xw, xo = rng.binomial(n, rng.random((500, 4))), rng.binomial(n, rng.random((500, 4)))
    prev = None
    for level in (0.5, 0.8, 0.9, 0.95, 0.99):
        lo, hi, d = score_interval(xw, n, xo, n, level)
        assert np.all((-1 <= lo) & (lo <= d + 1e-12) & (d - 1e-12 <= hi) & (hi <= 1))
        if prev is not None:
            assert np.all((lo <= prev[0] + 1e-9) & (hi >= prev[1] - 1e-9))
        prev = (lo, hi)


@pytest.mark.parametrize("n", [3, 6, 10, 20])
def test_one_case_exact_coverage_stays_at_least_93_5_percent(n):
    """Exact over every outcome, for pass chances 0.1 … 0.9 in both arms (step 0.05)."""
    xs = np.arange(n + 1)
    xw, xo = np.meshgrid(xs, xs, indexing="ij")
    lo, hi, _ = score_interval(xw[..., None], np.full(xw.shape + (1,), n), xo[..., None], np.full(xw.shape + (1,), n))
    worst = 1.0
    for pw in np.arange(0.1, 0.901, 0.05):
        for po in np.arange(0.1, 0.901, 0.05):
            mass = np.outer(binom.pmf(xs, n, pw), binom.pmf(xs, n, po))
            worst = min(worst, float(mass[(lo <= pw - po + 1e-9) & (pw - po <= hi + 1e-9)].sum()))
    assert worst >= 0.935


@pytest.mark.parametrize("n", [2, 3, 5, 8, 10, 15, 30])
def test_one_case_exact_coverage_holds_93_percent_up_to_the_corners(n):
    """Exact over every outcome, for pass chances 0 … 1 in both arms (step 0.02): the corners
    (one chance 0, the other near 1; a harmful skill on a baseline near 1) included. Without
    the edge floor the published interval dips to 85–89 % there; the test checks both."""
    xs = np.arange(n + 1)
    xw, xo = np.meshgrid(xs, xs, indexing="ij")
    chances = np.round(np.arange(0, 1.0001, 0.02), 2)
    pmf = binom.pmf(xs[None, :], n, chances[:, None])
    truth = chances[:, None] - chances[None, :]

    def worst(edge_floor: float) -> float:
        shape = xw.shape + (1,)
        lo, hi, _ = score_interval(xw[..., None], np.full(shape, n), xo[..., None], np.full(shape, n), 0.95, edge_floor)
        held = (lo[None, None] <= truth[..., None, None] + 1e-9) & (truth[..., None, None] <= hi[None, None] + 1e-9)
        return float(np.einsum("ax,by,abxy->ab", pmf, pmf, held).min())

    assert worst(EDGE_FLOOR) >= 0.94
    if n in (2, 3, 8):
        assert worst(0.0) < 0.9  # the corner the floor closes


def test_the_report_uses_it_for_pass_fail_items_and_welch_otherwise():
    cases = [([1.0, 1.0, 1.0], [0.0, 0.0, 0.0]), ([1.0, 0.0, 1.0], [0.0, 1.0, 0.0])]
    lo, hi, _ = score_interval(np.array([3, 2]), np.array([3, 3]), np.array([0, 1]), np.array([3, 3]))
    assert delta_interval(cases, question=CASES) == pytest.approx((float(lo), float(hi)))
    graded = [([1.0, 0.5, 1.0], [0.0, 0.0, 0.0])]
    g = delta_interval(graded, question=CASES)
    s = _one(3, 3, 0, 3, 0.95)
    assert g is not None and g != pytest.approx(s)


def _one_end_at_a_time(passes_w, n_w, passes_wo, n_wo, level=0.95, edge_floor=score.EDGE_FLOOR):
    """The interval as it was computed before both ends were bisected together: each end alone."""
    n_w, n_wo = np.asarray(n_w, float), np.asarray(n_wo, float)
    p_w, p_wo = np.asarray(passes_w, float) / n_w, np.asarray(passes_wo, float) / n_wo
    delta = (p_w - p_wo).mean(axis=-1)
    z2 = float(norm.ppf(1.0 - score.ALPHA_SHARE * (1.0 - level) / 2.0)) ** 2

    def accepted(cand):
        return (delta - cand) ** 2 <= z2 * score._score_variance(p_w, n_w, p_wo, n_wo, cand, edge_floor) + 1e-15

    ends = []
    for edge in (-1.0, 1.0):
        far, near = np.full(delta.shape, edge), delta.copy()
        at_edge = accepted(far)
        for _ in range(score.BISECTIONS):
            mid = (far + near) / 2.0
            ok = accepted(mid)
            near, far = np.where(ok, mid, near), np.where(ok, far, mid)
        ends.append(np.where(at_edge, edge, near))
    return np.clip(np.minimum(ends[0], delta), -1.0, 1.0), np.clip(np.maximum(ends[1], delta), -1.0, 1.0), delta


@pytest.mark.parametrize("shape", [(1,), (3,), (5, 1), (4, 3), (2, 2, 6), (50, 9)])
def test_both_ends_bisected_together_give_each_ends_numbers_bit_for_bit(shape):
    rng = np.random.default_rng(sum(shape))
    for level in (0.95, 0.9833):
        n_w, n_wo = rng.integers(1, 40, shape).astype(float), rng.integers(1, 40, shape).astype(float)
        x_w, x_wo = np.floor(rng.random(shape) * (n_w + 1)), np.floor(rng.random(shape) * (n_wo + 1))
        got, want = score.score_interval(x_w, n_w, x_wo, n_wo, level), _one_end_at_a_time(x_w, n_w, x_wo, n_wo, level)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape and np.array_equal(g, w)
