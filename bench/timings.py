"""How soon things stop: the speed checks that used to be timing assertions in the tests.

The tests assert the behaviour (a trace is queued, not sent; a hung server ends in a spooled
run; a timed-out agent's whole group is gone; a stalled judge errors the trial). Whether it
happens *soon enough* is measured here, each case as a ratio to the limit it is measured
against within the same run (a configured timeout or deadline, the scripted server's
delay, or a plain run of the same thing), so the figure does not depend on the machine:

| case | measured | reference | target |
|---|---|---|---|
| `sdk-trace` | 12 `run.trace` calls, the server taking 0.1 s a request | one server delay | < 1 (none waited) |
| `sdk-submit-full` | a `submit` refused by a full worker queue | a `submit` accepted by an empty one | < 20 |
| `sdk-flush-deadline` | `flush(0.2)` with the worker blocked | the deadline, 0.2 s | 0.75 – 10 |
| `sdk-offline` | `complete()` with nothing listening (spools) | the client timeout, 2 s | < 2.5 |
| `sdk-hung-server` | `complete()` on a server that never answers | the client timeout, 2 s | < 1.5 |
| `group-timeout` | `run_group` of an agent that sleeps, with a 1 s timeout | the timeout | < 6 |
| `group-leftover` | `run_group` of an agent that exits leaving a child on its stdout | `KILL_GRACE_S` | < 3 |
| `group-setsid` | `run_group` of an agent whose child, in a session of its own, holds its stdout | `PIPE_DRAIN_S`, 2 s | < 15 |
| `judge-timeout` | `agentsproof eval`, the judge 10 s late, the eval's timeout 1 s | the same eval, the judge on time | extra < 7 × timeout |
| `trial-retry` | `agentsproof eval`, the first trial call 10 s late, the eval's timeout 2 s (the retry answers) | the same eval, every call on time | extra < 1 × timeout |
| `trial-budget` | `agentsproof eval`, every trial call 10 s late, the eval's timeout 1 s (one trial per arm) | the same eval, every call on time | extra < 4 × timeout |
| `regex-re2` | a backtracking pattern (`(a+)+$`) on 41 characters, on RE2 | `PY_REGEX_TIME_LIMIT`, 1 s | < 1 (never cut off) |
| `regex-cutoff` | a pattern RE2 cannot run, cut off by a 0.5 s limit | the limit | < 10 |
| `power-search` | `runs_needed(0.9, 0.8)`: every size up to 100, tables uncached | a budget of 5 s | < 1 |

"extra" is the measured run less the reference run. The command, claude-code and codex
targets and the script grader stop their agents through
`core.procgroup.run_group`, measured directly here. Exit status 1 when a case misses its
target.

    python bench/timings.py [--reps 3] [--json] [--only CASE ...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "sdk"))

from openai_server import Rule, ScriptedServer  # noqa: E402
from sdk_recorder import HungServer, RecordingServer  # noqa: E402

from agentsproof import AgentsProof  # noqa: E402
from agentsproof.core import procgroup  # noqa: E402
from agentsproof.sdk.worker import BackgroundWorker  # noqa: E402

Case = Callable[[Path], tuple[float, float]]
"""A case returns (measured seconds, reference seconds)."""


def sdk_trace(tmp: Path) -> tuple[float, float]:
    rec = RecordingServer(delay=0.1).start()
    try:
        ap = AgentsProof(api_key="k", base_url=rec.base_url, spool_dir=tmp / "spool")
        run = ap.start_run(project_slug="p", input="q")
        t0 = time.perf_counter()
        for i in range(12):
            run.trace("tool_call", f"t{i}", lambda: i)
        took = time.perf_counter() - t0
        run.complete("done")
        return took, rec.delay
    finally:
        rec.stop()


def sdk_submit_full(tmp: Path) -> tuple[float, float]:
    gate, started = threading.Event(), threading.Event()
    w = BackgroundWorker(queue_size=2)
    try:
        t0 = time.perf_counter()
        w.submit(lambda: (started.set(), gate.wait()))
        accepted = time.perf_counter() - t0
        started.wait(30)
        w.submit(lambda: None)
        w.submit(lambda: None)
        t0 = time.perf_counter()
        assert w.submit(lambda: None) is False
        refused = time.perf_counter() - t0
        return refused, accepted
    finally:
        gate.set()
        w.flush(5)


def sdk_flush_deadline(tmp: Path) -> tuple[float, float]:
    gate = threading.Event()
    w = BackgroundWorker()
    try:
        w.submit(gate.wait)
        w.submit(lambda: None)
        t0 = time.perf_counter()
        assert w.flush(0.2) == 2
        return time.perf_counter() - t0, 0.2
    finally:
        gate.set()
        w.flush(5)


def _dead_url() -> str:
    srv = RecordingServer().start()
    url = srv.base_url
    srv.stop()
    return url


def sdk_offline(tmp: Path) -> tuple[float, float]:
    ap = AgentsProof(api_key="k", base_url=_dead_url(), timeout=2.0, spool_dir=tmp / "spool")
    run = ap.start_run(project_slug="p", input={"q": 1}, client_run_id="offline")
    t0 = time.perf_counter()
    run.trace("tool_call", "search", lambda: {"hits": 1}, input="q")
    run.log_step({"type": "llm_call", "name": "m", "output": "answer"})
    res = run.complete({"answer": 42})
    took = time.perf_counter() - t0
    assert res["spooled"], res
    return took, 2.0


def sdk_hung_server(tmp: Path) -> tuple[float, float]:
    hung = HungServer()
    try:
        ap = AgentsProof(api_key="k", base_url=hung.url, timeout=2.0, spool_dir=tmp / "spool")
        run = ap.start_run(project_slug="p", input="q", client_run_id="hung")
        for i in range(5):
            run.log_step(type="llm_call", name=f"s{i}")
        t0 = time.perf_counter()
        res = run.complete("out")
        took = time.perf_counter() - t0
        assert res["publicUrl"] is None and res["spooled"], res
        return took, 2.0
    finally:
        hung.close()


ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def group_timeout(tmp: Path) -> tuple[float, float]:
    t0 = time.perf_counter()
    out = asyncio.run(procgroup.run_group(["/bin/sh", "-c", "sleep 1000 & wait"], cwd=tmp, env=ENV, stdin_text=None, timeout=1.0))
    took = time.perf_counter() - t0
    assert out.timed_out
    return took, 1.0


def group_leftover(tmp: Path) -> tuple[float, float]:
    t0 = time.perf_counter()
    out = asyncio.run(procgroup.run_group(["/bin/sh", "-c", "sleep 1000 & echo done"], cwd=tmp, env=ENV, stdin_text=None, timeout=60))
    took = time.perf_counter() - t0
    assert out.stdout == b"done\n" and out.notes, out
    return took, procgroup.KILL_GRACE_S


def group_setsid(tmp: Path) -> tuple[float, float]:
    script = "setsid sh -c 'echo from-escaped; exec sleep 1000' & sleep 0.2; echo done"
    t0 = time.perf_counter()
    out = asyncio.run(procgroup.run_group(["/bin/sh", "-c", script], cwd=tmp, env=ENV, stdin_text=None, timeout=60))
    took = time.perf_counter() - t0
    assert b"done" in out.stdout and any("session of their own" in n for n in out.notes), out
    return took, procgroup.PIPE_DRAIN_S


JUDGED_EVAL = """\
version: "2"
skill: SKILL.md
defaults: {trials: 1, timeout: 1.0, threshold: 0.5}
task:
  name: bench
  instruction: Say hello.
  graders:
    - type: llm_rubric
      rubric: says hello
