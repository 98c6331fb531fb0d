"""Exact power of the two-sided Fisher test that ``compare`` uses, and ``runs-needed``.

For n runs per side, every outcome (a passes before, b passes after) has binomial
probability; the power is the total probability of the outcomes the test calls a change in
the true direction (WORSE for a drop, BETTER for a rise). Fisher p-values depend only on
(a, b, n), so one n × n table per n is computed with numpy (hypergeometric pmf per column
total, summed over the tables no more likely than the observed one, with scipy's relative
tolerance) and cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.special import gammaln
from scipy.stats import binom

MAX_RUNS = 100
_REL_TOL = 1 + 1e-7  # scipy.stats.fisher_exact counts tables with pmf <= pmf_obs * (1 + 1e-7)


def _log_comb(n: int, k: np.ndarray) -> np.ndarray:
    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)


@lru_cache(maxsize=256)
def fisher_table(n: int) -> np.ndarray:
    """p[a, b]: two-sided Fisher p-value of a/n passes before against b/n after."""
    p = np.ones((n + 1, n + 1))
    for s in range(1, 2 * n):  # s = a + b; s = 0 or 2n leaves a single table, p = 1
        a = np.arange(max(0, s - n), min(n, s) + 1)
        logp = _log_comb(n, a) + _log_comb(n, s - a) - _log_comb(2 * n, np.array(s))
        pmf = np.exp(logp - logp.max())
        pmf /= pmf.sum()
        order = np.argsort(pmf, kind="stable")
        sorted_pmf = pmf[order]
        cum = np.cumsum(sorted_pmf)
        # for each table, the sum of all pmf <= its own pmf × tolerance
        pos = np.searchsorted(sorted_pmf, pmf * _REL_TOL, side="right")
        pv = np.minimum(1.0, cum[pos - 1])
        p[a, s - a] = pv
    p.setflags(write=False)
    return p


def fisher_p(a: int, b: int, n: int) -> float:
    """The two-sided Fisher exact p-value of ``a`` of ``n`` passes against ``b`` of ``n``."""
    return float(fisher_table(n)[a, b])


def power(before: float, after: float, n: int, alpha: float = 0.05) -> float:
    """Chance that n runs per side give p < alpha with the change in the true direction."""
    if n < 1:
        return 0.0
    table = fisher_table(n)
    k = np.arange(n + 1)
    pb = binom.pmf(k, n, before)
    pa = binom.pmf(k, n, after)
    sig = table < alpha
    a_idx, b_idx = np.meshgrid(k, k, indexing="ij")
    direction = b_idx < a_idx if after < before else b_idx > a_idx
    return float(np.sum(np.outer(pb, pa) * (sig & direction)))


@dataclass
class RunsNeeded:
    """How many runs per side detect a change of pass rate from ``before`` to ``after`` with ``target_power`` at ``alpha``."""

    before: float
    after: float
    target_power: float
    alpha: float
    runs: int | None
    """Smallest runs per side reaching the power; None when not reached within max_runs."""
    achieved: float
    """Power at ``runs``, or at max_runs when not reached."""
    max_runs: int


def runs_needed(before: float, after: float, target_power: float = 0.8, alpha: float = 0.05, max_runs: int = MAX_RUNS) -> RunsNeeded:
    """The smallest runs per side (up to ``max_runs``) whose power reaches ``target_power``."""
    best = 0.0
    for n in range(1, max_runs + 1):
        pw = power(before, after, n, alpha)
        best = pw
        if pw >= target_power:
            return RunsNeeded(before, after, target_power, alpha, n, pw, max_runs)
    return RunsNeeded(before, after, target_power, alpha, None, best, max_runs)
