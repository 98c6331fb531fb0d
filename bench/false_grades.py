"""False A/B grades in a plugin of skills that change nothing, with and without correction.

A 12-skill plugin whose skills have no effect: the scripted OpenAI-compatible server
(loopback, in this process) answers every trial — with or without the skill — with a
passing reply at the same seeded chance. ``eval-all`` runs on it again and again through
the real CLI path (client, runner, graders, statistics). Every A or B is false. The
script counts, per plugin run and per item, how many are:

- graded A or B at all (no correction: the grade is the delta's),
- A or B **and** significant after Holm (the default) — the A/B eval-all does not mark †,
- A or B and significant after Benjamini–Hochberg (``--p-adjust bh``),
- A or B with an uncorrected p < 0.05.

    python bench/false_grades.py [--runs 30] [--skills 12] [--cases 5] [--trials 3] [--seed 0]
"""

from __future__ import annotations

import argparse
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
    return fixtures.write_plugin(root, "null-plugin", skills, cases, trials, skill_text=lambda i: f"NULLSKILL {i}: be yourself.\n",
                                 instruction=lambda k, i: f"Case {k} of skill {i}, greet the user.",
                                 grader="{type: deterministic, checks: [hello]}")


def noisy_reply(seed: int, p_pass: float):
    rng = random.Random(seed)
    lock = threading.Lock()

    def reply(req: dict) -> str:
        with lock:
            ok = rng.random() < p_pass
        return "hello there" if ok else "good day"

    return reply


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--skills", type=int, default=12)
    ap.add_argument("--cases", type=int, default=5)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--p-pass", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    from agentsproof.commands.eval_all import run_eval_all
    from agentsproof.model.options import RunFlags
    from agentsproof.stats.multiplicity import benjamini_hochberg, holm

    os.environ["AGENTSPROOF_NO_CACHE"] = "1"
    os.environ["AGENTSPROOF_RETRY_BASE_DELAY"] = "0"
    counts = {"A/B (no correction)": [0, 0], "A/B with p < 0.05 (uncorrected)": [0, 0], "A/B significant after Holm": [0, 0], "A/B significant after BH": [0, 0]}
    items_total = 0
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer() as srv:
        os.environ.update(
            AGENTSPROOF_PROVIDER_TYPE="openai", AGENTSPROOF_PROVIDER_URL=srv.base_url, AGENTSPROOF_PROVIDER_KEY="sk-bench",
            AGENTSPROOF_CACHE_DIR=str(Path(tmp) / "cache"),
        )
        plugin = write_plugin(Path(tmp), args.skills, args.cases, args.trials)
        for r in range(args.runs):
            srv.rules = [Rule(reply=noisy_reply(args.seed * 100_003 + r, args.p_pass), judge=False)]
            cfg = RunFlags(model="bench-model", parallel=16, output=Path(tmp) / "runs", abort_after=0)
            run, _ = run_eval_all(plugin, cfg)
            grades = [it.grade for it in run.items]
            ps = [it.stats.get("p_value") if it.stats.get("p_value") is not None else 1.0 for it in run.items]
            flags = {
                "A/B (no correction)": [g in ("A", "B") for g in grades],
                "A/B with p < 0.05 (uncorrected)": [g in ("A", "B") and p < 0.05 for g, p in zip(grades, ps)],
                "A/B significant after Holm": [g in ("A", "B") and q < 0.05 for g, q in zip(grades, holm(ps))],
                "A/B significant after BH": [g in ("A", "B") and q < 0.05 for g, q in zip(grades, benjamini_hochberg(ps))],
            }
            assert flags["A/B significant after Holm"] == [it.grade in ("A", "B") and not it.stats.get("grade_mark") for it in run.items]
            for k, f in flags.items():
                counts[k][0] += sum(f)
                counts[k][1] += any(f)
            items_total += len(run.items)
    print(f"{args.runs} eval-all runs of a {args.skills}-skill no-effect plugin; {args.cases} cases x {args.trials} trials per arm; pass chance {args.p_pass} in both arms")
    print(f"{'false grade':36} {'per item':>9} {'plugins with any':>17}")
    for k, (n, anyn) in counts.items():
        print(f"{k:36} {n / items_total:9.1%} {anyn / args.runs:17.1%}")


if __name__ == "__main__":
    main()
