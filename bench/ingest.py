"""Ingest throughput of `agentsproof serve`: steps per second stored with 20 concurrent SDK clients.

Starts the real server (as the tests do, tests/server/serverkit.py) on SQLite and, when the
PostgreSQL binaries are installed (tests/server/pg.py), on a throwaway PostgreSQL cluster.
Each client is its own process running one SDK client: RUNS runs of STEPS steps, each run
completed. All clients start together (a "go" line on their stdin); a client's time ends
when its last run is completed and every step it logged has been sent (our SDK's
``complete()`` guarantees that; for the published SDK the script joins its per-step
threads). Every step is then read back through the API: only stored steps count.

"runs failed" counts runs whose ``complete()`` returned no report URL (or raised).

Side by side, on each backend: our SDK, and with ``--published`` the published SDK 1.0.6
(cached venv, as in tests/sdk/pubsdk.py) driving the same load.

    python bench/ingest.py [--clients 20] [--runs 5] [--steps 50] [--backend sqlite|postgresql|both] [--published]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "server"), str(ROOT / "tests"), str(ROOT / "tests" / "sdk")]

CLIENT = r"""
import json, sys, threading, time
from agentsproof import AgentsProof
base_url, key, runs, steps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
ap = AgentsProof(api_key=key, base_url=base_url)
print("ready", flush=True)
sys.stdin.readline()
t0 = time.time()
ids, failed = [], 0
for r in range(runs):
    try:  # the published SDK raises when the server is too slow (timeouts)
        run = ap.start_run(project_slug="bench", input={"run": r}, goal="ingest")
        ids.append(run.remote_run_id)
        for i in range(steps):
            run.log_step({"type": "tool_call", "name": "tool%d" % (i % 5), "input": {"i": i},
                          "output": {"ok": True, "text": "x" * 200}, "latency_ms": 1.0, "token_count": 10})
        res = run.complete({"answer": r})
    except Exception as err:
        print("run failed: %s: %s" % (type(err).__name__, err), file=sys.stderr)
        res = {}
    if not res.get("publicUrl"):
        failed += 1
for t in threading.enumerate():  # the published SDK sends each step from its own thread
    if t is not threading.main_thread() and t.daemon and t.name.startswith("Thread"):
        t.join(120)
print(json.dumps({"start": t0, "end": time.time(), "ids": ids, "failed": failed}), flush=True)
"""


def stored_steps(base_url: str, key: str, run_ids: list[str]) -> int:
    total = 0
    for rid in run_ids:
        req = urllib.request.Request(f"{base_url}/runs/{rid}", headers={"x-api-key": key})
        with urllib.request.urlopen(req, timeout=180) as r:  # the published SDK can leave a long backlog
            total += len(json.load(r)["steps"])
    return total


def load(python: str, cwd: str, base_url: str, key: str, clients: int, runs: int, steps: int) -> dict:
    args = [python, "-I", "-c", CLIENT, base_url, key, str(runs), str(steps)]
    env = {**os.environ, "AGENTSPROOF_SPOOL_DIR": str(Path(cwd) / "spool")}  # never the user's spool
    procs = [subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(clients)]
    for p in procs:
        if p.stdout.readline().strip() != "ready":
            p.wait(30)
            raise SystemExit(f"a client failed to start ({p.returncode}): {p.stderr.read()[-2000:]}")
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=900)
        if p.returncode != 0 or not out.strip():
            raise SystemExit(f"a client failed ({p.returncode}): {err[-2000:]}")
        outs.append(json.loads(out.strip().splitlines()[-1]))
    wall = max(o["end"] for o in outs) - min(o["start"] for o in outs)
    ids = [i for o in outs for i in o["ids"] if i]
    try:
        stored = stored_steps(base_url, key, ids)
    except OSError as err:  # seen with the published SDK's burst: the server stops answering
        print(f"  reading the steps back failed ({err}): the server no longer answers; counting 0", file=sys.stderr)
        stored = 0
    return {"clients": clients, "steps_sent": clients * runs * steps, "steps_stored": stored,
            "runs_failed": sum(o["failed"] for o in outs), "wall_s": round(wall, 3), "steps_per_s": round(stored / wall, 1)}


def bench(backend: str, sdks: list[str], clients: int, runs: int, steps: int, pg=None) -> list[dict]:
    from pubsdk import published_python
    from serverkit import running_server

    results = []
    for sdk in sdks:
        with tempfile.TemporaryDirectory(prefix="ap-ingest-") as tmp:
            db_url = pg.new_database() if pg is not None else None
            with running_server(Path(tmp), db_url=db_url) as srv:
                key = srv.create_key("bench")
                python = str(published_python()) if sdk == "published" else sys.executable
                cwd = tmp  # a neutral folder; -I keeps our checkout off either SDK's path
                results.append({"backend": backend, "sdk": sdk, **load(python, cwd, srv.base_url, key, clients, runs, steps)})
                report(results[-1])
    return results


def report(r: dict) -> None:
    lost = r["steps_sent"] - r["steps_stored"]
    extra = (f", {lost} LOST" if lost else "") + (f", {r['runs_failed']} runs failed" if r["runs_failed"] else "")
    print(f"{r['backend']:>10} {r['sdk']:>9}: {r['steps_stored']} steps stored in {r['wall_s']:.2f} s = "
          f"{r['steps_per_s']:.0f} steps/s ({r['clients']} clients{extra})", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--runs", type=int, default=5, help="runs per client")
    ap.add_argument("--steps", type=int, default=50, help="steps per run")
    ap.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    ap.add_argument("--published", action="store_true", help="also drive the load with the published SDK 1.0.6")
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = ap.parse_args()

    from pg import PgCluster, pg_bindir

    sdks = ["ours", "published"] if args.published else ["ours"]
    results: list[dict] = []
    if args.backend in ("sqlite", "both"):
        results += bench("sqlite", sdks, args.clients, args.runs, args.steps)
    if args.backend in ("postgresql", "both"):
        bindir = pg_bindir()
        if bindir is None:
            print("postgresql: skipped (no /usr/lib/postgresql/*/bin/initdb; Debian package postgresql)", file=sys.stderr)
        else:
            cluster = PgCluster(bindir).start()
            try:
                results += bench("postgresql", sdks, args.clients, args.runs, args.steps, pg=cluster)
            finally:
                cluster.stop()
    by = {(r["backend"], r["sdk"]): r["steps_per_s"] for r in results}
    if ("sqlite", "ours") in by and ("postgresql", "ours") in by:
        print(f"postgresql/sqlite (our SDK): {by[('postgresql', 'ours')] / by[('sqlite', 'ours')]:.2f}x")
    for backend in ("sqlite", "postgresql"):
        if by.get((backend, "published")):
            print(f"{backend}: ours/published: {by[(backend, 'ours')] / by[(backend, 'published')]:.2f}x")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
