"""Known effects on the embedded model: does the calibration plugin get the direction right?

Runs ``agentsproof eval-all evals/calibration-plugin --provider local --no-cache`` R times,
each with its own sampling seed (``AGENTSPROOF_LOCAL_SEED``), at the trials each eval.yaml
sets (2 per case, 5 cases: 10 per arm), and counts per skill how often the grade points the
right way (evals/calibration-plugin/README.md):

- strong:  grade A or B and the delta's interval above 0,
- harmful: grade F and the interval below 0,
- placebo: grade C or F (no A/B claimed) and the interval holds 0.

It prints per skill the share of runs in the right direction, the mean delta, the grades
seen, and a verdict against the 95 % bar. The response cache is off (``--no-cache``), so
every repeat makes its own calls. ``--max-tokens`` caps each reply
(``AGENTSPROOF_LOCAL_MAX_TOKENS``, default 32 here; every check is on the first sentence)
so that a run stays short on a shared machine.

    python bench/calibration.py --repeats 20 --jobs 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "evals" / "calibration-plugin"
BAR = 0.95


def right(name: str, grade: str | None, ci: list[float] | None) -> bool:
    if grade is None or ci is None:
        return False
    low, high = ci
    if name == "strong":
        return grade in ("A", "B") and low > 0
    if name == "harmful":
        return grade == "F" and high < 0
    if name == "placebo":
        return grade in ("C", "F") and low <= 0 <= high
    raise ValueError(name)


def one_run(seed: int, out: Path, max_tokens: int, threads: int) -> dict[str, dict]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), AGENTSPROOF_LOCAL_SEED=str(seed), AGENTSPROOF_LOCAL_INSTANCES="1",
               AGENTSPROOF_LOCAL_THREADS=str(threads), AGENTSPROOF_LOCAL_MAX_TOKENS=str(max_tokens))
    cmd = [sys.executable, "-m", "agentsproof", "eval-all", str(PLUGIN), "--provider", "local", "--no-cache",
           "--parallel", "1", "--output", str(out)]
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=3600, check=False)
    summary = json.loads((out / "calibration-plugin" / "eval-all-summary.json").read_text())
    return {it["name"]: {"grade": it.get("grade"), "delta": it["stats"]["delta"], "ci": it["stats"]["delta_ci"],
                         "errored": it["stats"]["with"]["errored"] + it["stats"]["without"]["errored"]}
            for it in summary["items"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=1, help="runs at the same time (each one worker)")
    ap.add_argument("--threads", type=int, default=1, help="llama.cpp threads per run")
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--seed", type=int, default=2300)
    args = ap.parse_args()
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="calibration-") as tmp:
        def job(r: int) -> dict[str, dict]:
            res = one_run(args.seed + r, Path(tmp) / f"rep-{r}", args.max_tokens, args.threads)
            line = "  ".join(f"{n} {v['grade']} {v['delta']:+.2f} [{v['ci'][0]:+.2f}, {v['ci'][1]:+.2f}]" for n, v in sorted(res.items()))
            print(f"run {r + 1:3d} (seed {args.seed + r}): {line}", flush=True)
            return res
        with ThreadPoolExecutor(args.jobs) as pool:
            runs = list(pool.map(job, range(args.repeats)))
    print(f"\n{args.repeats} runs of eval-all {PLUGIN.relative_to(ROOT)} --provider local --no-cache "
          f"(max tokens {args.max_tokens}, seeds {args.seed}..{args.seed + args.repeats - 1}), {time.time() - t0:.0f} s")
    print(f"{'skill':8} {'right':>12} {'mean delta':>11}  grades               errored")
    ok_all = True
    for name in ("strong", "placebo", "harmful"):
        rows = [r[name] for r in runs if name in r]
        hits = sum(right(name, v["grade"], v["ci"]) for v in rows)
        share = hits / len(rows) if rows else 0.0
        ok_all &= share >= BAR
        grades = {g: sum(1 for v in rows if v["grade"] == g) for g in "ABCF"}
        mean = sum(v["delta"] for v in rows) / len(rows) if rows else float("nan")
        errored = sum(v["errored"] for v in rows)
        print(f"{name:8} {hits:3d}/{len(rows):<3d} {share:5.0%} {mean:+11.2f}  "
              + " ".join(f"{g}:{c}" for g, c in grades.items()) + f"   {errored:7d}")
    print(f"verdict: {'every skill at or above' if ok_all else 'NOT every skill reaches'} the {BAR:.0%} bar")


if __name__ == "__main__":
    main()
