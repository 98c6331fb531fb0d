"""Which part of a skill earns its keep: the effect of removing each part, with a verdict.

For a part ``p`` the **effect of removing it** is the mean over the cases of
``mean(without p)_c − mean(whole)_c``: trial ``i`` of every arm runs case ``i % cases``, so
the arms are paired by case, as an item's delta is (:mod:`agentsproof.stats.cases`). Its
interval is THE interval of a delta (:func:`agentsproof.stats.cases.delta_interval`) and
answers the same question as the item's grade: (a) on these cases below five cases,
(b) on tasks like these from five.

Verdicts, at ``alpha`` (0.05) for the whole skill (Holm's step-down over the parts, one
family per claim):

* **needed** — removing it hurts: the effect is below 0. Its one-sided p-value is the
  ``alpha`` at which the interval's upper end reaches 0 (the interval at level ``1 − 2p``
  ends at 0; the intervals nest, so this is a proper test);
* **removable** — removing it costs less than ``margin`` (non-inferiority): the effect is
  above ``−margin``, with the one-sided p-value where the lower end reaches ``−margin``;
* **unclear** — neither claim holds after adjustment. A part both needed and within the
  margin (its whole interval inside ``(−margin, 0)``) is called needed.

The smallest skill (every removable part taken out) is confirmed against the whole skill
by the same non-inferiority test (one test, no adjustment) and against no skill by its own
delta and interval.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentsproof.stats.cases import CaseScores, delta_interval, mean_case_delta
from agentsproof.stats.multiplicity import holm
from agentsproof.stats.wald import default_question

ALPHA = 0.05
DEFAULT_MARGIN = 0.05
_LEVEL_LO, _LEVEL_HI = 0.5, 0.9998
_STEPS = 22


@dataclass
class PartEffect:
    """One part's effect of removal, its interval, p-values and verdict."""

    part: str
    effect: float | None
    interval: tuple[float, float] | None
    question: str
    cases: int
    p_needed: float | None = None
    p_removable: float | None = None
    p_needed_adjusted: float | None = None
    p_removable_adjusted: float | None = None
    verdict: str = "unclear"
    tokens: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def per_1k_tokens(self) -> float | None:
        """The effect of removal per 1,000 tokens of the part (negative: what each 1,000 tokens buy)."""
        if self.effect is None or not self.tokens:
            return None
        return self.effect * 1000.0 / self.tokens


def usable(cases: CaseScores) -> list[tuple[list[float], list[float]]]:
    """The cases where both arms scored."""
    return [(list(a), list(b)) for a, b in cases if len(a) and len(b)]


def one_sided_p(cases: CaseScores, bound: float, side: str, question: str) -> float:
    """The one-sided p-value of "the effect is below ``bound``" (``side="upper"``) or "above
    ``bound``" (``side="lower"``): half of one minus the highest level whose interval's end
    is past ``bound``, by bisection over nested intervals; 0.5 when not even the 50 % interval
    is past it."""

    def past(level: float) -> bool:
        ci = delta_interval(cases, level, question)
        if ci is None:
            return False
        return ci[1] < bound if side == "upper" else ci[0] > bound

    if not past(_LEVEL_LO):
        return 0.5
    if past(_LEVEL_HI):
        return (1 - _LEVEL_HI) / 2
    lo, hi = _LEVEL_LO, _LEVEL_HI
    for _ in range(_STEPS):
        mid = (lo + hi) / 2
        if past(mid):
            lo = mid
        else:
            hi = mid
    return (1 - lo) / 2


def part_effect(name: str, cases: CaseScores, tokens: int, margin: float, level: float = 0.95, question: str | None = None) -> PartEffect:
    """A part's effect of removal from ``cases`` = per case (scores without the part, scores of the whole skill)."""
    got = usable(cases)
    q = question or default_question(len(got))
    if not got:
        return PartEffect(name, None, None, q, 0, tokens=tokens)
    return PartEffect(
        name,
        mean_case_delta(got),
        delta_interval(got, level, q),
        q,
        len(got),
        p_needed=one_sided_p(got, 0.0, "upper", q),
        p_removable=one_sided_p(got, -margin, "lower", q),
        tokens=tokens,
    )


def decide(effects: Sequence[PartEffect], alpha: float = ALPHA, adjust: Callable[[Sequence[float]], list[float]] = holm) -> None:
    """Each part's verdict, the p-values adjusted across the parts (Holm), in place."""
    rated = [e for e in effects if e.p_needed is not None and e.p_removable is not None]
    if not rated:
        return
    needed = adjust([e.p_needed for e in rated if e.p_needed is not None])
    removable = adjust([e.p_removable for e in rated if e.p_removable is not None])
    for e, pn, pr in zip(rated, needed, removable, strict=True):
        e.p_needed_adjusted, e.p_removable_adjusted = pn, pr
        e.verdict = "needed" if pn < alpha else "removable" if pr < alpha else "unclear"


def non_inferior(cases: CaseScores, margin: float, alpha: float = ALPHA, question: str | None = None) -> dict[str, Any]:
    """Whether a reduced skill does as well as the whole one: ``cases`` = per case (reduced,
    whole); the effect, its interval, the one-sided p of "above −margin", and the call."""
    got = usable(cases)
    q = question or default_question(len(got))
    if not got:
        return {"effect": None, "interval": None, "question": q, "p": None, "non_inferior": False}
    p = one_sided_p(got, -margin, "lower", q)
    return {"effect": mean_case_delta(got), "interval": delta_interval(got, 0.95, q), "question": q, "p": p, "non_inferior": p < alpha}
