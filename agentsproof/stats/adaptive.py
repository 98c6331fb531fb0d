"""``--adaptive``: run trials in small batches and stop once the grade is settled.

The runner asks the policy after every batch (``BatchPolicy``). At each planned look the
policy builds the item's delta interval — the very interval the reports show
(:func:`agentsproof.stats.cases.delta_interval`: the one-case bootstrap, or the two-level
bootstrap over an item's cases) — at level 1 − alpha/K, where K is the number of planned
looks (Bonferroni). Intervals of one set of scores nest (same resamples, wider tails), so
a grade settled at the corrected level is also "CI within" that grade in the report. Stopping happens only when that interval lies inside one
grade band, so a settled grade is wrong only if some look's interval missed the true
delta — at most K × alpha/K = alpha over the whole run, however the looks fall. At the
cap the run stops anyway and the grade keeps its ordinary "CI spans" label.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentsproof.model.results import compute_grade

if TYPE_CHECKING:
    from agentsproof.stats.cases import CaseScores

DEFAULT_CAP = 15
"""The cap with --adaptive and no trial count: the --reliable count, so adaptive never costs more."""
LOOKS = (5, 8, 11, 15, 20, 25, 30)


def planned_looks(cap: int) -> list[int]:
    """Trials per arm at which the policy looks: the fixed schedule up to the cap, then the cap."""
    looks = [n for n in LOOKS if n < cap]
    if cap > LOOKS[-1]:
        step = LOOKS[-1] - LOOKS[-2]
        n = LOOKS[-1]
        while n + step < cap:
            n += step
            looks.append(n)
    looks.append(cap)
    return looks


def settled_grade(
    with_scores: list[float], without_scores: list[float], looks: int, alpha: float = 0.05, cases: CaseScores | None = None
) -> str | None:
    """The grade when the corrected interval lies in one band, else None. ``cases``: the
    scores per case of an item with several tasks (then the two-level interval is used)."""
    if len(with_scores) < 2 or len(without_scores) < 2:
        return None
    from agentsproof.stats.cases import delta_interval  # numpy: only once a batch is judged

    ci = delta_interval(cases or [(with_scores, without_scores)], 1 - alpha / max(1, looks))
    if ci is None:
        return None
    g_lo, g_hi = compute_grade(ci[0]), compute_grade(ci[1])
    return g_lo if g_lo == g_hi else None


@dataclass
class AdaptivePolicy:
    """A ``BatchPolicy``: (with scores, without scores, trials done per arm, cap) → more trials."""

    alpha: float = 0.05
    stops: list[tuple[int, str | None]] = field(default_factory=list)
    """(trials per arm, settled grade or None at the cap) for every item, in finishing order."""

    def __call__(
        self, with_scores: list[float], without_scores: list[float], done: int, cap: int, cases: CaseScores | None = None
    ) -> int:
        looks = planned_looks(cap)
        if done == 0:
            return looks[0]
        grade = settled_grade(with_scores, without_scores, len(looks), self.alpha, cases)
        if grade is not None:
            self.stops.append((done, grade))
            return 0
        nxt = next((n for n in looks if n > done), None)
        if nxt is None:
            self.stops.append((done, None))
            return 0
        return nxt - done

    def describe(self, cap: int | None = None) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "looks": planned_looks(cap) if cap else list(LOOKS),
            "correction": "Bonferroni over the planned looks",
            "interval": "the report's delta interval (smoothed percentile bootstrap; two-level over cases) at level 1 - alpha/looks",
        }
