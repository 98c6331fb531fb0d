"""Throughput of the harness: 1,000 LLM calls through `agentsproof eval-all` on each
transport of the OpenAI-compatible client, beside the bare openai SDK on its two transports
(aiohttp, httpx) and (with --with-promptfoo) promptfoo.

The scripted OpenAI-compatible server (tests/openai_server.py) runs as its own process
(default latency 0 ms), so its CPU is not counted. The harness runs exactly as a user runs
it - `python -m agentsproof eval-all DIR --parallel 50` - in a child process, once per
configuration of CONFIGS (`--paths`: the pooled transport of llm/http_pool.py, the default,
and httpx's own, `AGENTSPROOF_HTTP_TRANSPORT=httpx`), and its wall time and CPU time (user +
system, from wait4) are measured. A child that only imports what a run needs gives the fixed
start-up share; CPU per call is shown with and without it. The bare SDK makes the same calls
with no harness at all (no grading, statistics or reports): a transport of the library that
costs more than the whole harness on ours does not pay for itself.

Every tool runs in the same round, interleaved, --reps times; medians are printed, and
ratios are taken between numbers of the same round. Targets: <= 1 ms harness CPU per call
(pooled transport, at 0 ms latency); with --with-promptfoo, agentsproof's wall time <= 0.25
of promptfoo's on the same workload (10 prompts x 2 arms x 50 repeats, a `contains` check,
cache off, 50 at a time). promptfoo is installed from npm into bench/.promptfoo/ (gitignored).

The harness's modules are compiled to bytecode first, as an install does (``--source``: not).

With ``--latency`` above 0 the wall time is also compared with its floor (every call
waits the latency, ``--parallel`` at a time: 1,000 calls at 50 ms, 50 at a time = 1.0 s;
target <= 1.2x). The model server is bench/fast_server.py (``--server fast``, one asyncio
loop; its CPU stays out of the measurement) or the tests' scripted one (``--server scripted``).

    python bench/throughput.py [--calls 1000] [--latency 0] [--parallel 50] [--items 10] [--reps 3] [--paths pool,httpx]
                                [--with-promptfoo] [--server fast|scripted] [--source]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from promptfoo_side import promptfoo_run  # noqa: E402

SERVERS = {"fast": ROOT / "bench" / "fast_server.py", "scripted": ROOT / "tests" / "openai_server.py"}
"""``--server``: the minimal asyncio server (bench/fast_server.py, the default: its own CPU
stays out of the way) or the tests' scripted one (``ThreadingHTTPServer``, as measured before 2026-12-02)."""
TARGET_FLOOR_RATIO = 1.2
TARGET_CPU_PER_CALL_S = 0.001
TARGET_PROMPTFOO_RATIO = 0.25

EVAL_YAML = """\
version: "2"
skill: SKILL.md
defaults:
  trials: 1
  timeout: 60
  threshold: 0.5
task:
  name: bench
  instruction: Reply with OK.
  graders:
    - type: deterministic
      checks:
        mustContain: ["OK"]
        mustNotContain: ["ERROR"]
        regexMatch: ["^O"]
"""

CONFIGS: dict[str, dict[str, str]] = {
    "pool": {"AGENTSPROOF_HTTP_TRANSPORT": ""},
    "httpx": {"AGENTSPROOF_HTTP_TRANSPORT": "httpx"},
}
"""The harness configurations compared: the OpenAI-compatible client on the pooled
transport (``llm/http_pool.py``, the default) and on httpx's own (what a proxy gets). The
library transports without the harness are the bare SDK runs (``SDK_ALONE``)."""

IMPORTS = {
    "pool": "import agentsproof.cli, agentsproof.commands.run, agentsproof.llm.openai_http",
    "httpx": "import agentsproof.cli, agentsproof.commands.run, agentsproof.llm.openai_http",
}

