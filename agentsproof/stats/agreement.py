"""How far a judge agrees with people: accuracy, Cohen's κ, Spearman's ρ, with intervals.

- **accuracy** — the share of items where the judge's label equals the person's, with the
  exact (Clopper–Pearson) interval of :func:`agentsproof.stats.intervals.clopper_pearson`;
- **Cohen's κ** — (p_o − p_e)/(1 − p_e): agreement beyond what the two label rates give by
  chance. Interval: :func:`kappa_interval`, the wider of a Wald-t interval on κ and a
  t interval on log(1 − κ);
- **Spearman's ρ** for scores (average ranks for ties), interval by Fisher's z with the
  Bonett–Wright standard error √((1 + ρ²/2)/(n − 3)).

Also **consistency** (the share of pairs of verdicts that match), used for
self-consistency (asked twice), and :func:`consistency_by_item` for position consistency
(several flags per item, which go together). Every interval holds its own estimate; the
coverage of each is simulated in bench/agreement.py.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np

from agentsproof.stats.intervals import clopper_pearson, clopper_pearson_bounds

KAPPA_FLOOR = 0.6
"""Below this Cohen's κ an eval's report warns that its judge is not measured as reliable."""
KAPPA_WALD_PSEUDO = 4.0
"""Pseudo-counts (spread evenly over the k × k cells) behind the Wald standard error of κ."""
KAPPA_LOG_PSEUDO = 1.0
"""Pseudo-counts behind the standard error of log(1 − κ)."""


def accuracy(judge: Sequence[Hashable], human: Sequence[Hashable]) -> dict[str, object] | None:
    """The share of labels where the judge agrees with the human (``n``, ``value``, Clopper–Pearson ``ci``); None when the lists are empty or differ in length."""
    n = len(judge)
    if n == 0 or n != len(human):
        return None
    hits = sum(a == b for a, b in zip(judge, human, strict=True))
    return {"n": n, "value": hits / n, "ci": list(clopper_pearson(hits, n) or (0.0, 1.0))}


KAPPA_METHOD = (
    "Cohen's kappa, the wider of a Wald-t interval (Fleiss–Cohen–Everitt standard error) and a t interval "
    "on log(1 − kappa) (delta method), standard errors from the table with pseudo-counts; "
    "with no disagreement the exact bound of the disagreement rate"
)


def kappa_table(judge: Sequence[Hashable], human: Sequence[Hashable]) -> np.ndarray:
    """The (1, k, k) count table of two raters' labels: the judge's by row, the person's by column."""
    labels = sorted({*judge, *human}, key=str)
    code = {lab: i for i, lab in enumerate(labels)}
    table = np.zeros((1, len(labels), len(labels)))
    for a, b in zip(judge, human, strict=True):
        table[0, code[a], code[b]] += 1
    return table


def cohen_kappa(judge: Sequence[Hashable], human: Sequence[Hashable], level: float = 0.95) -> dict[str, object] | None:
    """κ with its interval (:func:`kappa_interval`); ``value`` and ``ci`` None when both
    raters used one and the same label only (chance agreement is 1: κ is undefined)."""
    n = len(judge)
    if n == 0 or n != len(human):
        return None
    value, lo, hi = (float(x[0]) for x in kappa_interval(kappa_table(judge, human), level))
    if math.isnan(value):
        return {"n": n, "value": None, "ci": None, "method": "Cohen's kappa (undefined: both raters gave one and the same label only)"}
    return {"n": n, "value": value, "ci": [lo, hi], "method": KAPPA_METHOD}


