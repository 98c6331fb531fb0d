"""THE interval of an item's delta, for either question it can answer.

**Two questions.** (a) *On these cases*: the eval's cases are a fixed, hand-written set
and the trials the only randomness — the stratified score interval of the pass counts
(pass/fail scores) or of the scores' sums with their dispersion (graded scores). (b) *On tasks like these*: the cases are a sample of the tasks the skill will
meet — the betting interval of the per-case deltas (:mod:`agentsproof.stats.tasks`), which
assumes nothing about how task effects are spread. An item's grade label, ``settled`` and
``--adaptive`` answer (b) from :data:`MIN_CASES_FOR_TASKS` cases and (a) below; the report
gives both. What follows is how (a), and the older t form of (b) (:data:`TASKS_T`, kept
for the bench), are computed.

An item's delta is the mean of its per-case deltas ``d_j = mean(with_j) − mean(without_j)``
over ``c`` cases. Its interval always holds the delta it is printed beside and lies in
[−1, 1]. How it is found:

- **Pass/fail scores** (every trial 0 or 1), question (a), any number of cases: the
  stratified Miettinen–Nurminen score interval of :mod:`agentsproof.stats.score` (its
  variance at the candidate delta, each case held at its own delta shrunk toward the mean
  by the share of their spread that is not noise; z of 96 % for 95 %) — it held ≥ 93 %
  where the Welch form below dipped to 92 % (4–10 trials).
- **Graded or continuous scores**, question (a): the same score interval on the scores'
  sums, its variance times the item's ``r`` (:func:`dispersion`): the trial variance as a
  share of a pass/fail score's with the same mean, pooled over every arm and shrunk toward 1
  (the most a score in [0, 1] can spread) by :data:`DISPERSION_PRIOR` degrees of freedom. A
  quasi-likelihood score interval: the variance follows the candidate delta, so arms whose
  scores sat near 0 or 1 are no longer judged by their observed spread alone. It replaced a
  Welch interval with a 0 and a 1 pseudo-trial per arm, whose pseudo-trials were what kept a
  variance from 3–6 scores honest but swamped the real one near the edges: on the
  grid's seeds (bench/coverage.py, 300 items per cell) rows with a cell above 98.5 % 116 →
  96 of 120, rows wider than 1.3× the known-variance interval 73 → 58, lowest cell 92.0 →
  93.3 %; U-shaped Beta(0.9, 0.1) against Beta(0.1, 0.9) scores, one case of 3–15 trials,
  ≥ 93 % (tests/stats/test_quasi_score.py; docs/statistics.md "Round 5"). With one
  trial per arm there is no spread to measure: r = 1, the pass/fail interval.
- **The t form of (b)** (:data:`TASKS_T`, the bench's comparison only), two or more cases:
  the cases a sample of the tasks, their spread the uncertainty: ``t(q, c − 1) · √(s²(d_j)/(c − 1))`` — the usual
  t interval of the per-case deltas, with ``s²/(c − 1)`` in place of ``s²/c`` as a
  small-sample correction (with 3–5 cases whose effects are spread evenly, ``s²/c`` held the
  true delta only about 92 % of the time). Two guards: when every case has the same delta
  (``s = 0``, common with pass/fail scores and few trials) the cases show no spread to
  measure, and the within-case Welch interval of all cases (``V_w`` summed over the cases,
  divided by ``c²``, each arm's variance with a 0 and a 1 pseudo-trial of weight
  :data:`PSEUDO_WEIGHT`) is used instead; with about one trial per case and arm the half-width
  is at least half of that within-case ``√V_w`` (one trial per case makes the per-case
  deltas few-valued and skewed).

The interval is not tuned to a model: it is the textbook score interval of a difference of
proportions (or its quasi-likelihood form), with small, stated guards (the z margin, the
edge floor, the prior on r). Coverage is measured,
not argued: ``bench/coverage.py`` (docs/statistics.md shows the table, beside the
interval a known spread would give). Everything here is arithmetic on arrays, so the bench
runs the very same function on thousands of simulated items at once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agentsproof.stats.quantiles import t_ppf
from agentsproof.stats.score import SCORE_METHOD, score_interval

PSEUDO_WEIGHT = 0.15  # weight of the 0 and the 1 pseudo-trial in an arm's variance for the t form of (b)'s floor

DISPERSION_PRIOR = 2.0
"""Degrees of freedom' worth of weight on r = 1 (a pass/fail score's spread) in
:func:`dispersion`: what protects a spread measured from a few scores (1.0 let one case
of 6 trials from U-shaped Beta(0.9, 0.1) against Beta(0.1, 0.9) scores hold 90.7 %; 2.0 holds 93.8 %)."""

QUASI_METHOD = (
    "the stratified score interval of the scores' sums, its variance times the item's r (trial variance as a share of "
    f"a pass/fail score's with the same mean, pooled over arms and shrunk toward 1 by {DISPERSION_PRIOR:g} df; "
    "graded or continuous scores), z of 96 % for 95 %; coverage in bench/coverage.py"
)

ONE_TRIAL_FLOOR = 0.5  # share of the within-case half-width kept as a floor with ~one trial per case


def arm_moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n, mean, sample variance) over the last axis; the variance has ``n − 1`` in its
    denominator and is 0 with one trial."""
    x = np.asarray(x, dtype=float)
    k = x.shape[-1]
    n = np.full(x.shape[:-1], k, dtype=float)
    mean = x.mean(axis=-1)
    if k < 2:
        return n, mean, np.zeros(x.shape[:-1])
    return n, mean, x.var(axis=-1, ddof=1)