SDK_ALONE = """
import asyncio, os, sys
import openai

async def main(calls, parallel):
    http_client = openai.DefaultAioHttpClient() if sys.argv[3] == "aiohttp" else openai.DefaultAsyncHttpxClient()
    client = openai.AsyncOpenAI(base_url=os.environ["AGENTSPROOF_PROVIDER_URL"], api_key="sk-bench", max_retries=0,
                                http_client=http_client)
    sem = asyncio.Semaphore(parallel)
    async def one():
        async with sem:
            r = await client.chat.completions.create(model="bench-model", messages=[
                {"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "Reply with OK."}])
            assert r.choices[0].message.content
    await asyncio.gather(*(one() for _ in range(calls)))
    await client.close()

asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
"""


def compile_bytecode() -> None:
    """The harness's modules compiled to bytecode once, before any round, as an install does
    (pip writes the .pyc files): with PYTHONDONTWRITEBYTECODE set in the environment, every
    child would otherwise compile the package from source on each run, ~0.1 s of CPU that
    an installed copy never pays. ``--source`` skips it (the figures before 2026-12-06)."""
    import compileall

    compileall.compile_dir(str(ROOT / "agentsproof"), quiet=1)


def start_server(latency: float, workdir: Path, kind: str = "fast", extra: list[str] | None = None) -> tuple[subprocess.Popen, int]:
    port_file = workdir / "port"
    proc = subprocess.Popen(
        [sys.executable, str(SERVERS[kind]), "--port", "0", "--latency", str(latency), "--port-file", str(port_file), *(extra or [])],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if port_file.exists() and port_file.read_text().strip():
            return proc, int(port_file.read_text())
        if proc.poll() is not None:
            raise SystemExit(f"server exited: {proc.stderr.read().decode() if proc.stderr else ''}")
        time.sleep(0.02)
    proc.kill()
    raise SystemExit("server did not start within 15 s")


def write_plugin(root: Path, items: int) -> Path:
    plugin = root / "bench-plugin"
    for i in range(items):
        d = plugin / "skills" / f"skill-{i:02d}"
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(f"You are skill {i}. Answer tersely.\n")
        (d / "eval.yaml").write_text(EVAL_YAML)
    return plugin


def eval_all_report(work: Path, trials: int, items: int = 10, replies: str | None = None) -> Path:
    """A real ``eval-all`` report of ``trials`` trials (``items`` skills, both arms) against the
    fast scripted server at 0 ms, made in ``work``: the JSON summary's path (its HTML beside it).
    What the report benchmarks (report_open.py, verify.py) measure. ``replies``: the server's
    ``--replies`` (trials that score differently); None: every reply "OK" (every trial 1.00)."""
    plugin = write_plugin(work, items)
    server, port = start_server(0.0, work, extra=["--replies", replies] if replies else None)
    env = dict(os.environ)
    env.update(
        AGENTSPROOF_PROVIDER_TYPE="openai", AGENTSPROOF_PROVIDER_URL=f"http://127.0.0.1:{port}/v1",
        AGENTSPROOF_PROVIDER_KEY="sk-bench", AGENTSPROOF_MODEL="bench-model",
        PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
    )  # fmt: skip
    out = work / "runs"
    try:
        cmd = [sys.executable, "-m", "agentsproof", "eval-all", str(plugin), "--trials", str(trials // (2 * items)), "--parallel", "50",
               "--output", str(out), "--abort-after", "0", "--no-cache"]  # fmt: skip
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=work)
        if done.returncode != 0:
            raise SystemExit(f"eval-all exited {done.returncode}: {done.stderr[-2000:]}")
    finally:
        server.terminate()
        server.wait(timeout=10)
    return out / "bench-plugin" / "eval-all-summary.json"


def timed_child(args: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[int, float, float, str]:
    """Run a child; returns (exit code, wall s, CPU s of that child and its waited-for children, stderr)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # wait4 gives the rusage of exactly this child (not the server, which is still running)
    stderr_bytes = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    return os.waitstatus_to_exitcode(status), wall, usage.ru_utime + usage.ru_stime, stderr_bytes.decode(errors="replace")


def harness_run(path: str, plugin: Path, out: Path, args: argparse.Namespace, env: dict[str, str]) -> dict[str, float]:
    trials = args.calls // (2 * args.items)
    env = {**env, **CONFIGS[path]}
    _, _, import_cpu, _ = timed_child([sys.executable, "-c", IMPORTS[path]], env)
    cmd = [
        sys.executable, "-m", "agentsproof", "eval-all", str(plugin),
        "--trials", str(trials), "--parallel", str(args.parallel),
        "--output", str(out), "--abort-after", "0", "--no-cache",
    ]  # fmt: skip
    code, wall, cpu, stderr = timed_child(cmd, env)
    if code != 0:
        raise SystemExit(f"harness ({path}) exited {code}: {stderr[-2000:]}")
    report = json.loads((out / "bench-plugin" / "eval-all-summary.json").read_text())
    scored = sum(i["with_arm"]["scored"] + i["without_arm"]["scored"] for i in report["items"])
    errored = sum(i["with_arm"]["errored"] + i["without_arm"]["errored"] for i in report["items"])
    if scored != args.calls or errored:
        raise SystemExit(f"{path}: expected {args.calls} scored trials, got {scored} scored, {errored} errored")
    return {"wall_s": wall, "cpu_s": cpu, "startup_cpu_s": import_cpu}


def median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=1000, help="LLM calls in total (both arms of every item)")
    ap.add_argument("--latency", type=float, default=0.0, help="server latency per call, seconds")
    ap.add_argument("--parallel", type=int, default=50)
    ap.add_argument("--items", type=int, default=10, help="eval.yaml files the calls are spread over")
    ap.add_argument("--reps", type=int, default=3, help="rounds; every tool runs once per round, interleaved")
    ap.add_argument("--paths", default=",".join(CONFIGS), help=f"harness configurations, comma-separated: {', '.join(CONFIGS)}")
    ap.add_argument("--with-promptfoo", action="store_true", help="also run promptfoo (npm install into bench/.promptfoo/ on first use)")
    ap.add_argument("--server", choices=list(SERVERS), default="fast", help="the model server: bench/fast_server.py or tests/openai_server.py")
    ap.add_argument("--json", action="store_true", help="print the numbers as one JSON object")
    ap.add_argument("--source", action="store_true", help="do not compile the harness's bytecode first (see compile_bytecode)")
    args = ap.parse_args()
    if args.calls % (2 * args.items):
        raise SystemExit("--calls must be a multiple of 2 x --items")
    paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    if not paths or any(p not in CONFIGS for p in paths):
        raise SystemExit(f"--paths: choose from {', '.join(CONFIGS)}")
    base = paths[0]
    bare = ("aiohttp", "httpx")

    if not args.source:
        compile_bytecode()
    runs: dict[str, list[dict[str, float]]] = {**{p: [] for p in paths}, **{f"sdk_alone_{t}": [] for t in bare}, "promptfoo": []}
    with tempfile.TemporaryDirectory(prefix="agentsproof-bench-") as tmp:
        work = Path(tmp)
        plugin = write_plugin(work, args.items)
        server, port = start_server(args.latency, work, args.server)
        try:
            env = dict(os.environ)
            env.update(
                AGENTSPROOF_PROVIDER_TYPE="openai",
                AGENTSPROOF_PROVIDER_URL=f"http://127.0.0.1:{port}/v1",
                AGENTSPROOF_PROVIDER_KEY="sk-bench",
                AGENTSPROOF_MODEL="bench-model",
                PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
            )
            for rep in range(args.reps):
                for path in paths:
                    runs[path].append(harness_run(path, plugin, work / f"runs-{path}-{rep}", args, env))
                for transport in bare:
                    cmd = [sys.executable, "-c", SDK_ALONE, str(args.calls), str(args.parallel), transport]
                    code, wall, cpu, err = timed_child(cmd, env)
                    if code != 0:
                        raise SystemExit(f"bare SDK run ({transport}) exited {code}: {err[-2000:]}")
                    runs[f"sdk_alone_{transport}"].append({"wall_s": wall, "cpu_s": cpu})
                if args.with_promptfoo:
                    runs["promptfoo"].append(promptfoo_run(work, plugin, port, args, rep))
        finally:
            server.terminate()
            server.wait(timeout=10)

    result: dict[str, Any] = {"calls": args.calls, "parallel": args.parallel, "latency_s": args.latency, "reps": args.reps, "server": args.server}
    for path in paths:
        wall, cpu, start = (median(runs[path], k) for k in ("wall_s", "cpu_s", "startup_cpu_s"))
        result[path] = {
            "wall_s": round(wall, 3),
            "cpu_s": round(cpu, 3),
            "cpu_per_call_ms": round(cpu / args.calls * 1000, 3),
            "startup_cpu_s": round(start, 3),
            "cpu_per_call_after_startup_ms": round(max(0.0, cpu - start) / args.calls * 1000, 3),
            # this configuration's CPU ÷ the first one's, per round (same round, same load), median
            f"cpu_to_{base}": round(statistics.median(r["cpu_s"] / b["cpu_s"] for r, b in zip(runs[path], runs[base], strict=True)), 3),
            f"cpu_to_{base}_per_round": [round(r["cpu_s"] / b["cpu_s"], 3) for r, b in zip(runs[path], runs[base], strict=True)],
        }
    for transport in bare:
        key = f"sdk_alone_{transport}"
        result[key] = {k: round(median(runs[key], k), 3) for k in ("wall_s", "cpu_s")}
    per_call = result[base]["cpu_per_call_after_startup_ms"]
    result["cpu_ok"] = per_call <= TARGET_CPU_PER_CALL_S * 1000
    # the floor: every call waits the latency, ``parallel`` at a time (0 ms: no floor to compare with)
    floor = math.ceil(args.calls / args.parallel) * args.latency
    if floor:
        result["floor_s"] = round(floor, 3)
        result["wall_to_floor"] = round(result[base]["wall_s"] / floor, 3)
        result["floor_ok"] = result["wall_to_floor"] <= TARGET_FLOOR_RATIO
    if runs["promptfoo"]:
        result["promptfoo"] = {k: round(median(runs["promptfoo"], k), 3) for k in ("wall_s", "cpu_s")}
        ratios = [h["wall_s"] / p["wall_s"] for h, p in zip(runs[base], runs["promptfoo"], strict=True)]
        result["wall_to_promptfoo_ratio"] = round(statistics.median(ratios), 3)
        result["wall_to_promptfoo_ratios"] = [round(r, 3) for r in ratios]
        result["promptfoo_ok"] = statistics.median(ratios) <= TARGET_PROMPTFOO_RATIO
    ok = result["cpu_ok"] and result.get("promptfoo_ok", True) and result.get("floor_ok", True)
    if args.json:
        print(json.dumps(result))
        return 0 if ok else 1
    verdict = lambda b: "ok" if b else "MISSED"  # noqa: E731
    print(f"calls {args.calls} · parallel {args.parallel} · server latency {args.latency * 1000:.0f} ms · median of {args.reps} interleaved rounds")
    for path in paths:
        r = result[path]
        print(
            f"agentsproof ({path:11s}) wall {r['wall_s']:6.2f} s   CPU {r['cpu_s']:5.2f} s = {r['cpu_per_call_ms']:.3f} ms/call;"
            f" start-up {r['startup_cpu_s']:.2f} s, {r['cpu_per_call_after_startup_ms']:.3f} ms/call after it;"
            f" CPU ÷ {base} {r[f'cpu_to_{base}']} (rounds {r[f'cpu_to_{base}_per_round']})"
        )
    for transport in bare:
        sa = result[f"sdk_alone_{transport}"]
        print(f"bare openai SDK ({transport:7s}) wall {sa['wall_s']:6.2f} s   CPU {sa['cpu_s']:5.2f} s (same calls, no harness)")
    print(f"target <= 1 ms harness CPU per call ({base}, after start-up): {verdict(result['cpu_ok'])}")
    if floor:
        print(f"wall ÷ the {floor:.2f} s floor ({base}): {result['wall_to_floor']}   target <= {TARGET_FLOOR_RATIO}: {verdict(result['floor_ok'])}")
    if runs["promptfoo"]:
        pf = result["promptfoo"]
        print(f"promptfoo          wall {pf['wall_s']:6.2f} s   CPU {pf['cpu_s']:5.2f} s (same workload)")
        print(
            f"agentsproof ÷ promptfoo wall time (per round): {result['wall_to_promptfoo_ratios']}, median {result['wall_to_promptfoo_ratio']}"
            f"   target <= {TARGET_PROMPTFOO_RATIO}: {verdict(result['promptfoo_ok'])}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
