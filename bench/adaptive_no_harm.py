"""When should ``--adaptive`` stop with "does no harm" instead of waiting for an A? Variants of that one test, side by side on the same items.

Today's rule (``stats/adaptive.py``, ``statement``) stops with "does no harm: C or better"
once the interval's printed bottom is at least 0.00 **and** no grade looks reachable by
the cap: the interval's half-width shrunk by √(done/cap) around its centre leaves the
bottom below +0.30 and is too wide for a finite band. The variants change only that
"A reachable" test; every other stop (grades, "no meaningful effect", "the cap would not
settle it") is today's:

- ``today``: the rule as shipped;
- ``projected``: an A is reachable when the interval the futility stop projects to the cap
  (:func:`agentsproof.stats.adaptive.projected_interval`) has a printed bottom in A, or is
  narrow enough for a finite band;
- ``margin``: today's test, but the projected bottom must clear +0.30 by ``--margin``
  (0.05 unless told);
- ``eager``: "does no harm" as soon as F is ruled out (an A only when it settles first).

Every variant stops only with a statement the interval at level 1 − alpha/K supports, so
the error bound and the printed interval's validity after any stop are those of today's
rule; what differs is the calls, and which statement an item ends with. Items, seeds and
the runner's loop are ``bench/adaptive.py``'s (the ``today`` rows reproduce its calls and
stop kinds at the same ``--evals``).

    .venv/bin/python bench/adaptive_no_harm.py [--evals 150] [--cap 30] [--cells 2] [--deltas 0,0.6,0.7,0.8,-0.6,-0.7,-0.8]
        [--variants today,margin] [--margin 0.02]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from adaptive import CELLS, DELTAS, run_one, wrong  # noqa: E402
from coverage import simulate  # noqa: E402

import agentsproof.stats.adaptive as rule  # noqa: E402
from agentsproof.model.results import compute_grade  # noqa: E402

TODAY = rule.statement
MARGIN = [0.05]
"""The ``margin`` variant's margin (``--margin``)."""
Reach = Callable[[float, float, int, int, "tuple[float, float] | None"], bool]


def crude(lo: float, hi: float, done: int, cap: int, margin: float = 0.0) -> bool:
    """Today's test: the half-width shrunk by √(done/cap) leaves the bottom in A (plus
    ``margin``), or fits a finite band."""
    centre, half = (hi + lo) / 2, (hi - lo) / 2 * (done / cap) ** 0.5
    return centre - half >= 0.30 + margin or any(2 * half <= b - a for a, b in rule.BANDS)


def by_projection(lo: float, hi: float, done: int, cap: int, projected: tuple[float, float] | None) -> bool:
    """The futility stop's projection to the cap: its printed bottom in A, or narrow enough for a band."""
    if projected is None:
        return crude(lo, hi, done, cap)
    p_lo, p_hi = projected
    return compute_grade(p_lo) == "A" or any(p_hi - p_lo <= b - a for a, b in rule.BANDS)


VARIANTS: dict[str, Reach | None] = {
    "today": None,
    "projected": by_projection,
    "margin": lambda lo, hi, done, cap, _p: crude(lo, hi, done, cap, MARGIN[0]),
    "eager": lambda lo, hi, done, cap, _p: False,
}


def with_reach(reach: Reach) -> Callable[..., tuple[str | None, str | None]]:
    """``statement`` with its "A reachable" test replaced by ``reach`` (everything else today's)."""

    def statement(
        ci: tuple[float, float] | None, *, done: int = 0, cap: int = 0, projected: tuple[float, float] | None = None
    ) -> tuple[str | None, str | None]:
        if ci is None or done >= cap:
            return TODAY(ci, done=done, cap=cap, projected=projected)
        lo, hi = ci
        g_lo, g_hi = compute_grade(lo), compute_grade(hi)
        if g_lo == g_hi or g_hi in ("C", "F") or g_lo == "F":
            return TODAY(ci, done=done, cap=cap, projected=projected)
        return (None, None) if reach(lo, hi, done, cap, projected) else (None, rule.NO_HARM)

    return statement


