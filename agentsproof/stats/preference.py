"""The interval of a pairwise preference rate: exact, on pseudo-counts, clustered by case.

A pair's verdict is a win for the with-skill answer (1), a loss (0) or a tie (½); the rate
is their mean. Its interval is **Clopper–Pearson on pseudo-counts**: ``rate · n`` wins of
``n`` (a tie counts as half a win), through the Beta quantiles, which take a fractional
count. A percentile bootstrap, used before, printed ``[1.00, 1.00]`` for 5 wins of 5 and
held a true rate of 0.95 in 22.5 % of 5-pair runs; Clopper–Pearson never falls below its
level for win/loss verdicts, and a tie, whose variance is below a coin's, only makes it
wider than it needs to be.

**Clustered by case.** Pairs of one case share a prompt, so they are not independent
evidence about the rate: ``n`` is shrunk to an effective count ``n / deff`` with the design
effect ``deff`` = (case-clustered variance of the rate) / (the binomial variance
``rate (1 − rate) / n``), at least 1 and never below one unit per case. With one case
(or pairs that agree within cases as often as across) ``n`` stays.
"""

from __future__ import annotations

from collections.abc import Sequence

PREFERENCE_METHOD = (
    "Clopper–Pearson on pseudo-counts (a tie counts as half a win), the count shrunk by the design effect of "
    "clustering by case (never below one unit per case); coverage in bench/coverage.py"
)


def effective_count(values: Sequence[float], clusters: Sequence[str] | None = None) -> float:
    """``n / deff`` (see the module docstring); ``n`` with one cluster or none given."""
    n = len(values)
    groups: dict[str, list[float]] = {}
    for v, c in zip(values, clusters if clusters is not None else [""] * n, strict=True):
        groups.setdefault(c, []).append(v)
    g = len(groups)
    if g < 2 or n == 0:
        return float(n)
    rate = sum(values) / n
    binomial = rate * (1 - rate) / n
    clustered = sum((sum(vs) - len(vs) * rate) ** 2 for vs in groups.values()) / n**2 * g / (g - 1)
    if binomial <= 0 or clustered <= binomial:
        return float(n)
    return max(float(g), n * binomial / clustered)


def preference_interval(values: Sequence[float], clusters: Sequence[str] | None = None, level: float = 0.95) -> tuple[float, float] | None:
    """The interval of ``mean(values)`` (each 0, ½ or 1); ``clusters``: each pair's case."""
    if not values:
        return None
    from agentsproof.stats.intervals import clopper_pearson_bounds  # scipy: only once a rate is judged

    n_eff = effective_count(values, clusters)
    rate = sum(values) / len(values)
    lo, hi = clopper_pearson_bounds(rate * n_eff, n_eff, level)  # type: ignore[arg-type]
    return min(float(lo), rate), max(float(hi), rate)
