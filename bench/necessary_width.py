"""How narrow can ANY valid interval of one case's pass/fail delta be? Exact, no simulation.

The coverage grid compares the width of question (a)'s interval with the known-variance
interval (δ̂ ± 1.96·SD, SD the true spread): an oracle that knows the pass chances. Near the
edges no interval computed from the trials can be that narrow, and this bench says how
narrow the best one can be, for the grid's own cells:

- **best valid, 93 % / 95 %**: the least mean width, over a row's cells, of any set of
  deltas that covers at least 93 % (95 %) at *every* pair of pass chances — even one built
  for these very cells. By Pratt's identity a set's mean width is the integral over
  candidates δ of the chance it holds δ; for each δ the set of outcomes that hold it is
  free, subject to the coverage of every pair of chances whose difference is δ, so the
  least summed chance over the row's cells is an integer programme over the outcomes
  (HiGHS; per outcome hold δ or not). Candidates and chances on a grid of ``--step``: the
  constraints only at the grid, so a lower bound (up to the grid's integration error); the
  solver's own lower bound is taken where it stops early. Where it is above 1.3× the
  known-variance width, no interval valid at that level is within 1.3× there.
- **forced above 98.5 %**: in how many of the row's cells *every* interval that covers
  93 % at every pair of chances must cover more than 98.5 % (the least chance of holding
  the true delta, per outcome held or not, subject to covering every pair with that delta:
  an integer programme), of the cells where ours does (of all the row's cells). A
  randomised set could always sit at the floor; reports do not draw lots.
- the mean width and the exact coverage of question (a)'s interval (``stats.score``, every
  outcome enumerated), and the known-variance interval's width (clipped to [−1, 1]).

Cells: one case, 1, 3, 6, 15, 30 trials per arm, true deltas and baseline placements of
bench/coverage.py's grid (no task effects: one case has one delta); cells where the known
spread is 0 (both chances 0 or 1) are left out of the widths.

    python bench/necessary_width.py [--step 0.02] [--trials 1,3,6,15,30] [--markdown]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.stats import binom

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from coverage import EDGE_MARGIN, PLACES, Q_DELTAS, Q_TRIALS  # noqa: E402

from agentsproof.stats.score import score_interval  # noqa: E402

TOP = 0.985
"""The band's top: coverage above it is over-coverage."""


def _pmf(n: int, chances: np.ndarray) -> np.ndarray:
    return np.asarray(binom.pmf(np.arange(n + 1)[None, :], n, np.asarray(chances, float)[:, None]))  # (chance, outcome)


def _joint(n: int, p_w: np.ndarray, p_wo: np.ndarray) -> np.ndarray:
    """(pairs, outcomes): the chance of each outcome (x_w, x_wo), flattened, under each pair."""
    return (_pmf(n, p_w)[:, :, None] * _pmf(n, p_wo)[:, None, :]).reshape(len(p_w), -1)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """HiGHS's MIP solver writes progress lines to file descriptor 1 itself: send them to /dev/null."""
    sys.stdout.flush()
    saved = os.dup(1)
    with open(os.devnull, "w", encoding="utf-8") as null:
        os.dup2(null.fileno(), 1)
        try:
            yield
        finally:
            os.dup2(saved, 1)
            os.close(saved)


def _least(objective: np.ndarray, a: np.ndarray, floor: float) -> float:
    """min objective·h over h ∈ {0, 1}^outcomes with a·h ≥ floor (each row a pair of chances);
    the solver's lower bound if it stops early. Outcomes of no weight in the objective are held."""
    keep = objective > 1e-15
    if not keep.any():
        return 0.0
    need = floor - a[:, ~keep].sum(axis=1)
    with _quiet():
        res = milp(
            objective[keep],
            constraints=LinearConstraint(a[:, keep], lb=need),
            integrality=np.ones(int(keep.sum())),
            bounds=Bounds(0.0, 1.0),
            options={"time_limit": 60.0},
        )
    if res.status == 0:
        return float(res.fun)
    bound = getattr(res, "mip_dual_bound", None)  # never a guess above the true least
    return float(bound) if bound is not None and np.isfinite(bound) else 0.0


def _nuisance(delta: float, step: float) -> tuple[np.ndarray, np.ndarray]:
    """The grid pairs of chances (with, without) whose difference is ``delta``."""
    grid = np.round(np.arange(0.0, 1.0 + step / 2, step), 10)
    po = grid[(grid + delta >= -1e-12) & (grid + delta <= 1 + 1e-12)]
    return np.clip(po + delta, 0.0, 1.0), po


def best_valid_width(n: int, floor: float, step: float, cell_probs: np.ndarray) -> float:
    """The least mean width over the cells (``cell_probs``: (cells, outcomes)) of any set of
    deltas covering ``floor`` at every grid pair of chances (see the module docstring)."""
    objective = cell_probs.sum(axis=0)
    total = 0.0
    for delta in np.round(np.arange(-1.0, 1.0 + step / 2, step), 10):
        pw, po = _nuisance(float(delta), step)
        total += _least(objective, _joint(n, pw, po), floor) * step
    return total / len(cell_probs)