"""


def _eval_seconds(tmp: Path, judge_delay: float, exit_code: int) -> float:
    skill = tmp / f"plugin-{judge_delay:g}" / "skills" / "greeter"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("You are the greeter skill.\n")
    (skill / "eval.yaml").write_text(JUDGED_EVAL)
    with ScriptedServer() as srv:
        srv.add(Rule(reply='{"score": 1, "reasoning": "judged"}', judge=True, delay=judge_delay), Rule(reply="hello", judge=False))
        env = {**os.environ, "AGENTSPROOF_PROVIDER_TYPE": "openai", "AGENTSPROOF_PROVIDER_URL": srv.base_url,
               "AGENTSPROOF_PROVIDER_KEY": "bench-key", "AGENTSPROOF_NO_CACHE": "1", "AGENTSPROOF_RETRY_BASE_DELAY": "0"}
        env.pop("CI", None)
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "agentsproof", "eval", str(skill / "eval.yaml"), "--model", "m", "--output", str(tmp / "runs")],
                              env=env, capture_output=True, text=True, timeout=300, cwd=tmp)
        took = time.perf_counter() - t0
    assert done.returncode == exit_code, (judge_delay, done.returncode, done.stderr[-2000:])
    return took


TRIAL_EVAL = """\
version: "2"
skill: SKILL.md
defaults: {trials: 1, timeout: TIMEOUT, threshold: 0.5}
task:
  name: bench
  instruction: Say hello.
  graders:
    - type: deterministic
      checks: {mustContain: ["hello"]}
