"""Does anything hold agentsproof's event loop? A mixed-agent run under asyncio's debug mode.

``agentsproof eval`` runs as a child process with ``PYTHONASYNCIODEBUG=1`` (asyncio's debug
mode: every callback or task step that holds the loop longer than
``loop.slow_callback_duration``, 0.1 s, is logged as ``Executing <...> took N seconds``)
over one skill on every built-in agent CLI (Copilot, Claude Code, Codex), a command target
and the chat target side by side, ``--parallel 4``, on the scripted servers
(bench/agent_setup.py). It prints every slow callback (what held the loop, for how long)
and every errored trial; the goal is none of either, and in particular never Claude
Code's "no stdin data received in 3s" (its prompt is written to its stdin before it starts).

    python bench/loop_debug.py [--trials 5] [--parallel 4] [--rounds 1] [--targets copilot,claude-code,codex,picker]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent_setup import Servers, child_env, eval_argv, trial_statuses, write_plugin  # noqa: E402

SLOW = re.compile(r"Executing (.+?) took (\d+(?:\.\d+)?) seconds")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=5, help="trials per arm and target")
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=1, help="runs of the whole command")
    ap.add_argument("--targets", default="copilot,claude-code,codex,picker")
    ap.add_argument("--slow", type=float, default=0.1, help="what counts as holding the loop (asyncio's slow_callback_duration)")
    args = ap.parse_args()
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    slow: list[tuple[float, str]] = []
    errored = trials = 0
    with tempfile.TemporaryDirectory(prefix="agentsproof-loopdebug-") as tmp, Servers() as servers:
        work = Path(tmp)
        skill, targets_file = write_plugin(work, args.trials, targets)
        env = child_env(servers, work / "home", {"PYTHONASYNCIODEBUG": "1"})
        if args.slow != 0.1:
            env["AGENTSPROOF_BENCH_SLOW_CALLBACK"] = str(args.slow)
        for rnd in range(args.rounds):
            out = work / f"runs-{rnd}"
            t0 = time.perf_counter()
            argv = eval_argv(skill, targets_file, targets, args.parallel, args.trials, out)
            if args.slow != 0.1:  # asyncio's default is 0.1 s; another threshold needs the loop set before the run
                argv[1:3] = ["-c", _SET_SLOW]
            proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=3600)
            wall = time.perf_counter() - t0
            found = [(float(m.group(2)), " ".join(m.group(1).split())[:300]) for m in SLOW.finditer(proc.stderr)]
            slow += found
            if proc.returncode not in (0, 1) or not list(out.rglob("*.json")):
                print(proc.stderr[-3000:])
                raise SystemExit(f"round {rnd + 1}: agentsproof exited {proc.returncode}")
            table = trial_statuses(out)
            print(f"round {rnd + 1}: {wall:.1f} s wall, {len(found)} slow callback(s)")
            for target, row in table.items():
                print(f"  {target:12s} " + ", ".join(f"{k}: {v}" for k, v in sorted(row.items())))
                trials += sum(row.values())
                errored += sum(v for k, v in row.items() if k.startswith("errored"))
    print(f"\n{trials} trials, {errored} errored; {len(slow)} callback(s) held the loop >= {args.slow:g} s")
    for took, what in sorted(slow, reverse=True)[:30]:
        print(f"  {took:6.3f} s  {what}")
    return 1 if slow or errored else 0


_SET_SLOW = (
    "import asyncio, os, sys, runpy\n"
    "_new = asyncio.events.new_event_loop\n"
    "def _loop():\n"
    "    loop = _new(); loop.slow_callback_duration = float(os.environ['AGENTSPROOF_BENCH_SLOW_CALLBACK']); return loop\n"
    "asyncio.events.new_event_loop = _loop\n"
    "sys.argv = ['agentsproof', *sys.argv[1:]]\n"
    "runpy.run_module('agentsproof', run_name='__main__')\n"
)


if __name__ == "__main__":
    sys.exit(main())
