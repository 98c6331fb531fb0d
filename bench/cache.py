"""What the response cache saves: LLM calls and wall time of a first run, an unchanged
re-run and a skill-only edit, side by side, counted at a loopback server.

The scripted OpenAI-compatible server runs in this process with a fixed latency per call;
the harness runs as a user runs it (`python -m agentsproof eval-all DIR`) in a child
process with its own cache folder. Each eval has a deterministic check and an LLM rubric,
so judge calls are counted too. Targets: an unchanged re-run makes 0 calls; a skill-only
edit makes no baseline-arm call (only the edited skill's with-arm trials and their judges).

    python bench/cache.py [--items 6] [--trials 5] [--latency 0.05] [--parallel 20]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from openai_server import Rule, ScriptedServer, is_judge  # noqa: E402

EVAL_YAML = """\
version: "2"
skill: SKILL.md
defaults: {{trials: {trials}, timeout: 60, threshold: 0.5}}
task:
  name: bench
  instruction: Greet the user.
  graders:
    - {{type: deterministic, checks: ["hello"]}}
    - {{type: llm_rubric, rubric: "Score 1 if the reply greets the user."}}
"""

BASELINE = "You are a helpful assistant."


def _system(req: dict) -> str:
    return next((m.get("content") or "" for m in req.get("messages", []) if m.get("role") == "system"), "")


def write_plugin(root: Path, items: int, trials: int) -> Path:
    plugin = root / "bench-plugin"
    for i in range(items):
        d = plugin / "skills" / f"skill-{i:02d}"
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(f"You are skill {i}. Greet with hello.\n")
        (d / "eval.yaml").write_text(EVAL_YAML.format(trials=trials))
    return plugin


def run(plugin: Path, out: Path, env: dict[str, str], parallel: int) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "agentsproof", "eval-all", str(plugin), "--model", "m", "--parallel", str(parallel), "--output", str(out)],
        env=env, capture_output=True, text=True,
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"run failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=6)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--parallel", type=int, default=20)
    args = ap.parse_args()
    # the reply follows the system prompt, so an edited skill gets new answers (and new judge calls)
    rule = Rule(reply=lambda req: "hello: " + _system(req)[:30], judge=False)
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer([rule], latency=args.latency) as srv:
        root = Path(tmp)
        plugin = write_plugin(root, args.items, args.trials)
        env = {
            **os.environ,
            "AGENTSPROOF_PROVIDER_TYPE": "openai",
            "AGENTSPROOF_PROVIDER_URL": srv.base_url,
            "AGENTSPROOF_PROVIDER_KEY": "sk-bench",
            "AGENTSPROOF_CACHE_DIR": str(root / "cache"),
        }
        env.pop("AGENTSPROOF_NO_CACHE", None)
        rows = []
        for label, edit in (("first run", None), ("unchanged re-run", None), ("skill-only edit (1 skill)", "skill-00")):
            if edit:
                (plugin / "skills" / edit / "SKILL.md").write_text("You are an edited skill. Greet warmly with hello.\n")
            before = len(srv.requests)
            wall = run(plugin, root / "runs", env, args.parallel)
            new = srv.requests[before:]
            trials = [r for r in new if not is_judge(r)]
            rows.append((label, len(new), len(trials), sum(1 for r in trials if _system(r) == BASELINE), len(new) - len(trials), wall))
        print(f"{args.items} items x {args.trials} trials x 2 arms, LLM rubric judge, {args.latency * 1000:.0f} ms per call, --parallel {args.parallel}")
        print(f"{'run':<28} {'calls':>6} {'trials':>7} {'baseline':>9} {'judge':>6} {'wall s':>7}")
        for label, calls, trials, base, judge, wall in rows:
            print(f"{label:<28} {calls:>6} {trials:>7} {base:>9} {judge:>6} {wall:>7.2f}")
        first, again, edit = rows
        print(f"unchanged re-run: {again[1]} calls (target 0), {again[5] / first[5]:.2f}x the first run's wall time")
        print(f"skill-only edit: {edit[3]} baseline-arm calls (target 0), {edit[1]} calls = {edit[1] / first[1]:.0%} of the first run")


if __name__ == "__main__":
    main()
