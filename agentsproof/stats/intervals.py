"""Intervals and tests for one eval: Wilson, smoothed bootstrap, permutation, pass@k.

Scores are trial scores in [0, 1]; the two arms are independent samples (the with-skill
trial ``i`` and the baseline trial ``i`` share nothing but their index).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations

import numpy as np

BOOTSTRAP_RESAMPLES = 10_000
PERMUTATION_RESAMPLES = 10_000
EXACT_PERMUTATION_LIMIT = 100_000
"""Enumerate every relabelling when there are at most this many; else sample."""
SEED = 0
BLOCK = 1000
"""Resamples drawn at a time: memory stays a few MB for 1,000 trials per arm. The random
stream is consumed in the same order, so the results equal one draw of all resamples."""

DELTA_CI_METHOD = f"percentile bootstrap, {BOOTSTRAP_RESAMPLES} resamples, seed {SEED}, each arm smoothed with one 0 and one 1 pseudo-trial (Agresti–Caffo)"


def wilson(passed: int, total: int, z: float = 1.959963984540054) -> tuple[float, float] | None:
    """Wilson score interval for a pass rate (95 % by default)."""
    if total <= 0:
        return None
    p = passed / total
    denom = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


PASS_RATE_CI_METHOD = "Clopper–Pearson exact binomial interval (never below its stated coverage; coverage in bench/coverage.py)"


def clopper_pearson(passed: int, total: int, level: float = 0.95) -> tuple[float, float] | None:
    """Exact (Clopper–Pearson) interval for a pass rate: its coverage is never below ``level``.

    Wilson's interval, used before, dips to 80–91 % coverage with 1–15 trials for some pass
    chances; discreteness makes every non-random interval over-cover somewhere, and this one
    errs on the safe side only."""
    if total <= 0:
        return None
    lo, hi = clopper_pearson_bounds(np.asarray(passed), np.asarray(total), level)
    return float(lo), float(hi)


def clopper_pearson_bounds(passed: np.ndarray, total: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """:func:`clopper_pearson`, element by element over arrays of counts (every total ≥ 1)."""
    from agentsproof.stats.quantiles import beta_ppf  # scipy.special: only once a pass rate is judged

    a = 1 - level
    passed, total = np.asarray(passed, dtype=float), np.asarray(total, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(passed > 0, beta_ppf(a / 2, np.maximum(passed, 1e-9), total - passed + 1), 0.0)
        hi = np.where(passed < total, beta_ppf(1 - a / 2, passed + 1, np.maximum(total - passed, 1e-9)), 1.0)
    return lo, hi


def pass_k_interval(n: int, c: int, k: int, level: float = 0.95) -> dict[str, list[float]] | None:
    """Intervals of pass@k = 1 − (1 − p)^k and pass^k = p^k: the pass-rate interval mapped
    through each (both are monotone in p, so the coverage is the pass rate's), widened to
    hold the unbiased estimates the report prints beside them when k < n (with k = n the
    estimate is an outcome, 0 or 1, and the report prints only the interval)."""
    ci = clopper_pearson(c, n, level)
    if ci is None:
        return None
    lo, hi = ci
    if k >= n:
        return {"pass_at_k": [1 - (1 - lo) ** k, 1 - (1 - hi) ** k], "pass_hat_k": [lo**k, hi**k]}
    at, hat = pass_at_k(n, c, k), pass_hat_k(n, c, k)
    return {
        "pass_at_k": [min(at, 1 - (1 - lo) ** k), max(at, 1 - (1 - hi) ** k)],
        "pass_hat_k": [min(hat, lo**k), max(hat, hi**k)],
    }


def _smoothed(x: Sequence[float]) -> np.ndarray:
    return np.concatenate([np.asarray(x, dtype=float), [0.0, 1.0]])


def delta_ci(with_scores: Sequence[float], without_scores: Sequence[float], level: float = 0.95) -> tuple[float, float] | None:
    """Percentile bootstrap of mean(with) − mean(without) on smoothed arms.

    Each arm gets one 0 and one 1 pseudo-trial before resampling, so an arm whose trials
    all scored the same still has spread: a plain bootstrap of 5/5 against 0/5 answers
    [1.00, 1.00], which claims far more than five trials can show.
    """
    if not with_scores or not without_scores:
        return None
    rng = np.random.default_rng(SEED)
    x, y = _smoothed(with_scores), _smoothed(without_scores)
    bx = _boot_means(rng, x)
    by = _boot_means(rng, y)
    tail = (1 - level) / 2
    lo, hi = np.quantile(bx - by, [tail, 1 - tail])
    return float(max(-1.0, lo)), float(min(1.0, hi))


def _boot_means(rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
    out = [x[rng.integers(0, len(x), (min(BLOCK, BOOTSTRAP_RESAMPLES - i), len(x)))].mean(axis=1) for i in range(0, BOOTSTRAP_RESAMPLES, BLOCK)]
    return np.concatenate(out)


def permutation_p(with_scores: Sequence[float], without_scores: Sequence[float]) -> tuple[float, str] | None:
    """One-sided p-value for mean(with) > mean(without) by relabelling trials.

    Exact (every relabelling) when there are at most ``EXACT_PERMUTATION_LIMIT``; else
    ``PERMUTATION_RESAMPLES`` seeded random relabellings with the (b + 1)/(B + 1) rule,
    which keeps the test valid.

    Not ``scipy.stats.permutation_test``: its exact p is this one's, bit for bit
    (``tests/stats/test_against_scipy.py``), but it refuses an arm of one trial, takes 8 to
    40 times as long (``bench/permutation.py``, docs/benchmarks.md), and its sampled
    relabellings draw another random stream, so every p-value recorded so far would move.
    """
    n1, n2 = len(with_scores), len(without_scores)
    if not n1 or not n2:
        return None
    pooled = np.asarray(list(with_scores) + list(without_scores), dtype=float)
    observed = pooled[:n1].sum()
    tol = 1e-9 * max(1.0, abs(observed))
    if math.comb(n1 + n2, n1) <= EXACT_PERMUTATION_LIMIT:
        idx = np.fromiter((i for combo in combinations(range(n1 + n2), n1) for i in combo), dtype=np.int64).reshape(-1, n1)
        sums = pooled[idx].sum(axis=1)
        return float(np.mean(sums >= observed - tol)), "one-sided exact permutation test (with > without)"
    rng = np.random.default_rng(SEED)
    b = 0
    for start in range(0, PERMUTATION_RESAMPLES, BLOCK):
        keys = rng.random((min(BLOCK, PERMUTATION_RESAMPLES - start), n1 + n2), dtype=np.float32)
        # the n1 smallest keys of a row are a uniform random subset; argpartition finds the
        # same subset as a full sort in linear time
        perm = np.argpartition(keys, n1 - 1, axis=1)[:, :n1]
        sums = pooled[perm].sum(axis=1)
        b += int(np.sum(sums >= observed - tol))
    return (b + 1) / (PERMUTATION_RESAMPLES + 1), (f"one-sided permutation test (with > without), {PERMUTATION_RESAMPLES} random relabellings, seed {SEED}")


def hake_gain(with_mean: float | None, without_mean: float | None) -> float | None:
    """(with − without) / (1 − without): the share of the possible improvement achieved."""
    if with_mean is None or without_mean is None or without_mean >= 1.0 - 1e-12:
        return None
    return (with_mean - without_mean) / (1.0 - without_mean)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chance that at least one of k trials passes (unbiased, from n trials with c passes)."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Chance that all k trials pass (unbiased, from n trials with c passes)."""
    return math.comb(c, k) / math.comb(n, k)


def sample_sd(values: Sequence[float]) -> float | None:
    """The sample standard deviation (n − 1); None for fewer than two values."""
    if len(values) < 2:
        return None
    return float(np.std(np.asarray(values, dtype=float), ddof=1))


def interval_words(level: float = 0.95) -> str:
    """How a label names an interval of ``level``: ``95 % interval`` (never "CI", which in a
    CI log reads as the pipeline); a Bonferroni level keeps one decimal (``99.3 % interval``)."""
    pct = level * 100
    return f"{pct:.0f} % interval" if abs(pct - round(pct)) < 1e-9 else f"{pct:.1f} % interval"
