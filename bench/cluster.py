"""``--executor ray`` on 1 node and on 3 local nodes with the same slots per node (issue 48).

Chat trials that wait on a scripted model with latency (``--latency`` s a call, the
scripted server of tests/openai_server.py on 127.0.0.1) run as a user runs them:
``python -m agentsproof eval-all DIR --executor ray --ray-address ADDR --parallel N*SLOTS``
in a child process, against a real local Ray cluster (``ray.cluster_utils.Cluster``, every
node on 127.0.0.1 with ``--slots`` ``agentsproof_trial``). Printed per cluster size: wall
time, the driver's CPU per trial (the child's user + system time from wait4, start-up
included) and trials lost (expected - scored); then the wall-time ratio 3 nodes / 1 node
(ideal 1/3: the trials are latency-bound, so more nodes mean more trials at once).

Not measured here (issue 48 item 8, left): container trials on the nodes, and the
simulation of 10-100 nodes for the driver's own ceiling.

    python bench/cluster.py [--trials 4] [--items 3] [--latency 2] [--slots 2]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # keep Ray on loopback (see docs/cluster.md)
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def run_on(nodes: int, args: argparse.Namespace, plugin: Path, url: str, work: Path) -> dict[str, float]:
    """One eval-all run on a fresh cluster of ``nodes`` nodes: wall s, driver CPU s per trial, trials lost."""
    from ray.cluster_utils import Cluster

    temp = tempfile.mkdtemp(prefix="apbench-", dir="/tmp")
    os.environ["RAY_TMPDIR"] = temp
    node = {"node_ip_address": "127.0.0.1", "num_cpus": 1, "resources": {"agentsproof_trial": args.slots}, "object_store_memory": 80 * 1024 * 1024}
    cluster = Cluster(initialize_head=False)
    try:
        cluster.add_node(**node, include_dashboard=False)
        for _ in range(nodes - 1):
            cluster.add_node(**node)
        cluster.wait_for_nodes(timeout=120)
        out = work / f"out-{nodes}"
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "AGENTSPROOF_PROVIDER_TYPE": "openai",
            "AGENTSPROOF_PROVIDER_URL": url,
            "AGENTSPROOF_PROVIDER_KEY": "sk-bench",
            "AGENTSPROOF_NO_CACHE": "1",
        }
        cmd = [sys.executable, "-m", "agentsproof", "eval-all", str(plugin), "--model", "m", "--output", str(out)]
        cmd += ["--parallel", str(nodes * args.slots), "--executor", "ray", "--ray-address", cluster.address]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) not in (0, 1):
            raise SystemExit(f"eval-all failed on {nodes} node(s): {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
        report = json.loads((out / "demo-plugin" / "eval-all-summary.json").read_text())
        scored = sum(1 for it in report["items"] for arm in ("with_arm", "without_arm") for t in it[arm]["trials"] if t["status"] == "scored")
        expected = args.items * args.trials * 2
        return {"wall_s": wall, "cpu_ms_per_trial": 1000 * (usage.ru_utime + usage.ru_stime) / expected, "lost": expected - scored}
    finally:
        cluster.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


def main() -> None:
    """Run on 1 node, then on 3, and print both and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--items", type=int, default=3)
    parser.add_argument("--latency", type=float, default=2.0)
    parser.add_argument("--slots", type=int, default=2)
    args = parser.parse_args()
    from conftest import make_plugin
    from openai_server import Rule, ScriptedServer

    work = Path(tempfile.mkdtemp(prefix="apbench-work-"))
    srv = ScriptedServer([Rule(reply="hello", delay=args.latency)])
    srv.start()
    try:
        ev = {
            "version": "2",
            "defaults": {"trials": args.trials, "timeout": 120, "threshold": 0.6},
            "task": {"name": "greet", "instruction": "Say hello.", "graders": [{"type": "deterministic", "checks": ["hello"]}]},
        }
        plugin = make_plugin(work, skills={f"s{i}": {"eval": ev} for i in range(args.items)})
        results = {n: run_on(n, args, plugin, srv.base_url, work) for n in (1, 3)}
    finally:
        srv.stop()
        shutil.rmtree(work, ignore_errors=True)
    trials = args.items * args.trials * 2
    print(f"{trials} chat trials, {args.latency:g} s model latency, {args.slots} slots a node")
    for n, r in results.items():
        print(f"  {n} node(s): wall {r['wall_s']:.1f} s, driver CPU {r['cpu_ms_per_trial']:.0f} ms/trial (start-up included), lost {r['lost']:.0f}")
    print(f"  wall-time ratio 3 nodes / 1 node: {results[3]['wall_s'] / results[1]['wall_s']:.2f} (ideal {1 / 3:.2f})")


if __name__ == "__main__":
    main()
