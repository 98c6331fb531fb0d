"""Question (a) on pass/fail scores: each case held at one common candidate Δ, or at its own
shifted delta — side by side, exactly and by simulation (issue 32).

The stratified score interval (``stats/score.py``) evaluates every case's variance at the
maximum-likelihood pass chances whose difference is the candidate Δ. When the cases' own
deltas differ a lot (a skill that gains 4δ on a quarter of the tasks, 0 on the rest) that
overstates the variance. The variant holds case j at ``Δ + λ(d̂_j − D)`` (``shift`` λ;
λ = 0 is the common Δ, λ = 1 every case at its own MLE when Δ = D; clipped to [−1, 1]).

- **exact**: 2 cases (pass chances 0, 0.1, …, 1 in all four arms) and 3 cases (0, 0.2, …, 1
  in all six) with n trials per case and arm, every binomial outcome enumerated; per n the
  lowest coverage over the grid of chances, and the mean width at chances 0.1–0.9;
- **sim**: the binary rows of ``bench/coverage.py --parts questions`` (same simulator, cells
  and seeds), question (a) only, every shift on the same simulated items; per cases × task
  effects × trials the lowest and mean coverage over deltas × baselines and the width
  against the known-variance interval (seeded per cell, not the same items as coverage.py).

    .venv/bin/python bench/score_shift.py [--parts exact,sim] [--shifts 0,1] [--q-runs 200]
        [--cases 2,3,5,10] [--modes none,symmetric,skewed] [--markdown]
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
from scipy.stats import binom

from agentsproof.stats.score import profile_score_interval, score_interval



def interval(method: str, xw: np.ndarray, nw: np.ndarray, xo: np.ndarray, no: np.ndarray, level: float = 0.95):
    """(low, high, delta) by ``method``: a shift λ ("0", "1", "0.5") or "profile" (the variance at
    the cases' joint maximum-likelihood chances under the mean constraint)."""
    if method == "profile":
        return profile_score_interval(xw, nw, xo, no, level)
    if method == "js":
        return score_interval(xw, nw, xo, no, level, shift=js_shift(xw, nw, xo, no))
    return score_interval(xw, nw, xo, no, level, shift=float(method))


def js_shift(xw: np.ndarray, nw: np.ndarray, xo: np.ndarray, no: np.ndarray) -> np.ndarray:
    """Per item, the share of the cases' spread that is not noise: 1 − (mean sampling variance of
    a case delta) / (variance of the case deltas), in [0, 1] (James–Stein's shrinkage factor;
    rates smoothed by half a pass and half a fail so an arm of equal trials has some noise)."""
    nw, no = np.asarray(nw, float), np.asarray(no, float)
    d = xw / nw - xo / no
    c = d.shape[-1]
    if c < 2:
        return np.zeros(d.shape[:-1])
    sw, so = (xw + 0.5) / (nw + 1), (xo + 0.5) / (no + 1)
    noise = (sw * (1 - sw) / nw + so * (1 - so) / no).mean(axis=-1)
    spread = d.var(axis=-1, ddof=1)
    out: np.ndarray = np.clip(1.0 - noise / np.maximum(spread, 1e-12), 0.0, 1.0)
    return out


EXACT_N = {2: (1, 2, 3, 5, 8), 3: (1, 2, 3)}
"""Trials per case and arm enumerated exactly, per case count (3 cases × 5 trials: 6⁶ outcomes × 6⁶ chance tuples, too slow)."""
EXACT_STEP = {2: 0.1, 3: 0.2}


def _expect(values: np.ndarray, pmf: np.ndarray, arms: int) -> np.ndarray:
    """E[values] under every tuple of pass chances: ``values`` over the outcomes (one axis of
    n + 1 counts per arm, flattened), ``pmf`` (chances, n + 1); result (chances,) * arms."""
    t = values.reshape((pmf.shape[1],) * arms)
    for _ in range(arms):
        t = np.tensordot(t, pmf.T, axes=([0], [0]))  # the leading count axis out, a chance axis in at the end
    return t


def exact_coverage(c: int, n: int, method: str, level: float = 0.95) -> tuple[float, tuple[float, ...], float]:
    """(lowest coverage, its pass chances (w1, wo1, w2, wo2, …), mean width over chances 0.1–0.9)
    of ``c`` cases × ``n`` trials per arm, exact over every outcome."""
    xs = np.arange(n + 1)
    outcomes = np.array(list(itertools.product(xs, repeat=2 * c)))  # (O, 2c): w1, wo1, w2, wo2, … (C order)
    xw, xo = outcomes[:, 0::2], outcomes[:, 1::2]
    nn = np.full(xw.shape, n)
    lo, hi, _ = interval(method, xw, nn, xo, nn, level)
    chances = np.round(np.arange(0, 1 + 1e-9, EXACT_STEP[c]), 6)
    pmf = binom.pmf(xs[None, :], n, chances[:, None])
    grid = np.stack(np.meshgrid(*([chances] * (2 * c)), indexing="ij"), axis=-1)  # (k,)*2c + (2c,)
    truth = np.round((grid[..., 0::2] - grid[..., 1::2]).mean(axis=-1), 9)
    cov = np.full(truth.shape, np.nan)
    for t in np.unique(truth):
        held = ((lo <= t + 1e-9) & (t <= hi + 1e-9)).astype(float)
        at = truth == t
        cov[at] = _expect(held, pmf, 2 * c)[at]
    inner = np.all((grid >= 0.1 - 1e-9) & (grid <= 0.9 + 1e-9), axis=-1)
    width = float(_expect(hi - lo, pmf, 2 * c)[inner].mean())
    worst = np.unravel_index(int(np.argmin(cov)), cov.shape)
    return float(cov[worst]), tuple(float(v) for v in grid[worst]), width


def run_exact(shifts: list[str], md: bool) -> None:
    print("\nExact coverage, question (a) on pass/fail scores (lowest over every tuple of pass chances; "
          "width: mean over chances 0.1–0.9)")
    head = ["cases", "trials/case/arm"] + [f"{s}: min | at chances | width" for s in shifts]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head) if md else "  ".join(head))
    for c, ns in EXACT_N.items():
        for n in ns:
            cells = [str(c), str(n)]
            for s in shifts:
                cov, at, width = exact_coverage(c, n, s)
                cells.append(f"{cov:.1%} | {' '.join(f'{v:g}' for v in at)} | {width:.3f}")
            print("| " + " | ".join(cells) + " |" if md else "  ".join(cells), flush=True)


