"""Known effects on the embedded model: does the calibration plugin get the direction right?

Runs ``agentsproof eval-all evals/calibration-plugin --provider local --no-cache`` R times,
each with its own sampling seed (``AGENTSPROOF_LOCAL_SEED``), at the settings the eval.yaml
files give (their ``defaults``: trials per case, the reply cap ``max_tokens``; nothing
else is set), and counts per skill how often the grade points the right way
(evals/calibration-plugin/README.md):

- strong:  grade A or B and the delta's interval above 0,
- harmful: grade F and the interval below 0,
- placebo: grade C or F (no A/B claimed) and the interval holds 0.

It prints per skill the share of runs in the right direction with its 95 % Clopper–Pearson
interval (how tightly the repeats bound the true share), the mean delta, the grades seen,
and a verdict against the 95 % bar. The response cache is off (``--no-cache``), so every
repeat makes its own calls.

``--save FILE`` keeps every run's raw per-case scores (both arms, from the JSON report the
run writes) and the grade the report gave, written after each run; run again with the same
``--save FILE`` and it carries on with the seeds not yet in it. ``--from FILE``
re-scores saved runs with the statistics code as it is now (``stats.cases.delta_interval``
and the report's grade rule) without calling the model — so a new interval can be judged
on the same model outputs. Both print, beside the placebo's measured share, what a truly null
placebo would give at its pooled per-case pass rates (simulated; ``--null-rates`` and
``--null-trials`` to try other designs).

    python bench/calibration.py --repeats 40 --jobs 2 --save bench/results/calibration-40.json
    python bench/calibration.py --from bench/results/calibration-40.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PLUGIN = ROOT / "evals" / "calibration-plugin"
SKILLS = ("strong", "placebo", "harmful")
BAR = 0.95
RESULTS_VERSION = 1


def right(name: str, grade: str | None, ci: list[float] | tuple[float, float] | None) -> bool:
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


def case_scores(item: dict[str, Any]) -> list[dict[str, Any]]:
    """Per case (in the order the trials ran): the with- and without-arm scores of its scored
    trials and how many trials errored — what the report's statistics are computed from."""
    order: list[str] = []
    table: dict[str, dict[str, Any]] = {}
    trials = [(t, "with") for t in item["with_arm"]["trials"]] + [(t, "without") for t in item["without_arm"]["trials"]]
    for t, arm in sorted(trials, key=lambda ta: (ta[0]["index"], ta[1])):
        name = t.get("case") or item.get("task_name") or "task"
        if name not in table:
            order.append(name)
            table[name] = {"name": name, "with": [], "without": [], "errored": 0}
        if t.get("status") == "scored" and t.get("score") is not None:
            table[name][arm].append(float(t["score"]))
        elif t.get("status") == "errored":
            table[name]["errored"] += 1
    return [table[n] for n in order]


def rescore(cases: list[dict[str, Any]]) -> dict[str, Any]:
    """Delta, interval and grade of one item from its per-case scores, by the code the report
    uses now (agentsproof.stats.item.item_stats): the mean of the per-case deltas (one case:
    with − without), ``stats.cases.delta_interval`` widened to hold the delta, the grade of
    the delta."""
    from agentsproof.model.results import compute_grade
    from agentsproof.stats.cases import delta_interval, mean_case_delta
    from agentsproof.stats.wald import cases_method

    per_case = [(c["with"], c["without"]) for c in cases]
    ws = [s for c in cases for s in c["with"]]
    wos = [s for c in cases for s in c["without"]]
    if not ws or not wos:
        return {"delta": None, "ci": None, "grade": None, "method": cases_method(per_case)}
    delta = mean_case_delta(per_case) if len(cases) > 1 else None
    delta = sum(ws) / len(ws) - sum(wos) / len(wos) if delta is None else delta
    ci = delta_interval(per_case)
    if ci is not None:
        ci = (min(ci[0], delta), max(ci[1], delta))
    return {"delta": delta, "ci": list(ci) if ci else None, "grade": compute_grade(delta), "method": cases_method(per_case)}


def one_run(seed: int, out: Path, threads: int, max_tokens: int | None) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), AGENTSPROOF_LOCAL_SEED=str(seed), AGENTSPROOF_LOCAL_INSTANCES="1",
               AGENTSPROOF_LOCAL_THREADS=str(threads))
    env.pop("AGENTSPROOF_LOCAL_MAX_TOKENS", None)  # the evals' own defaults.max_tokens, unless overridden
    if max_tokens is not None:
        env["AGENTSPROOF_LOCAL_MAX_TOKENS"] = str(max_tokens)
    cmd = [sys.executable, "-m", "agentsproof", "eval-all", str(PLUGIN), "--provider", "local", "--no-cache",
           "--parallel", "1", "--output", str(out)]
    t0 = time.time()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=3600, check=False)
    run: dict[str, Any] = {"seed": seed, "exit_code": proc.returncode, "seconds": round(time.time() - t0, 1), "skills": {}}
    summary_path = out / "calibration-plugin" / "eval-all-summary.json"
    if not summary_path.is_file():
        run["error"] = (proc.stderr or "").strip().splitlines()[-1:] or ["no report written"]
        return run
    summary = json.loads(summary_path.read_text())
    for it in summary["items"]:
        st = it.get("stats") or {}
        run["skills"][it["name"]] = {
            "reported": {"grade": it.get("grade"), "delta": st.get("delta"), "ci": st.get("delta_ci"), "method": st.get("delta_ci_method")},
            "errored": sum((st.get(arm) or {}).get("errored") or 0 for arm in ("with", "without")),
            "cases": case_scores(it),
        }
    return run


