"""``--executor ray`` on 1 node and on 3 local nodes with the same slots per node (issue 48).

``--kind chat``: chat trials that wait on a scripted model with latency (``--latency`` s a
call, the scripted server of tests/openai_server.py on 127.0.0.1), ``eval-all`` over
``--items`` skills. ``--kind container``: agent-bound container trials: a command-target
agent in a fresh container of the tests' base image (``allow_internet: true``, so
``--network host``) that sends one chat request to the scripted model with bash's
``/dev/tcp`` and waits ``--latency`` s for its reply; each node starts its containers in
the engine at DOCKER_HOST (on this machine all nodes share it).

The command runs as a user runs it (``agentsproof eval-all|eval ... --executor ray
--ray-address ADDR --parallel N*SLOTS``), in a child process (this file with ``--driver``),
against a real local Ray cluster (``ray.cluster_utils.Cluster``, every node on 127.0.0.1
with ``--slots`` ``agentsproof_trial`` and ``docker``). Printed per cluster size: wall time,
the driver's CPU per trial (the child's user + system time: start-up included, and from the
first trial sent on), trials lost (expected - scored), and for containers those left on the
engine by the cluster's workers; then the wall-time ratio 3 nodes / 1 node (ideal 1/3).

``--simulate 10,30,100``: the driver's own ceiling with no Ray at all: the same command's
scheduling, journal, statistics and reports, every trial handed to an instant fake pool of N
nodes x ``--slots`` (a scored trial back after one event-loop turn); printed: driver CPU per
trial and trials per second.

    python bench/cluster.py [--kind chat|container] [--trials 4] [--items 3] [--latency 2] [--slots 2]
    python bench/cluster.py --simulate 10,30,100 [--slots 4]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # keep Ray on loopback (see docs/cluster.md)
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

AGENT = r"""
BODY='{"model":"m","messages":[{"role":"user","content":"count"}]}'
exec 3<>"/dev/tcp/127.0.0.1/$MODEL_PORT"
printf 'POST /v1/chat/completions HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer sk-bench\r\nContent-Length: %d\r\n\r\n%s' "${#BODY}" "$BODY" >&3
reply="$(cat <&3)"
case "$reply" in *hello*) echo hello ;; *) echo "no reply" ;; esac
"""


def _cli(args: list[str], env: dict[str, str]) -> tuple[int, float, float]:
    """``agentsproof ARGS`` in this process: (exit code, CPU s of this process from the first
    trial sent to the end, wall s until the first trial was sent)."""
    from agentsproof.cli import main
    from agentsproof.executor import ray_trials

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    first: list[float] = []
    t0 = time.perf_counter()
    real = ray_trials.RayTrials.__call__

    async def timed(self: Any, item: Any, arm: Any, index: int) -> Any:
        if not first:
            first.extend((time.process_time(), time.perf_counter() - t0))
        return await real(self, item, arm, index)

    ray_trials.RayTrials.__call__ = timed  # type: ignore[method-assign]
    try:
        try:
            with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):  # the report's console summary
                main.main([str(a) for a in args], standalone_mode=False)
            code = 0
        except SystemExit as stop:
            code = int(stop.code or 0)
        except Exception as err:  # noqa: BLE001 - a click error: shown, counted as failed
            print(f"agentsproof failed: {err}", file=sys.stderr)
            code = 99
    finally:
        ray_trials.RayTrials.__call__ = real  # type: ignore[method-assign]
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return code, time.process_time() - (first[0] if first else time.process_time()), first[1] if first else 0.0


def _ours() -> list[str]:
    """Containers on the engine owned by a live process below this one (the cluster's workers)."""
    got = subprocess.run(
        ["docker", "ps", "-a", "--filter", "label=org.agentsproof.owner", "--format", '{{.ID}}\t{{.Label "org.agentsproof.owner"}}'],
        capture_output=True,
        text=True,
        timeout=60,
    )
    mine = []
    for line in got.stdout.splitlines():
        cid, _, owner = line.partition("\t")
        pid = owner.split("/")[1] if owner.count("/") == 2 else ""
        while pid.isdigit() and int(pid) > 1:
            if int(pid) == os.getpid():
                mine.append(cid)
                break
            try:
                pid = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[1]
            except OSError:
                break
    return mine


def _scored(report: dict[str, Any]) -> int:
    return sum(1 for it in report["items"] for arm in ("with_arm", "without_arm") for t in it[arm]["trials"] if t["status"] == "scored")


def run_on(nodes: int, args: argparse.Namespace, target: Path, url: str, work: Path) -> dict[str, float]:
    """One run on a fresh cluster of ``nodes`` nodes: wall s, driver CPU ms per trial (all, and after start-up), trials lost."""
    import ray
    from ray.cluster_utils import Cluster

    temp = tempfile.mkdtemp(prefix="apbench-", dir="/tmp")
    os.environ["RAY_TMPDIR"] = temp
    resources = {"agentsproof_trial": args.slots, "docker": args.slots}
    node = {"node_ip_address": "127.0.0.1", "num_cpus": 1, "resources": resources, "object_store_memory": 80 * 1024 * 1024}
    cluster = Cluster(initialize_head=False)
    try:
        cluster.add_node(**node, include_dashboard=False)
        for _ in range(nodes - 1):
            cluster.add_node(**node)
        cluster.wait_for_nodes(timeout=120)
        out = work / f"out-{nodes}"
        env = {
            "AGENTSPROOF_PROVIDER_TYPE": "openai",
            "AGENTSPROOF_PROVIDER_URL": url,
            "AGENTSPROOF_PROVIDER_KEY": "sk-bench",
            "AGENTSPROOF_NO_CACHE": "1",
            "MODEL_PORT": url.split(":")[-1].split("/")[0],
        }
        command = "eval-all" if args.kind == "chat" else "eval"
        cmd = [command, str(target), "--model", "m", "--output", str(out), "--parallel", str(nodes * args.slots)]
        cmd += ["--executor", "ray", "--ray-address", cluster.address]
        # the driver in a child process, as a user runs it (not sharing this process with the scripted server)
        got = work / f"driver-{nodes}.json"
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, __file__, "--driver", str(got), "--", *cmd], env={**os.environ, **env, "PYTHONPATH": str(ROOT)})
        _, status, usage = os.wait4(proc.pid, 0)
        wall, cpu = time.perf_counter() - t0, usage.ru_utime + usage.ru_stime
        code = os.waitstatus_to_exitcode(status)
        driver = json.loads(got.read_text()) if got.exists() else {"after": 0.0, "start_s": 0.0}
        after_start, start_s = driver["after"], driver["start_s"]
        if code not in (0, 1):
            raise SystemExit(f"{command} failed on {nodes} node(s): exit {code}")
        report = json.loads(next(out.glob("*/*.json")).read_text())
        expected = args.trials * 2 * (args.items if args.kind == "chat" else 1)
        left = len(_ours())
        return {
            "left": left,
            "start_s": start_s,
            "wall_s": wall,
            "cpu_ms": 1000 * cpu / expected,
            "cpu_after_ms": 1000 * after_start / expected,
            "lost": expected - _scored(report),
            "trials": expected,
        }
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


