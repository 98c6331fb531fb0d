"""Simulate ``--adaptive`` across a grid of true deltas: how often a settled statement is wrong, and the calls it takes.

Each simulated item runs the runner's loop with the real policy (``AdaptivePolicy``): ask
it, reveal that many more trials per arm, repeat. Trial ``i`` of both arms runs case
``i mod cases`` (the runner's round robin). Scores come from ``bench/coverage.py``'s
simulator (binary or graded, with or without case-to-case variation). A stop is a
**settled statement** when it is a grade or a futility label:

- a grade is wrong when it is not the grade of the true delta (of the question it is about:
  a grade settled on these cases only — a 5-case item whose tasks-like-these interval cannot
  settle — is judged against these cases' own mean delta);
- "no meaningful effect: C or F" is wrong when the true delta is ≥ +0.15;
- "does no harm: C or better" is wrong when the true delta is < 0.

Prints per cell the share settled, the share settled wrong (of all items; the guarantee is
≤ alpha), the stop kinds, the mean trial calls (both arms) to the decision, and the
**post-stop coverage**: how often the interval the report prints after the stop (the
stopping rule's own, at level 1 − alpha/K) holds the truth — over all items of the cell,
and at the look where each stopped (the lowest such share over looks with ≥ 20 stops is
``worst look``: conditional on the look, which no rule guarantees). Then, for every item,
the interval that would be printed had the run stopped at each planned look: ``each look``
is the lowest coverage over the looks (every item stopped at the same look), ``all looks``
the share whose interval held at every look at once — what Bonferroni promises (≥ 1 − alpha)
and what makes the printed interval valid after any stop. ``on cases``: the share of items
that stopped with a grade on these cases only (5 cases or more, tasks like these unsettled);
``(a) all``: the share whose question-(a) interval held these cases' own mean delta at every
look at once (what such a grade rests on). The truth is what the printed interval answers: the population delta
for question (b) (5 cases or more), the mean of these cases' own deltas for (a). Then the
worst cell and the mean calls on clear-cut (|true delta| ≥ 0.6) and no-effect (0) skills,
and the post-stop coverage over null items (0), clear-cut and near a band edge
(0.0, +0.15, +0.30), one case and several.

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
from agentsproof.stats.adaptive import (  # noqa: E402
    DEFAULT_CAP,
    NO_EFFECT,
    NO_HARM,
    UNREACHABLE,
    AdaptivePolicy,
    corrected_interval,
    planned_looks,
)

DELTAS = tuple(sorted({round(d, 2) for d in np.arange(-0.8, 0.81, 0.1)} | {0.15}))
CELLS = ((1, "binary", False), (1, "graded", False), (3, "binary", True), (5, "binary", False), (5, "binary", True),
         (5, "graded", True))
EDGES = (0.0, 0.15, 0.3)


def wrong(label: str, truth: float) -> bool:
    """Wrong against the truth's grade (two decimals, as the report reads it)."""
    if label == NO_EFFECT:
        return compute_grade(truth) in ("A", "B")
    if label == NO_HARM:
        return compute_grade(truth) == "F"
    return label != compute_grade(truth)