def clopper_pearson(k: int, n: int) -> tuple[float, float] | None:
    from agentsproof.stats.intervals import clopper_pearson as cp

    return cp(k, n)


def table(runs: list[dict[str, Any]], source: str) -> bool:
    """Print the per-skill table from the runs re-scored now; True when every skill reaches the bar."""
    print(f"{'skill':8} {'right':>9} {'share':>6}  {'95% CI (Clopper-Pearson)':>24} {'mean delta':>11}  grades          errored  (as reported)")
    ok_all = True
    for name in SKILLS:
        rows = [r["skills"].get(name) for r in runs]
        now = [rescore(v["cases"]) if v else None for v in rows]
        hits = sum(1 for v in now if v is not None and right(name, v["grade"], v["ci"]))
        reported = sum(1 for v in rows if v is not None and right(name, v["reported"]["grade"], v["reported"]["ci"]))
        n = len(rows)  # a run that wrote no report counts as a miss
        share = hits / n if n else 0.0
        ok_all &= share >= BAR
        ci = clopper_pearson(hits, n) or (float("nan"), float("nan"))
        deltas = [v["delta"] for v in now if v is not None and v["delta"] is not None]
        mean = sum(deltas) / len(deltas) if deltas else float("nan")
        grades = {g: sum(1 for v in now if v is not None and v["grade"] == g) for g in "ABCF"}
        errored = sum(v["errored"] for v in rows if v)
        print(f"{name:8} {hits:3d}/{n:<3d} {share:6.1%}  [{ci[0]:6.1%}, {ci[1]:6.1%}]{'':8} {mean:+11.2f}  "
              + " ".join(f"{g}:{c}" for g, c in grades.items()) + f"   {errored:5d}  ({reported}/{n})")
    missing = [r["seed"] for r in runs if r.get("error")]
    if missing:
        print(f"runs that wrote no report (counted as misses): seeds {missing}")
    method = next((rescore(v["cases"])["method"] for r in runs for v in r["skills"].values()), "?")
    print(f"intervals re-scored now ({method}); 'as reported': the right-direction count by the reports' own grades ({source})")
    print(f"verdict: {'every skill at or above' if ok_all else 'NOT every skill reaches'} the {BAR:.0%} bar")
    return ok_all