def kappa_tables(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(κ, p_e, row shares, column shares) of each count table in ``tables`` (shape (R, k, k):
    judge's label by row, person's by column); κ is NaN where p_e = 1 (one label each)."""
    t = np.asarray(tables, dtype=float)
    n = t.sum(axis=(1, 2))
    p = t / n[:, None, None]
    rows, cols = p.sum(axis=2), p.sum(axis=1)
    po = np.trace(p, axis1=1, axis2=2)
    pe = (rows * cols).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = (po - pe) / (1 - pe)
    kappa[np.isclose(pe, 1.0)] = np.nan
    return kappa, pe, rows, cols


def _smoothed_cells(tables: np.ndarray, total: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cell shares, row and column shares and κ of each table with ``total`` pseudo-counts
    spread evenly over its k² cells (so no share is 0 and no standard error collapses)."""
    k = tables.shape[1]
    t = np.asarray(tables, dtype=float) + total / (k * k)
    p = t / t.sum(axis=(1, 2))[:, None, None]
    kappa, _, rows, cols = kappa_tables(t)
    return p, rows, cols, kappa


def kappa_interval(tables: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(κ̂, lower, upper) of each count table (shape (R, k, k)); NaN where κ is undefined.

    κ = 1 − d/c (d: the share of disagreements, c = 1 − p_e: the disagreement chance
    alone would give). The interval is the wider of two, both with Student's t quantile on
    n − 1 degrees of freedom and standard errors read off the table with pseudo-counts
    spread evenly over its cells (so no standard error collapses to 0 on a small table):

    - Wald on κ with the large-sample variance of Fleiss, Cohen & Everitt (1969)
      (``KAPPA_WALD_PSEUDO`` pseudo-counts);
    - the delta method on log(1 − κ) = log d − log c (``KAPPA_LOG_PSEUDO`` pseudo-counts),
      centred on κ̂: skewed the way κ̂ is near 1. With no disagreement at all (κ̂ = 1) its
      lower end is the exact (Clopper–Pearson) upper bound of d over ĉ, 1 − d_hi/ĉ.

    Clipped to [−1, 1] and widened to hold κ̂. Coverage by simulation: bench/agreement.py."""
    from scipy.stats import t as student

    t = np.asarray(tables, dtype=float)
    k = t.shape[1]
    n = t.sum(axis=(1, 2))
    kappa, pe_raw, _, _ = kappa_tables(t)
    with np.errstate(invalid="ignore", divide="ignore"):  # a one-label table: NaN, set below
        q = student.ppf(1 - (1 - level) / 2, np.maximum(n - 1, 1))
        # Wald on κ, Fleiss–Cohen–Everitt variance on the smoothed table
        p, rows, cols, ks = _smoothed_cells(t, KAPPA_WALD_PSEUDO)
        pe = (rows * cols).sum(axis=1)
        diag = sum(p[:, i, i] * (1 - (rows[:, i] + cols[:, i]) * (1 - ks)) ** 2 for i in range(k))
        off = sum(p[:, i, j] * (cols[:, i] + rows[:, j]) ** 2 for i in range(k) for j in range(k) if i != j) * (1 - ks) ** 2
        var = (diag + off - (ks - pe * (1 - ks)) ** 2) / ((1 - pe) ** 2 * n)
        se = np.sqrt(np.maximum(var, 0.0))
        lo, hi = kappa - q * se, kappa + q * se
        # delta method on log(1 − κ) = log d − log c, smoothed table, centred on κ̂
        p, rows, cols, _ = _smoothed_cells(t, KAPPA_LOG_PSEUDO)
        d = 1 - np.trace(p, axis1=1, axis2=2)
        c = 1 - (rows * cols).sum(axis=1)
        grad = (1 - np.eye(k))[None, :, :] / d[:, None, None] + (cols[:, :, None] + rows[:, None, :]) / c[:, None, None]
        m1 = (p * grad).sum(axis=(1, 2))
        se_log = np.sqrt(np.maximum((p * grad * grad).sum(axis=(1, 2)) - m1 * m1, 0.0) / n)
        disagreements = n - np.trace(t, axis1=1, axis2=2)
        _, d_hi = clopper_pearson_bounds(disagreements, n, level)
        perfect = disagreements == 0
        centre = np.log(np.where(perfect, 1.0, 1 - kappa))
        lo = np.minimum(lo, np.where(perfect, 1 - d_hi / (1 - pe_raw), 1 - np.exp(centre + q * se_log)))
        hi = np.maximum(hi, np.where(perfect, 1.0, 1 - np.exp(centre - q * se_log)))
    lo = np.clip(np.minimum(lo, kappa), -1.0, 1.0)
    hi = np.clip(np.maximum(hi, kappa), -1.0, 1.0)
    undefined = np.isnan(kappa)
    lo[undefined] = np.nan
    hi[undefined] = np.nan
    return kappa, lo, hi


def spearman(judge: Sequence[float], human: Sequence[float], level: float = 0.95) -> dict[str, object] | None:
    """Spearman's ρ (average ranks for ties) with the Fisher-z interval of Bonett and Wright.

    ρ̂ = ±1 would put the Fisher centre at infinity and the interval at a single point; the
    centre is taken at most at the largest |ρ| short of 1 that n untied items can give,
    1 − 12/(n(n² − 1)), and the interval then reaches ±1 (it always holds ρ̂)."""
    n = len(judge)
    if n < 3 or n != len(human):
        return None
    from scipy.stats import rankdata

    # ρ is Pearson's r of the average ranks; scipy.stats.spearmanr computes the same ρ by
    # another path that differs in the last bit for about one input in five, so the
    # correlation of scipy's ranks is taken here (the numbers stay those recorded so far)
    ra, rb = rankdata(np.asarray(judge, dtype=float)), rankdata(np.asarray(human, dtype=float))
    if ra.std() == 0 or rb.std() == 0:
        return {"n": n, "value": None, "ci": None, "method": "Spearman's rho (undefined: a rater gave one score only)"}
    rho = max(-1.0, min(1.0, float(np.corrcoef(ra, rb)[0, 1])))
    ci = None
    if n > 3:
        from scipy.stats import norm

        edge = 1 - 12 / (n * (n * n - 1))
        z = math.atanh(max(-edge, min(edge, rho)))
        se = math.sqrt((1 + rho * rho / 2) / (n - 3))
        q = float(norm.ppf(1 - (1 - level) / 2))
        ci = [min(rho, math.tanh(z - q * se)), max(rho, math.tanh(z + q * se))]
    return {"n": n, "value": rho, "ci": ci, "method": "Spearman's rho, Fisher z interval (Bonett–Wright standard error)"}


def consistency(first: Sequence[Hashable], second: Sequence[Hashable]) -> dict[str, object] | None:
    """The share of items whose two verdicts match, with its exact interval."""
    return accuracy(first, second)


def consistency_by_item(flags: Sequence[Sequence[bool]], level: float = 0.95) -> dict[str, object] | None:
    """The share of True among every item's flags (e.g. position consistency: one flag per
    ask), with an exact interval that counts items, not flags, as the independent units.

    Flags of one item go together (a pair one judge reads one way, it tends to read that
    way on every ask), so an exact interval over all flags is too narrow. This is the
    Clopper–Pearson interval on the effective number of flags, n_eff = p̂(1 − p̂)/v̂ with v̂
    the between-items variance of p̂ (Korn & Graubard 1998), kept between the number of
    items and the number of flags; with every flag equal, n_eff is the number of items."""
    groups = [list(g) for g in flags if len(g)]
    if not groups:
        return None
    from scipy.stats import beta

    total = sum(len(g) for g in groups)
    hits = sum(sum(bool(x) for x in g) for g in groups)
    p = hits / total
    items = len(groups)
    sizes = np.asarray([len(g) for g in groups], dtype=float)
    means = np.asarray([sum(bool(x) for x in g) / len(g) for g in groups])
    # ratio-estimator variance of p̂ over items (clusters of any size)
    var = float((sizes**2 * (means - p) ** 2).sum()) / (items * (items - 1)) / sizes.mean() ** 2 if items > 1 else 0.0
    n_eff = float(items) if var <= 0 or p in (0.0, 1.0) else min(float(total), max(float(items), p * (1 - p) / var))
    x = p * n_eff
    a = 1 - level
    lo = 0.0 if hits == 0 else float(beta.ppf(a / 2, x, n_eff - x + 1))
    hi = 1.0 if hits == total else float(beta.ppf(1 - a / 2, x + 1, n_eff - x))
    return {
        "n": total,
        "items": items,
        "value": p,
        "ci": [min(lo, p), max(hi, p)],
        "method": "exact interval on the effective number of flags (items as the independent units)",
    }
