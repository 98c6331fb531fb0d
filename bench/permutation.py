"""The exact permutation test: agentsproof's against scipy.stats.permutation_test.

Both enumerate every relabelling of the pooled trial scores when there are at most
``EXACT_PERMUTATION_LIMIT`` (a 4 + 4 item has 70, 10 + 9 has 92,378); the p-values are
compared for equality and the time of each is the best of a few repeats, side by side.
Prints one row per size: relabellings, equal p (yes/no), ours, scipy's, the ratio.
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy import stats

from agentsproof.stats.intervals import EXACT_PERMUTATION_LIMIT, permutation_p

SIZES = ((4, 4), (6, 6), (8, 8), (10, 9))
REPEATS = 3


def _ours(w: np.ndarray, wo: np.ndarray) -> float:
    return permutation_p(list(w), list(wo))[0]


def _scipy(w: np.ndarray, wo: np.ndarray) -> float:
    return float(stats.permutation_test((w, wo), lambda x, y, axis: np.sum(x, axis=axis), permutation_type="independent",
                                        alternative="greater", n_resamples=EXACT_PERMUTATION_LIMIT, vectorized=True).pvalue)


def _best(fn, *args) -> tuple[float, float]:
    best, value = math.inf, 0.0
    for _ in range(REPEATS):
        start = time.perf_counter()
        value = fn(*args)
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"{'arms':>7} {'relabellings':>12} {'equal p':>8} {'ours':>9} {'scipy':>9} {'scipy/ours':>10}")
    for n1, n2 in SIZES:
        w, wo = rng.choice([0, 0.5, 1.0], n1), rng.choice([0, 0.5, 1.0], n2)
        ours_s, ours = _best(_ours, w, wo)
        theirs_s, theirs = _best(_scipy, w, wo)
        print(f"{n1:>3} + {n2:<3} {math.comb(n1 + n2, n1):>12,} {'yes' if ours == theirs else 'NO':>8} "
              f"{ours_s:>8.3f}s {theirs_s:>8.3f}s {theirs_s / max(ours_s, 1e-9):>9.1f}×")


if __name__ == "__main__":
    main()
