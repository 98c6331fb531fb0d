"""``--adaptive``: run trials in small batches and stop once a decision is settled.

The runner asks the policy after every batch (``BatchPolicy``). At each planned look the
policy builds the item's delta interval — the very interval the reports show
(:func:`agentsproof.stats.cases.delta_interval`) — at level 1 − alpha/K, where K is the
number of planned looks (Bonferroni). It stops with the first statement that interval
supports:

- **a grade** — the interval lies inside one grade band (success);
- **"no meaningful effect: C or F"** — the interval rules out B or better (its printed
  top, two decimals, below +0.15):
  futility, the skill does not help enough to matter;
- **"does no harm: C or better"** — the interval rules out F (printed bottom ≥ 0.00) and, at the
  current width, no single grade can be settled by the cap (the width is projected to
  shrink as 1/√trials), so more trials would not change the decision;
- **"unsettled: the cap would not settle it"** (futility, no statement about the delta) —
  the interval the rule would see at the cap if the remaining trials scored like these
  (:func:`projected_interval`: each arm's mean and spread kept, the trials scaled to the
  cap; for question (b) the betting interval of as many cases that all agree, which more
  trials per case cannot beat) would settle no grade, no "no meaningful effect" and no
  "does no harm": the trials left cannot reach a decision, so they are not spent. A null skill
  on pass/fail scores stops here at the first look (no interval from 30 trials can rule
  out B for it), and an item of 5–9 cases, whose (b) interval more trials cannot narrow
  enough, stops here instead of running to the cap — unless question (a) settles first:
- **a grade on these cases** — from 5 cases, when (b) supports none of the above now or by
  the cap, (a)'s interval (these cases, the same level) inside one band stops the run with
  that grade and what would settle (b) (``AdaptivePolicy.decide``); while (a)'s projection
  could still settle a grade by the cap, the run goes on. It is a statement of (a) on (a)'s
  intervals, wrong at most alpha of the time like the others.

Every statement is implied by the interval holding the true delta, so a settled statement
is wrong only if some look's interval missed — at most K × alpha/K = alpha over the whole
run, however the looks fall. For the same reason the interval the report prints after the
stop (this one, at level 1 − alpha/K) holds the true delta with at least 1 − alpha after
any stop: it fails only when some look's interval missed. ``bench/adaptive.py`` measures
both, per cell and per look (docs/statistics.md); a confidence sequence would give the same
guarantee for unplanned looks, which the runner never takes. At the cap the run stops
anyway; its label is then the statement the interval supports, or "unsettled at the cap".
"""

from __future__ import annotations

from collections.abc import Sequence
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


NO_EFFECT = "no meaningful effect: C or F"
NO_HARM = "does no harm: C or better"
UNREACHABLE = "unsettled: the cap would not settle it"
UNSETTLED = "unsettled at the cap"
MEANINGFUL = 0.15
"""The B edge: below it an effect is not worth a skill (grade C or F)."""
BANDS = ((0.0, 0.15), (0.15, 0.30))
"""The finite grade bands (C, B); A and F are open-ended."""


def supports_a_statement(ci: tuple[float, float]) -> bool:
    """Whether an interval at the cap would support any statement: a grade, "no meaningful
    effect" (printed top below +0.15) or "does no harm" (printed bottom at least 0.00)."""
    g_lo, g_hi = compute_grade(ci[0]), compute_grade(ci[1])
    return g_lo == g_hi or g_hi in ("C", "F") or g_lo != "F"


def statement(
    ci: tuple[float, float] | None,
    *,
    done: int = 0,
    cap: int = 0,
    projected: tuple[float, float] | None = None,
) -> tuple[str | None, str | None]:
    """(settled grade, futility label) the interval supports, either or both None.

    ``done``/``cap``: trials so far and the cap, for the "does no harm" rule (only when no
    grade can be settled by the cap; with done ≥ cap it holds whenever low ≥ 0) and the
    "the cap would not settle it" rule: ``projected`` (:func:`projected_interval`), the
    interval at the cap if the remaining trials scored like these, supports no statement
    (without it, this interval's half-width × √(done/cap)); never at
    the cap, where the run stops anyway."""
    if ci is None:
        return None, None
    lo, hi = ci
    g_lo, g_hi = compute_grade(lo), compute_grade(hi)
    if g_lo == g_hi:
        return g_lo, None
    # both rules read the ends as printed (two decimals), like the grades: a top of +0.1496
    # prints "+0.15", a B, so it does not rule out B; a bottom of −0.004 prints "−0.00", a C
    if g_hi in ("C", "F"):  # the printed top is below +0.15: B or better ruled out
        return None, NO_EFFECT
    if g_lo != "F":  # the printed bottom is at least 0.00: F ruled out
        if done >= cap:
            return None, NO_HARM
        half = (hi - lo) / 2
        centre = (hi + lo) / 2
        half_at_cap = half * (done / cap) ** 0.5
        reachable = centre - half_at_cap >= 0.30 or any(2 * half_at_cap <= b - a for a, b in BANDS)
        if not reachable:
            return None, NO_HARM
    if 0 < done < cap:
        if projected is None:
            centre, half = (hi + lo) / 2, (hi - lo) / 2 * (done / cap) ** 0.5
            projected = (centre - half, centre + half)
        if not supports_a_statement(projected):
            return None, UNREACHABLE
    return None, None