"""


def _trial_seconds(tmp: Path, name: str, timeout: float, rules: list[Rule]) -> tuple[float, dict]:
    skill = tmp / name / "skills" / "greeter"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("You are the greeter skill.\n")
    (skill / "eval.yaml").write_text(TRIAL_EVAL.replace("TIMEOUT", str(timeout)))
    with ScriptedServer() as srv:
        srv.add(*rules)
        env = {**os.environ, "AGENTSPROOF_PROVIDER_TYPE": "openai", "AGENTSPROOF_PROVIDER_URL": srv.base_url,
               "AGENTSPROOF_PROVIDER_KEY": "bench-key", "AGENTSPROOF_NO_CACHE": "1", "AGENTSPROOF_RETRY_BASE_DELAY": "0"}
        env.pop("CI", None)
        out = tmp / f"runs-{name}"
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "agentsproof", "eval", str(skill / "eval.yaml"), "--model", "m", "--output", str(out)],
                       env=env, capture_output=True, text=True, timeout=300, cwd=tmp)
        took = time.perf_counter() - t0
    report = json.loads((out / name / "greeter-eval.json").read_text())
    return took, report["items"][0]


def trial_retry(tmp: Path) -> tuple[float, float]:
    on_time, _ = _trial_seconds(tmp, "on-time", 2.0, [Rule(reply="hello")])
    late, item = _trial_seconds(tmp, "late-once", 2.0, [Rule(reply="hello", delay=10, times=1), Rule(reply="hello")])
    assert item["with_arm"]["errored"] == 0 and item["without_arm"]["errored"] == 0, item  # the retry answered
    return late - on_time, 2.0


def trial_budget(tmp: Path) -> tuple[float, float]:
    on_time, _ = _trial_seconds(tmp, "on-time", 1.0, [Rule(reply="hello")])
    late, item = _trial_seconds(tmp, "always-late", 1.0, [Rule(reply="hello", delay=10)])
    assert item["with_arm"]["errored"] == 1 and item["without_arm"]["errored"] == 1, item
    return late - on_time, 1.0


def regex_re2(tmp: Path) -> tuple[float, float]:
    from agentsproof.grading import regex

    t0 = time.perf_counter()
    out = regex.search(r"(a+)+$", "a" * 40 + "!")
    took = time.perf_counter() - t0
    assert out.engine == "re2" and out.span is None and out.error is None, out
    return took, regex.PY_REGEX_TIME_LIMIT


def regex_cutoff(tmp: Path) -> tuple[float, float]:
    from agentsproof.grading import regex

    os.environ["AGENTSPROOF_REGEX_TIME_LIMIT"] = "0.5"
    try:
        t0 = time.perf_counter()
        out = regex.search(r"(a+)+(?=b)", "a" * 60)
        took = time.perf_counter() - t0
    finally:
        del os.environ["AGENTSPROOF_REGEX_TIME_LIMIT"]
    assert out.span is None and "cut off after 0.5 s" in (out.error or ""), out
    return took, 0.5


def power_search(tmp: Path) -> tuple[float, float]:
    from agentsproof.stats.power import fisher_table, runs_needed

    fisher_table.cache_clear()
    t0 = time.perf_counter()
    res = runs_needed(0.9, 0.8)
    took = time.perf_counter() - t0
    assert res.runs is None and res.achieved < 0.8, res
    return took, 5.0


def judge_timeout(tmp: Path) -> tuple[float, float]:
    on_time = _eval_seconds(tmp, 0.0, 0)
    late = _eval_seconds(tmp, 10.0, 30)  # the trial errored (judge timeout): exit 30
    return late - on_time, 1.0  # the extra a stalled judge costs, against the eval's timeout


CASES: dict[str, tuple[Case, float | None, float]] = {
    # name: (case, lowest ratio, highest ratio)
    "sdk-trace": (sdk_trace, None, 1.0),
    "sdk-submit-full": (sdk_submit_full, None, 20.0),
    "sdk-flush-deadline": (sdk_flush_deadline, 0.75, 10.0),
    "sdk-offline": (sdk_offline, None, 2.5),
    "sdk-hung-server": (sdk_hung_server, None, 1.5),
    "group-timeout": (group_timeout, None, 6.0),
    "group-leftover": (group_leftover, None, 3.0),
    "group-setsid": (group_setsid, None, 15.0),
    "judge-timeout": (judge_timeout, None, 7.0),
    "trial-retry": (trial_retry, None, 1.0),
    "trial-budget": (trial_budget, None, 4.0),
    "regex-re2": (regex_re2, None, 1.0),
    "regex-cutoff": (regex_cutoff, None, 10.0),
    "power-search": (power_search, None, 1.0),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each case; the median ratio is judged")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    ap.add_argument("--only", nargs="*", choices=sorted(CASES), help="run only these cases")
    args = ap.parse_args()
    rows = []
    for name, (case, lo, hi) in CASES.items():
        if args.only and name not in args.only:
            continue
        ratios, measured, reference = [], [], []
        for _ in range(args.reps):
            with tempfile.TemporaryDirectory(prefix="agentsproof-timings-", ignore_cleanup_errors=True) as tmp:  # the SDK may still be spooling
                m, r = case(Path(tmp))
            measured.append(m)
            reference.append(r)
            ratios.append(m / r if r > 0 else float("inf"))
        ratio = statistics.median(ratios)
        ok = (lo is None or ratio >= lo) and ratio <= hi
        target = f"{lo:g}–{hi:g}" if lo is not None else f"< {hi:g}"
        rows.append({"case": name, "measured_s": statistics.median(measured), "reference_s": statistics.median(reference),
                     "ratio": ratio, "target": target, "ok": ok})
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(f"{'case':<20} {'measured':>10} {'reference':>10} {'ratio':>8}  target    ok")
        for r in rows:
            print(f"{r['case']:<20} {r['measured_s']:>9.4f}s {r['reference_s']:>9.4f}s {r['ratio']:>8.3f}  {r['target']:<8}  {'yes' if r['ok'] else 'NO'}")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
