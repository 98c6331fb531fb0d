"""Start-up: from `agentsproof eval ...` to the first model call.

The real command runs in a child process (`python -m agentsproof eval EVAL --trials 1`)
against the scripted OpenAI-compatible server, which runs in this process. When the first
chat request arrives, the server reads the child's CPU time (user + system, from
/proc/PID/stat; the child is blocked waiting for the reply, so its clock stands still) and
the wall time since the child was started. Target: <= 0.3 s CPU to the first call on the
default transport (the pooled one); httpx's own (AGENTSPROOF_HTTP_TRANSPORT=httpx) is shown beside it.

Linux only (/proc). Several repetitions; the median and the best are printed.

    python bench/startup.py [--reps 5] [--client pool|httpx|both] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from openai_server import Rule, ScriptedServer  # noqa: E402

TARGET_CPU_S = 0.3
TICKS = os.sysconf("SC_CLK_TCK")

EVAL_YAML = """\
version: "2"
skill: SKILL.md
defaults: {trials: 1, timeout: 60, threshold: 0.5}
task:
  name: bench
  instruction: Reply with OK.
  graders:
    - type: deterministic
      checks: {mustContain: ["OK"]}
"""


def child_cpu_s(pid: int) -> float:
    """utime + stime of ``pid`` in seconds (fields 14 and 15 of /proc/PID/stat)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def one_run(work: Path, base_url: str, client: str) -> tuple[float, float, float]:
    """(CPU s to the first call, wall s to the first call, CPU s of the whole process)."""
    first: dict[str, float] = {}
    seen = threading.Event()
    state: dict[str, subprocess.Popen] = {}

    def reply(req: dict) -> str:
        if not seen.is_set():
            first["wall"] = time.perf_counter() - first["t0"]
            first["cpu"] = child_cpu_s(state["proc"].pid)
            seen.set()
        return "OK"

    rule = Rule(reply=reply)
    srv.rules[:] = [rule]
    env = dict(os.environ)
    env.update(
        AGENTSPROOF_PROVIDER_TYPE="openai",
        AGENTSPROOF_PROVIDER_URL=base_url,
        AGENTSPROOF_PROVIDER_KEY="sk-bench",
        AGENTSPROOF_MODEL="bench-model",
        AGENTSPROOF_NO_CACHE="1",
        AGENTSPROOF_HTTP_TRANSPORT="httpx" if client == "httpx" else "",
        PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
    )
    out = work / f"runs-{time.monotonic_ns()}"
    cmd = [sys.executable, "-m", "agentsproof", "eval", str(work / "skill" / "eval.yaml"), "--trials", "1", "--output", str(out)]
    first["t0"] = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    state["proc"] = proc
    stderr = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0 or not seen.is_set():
        raise SystemExit(f"eval exited {code} (first call seen: {seen.is_set()}): {stderr.decode(errors='replace')}")
    return first["cpu"], first["wall"], usage.ru_utime + usage.ru_stime


srv: ScriptedServer


def main() -> int:
    global srv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--client", choices=["pool", "httpx", "both"], default="both", help="the child's transport (AGENTSPROOF_HTTP_TRANSPORT)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    clients = ["pool", "httpx"] if args.client == "both" else [args.client]
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="agentsproof-startup-") as tmp, ScriptedServer() as server:
        srv = server
        work = Path(tmp)
        (work / "skill").mkdir()
        (work / "skill" / "SKILL.md").write_text("Answer tersely.\n")
        (work / "skill" / "eval.yaml").write_text(EVAL_YAML)
        runs: dict[str, list[tuple[float, float, float]]] = {c: [] for c in clients}
        for _ in range(args.reps):  # interleaved, so both clients see the same machine load
            for c in clients:
                runs[c].append(one_run(work, server.base_url, c))
    for c, rs in runs.items():
        cpus, walls, totals = zip(*rs)
        results[c] = {
            "cpu_to_first_call_s_median": round(statistics.median(cpus), 3),
            "cpu_to_first_call_s_best": round(min(cpus), 3),
            "wall_to_first_call_s_median": round(statistics.median(walls), 3),
            "process_cpu_s_median": round(statistics.median(totals), 3),
            "ok": statistics.median(cpus) <= TARGET_CPU_S if c == "pool" else None,
        }
    if args.json:
        print(json.dumps({"reps": args.reps, "target_cpu_s": TARGET_CPU_S, **results}))
    else:
        print(f"`agentsproof eval` to the first model call, {args.reps} runs each (median / best)")
        for c, r in results.items():
            verdict = {True: "ok", False: "MISSED", None: "(not the default path)"}[r["ok"]]
            print(
                f"  transport {c:5s}  CPU {r['cpu_to_first_call_s_median']:.3f} / {r['cpu_to_first_call_s_best']:.3f} s"
                f"   wall {r['wall_to_first_call_s_median']:.3f} s   whole process CPU {r['process_cpu_s_median']:.3f} s"
                f"   target <= {TARGET_CPU_S} s: {verdict}"
            )
    return 0 if all(r["ok"] is not False for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