def corrected_interval(
    with_scores: list[float],
    without_scores: list[float],
    looks: int,
    alpha: float = 0.05,
    cases: CaseScores | None = None,
    question: str | None = None,
) -> tuple[float, float] | None:
    """The report's delta interval at level 1 − alpha/looks (None with fewer than 2 trials an
    arm); ``question``: ``"cases"`` for (a)'s, None for the item's own (b from 5 cases)."""
    if len(with_scores) < 2 or len(without_scores) < 2:
        return None
    from agentsproof.stats.cases import delta_interval  # numpy: only once a batch is judged

    return delta_interval(cases or [(with_scores, without_scores)], 1 - alpha / max(1, looks), question)


def projection_floor(cases: CaseScores | None, ci: tuple[float, float] | None, looks: int, alpha: float = 0.05) -> float:
    """The least half-width more trials can bring the interval to: for question (b) (5 cases
    or more) that of the betting interval of as many cases whose deltas all equal the
    current centre (trial noise gone, the cases' number left); else 0."""
    if ci is None or not cases:
        return 0.0
    from agentsproof.stats.cases import case_deltas
    from agentsproof.stats.wald import TASKS, default_question

    c = len(case_deltas(cases))
    if default_question(c) != TASKS:
        return 0.0
    import numpy as np

    from agentsproof.stats.tasks import betting_interval

    lo, hi = betting_interval(np.full(c, (ci[0] + ci[1]) / 2), 1 - alpha / max(1, looks))
    return float(hi - lo) / 2


def projected_interval(
    with_scores: list[float],
    without_scores: list[float],
    done: int,
    cap: int,
    looks: int,
    alpha: float = 0.05,
    cases: CaseScores | None = None,
    question: str | None = None,
) -> tuple[float, float] | None:
    """The interval the rule would see at the cap if the remaining trials scored like these:
    for question (a) every case's arms keep their means and spreads with ``cap/done`` times
    the trials (pass/fail counts scaled: the score interval's edge behaviour included); for
    (b) the centre ± :func:`projection_floor` (more trials per case cannot beat cases that
    all agree; ``question`` ``"cases"``: (a)'s, with no floor). None without an interval."""
    ci = corrected_interval(with_scores, without_scores, looks, alpha, cases, question)
    if ci is None or done <= 0:
        return None
    groups = [(w, wo) for w, wo in (cases or [(with_scores, without_scores)]) if len(w) and len(wo)]
    floor = 0.0 if question is not None else projection_floor(groups, ci, looks, alpha)
    if floor > 0:
        centre = (ci[0] + ci[1]) / 2
        return centre - floor, centre + floor
    import numpy as np

    from agentsproof.stats.wald import CASES, all_pass_fail, arm_moments, interval_from_moments

    scale = cap / done
    cols: list[list[float]] = [[], [], [], [], [], []]
    for w, wo in groups:
        for k, v in enumerate((*arm_moments(np.asarray(w, float)), *arm_moments(np.asarray(wo, float)))):
            cols[k].append(float(v) * (scale if k in (0, 3) else 1.0))
    n_w, m_w, v_w, n_wo, m_wo, v_wo = (np.asarray(col) for col in cols)
    lo, hi, _ = interval_from_moments(n_w, m_w, v_w, n_wo, m_wo, v_wo, level=1 - alpha / max(1, looks), question=CASES, binary=all_pass_fail(groups))
    return float(lo), float(hi)


def settled_grade(with_scores: list[float], without_scores: list[float], looks: int, alpha: float = 0.05, cases: CaseScores | None = None) -> str | None:
    """The grade when the corrected interval lies in one band, else None. ``cases``: the
    scores per case of an item with several tasks (then the two-level interval is used)."""
    return statement(corrected_interval(with_scores, without_scores, looks, alpha, cases))[0]


