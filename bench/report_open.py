"""How fast the HTML report of a 10,000-trial `eval-all` opens in headless Chromium.

The report is made by the real command (`python -m agentsproof eval-all`, 10 items x 500
trials x 2 arms, the scripted server at 0 ms latency in its own process); it draws trial
details on demand (agentsproof.report.lazy). Beside it, the same run rendered with every
trial as HTML (the form small runs get), from the run's JSON report. Each page is opened
--reps times in a fresh browser context; measured: navigation start to the load event
(the page is parsed, laid out and its script has run: interactive), then opening one item
until its 1,000 trial rows are drawn, then opening one trial until its details show.
Target: opening and becoming interactive < 2 s.

    python bench/report_open.py [--trials 10000] [--reps 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from throughput import eval_all_report  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"]
TARGET_S = 2.0
ITEMS = 10


def make_report(work: Path, trials: int) -> tuple[Path, Path]:
    """The lazy HTML report eval-all writes, and the same run rendered whole."""
    summary = eval_all_report(work, trials, ITEMS)
    folder = summary.parent
    lazy = folder / "bench-plugin-eval.html"
    from agentsproof.report.render import render_html
    from agentsproof.model.results import RunResult

    run = RunResult.model_validate_json((folder / "eval-all-summary.json").read_text(encoding="utf-8"))
    full = work / "full.html"
    full.write_text(render_html(run), encoding="utf-8")
    return lazy, full


def measure(browser, path: Path, per_item: int) -> dict[str, float]:
    ctx = browser.new_context()
    page = ctx.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    t0 = time.perf_counter()
    page.goto(path.as_uri(), wait_until="load", timeout=120_000)
    wall_load = time.perf_counter() - t0
    nav = page.evaluate("(() => { const n = performance.getEntriesByType('navigation')[0]; return [n.domInteractive, n.loadEventEnd]; })()")
    t1 = time.perf_counter()
    page.locator("details.item > summary").first.click()
    page.wait_for_function(f"document.querySelectorAll('details.item[open] details.trial').length >= {per_item}", timeout=120_000)
    open_item = time.perf_counter() - t1
    t2 = time.perf_counter()
    page.locator("details.item[open] details.trial > summary").nth(per_item // 2).click()
    page.locator("details.item[open] details.trial[open] .tbody").first.wait_for(timeout=60_000)
    open_trial = time.perf_counter() - t2
    ctx.close()
    if errors:
        raise SystemExit(f"{path.name}: console errors: {errors[:3]}")
    return {"load_s": wall_load, "dom_interactive_s": nav[0] / 1000, "load_event_s": nav[1] / 1000, "open_item_s": open_item, "open_trial_s": open_trial}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=10_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="agentsproof-open-") as tmp:
        work = Path(tmp)
        lazy, full = make_report(work, args.trials)
        sizes = {"lazy_mb": round(lazy.stat().st_size / 1e6, 1), "full_mb": round(full.stat().st_size / 1e6, 1)}
        runs: dict[str, list[dict[str, float]]] = {"lazy": [], "full": []}
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            try:
                for _ in range(args.reps):  # interleaved: both forms see the same load
                    runs["lazy"].append(measure(browser, lazy, args.trials // ITEMS))
                    runs["full"].append(measure(browser, full, args.trials // ITEMS))
            finally:
                browser.close()
    med = {k: {m: round(statistics.median(r[m] for r in v), 3) for m in v[0]} for k, v in runs.items()}
    ratio = round(statistics.median(a["load_s"] / b["load_s"] for a, b in zip(runs["lazy"], runs["full"])), 3)
    ok = med["lazy"]["load_s"] < TARGET_S
    result = {"trials": args.trials, "reps": args.reps, **sizes, "median": med, "lazy_to_full_load_ratio": ratio, "ok": ok}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"HTML report of {args.trials:,} trials, headless Chromium, median of {args.reps} (interleaved)")
        for k in ("lazy", "full"):
            m = med[k]
            print(f"  {k:4s} {sizes[k + '_mb']:6.1f} MB  open+interactive {m['load_s']:.2f} s (DOM interactive {m['dom_interactive_s']:.2f} s,"
                  f" load event {m['load_event_s']:.2f} s)  open an item {m['open_item_s']:.2f} s  open a trial {m['open_trial_s']:.2f} s")
        print(f"  lazy ÷ full open time: {ratio}   target < {TARGET_S} s: {'ok' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