def _container_eval(work: Path, args: argparse.Namespace) -> Path:
    import yaml
    from docker_engine import base_image

    root = work / "boxed"
    root.mkdir()
    (root / "SKILL.md").write_text("---\nname: greet\ndescription: greets\n---\nSay hello.\n")
    target = {"type": "command", "command": ["bash", "-c", AGENT], "timeout": 120, "env": {"MODEL_PORT": "${MODEL_PORT}"}}
    (root / "targets.yaml").write_text(yaml.safe_dump({"boxed": target}))
    cfg = {
        "version": "2",
        "skill": "SKILL.md",
        "execution": {"mode": "agent", "target": "boxed"},
        "environment": {"image": base_image(), "allow_internet": True, "memory_mb": 128, "pids": 64},
        "defaults": {"trials": args.trials, "timeout": 120, "threshold": 0.6},
        "task": {"name": "greet", "instruction": "Say hello.", "graders": [{"type": "deterministic", "checks": ["hello"]}]},
    }
    (root / "eval.yaml").write_text(yaml.safe_dump(cfg))
    return root / "eval.yaml"


def measure(args: argparse.Namespace) -> None:
    """Run on 1 node, then on 3, and print both and their ratio."""
    from conftest import make_plugin
    from openai_server import Rule, ScriptedServer

    work = Path(tempfile.mkdtemp(prefix="apbench-work-"))
    srv = ScriptedServer([Rule(reply="hello", delay=args.latency)])
    srv.start()
    try:
        if args.kind == "chat":
            ev = {
                "version": "2",
                "defaults": {"trials": args.trials, "timeout": 120, "threshold": 0.6},
                "task": {"name": "greet", "instruction": "Say hello.", "graders": [{"type": "deterministic", "checks": ["hello"]}]},
            }
            target = make_plugin(work, skills={f"s{i}": {"eval": ev} for i in range(args.items)})
        else:
            target = _container_eval(work, args)
        results = {n: run_on(n, args, target, srv.base_url, work) for n in (1, 3)}
    finally:
        srv.stop()
        shutil.rmtree(work, ignore_errors=True)
    trials = int(results[1]["trials"])
    what = "chat trials" if args.kind == "chat" else "agent-bound container trials (--network host)"
    print(f"{trials} {what}, {args.latency:g} s model latency, {args.slots} slots a node")
    for n, r in results.items():
        print(
            f"  {n} node(s): wall {r['wall_s']:.1f} s, driver CPU {r['cpu_ms']:.0f} ms/trial (start-up included), "
            f"{r['cpu_after_ms']:.1f} ms/trial from the first trial sent, lost {r['lost']:.0f}; first trial sent after {r['start_s']:.1f} s"
            + (f", containers left {r['left']:.0f}" if args.kind == "container" else "")
        )
    print(f"  wall-time ratio 3 nodes / 1 node: {results[3]['wall_s'] / results[1]['wall_s']:.2f} (ideal {1 / 3:.2f})")


