"""Simulate ``--adaptive`` against fixed ``--reliable`` (15 trials per arm); no model needed.

Every simulated trial scores the share of ``checks`` independent checks it passes, each
with the arm's chance. The loop is the runner's: ask the policy, run that many trials per
arm, repeat. Prints trial calls used, how often the final grade is wrong, and how often a
grade the adaptive rule called *settled* is wrong (its ≤ 5 % guarantee).

    .venv/bin/python bench/adaptive.py [--evals 2000] [--seed 0]
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np

from agentsproof.model.results import compute_grade
from agentsproof.stats.adaptive import DEFAULT_CAP, AdaptivePolicy

RELIABLE = 15


@dataclass
class Scenario:
    name: str
    p_with: float
    p_without: float
    checks: int
    clear_cut: bool

    @property
    def true_delta(self) -> float:
        return self.p_with - self.p_without


SCENARIOS = [
    Scenario("clear A: 0.95 vs 0.10, 4 checks", 0.95, 0.10, 4, True),
    Scenario("clear A: 1.00 vs 0.20, 3 checks", 1.00, 0.20, 3, True),
    Scenario("clear A: 0.90 vs 0.10, 1 check", 0.90, 0.10, 1, True),
    Scenario("clear F: 0.10 vs 0.80, 4 checks", 0.10, 0.80, 4, True),
    Scenario("strong A: 0.90 vs 0.30, 4 checks", 0.90, 0.30, 4, False),
    Scenario("borderline A: 0.71 vs 0.40, 4 checks", 0.71, 0.40, 4, False),
    Scenario("borderline B: 0.69 vs 0.40, 1 check", 0.69, 0.40, 1, False),
    Scenario("borderline C: 0.64 vs 0.50, 1 check", 0.64, 0.50, 1, False),
    Scenario("no effect: 0.60 vs 0.60, 4 checks", 0.60, 0.60, 4, False),
]


def simulate(s: Scenario, rng: np.random.Generator, cap: int, adaptive: bool) -> tuple[int, str, bool]:
    """(trials per arm, final grade, settled early) for one simulated eval."""
    policy = AdaptivePolicy()
    w: list[float] = []
    wo: list[float] = []
    done = 0
    while done < cap:
        more = policy(w, wo, done, cap) if adaptive else cap - done
        more = max(0, min(more, cap - done))
        if more == 0:
            break
        w += list(rng.binomial(s.checks, s.p_with, more) / s.checks)
        wo += list(rng.binomial(s.checks, s.p_without, more) / s.checks)
        done += more
    grade = compute_grade(float(np.mean(w)) - float(np.mean(wo)))
    settled = bool(policy.stops and policy.stops[-1][1] is not None)
    if settled:
        grade = policy.stops[-1][1]
    return done, grade, settled


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--evals", type=int, default=2000, help="simulated evals per scenario")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cap", type=int, default=DEFAULT_CAP, help="adaptive trial cap per arm")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"{args.evals} simulated evals per scenario; fixed = --reliable ({RELIABLE}/arm); adaptive cap {args.cap}/arm")
    print(f"{'scenario':<40} {'true':>5}  {'fixed calls':>11} {'adaptive calls':>14} {'ratio':>6}  "
          f"{'wrong fixed':>11} {'wrong adapt':>11} {'settled':>8} {'wrong settled':>13}")
    print(f"{'':<40} {'':>5}  {'(per eval)':>11} {'(per eval)':>14} {'':>6}  {'':>11} {'':>11} {'':>8} {'(of all evals)':>13}")
    all_settled = wrong_settled_total = 0
    clear_ratios = []
    for s in SCENARIOS:
        truth = compute_grade(s.true_delta)
        fixed = [simulate(s, rng, RELIABLE, False) for _ in range(args.evals)]
        adapt = [simulate(s, rng, args.cap, True) for _ in range(args.evals)]
        fixed_calls = 2 * np.mean([d for d, _, _ in fixed])
        adapt_calls = 2 * np.mean([d for d, _, _ in adapt])
        wrong_fixed = np.mean([g != truth for _, g, _ in fixed])
        wrong_adapt = np.mean([g != truth for _, g, _ in adapt])
        settled = [g for _, g, st in adapt if st]
        wrong_settled = sum(g != truth for g in settled)
        all_settled += len(settled)
        wrong_settled_total += wrong_settled
        ratio = adapt_calls / fixed_calls
        if s.clear_cut:
            clear_ratios.append(ratio)
        print(f"{s.name:<40} {s.true_delta:>+5.2f}  {fixed_calls:>11.1f} {adapt_calls:>14.1f} {ratio:>6.0%}  "
              f"{wrong_fixed:>11.1%} {wrong_adapt:>11.1%} {len(settled) / args.evals:>8.0%} "
              f"{wrong_settled / args.evals:>13.1%}")
    print(f"clear-cut skills: adaptive used {np.mean(clear_ratios):.0%} of the fixed --reliable calls (target <= 50%)")
    print(f"settled grades wrong overall: {wrong_settled_total}/{all_settled} "
          f"({wrong_settled_total / max(1, all_settled):.1%}; guarantee <= 5% per eval)")


if __name__ == "__main__":
    main()