def run_sim(args: argparse.Namespace, shifts: list[str]) -> None:
    # the questions grid of bench/coverage.py (its simulator, deltas and baselines; bench/ on sys.path as a script)
    from coverage import LEVEL, PLACES, Q_DELTAS, Q_TRIALS, simulate_tasks

    print(f"\nSimulated, question (a) on pass/fail scores, {args.q_runs} items per cell; target these cases' own mean delta; "
          f"width × known = mean width / that of delta ± 1.96 SD (SD measured in the cell), range over the trial counts")
    head = ["task effects", "cases", "trials"] + [f"{s}: min (at δ, baseline) | mean | × known" for s in shifts]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head) if args.markdown else "  ".join(head))
    for m, mode in enumerate(args.modes):
        for c in args.cases:
            for n in Q_TRIALS:
                recs = {s: {"cov": [], "w": [], "kw": [], "at": []} for s in shifts}
                for i, delta in enumerate(Q_DELTAS):
                    for k, place in enumerate(PLACES):
                        if mode == "none" and abs(delta) > 0.999 and place != "mid":
                            continue
                        rng = np.random.default_rng([args.seed, m, c, n, i, k])  # every shift on the same items
                        sim = simulate_tasks(rng, args.q_runs, c, n, delta, "binary", mode, place)
                        if sim is None:
                            continue
                        xw, xwo, dj, _ = sim
                        target = dj.mean(-1)
                        nn = np.full(target.shape + (c,), float(n))
                        pw, po = xw.sum(-1), xwo.sum(-1)
                        for s in shifts:
                            lo, hi, est = interval(s, pw, nn, po, nn, LEVEL)
                            sd = float(np.std(est - target))
                            recs[s]["at"].append(f"{delta:+g} {place}")
                            recs[s]["cov"].append(float(np.mean((lo <= target + 1e-9) & (target <= hi + 1e-9))))
                            recs[s]["w"].append(float(np.mean(hi - lo)))
                            recs[s]["kw"].append(float(np.mean(np.clip(est + 1.959964 * sd, -1, 1) - np.clip(est - 1.959964 * sd, -1, 1))))
                if not recs[shifts[0]]["cov"]:
                    continue
                cells = [mode, str(c), str(n)]
                for s in shifts:
                    r = recs[s]
                    worst = int(np.argmin(r["cov"]))
                    cells.append(f"{r['cov'][worst]:.1%} ({r['at'][worst]}) | {np.mean(r['cov']):.1%} | {np.mean(r['w']) / max(1e-9, np.mean(r['kw'])):.2f}")
                print("| " + " | ".join(cells) + " |" if args.markdown else "  ".join(cells), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="exact,sim", help="comma-separated: exact, sim")
    ap.add_argument("--methods", default="0,1,profile",
                    help="comma-separated: a shift λ (0 the common Δ, today's; 1 each case at its own shifted delta) or profile")
    ap.add_argument("--q-runs", type=int, default=200, help="simulated items per cell")
    ap.add_argument("--cases", default="2,3,5,10", help="sim: comma-separated case counts ")
    ap.add_argument("--modes", default="none,symmetric,skewed", help="sim: task effects")
    ap.add_argument("--seed", type=int, default=23)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    shifts = args.methods.split(",")
    args.cases = [int(c) for c in args.cases.split(",")]
    args.modes = args.modes.split(",")
    parts = set(args.parts.split(","))
    t0 = time.time()
    if "exact" in parts:
        run_exact(shifts, args.markdown)
    if "sim" in parts:
        run_sim(args, shifts)
    print(f"\n{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
