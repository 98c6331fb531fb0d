"""Statistics across the cases (tasks) of one item: do the grades generalise?

An item with several tasks runs trial ``i`` of both arms on case ``i % cases``. Its
delta is the **mean of the per-case deltas**, so a case with more scored trials does not
weigh more. Its interval (:func:`delta_interval`, for every item and ``--adaptive``) answers
one of two questions (:mod:`agentsproof.stats.wald`): (a) the effect on these cases, or
(b) on tasks like these (the default from 5 cases). The older **two-level
bootstrap** (:func:`two_level_interval`: cases resampled, then each arm's trials, each arm
smoothed with a 0 and a 1 pseudo-trial) stays only as the comparison in
``bench/coverage.py``: its smoothing shrank every case's delta by n/(n + 2), so its
interval could exclude the delta it was printed beside.

Per case: delta, interval, and **win / tie / loss** (tie: |delta| ≤ ``TIE_BAND``), with an
exact one-sided sign test over the wins and losses. The item's p-value answers the same
question as its grade: for (a), the effect on these cases, a stratified permutation test
(arm labels relabelled within each case); for (b), on tasks like these, a sign-flip test
over the per-case deltas (:mod:`agentsproof.stats.tasks`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from agentsproof.stats.intervals import BOOTSTRAP_RESAMPLES, PERMUTATION_RESAMPLES, SEED
from agentsproof.stats.wald import wald_delta_interval

if TYPE_CHECKING:
    from agentsproof.model.results import ArmResult, ItemResult

TIE_BAND = 0.05
"""A case whose delta is within ±TIE_BAND is a tie: neither arm won it."""
MIN_CASES = 5
"""Fewer cases than this and a grade says little about tasks the eval did not try."""

CaseScores = Sequence[tuple[Sequence[float], Sequence[float]]]
"""Per case: (with-arm scores, without-arm scores)."""

TWO_LEVEL_METHOD = (
    f"two-level percentile bootstrap, {BOOTSTRAP_RESAMPLES} resamples, seed {SEED}: cases resampled, then each "
    "arm's trials within a case, each arm smoothed with one 0 and one 1 pseudo-trial"
)


def _smooth(x: Sequence[float], pseudo: float) -> tuple[np.ndarray, np.ndarray]:
    """Values and resampling weights: the trials, plus a 0 and a 1 of weight ``pseudo``."""
    a = np.asarray(x, dtype=float)
    if pseudo <= 0:
        return a, np.full(len(a), 1.0 / len(a))
    values = np.concatenate([a, [0.0, 1.0]])
    w = np.concatenate([np.ones(len(a)), [pseudo, pseudo]])
    return values, w / w.sum()


def _inner(rng: np.random.Generator, values: np.ndarray, p: np.ndarray, n: int, m: int) -> np.ndarray:
    """``m`` bootstrap means of ``n`` draws (the arm's trial count plus its pseudo-trials)."""
    if m == 0:
        return np.zeros(0)
    if len(values) == 1:
        return np.full(m, values[0])
    idx = rng.choice(len(values), size=(m, n), p=p)
    means: np.ndarray = values[idx].mean(axis=1)
    return means


def two_level_interval(
    cases: CaseScores,
    level: float = 0.95,
    *,
    pseudo: float = 1.0,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = SEED,
) -> tuple[float, float] | None:
    """Percentile interval of the mean case delta: cases resampled, then trials within each.

    ``pseudo`` is the weight of each arm's 0 and 1 pseudo-trials (0: none). Cases where an
    arm has no scored trial are left out; None when no case is left.
    """
    usable = [(list(w), list(wo)) for w, wo in cases if len(w) and len(wo)]
    if not usable:
        return None
    rng = np.random.default_rng(seed)
    c = len(usable)
    picks = rng.integers(0, c, size=(resamples, c))
    total = np.zeros(resamples)
    arms = []
    for w, wo in usable:
        xv, xp = _smooth(w, pseudo)
        yv, yp = _smooth(wo, pseudo)
        extra = 2 if pseudo > 0 else 0
        arms.append((xv, xp, len(w) + extra, yv, yp, len(wo) + extra))
    for j in range(c):
        col = picks[:, j]
        for k, (xv, xp, nx, yv, yp, ny) in enumerate(arms):
            rows = np.nonzero(col == k)[0]
            if rows.size:
                total[rows] += _inner(rng, xv, xp, nx, rows.size) - _inner(rng, yv, yp, ny, rows.size)
    means = total / c
    tail = (1 - level) / 2
    lo, hi = np.quantile(means, [tail, 1 - tail])
    return float(max(-1.0, lo)), float(min(1.0, hi))


def delta_interval(cases: CaseScores, level: float = 0.95, question: str | None = None) -> tuple[float, float] | None:
    """THE interval of an item's delta, for reports and ``--adaptive`` alike
    (:mod:`agentsproof.stats.wald`): ``question`` ``"cases"`` (a), the effect on these
    cases; ``"tasks"`` (b), on tasks like these; None, the item's default (b from 5 cases,
    else a). It always holds the delta, and a higher level gives a wider interval (the
    intervals nest)."""
    return wald_delta_interval(cases, level, question)


def case_deltas(cases: CaseScores) -> list[float]:
    """The per-case deltas mean(with) − mean(without) of the cases whose arms both scored."""
    return [float(np.mean(w)) - float(np.mean(wo)) for w, wo in cases if len(w) and len(wo)]


def mean_case_delta(cases: CaseScores) -> float | None:
    """The mean of ``case_deltas``; None when no case has both arms scored."""
    deltas = case_deltas(cases)
    return sum(deltas) / len(deltas) if deltas else None


def item_delta(item: ItemResult) -> float | None:
    """An item's delta: the mean of its per-case deltas (with one case, mean(with) − mean(without))."""
    groups = by_case(item)
    if len(groups) > 1:
        d = mean_case_delta([(g[1], g[2]) for g in groups])
        if d is not None:
            return d
    w, wo = item.with_arm.mean_score, item.without_arm.mean_score
    return None if w is None or wo is None else w - wo


def outcome(delta: float, band: float = TIE_BAND) -> str:
    """``win``, ``loss`` or ``tie`` for a delta, a tie being within ``band`` of 0."""
    if delta > band + 1e-12:
        return "win"
    if delta < -band - 1e-12:
        return "loss"
    return "tie"


def sign_test_p(wins: int, losses: int) -> float:
    """One-sided exact sign test: P(at least ``wins`` wins of wins + losses at 1/2). Ties are left out."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail: int = sum(math.comb(n, k) for k in range(wins, n + 1))
    outcomes: int = 2**n
    return tail / outcomes


def stratified_permutation_p(cases: CaseScores, resamples: int = PERMUTATION_RESAMPLES, seed: int = SEED) -> float | None:
    """One-sided p for "with > without": arm labels shuffled within each case, statistic the
    mean case delta; (b + 1)/(B + 1) over ``resamples`` seeded relabellings.

    ``scipy.stats.permutation_test`` has no strata (it relabels across all the trials), so
    this one stays ours."""
    usable = [(np.asarray(w, float), np.asarray(wo, float)) for w, wo in cases if len(w) and len(wo)]
    if not usable:
        return None
    observed = np.mean([w.mean() - wo.mean() for w, wo in usable])
    bound = observed - 1e-9 * max(1.0, abs(observed))
    # Each relabelling's statistic without sorting: a case's first arm is its len(w) smallest keys
    # (one partition), their sum one product. It differs from the sorted computation's only by
    # rounding (at most ``guard``): rows with a tied key or that close to the bound are
    # computed the sorted way (the same keys drawn again), so b is the sorted way's, bit for bit
    # (tests/stats/test_permutation_fast.py).
    rng = np.random.default_rng(seed)
    stat = np.zeros(resamples)
    tied = np.zeros(resamples, dtype=bool)
    guard = 1e-300
    for w, wo in usable:
        pooled = np.concatenate([w, wo])
        keys = rng.random((resamples, len(pooled)))
        chosen = keys <= np.partition(keys, len(w) - 1, axis=1)[:, len(w) - 1 : len(w)]
        tied |= np.count_nonzero(chosen, axis=1) != len(w)
        first = np.einsum("ij,j->i", chosen.astype(float), pooled)
        stat += first / len(w) - (pooled.sum() - first) / len(wo)
        guard += 8.0 * len(pooled) ** 2 * np.finfo(float).eps * max(1.0, float(np.max(np.abs(pooled))))
    guard += 8.0 * len(usable) ** 2 * np.finfo(float).eps * max(1.0, max(float(np.max(np.abs(np.concatenate(c)))) for c in usable))  # the sum over cases
    stat /= len(usable)
    near = np.flatnonzero(tied | (np.abs(stat - bound) <= guard))
    b = int(np.sum(np.delete(stat, near) >= bound))
    if len(near):
        b += int(np.sum(_sorted_stats(usable, resamples, seed, near) >= bound))
    return (b + 1) / (resamples + 1)


def _sorted_stats(usable: list[tuple[np.ndarray, np.ndarray]], resamples: int, seed: int, rows: np.ndarray) -> np.ndarray:
    """The relabellings ``rows`` of :func:`stratified_permutation_p` computed by sorting each row's keys (the keys drawn again)."""
    rng = np.random.default_rng(seed)
    stat = np.zeros(len(rows))
    for w, wo in usable:
        pooled = np.concatenate([w, wo])
        keys = rng.random((resamples, len(pooled)))[rows]
        order = np.argsort(keys, axis=1)
        perm = pooled[order]
        stat += perm[:, : len(w)].mean(axis=1) - perm[:, len(w) :].mean(axis=1)
    stat /= len(usable)
    return stat


def by_case(item: ItemResult, arms: tuple[ArmResult, ArmResult] | None = None) -> list[tuple[str, list[float], list[float], int]]:
    """(case name, first arm's scores, second arm's scores, errored trials) per case, in case
    order; the arms are the item's with and without arms unless ``arms`` names two others
    (the interference verdict compares the plugin arm with the skill alone)."""
    first, second = arms if arms is not None else (item.with_arm, item.without_arm)
    order: list[str] = []
    table: dict[str, tuple[list[float], list[float], list[int]]] = {}
    tagged = sorted(((t, k) for k, arm in enumerate((first, second)) for t in arm.trials), key=lambda tk: (tk[0].index, tk[0].arm))
    for t, k in tagged:
        name = t.case if t.case is not None else item.task_name
        if name not in table:
            order.append(name)
            table[name] = ([], [], [0])
        if t.status == "scored" and t.score is not None:
            (table[name][0] if k == 0 else table[name][1]).append(t.score)
        elif t.status == "errored":
            table[name][2][0] += 1
    return [(n, table[n][0], table[n][1], table[n][2][0]) for n in order]


def case_stats(item: ItemResult) -> dict[str, Any]:
    """The ``cases`` block of an item's stats: per-case rows, win/tie/loss and the sign test."""
    rows = []
    counts = {"win": 0, "tie": 0, "loss": 0}
    for name, ws, wos, errored in by_case(item):
        row: dict[str, Any] = {"name": name, "n_with": len(ws), "n_without": len(wos), "errored": errored, "delta": None, "delta_ci": None, "outcome": None}
        if ws and wos:
            d = sum(ws) / len(ws) - sum(wos) / len(wos)
            ci = delta_interval([(ws, wos)])
            row.update(delta=d, delta_ci=list(ci) if ci else None, outcome=outcome(d))
            counts[row["outcome"]] += 1
        rows.append(row)
    return {
        "count": len(rows),
        "rows": rows,
        "wins": counts["win"],
        "ties": counts["tie"],
        "losses": counts["loss"],
        "tie_band": TIE_BAND,
        "sign_test_p": sign_test_p(counts["win"], counts["loss"]),
        "sign_test_method": "one-sided exact sign test over won and lost cases (ties left out)",
    }


def power_verdict(n_cases: int, grade_low: str | None, grade_high: str | None, total: int | None = None, on_tasks: bool = False) -> tuple[str, list[str]]:
    """``settled`` or ``underpowered`` with its reasons: fewer than MIN_CASES usable cases
    (``n_cases``: those whose arms both scored, the count the questions go by; ``total``:
    every case, named when some are unusable), or an interval that reaches into more than
    one grade band (or no interval at all); ``on_tasks``: the interval is of tasks like these
    (question (b), from 5 cases), and the reason says so — the grade label's first part is
    about these cases, whose interval may lie in one band."""
    reasons = []
    if n_cases < MIN_CASES:
        plural = "s" if n_cases != 1 else ""
        of = f"usable case{plural} of {total} (both arms scored)" if total is not None and total != n_cases else f"case{plural}"
        reasons.append(f"{n_cases} {of} (need {MIN_CASES} for a grade that generalises)")
    if grade_low is None or grade_high is None:
        reasons.append("no interval")
    elif grade_low != grade_high:
        reasons.append(f"the interval{' for tasks like these' if on_tasks else ''} spans {grade_low}–{grade_high}")
    return ("underpowered" if reasons else "settled"), reasons
