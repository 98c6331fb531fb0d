"""The sampled permutation test (arms above the exact limit): the fast path of
``stats.intervals.permutation_p`` against the plain computation it replaced (float32 keys,
``np.argpartition`` of every row, the chosen scores summed; kept as the reference in
tests/stats/test_permutation_fast.py). Both on the same scores; the p-values must be equal
(bit for bit); CPU time (``time.process_time``) best of --repeats, side by side.

    python bench/permutation_sampled.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "stats"))
sys.path.insert(0, str(ROOT))

from test_permutation_fast import plain_p  # noqa: E402

from agentsproof.stats.intervals import permutation_p  # noqa: E402

CASES = (
    ("pass/fail", 500, lambda rng, n, c: (rng.random(n) < c).astype(float)),
    ("four scores (0, 1/3, 2/3, 1)", 500, lambda rng, n, c: np.minimum(3, rng.integers(0, 4, n) + (rng.random(n) < c)) / 3),
    ("continuous", 500, lambda rng, n, c: np.clip(rng.random(n) + c - 0.5, 0, 1)),
    ("every trial 1.00", 500, lambda rng, n, c: np.ones(n)),
    ("pass/fail, 50 + 50", 50, lambda rng, n, c: (rng.random(n) < c).astype(float)),
)


def _best(fn, w: list[float], wo: list[float], repeats: int) -> tuple[float, float]:
    best, value = math.inf, 0.0
    for _ in range(repeats):
        start = time.process_time()
        value = fn(w, wo)
        best = min(best, time.process_time() - start)
    return best, value


def main() -> None:
    """One row per kind of scores: equal p, the plain CPU time, the fast one, the ratio."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(5)
    print("| scores | arms | equal p | plain | fast | plain / fast |")
    print("|---|---:|---|---:|---:|---:|")
    for name, n, make in CASES:
        w, wo = [float(x) for x in make(rng, n, 0.6)], [float(x) for x in make(rng, n, 0.5)]
        t_plain, p_plain = _best(plain_p, w, wo, args.repeats)
        t_fast, p_fast = _best(lambda a, b: permutation_p(a, b)[0], w, wo, args.repeats)  # type: ignore[index]
        ratio = f"{t_plain / t_fast:.1f}×" if t_fast > 0 else "—"
        print(f"| {name} | {n} + {n} | {'yes' if p_plain == p_fast else 'NO'} | {t_plain:.3f} s | {t_fast:.3f} s | {ratio} |")


if __name__ == "__main__":
    main()
