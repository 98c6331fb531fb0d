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

``--adaptive``: the same skills run as ``ablate --adaptive`` runs them
(:mod:`agentsproof.stats.ablation_looks`): the trials of an arm spread round robin over the
cases up to the cap (cases × trials per case), looked at after each of the delta's planned
looks; a part's arm stops once its verdict is settled (needed, removable, unclear for good),
the whole skill's while any part's runs. Measured as above (the printed interval is at level
1 − alpha/looks at each part's stop), plus ``saved``: the share of the fixed arms' trials
(cap × 8 arms) not run.

    .venv/bin/python bench/ablation.py [--items 300] [--margin 0.05] [--adaptive] [--markdown]
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


def simulate_adaptive(rng: np.random.Generator, cases: int, trials: int, margin: float, graded: bool) -> tuple[list[tuple[float, object]], int, int]:
    """One skill run adaptively: per part (true effect on these cases, its verdict record); the
    trials run and the trials of fixed arms."""
    from agentsproof.stats.ablation import PartEffect, one_sided_p, usable
    from agentsproof.stats.ablation_looks import sequential_p, settled
    from agentsproof.stats.adaptive import planned_looks
    from agentsproof.stats.cases import delta_interval, mean_case_delta
    from agentsproof.stats.wald import default_question

    cap = cases * trials
    looks = planned_looks(cap)
    k_looks = len(looks)
    base = rng.beta(4, 2, size=cases)
    case_of = np.arange(cap) % cases
    draws = 4 if graded else 1

    def arm(p: np.ndarray) -> np.ndarray:
        return (rng.random((cap, draws)) < p[case_of][:, None]).mean(axis=1)

    whole = arm(base)
    probs = [np.clip(base + eff, 0.02, 0.98) for eff in effects(margin)]
    arms = [arm(p) for p in probs]

    def cases_at(k: int, n: int) -> list[tuple[list[float], list[float]]]:
        c = case_of[:n]
        return [(list(arms[k][:n][c == j]), list(whole[:n][c == j])) for j in range(cases)]

    p_needed: list[list[float]] = [[] for _ in arms]
    p_removable: list[list[float]] = [[] for _ in arms]
    ran = [0] * len(arms)
    open_parts = set(range(len(arms)))
    recs: list[PartEffect] = []
    for n in looks:
        for k in open_parts:
            got = usable(cases_at(k, n))
            q = default_question(len(got))
            p_needed[k].append(one_sided_p(got, 0.0, "upper", q))
            p_removable[k].append(one_sided_p(got, -margin, "lower", q))
            ran[k] = n
        recs = [
            PartEffect(f"p{k}", None, None, "", 0, p_needed=sequential_p(p_needed[k], k_looks), p_removable=sequential_p(p_removable[k], k_looks))
            for k in range(len(arms))
        ]
        decide(recs)
        if n == cap:
            break
        for k in sorted(open_parts):
            if settled(recs[k], cases_at(k, n), n, cap, k_looks, margin) is not None:
                open_parts.discard(k)
        if not open_parts:
            break
    for k, rec in enumerate(recs):
        got = usable(cases_at(k, ran[k]))
        rec.question = default_question(len(got))
        rec.effect, rec.interval = mean_case_delta(got), delta_interval(got, 1 - 0.05 / k_looks, rec.question)
    rows = [(float(np.mean(p - base)), rec) for p, rec in zip(probs, recs, strict=True)]
    return rows, 2 * max(ran) + sum(ran), cap * (2 + len(arms))


def run_cell_adaptive(cases: int, trials: int, items: int, margin: float, graded: bool, seed: int) -> dict[str, float]:
    """One cell's shares over ``items`` skills run with ``--adaptive``, and the trials saved."""
    rng = np.random.default_rng(seed)
    population = population_effects(margin)
    cover = total = fr = frn = fn = fnn = found = foundn = 0
    ran = fixed = 0
    for _ in range(items):
        rows, n, f = simulate_adaptive(rng, cases, trials, margin, graded)
        ran, fixed = ran + n, fixed + f
        for k, (on_these, rec) in enumerate(rows):
            if rec.interval is None:  # type: ignore[attr-defined]
                continue
            truth = on_these if rec.question == "cases" else population[k]  # type: ignore[attr-defined]
            lo, hi = rec.interval  # type: ignore[attr-defined]
            cover += lo - 1e-9 <= truth <= hi + 1e-9
            total += 1
            verdict = rec.verdict  # type: ignore[attr-defined]
            frn, fr = frn + (k in (2, 3)), fr + (k in (2, 3) and verdict == "removable")
            fnn, fn = fnn + (k in (0, 1)), fn + (k in (0, 1) and verdict == "needed")
            foundn, found = foundn + (k == 5), found + (k == 5 and verdict == "needed")
    return {"cover": cover / total, "false_removable": fr / frn, "false_needed": fn / fnn, "found": found / foundn, "saved": 1 - ran / fixed}


def main() -> None:
    """Every cell, pass/fail then graded scores; a line each, or one Markdown table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=300)
    ap.add_argument("--margin", type=float, default=0.05)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--adaptive", action="store_true", help="run the arms as ablate --adaptive does; adds the trials saved")
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows = []
    for graded in (False, True):
        for i, (c, n) in enumerate(CELLS):
            cell = run_cell_adaptive if args.adaptive else run_cell
            r = cell(c, n, args.items, args.margin, graded, seed=1000 + i + (100 if graded else 0))
            rows.append((("graded" if graded else "pass/fail"), c, n, r))
            if not args.markdown:
                saved = f"  saved {r['saved']:.3f}" if "saved" in r else ""
                print(f"{rows[-1][0]:9} cases {c:2} trials {n:3}: cover {r['cover']:.3f}  false removable {r['false_removable']:.3f}  "
                      f"false needed {r['false_needed']:.3f}  found {r['found']:.3f}{saved}", flush=True)
    if args.markdown:
        extra = (" trials saved |", "---:|") if args.adaptive else ("", "")
        print(f"| scores | cases | trials per case and arm | cover (95 %) | false removable (≤ 5 %) | false needed (≤ 5 %) | −0.30 found |{extra[0]}\n"
              f"|---|---:|---:|---:|---:|---:|---:|{extra[1]}")
        for kind, c, n, r in rows:
            saved = f" {r['saved']:.1%} |" if args.adaptive else ""
            print(f"| {kind} | {c} | {n} | {r['cover']:.1%} | {r['false_removable']:.1%} | {r['false_needed']:.1%} | {r['found']:.1%} |{saved}")
    mode = ", --adaptive" if args.adaptive else ""
    print(f"{args.items} skills of 6 parts per cell, margin {args.margin}{mode}, {time.perf_counter() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
