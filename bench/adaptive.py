"""Simulate ``--adaptive`` across a grid of true deltas: how often a settled statement is wrong, and the calls it takes.

Each simulated item runs the runner's loop with the real policy (``AdaptivePolicy``): ask
it, reveal that many more trials per arm, repeat. Trial ``i`` of both arms runs case
``i mod cases`` (the runner's round robin). Scores come from ``bench/coverage.py``'s
simulator (binary or graded, with or without case-to-case variation). A stop is a
**settled statement** when it is a grade or a futility label:

- a grade is wrong when it is not the grade of the true delta;
- "no meaningful effect: C or F" is wrong when the true delta is ≥ +0.15;
- "does no harm: C or better" is wrong when the true delta is < 0.

Prints per cell the share settled, the share settled wrong (of all items; the guarantee is
≤ alpha), the stop kinds, and the mean trial calls (both arms) to the decision, then the
worst cell and the mean calls on clear-cut (|true delta| ≥ 0.6) and no-effect (0) skills.

    .venv/bin/python bench/adaptive.py [--evals 400] [--cap 15] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from coverage import simulate  # noqa: E402

from agentsproof.model.results import compute_grade  # noqa: E402
from agentsproof.stats.adaptive import DEFAULT_CAP, MEANINGFUL, NO_EFFECT, NO_HARM, AdaptivePolicy  # noqa: E402

DELTAS = tuple(round(d, 2) for d in np.arange(-0.8, 0.81, 0.1))
CELLS = ((1, "binary", False), (1, "graded", False), (5, "binary", False), (5, "binary", True), (5, "graded", True))


def wrong(label: str, truth: float) -> bool:
    if label == NO_EFFECT:
        return truth >= MEANINGFUL - 1e-9
    if label == NO_HARM:
        return truth < -1e-9
    return label != compute_grade(truth)


def run_one(xw: np.ndarray, xwo: np.ndarray, cases: int, cap: int, policy: AdaptivePolicy) -> tuple[int, str | None]:
    """(trials per arm used, settled statement or None) for one item whose trials are revealed in order."""
    order = [(i % cases, i // cases) for i in range(cap)]
    done = 0
    before = len(policy.labels)
    while done < cap:
        per_case = None
        if cases > 1:
            per_case = [([float(xw[j, k]) for (jj, k) in order[:done] if jj == j],
                         [float(xwo[j, k]) for (jj, k) in order[:done] if jj == j]) for j in range(cases)]
        ws = [float(xw[j, k]) for j, k in order[:done]]
        wos = [float(xwo[j, k]) for j, k in order[:done]]
        more = max(0, min(policy(ws, wos, done, cap, per_case), cap - done))
        if more == 0:
            break
        done += more
    if len(policy.labels) > before:
        label = policy.labels[-1][1]
        return done, None if label.startswith("unsettled") else label
    return done, None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--evals", type=int, default=400, help="simulated items per cell")
    ap.add_argument("--cap", type=int, default=DEFAULT_CAP, help="trial cap per arm and item (the --adaptive default is 15)")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t0 = time.time()
    policy = AdaptivePolicy(alpha=args.alpha)
    print(f"{args.evals} simulated items per cell; cap {args.cap} trials per arm; alpha {args.alpha}; "
          f"looks at {policy.describe(args.cap)['looks']} trials per arm")
    print(f"{'cases':>5} {'scores':<7} {'var':<4} {'true':>5}  {'settled':>7} {'wrong':>6}  {'grade':>6} {'C or F':>7} "
          f"{'no harm':>7} {'cap':>5}  {'calls':>6}")
    worst = (0.0, "")
    clear_calls: list[float] = []
    null_calls: list[float] = []
    total_settled = total_wrong = 0
    cell = 0
    for cases, kind, varies in CELLS:
        per_case = -(-args.cap // cases)
        for delta in DELTAS:
            cell += 1
            rng = np.random.default_rng([args.seed, cell])
            xw, xwo, _ = simulate(rng, args.evals, cases, per_case, delta, kind, varies)
            kinds = {"grade": 0, NO_EFFECT: 0, NO_HARM: 0, "cap": 0}
            n_wrong = 0
            calls = []
            for r in range(args.evals):
                done, label = run_one(xw[r], xwo[r], cases, args.cap, policy)
                calls.append(2 * done)
                if label is None:
                    kinds["cap"] += 1
                    continue
                kinds[label if label in (NO_EFFECT, NO_HARM) else "grade"] += 1
                n_wrong += wrong(label, delta)
            settled = args.evals - kinds["cap"]
            total_settled += settled
            total_wrong += n_wrong
            share_wrong = n_wrong / args.evals
            if share_wrong > worst[0]:
                worst = (share_wrong, f"{cases} cases, {kind}, variation {'yes' if varies else 'no'}, true {delta:+.1f}")
            mean_calls = float(np.mean(calls))
            if abs(delta) >= 0.6 - 1e-9:
                clear_calls.append(mean_calls)
            if abs(delta) < 1e-9:
                null_calls.append(mean_calls)
            e = args.evals
            print(f"{cases:>5} {kind:<7} {'yes' if varies else 'no':<4} {delta:>+5.1f}  {settled / e:>7.0%} {share_wrong:>6.1%}  "
                  f"{kinds['grade'] / e:>6.0%} {kinds[NO_EFFECT] / e:>7.0%} {kinds[NO_HARM] / e:>7.0%} {kinds['cap'] / e:>5.0%}  "
                  f"{mean_calls:>6.1f}")
    print(f"\nsettled statements wrong: {total_wrong} of {total_settled} settled "
          f"({total_wrong / max(1, total_settled):.2%}); worst cell {worst[0]:.1%} of its items ({worst[1] or 'none'}); "
          f"bound alpha = {args.alpha:.0%} per item")
    print(f"mean trial calls to a decision (both arms; fixed run = {2 * args.cap}): clear-cut skills (|delta| >= 0.6) "
          f"{np.mean(clear_calls):.1f}, no-effect skills (delta 0) {np.mean(null_calls):.1f}")
    print(f"{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
