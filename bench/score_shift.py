"""Question (a) on pass/fail scores: where the stratified score interval holds each case —
side by side, exactly and by simulation (issue 32).

The stratified score interval (``stats/score.py``) evaluates every case's variance at
maximum-likelihood pass chances held at a candidate delta. Holding every case at the one
common candidate Δ (the textbook form, method ``0``) overstates the variance when the
cases' own deltas differ a lot (a skill that gains 4δ on a quarter of the tasks, 0 on the
rest). Methods compared on the same outcomes / simulated items:

- ``0``, ``1``, any λ: case j held at ``Δ + λ(d̂_j − D)`` (clipped to [−1, 1]); 0 the common
  Δ (the interval before issue 32's round 4), 1 each case at its own shifted delta;
- ``js`` (the interval now, ``score_interval``'s default): λ per item the James–Stein share
  of the case deltas' spread that is not noise (``stats.score.case_share``);
- ``profile``: the cases' joint restricted maximum likelihood under the one constraint
  mean(p_w,j − p_wo,j) = Δ (a Lagrange multiplier tilts every arm; for one case it is
  Farrington–Manning's pair), kept here only as the record of a variant not taken.

Parts:

- **exact**: 2 cases (pass chances 0, 0.05, …, 1 in all four arms; 1–15 trials) and 3 cases (0, 0.1, …,
  1 in all six; 1–5 trials) with n trials per case and arm, every binomial outcome enumerated; per n the
  lowest coverage over the grid of chances (and where), and the mean width at chances 0.1–0.9;
- **sim**: the binary rows of ``bench/coverage.py --parts questions`` (its simulator, true
  deltas and baselines; 2 cases added), question (a) only, every method on the same simulated
  items (seeded per cell, not the same items as coverage.py); per task effects × cases ×
  trials the lowest coverage over deltas × baselines (and where), the mean, and the width
  against the known-variance interval (delta ± 1.96 SD, SD measured in the cell).

    .venv/bin/python bench/score_shift.py [--parts exact,sim] [--methods 0,1,js,profile]
        [--q-runs 1000] [--cases 2,3,5,10] [--modes none,symmetric,skewed] [--markdown]
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
from scipy.stats import binom, norm

from agentsproof.stats.score import ALPHA_SHARE, BISECTIONS, EDGE_FLOOR, score_interval


def _tilted_rate(x: np.ndarray, n: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """The chance p in [0, 1] maximising x·log p + (n − x)·log(1 − p) + μ·p: the root in [0, 1]
    of μp² + (n − μ)p − x (one always lies there: −x at 0, n − x at 1)."""
    b = n - mu
    root = np.sqrt(np.maximum(0.0, b * b + 4.0 * mu * x))
    safe_lo = np.where(b + root > 0, b + root, 1.0)
    safe_mu = np.where(np.abs(mu) > 0, mu, 1.0)
    p = np.where(b >= 0, np.where(b + root > 0, 2.0 * x / safe_lo, 0.0), (root - b) / (2.0 * safe_mu))
    return np.clip(p, 0.0, 1.0)


def profile_score_interval(
    passes_w: np.ndarray,
    n_w: np.ndarray,
    passes_wo: np.ndarray,
    n_wo: np.ndarray,
    level: float = 0.95,
    edge_floor: float = EDGE_FLOOR,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, delta) like :func:`score_interval`, but the variance at each candidate Δ is
    taken at the maximum-likelihood pass chances of all the cases *jointly* under the one
    constraint mean_j(p_w,j − p_wo,j) = Δ (a Lagrange multiplier μ tilts every arm, so each
    case moves from its own rates by what its counts allow), not with every case at Δ."""
    n_w = np.asarray(n_w, float)
    n_wo = np.asarray(n_wo, float)
    x_w = np.asarray(passes_w, float)
    x_wo = np.asarray(passes_wo, float)
    p_w, p_wo = x_w / n_w, x_wo / n_wo
    delta = (p_w - p_wo).mean(axis=-1)
    z2 = float(norm.ppf(1.0 - ALPHA_SHARE * (1.0 - level) / 2.0)) ** 2
    total = n_w + n_wo
    factor = np.where(total > 1, total / np.maximum(total - 1.0, 1.0), 2.0)
    e_w, e_wo = edge_floor / (n_w + 1.0), edge_floor / (n_wo + 1.0)
    c = p_w.shape[-1]
    scale = total.max(axis=-1)

    def at(q_w: np.ndarray, q_wo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cand = (q_w - q_wo).mean(axis=-1)
        q_w, q_wo = np.clip(q_w, e_w, 1.0 - e_w), np.clip(q_wo, e_wo, 1.0 - e_wo)
        v = ((q_w * (1.0 - q_w) / n_w + q_wo * (1.0 - q_wo) / n_wo) * factor).sum(axis=-1) / (c * c)
        ok: np.ndarray = (delta - cand) ** 2 <= z2 * v + 1e-15
        return ok, cand

    ends = []
    for sign in (-1.0, 1.0):
        ok_edge, _ = at(np.full(p_w.shape, (1.0 + sign) / 2.0), np.full(p_w.shape, (1.0 - sign) / 2.0))
        near, far = np.zeros(delta.shape), np.ones(delta.shape)  # s: μ = sign · scale · s/(1 − s)
        best = delta.copy()
        for _ in range(BISECTIONS + 12):
            mid = (near + far) / 2.0
            mu = (sign * scale * mid / (1.0 - mid))[..., None]
            ok, cand = at(_tilted_rate(x_w, n_w, mu), _tilted_rate(x_wo, n_wo, -mu))
            best = np.where(ok, cand, best)
            near = np.where(ok, mid, near)
            far = np.where(ok, far, mid)
        ends.append(np.where(ok_edge, sign, best))
    lo = np.clip(np.minimum(ends[0], delta), -1.0, 1.0)
    hi = np.clip(np.maximum(ends[1], delta), -1.0, 1.0)
    return lo, hi, delta


def interval(method: str, xw: np.ndarray, nw: np.ndarray, xo: np.ndarray, no: np.ndarray, level: float = 0.95):
    """(low, high, delta) by ``method``: a shift λ ("0", "1", "0.5") or "profile" (the variance at
    the cases' joint maximum-likelihood chances under the mean constraint)."""
    if method == "profile":
        return profile_score_interval(xw, nw, xo, no, level)
    if method == "js":
        return score_interval(xw, nw, xo, no, level)  # the default: λ from case_share
    return score_interval(xw, nw, xo, no, level, shift=float(method))


EXACT_N = {2: (1, 2, 3, 4, 5, 6, 8, 10, 15), 3: (1, 2, 3, 4, 5)}
"""Trials per case and arm enumerated exactly, per case count."""
EXACT_STEP = {2: 0.05, 3: 0.1}


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
    """Print the exact table: per case count and trials, each method's lowest coverage, where, and width."""
    print("\nExact coverage, question (a) on pass/fail scores (lowest over every tuple of pass chances; width: mean over chances 0.1–0.9)")
    head = ["cases", "trials/case/arm"] + [f"{col}" for s in shifts for col in (f"{s}: min", "at chances", "width")]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head) if md else "  ".join(head))
    for c, ns in EXACT_N.items():
        for n in ns:
            cells = [str(c), str(n)]
            for s in shifts:
                cov, at, width = exact_coverage(c, n, s)
                cells.append(f"{cov:.1%} | {' '.join(f'{v:g}' for v in at)} | {width:.3f}")
            print("| " + " | ".join(cells) + " |" if md else "  ".join(cells), flush=True)


