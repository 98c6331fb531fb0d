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
    b = _sampled_at_least(pooled, n1, observed - tol)
    return (b + 1) / (PERMUTATION_RESAMPLES + 1), (f"one-sided permutation test (with > without), {PERMUTATION_RESAMPLES} random relabellings, seed {SEED}")


_FEW_VALUES = 64
"""Up to this many distinct scores, a relabelling's sum is counted by score; above, summed in
float32 with its error bound (:func:`_many_values`)."""


def _sampled_at_least(pooled: np.ndarray, n1: int, bound: float) -> int:
    """How many of the ``PERMUTATION_RESAMPLES`` seeded relabellings give the first arm a
    sum ≥ ``bound``: relabelling ``r`` gives it the ``n1`` trials whose float32 keys in row
    ``r`` of ``default_rng(SEED).random((R, n), float32)`` are smallest (a uniform random subset).

    The count is the one the plain computation gives (``np.argpartition`` of each row, the
    chosen scores summed; :func:`_plain_rows`), bit for bit: with few distinct scores the
    faster way finds each row's ``n1``-th smallest key, counts the chosen trials by score
    and sums score × count (with many scores, :func:`_many_values`); a row with a tie at that
    key, or whose sum lies so near ``bound`` that the order of the additions could decide, is
    computed the plain way (tests/stats/test_permutation_fast.py compares both on many random inputs)."""
    values, cls = np.unique(pooled, return_inverse=True)
    if len(values) == 1:  # every relabelling sums the same n1 values in the same order: the observed sum
        return PERMUTATION_RESAMPLES if pooled[:n1].sum() >= bound else 0
    n = len(pooled)
    rng = np.random.default_rng(SEED)
    if not np.all(np.isfinite(values)) or (len(values) > _FEW_VALUES and n > 4096):  # the plain way throughout
        return sum(int(np.sum(_plain_rows(rng.random((rows, n), dtype=np.float32), pooled, n1) >= bound)) for rows in _blocks())
    if len(values) > _FEW_VALUES:
        return _many_values(rng, pooled, n1, bound)
    sizes = np.bincount(cls, minlength=len(values))
    big = int(np.argmax(sizes))  # its count is the rest: the others' columns are the only ones read
    columns = [np.flatnonzero(cls == j) for j in range(len(values))]
    # the two orders of summation differ by at most this (each ≤ (n1 + d)·ε·Σ|chosen|)
    guard = 4.0 * (n1 + len(values)) * np.finfo(float).eps * n1 * float(np.max(np.abs(values))) + 1e-300
    raw = all(rows * n % 2 == 0 for rows in _blocks())
    b = 0
    for rows in _blocks():
        draws = _draws(rng, rows, n, raw)
        chosen, total = _smallest(draws, n1)
        counts = np.zeros((rows, len(values)), dtype=np.int64)
        for j, cols in enumerate(columns):
            if j != big:
                counts[:, j] = np.count_nonzero(chosen[:, cols], axis=1)
        counts[:, big] = total - counts.sum(axis=1)
        sums = np.einsum("ij,j->i", counts.astype(float), values)
        plain = (total != n1) | (np.abs(sums - bound) <= guard)
        b += int(np.sum(sums[~plain] >= bound))
        if plain.any():
            b += int(np.sum(_plain_rows(_as_float32(draws[plain] >> _LOW), pooled, n1) >= bound))
    return b


def _many_values(rng: np.random.Generator, pooled: np.ndarray, n1: int, bound: float) -> int:
    """:func:`_sampled_at_least` with many distinct scores (at most 4,096 trials): each row's
    sum in float32 (one matrix-vector product), the rows within its error bound of ``bound``
    (conversion and accumulation: (n + 1)·u·Σ|chosen|, u = 2⁻²⁴, doubled) the plain way."""
    n = len(pooled)
    scores = pooled.astype(np.float32)
    u = float(np.finfo(np.float32).eps) / 2
    guard = 2.0 * (n + 1) * u / (1 - n * u) * n1 * float(np.max(np.abs(pooled))) + 1e-300
    raw = all(rows * n % 2 == 0 for rows in _blocks())
    b = 0
    for rows in _blocks():
        draws = _draws(rng, rows, n, raw)
        chosen, total = _smallest(draws, n1)
        sums = np.einsum("ij,j->i", chosen.astype(np.float32), scores)  # not BLAS: its threads spin on a busy machine
        plain = (total != n1) | (np.abs(sums.astype(float) - bound) <= guard)
        b += int(np.sum(sums[~plain] >= bound))
        if plain.any():
            b += int(np.sum(_plain_rows(_as_float32(draws[plain] >> _LOW), pooled, n1) >= bound))
    return b


