"""Coverage of the activation intervals (agentsproof.stats.activation), by simulation.

A skill with true recall R and a false-load rate F on N_other prompts of other skills:
each should prompt loads it with chance R, each other prompt with chance F (one trial
each). Over many simulated suites, the script counts how often the 95 % intervals of
precision, recall and F1 hold the true values (the true precision and F1 are those of
the expected counts), and prints the shares; a share well under 0.95 is a defect.

It also checks tune-description's rule against rewording: when a candidate description
behaves exactly like the original up to noise (each held-out prompt right with the same
chance for both, independently), how often would the paired gain's interval lie above 0
and the run claim a held-out gain? That share must stay under 2.5 %.

    python bench/activation_intervals.py [--sims 4000] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentsproof.model.activation import ActivationPrompt, ActivationSuite, ActivationTrial  # noqa: E402
from agentsproof.model.items import SkillFile  # noqa: E402
from agentsproof.stats.activation import f1_score, paired_gain, score  # noqa: E402

CASES = [  # (should prompts, other prompts, true recall, false-load rate)
    (10, 20, 0.9, 0.05), (10, 20, 0.6, 0.2), (20, 40, 0.8, 0.1), (10, 10, 0.5, 0.5), (30, 60, 0.95, 0.02),
]


def one(rng: random.Random, n: int, m: int, r: float, f: float) -> tuple[bool, bool, bool] | None:
    mine = ActivationSuite(SkillFile("s", "skill", ""), [ActivationPrompt(f"s{i}", True, "implicit") for i in range(n)])
    other = ActivationSuite(SkillFile("o", "skill", ""), [ActivationPrompt(f"o{i}", True, "implicit") for i in range(m)])
    trials = [ActivationTrial("s", p, 0, ["s"] if rng.random() < r else []) for p in mine.prompts]
    trials += [ActivationTrial("o", p, 0, ["s"] if rng.random() < f else []) for p in other.prompts]
    s = score([mine, other], trials).skills[0]
    true_p = n * r / (n * r + m * f)
    true_f1 = f1_score(true_p, r)
    if s.precision_ci is None or s.recall_ci is None or s.f1_ci is None:
        return None
    inside = lambda ci, v: ci[0] - 1e-12 <= v <= ci[1] + 1e-12  # noqa: E731
    return inside(s.precision_ci, true_p), inside(s.recall_ci, r), inside(s.f1_ci, true_f1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    print("should  other  recall  false-load   precision  recall  F1   (share of intervals holding the truth)")
    for n, m, r, f in CASES:
        got = [x for x in (one(rng, n, m, r, f) for _ in range(args.sims)) if x is not None]
        shares = [sum(g[i] for g in got) / len(got) for i in range(3)]
        print(f"{n:6d} {m:6d} {r:7.2f} {f:11.2f}   {shares[0]:9.3f} {shares[1]:7.3f} {shares[2]:5.3f}")
    false_gains(rng, max(200, args.sims // 4))


def false_gains(rng: random.Random, sims: int) -> None:
    print("\nheld-out prompts  chance right  trials   false 'held-out gain' share (rewording: no true change)")
    for n, p, trials in ((8, 0.7, 1), (8, 0.5, 3), (20, 0.8, 1), (40, 0.6, 1)):
        hits = 0
        for _ in range(sims):
            before = [sum(rng.random() < p for _ in range(trials)) / trials for _ in range(n)]
            after = [sum(rng.random() < p for _ in range(trials)) / trials for _ in range(n)]
            _, ci = paired_gain(before, after)
            hits += ci is not None and ci[0] > 0
        print(f"{n:17d} {p:13.2f} {trials:7d}   {hits / sims:.4f}")


if __name__ == "__main__":
    main()
