"""The A/A noise floor: ``eval-all --aa`` on the scripted server with a noisy judge.

A plugin of skills whose evals are graded by an LLM rubric. The scripted OpenAI-compatible
server (loopback, in this process) answers every trial with one of a few replies and the
judge with a **random score** (uniform on 0, 0.25 … 1, seeded): the judge is pure noise.
``eval-all --aa`` runs the baseline against itself through the real CLI path (client,
runner, judge grader, statistics), again and again; every item's true delta is 0. The
script prints the share of items the run *called* A, B or F (interval inside one band),
the share whose point grade was A/B/F, whether the called share stays ≤ alpha, and the
run's verdict (``within_alpha``: the exact binomial test of its calls across items,
``calls_p ≥ alpha``): how many runs of a calibrated A/A plugin it wrongly turns false
(at most alpha of them when the intervals hold their level).

    python bench/aa.py [--runs 20] [--skills 10] [--cases 5] [--trials 3] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import fixtures  # noqa: E402
from openai_server import Rule, ScriptedServer  # noqa: E402


def write_plugin(root: Path, skills: int, cases: int, trials: int) -> Path:
    return fixtures.write_plugin(root, "aa-plugin", skills, cases, trials, skill_text=lambda i: f"AASKILL {i}: answer in haiku.\n",
                                 instruction=lambda k, i: f"Case {k} of skill {i}, describe the weather.",
                                 grader="{type: llm_rubric, rubric: The answer is a haiku about the weather.}")


def noisy(seed: int):
    rng = random.Random(seed)
    lock = threading.Lock()

    def trial(req: dict) -> str:
        with lock:
            return rng.choice(["Clouds drift, rain soon falls.", "It is sunny today.", "Wind and grey skies."])

    def judge(req: dict) -> str:
        with lock:
            score = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0])
        return json.dumps({"reasoning": "noise", "score": score})

    return trial, judge


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--skills", type=int, default=10)
    ap.add_argument("--cases", type=int, default=5)
    ap.add_argument("--trials", type=int, default=3, help="trials per arm and case")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    from agentsproof.commands.eval_all import run_eval_all
    from agentsproof.model.options import RunFlags

    os.environ["AGENTSPROOF_NO_CACHE"] = "1"
    os.environ["AGENTSPROOF_RETRY_BASE_DELAY"] = "0"
    called = point = items = verdict_false = 0
    smallest_p = 1.0
    by_grade = {"A": 0, "B": 0, "F": 0}
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer() as srv:
        os.environ.update(
            AGENTSPROOF_PROVIDER_TYPE="openai", AGENTSPROOF_PROVIDER_URL=srv.base_url, AGENTSPROOF_PROVIDER_KEY="sk-bench",
            AGENTSPROOF_CACHE_DIR=str(Path(tmp) / "cache"),
        )
        plugin = write_plugin(Path(tmp), args.skills, args.cases, args.trials)
        for r in range(args.runs):
            trial, judge = noisy(args.seed * 100_003 + r)
            srv.rules = [Rule(reply=judge, judge=True), Rule(reply=trial, judge=False)]
            cfg = RunFlags(model="bench-model", parallel=16, output=Path(tmp) / "runs", abort_after=0, aa=True)
            run, _ = run_eval_all(plugin, cfg)
            aa = run.settings["aa"]
            items += aa["items"]
            called += sum(aa["called"].values())
            for g in by_grade:
                by_grade[g] += aa["called"][g]
            point += sum(v for g, v in aa["point_grades"].items() if g != "C")
            verdict_false += not aa["within_alpha"]
            smallest_p = min(smallest_p, aa["calls_p"] if aa["calls_p"] is not None else 1.0)
    share = called / max(1, items)
    print(f"{args.runs} eval-all --aa runs of a {args.skills}-skill plugin; {args.cases} cases x {args.trials} trials per arm "
          f"and case; judge = uniform random score; {items} items")
    print(f"called A/B/F (interval inside one band): {called} ({share:.1%}; A {by_grade['A']}, B {by_grade['B']}, F {by_grade['F']})"
          f" — target <= 5 %: {'met' if share <= 0.05 else 'NOT met'}")
    print(f"point grade A/B/F (no interval): {point} ({point / max(1, items):.1%}) — why a grade needs its interval")
    print(f"run verdict within_alpha false (binomial test of the calls, calls_p < 0.05): {verdict_false} of {args.runs} runs "
          f"(smallest calls_p {smallest_p:.2f})")


if __name__ == "__main__":
    main()
