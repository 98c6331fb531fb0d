"""How far a judge agrees with people: accuracy, Cohen's κ, Spearman's ρ, with intervals.

- **accuracy** — the share of items where the judge's label equals the person's, with the
  exact (Clopper–Pearson) interval of :func:`agentsproof.stats.intervals.clopper_pearson`;
- **Cohen's κ** — (p_o − p_e)/(1 − p_e): agreement beyond what the two label rates give by
  chance. Interval: percentile bootstrap over items (``BOOTSTRAP_RESAMPLES``, seeded);
- **Spearman's ρ** for scores (average ranks for ties), interval by Fisher's z with the
  Bonett–Wright standard error √((1 + ρ²/2)/(n − 3)).

Also **consistency** (the share of pairs of verdicts that match), used for position
consistency (a pairwise judge asked both ways) and self-consistency (asked twice).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np

from agentsproof.stats.intervals import BOOTSTRAP_RESAMPLES, SEED, clopper_pearson

KAPPA_FLOOR = 0.6
"""Below this Cohen's κ an eval's report warns that its judge is not measured as reliable."""


def accuracy(judge: Sequence[Hashable], human: Sequence[Hashable]) -> dict[str, object] | None:
    n = len(judge)
    if n == 0 or n != len(human):
        return None
    hits = sum(a == b for a, b in zip(judge, human, strict=True))
    return {"n": n, "value": hits / n, "ci": list(clopper_pearson(hits, n) or (0.0, 1.0))}


def _kappa_codes(a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    """κ of each row of code arrays ``a``, ``b`` (shape (R, n)); NaN where p_e = 1."""
    po = (a == b).mean(axis=1)
    pe = np.zeros(a.shape[0])
    for c in range(k):
        pe += (a == c).mean(axis=1) * (b == c).mean(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (po - pe) / (1 - pe)
    out[np.isclose(pe, 1.0)] = np.nan
    return out


def cohen_kappa(judge: Sequence[Hashable], human: Sequence[Hashable], level: float = 0.95) -> dict[str, object] | None:
    """κ with its bootstrap interval; ``value`` None when both raters used one label only."""
    n = len(judge)
    if n == 0 or n != len(human):
        return None
    labels = sorted({*judge, *human}, key=str)
    code = {lab: i for i, lab in enumerate(labels)}
    a = np.asarray([code[x] for x in judge])[None, :]
    b = np.asarray([code[x] for x in human])[None, :]
    value = float(_kappa_codes(a, b, len(labels))[0])
    rng = np.random.default_rng(SEED)
    idx = rng.integers(0, n, size=(BOOTSTRAP_RESAMPLES, n))
    boot = _kappa_codes(a[0][idx], b[0][idx], len(labels))
    boot = boot[~np.isnan(boot)]
    tail = (1 - level) / 2
    ci = [float(x) for x in np.quantile(boot, [tail, 1 - tail])] if boot.size else None
    if ci is not None and not math.isnan(value):
        ci = [min(ci[0], value), max(ci[1], value)]
    return {"n": n, "value": None if math.isnan(value) else value, "ci": ci,
            "method": f"Cohen's kappa, percentile bootstrap over items ({BOOTSTRAP_RESAMPLES} resamples, seed {SEED})"}


def _ranks(x: Sequence[float]) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    order = np.argsort(a, kind="mergesort")
    ranks = np.empty(len(a))
    ranks[order] = np.arange(1, len(a) + 1)
    for v in np.unique(a):  # ties share their average rank
        mask = a == v
        ranks[mask] = ranks[mask].mean()
    return ranks


def spearman(judge: Sequence[float], human: Sequence[float], level: float = 0.95) -> dict[str, object] | None:
    n = len(judge)
    if n < 3 or n != len(human):
        return None
    ra, rb = _ranks(judge), _ranks(human)
    if ra.std() == 0 or rb.std() == 0:
        return {"n": n, "value": None, "ci": None, "method": "Spearman's rho (undefined: a rater gave one score only)"}
    rho = float(np.corrcoef(ra, rb)[0, 1])
    ci = None
    if n > 3:
        from scipy.stats import norm

        z = math.atanh(max(-0.999999, min(0.999999, rho)))
        se = math.sqrt((1 + rho * rho / 2) / (n - 3))
        q = float(norm.ppf(1 - (1 - level) / 2))
        ci = [math.tanh(z - q * se), math.tanh(z + q * se)]
    return {"n": n, "value": rho, "ci": ci, "method": "Spearman's rho, Fisher z interval (Bonett–Wright standard error)"}


def consistency(first: Sequence[Hashable], second: Sequence[Hashable]) -> dict[str, object] | None:
    """The share of items whose two verdicts match, with its exact interval."""
    return accuracy(first, second)
