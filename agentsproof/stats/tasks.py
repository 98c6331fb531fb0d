"""Question (b), the effect **on tasks like these**: the cases as a sample of tasks.

The per-case deltas ``d_j`` are independent draws, each in [−1, 1], whose mean is the
effect on tasks like these (a case's own trial noise is part of its draw). Nothing more
can be assumed: a skill that helps a quarter of the tasks a lot and the rest not at all
gives a five-case sample with none of the tasks that gain about one time in four, and
then every ``d_j`` is near 0, the cases show no spread, and a t interval sits tight around
the wrong value (it held the truth in 75.5 % of such items). So the interval is one that
needs no shape: a **betting confidence interval for a bounded mean** (Waudby-Smith and
Ramdas 2023, the hedged capital process with predictable plug-in bets): a candidate mean
``m`` is rejected when a gambler betting against it, one case at a time in case order,
multiplies their money by ``1/alpha``. It holds its level for every distribution on
[−1, 1] — skewed, two-valued, anything — with any number of cases.

What that costs is the honest answer to "what can five cases show": five cases that all
gain +1 leave the interval at about [−0.07, +1], five that all gain 0 at about
[−0.58, +0.58]. No interval valid for every distribution can do much better: five +1
draws come with chance 2.5 % from a distribution with 52 % of its mass at −1 (mean
−0.04), so a lower end above −0.04 would miss it too often. With the largest bet at 95 %
of what a candidate allows (:data:`TRUNCATION`; 75 % before) the interval is 5–15 % narrower
at 5–30 cases than with 75 %, and as valid (any predictable bet below the allowance is).
A grade of tasks like these is settled only with many cases or cases that agree and are
far from a band's edge; with fewer, read the grade as one of these cases (question (a)).

The p-value of (b) is a **sign-flip randomisation test** over the cases: the signs of the
per-case deltas flipped (every pattern up to 2^12, else 10 000 seeded patterns), the
statistic their mean — a test of the mean over tasks, not of "no effect on any case".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from agentsproof.stats.intervals import PERMUTATION_RESAMPLES, SEED

GRID = 2001
"""Candidate means tried on [−1, 1] (step 0.001)."""
TRUNCATION = 0.95
"""The largest bet, as a share of what the candidate allows (Waudby-Smith and Ramdas' c):
with 3–30 cases the plug-in bet is nearly always at this cap, so it sets the width; 0.95
measured 5–15 % narrower than 0.75 (0.99 only 1–3 % more), worst two-point coverage ≥ 98 %."""
EXACT_FLIPS = 12
"""Enumerate every sign pattern up to this many cases (4,096 patterns)."""

BETTING_METHOD = (
    "betting confidence interval for the mean of the per-case deltas, a bounded mean on [-1, 1] "
    "(hedged capital, predictable plug-in bets, Waudby-Smith & Ramdas 2023): no symmetry or normality assumed"
)
SIGN_FLIP_METHOD = (
    f"one-sided sign-flip randomisation test over cases (per-case delta signs flipped; exact up to {EXACT_FLIPS} "
    f"cases, else {PERMUTATION_RESAMPLES} seeded patterns), statistic the mean case delta"
)


def betting_interval(d: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of the mean of ``d`` (values in [−1, 1] along the last axis), element by
    element over the leading axes; see the module docstring."""
    d = np.clip(np.asarray(d, dtype=float), -1.0, 1.0)
    y = (d + 1.0) / 2.0  # on [0, 1]
    n = y.shape[-1]
    alpha = 1.0 - level
    # predictable estimates: case i's bet uses cases 1 … i−1 only
    csum = np.cumsum(y, axis=-1)
    prev_sum = np.concatenate([np.zeros(y.shape[:-1] + (1,)), csum[..., :-1]], axis=-1)
    idx = np.arange(1, n + 1, dtype=float)
    mu_hat = (0.5 + csum) / (idx + 1)  # after case i
    dev = (y - np.concatenate([np.full(y.shape[:-1] + (1,), 0.5), mu_hat[..., :-1]], axis=-1)) ** 2
    prev_dev = np.concatenate([np.zeros(y.shape[:-1] + (1,)), np.cumsum(dev, axis=-1)[..., :-1]], axis=-1)
    sigma2 = (0.25 + prev_dev) / idx
    del prev_sum
    lam = np.sqrt(2.0 * math.log(2.0 / alpha) / (n * sigma2))  # (..., n)
    m = np.linspace(0.0, 1.0, GRID)[1:-1]  # open interval: a bet against 0 or 1 is unbounded
    lam_up = np.minimum(lam[..., None], TRUNCATION / m)  # (..., n, G): bet that the mean is above m
    lam_down = np.minimum(lam[..., None], TRUNCATION / (1.0 - m))
    step = y[..., None] - m
    with np.errstate(divide="ignore"):
        log_up = np.log1p(lam_up * step).sum(axis=-2)
        log_down = np.log1p(-lam_down * step).sum(axis=-2)
    threshold = math.log(1.0 / alpha)
    wealth = np.maximum(log_up, log_down) + math.log(0.5)  # hedged: half the money on each side
    kept = wealth < threshold  # (..., G)
    any_kept = kept.any(axis=-1)
    first = np.argmax(kept, axis=-1)
    last = kept.shape[-1] - 1 - np.argmax(kept[..., ::-1], axis=-1)
    step_m = m[1] - m[0]
    lo = np.where(any_kept, m[first] - step_m, 0.0)  # the grid point below the first kept one: conservative
    hi = np.where(any_kept, m[last] + step_m, 1.0)
    mean = y.mean(axis=-1)
    lo, hi = np.minimum(lo, mean), np.maximum(hi, mean)  # always holds the delta printed beside it
    return np.clip(2.0 * lo - 1.0, -1.0, 1.0), np.clip(2.0 * hi - 1.0, -1.0, 1.0)


def sign_flip_p(deltas: Sequence[float] | np.ndarray, resamples: int = PERMUTATION_RESAMPLES, seed: int = SEED) -> float | None:
    """One-sided p for "the mean over tasks > 0" from the per-case deltas."""
    d = np.asarray(deltas, dtype=float)
    c = len(d)
    if c == 0:
        return None
    observed = d.mean()
    tol = 1e-9 * max(1.0, abs(observed))
    if c <= EXACT_FLIPS:
        signs = 1.0 - 2.0 * ((np.arange(2**c)[:, None] >> np.arange(c)) & 1)
        return float(np.mean((signs * d).mean(axis=1) >= observed - tol))
    rng = np.random.default_rng(seed)
    signs = rng.choice([-1.0, 1.0], size=(resamples, c))
    b = int(np.sum((signs * d).mean(axis=1) >= observed - tol))
    return (b + 1) / (resamples + 1)


MAX_CASES_TO_SETTLE = 200
""":func:`cases_to_settle` looks no further: beyond this many cases the answer is "not by cases alone"."""


@lru_cache(maxsize=512)
def all_agree_interval(cases: int, delta: float, level: float = 0.95) -> tuple[float, float]:
    """The betting interval of ``cases`` cases that all gain ``delta``: what (b) can say at
    best with that many cases (five all-+1 cases: about [−0.07, +1.00])."""
    lo, hi = betting_interval(np.full(cases, float(delta)), level)
    return float(lo), float(hi)


def _settles(deltas: np.ndarray, cases: int, level: float) -> bool:
    from agentsproof.model.results import compute_grade

    lo, hi = betting_interval(np.resize(deltas, cases), level)
    return compute_grade(float(lo)) == compute_grade(float(hi))


def cases_to_settle(deltas: Sequence[float], level: float = 0.95, least: int = 5) -> int | None:
    """How many cases like these settle question (b): the fewest ``c`` (at least ``least``,
    the 5-case rule, and at least the cases there are) whose betting interval, for ``c``
    cases with these per-case deltas repeated in turn, lies inside one grade band. None when
    no number up to :data:`MAX_CASES_TO_SETTLE` does (a delta on a band's edge, or cases
    that disagree too much). The same interval as the report's, so "about N more cases like
    these would settle it" is the project's own power calculation."""
    d = np.clip(np.asarray(deltas, dtype=float), -1.0, 1.0)
    if d.size == 0:
        return None
    start = max(least, int(d.size))
    if _settles(d, start, level):
        return start
    lo, hi = start, start
    while True:  # doubling, then bisection: the interval narrows as cases are added
        if hi >= MAX_CASES_TO_SETTLE:
            return None
        lo, hi = hi, min(MAX_CASES_TO_SETTLE, hi * 2)
        if _settles(d, hi, level):
            break
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _settles(d, mid, level):
            hi = mid
        else:
            lo = mid
    return hi


CLEAR_CUT = (0.95, 0.05)
"""A clear-cut skill: pass chance 0.95 with it, 0.05 without (the docs' and eval-generate's yardstick)."""


@lru_cache(maxsize=32)
def clear_cut_settled_share(cases: int, trials: int, runs: int = 400, seed: int = 23) -> float:
    """Share of ``runs`` seeded simulated items of a clear-cut skill (``cases`` cases, ``trials``
    pass/fail trials per arm each) whose question-(b) interval settles their A."""
    from agentsproof.model.results import compute_grade

    rng = np.random.default_rng(seed)
    w = (rng.random((runs, cases, trials)) < CLEAR_CUT[0]).mean(axis=-1)
    wo = (rng.random((runs, cases, trials)) < CLEAR_CUT[1]).mean(axis=-1)
    lo, hi = betting_interval(w - wo)
    return float(np.mean([compute_grade(float(a)) == compute_grade(float(b)) == "A" for a, b in zip(lo, hi, strict=True)]))


def clear_cut_cases(trials: int, share: float = 0.9, most: int = 40) -> int | None:
    """The fewest cases (from 5) at which a clear-cut skill with ``trials`` trials per arm and
    case settles its A for tasks like these in at least ``share`` of runs; None within ``most``."""
    return next((c for c in range(5, most + 1) if clear_cut_settled_share(c, trials) >= share), None)