def null_share(rates: list[float], trials: int, sims: int, seed: int = 23) -> tuple[float, float, float]:
    """A placebo with a true delta of 0: both arms of each case pass with the same chance
    (``rates``), ``trials`` trials per case per arm. Simulated ``sims`` times and scored by
    :func:`rescore`: (share in the right direction, share graded A or B, share whose
    interval excludes 0)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    hits = ab = excl = 0
    for _ in range(sims):
        cases = [{"with": list((rng.random(trials) < p).astype(float)), "without": list((rng.random(trials) < p).astype(float))}
                 for p in rates]
        s = rescore(cases)
        hits += right("placebo", s["grade"], s["ci"])
        ab += s["grade"] in ("A", "B")
        excl += not (s["ci"][0] <= 0 <= s["ci"][1])
    return hits / sims, ab / sims, excl / sims


def placebo_null(runs: list[dict[str, Any]], rates: list[float] | None, trials: int | None, sims: int) -> None:
    """What a truly null placebo should give: with the per-case pass rates pooled from both
    arms of the saved placebo runs (or ``rates``), at the saved trials per case (or ``trials``)."""
    saved = [r["skills"]["placebo"]["cases"] for r in runs if "placebo" in r["skills"]]
    if rates is None:
        if not saved:
            return
        names = [c["name"] for c in saved[0]]
        pooled = {n: [s for cases in saved for c in cases if c["name"] == n for s in c["with"] + c["without"]] for n in names}
        rates = [sum(v) / len(v) for v in pooled.values()]
        print("placebo pass rates, both arms pooled: " + ", ".join(f"{n} {r:.2f}" for n, r in zip(names, rates, strict=True)))
    if trials is None:
        trials = len(saved[0][0]["with"]) if saved else 2
    share, ab, excl = null_share(rates, trials, sims)
    print(f"a true null at those rates, {trials} trials per case per arm ({sims} simulated runs): right direction {share:.1%} "
          f"(grade A/B {ab:.1%}, interval excluding 0 {excl:.1%})")


def line(r: int, run: dict[str, Any]) -> str:
    parts = []
    for name in SKILLS:
        v = run["skills"].get(name)
        if v is None:
            parts.append(f"{name} -")
            continue
        s = rescore(v["cases"])
        ci = s["ci"] or [float("nan"), float("nan")]
        parts.append(f"{name} {s['grade']} {s['delta']:+.2f} [{ci[0]:+.2f}, {ci[1]:+.2f}]")
    return f"run {r + 1:3d} (seed {run['seed']}, {run['seconds']:.0f} s): " + "  ".join(parts)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "version": RESULTS_VERSION,
        "command": f"agentsproof eval-all {PLUGIN.relative_to(ROOT)} --provider local --no-cache --parallel 1",
        "bench": "python bench/calibration.py " + " ".join(sys.argv[1:]),
        "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "settings": {"repeats": args.repeats, "jobs": args.jobs, "threads": args.threads, "first_seed": args.seed,
                     "max_tokens_override": args.max_tokens, "commit": _commit()},
        "runs": [],
    }
    if args.save and args.save.is_file():  # carry on where a stopped measurement left off
        before = json.loads(args.save.read_text())
        if before.get("settings", {}).get("max_tokens_override") == args.max_tokens:
            doc["runs"] = [r for r in before.get("runs", []) if not r.get("error")]
            doc["started"] = before.get("started", doc["started"])
            doc["resumed"] = [*before.get("resumed", []), doc["settings"]["commit"]]
    done = {r["seed"] for r in doc["runs"]}
    todo = [r for r in range(args.repeats) if args.seed + r not in done]
    if done:
        print(f"{len(done)} runs already in {args.save}; running the {len(todo)} missing seeds", flush=True)
    lock = threading.Lock()
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="calibration-") as tmp:
        def job(r: int) -> dict[str, Any]:
            run = one_run(args.seed + r, Path(tmp) / f"rep-{r}", args.threads, args.max_tokens)
            with lock:
                doc["runs"].append(run)
                doc["runs"].sort(key=lambda x: x["seed"])
                if args.save:
                    _write(args.save, doc)
                print(line(r, run), flush=True)
            return run
        with ThreadPoolExecutor(args.jobs) as pool:
            list(pool.map(job, todo))
    doc["seconds"] = round(time.time() - t0)
    if args.save:
        _write(args.save, doc)
    return doc


def _write(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(path)


def _commit() -> str | None:
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--repeats", type=int, default=40)
    ap.add_argument("--jobs", type=int, default=1, help="runs at the same time (each one worker)")
    ap.add_argument("--threads", type=int, default=1, help="llama.cpp threads per run")
    ap.add_argument("--max-tokens", type=int, default=None,
                    help="override the evals' defaults.max_tokens (AGENTSPROOF_LOCAL_MAX_TOKENS); default: none, the evals' own")
    ap.add_argument("--seed", type=int, default=2300, help="the first run's sampling seed (run r: seed + r)")
    ap.add_argument("--save", type=Path, metavar="FILE", help="keep every run's per-case scores here (JSON, rewritten after each run)")
    ap.add_argument("--from", dest="source", type=Path, metavar="FILE", help="re-score the runs saved in FILE; no model call")
    ap.add_argument("--null-rates", type=lambda v: [float(x) for x in v.split(",")], metavar="P,P,...",
                    help="with --from: simulate a true-null placebo with these per-case pass rates (default: pooled from the saved placebo runs)")
    ap.add_argument("--null-trials", type=int, help="with --from: trials per case per arm of that simulation (default: the saved runs')")
    ap.add_argument("--null-sims", type=int, default=4000)
    args = ap.parse_args()
    if args.source is not None:
        doc = json.loads(args.source.read_text())
        runs = doc["runs"]
        s = doc.get("settings", {})
        print(f"{len(runs)} saved runs of {doc['command']} ({doc.get('started', '?')}, commit {s.get('commit')}, "
              f"seeds {min(r['seed'] for r in runs)}..{max(r['seed'] for r in runs)}, max tokens override {s.get('max_tokens_override')})")
        table(runs, f"saved in {args.source}")
        placebo_null(runs, args.null_rates, args.null_trials, args.null_sims)
        return
    doc = measure(args)
    print(f"\n{args.repeats} runs of {doc['command']} (seeds {args.seed}..{args.seed + args.repeats - 1}, "
          f"max tokens {'override ' + str(args.max_tokens) if args.max_tokens else 'from the evals'}), {doc['seconds']} s")
    table(doc["runs"], "this run")
    placebo_null(doc["runs"], None, None, args.null_sims)


if __name__ == "__main__":
    main()