def _blocks() -> list[int]:
    return [min(BLOCK, PERMUTATION_RESAMPLES - start) for start in range(0, PERMUTATION_RESAMPLES, BLOCK)]


def _smallest(draws: np.ndarray, n1: int) -> tuple[np.ndarray, np.ndarray]:
    """(chosen, how many chosen) per row: the keys (``draws >> 8``, :func:`_draws`) ≤ the
    row's n1-th smallest; exactly the n1 smallest unless that key is tied. Up to 4,096 keys a
    row, the top 16 of their 24 bits (the draws' high halves, read in place) are partitioned
    first (faster); a row tied there is found again on all 24."""
    if draws.shape[1] <= 4096:
        top = draws.view(np.uint16)[:, 1::2] if np.little_endian else draws.view(np.uint16)[:, 0::2]
        chosen = top <= np.partition(top, n1 - 1, axis=1)[:, n1 - 1 : n1]
        total = np.count_nonzero(chosen, axis=1)
        tied = np.flatnonzero(total != n1)
        if len(tied):
            chosen[tied], total[tied] = _smallest_full(draws[tied] >> _LOW, n1)
        return chosen, total
    return _smallest_full(draws >> _LOW, n1)


def _smallest_full(keys: np.ndarray, n1: int) -> tuple[np.ndarray, np.ndarray]:
    chosen = keys <= np.partition(keys, n1 - 1, axis=1)[:, n1 - 1 : n1]
    return chosen, np.count_nonzero(chosen, axis=1)


_LOW = np.uint32(8)
"""A 32-bit draw's bits below its float32 key's 24."""


def _draws(rng: np.random.Generator, rows: int, n: int, raw: bool) -> np.ndarray:
    """32-bit integers whose top 24 bits are :func:`_keys`' keys (``draws >> 8`` are the keys):
    the bit generator's own output when ``raw`` (no shift is made for the rows whose order
    the top 16 bits settle), else the keys shifted up."""
    if not raw:
        return _keys(rng, rows, n, raw) << _LOW
    return rng.bit_generator.random_raw(rows * n // 2).view(np.uint32).reshape(rows, n)


def _keys(rng: np.random.Generator, rows: int, n: int, raw: bool) -> np.ndarray:
    """``rng.random((rows, n), dtype=float32)``'s keys as the integers k of k·2⁻²⁴ (the same
    order, the same ties). ``raw``: read from the bit generator, which is faster and consumes
    the stream the same way when every block has an even count (a float32 is the top 24 bits
    of a 32-bit draw, two draws a 64-bit output, low half first; tests/stats/test_permutation_fast.py)."""
    if not raw:
        return (rng.random((rows, n), dtype=np.float32) * np.float32(1 << 24)).astype(np.uint32)
    return (rng.bit_generator.random_raw(rows * n // 2).view(np.uint32) >> np.uint32(8)).reshape(rows, n)


def _as_float32(keys: np.ndarray) -> np.ndarray:
    """Integer keys back to the float32 values ``rng.random`` gives (exact: k·2⁻²⁴, k < 2²⁴)."""
    return keys.astype(np.float32) * np.float32(1.0 / (1 << 24))


def _plain_rows(keys: np.ndarray, pooled: np.ndarray, n1: int) -> np.ndarray:
    """Each row's sum the plain way: the n1 smallest keys (argpartition) and their scores summed in that order."""
    if keys.dtype != np.float32:
        keys = _as_float32(keys)
    # the n1 smallest keys of a row are a uniform random subset; argpartition finds the
    # same subset as a full sort in linear time
    perm = np.argpartition(keys, n1 - 1, axis=1)[:, :n1]
    return np.asarray(pooled[perm].sum(axis=1))


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