def every_look(xw: np.ndarray, xwo: np.ndarray, cases: int, cap: int, alpha: float, truth: float,
               question: str | None = None) -> list[bool]:
    """Whether the interval printed had the run stopped at each planned look holds the truth
    (the rule's interval at level 1 − alpha/K on the trials revealed by then; ``question``
    ``"cases"``: question (a)'s)."""
    looks = planned_looks(cap)
    order = [(i % cases, i // cases) for i in range(cap)]
    out = []
    for n in looks:
        per_case = None
        if cases > 1:
            per_case = [([float(xw[j, k]) for (jj, k) in order[:n] if jj == j],
                         [float(xwo[j, k]) for (jj, k) in order[:n] if jj == j]) for j in range(cases)]
        ci = corrected_interval([float(xw[j, k]) for j, k in order[:n]], [float(xwo[j, k]) for j, k in order[:n]],
                                len(looks), alpha, per_case, question)
        out.append(ci is not None and ci[0] - 1e-9 <= truth <= ci[1] + 1e-9)
    return out


def run_one(
    xw: np.ndarray, xwo: np.ndarray, cases: int, cap: int, policy: AdaptivePolicy
) -> tuple[int, str | None, tuple[float, float] | None, str]:
    """(trials per arm used, settled statement or None, the interval printed after the stop,
    the question it answers)
    for one item whose trials are revealed in order, as the runner does: ask the policy,
    run that many more, repeat; then the report's label (``stop_label``: the statement at
    the stop, at the cap too) and interval."""
    order = [(i % cases, i // cases) for i in range(cap)]

    def revealed(done: int) -> tuple[list[float], list[float], list | None]:
        per_case = None
        if cases > 1:
            per_case = [([float(xw[j, k]) for (jj, k) in order[:done] if jj == j],
                         [float(xwo[j, k]) for (jj, k) in order[:done] if jj == j]) for j in range(cases)]
        return [float(xw[j, k]) for j, k in order[:done]], [float(xwo[j, k]) for j, k in order[:done]], per_case

    done = 0
    while done < cap:
        more = max(0, min(policy(*revealed(done)[:2], done, cap, revealed(done)[2]), cap - done))
        if more == 0:
            break
        done += more
    ws, wos, per_case = revealed(done)
    stop = policy.stop_label(ws, wos, done, cap, per_case)
    ci = stop["interval"]
    label = None if stop["kind"] == "cap" else stop["label"]
    if stop["kind"] == "grade":  # "98.8 % interval within A[ on these 5 cases; …]": the grade
        label = stop["label"].split(" within ", 1)[1][0]
    if label == UNREACHABLE:
        label = "futile"  # stopped early without a statement about the delta: never wrong
    return done, label, (tuple(ci) if ci is not None else None), stop.get("question", "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--evals", type=int, default=400, help="simulated items per cell")
    ap.add_argument("--cap", type=int, default=DEFAULT_CAP, help="trial cap per arm and item (the --adaptive default is 15)")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cells", default="", help="comma-separated indices into the cells (0-5) to run only those, e.g. to "
                    "split the grid over processes; each cell keeps its own seeds")
    args = ap.parse_args()
    only = {int(k) for k in args.cells.split(",") if k}
    t0 = time.time()
    policy = AdaptivePolicy(alpha=args.alpha)
    looks = planned_looks(args.cap)
    print(f"{args.evals} simulated items per cell; cap {args.cap} trials per arm; alpha {args.alpha}; "
          f"looks at {looks} trials per arm; intervals at level 1 - {args.alpha}/{len(looks)}")
    print(f"{'cases':>5} {'scores':<7} {'var':<4} {'true':>5}  {'settled':>7} {'wrong':>6}  {'grade':>6} {'C or F':>7} "
          f"{'no harm':>7} {'futile':>6} {'cap':>5}  {'calls':>6}  {'covers':>6} {'worst look':>14}  {'each look':>9} {'all looks':>9}  {'on cases':>8} {'(a) all':>8}")
    worst = (0.0, "")
    clear_calls: list[float] = []
    null_calls: list[float] = []
    clear_settled: list[float] = []
    null_futile: list[float] = []
    total_settled = total_wrong = 0
    groups: dict[str, list[int]] = {}  # post-stop coverage: group -> [held, items]
    by_look: dict[int, list[int]] = {}
    lowest = (1.0, "")
    lowest_sim = (1.0, "")
    lowest_fixed = (1.0, "")
    lowest_a = (1.0, "")
    cell = 0
    for index, (cases, kind, varies) in enumerate(CELLS):
        per_case = -(-args.cap // cases)
        if only and index not in only:
            cell += len(DELTAS)
            continue
        for delta in DELTAS:
            cell += 1
            rng = np.random.default_rng([args.seed, cell])
            xw, xwo, dj = simulate(rng, args.evals, cases, per_case, delta, kind, varies)
            kinds = {"grade": 0, NO_EFFECT: 0, NO_HARM: 0, "futile": 0, "cap": 0}
            n_wrong = 0
            held = 0
            calls = []
            looks_here: dict[int, list[int]] = {}
            fixed = np.zeros(len(planned_looks(args.cap)))
            simultaneous = 0
            simultaneous_a = on_cases = 0
            for r in range(args.evals):
                # what the printed interval answers: (b) the population delta, (a) these cases' own
                truth = delta if cases >= 5 else float(dj[r].mean())
                done, label, ci, question = run_one(xw[r], xwo[r], cases, args.cap, policy)
                if question == "cases":  # a grade settled on these cases only: (a)'s truth, (a)'s interval
                    truth = float(dj[r].mean())
                    on_cases += 1
                at_looks = every_look(xw[r], xwo[r], cases, args.cap, args.alpha, truth if cases < 5 else delta)
                if cases >= 5:  # (a)'s intervals, what a grade on these cases rests on
                    simultaneous_a += all(every_look(xw[r], xwo[r], cases, args.cap, args.alpha, float(dj[r].mean()), "cases"))
                fixed += at_looks
                simultaneous += all(at_looks)
                calls.append(2 * done)
                ok = ci is not None and ci[0] - 1e-9 <= truth <= ci[1] + 1e-9
                held += ok
                for table in (looks_here, by_look):
                    table.setdefault(done, [0, 0])
                    table[done][0] += ok
                    table[done][1] += 1
                if label is None or label == "futile":
                    kinds[label or "cap"] += 1
                    continue
                kinds[label if label in (NO_EFFECT, NO_HARM) else "grade"] += 1
                n_wrong += wrong(label, truth)
            settled = args.evals - kinds["cap"] - kinds["futile"]
            total_settled += settled
            total_wrong += n_wrong
            share_wrong = n_wrong / args.evals
            name = f"{cases} case{'s' if cases > 1 else ''}, {kind}, variation {'yes' if varies else 'no'}, true {delta:+.2f}"
            if share_wrong > worst[0]:
                worst = (share_wrong, name)
            mean_calls = float(np.mean(calls))
            if abs(delta) >= 0.6 - 1e-9:
                clear_calls.append(mean_calls)
                clear_settled.append(settled / args.evals)
            if abs(delta) < 1e-9:
                null_calls.append(mean_calls)
                null_futile.append((kinds[NO_EFFECT] + kinds["futile"]) / args.evals)
            where = "one case" if cases == 1 else "several cases"
            kind_of = ("null" if abs(delta) < 1e-9 else "clear-cut" if abs(delta) >= 0.6 - 1e-9
                       else "band edge" if any(abs(delta - e) < 1e-9 for e in EDGES) else "other")
            for key in (f"{kind_of}, {where}", f"every cell, {where}"):
                groups.setdefault(key, [0, 0])
                groups[key][0] += held
                groups[key][1] += args.evals
            crowded = [(h / n, look) for look, (h, n) in looks_here.items() if n >= 20]
            low_look = min(crowded) if crowded else None
            if held / args.evals < lowest[0]:
                lowest = (held / args.evals, name)
            if simultaneous / args.evals < lowest_sim[0]:
                lowest_sim = (simultaneous / args.evals, name)
            if cases >= 5 and simultaneous_a / args.evals < lowest_a[0]:
                lowest_a = (simultaneous_a / args.evals, name)
            if fixed.min() / args.evals < lowest_fixed[0]:
                lowest_fixed = (fixed.min() / args.evals, name)
            e = args.evals
            look_text = f"{low_look[0]:.1%} at {low_look[1]}" if low_look else "-"
            print(f"{cases:>5} {kind:<7} {'yes' if varies else 'no':<4} {delta:>+5.2f}  {settled / e:>7.0%} {share_wrong:>6.1%}  "
                  f"{kinds['grade'] / e:>6.0%} {kinds[NO_EFFECT] / e:>7.0%} {kinds[NO_HARM] / e:>7.0%} {kinds['futile'] / e:>6.0%} {kinds['cap'] / e:>5.0%}  "
                  f"{mean_calls:>6.1f}  {held / e:>6.1%} {look_text:>14}  {fixed.min() / e:>9.1%} {simultaneous / e:>9.1%}  "
                  f"{on_cases / e:>8.0%} {(f'{simultaneous_a / e:.1%}' if cases >= 5 else '-'):>8}",
                  flush=True)
    print(f"\nsettled statements wrong: {total_wrong} of {total_settled} settled "
          f"({total_wrong / max(1, total_settled):.2%}); worst cell {worst[0]:.1%} of its items ({worst[1] or 'none'}); "
          f"bound alpha = {args.alpha:.0%} per item")
    fixed = 2 * args.cap
    print(f"mean trial calls to a stop (both arms; fixed run = {fixed}): clear-cut skills (|delta| >= 0.6) "
          f"{np.mean(clear_calls):.1f} ({np.mean(clear_calls) / fixed:.0%} of the fixed run; settled in "
          f"{np.mean(clear_settled):.0%} of them), no-effect skills (delta 0) {np.mean(null_calls):.1f} "
          f"({np.mean(null_calls) / fixed:.0%}; stopped for futility — no meaningful effect, or the cap would not "
          f"settle it — in {np.mean(null_futile):.0%} of them)")
    print(f"post-stop coverage (the printed interval holds the truth; target >= {1 - args.alpha:.0%}): "
          f"lowest cell {lowest[0]:.1%} ({lowest[1]})")
    print(f"had every item stopped at one same look, the lowest coverage over looks and cells: {lowest_fixed[0]:.1%} "
          f"({lowest_fixed[1]}); the interval held at every look at once (the guarantee behind any stop): lowest cell "
          f"{lowest_sim[0]:.1%} ({lowest_sim[1]})")
    print(f"5-case items, question (a)'s interval held at every look at once (behind a grade 'on these cases'): "
          f"lowest cell {lowest_a[0]:.1%} ({lowest_a[1] or 'none run'})")
    for key in sorted(groups):
        h, n = groups[key]
        print(f"  {key:<28} {h / n:.1%} of {n}")
    print("  by the look it stopped at (trials per arm): "
          + ", ".join(f"{look}: {h / n:.1%} of {n}" for look, (h, n) in sorted(by_look.items())))
    print(f"{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