def simulate(args: argparse.Namespace) -> None:
    """The driver's own path (scheduling, journal, statistics, reports) against instant fake node pools."""
    from conftest import make_plugin
    from openai_server import ScriptedServer

    from agentsproof.executor import ray_trials
    from agentsproof.model.results import GraderResult, LogEvent, TrialResult

    class FakePool:
        """N nodes x slots that answer every trial after one event-loop turn (no Ray, no model)."""

        def __init__(self, address: str | None, stack: Any, runner: Any, **_: Any) -> None:
            self.runner = runner
            self.nodes: dict[str, int] = {}
            self.reruns = 0

        async def start(self) -> None:
            return None

        async def __call__(self, item: Any, arm: str, index: int) -> TrialResult:
            await asyncio.sleep(0)
            node = f"node-{index % FakePool.count}"
            self.nodes[node] = self.nodes.get(node, 0) + 1
            passed = (index + (arm == "with")) % 2 == 0
            grade = GraderResult(type="deterministic", score=1.0 if passed else 0.0, weight=1.0)
            log = [LogEvent(t=0.0, role="assistant", text="hello"), LogEvent(t=0.0, role="info", text=f"ran on Ray node {node}")]
            return TrialResult(
                index=index, arm=arm, status="scored", response="hello", score=grade.score, passed=passed, graders=[grade], log=log, latency_s=0.01
            )  # type: ignore[arg-type]

        async def close(self) -> None:
            return None

    real = ray_trials.RayTrials
    srv = ScriptedServer()
    srv.start()
    print(f"simulated nodes x {args.slots} slots, {args.items} items; the driver's path with an instant fake node pool (no Ray)")
    try:
        for n in [int(x) for x in args.simulate.split(",")]:
            work = Path(tempfile.mkdtemp(prefix="apbench-sim-"))
            parallel = n * args.slots
            trials = max(args.trials, (10 * parallel) // (2 * args.items) + 1)
            ev = {
                "version": "2",
                "defaults": {"trials": trials, "timeout": 120, "threshold": 0.6},
                "task": {"name": "greet", "instruction": "Say hello.", "graders": [{"type": "deterministic", "checks": ["hello"]}]},
            }
            plugin = make_plugin(work, skills={f"s{i}": {"eval": ev} for i in range(args.items)})
            FakePool.count = n  # type: ignore[attr-defined]
            ray_trials.RayTrials = FakePool  # type: ignore[misc, assignment]
            env = {"AGENTSPROOF_PROVIDER_TYPE": "openai", "AGENTSPROOF_PROVIDER_URL": srv.base_url, "AGENTSPROOF_PROVIDER_KEY": "sk-bench"}
            try:
                cmd = ["eval-all", str(plugin), "--model", "m", "--no-cache", "--output", str(work / "out"), "--parallel", str(parallel), "--executor", "ray"]
                cpu0, t0 = time.process_time(), time.perf_counter()
                code, after, _ = _cli(cmd, env)
                wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
            finally:
                ray_trials.RayTrials = real  # type: ignore[misc]
            total = trials * 2 * args.items
            report = json.loads(next((work / "out").glob("*/*.json")).read_text())
            journal = next((work / "out").glob("*/*.journal.jsonl"))
            journalled = sum(1 for ln in journal.read_text().splitlines()[1:] if '"item"' in ln)
            shutil.rmtree(work, ignore_errors=True)
            print(
                f"  {n:>3} nodes (--parallel {parallel}): {total} trials, exit {code}, driver CPU {1000 * cpu / total:.2f} ms/trial "
                f"(start-up included), {1000 * after / total:.2f} ms/trial from the first trial sent, {total / wall:.0f} trials/s, {_scored(report)} scored, {journalled} journalled"
            )
    finally:
        srv.stop()


def main() -> None:
    """Measure on a real cluster, or simulate the driver's ceiling."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kind", choices=("chat", "container"), default="chat")
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--items", type=int, default=3)
    parser.add_argument("--latency", type=float, default=2.0)
    parser.add_argument("--slots", type=int, default=2)
    parser.add_argument("--simulate", default="", help="comma-separated node counts: simulate the driver's ceiling instead")
    parser.add_argument("--driver", help=argparse.SUPPRESS)  # internal: run `agentsproof ARGS` here, write its timings to this file
    parser.add_argument("command", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.driver:
        code, after, start_s = _cli(args.command, {})
        Path(args.driver).write_text(json.dumps({"after": after, "start_s": start_s}))
        sys.exit(code)
    if args.simulate:
        simulate(args)
    else:
        measure(args)


if __name__ == "__main__":
    main()
