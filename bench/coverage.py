"""Coverage of the item delta interval, the pass-rate interval and pass@k, by simulation.

Grid (issue 23): 1, 3, 5, 10 cases × 1, 3, 6, 15, 30 trials per case per arm × true
deltas −0.8 … +0.8 (step 0.2) × binary / graded / continuous scores × with and without
case-to-case variation. Every cell runs ``--runs`` simulated items (fixed seed per cell)
through the project's own function (``stats.wald.interval_from_moments``, the one
``stats.cases.delta_interval`` calls) and prints, per row of the grid, the lowest, mean
and highest coverage over the nine true deltas, the mean width, and how often the interval
held its own delta. Beside it, on the same simulated items:

- **known spread** — ``delta ± 1.96 · SD``, with SD the true spread of the delta around its
  target in that cell (measured over the cell's runs): the interval one would print if the
  spread were known. Where even it leaves 93–97 % at some true delta, the data are too
  coarse (few possible deltas) for an interval of the form ``delta ± h`` to sit within 2
  points at every delta: narrowing it to bring the mean into the band drops some deltas
  below 93 %, as the known-spread interval's own minimum shows;
- **before** — the interval of the previous release (``max`` of a within-case t with 0/1
  pseudo-trials and a between-case t with a c/(c − 1) factor), kept here for comparison;
- ``--compare-runs`` items per cell (true deltas −0.6, 0, +0.6) also go through the
  bootstrap of the release before that (smoothed percentile bootstrap, two-level over cases).

The simulated item: case j has true delta δ_j and baseline chance b_j; each trial of the
with-arm scores with mean b_j + δ_j, each baseline trial with mean b_j. Without variation
δ_j = δ and b_j = (1 − δ)/2 (the hardest, most variable baseline). With variation
δ_j = δ + U(−a, a), a = min(0.3, edge − |δ|), and b_j uniform over what keeps both arms
in range, so the population mean delta is exactly δ. The target is what the item's default
question answers: from 5 cases δ (the delta for the tasks the cases stand for, question
(b)); below 5 the mean of these cases' own δ_j (question (a); one case: its own δ_j). Scores: binary — pass with the chance;
graded — share of 4 independent checks passed; continuous — Beta with that mean and
concentration 4 (means kept within 0.02–0.98).

Pass rates: exact, by enumerating the binomial outcomes for pass chances 0.05 … 0.95, for
the interval the report prints (Clopper–Pearson), Wilson (the one before) and pass@k
(k = n, the report's default) through the pass-rate interval.

Issue 32 adds (``--parts``; default all):

- **questions** — both questions on one grid: 1, 3, 5, 10 cases × 1, 3, 6, 15, 30 trials ×
  binary / graded / continuous × task effects none, symmetric, **skewed** (a quarter of the
  tasks gain 4δ, the rest 0: a specialised skill) and **mirror** (three quarters gain 4δ/3,
  a quarter 0) × true deltas −0.2 … +0.6 (a skewed cell only where 4δ fits in range).
  (a) is scored against these cases' own mean delta, (b) against the population delta;
  per row coverage, width against the known-variance interval (delta ± 1.96 SD, SD measured
  in the cell), and the share "settled wrong" (the interval inside one band that is not the
  truth's; for (b), and for (a) from 5 cases, only where ``settled`` applies: 5 cases or more);
- **others** — the pairwise preference interval (stats.preference: clustered, ties as
  halves) on 5–30 pairs, 1–10 cases; the activation recall/precision interval
  (stats.activation.proportion), exact over the binomial outcomes;
- the interval printed after an ``--adaptive`` stop is measured by ``bench/adaptive.py``
  (it needs the policy's loop).

    .venv/bin/python bench/coverage.py [--runs 2000] [--compare-runs 0] [--markdown]
        [--parts delta,questions,others,pass] [--q-runs 400] [--full]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.stats import binom
from scipy.stats import t as student_t

from agentsproof.stats.cases import two_level_interval
from agentsproof.stats.intervals import clopper_pearson, delta_ci, pass_at_k, pass_k_interval, wilson
from agentsproof.stats.wald import arm_moments, interval_from_moments

CASES = (1, 3, 5, 10)
TRIALS = (1, 3, 6, 15, 30)
DELTAS = tuple(round(d, 1) for d in np.arange(-0.8, 0.81, 0.2))
KINDS = ("binary", "graded", "continuous")
LEVEL = 0.95
COMPARE_DELTAS = (-0.6, 0.0, 0.6)


def _draw(rng: np.random.Generator, p: np.ndarray, kind: str, n: int) -> np.ndarray:
    """``n`` trials per (run, case) with pass chance / mean score ``p``: pass/fail, graded
    (quarters) or continuous (Beta with concentration 4)."""
    runs, c = p.shape
    p = np.clip(p, 0.0, 1.0)[..., None] * np.ones(n)
    if kind == "binary":
        return (rng.random((runs, c, n)) < p).astype(float)
    if kind == "graded":
        return rng.binomial(4, p) / 4.0
    return rng.beta(np.maximum(p * 4.0, 1e-9), np.maximum((1 - p) * 4.0, 1e-9))


def simulate(rng: np.random.Generator, runs: int, c: int, n: int, delta: float, kind: str, varies: bool):
    """(with scores, without scores, per-case true deltas): arrays (runs, c, n), (runs, c, n), (runs, c)."""
    edge = 0.96 if kind == "continuous" else 1.0
    floor = 1.0 - edge
    if varies:
        a = min(0.3, edge - abs(delta))
        dj = delta + rng.uniform(-a, a, (runs, c))
        lo = np.maximum(floor, floor - dj)
        hi = np.minimum(edge, edge - dj)
        base = lo + (hi - lo) * rng.random((runs, c))
    else:
        dj = np.full((runs, c), delta)
        base = np.full((runs, c), (1 - delta) / 2)

    return _draw(rng, base + dj, kind, n), _draw(rng, base, kind, n), dj


def all_binary(xw: np.ndarray, xwo: np.ndarray) -> np.ndarray:
    """Per item (runs, cases, trials arrays): every trial scored 0 or 1 (the report's test)."""
    out: np.ndarray = np.all((xw == 0) | (xw == 1), axis=(-2, -1)) & np.all((xwo == 0) | (xwo == 1), axis=(-2, -1))
    return out


def new_method(xw: np.ndarray, xwo: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return interval_from_moments(*arm_moments(xw), *arm_moments(xwo), level=LEVEL, binary=all_binary(xw, xwo))


def before_method(xw: np.ndarray, xwo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The previous release's interval, for the comparison columns (equal trials per case)."""
    def moments(x: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        n = x.shape[-1]
        s, q = x.sum(-1), (x * x).sum(-1)
        m_aug = (s + 1.0) / (n + 2.0)
        return n, s / n, np.maximum(0.0, (q + 1.0) / (n + 2.0) - m_aug * m_aug)
    n, mw, vw = moments(xw)
    _, mo, vo = moments(xwo)
    d = mw - mo
    c = d.shape[-1]
    delta = d.mean(-1)
    half = student_t.ppf(0.975, max(1.0, c * n)) * np.sqrt((vw / n + vo / n).sum(-1) / c**2)
    if c > 1:
        half = np.maximum(half, student_t.ppf(0.975, c - 1) * np.sqrt(d.var(-1, ddof=1) / c * (c / (c - 1))))
    return np.clip(delta - half, -1, 1), np.clip(delta + half, -1, 1)


def old_method(xw: np.ndarray, xwo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    los, his = [], []
    for r in range(xw.shape[0]):
        cases = [(list(xw[r, j]), list(xwo[r, j])) for j in range(xw.shape[1])]
        ci = delta_ci(*cases[0], LEVEL) if len(cases) == 1 else two_level_interval(cases, LEVEL, resamples=2000)
        assert ci is not None
        los.append(ci[0])
        his.append(ci[1])
    return np.asarray(los), np.asarray(his)


def delta_grid(args: argparse.Namespace) -> list[dict]:
    rows = []
    cell = 0
    for kind in args.kinds:
        for varies in (False, True):
            for c in CASES:
                for n in TRIALS:
                    covs, widths, holds, old_covs, old_widths, old_holds = [], [], [], [], [], []
                    known_covs, known_widths, before_covs, before_widths = [], [], [], []
                    kept = []  # (estimate, half-width, target) per delta, for the tightening check
                    for delta in DELTAS:
                        cell += 1
                        rng = np.random.default_rng([args.seed, cell])
                        xw, xwo, dj = simulate(rng, args.runs, c, n, delta, kind, varies)
                        lo, hi, est = new_method(xw, xwo)
                        # what the item's default question answers: (b) the population delta from 5
                        # cases, (a) these cases' own mean delta below (one case: its own delta)
                        target = dj.mean(-1) if (varies and c < 5) else delta
                        eps = 1e-12
                        covs.append(np.mean((lo <= target + eps) & (target <= hi + eps)))
                        widths.append(np.mean(hi - lo))
                        holds.append(np.mean((lo <= est + eps) & (est <= hi + eps)))
                        kept.append((est, np.maximum(hi - est, est - lo), target))
                        sd = float(np.std(est - target))
                        klo, khi = np.clip(est - 1.959964 * sd, -1, 1), np.clip(est + 1.959964 * sd, -1, 1)
                        known_covs.append(np.mean((klo <= target + eps) & (target <= khi + eps)))
                        known_widths.append(np.mean(khi - klo))
                        blo, bhi = before_method(xw, xwo)
                        before_covs.append(np.mean((blo <= target + eps) & (target <= bhi + eps)))
                        before_widths.append(np.mean(bhi - blo))
                        if args.compare_runs and delta in COMPARE_DELTAS:
                            m = args.compare_runs
                            olo, ohi = old_method(xw[:m], xwo[:m])
                            oest = (xw[:m].mean(-1) - xwo[:m].mean(-1)).mean(-1)
                            t = target[:m] if np.ndim(target) else target
                            old_covs.append(np.mean((olo <= t + eps) & (t <= ohi + eps)))
                            old_widths.append(np.mean(ohi - olo))
                            old_holds.append(np.mean((olo <= oest + eps) & (oest <= ohi + eps)))
                    rows.append({
                        "kind": kind, "varies": varies, "cases": c, "trials": n,
                        "min": min(covs), "mean": float(np.mean(covs)), "max": max(covs),
                        "width": float(np.mean(widths)), "holds": min(holds),
                        "known_mean": float(np.mean(known_covs)), "known_min": min(known_covs),
                        "known_max": max(known_covs), "known_width": float(np.mean(known_widths)),
                        "before_min": min(before_covs), "before_mean": float(np.mean(before_covs)),
                        "before_width": float(np.mean(before_widths)),
                        "old_min": min(old_covs) if old_covs else None,
                        "old_width": float(np.mean(old_widths)) if old_widths else None,
                        "old_holds": min(old_holds) if old_holds else None,
                        "tightened_min": tightened_min(kept) if np.mean(covs) > LEVEL + 0.02 else None,
                    })
    return rows


def tightened_min(kept: list[tuple[np.ndarray, np.ndarray, object]]) -> float:
    """A row whose mean coverage is above the band: shrink every half-width by the largest
    factor that brings the mean coverage over the deltas to the band's top (level + 2 points)
    or below, and return the lowest delta's coverage then (with discrete scores coverage
    jumps as the factor moves, so the mean may land well below the top). Below level − 2
    points: no rescaling of this interval brings the row into the band without some delta
    falling out of it at the bottom."""
    eps = 1e-12

    def covs(k: float) -> list[float]:
        return [float(np.mean((np.clip(e - k * h, -1, 1) <= t + eps) & (t <= np.clip(e + k * h, -1, 1) + eps))) for e, h, t in kept]

    lo_k, hi_k = 0.0, 1.0
    for _ in range(30):
        mid = (lo_k + hi_k) / 2
        if np.mean(covs(mid)) > LEVEL + 0.02:
            hi_k = mid
        else:
            lo_k = mid
    return min(covs(lo_k))


def transfer_check(runs: int = 4000, seed: int = 7) -> list[str]:
    """Would a shrink factor fitted to this grid's continuous scores (Beta, concentration 4)
    still hold on other score distributions? One case, 3 and 6 trials per arm: fit the factor
    that brings the mean coverage to 97 %, then measure it on concentration 1 and 0.5."""
    def cov(k: float, n: int, conc: float) -> np.ndarray:
        out = []
        for i, d in enumerate(DELTAS):
            rng = np.random.default_rng([seed, n, i])
            b = (1 - d) / 2 * 0.96 + 0.02
            pw, pb = np.clip(b + d, 0.02, 0.98), np.clip(b, 0.02, 0.98)
            xw = rng.beta(pw * conc, (1 - pw) * conc, (runs, 1, n))
            xo = rng.beta(pb * conc, (1 - pb) * conc, (runs, 1, n))
            lo, hi, e = new_method(xw, xwo=xo)
            h = np.maximum(hi - e, e - lo)
            t = pw - pb
            out.append(np.mean((np.clip(e - k * h, -1, 1) <= t + 1e-12) & (t <= np.clip(e + k * h, -1, 1) + 1e-12)))
        return np.asarray(out)

    lines = []
    for n in (3, 6):
        lo_k, hi_k = 0.0, 1.0
        for _ in range(25):
            mid = (lo_k + hi_k) / 2
            lo_k, hi_k = (lo_k, mid) if cov(mid, n, 4.0).mean() > LEVEL + 0.02 else (mid, hi_k)
        parts = []
        for conc in (4.0, 1.0, 0.5):
            fitted, plain = cov(lo_k, n, conc), cov(1.0, n, conc)
            parts.append(f"concentration {conc:g}: fitted mean {fitted.mean():.1%} (lowest {fitted.min():.1%}), "
                         f"as printed {plain.mean():.1%} ({plain.min():.1%})")
        lines.append(f"1 case × {n} continuous trials, factor {lo_k:.2f} fitted on concentration 4 — " + "; ".join(parts))
    return lines


def mid_p(x: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """The mid-p exact interval (comparison only): half the observed outcome's probability counted in each tail."""
    from scipy.optimize import brentq

    a = (1 - level) / 2
    lo = 0.0 if x == 0 else brentq(lambda p: binom.sf(x, n, p) + 0.5 * binom.pmf(x, n, p) - a, 1e-12, 1 - 1e-12)
    hi = 1.0 if x == n else brentq(lambda p: binom.cdf(x - 1, n, p) + 0.5 * binom.pmf(x, n, p) - a, 1e-12, 1 - 1e-12)
    return lo, hi


def pass_rate_grid() -> list[tuple[int, str, float, float, float, float]]:
    """(trials, interval, min, mean, max coverage, mean width) over pass chances 0.05 … 0.95, exact."""
    chances = np.round(np.arange(0.05, 0.951, 0.05), 2)
    out = []
    for n in (1, 3, 5, 6, 10, 15, 30, 50, 150, 300):
        xs = np.arange(n + 1)
        intervals = {
            "Clopper–Pearson (report)": [clopper_pearson(int(x), n) for x in xs],
            "Wilson (before)": [wilson(int(x), n) for x in xs],
            "mid-p (comparison)": [mid_p(int(x), n) for x in xs],
        }
        pk = [pass_k_interval(n, int(x), n) for x in xs]
        for name, ivs in intervals.items():
            covs, widths = [], []
            for p in chances:
                pm = binom.pmf(xs, n, p)
                inside = np.array([iv[0] <= p <= iv[1] for iv in ivs])  # type: ignore[index]
                covs.append(float(pm[inside].sum()))
                widths.append(float(sum(pm[x] * (ivs[x][1] - ivs[x][0]) for x in xs)))  # type: ignore[index]
            out.append((n, name, min(covs), float(np.mean(covs)), max(covs), float(np.mean(widths))))
        covs, widths, holds = [], [], True
        for p in chances:
            pm = binom.pmf(xs, n, p)
            truth = 1 - (1 - p) ** n
            inside = np.array([iv["pass_at_k"][0] - 1e-12 <= truth <= iv["pass_at_k"][1] + 1e-12 for iv in pk])  # type: ignore[index]
            covs.append(float(pm[inside].sum()))
            widths.append(float(sum(pm[x] * (pk[x]["pass_at_k"][1] - pk[x]["pass_at_k"][0]) for x in xs)))  # type: ignore[index]
        for x in xs:
            est = pass_at_k(n, int(x), n)
            holds &= pk[x]["pass_at_k"][0] <= est <= pk[x]["pass_at_k"][1]  # type: ignore[index]
        out.append((n, f"pass@{n} (holds estimate: {'yes' if holds else 'NO'})", min(covs), float(np.mean(covs)), max(covs), float(np.mean(widths))))
    return out



# ---- the two questions, skewed task effects, and the other intervals (issue 32) -------------------

MODES = ("none", "symmetric", "skewed", "mirror")
"""How task effects spread around the population delta δ: none (every task δ); symmetric
(δ + U(−a, a)); skewed (a quarter of tasks gain 4δ, the rest 0: a specialised skill);
mirror (three quarters gain 4δ/3, a quarter 0: a skill that fails a few tasks)."""
Q_CASES = (1, 3, 5, 10)
Q_TRIALS = (1, 3, 6, 15, 30)
Q_DELTAS = (-1.0, -0.9, -0.6, -0.2, 0.0, 0.1, 0.2, 0.25, 0.4, 0.6, 0.9, 1.0)
PLACES = ("mid", "low", "high")
"""Where a case's baseline sits in what keeps both arms in range: mid (uniform over it; with
no task effects its middle), low (near its bottom: the lower arm near 0, e.g. a harmful
skill's with-arm) and high (near its top: the upper arm near 1, e.g. a baseline near 1)."""
EDGE_MARGIN = 0.03
"""low / high: the baseline this share of its feasible range from the range's end."""


def task_effects(rng: np.random.Generator, runs: int, c: int, delta: float, mode: str, edge: float) -> np.ndarray | None:
    """Per-case true deltas (runs, c) drawn from the population of tasks, or None when the
    mode cannot reach ``delta`` inside [−edge, edge]."""
    if abs(delta) > edge + 1e-9:
        return None
    if mode == "none":
        return np.full((runs, c), delta)
    if mode == "symmetric":
        a = min(0.3, edge - abs(delta))
        if a <= 1e-9:
            return None  # no room to vary: the cell is "none"
        return delta + rng.uniform(-a, a, (runs, c))
    share = 0.25 if mode == "skewed" else 0.75
    gain = delta / share
    if abs(gain) > edge + 1e-9 or abs(delta) < 1e-9:
        return None  # out of range, or no effect to spread (the cell is "none")
    return np.where(rng.random((runs, c)) < share, gain, 0.0)


def simulate_tasks(rng: np.random.Generator, runs: int, c: int, n: int, delta: float, kind: str, mode: str, place: str = "mid"):
    """(with, without, per-case true deltas) like :func:`simulate`, task effects per ``mode``,
    baselines per ``place`` (:data:`PLACES`); None when the mode cannot reach ``delta``."""
    edge = 0.96 if kind == "continuous" else 1.0
    floor = 1.0 - edge
    dj = task_effects(rng, runs, c, delta, mode, edge - floor)
    if dj is None:
        return None
    lo = np.maximum(floor, floor - dj)
    hi = np.minimum(edge, edge - dj)
    if place == "low":
        base = lo + EDGE_MARGIN * (hi - lo)
    elif place == "high":
        base = hi - EDGE_MARGIN * (hi - lo)
    elif mode == "none":
        base = (lo + hi) / 2
    else:
        base = lo + (hi - lo) * rng.random((runs, c))
    return _draw(rng, base + dj, kind, n), _draw(rng, base, kind, n), dj, base


def grades(x: np.ndarray) -> np.ndarray:
    """compute_grade over an array, on the printed (two-decimal) values: 3 A, 2 B, 1 C, 0 F."""
    d = np.round(np.round(x, 9), 2)
    return (d >= 0.0).astype(int) + (d >= 0.15) + (d >= 0.30)


def _arm_var(m: np.ndarray, kind: str) -> np.ndarray:
    """The true variance of one trial's score with mean ``m`` (the simulator's)."""
    m = np.clip(m, 0.0, 1.0)
    return m * (1 - m) / {"binary": 1.0, "graded": 4.0, "continuous": 5.0}[kind]


def question_grid(args: argparse.Namespace) -> list[dict]:
    """Per (scores, mode, cases, trials) row and question, over Q_DELTAS × PLACES: coverage
    (lowest and mean over the cells), width against the known-variance interval, and the
    share of items whose interval sits in one band that is not the truth's ("settled wrong";
    with the 5-case rule of ``settled`` for the question the grade uses).

    Beside the known-variance ratio, two references say where that ratio cannot be met:
    ``× pass/fail`` is the width against the known-variance interval of pass/fail scores with
    the same means (the widest spread a score in [0, 1] can have: an interval that must hold
    for every score distribution cannot know a graded score's smaller spread from one trial
    or three), and ``sure`` is the largest share, over the row's cells, of items whose delta
    equals its target exactly (any interval that holds its delta covers at least that share:
    above 98.5 % the band's top cannot be met)."""
    from agentsproof.stats.wald import CASES as QA
    from agentsproof.stats.wald import TASKS as QB

    rows = []
    cell = 10_000
    for kind in args.kinds:
        for mode in args.modes:
            for c in Q_CASES:
                for n in Q_TRIALS:
                    per_q: dict[str, dict[str, list[float]]] = {
                        q: {"cov": [], "w": [], "kw": [], "pw": [], "wrong": [], "sure": []} for q in (QA, QB)
                    }
                    for delta in Q_DELTAS:
                        for place in PLACES:
                            cell += 1
                            if mode == "none" and abs(delta) > 0.999 and place != "mid":
                                continue  # delta ±1 has one placement: both arms at 0 and 1
                            rng = np.random.default_rng([args.seed, cell])
                            sim = simulate_tasks(rng, args.q_runs, c, n, delta, kind, mode, place)
                            if sim is None:
                                continue
                            xw, xwo, dj, base = sim
                            moments = (*arm_moments(xw), *arm_moments(xwo))
                            binary = all_binary(xw, xwo)
                            # the pass/fail reference: known variance of 0/1 scores with these means
                            pf_sd = np.sqrt(((base + dj) * (1 - base - dj) + base * (1 - base)).sum(-1) / n) / c
                            for q in (QA, QB):
                                if q == QB and c == 1:
                                    continue  # one case shows nothing of other tasks: (b) is [−1, 1]
                                lo, hi, est = interval_from_moments(*moments, level=LEVEL, question=q, binary=binary)
                                target = dj.mean(-1) if q == QA else np.full(len(est), delta)
                                eps = 1e-9
                                inside = (lo <= target + eps) & (target <= hi + eps)
                                sd = float(np.std(est - target))
                                one_band = grades(lo) == grades(hi)
                                if q == QB or c >= 5:  # the verdict's 5-case rule, for the question it is about
                                    wrong = one_band & (grades(lo) != grades(target)) & (c >= 5)
                                else:
                                    wrong = one_band & (grades(lo) != grades(target))
                                rec = per_q[q]
                                rec["cov"].append(float(inside.mean()))
                                rec["w"].append(float(np.mean(hi - lo)))
                                rec["kw"].append(float(np.mean(np.clip(est + 1.959964 * sd, -1, 1) - np.clip(est - 1.959964 * sd, -1, 1))))
                                pw_sd = float(np.sqrt(np.mean(pf_sd**2))) if q == QA else sd
                                rec["pw"].append(float(np.mean(np.clip(est + 1.959964 * pw_sd, -1, 1) - np.clip(est - 1.959964 * pw_sd, -1, 1))))
                                rec["wrong"].append(float(wrong.mean()))
                                rec["sure"].append(float(np.mean(np.abs(est - target) < 1e-9)))
                    for q, rec in per_q.items():
                        if not rec["cov"]:
                            continue
                        rows.append({"kind": kind, "mode": mode, "cases": c, "trials": n, "question": q,
                                     "min": min(rec["cov"]), "mean": float(np.mean(rec["cov"])), "max": max(rec["cov"]),
                                     "ratio": float(np.mean(rec["w"]) / max(1e-9, np.mean(rec["kw"]))),
                                     "pf_ratio": float(np.mean(rec["w"]) / max(1e-9, np.mean(rec["pw"]))),
                                     "sure": max(rec["sure"]),
                                     "max_ok": max((cv for cv, su in zip(rec["cov"], rec["sure"], strict=True) if su <= 0.985), default=0.0),
                                     "width": float(np.mean(rec["w"])), "wrong": max(rec["wrong"])})
    return rows


def print_question_grid(rows: list[dict], md: bool, full: bool = False) -> None:
    lo_t, hi_t = 0.93, 0.985
    print(f"\nThe two questions: (a) on these cases (target: these cases' own mean delta), (b) on tasks like these "
          f"(target: the population delta); true deltas {Q_DELTAS} × baselines {PLACES}; width ratio = mean width / the "
          f"known-variance interval's (delta ± 1.96 SD, SD measured in the cell); × pass/fail = mean width / the "
          f"known-variance interval of pass/fail scores with the same means ((a) only); sure = the largest share of a "
          f"cell's items whose delta equals its target exactly; max (not sure) = the highest coverage over the cells "
          f"where sure ≤ 98.5 %; settled wrong = the largest share over the cells of items whose interval sits in one "
          f"band that is not the truth's")
    summary_head = ["scores", "task effects", "cases", "question", "coverage min", "mean", "max (not sure)",
                    "width × known (range)", "× pass/fail (range)", "settled wrong (max)"]
    print("| " + " | ".join(summary_head) + " |\n|" + "---|" * len(summary_head) if md else "  ".join(summary_head))
    keys = sorted({(r["kind"], r["mode"], r["cases"], r["question"]) for r in rows},
                  key=lambda k: (KINDS.index(k[0]), MODES.index(k[1]), k[2], k[3]))
    for kind, mode, c, q in keys:
        sub = [r for r in rows if (r["kind"], r["mode"], r["cases"], r["question"]) == (kind, mode, c, q)]
        cells = [kind, mode, str(c), "(a)" if q == "cases" else "(b)", f"{min(r['min'] for r in sub):.1%}",
                 f"{np.mean([r['mean'] for r in sub]):.1%}", f"{max(r['max_ok'] for r in sub):.1%}",
                 f"{min(r['ratio'] for r in sub):.2f}–{max(r['ratio'] for r in sub):.2f}",
                 f"{min(r['pf_ratio'] for r in sub):.2f}–{max(r['pf_ratio'] for r in sub):.2f}" if q == "cases" else "—",
                 f"{max(r['wrong'] for r in sub):.1%}"]
        print("| " + " | ".join(cells) + " |" if md else "  ".join(cells))
    rows_to_print = rows if full else []
    head = ["scores", "task effects", "cases", "trials/case/arm", "question", "coverage min", "mean", "max (not sure)",
            "width", "× known", "× pass/fail", "sure", "settled wrong"]
    if md and rows_to_print:
        print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for r in rows_to_print:
        flag = "" if lo_t <= r["min"] and r["max_ok"] <= hi_t else " *"
        cells = [r["kind"], r["mode"], str(r["cases"]), str(r["trials"]), "(a)" if r["question"] == "cases" else "(b)",
                 f"{r['min']:.1%}{flag}", f"{r['mean']:.1%}", f"{r['max_ok']:.1%}", f"{r['width']:.2f}", f"{r['ratio']:.2f}",
                 f"{r['pf_ratio']:.2f}" if r["question"] == "cases" else "—", f"{r['sure']:.1%}", f"{r['wrong']:.1%}"]
        if md:
            print("| " + " | ".join(cells) + " |")
        else:
            print("  ".join(cells))
    for q, name in (("cases", "(a)"), ("tasks", "(b)")):
        sub = [r for r in rows if r["question"] == q]
        if not sub:
            continue
        below = [r for r in sub if r["min"] < lo_t]
        above = [r for r in sub if r["max_ok"] > hi_t]
        wide = [r for r in sub if r["ratio"] > 1.3]
        wide_pf = [r for r in wide if r["pf_ratio"] > 1.3] if q == "cases" else wide
        print(f"{name}: {len(sub)} rows; lowest coverage {min(r['min'] for r in sub):.1%}; rows with a cell below 93 %: "
              f"{len(below)}; rows with a cell above 98.5 % where the delta is not sure to equal its target: {len(above)} "
              f"(of them with 1 or 3 trials per case and arm: {sum(r['trials'] <= 3 for r in above)}); width > 1.3x known: "
              f"{len(wide)}" + (f" (and > 1.3x the pass/fail reference: {len(wide_pf)})" if q == "cases" else "")
              + f"; settled wrong at most {max(r['wrong'] for r in sub):.1%} (target < 5 %)")
        if below:
            print("   below 93 %: " + "; ".join(f"{r['kind']} {r['mode']} {r['cases']}x{r['trials']} {r['min']:.1%}" for r in below[:12])
                  + (" …" if len(below) > 12 else ""))
        if wide_pf and q == "cases":
            print("   wider than 1.3x both references: " + "; ".join(
                f"{r['kind']} {r['mode']} {r['cases']}x{r['trials']} {r['ratio']:.2f}/{r['pf_ratio']:.2f}" for r in wide_pf[:12])
                + (" …" if len(wide_pf) > 12 else ""))


def pairwise_cells(runs: int, seed: int) -> list[tuple[str, float, float, float]]:
    """(cell, coverage, mean width, known-variance width) of the preference interval
    (stats.preference): win/loss/tie verdicts with known chances, one case or several
    cases with different rates (clustered)."""
    from agentsproof.stats.preference import preference_interval

    out = []
    rng = np.random.default_rng([seed, 32])
    for pairs, cases in ((5, 1), (10, 1), (30, 1), (10, 5), (30, 5), (30, 10)):
        for rate, ties in ((0.5, 0.0), (0.8, 0.2), (0.95, 0.0), (0.7, 0.4)):
            held, widths, ests = 0, [], []
            for _ in range(runs):
                # each case's own rate around the item's (clustered), ties with a fixed chance
                case_rate = np.clip(rate + (rng.uniform(-0.15, 0.15, cases) if cases > 1 else np.zeros(1)), 0.0, 1.0)
                which = np.arange(pairs) % cases
                r_pair = case_rate[which]
                tie = rng.random(pairs) < ties
                # E[verdict] = r_pair: a tie is ½, a non-tie a win with chance (r − ties/2)/(1 − ties)
                p_win = np.clip((r_pair - ties / 2) / max(1e-9, 1 - ties), 0, 1)
                win = rng.random(pairs) < p_win
                v = np.where(tie, 0.5, win.astype(float))
                truth = float(case_rate.mean()) if cases > 1 else rate
                ci = preference_interval(list(v), [f"c{k}" for k in which] if cases > 1 else None)
                assert ci is not None
                held += ci[0] - 1e-9 <= truth <= ci[1] + 1e-9
                widths.append(ci[1] - ci[0])
                ests.append(float(v.mean()) - truth)
            sd = float(np.std(ests))
            out.append((f"{pairs} pairs, {cases} case{'s' if cases > 1 else ''}, true rate {rate:.2f}, ties {ties:.0%}",
                        held / runs, float(np.mean(widths)), 2 * 1.959964 * sd))
    return out


def activation_cells() -> list[tuple[str, float, float]]:
    """(cell, lowest coverage, mean coverage) of the activation recall interval
    (stats.activation.proportion: Clopper–Pearson on the effective count), exact over the
    binomial outcomes for true recalls 0.5 … 0.99, one trial per prompt."""
    from agentsproof.stats.activation import proportion

    out = []
    for prompts in (3, 5, 10, 30):
        covs = []
        for r in (0.5, 0.7, 0.8, 0.9, 0.95, 0.99):
            xs = np.arange(prompts + 1)
            pm = binom.pmf(xs, prompts, r)
            ivs = [proportion(int(x), prompts, prompts) for x in xs]
            covs.append(float(sum(p for p, iv in zip(pm, ivs, strict=True) if iv is not None and iv[0] <= r <= iv[1])))
        out.append((f"recall on {prompts} prompts (one trial each), true 0.5 … 0.99", min(covs), float(np.mean(covs))))
    return out


def print_other_cells(args: argparse.Namespace, md: bool) -> None:
    print(f"\nPairwise preference (stats.preference), {args.q_runs} runs per cell")
    if md:
        print("| cell | coverage | width | known-variance width |\n|---|---|---|---|")
    for name, cov, w, kw in pairwise_cells(args.q_runs, args.seed):
        print(f"| {name} | {cov:.1%} | {w:.2f} | {kw:.2f} |" if md else f"  {name:<48} coverage {cov:6.1%}  width {w:.2f}  known {kw:.2f}")
    print("\nActivation recall/precision (stats.activation.proportion), exact")
    if md:
        print("| cell | coverage min | mean |\n|---|---|---|")
    for name, lo, mean in activation_cells():
        print(f"| {name} | {lo:.1%} | {mean:.1%} |" if md else f"  {name:<52} min {lo:6.1%}  mean {mean:6.1%}")
    print("\nPost-stop (--adaptive): see bench/adaptive.py, which runs the real policy and prints the coverage of the "
          "interval printed after each stop, per cell and per look")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=2000, help="simulated items per cell (>= 500)")
    ap.add_argument("--compare-runs", type=int, default=0, help="items per cell also run through the older bootstrap (0: skip)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated: binary,graded,continuous")
    ap.add_argument("--modes", default="none,symmetric,skewed", help="questions part, task effects: none,symmetric,skewed,mirror")
    ap.add_argument("--seed", type=int, default=23)
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables (for docs/statistics.md)")
    ap.add_argument("--parts", default="delta,questions,others,pass",
                    help="comma-separated: delta (the symmetric grid above), questions (both questions, skewed effects), "
                         "others (pairwise, activation), pass (pass rates)")
    ap.add_argument("--full", action="store_true", help="questions part: every row (cases × trials), not only the summary")
    ap.add_argument("--q-runs", type=int, default=400, help="simulated items per cell of the questions and pairwise parts")
    args = ap.parse_args()
    args.kinds = [k for k in args.kinds.split(",") if k]
    args.modes = [m for m in args.modes.split(",") if m]
    parts = set(args.parts.split(","))
    t0 = time.time()
    if "questions" in parts:
        print_question_grid(question_grid(args), args.markdown, args.full)
    if "others" in parts:
        print_other_cells(args, args.markdown)
    if "delta" not in parts:
        if "pass" in parts:
            print_pass_rates(args.markdown)
        print(f"\n{time.time() - t0:.0f} s")
        return
    rows = delta_grid(args)
    md = args.markdown
    boot = bool(args.compare_runs)
    print(f"Delta interval, {LEVEL:.0%} level, {args.runs} runs per cell, true deltas {DELTAS[0]:+.1f} … {DELTAS[-1]:+.1f}"
          + (f"; the older bootstrap on {args.compare_runs} runs at deltas {COMPARE_DELTAS}" if boot else ""))
    head = ["scores", "case variation", "cases", "trials/case/arm", "coverage min", "mean", "max", "width",
            "holds delta", "known spread: min", "mean", "width", "before: min", "mean", "width"]
    if boot:
        head += ["bootstrap: min cov", "width", "holds delta"]
    if md:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print(f"{'scores':<11}{'var':<5}{'cases':>5}{'trials':>7}  {'min':>6}{'mean':>6}{'max':>6}{'width':>7}{'holds':>7}   "
              f"{'k.min':>6}{'k.mean':>7}{'k.width':>8}   {'b.min':>6}{'b.mean':>7}{'b.width':>8}"
              + (f"   {'bs.min':>6}{'bs.wid':>7}{'bs.hold':>8}" if boot else ""))
    for r in rows:
        cells = [r["kind"], "yes" if r["varies"] else "no", str(r["cases"]), str(r["trials"]), f"{r['min']:.1%}",
                 f"{r['mean']:.1%}", f"{r['max']:.1%}", f"{r['width']:.2f}", f"{r['holds']:.0%}",
                 f"{r['known_min']:.1%}", f"{r['known_mean']:.1%}", f"{r['known_width']:.2f}",
                 f"{r['before_min']:.1%}", f"{r['before_mean']:.1%}", f"{r['before_width']:.2f}"]
        if boot:
            cells += [f"{r['old_min']:.1%}" if r["old_min"] is not None else "—",
                      f"{r['old_width']:.2f}" if r["old_width"] is not None else "—",
                      f"{r['old_holds']:.0%}" if r["old_holds"] is not None else "—"]
        if md:
            print("| " + " | ".join(cells) + " |")
        else:
            print(f"{cells[0]:<11}{cells[1]:<5}{cells[2]:>5}{cells[3]:>7}  {cells[4]:>6}{cells[5]:>6}{cells[6]:>6}{cells[7]:>7}"
                  f"{cells[8]:>7}   {cells[9]:>6}{cells[10]:>7}{cells[11]:>8}   {cells[12]:>6}{cells[13]:>7}{cells[14]:>8}"
                  + (f"   {cells[15]:>6}{cells[16]:>7}{cells[17]:>8}" if boot else ""))
    band = (LEVEL - 0.02, LEVEL + 0.02)

    def outside(x: float) -> bool:
        return not band[0] <= x <= band[1]

    out = [r for r in rows if outside(r["mean"])]
    coarse = [r for r in out if outside(r["known_min"]) or outside(r["known_max"])]
    print(f"\ncells: {len(rows) * len(DELTAS)}; lowest cell {min(r['min'] for r in rows):.1%}; "
          f"rows with a cell below {band[0]:.0%}: {sum(r['min'] < band[0] for r in rows)} of {len(rows)}; "
          f"rows whose mean coverage is outside {band[0]:.0%}–{band[1]:.0%}: {len(out)} "
          f"({len(coarse)} of them where even the known-spread interval leaves the band at some delta); "
          f"interval held its own delta in every run: {'yes' if all(r['holds'] == 1.0 for r in rows) else 'NO'}")
    above = [r for r in out if r["tightened_min"] is not None]
    stuck = [r for r in above if r["tightened_min"] < band[0]]
    print(f"  of the {len(above)} rows above the band, {len(stuck)} cannot be brought into it by narrowing the interval: "
          f"shrunk by one factor until the row's mean coverage is {band[1]:.0%}, some delta falls below {band[0]:.0%}")
    rest = [r for r in above if r not in stuck]
    if rest:
        print("  rows that narrowing would bring into the band: " + "; ".join(
            f"{r['kind']}{' varying' if r['varies'] else ''} {r['cases']}×{r['trials']} ({r['mean']:.1%}, "
            f"lowest delta then {r['tightened_min']:.1%})" for r in rest))
    print(f"before: lowest cell {min(r['before_min'] for r in rows):.1%}; rows whose mean coverage is outside the band: "
          f"{sum(outside(r['before_mean']) for r in rows)}; mean width {np.mean([r['before_width'] for r in rows]):.3f} "
          f"(now {np.mean([r['width'] for r in rows]):.3f})")
    olds = [r for r in rows if r["old_min"] is not None]
    if olds:
        print(f"bootstrap: lowest cell {min(r['old_min'] for r in olds):.1%}, held its own delta in every run: "
              f"{'yes' if all(r['old_holds'] == 1.0 for r in olds) else 'no'} "
              f"(lowest share {min(r['old_holds'] for r in olds):.0%})")
    print("\nA shrink factor fitted to the grid, tried on other score distributions:")
    for line in transfer_check():
        print("  " + line)
    if "pass" in parts:
        print_pass_rates(md)
    print(f"\n{time.time() - t0:.0f} s")


def print_pass_rates(md: bool) -> None:
    print("\nPass rate and pass@k (exact over pass chances 0.05 … 0.95)")
    if md:
        print("| trials | interval | coverage min | mean | max | width |\n|---|---|---|---|---|---|")
    for n, name, lo, mean, hi, width in pass_rate_grid():
        if md:
            print(f"| {n} | {name} | {lo:.1%} | {mean:.1%} | {hi:.1%} | {width:.2f} |")
        else:
            print(f"{n:>4} {name:<36} min {lo:6.1%}  mean {mean:6.1%}  max {hi:6.1%}  width {width:.2f}")


if __name__ == "__main__":
    main()