def run_sim(args: argparse.Namespace, shifts: list[str]) -> None:
    """Print the simulated table: per task effects × cases × trials, each method on the same items."""
    # the questions grid of bench/coverage.py (its simulator, deltas and baselines; bench/ on sys.path as a script)
    from coverage import LEVEL, MODES, PLACES, Q_DELTAS, Q_TRIALS, simulate_tasks

    print(
        f"\nSimulated, question (a) on pass/fail scores, {args.q_runs} items per cell; target these cases' own mean delta; "
        f"width × known = mean width / that of delta ± 1.96 SD (SD measured in the cell); min: the lowest cell over deltas × baselines, and where"
    )
    head = ["task effects", "cases", "trials"] + [f"{col}" for s in shifts for col in (f"{s}: min (at δ, baseline)", "mean", "× known")]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head) if args.markdown else "  ".join(head))
    for mode in args.modes:
        m = MODES.index(mode)  # the seed does not depend on which modes run
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
    """Parse the switches and run the chosen parts."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="exact,sim", help="comma-separated: exact, sim")
    ap.add_argument(
        "--methods",
        default="0,1,js,profile",
        help="comma-separated: a shift λ (0 the common Δ; 1 each case at its own shifted delta), js (the default now) or profile",
    )
    ap.add_argument("--q-runs", type=int, default=1000, help="simulated items per cell")
    ap.add_argument("--cases", default="2,3,5,10", help="sim: comma-separated case counts")
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