def least_coverage(n: int, floor: float, step: float, p_w: float, p_wo: float) -> float:
    """The least chance, at true chances (p_w, p_wo), that any non-randomised set of deltas
    covering ``floor`` at every grid pair with the same difference (and at this pair) holds
    the true delta."""
    pw, po = _nuisance(p_w - p_wo, step)
    a = _joint(n, np.append(pw, p_w), np.append(po, p_wo))
    return _least(_joint(n, np.array([p_w]), np.array([p_wo]))[0], a, floor)


def rows(trials: list[int], step: float) -> list[dict]:
    out = []
    for n in trials:
        x = np.arange(n + 1)
        xw, xo = np.meshgrid(x, x, indexing="ij")
        nn = np.full(xw.shape + (1,), float(n))
        lo, hi, _ = score_interval(xw[..., None].astype(float), nn, xo[..., None].astype(float), nn)
        lo, hi, est = lo.ravel(), hi.ravel(), ((xw - xo) / n).ravel()
        for place in PLACES:
            cells = []
            for delta in Q_DELTAS:
                if abs(delta) > 0.999 and place != "mid":
                    continue
                lo_b, hi_b = max(0.0, -delta), min(1.0, 1.0 - delta)
                base = {"mid": (lo_b + hi_b) / 2, "low": lo_b + EDGE_MARGIN * (hi_b - lo_b), "high": hi_b - EDGE_MARGIN * (hi_b - lo_b)}[place]
                p_w, p_wo = base + delta, base
                prob = _joint(n, np.array([p_w]), np.array([p_wo]))[0]
                sd = np.sqrt((p_w * (1 - p_w) + p_wo * (1 - p_wo)) / n)
                cov = float(prob[(lo <= delta + 1e-9) & (delta <= hi + 1e-9)].sum())
                cells.append(
                    {
                        "prob": prob,
                        "sd": sd,
                        "cov": cov,
                        "width": float(prob @ (hi - lo)),
                        "known": float(prob @ (np.clip(est + 1.959964 * sd, -1, 1) - np.clip(est - 1.959964 * sd, -1, 1))),
                        "forced": least_coverage(n, 0.93, step, p_w, p_wo) if cov > TOP else 0.0,
                    }
                )
            spread = [c for c in cells if c["sd"] > 1e-9]
            probs = np.array([c["prob"] for c in spread])
            out.append(
                {
                    "n": n,
                    "place": place,
                    "cov_min": min(c["cov"] for c in cells),
                    "cov_max": max(c["cov"] for c in cells),
                    "above": sum(c["cov"] > TOP for c in cells),
                    "forced": sum(c["forced"] > TOP for c in cells),
                    "cells": len(cells),
                    "width": float(np.mean([c["width"] for c in spread])),
                    "known": float(np.mean([c["known"] for c in spread])),
                    "best93": best_valid_width(n, 0.93, step, probs),
                    "best95": best_valid_width(n, 0.95, step, probs),
                }
            )
            print(f"  {n} trials, {place} done", file=sys.stderr, flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=float, default=0.02, help="grid step of the pass chances and of the candidate deltas")
    ap.add_argument("--trials", default=",".join(str(n) for n in Q_TRIALS), help="trials per arm, comma-separated")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    t0 = time.time()
    table = rows([int(n) for n in args.trials.split(",") if n], args.step)
    print(
        f"One case of pass/fail trials, exact (chance grid step {args.step:g}): per trials per arm and baseline placement, over "
        f"the true deltas {Q_DELTAS}: question (a)'s coverage and mean width, the least mean width any interval covering 93 % "
        "(95 %) at every pair of chances can have in these cells, and the cells where every such interval (93 %) covers more "
        "than 98.5 %; widths against the known-variance interval's."
    )
    head = [
        "trials/arm",
        "baselines",
        "coverage min",
        "max",
        "forced above 98.5 %",
        "width × known",
        "best valid 93 % × known",
        "best valid 95 % × known",
        "width × best 95 %",
    ]
    if args.markdown:
        print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for r in table:
        kn = r["known"]
        vals = [
            str(r["n"]),
            r["place"],
            f"{r['cov_min']:.1%}",
            f"{r['cov_max']:.1%}",
            f"{r['forced']} of {r['above']} ({r['cells']})",
            f"{r['width'] / kn:.2f}",
            f"{r['best93'] / kn:.2f}",
            f"{r['best95'] / kn:.2f}",
            f"{r['width'] / r['best95']:.2f}",
        ]
        print("| " + " | ".join(vals) + " |" if args.markdown else "  ".join(f"{v:>12}" for v in vals))
    print(f"\n{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
