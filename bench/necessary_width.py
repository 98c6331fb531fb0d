"""How narrow can ANY valid interval of one case's pass/fail delta be? Exact, no simulation.

The coverage grid compares the width of question (a)'s interval with the known-variance
interval (δ̂ ± 1.96·SD, SD the true spread): an oracle that knows the pass chances. Near the
edges no interval computed from the trials can be that narrow, and this bench says how
wide one must be there:

- **necessary width**: a lower bound on the mean width of any interval (any set, even a
  randomised one) that covers at least ``--floor`` (93 %) at *every* pair of pass chances —
  the larger of two bounds. (1) Per outcome ``x`` (x_w of n passes against x_wo of n): such
  an interval must contain the delta of every pair of chances under which ``x`` has
  probability above 1 − floor (leaving one out drops that pair below the floor), so it
  spans their hull; averaged over the outcomes. (2) Pratt's: the mean width at the cell's
  chances is the integral over candidates δ of the chance the set holds δ, and for each δ
  the least such chance, subject to covering every pair of chances whose difference is δ,
  is a linear programme over the outcomes (HiGHS) — the best set for *this* cell, so a
  bound no single interval reaches everywhere. Chances and candidates on a grid of step
  ``--step`` (the programme's constraints only at the grid: a relaxation, still a bound up
  to the grid's integration error).
- **forced above 98.5 %**: in how many of the row's cells *every* interval that covers
  ``--floor`` at every pair of chances must cover more than 98.5 % (the least chance of
  holding the true delta, per outcome held or not, subject to covering every pair with that
  delta: an integer programme), of the cells where ours does (of all the row's cells).
- the mean width and the exact coverage of question (a)'s interval (``stats.score``, every
  outcome enumerated), and the known-variance interval's width (clipped to [−1, 1]).

Cells: one case, 1, 3, 6, 15, 30 trials per arm, true deltas and baseline placements of
bench/coverage.py's grid (no task effects: one case has one delta). Where the necessary
width is itself more than 1.3× the known-variance width, the 1.3× goal cannot be met by
any interval that holds 93 % everywhere.

    python bench/necessary_width.py [--floor 0.93] [--step 0.01] [--markdown]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, linprog, milp
from scipy.stats import binom

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from coverage import EDGE_MARGIN, PLACES, Q_DELTAS, Q_TRIALS  # noqa: E402

from agentsproof.stats.score import score_interval  # noqa: E402


def hull_widths(n: int, floor: float, step: float) -> np.ndarray:
    """(n + 1, n + 1): per outcome (x_w, x_wo), the width of the hull of the deltas of every
    grid pair of chances under which that outcome has probability above 1 − floor (an
    interval that left one out would cover less than ``floor`` at that pair)."""
    grid = np.round(np.arange(0.0, 1.0 + step / 2, step), 10)
    pmf = _pmf(n, grid).T  # (outcome, chance)
    deltas = grid[:, None] - grid[None, :]  # (p_w, p_wo)
    out = np.zeros((n + 1, n + 1))
    for xw in range(n + 1):
        for xo in range(n + 1):
            keep = pmf[xw][:, None] * pmf[xo][None, :] > 1.0 - floor
            if keep.any():
                out[xw, xo] = deltas[keep].max() - deltas[keep].min()
    return out


def _pmf(n: int, chances: np.ndarray) -> np.ndarray:
    return np.asarray(binom.pmf(np.arange(n + 1)[None, :], n, chances[:, None]))  # (chance, outcome)


def necessary_widths(n: int, floor: float, step: float, targets: list[tuple[float, float]]) -> list[float]:
    """Per cell (true chances p_w, p_wo), the least mean width any set of deltas can have
    that covers at least ``floor`` at every grid pair of chances (Pratt: the mean width is the
    integral over candidates δ of the chance the set holds δ; for each δ the least such chance
    is a linear programme over the outcomes — the most powerful level-(1 − floor) test of
    "the delta is δ", whatever the without-arm chance — solved here with HiGHS)."""
    grid = np.round(np.arange(0.0, 1.0 + step / 2, step), 10)
    cands = np.round(np.arange(-1.0, 1.0 + step / 2, step), 10)
    pmf_cell = [np.outer(binom.pmf(np.arange(n + 1), n, pw), binom.pmf(np.arange(n + 1), n, po)).ravel() for pw, po in targets]
    objective = np.asarray(pmf_cell)  # (cells, outcomes)
    total = np.zeros(len(targets))
    for d in cands:
        po = grid[(grid + d >= -1e-12) & (grid + d <= 1 + 1e-12)]
        pw = np.clip(po + d, 0.0, 1.0)
        a = (_pmf(n, pw)[:, :, None] * _pmf(n, po)[:, None, :]).reshape(len(po), -1)  # (nuisance, outcomes)
        for i in range(len(targets)):
            res = linprog(objective[i], A_ub=-a, b_ub=-np.full(len(po), floor), bounds=(0.0, 1.0), method="highs")
            total[i] += (res.fun if res.status == 0 else 1.0) * step
    return [float(t) for t in total]


def least_coverage(n: int, floor: float, step: float, p_w: float, p_wo: float) -> float:
    """The least chance, at true chances (p_w, p_wo), that any non-randomised set of deltas
    covering at least ``floor`` at every grid pair of chances with the same difference (and
    at this pair) holds the true delta: per outcome, hold it or not, an integer programme
    (HiGHS). Above 98.5 %, every valid interval over-covers this cell (a randomised set
    could always sit at ``floor``; reports do not draw lots)."""
    grid = np.round(np.arange(0.0, 1.0 + step / 2, step), 10)
    d = p_w - p_wo
    po = np.append(grid[(grid + d >= -1e-12) & (grid + d <= 1 + 1e-12)], p_wo)
    pw = np.clip(po + d, 0.0, 1.0)
    a = (_pmf(n, pw)[:, :, None] * _pmf(n, po)[:, None, :]).reshape(len(po), -1)
    objective = np.outer(binom.pmf(np.arange(n + 1), n, p_w), binom.pmf(np.arange(n + 1), n, p_wo)).ravel()
    keep = objective > 1e-15  # outcomes the cell never shows cost nothing: held
    if not keep.any():
        return 1.0
    need = floor - a[:, ~keep].sum(axis=1)
    res = milp(
        objective[keep],
        constraints=LinearConstraint(a[:, keep], lb=need),
        integrality=np.ones(int(keep.sum())),
        bounds=Bounds(0.0, 1.0),
        options={"time_limit": 60.0},
    )
    if res.status == 0:
        return float(res.fun)
    bound = getattr(res, "mip_dual_bound", None)  # stopped early: the solver's lower bound, never a guess above it
    return float(bound) if bound is not None and np.isfinite(bound) else 0.0


def cells(floor: float, step: float) -> list[dict]:
    rows = []
    for n in Q_TRIALS:
        x = np.arange(n + 1)
        xw, xo = np.meshgrid(x, x, indexing="ij")
        nn = np.full(xw.shape + (1,), float(n))
        lo, hi, _ = score_interval(xw[..., None].astype(float), nn, xo[..., None].astype(float), nn)
        width = hi - lo
        todo = []
        for delta in Q_DELTAS:
            for place in PLACES:
                if abs(delta) > 0.999 and place != "mid":
                    continue
                lo_b, hi_b = max(0.0, -delta), min(1.0, 1.0 - delta)
                base = {"mid": (lo_b + hi_b) / 2, "low": lo_b + EDGE_MARGIN * (hi_b - lo_b), "high": hi_b - EDGE_MARGIN * (hi_b - lo_b)}[place]
                todo.append((delta, place, base + delta, base))
        need = necessary_widths(n, floor, step, [(pw, po) for _, _, pw, po in todo])
        hull = hull_widths(n, floor, step)
        for (delta, place, p_w, p_wo), nec in zip(todo, need, strict=True):
            prob = binom.pmf(x, n, p_w)[:, None] * binom.pmf(x, n, p_wo)[None, :]
            est = (xw - xo) / n
            sd = np.sqrt((p_w * (1 - p_w) + p_wo * (1 - p_wo)) / n)
            known = float((prob * (np.clip(est + 1.959964 * sd, -1, 1) - np.clip(est - 1.959964 * sd, -1, 1))).sum())
            covered = float(prob[(lo <= delta + 1e-9) & (delta <= hi + 1e-9)].sum())
            forced = least_coverage(n, floor, step, p_w, p_wo)
            rows.append(
                {
                    "n": n,
                    "delta": delta,
                    "place": place,
                    "cov": covered,
                    "forced": forced,
                    "width": float((prob * width).sum()),
                    "necessary": max(nec, float((prob * hull).sum())),
                    "known": known,
                }
            )
        print(f"  {n} trials done", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--floor", type=float, default=0.93, help="the coverage every pair of chances must keep")
    ap.add_argument("--step", type=float, default=0.02, help="grid step of the pass chances and of the candidate deltas")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    t0 = time.time()
    rows = cells(args.floor, args.step)
    print(
        f"One case of pass/fail trials, exact: per trial count and baseline placement, the mean over the true deltas "
        f"{Q_DELTAS} of question (a)'s width, the necessary width (any interval covering ≥ {args.floor:.0%} at every pair of "
        f"chances, chance grid step {args.step:g}) and the known-variance width; ratios against the known-variance width."
    )
    head = [
        "trials/arm",
        "baselines",
        "coverage min",
        "max",
        "forced above 98.5 %",
        "width",
        "necessary",
        "known",
        "width × known",
        "necessary × known",
        "width × necessary",
    ]
    if args.markdown:
        print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for n in Q_TRIALS:
        for place in PLACES:
            sub = [r for r in rows if r["n"] == n and r["place"] == place and r["known"] > 1e-9]
            w, nec, kn = (float(np.mean([r[k] for r in sub])) for k in ("width", "necessary", "known"))
            forced = sum(r["forced"] > 0.985 for r in sub)
            high = sum(r["cov"] > 0.985 for r in sub)
            vals = [
                str(n),
                place,
                f"{min(r['cov'] for r in sub):.1%}",
                f"{max(r['cov'] for r in sub):.1%}",
                f"{forced} of {high} above ({len(sub)})",
                f"{w:.3f}",
                f"{nec:.3f}",
                f"{kn:.3f}",
                f"{w / kn:.2f}",
                f"{nec / kn:.2f}",
                f"{w / nec:.2f}",
            ]
            print("| " + " | ".join(vals) + " |" if args.markdown else "  ".join(f"{v:>10}" for v in vals))
    print(f"\n{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
