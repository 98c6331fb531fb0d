"""THE interval of an item's delta: a case-clustered t interval centred on the delta itself.

An item's delta is the mean of its per-case deltas ``d_j = mean(with_j) − mean(without_j)``
over ``c`` cases. Its interval is ``delta ± h``, clipped to [−1, 1], so it always holds
the delta it is printed beside. The half-width ``h`` is the larger of two:

- **within cases** — ``t(q, df) · √V_w``, df = the scored trials per arm (the two arms'
  mean, summed over the cases; at least 1), with
  ``V_w = Σ_j (v_with_j / n_with_j + v_without_j / n_without_j) / c²``, where each arm's
  variance ``v`` is taken over its trials plus one 0 and one 1 pseudo-trial (for pass/fail
  scores ``p̃(1 − p̃)`` with ``p̃ = (passes + 1)/(n + 2)``, the Agresti–Caffo variance;
  the pseudo-trials only widen, they never move the centre). This is the whole interval
  of a one-case item: an arm whose trials all scored alike still has spread, and a
  t quantile with few trials keeps one or three trials per arm honest;
- **between cases** (two or more cases) — ``t(q, c − 1) · √(V_b · c/(c − 1))`` with
  ``V_b = s²(d_j)/c``: the cases are a sample of the tasks the skill will meet, so their
  spread is the uncertainty of the item's grade. The factor ``c/(c − 1)`` is a
  small-sample correction: without it three or five cases with effects spread evenly
  held the true delta about 93 % of the time, not 95 %.

Coverage is measured, not argued: ``bench/coverage.py`` (docs/statistics.md shows the
table). Everything here is arithmetic on arrays, so the bench runs the very same function
on thousands of simulated items at once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import t as student_t

WALD_METHOD = (
    "case-clustered t interval centred on the delta: delta ± max(t(trials per arm)·√(within-case variance, each arm "
    "with one 0 and one 1 pseudo-trial), t(cases − 1)·√(between-case variance · c/(c − 1))); coverage in "
    "bench/coverage.py"
)


def arm_moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n, mean, smoothed variance) over the last axis: the variance of the trials plus a 0 and a 1."""
    x = np.asarray(x, dtype=float)
    n = np.full(x.shape[:-1], x.shape[-1], dtype=float)
    s = x.sum(axis=-1)
    q = (x * x).sum(axis=-1)
    m_aug = (s + 1.0) / (n + 2.0)
    var = np.maximum(0.0, (q + 1.0) / (n + 2.0) - m_aug * m_aug)
    return n, s / n, var


def interval_from_moments(
    n_w: np.ndarray, mean_w: np.ndarray, var_w: np.ndarray,
    n_wo: np.ndarray, mean_wo: np.ndarray, var_wo: np.ndarray,
    level: float = 0.95,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, delta) for items whose cases lie along the last axis (one value per item).

    Every argument has shape (..., cases); ``n`` counts scored trials (≥ 1 each)."""
    d = np.asarray(mean_w, float) - np.asarray(mean_wo, float)
    c = d.shape[-1]
    delta = d.mean(axis=-1)
    v_within = (var_w / n_w + var_wo / n_wo).sum(axis=-1) / c**2
    df_within = np.maximum(1.0, ((n_w + n_wo) / 2).sum(axis=-1))  # the trials per arm
    tail = 1 - (1 - level) / 2
    half = student_t.ppf(tail, df_within) * np.sqrt(v_within)
    if c > 1:
        v_between = d.var(axis=-1, ddof=1) / c * (c / (c - 1))
        half = np.maximum(half, student_t.ppf(tail, c - 1) * np.sqrt(v_between))
    return np.clip(delta - half, -1.0, 1.0), np.clip(delta + half, -1.0, 1.0), delta


def wald_delta_interval(
    cases: Sequence[tuple[Sequence[float], Sequence[float]]], level: float = 0.95
) -> tuple[float, float] | None:
    """The item interval from per-case (with scores, without scores); cases with an empty arm
    are left out, None when none is left."""
    usable = [(w, wo) for w, wo in cases if len(w) and len(wo)]
    if not usable:
        return None
    cols = [[], [], [], [], [], []]  # type: list[list[float]]
    for w, wo in usable:
        for k, v in enumerate((*arm_moments(np.asarray(w, float)), *arm_moments(np.asarray(wo, float)))):
            cols[k].append(float(v))
    n_w, m_w, v_w, n_wo, m_wo, v_wo = (np.asarray(col) for col in cols)
    lo, hi, _ = interval_from_moments(n_w, m_w, v_w, n_wo, m_wo, v_wo, level=level)
    return float(lo), float(hi)
