"""How often does a grade flip when the same eval runs again? By verdict class.

The scripted OpenAI-compatible server (loopback, in this process) answers with seeded
noise: each skill has a true pass chance per arm and per case, and each reply passes its
check with that chance. The same eval-all (identical files, identical settings, only the
noise seed differs) runs ``--reruns`` times through the real CLI path. For every item and
every pair of consecutive re-runs the script records whether the grade changed, and
groups the pairs by the first run's verdict (``settled`` / ``underpowered``).

Target: among grades reported settled, flips ≤ 5 %.

    python bench/stability.py [--reruns 12] [--cases 6] [--trials 4] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import tempfile
import threading
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from openai_server import Rule, ScriptedServer  # noqa: E402

# name: (with-arm pass chance, baseline pass chance); per case the chances move by ±spread
SKILLS = {
    "clear-a": (0.95, 0.15),
    "strong-a": (0.85, 0.35),
    "mid-b": (0.70, 0.48),
    "edge-ab": (0.75, 0.45),
    "small-c": (0.55, 0.50),
    "none": (0.50, 0.50),
    "harmful": (0.30, 0.70),
    "edge-bc": (0.62, 0.47),
}


def write_plugin(root: Path, cases: int, trials: int) -> Path:
    plugin = root / "stable-plugin"
    for name in SKILLS:
        d = plugin / "skills" / name
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(f"SKILL-{name}: follow the house style.\n", encoding="utf-8")
        tasks = "\n".join(
            f"  - name: case-{k}\n    instruction: STABLE {name} case {k}, greet the user.\n"
            "    graders:\n      - {type: deterministic, checks: [hello]}"
            for k in range(cases)
        )
        (d / "eval.yaml").write_text(
            f'version: "2"\nskill: SKILL.md\ndefaults: {{trials: {trials}, timeout: 60, threshold: 0.5}}\ntasks:\n{tasks}\n', encoding="utf-8"
        )
    return plugin


def case_shift(name: str, case: int, spread: float) -> float:
    """A fixed per-case offset: some cases are easier than others, the same in every re-run."""
    return random.Random(f"{name}/{case}").uniform(-spread, spread)


def noisy(seed: int, spread: float):
    rng = random.Random(seed)
    lock = threading.Lock()
    pattern = re.compile(r"STABLE (\S+) case (\d+)")

    def reply(req: dict) -> str:
        system = req["messages"][0]["content"]
        m = pattern.search(req["messages"][-1]["content"])
        name, case = m.group(1), int(m.group(2))
        p_with, p_without = SKILLS[name]
        p = (p_with if f"SKILL-{name}" in system else p_without) + case_shift(name, case, spread)
        with lock:
            ok = rng.random() < min(1.0, max(0.0, p))
        return "hello there" if ok else "good day"

    return reply


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reruns", type=int, default=12)
    ap.add_argument("--cases", type=int, default=6)
    ap.add_argument("--trials", type=int, default=4)
    ap.add_argument("--spread", type=float, default=0.08)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    from agentsproof.commands.eval_all import run_eval_all
    from agentsproof.model.options import RunFlags

    os.environ["AGENTSPROOF_NO_CACHE"] = "1"
    os.environ["AGENTSPROOF_RETRY_BASE_DELAY"] = "0"
    history: dict[str, list[tuple[str, str]]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer() as srv:
        os.environ.update(
            AGENTSPROOF_PROVIDER_TYPE="openai", AGENTSPROOF_PROVIDER_URL=srv.base_url, AGENTSPROOF_PROVIDER_KEY="sk-bench",
            AGENTSPROOF_CACHE_DIR=str(Path(tmp) / "cache"),
        )
        plugin = write_plugin(Path(tmp), args.cases, args.trials)
        for r in range(args.reruns):
            srv.rules = [Rule(reply=noisy(args.seed * 7919 + r, args.spread), judge=False)]
            run, _ = run_eval_all(plugin, RunFlags(model="bench-model", parallel=16, output=Path(tmp) / "runs", abort_after=0))
            for it in run.items:
                history[it.name].append((it.grade or "-", it.stats.get("verdict") or "-"))
    flips: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    per_skill = []
    for name, runs in history.items():
        f = 0
        for (g1, v1), (g2, _) in zip(runs, runs[1:]):
            flips[v1][0] += g1 != g2
            flips[v1][1] += 1
            f += g1 != g2
        grades = "".join(g for g, _ in runs)
        settled = sum(v == "settled" for _, v in runs)
        per_skill.append(f"  {name:<10} grades {grades}  settled in {settled}/{len(runs)} runs, {f} flips")
    print(f"{args.reruns} re-runs of an identical {len(SKILLS)}-skill eval-all; {args.cases} cases x {args.trials} trials per arm; seeded noise")
    print("\n".join(per_skill))
    print(f"{'verdict of the first run':26} {'pairs':>6} {'grade flips':>12}")
    for verdict in ("settled", "underpowered"):
        n, total = flips[verdict][1] and flips[verdict][0], flips[verdict][1]
        rate = f"{n / total:.1%}" if total else "—"
        print(f"{verdict:26} {total:>6} {rate:>12}")


if __name__ == "__main__":
    main()
