"""Throughput of the harness: 1,000 LLM calls through `agentsproof eval-all`.

The scripted OpenAI-compatible server (tests/openai_server.py) runs as its own process
with a fixed latency per call, so its CPU is not counted. The harness runs exactly as a
user runs it - `python -m agentsproof eval-all DIR --parallel 50` - in a child process,
and its wall time and CPU time (user + system, from wait4) are measured.

Ideal wall time is calls x latency / parallel (1,000 x 50 ms / 50 = 1.0 s); the ratio
to it shows how much the harness adds. Targets: whole process <= 2.5 s, <= 1 ms CPU per
call. A separate run of only the imports shows the fixed start-up share.

    python bench/throughput.py [--calls 1000] [--latency 0.05] [--parallel 50] [--items 10]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "openai_server.py"

TARGET_WALL_S = 2.5
TARGET_CPU_PER_CALL_S = 0.001

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


def start_server(latency: float, workdir: Path) -> tuple[subprocess.Popen, int]:
    port_file = workdir / "port"
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--port", "0", "--latency", str(latency), "--port-file", str(port_file)],
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


def timed_child(args: list[str], env: dict[str, str]) -> tuple[int, float, float, str]:
    """Run a child; returns (exit code, wall s, CPU s of that child alone, stderr)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # wait4 gives the rusage of exactly this child (not the server, which is still running)
    stderr_bytes = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, wall, usage.ru_utime + usage.ru_stime, stderr_bytes.decode(errors="replace")


SDK_ALONE = """
import asyncio, os, sys
import openai

async def main(calls, parallel):
    client = openai.AsyncOpenAI(base_url=os.environ["AGENTSPROOF_PROVIDER_URL"], api_key="sk-bench", max_retries=0,
                                http_client=openai.DefaultAioHttpClient())
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=1000, help="LLM calls in total (both arms of every item)")
    ap.add_argument("--latency", type=float, default=0.05, help="server latency per call, seconds")
    ap.add_argument("--parallel", type=int, default=50)
    ap.add_argument("--items", type=int, default=10, help="eval.yaml files the calls are spread over")
    ap.add_argument("--json", action="store_true", help="print the numbers as one JSON object")
    args = ap.parse_args()
    if args.calls % (2 * args.items):
        raise SystemExit("--calls must be a multiple of 2 x --items")
    trials = args.calls // (2 * args.items)

    with tempfile.TemporaryDirectory(prefix="agentsproof-bench-") as tmp:
        work = Path(tmp)
        plugin = write_plugin(work, args.items)
        server, port = start_server(args.latency, work)
        try:
            env = dict(os.environ)
            env.update(
                AGENTSPROOF_PROVIDER_TYPE="openai",
                AGENTSPROOF_PROVIDER_URL=f"http://127.0.0.1:{port}/v1",
                AGENTSPROOF_PROVIDER_KEY="sk-bench",
                AGENTSPROOF_MODEL="bench-model",
                PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
            )
            # fixed cost: interpreter start-up and the imports a run needs
            _, import_wall, import_cpu, _ = timed_child(
                [sys.executable, "-c", "import agentsproof.cli, agentsproof.commands, agentsproof.llm.openai_compat"], env
            )
            out = work / "runs"
            cmd = [
                sys.executable, "-m", "agentsproof", "eval-all", str(plugin),
                "--trials", str(trials), "--parallel", str(args.parallel),
                "--output", str(out), "--abort-after", "0",
            ]  # fmt: skip
            code, wall, cpu, stderr = timed_child(cmd, env)
            # side by side: the same calls through the bare official SDK, no harness at all
            sdk_code, sdk_wall, sdk_cpu, sdk_err = timed_child(
                [sys.executable, "-c", SDK_ALONE, str(args.calls), str(args.parallel)], env
            )
            if sdk_code != 0:
                print(sdk_err, file=sys.stderr)
        finally:
            server.terminate()
            server.wait(timeout=10)

        if code != 0:
            print(stderr, file=sys.stderr)
            raise SystemExit(f"harness exited {code}")
        report = json.loads((out / "bench-plugin" / "eval-all-summary.json").read_text())
        scored = sum(i["with_arm"]["scored"] + i["without_arm"]["scored"] for i in report["items"])
        errored = sum(i["with_arm"]["errored"] + i["without_arm"]["errored"] for i in report["items"])
        if scored != args.calls or errored:
            raise SystemExit(f"expected {args.calls} scored trials, got {scored} scored, {errored} errored")

    ideal = args.calls * args.latency / args.parallel
    result = {
        "calls": args.calls,
        "parallel": args.parallel,
        "latency_s": args.latency,
        "ideal_wall_s": round(ideal, 3),
        "wall_s": round(wall, 3),
        "ratio_to_ideal": round(wall / ideal, 2),
        "cpu_s": round(cpu, 3),
        "cpu_per_call_ms": round(cpu / args.calls * 1000, 3),
        "startup_wall_s": round(import_wall, 3),
        "startup_cpu_s": round(import_cpu, 3),
        "cpu_per_call_after_startup_ms": round(max(0.0, cpu - import_cpu) / args.calls * 1000, 3),
        "sdk_alone_wall_s": round(sdk_wall, 3),
        "sdk_alone_cpu_s": round(sdk_cpu, 3),
        "sdk_alone_cpu_per_call_ms": round(sdk_cpu / args.calls * 1000, 3),
        "harness_to_sdk_cpu_ratio": round(cpu / sdk_cpu, 2) if sdk_cpu else None,
        "wall_ok": wall <= TARGET_WALL_S,
        "cpu_ok": cpu / args.calls <= TARGET_CPU_PER_CALL_S,
    }
    if args.json:
        print(json.dumps(result))
    else:
        ok = lambda b: "ok" if b else "MISSED"  # noqa: E731
        print(f"calls {args.calls} · parallel {args.parallel} · server latency {args.latency * 1000:.0f} ms")
        print(f"wall time        {wall:6.2f} s   ideal {ideal:.2f} s   ratio {wall / ideal:.2f}x   target <= {TARGET_WALL_S} s: {ok(result['wall_ok'])}")
        print(f"harness CPU      {cpu:6.2f} s   {cpu / args.calls * 1000:.3f} ms/call   target <= 1 ms/call: {ok(result['cpu_ok'])}")
        print(f"  of which start-up (interpreter + imports) {import_cpu:.2f} s CPU, {import_wall:.2f} s wall;"
              f" {result['cpu_per_call_after_startup_ms']:.3f} ms/call after it")
        print(f"official openai SDK alone, same calls: {sdk_wall:.2f} s wall, {sdk_cpu:.2f} s CPU"
              f" ({sdk_cpu / args.calls * 1000:.3f} ms/call incl. its start-up);"
              f" harness/SDK CPU ratio {result['harness_to_sdk_cpu_ratio']}x")
    return 0 if result["wall_ok"] and result["cpu_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