@dataclass
class AdaptivePolicy:
    """A ``BatchPolicy``: (with scores, without scores, trials done per arm, cap) → more trials."""

    alpha: float = 0.05
    stops: list[tuple[int, str | None]] = field(default_factory=list)
    """(trials per arm, settled grade or None) for every item that stopped early, in finishing order."""
    labels: list[tuple[int, str]] = field(default_factory=list)
    """(trials per arm, stop label) for the same stops: a grade, a futility label, or UNSETTLED."""

    def decide(
        self, with_scores: list[float], without_scores: list[float], done: int, cap: int, cases: CaseScores | None = None
    ) -> tuple[str | None, str | None, bool, tuple[float, float] | None]:
        """(settled grade, futility label, whether the grade is on these cases only, its interval).

        First the item's own interval (tasks like these (b) from 5 cases). When (b) supports
        no statement, now or (projected) by the cap, question (a) is asked: a grade its
        interval settles on these cases stops the run (a perfect 5-case skill reads a clear A
        on its cases, with what would settle (b)); while (a)'s projection to the cap could
        still settle one the run goes on; else the stop is (b)'s futility. Each question's
        intervals are at level 1 − alpha/K, so each one's statements are wrong with at most alpha."""
        from agentsproof.stats.wald import CASES, TASKS, default_question

        looks = len(planned_looks(cap))
        ci = corrected_interval(with_scores, without_scores, looks, self.alpha, cases)
        projected = projected_interval(with_scores, without_scores, done, cap, looks, self.alpha, cases)
        grade, futile = statement(ci, done=done, cap=cap, projected=projected)
        from agentsproof.stats.cases import case_deltas

        on_tasks = bool(cases) and default_question(len(case_deltas(cases or []))) == TASKS
        if grade is not None or futile not in (None, UNREACHABLE) or not on_tasks:
            return grade, futile, False, ci
        ci_a = corrected_interval(with_scores, without_scores, looks, self.alpha, cases, CASES)
        grade_a = statement(ci_a)[0]
        if grade_a is not None:
            return grade_a, None, True, ci_a
        if futile == UNREACHABLE:
            at_cap = projected_interval(with_scores, without_scores, done, cap, looks, self.alpha, cases, CASES)
            if at_cap is not None and compute_grade(at_cap[0]) == compute_grade(at_cap[1]):
                return None, None, False, ci  # (a) could still settle a grade by the cap: go on
        return None, futile, False, ci

    def __call__(self, with_scores: list[float], without_scores: list[float], done: int, cap: int, cases: CaseScores | None = None) -> int:
        """How many more trials per arm to run after ``done`` of at most ``cap``: the next planned look, or 0 once the item is settled or no look is left (each stop recorded)."""
        looks = planned_looks(cap)
        if done == 0:
            return looks[0]
        grade, futile, _, _ = self.decide(with_scores, without_scores, done, cap, cases)
        if grade is not None or futile is not None:
            self.stops.append((done, grade))
            self.labels.append((done, grade or futile or UNSETTLED))
            return 0
        nxt = next((n for n in looks if n > done), None)
        if nxt is None:
            self.stops.append((done, None))
            self.labels.append((done, UNSETTLED))
            return 0
        return nxt - done

    def stop_label(self, with_scores: list[float], without_scores: list[float], done: int, cap: int, cases: CaseScores | None = None) -> dict[str, Any]:
        """What the report says of an item's stop: ``{"trials", "cap", "label", "kind", "question", ...}``,
        kind ``grade`` (success), ``futility`` or ``cap``; ``question`` ``cases`` when the grade
        is settled on these cases only (the label then says what would settle tasks like these),
        else the item's own. The same interval and rule as the stop itself, on the same
        scores, so it names the reason the run stopped."""
        from agentsproof.stats.cases import case_deltas
        from agentsproof.stats.intervals import interval_words
        from agentsproof.stats.wald import CASES, default_question

        looks = planned_looks(cap)
        level = 1 - self.alpha / len(looks)
        grade, futile, on_cases, ci = self.decide(with_scores, without_scores, done, cap, cases)
        deltas = case_deltas(cases) if cases else []
        question = CASES if on_cases else default_question(len(deltas) or 1)
        if grade is not None:
            label, kind = f"{interval_words(level)} within {grade}", "grade"
            if on_cases:
                from agentsproof.stats.item import tasks_clause

                label += f" on these {len(deltas)} cases ({tasks_clause(deltas, None, level)})"
        elif futile is not None:
            label, kind = futile, "futility"
        else:
            label, kind = UNSETTLED, "cap"
        return {
            "trials": done,
            "cap": cap,
            "label": label,
            "kind": kind,
            "question": question,
            "looks": [n for n in looks if n <= done],
            "interval": list(ci) if ci is not None else None,
            "level": level,
        }

    def describe(self, caps: Sequence[int] = ()) -> dict[str, Any]:
        """The rule as the settings record it; ``caps``: every item's cap (trials per arm),
        so ``looks`` are the looks the runner uses (``looks_by_cap`` when the caps differ)."""
        distinct = sorted(set(caps))
        out: dict[str, Any] = {
            "alpha": self.alpha,
            "looks": planned_looks(distinct[-1]) if distinct else list(LOOKS),
            "correction": "Bonferroni over the planned looks",
            "interval": "the report's delta interval at level 1 - alpha/looks: on tasks like these (the betting interval) "
            "from 5 cases, else on these cases (the stratified score interval of the pass counts, or of graded scores' sums with their spread)",
            "stops": f"a grade; '{NO_EFFECT}' (high < +0.15); '{NO_HARM}' (low >= 0, no grade reachable by the cap); "
            f"'{UNREACHABLE}' (futility: projected to the cap, the interval would support no statement)",
            "printed_interval": "the report prints the interval of the stopping rule, at level 1 - alpha/looks "
            "(Bonferroni: it holds the true delta with at least 1 - alpha however the run stopped)",
        }
        if len(distinct) > 1:
            out["looks_by_cap"] = {str(c): planned_looks(c) for c in distinct}
        return out
