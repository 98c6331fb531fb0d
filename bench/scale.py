"""Memory and wall time at scale: `agentsproof eval-all` with 1,000 / 10,000 / 100,000 trials.

Each size runs in its own child process (`python -m agentsproof eval-all DIR --parallel 50
--no-cache`) against the scripted OpenAI-compatible server in a separate process at 0 ms
latency. Peak RSS is the child's ``ru_maxrss`` (from wait4), wall time is measured here.
Every size has the same items - 500 trials per arm - and differs only in how many: 1k = 1
item, 10k = 10 items, 100k = 100 items; so the sizes differ in total trials alone.
``--no-spill`` also runs the given sizes with every trial kept in memory
(AGENTSPROOF_SPILL_AFTER set past the run's size), for comparison in the same run.

    python bench/scale.py [--sizes 1000,10000,100000] [--no-spill] [--json]
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
sys.path.insert(0, str(ROOT / "bench"))

from throughput import start_server, write_plugin  # noqa: E402

TARGET_GROWTH = 1.5
"""Peak RSS at the largest size at most this many times the smallest size's."""


PER_ARM = 500


def shape(size: int) -> tuple[int, int]:
    """(items, trials per arm) for ``size`` trials in all."""
    trials = min(PER_ARM, max(1, size // 2))
    return max(1, size // (2 * trials)), trials


def one(size: int, port: int, work: Path, spill: bool) -> dict[str, float]:
    items, trials = shape(size)
    plugin_root = work / f"p{size}-{int(spill)}"
    plugin = write_plugin(plugin_root, items)
    env = dict(os.environ)
    env.update(
        AGENTSPROOF_PROVIDER_TYPE="openai",
        AGENTSPROOF_PROVIDER_URL=f"http://127.0.0.1:{port}/v1",
        AGENTSPROOF_PROVIDER_KEY="sk-bench",
        AGENTSPROOF_MODEL="bench-model",
        PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
    )
    if not spill:
        env["AGENTSPROOF_SPILL_AFTER"] = str(10 * size)
    out = work / f"runs-{size}-{int(spill)}"
    cmd = [
        sys.executable, "-m", "agentsproof", "eval-all", str(plugin), "--trials", str(trials),
        "--parallel", "50", "--output", str(out), "--abort-after", "0", "--no-cache",
    ]  # fmt: skip
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"size {size}: exited {code}: {stderr.decode(errors='replace')[-2000:]}")
    report = json.loads((out / "bench-plugin" / "eval-all-summary.json").read_text())
    scored = sum(i["with_arm"]["scored"] + i["without_arm"]["scored"] for i in report["items"])
    if scored != items * trials * 2:
        raise SystemExit(f"size {size}: {scored} scored trials, expected {items * trials * 2}")
    sizes = {p.suffix: p.stat().st_size for p in (out / "bench-plugin").iterdir() if p.is_file()}
    return {
        "trials": items * trials * 2,
        "items": items,
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "cpu_per_trial_ms": round((usage.ru_utime + usage.ru_stime) / (items * trials * 2) * 1000, 3),
        "json_mb": round(sizes.get(".json", 0) / 1e6, 1),
        "html_mb": round(sizes.get(".html", 0) / 1e6, 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--no-spill", action="store_true", help="also run these sizes with all trials in memory")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="agentsproof-scale-") as tmp:
        work = Path(tmp)
        server, port = start_server(0.0, work)
        try:
            for size in sizes:
                for spill in ([True, False] if args.no_spill else [True]):
                    rows.append({"size": size, "spill": spill, **one(size, port, work, spill)})
                    if not args.json:
                        r = rows[-1]
                        print(
                            f"{r['trials']:>7,} trials ({r['items']} items){'' if spill else ' all in memory':15s}"
                            f"  peak RSS {r['peak_rss_mb']:7.1f} MB   wall {r['wall_s']:7.2f} s   CPU {r['cpu_s']:7.2f} s"
                            f" ({r['cpu_per_trial_ms']:.3f} ms/trial)   JSON {r['json_mb']} MB, HTML {r['html_mb']} MB",
                            flush=True,
                        )
        finally:
            server.terminate()
            server.wait(timeout=10)
    spilled = [r for r in rows if r["spill"]]
    growth = spilled[-1]["peak_rss_mb"] / spilled[0]["peak_rss_mb"] if len(spilled) > 1 else 1.0  # type: ignore[operator]
    ok = growth <= TARGET_GROWTH
    if args.json:
        print(json.dumps({"rows": rows, "rss_growth": round(growth, 2), "ok": ok}))
    else:
        print(f"peak RSS {spilled[-1]['trials']:,} ÷ {spilled[0]['trials']:,} trials: {growth:.2f}x   target <= {TARGET_GROWTH}x: {'ok' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
