"""Are ``agentsproof ablate``'s verdicts honest? Simulated skills with parts of known effect.

Each simulated skill has six parts with true effects of removal (mean over its cases):
two that do nothing (0), two that cost twice the margin (−2m), one that costs half the
margin (−m/2) and one that matters (−0.30). Per cell (cases × trials per case, pass/fail
or graded scores) and per skill, case ``j`` has a base pass chance ``p_j`` drawn from
Beta(4, 2); the whole skill's trials on case ``j`` succeed with ``p_j``, the trials without
part ``k`` with ``p_j + effect_k`` (clipped to [0.02, 0.98]; graded scores: the mean of
4 such draws). The very functions ``ablate`` calls (:mod:`agentsproof.stats.ablation`)
give each part's interval and verdict, adjusted across the six parts (Holm).

Measured per cell:

- ``cover``: the share of parts whose printed 95 % interval holds the part's true effect
  on these cases (question (a)) or its mean effect over tasks like these (question (b));
- ``false removable``: of the parts costing −2m, the share called removable (the claim
  "costs less than m" is false for them; the bound is 5 %);
- ``false needed``: of the parts doing nothing, the share called needed (bound 5 %);
- ``found``: of the −0.30 parts, the share called needed (power, no bound).

    .venv/bin/python bench/ablation.py [--items 300] [--margin 0.05] [--markdown]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentsproof.stats.ablation import decide, part_effect  # noqa: E402

CELLS = [(1, 20), (1, 60), (3, 10), (3, 30), (5, 6), (5, 20), (10, 4), (10, 12)]
"""(cases, trials per case and arm)."""


def effects(margin: float) -> list[float]:
    """The six parts' true effects of removal."""
    return [0.0, 0.0, -2 * margin, -2 * margin, -margin / 2, -0.30]


def simulate(rng: np.random.Generator, cases: int, trials: int, margin: float, graded: bool) -> list[tuple[float, float, object]]:
    """One skill: per part (true effect on these cases, true mean effect, the part's verdict record)."""
    base = rng.beta(4, 2, size=cases)
    draws = 4 if graded else 1

    def arm(p: np.ndarray) -> list[list[float]]:
        out = []
        for pj in p:
            x = rng.random((trials, draws)) < pj
            out.append(list(x.mean(axis=1).astype(float)))
        return out

    whole = arm(base)
    rows = []
    for k, eff in enumerate(effects(margin)):
        p = np.clip(base + eff, 0.02, 0.98)
        on_these = float(np.mean(p - base))
        without = arm(p)
        rows.append((on_these, eff, part_effect(f"p{k}", list(zip(without, whole, strict=True)), 100, margin)))
    decide([r[2] for r in rows])  # type: ignore[misc]
    return rows


def population_effects(margin: float) -> list[float]:
    """Each part's mean effect over tasks like these (the base chance drawn from Beta(4, 2), clipping included)."""
    p = np.random.default_rng(0).beta(4, 2, size=400_000)
    return [float(np.mean(np.clip(p + e, 0.02, 0.98) - p)) for e in effects(margin)]


def run_cell(cases: int, trials: int, items: int, margin: float, graded: bool, seed: int) -> dict[str, float]:
    """One cell's four shares over ``items`` simulated skills."""
    rng = np.random.default_rng(seed)
    population = population_effects(margin)
    cover = total = fr = frn = fn = fnn = found = foundn = 0
    for _ in range(items):
        for k, (on_these, _mean_eff, rec) in enumerate(simulate(rng, cases, trials, margin, graded)):
            if rec.interval is None:  # type: ignore[attr-defined]
                continue
            truth = on_these if rec.question == "cases" else population[k]  # type: ignore[attr-defined]
            lo, hi = rec.interval  # type: ignore[attr-defined]
            cover += lo - 1e-9 <= truth <= hi + 1e-9
            total += 1
            if k in (2, 3):
                frn += 1
                fr += rec.verdict == "removable"  # type: ignore[attr-defined]
            if k in (0, 1):
                fnn += 1
                fn += rec.verdict == "needed"  # type: ignore[attr-defined]
            if k == 5:
                foundn += 1
                found += rec.verdict == "needed"  # type: ignore[attr-defined]
    return {"cover": cover / total, "false_removable": fr / frn, "false_needed": fn / fnn, "found": found / foundn}


def main() -> None:
    """Every cell, pass/fail then graded scores; a line each, or one Markdown table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=300)
    ap.add_argument("--margin", type=float, default=0.05)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows = []
    for graded in (False, True):
        for i, (c, n) in enumerate(CELLS):
            r = run_cell(c, n, args.items, args.margin, graded, seed=1000 + i + (100 if graded else 0))
            rows.append((("graded" if graded else "pass/fail"), c, n, r))
            if not args.markdown:
                print(f"{rows[-1][0]:9} cases {c:2} trials {n:3}: cover {r['cover']:.3f}  false removable {r['false_removable']:.3f}  "
                      f"false needed {r['false_needed']:.3f}  found {r['found']:.3f}", flush=True)
    if args.markdown:
        print("| scores | cases | trials per case and arm | cover (95 %) | false removable (≤ 5 %) | false needed (≤ 5 %) | −0.30 found |\n|---|---:|---:|---:|---:|---:|---:|")
        for kind, c, n, r in rows:
            print(f"| {kind} | {c} | {n} | {r['cover']:.1%} | {r['false_removable']:.1%} | {r['false_needed']:.1%} | {r['found']:.1%} |")
    print(f"{args.items} skills of 6 parts per cell, margin {args.margin}, {time.perf_counter() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