def _pseudo_variance(n: np.ndarray, mean: np.ndarray, var: np.ndarray) -> np.ndarray:
    """An arm's variance with a 0 and a 1 pseudo-trial of weight :data:`PSEUDO_WEIGHT` (the
    within-case floor of the bench's t form of (b)); one trial: the variance of it, a 0 and a 1."""
    s, q = n * mean, (n - 1.0) * var + n * mean * mean  # the scores' sum and sum of squares
    one = (q + 1.0) / (n + 2.0) - ((s + 1.0) / (n + 2.0)) ** 2
    w = PSEUDO_WEIGHT
    m_w = (s + w) / (n + 2 * w)
    many = np.maximum(0.0, (q + w) / (n + 2 * w) - m_w * m_w) * (n + 2 * w) / np.maximum(n + 2 * w - 1, 1e-9)
    out: np.ndarray = np.where(n < 2, np.maximum(0.0, one), many)
    return out


def dispersion(n_w: np.ndarray, mean_w: np.ndarray, var_w: np.ndarray, n_wo: np.ndarray, mean_wo: np.ndarray, var_wo: np.ndarray) -> np.ndarray:
    """Per item (cases along the last axis), r ∈ (0, 1]: the trial variance as a share of a
    pass/fail score's with the same mean, ``r̂ = Σ (n − 1) v / Σ (n − 1) m(1 − m)`` over every
    arm of every case (an arm whose scores all agree at 0 or 1 adds nothing to either side),
    capped at 1 (no score in [0, 1] spreads more) and shrunk toward 1 by
    :data:`DISPERSION_PRIOR` degrees of freedom: ``(df·r̂ + k₀)/(df + k₀)``, ``df = Σ (n − 1)``.
    With one trial per arm there is nothing to measure a spread from: r = 1, the pass/fail
    interval. Pass/fail scores give r̂ ≥ 1, so r = 1: the same interval as theirs."""
    num = np.zeros(np.shape(mean_w)[:-1])
    den = np.zeros_like(num)
    df = np.zeros_like(num)
    for n, m, v in ((n_w, mean_w, var_w), (n_wo, mean_wo, var_wo)):
        k = np.maximum(np.asarray(n, float) - 1.0, 0.0)
        m = np.clip(np.asarray(m, float), 0.0, 1.0)
        num = num + (k * np.asarray(v, float)).sum(axis=-1)
        den = den + (k * m * (1.0 - m)).sum(axis=-1)
        df = df + k.sum(axis=-1)
    r_hat = np.where(den > 1e-12, np.minimum(1.0, num / np.maximum(den, 1e-12)), 1.0)
    r: np.ndarray = (df * r_hat + DISPERSION_PRIOR) / (df + DISPERSION_PRIOR)
    return r


CASES = "cases"
"""Question (a): the effect on these cases (the trials the only randomness)."""
TASKS = "tasks"
"""Question (b): the effect on tasks like these (the cases a sample of tasks)."""
TASKS_T = "tasks-t"
"""The t interval of the per-case deltas, (b)'s interval before it assumed nothing: kept
only as the comparison in ``bench/coverage.py`` (it under-covers skewed task effects)."""
MIN_CASES_FOR_TASKS = 5
"""From this many cases an item's grade answers (b) by default; below, (a)."""


def default_question(cases: int) -> str:
    """The question an item's grade, ``settled`` and ``--adaptive`` answer: (b) from
    MIN_CASES_FOR_TASKS cases, else (a) (fewer cases cannot say much about other tasks)."""
    return TASKS if cases >= MIN_CASES_FOR_TASKS else CASES