def main() -> None:
    """Run the variants on the chosen cells and deltas; print a row per (delta, variant) and each cell's clear-cut summary."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--evals", type=int, default=150)
    ap.add_argument("--cap", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cells", default="2")
    ap.add_argument("--deltas", default="0,0.6,0.7,0.8,-0.6,-0.7,-0.8")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--margin", type=float, default=0.05, help="the margin variant's margin over +0.30")
    args = ap.parse_args()
    MARGIN[0] = args.margin
    t0 = time.time()
    names = args.variants.split(",")
    deltas = [float(d) for d in args.deltas.split(",")]
    print(f"{args.evals} simulated items per cell and delta; cap {args.cap}; the fixed run is {2 * args.cap} calls; margin {args.margin}")
    print(
        f"{'cases':>5} {'scores':<7} {'true':>5}  {'variant':<9} {'calls':>6} {'A':>5} {'grade':>5} "
        f"{'C or F':>6} {'no harm':>7} {'futile':>6} {'cap':>5} {'wrong':>6} {'covers':>6}"
    )
    for index in (int(k) for k in args.cells.split(",")):
        cases, kind, varies = CELLS[index]
        clear: dict[str, list[float]] = {v: [] for v in names}
        a_pos: dict[str, list[float]] = {v: [] for v in names}
        for delta in deltas:
            cell = index * len(DELTAS) + DELTAS.index(round(delta, 2)) + 1  # bench/adaptive.py's seeds
            for name in names:
                reach = VARIANTS[name]
                rule.statement = TODAY if reach is None else with_reach(reach)
                rng = np.random.default_rng([args.seed, cell])
                xw, xwo, dj = simulate(rng, args.evals, cases, -(-args.cap // cases), delta, kind, varies)
                policy = rule.AdaptivePolicy()
                counts = {"A": 0, "grade": 0, rule.NO_EFFECT: 0, rule.NO_HARM: 0, "futile": 0, "cap": 0}
                calls, n_wrong, held = [], 0, 0
                for r in range(args.evals):
                    truth = delta if cases >= 5 else float(dj[r].mean())
                    done, label, ci = run_one(xw[r], xwo[r], cases, args.cap, policy)
                    calls.append(2 * done)
                    held += ci is not None and ci[0] - 1e-9 <= truth <= ci[1] + 1e-9
                    if label is None or label == "futile":
                        counts[label or "cap"] += 1
                        continue
                    counts[label if label in (rule.NO_EFFECT, rule.NO_HARM) else "grade"] += 1
                    counts["A"] += label == "A"
                    n_wrong += wrong(label, truth)
                e = args.evals
                mean_calls = float(np.mean(calls))
                if abs(delta) >= 0.6 - 1e-9:
                    clear[name].append(mean_calls)
                if delta >= 0.6 - 1e-9:
                    a_pos[name].append(counts["A"] / e)
                print(
                    f"{cases:>5} {kind:<7} {delta:>+5.2f}  {name:<9} {mean_calls:>6.1f} {counts['A'] / e:>5.0%} "
                    f"{counts['grade'] / e:>5.0%} {counts[rule.NO_EFFECT] / e:>6.0%} {counts[rule.NO_HARM] / e:>7.0%} "
                    f"{counts['futile'] / e:>6.0%} {counts['cap'] / e:>5.0%} {n_wrong / e:>6.1%} {held / e:>6.1%}",
                    flush=True,
                )
        rule.statement = TODAY
        for name in names:
            if clear[name]:
                m = float(np.mean(clear[name]))
                print(
                    f"cell {index} {name:<9}: clear-cut calls {m:.1f} ({m / (2 * args.cap):.1%} of the fixed run) over "
                    f"{len(clear[name])} deltas; A on the positive clear-cut deltas {np.mean(a_pos[name] or [0]):.0%}"
                )
    print(f"{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
