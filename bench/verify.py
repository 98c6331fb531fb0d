"""How fast `agentsproof verify` re-derives a 10,000-trial report.

The report is made by the real command (`python -m agentsproof eval-all`, 10 items x 500
trials x 2 arms, the fast scripted server at 0 ms latency in its own process), so it holds
what a real run records (grader results, checks, logs, the manifest). Then `agentsproof
verify REPORT.json` runs --reps times as its own process (start-up included) and, beside
it, the re-derivation alone in this process (read, validate, every number derived again,
the trials' digest). It must say "verified" (exit 0). Target: < 2 s per verify.

The server's replies are drawn from "OK", "NO", "OK ERROR" and "ERROR" (scores 1, 1/3, 2/3
and 0: every item's permutation test has work to do); ``--same-scores``: every reply "OK",
every trial 1.00 (the report measured before 2026-12-06, where no relabelling can change a sum).
The package is compiled to bytecode first, as an install does (bench/throughput.py).

    python bench/verify.py [--trials 10000] [--reps 3] [--same-scores] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from throughput import compile_bytecode, eval_all_report  # noqa: E402

TARGET_S = 2.0
ITEMS = 10
REPLIES = "OK|NO|OK ERROR|ERROR"


def make_report(work: Path, trials: int, same_scores: bool = False) -> Path:
    """The 10-item eval-all report to verify (bench/throughput.py ``eval_all_report``)."""
    return eval_all_report(work, trials, ITEMS, None if same_scores else REPLIES)


def _children_cpu() -> float:
    """User + system CPU seconds of the finished child processes (a figure the machine's other load does not inflate much)."""
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=10_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--same-scores", action="store_true", help="every trial scores 1.00 (the report measured before 2026-12-06)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    compile_bytecode()
    with tempfile.TemporaryDirectory(prefix="ap-bench-verify-") as tmp:
        work = Path(tmp)
        report = make_report(work, args.trials, args.same_scores)
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        cli: list[float] = []
        cpu: list[float] = []
        for _ in range(args.reps):
            t0, c0 = time.perf_counter(), _children_cpu()
            done = subprocess.run([sys.executable, "-m", "agentsproof", "verify", str(report)], env=env, capture_output=True, text=True, cwd=work)
            cli.append(time.perf_counter() - t0)
            cpu.append(_children_cpu() - c0)
            if done.returncode != 0:
                raise SystemExit(f"verify exited {done.returncode}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
        from agentsproof.commands.verify import verify

        inner: list[float] = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            found = verify(report)
            inner.append(time.perf_counter() - t0)
            assert found.ok, found.lines()
        result = {
            "trials": found.trials,
            "report_mb": round(report.stat().st_size / 1e6, 1),
            "verify_cli_s": round(statistics.median(cli), 3),
            "verify_cli_cpu_s": round(statistics.median(cpu), 3),
            "verify_in_process_s": round(statistics.median(inner), 3),
            "scores": "all 1.00" if args.same_scores else "varied (1, 2/3, 1/3, 0)",
            "load_average": round(os.getloadavg()[0], 1),
            "target_s": TARGET_S,
            "within_target": statistics.median(cli) < TARGET_S,
        }
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k}: {v}")


if __name__ == "__main__":
    main()
