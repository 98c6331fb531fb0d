"""``--aa``: the noise floor of an A/A run (the baseline against itself).

Both arms run the same prompts with the same graders and judge, so every true delta is 0
and its grade is C. What the run still calls an effect is noise: an item is **called**
A, B or F when its delta interval lies inside that band (the report's "CI within" — the
claim a reader would act on). Its point grade alone is not a call: with a true delta of 0
it is F about half the time, which is what the interval is for.

**The verdict is a test across items**, not "no call": with 95 % intervals an item is
called by chance in at most ``alpha`` of A/A items, so the number of calls among n items is
at most Binomial(n, alpha) when the intervals are calibrated. ``calls_p`` is the exact
one-sided binomial p-value P(X ≥ calls), and ``within_alpha`` is ``calls_p ≥ alpha``: a
perfectly calibrated run fails it in at most ``alpha`` of runs (one call among ten items
is not a finding: P(X ≥ 1 | 10, 0.05) = 0.40).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def aa_summary(items: Sequence[Any], alpha: float = 0.05) -> dict[str, Any]:
    """The A/A block of a run: per-item deltas with their intervals, and the shares called."""
    rows = []
    called = {"A": 0, "B": 0, "F": 0}
    point = {"A": 0, "B": 0, "C": 0, "F": 0}
    for it in items:
        s = it.stats or {}
        ci = s.get("delta_ci")
        if it.delta is None or ci is None:
            continue
        low, high = s.get("grade_low"), s.get("grade_high")
        call = low if low is not None and low == high and low in called else None
        if call:
            called[call] += 1
        if it.grade in point:
            point[it.grade] += 1
        rows.append({"id": it.id, "delta": it.delta, "delta_ci": list(ci), "called": call})
    n = len(rows)
    calls = sum(called.values())
    share = calls / n if n else None
    p = binomial_tail(calls, n, alpha) if n else None
    return {
        "mode": "baseline against itself: both arms ran the baseline prompt with the same graders and judge",
        "items": n,
        "called": called,
        "called_share": share,
        "point_grades": point,
        "alpha": alpha,
        "calls_p": p,
        "calls_test": "one-sided exact binomial test of the calls against alpha: P(X >= calls), X ~ Binomial(items, alpha)",
        "within_alpha": p is not None and p >= alpha,
        "mean_delta": sum(r["delta"] for r in rows) / n if n else None,
        "rows": rows,
    }


def binomial_tail(k: int, n: int, p: float) -> float:
    """P(X ≥ k) for X ~ Binomial(n, p)."""
    return min(1.0, sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1)))
