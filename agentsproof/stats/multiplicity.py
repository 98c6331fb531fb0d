"""p-values adjusted for testing many items at once (``eval-all``).

A plugin of twelve skills that change nothing still gets, by chance, a p below 0.05 for
about one of them in two runs — and a delta large enough for a B now and then. eval-all
therefore adjusts every item's p-value across the run's items:

- **Holm** (the default) controls the family-wise error rate: the chance that *any*
  no-effect item comes out significant stays ≤ alpha.
- **Benjamini–Hochberg** (``--p-adjust bh``) controls the false discovery rate: among the
  items called significant, the expected share of no-effect ones stays ≤ alpha. It finds
  more real effects in large plugins.

An A or B whose adjusted p is not below alpha keeps its grade (the grade is the delta's)
but is marked ``†``: the difference it rests on is within what chance produces across
this many items.
"""

from __future__ import annotations

from collections.abc import Sequence

ALPHA = 0.05
MARK = "†"
METHODS = {"holm": "Holm (family-wise error rate)", "bh": "Benjamini–Hochberg (false discovery rate)", "none": "no adjustment"}


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg step-up adjusted p-values (q-values), in the input order."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i], reverse=True)
    out = [0.0] * m
    running = 1.0
    for k, i in enumerate(order):
        rank = m - k
        running = min(running, pvalues[i] * m / rank)
        out[i] = min(1.0, running)
    return out


def adjust(pvalues: Sequence[float], method: str) -> list[float]:
    """``pvalues`` adjusted by ``method`` (``holm``, ``bh`` or ``none``), in their order; raises ValueError for another method."""
    if method == "holm":
        return holm(pvalues)
    if method == "bh":
        return benjamini_hochberg(pvalues)
    if method == "none":
        return list(pvalues)
    raise ValueError(f"unknown p-value adjustment {method!r}")


def apply_to_items(items: Sequence, method: str, alpha: float = ALPHA) -> None:
    """Write ``p_adjusted``, ``p_adjust_method``, ``significant`` and ``grade_mark`` into the
    stats of every item that has a p-value (items without one are left out of the family)."""
    tested = [it for it in items if it.stats and it.stats.get("p_value") is not None]
    adjusted = adjust([it.stats["p_value"] for it in tested], method)
    for it, p in zip(tested, adjusted, strict=True):
        it.stats["p_adjusted"] = p
        it.stats["p_adjust_method"] = method
        it.stats["significant"] = p < alpha
        if it.grade in ("A", "B") and not p < alpha:
            it.stats["grade_mark"] = MARK
        else:
            it.stats.pop("grade_mark", None)