def interval_from_moments(
    n_w: np.ndarray,
    mean_w: np.ndarray,
    var_w: np.ndarray,
    n_wo: np.ndarray,
    mean_wo: np.ndarray,
    var_wo: np.ndarray,
    level: float = 0.95,
    question: str | None = None,
    binary: np.ndarray | bool | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, delta) for items whose cases lie along the last axis (one value per item).

    Every argument has shape (..., cases); ``n`` counts scored trials (≥ 1 each).
    ``binary`` (per item, shape (...)): every trial of the item scored 0 or 1; for (a) such
    an item gets the stratified score interval (:mod:`agentsproof.stats.score`) of its
    pass counts (``mean · n``), others that of their sums times :func:`dispersion`'s r.
    ``question``: :data:`CASES` (question (a): the stratified score interval),
    :data:`TASKS` (the betting interval of the per-case deltas, :mod:`agentsproof.stats.tasks`;
    [−1, 1] with one case: one case shows nothing of other tasks) or None (the default for
    the number of cases, :func:`default_question`)."""
    n_w = np.asarray(n_w, float)
    n_wo = np.asarray(n_wo, float)
    mean_w_arr, mean_wo_arr = np.asarray(mean_w, float), np.asarray(mean_wo, float)
    d = mean_w_arr - mean_wo_arr
    c = d.shape[-1]
    delta = d.mean(axis=-1)
    question = question or default_question(c)
    if question == TASKS:
        if c == 1:
            return np.full(delta.shape, -1.0), np.full(delta.shape, 1.0), delta
        from agentsproof.stats.tasks import betting_interval

        lo, hi = betting_interval(d, level)
        return np.minimum(lo, delta), np.maximum(hi, delta), delta
    if c == 1 or question == CASES:
        r = dispersion(n_w, mean_w_arr, var_w, n_wo, mean_wo_arr, var_wo)
        pw, pwo = mean_w_arr * n_w, mean_wo_arr * n_wo
        if binary is not None:  # pass/fail: whole passes and r = 1 exactly
            flag = np.asarray(binary, bool)
            pw, pwo = np.where(flag[..., None], np.round(pw), pw), np.where(flag[..., None], np.round(pwo), pwo)
            r = np.where(flag, 1.0, r)
        return score_interval(pw, n_w, pwo, n_wo, level, dispersion=r)
    # the t form of (b) (TASKS_T, the bench's comparison): between-case t, within-case Welch as a floor
    a = _pseudo_variance(n_w, mean_w_arr, np.asarray(var_w, float)) / n_w
    b = _pseudo_variance(n_wo, mean_wo_arr, np.asarray(var_wo, float)) / n_wo
    v_within = (a + b).sum(axis=-1) / c**2
    dof_w, dof_wo = np.maximum(n_w - 1, 1), np.maximum(n_wo - 1, 1)  # each arm's degrees of freedom (at least 1)
    denom = (a * a / dof_w + b * b / dof_wo).sum(axis=-1)
    df_cap = np.maximum(1.0, (dof_w + dof_wo).sum(axis=-1))
    df_within = np.clip((a + b).sum(axis=-1) ** 2 / np.maximum(denom, 1e-300), 1.0, df_cap)
    tail = 1 - (1 - level) / 2
    half_within = t_ppf(tail, df_within) * np.sqrt(v_within)
    spread = d.std(axis=-1, ddof=1)
    half_between = t_ppf(tail, c - 1) * spread / np.sqrt(c - 1)
    one_trial = ((n_w + n_wo) / 2).mean(axis=-1) < 2
    floor = np.where(spread < 1e-9, half_within, np.where(one_trial, ONE_TRIAL_FLOOR * np.sqrt(v_within), 0.0))
    half = np.maximum(half_between, floor)
    return np.clip(delta - half, -1.0, 1.0), np.clip(delta + half, -1.0, 1.0), delta


def all_pass_fail(cases: Sequence[tuple[Sequence[float], Sequence[float]]]) -> bool:
    """Every trial of every usable case scored 0 or 1 (then (a) is the score interval)."""
    return all(float(v) in (0.0, 1.0) for w, wo in cases if len(w) and len(wo) for v in (*w, *wo))


def cases_method(cases: Sequence[tuple[Sequence[float], Sequence[float]]]) -> str:
    """The method string of question (a)'s interval for these cases: the stratified score
    interval of the pass counts for pass/fail scores, else of the scores' sums with their r."""
    return SCORE_METHOD if all_pass_fail(cases) else QUASI_METHOD


def wald_delta_interval(
    cases: Sequence[tuple[Sequence[float], Sequence[float]]], level: float = 0.95, question: str | None = None
) -> tuple[float, float] | None:
    """The item interval from per-case (with scores, without scores) for ``question`` (see
    :func:`interval_from_moments`); cases with an empty arm are left out, None when none is left."""
    usable = [(w, wo) for w, wo in cases if len(w) and len(wo)]
    if not usable:
        return None
    cols = [[], [], [], [], [], []]  # type: list[list[float]]
    binary = all_pass_fail(usable)
    for w, wo in usable:
        for k, v in enumerate((*arm_moments(np.asarray(w, float)), *arm_moments(np.asarray(wo, float)))):
            cols[k].append(float(v))
    n_w, m_w, v_w, n_wo, m_wo, v_wo = (np.asarray(col) for col in cols)
    lo, hi, _ = interval_from_moments(n_w, m_w, v_w, n_wo, m_wo, v_wo, level=level, question=question, binary=binary)
    return float(lo), float(hi)
