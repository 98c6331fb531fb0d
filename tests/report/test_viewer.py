"""Every run kept, and a viewer (issue 46.7): each run writes its reports into a run folder
of its own with a ``latest`` link; ``agentsproof view`` writes (or serves) an index of the
runs and a side-by-side page per item, checked in headless Chromium with every network
request refused; a screenshot of each page is saved under the test's tmp dir."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.request

from conftest import Rule, make_plugin, run_cli, simple_eval
from report.test_report_charts import ARGS, CHROMIUM, _need_chromium

CHECKS = [{"type": "deterministic", "checks": ["hello"]}]


def _runs(byok_env, tmp_path):
    """Three good runs of two skills (the second model better), then one stopped by a refused key."""
    skills = {
        "greeter": {"prompt": "GREET: say hello\n", "eval": simple_eval(CHECKS, trials=3)},
        "mute": {"prompt": "MUTE\n", "eval": simple_eval(CHECKS, trials=3)},
    }
    plugin = make_plugin(tmp_path / "src", skills=skills)
    out = tmp_path / "runs"
    byok_env.add(Rule(reply="good day"), Rule(reply="hello!", system_contains="GREET", times=2))
    for model in ("m1", "m2", "m3"):
        code, _, err = run_cli(["eval-all", plugin, "--model", model, "--output", out])
        assert code in (0, 1), err
        byok_env.add(Rule(reply="hello!", system_contains="GREET"))  # the later runs: the skill always helps
    byok_env.add(Rule(status=401, message="bad key"))
    assert run_cli(["eval-all", plugin, "--model", "m4", "--output", out])[0] == 30
    return out


def test_each_run_has_its_own_folder_and_latest_links_the_newest(byok_env, tmp_path):
    out = _runs(byok_env, tmp_path)
    base = out / "demo-plugin"
    folders = sorted(p for p in base.iterdir() if re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{6}", p.name))
    assert len(folders) == 4
    assert all({p.name for p in f.iterdir()} == {"eval-all-summary.json", "eval-all-summary.md", "demo-plugin-eval.html"} for f in folders)
    assert (base / "latest").is_symlink() and os.readlink(base / "latest") in {f.name for f in folders}
    # the reports where the README says stay those of the last good run (m3), not the refused one (m4)
    assert '"model": "m3"' in (base / "eval-all-summary.json").read_text()
    assert '"model": "m4"' in (base / "latest" / "eval-all-summary.json").read_text()
    # compare --last still finds the runs
    code, _, err = run_cli(["compare", "--last", "2", out])
    assert code == 0, err


def test_view_writes_an_index_and_side_by_side_pages_that_render_in_chromium(byok_env, tmp_path):
    _need_chromium()
    out = _runs(byok_env, tmp_path)
    code, stdout, err = run_cli(["view", out, "--last", "3"])
    assert code == 0, err
    assert stdout.strip() == f"4 runs: {out / '_view' / 'index.html'}"
    index = out / "_view" / "index.html"
    text = index.read_text()
    assert "<script" not in text and "http://" not in text and "https://" not in text

    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, args=ARGS, headless=True, viewport={"width": 1300, "height": 900}
        )
        try:
            page = browser.new_page()
            errors: list[str] = []
            external: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.route(
                "**/*", lambda route: route.continue_() if route.request.url.startswith("file://") else (external.append(route.request.url), route.abort())
            )
            page.goto(index.as_uri())
            rows = page.locator("tr.run")
            assert rows.count() == 4
            first = rows.nth(0).inner_text()  # newest first: the run stopped by the refused key
            assert "m4" in first and "INCOMPLETE" in first and "HTTP 401" in first
            assert "m1" in rows.nth(3).inner_text() and "demo-plugin" in rows.nth(3).inner_text()
            page.screenshot(path=str(tmp_path / "view-index.png"), full_page=True)
            # each run's own report opens from the index
            rows.nth(1).locator("a", has_text="html").click()
            assert page.locator("svg.forest").count() == 1 and "m3" in page.content()
            page.go_back()
            # the item filter: the greeter's runs side by side, oldest left, the last 3
            page.locator("p.items a", has_text="greeter").click()
            side = page.locator("table.side")
            assert side.locator("tr", has_text="model").inner_text().split()[1:] == ["m2", "m3", "m4"]
            deltas = side.locator("tr", has_text="delta").first.inner_text().split()[1:]
            assert deltas[0] == "+1.00" and deltas[-1] == "—"  # m4 stopped before a scored trial
            chart = page.locator("svg.trend")
            assert chart.count() == 1 and chart.locator("circle.est").count() == 2
            page.screenshot(path=str(tmp_path / "view-item.png"), full_page=True)
        finally:
            browser.close()
    assert errors == [] and external == []
    assert (tmp_path / "view-index.png").stat().st_size > 10_000


def test_view_item_filter_and_bad_input(byok_env, tmp_path):
    out = _runs(byok_env, tmp_path)
    code, _, err = run_cli(["view", out, "--item", "skills/greeter", "--out", tmp_path / "pages"])
    assert code == 0, err
    text = (tmp_path / "pages" / "index.html").read_text()
    assert "Runs holding <b>skills/greeter</b> (4 of 4)" in text and ">mute</a> " not in text.split("<table")[1]
    code, _, err = run_cli(["view", tmp_path / "nowhere"])
    assert code == 30 and "not a folder of runs" in err and "Traceback" not in err


def test_view_serves_the_pages_and_the_reports(byok_env, tmp_path):
    out = _runs(byok_env, tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentsproof", "view", str(out), "--serve", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        line = proc.stdout.readline()
        url = re.search(r"serving (http://127\.0\.0\.1:\d+/\S+)", line).group(1)
        page = urllib.request.urlopen(url, timeout=30).read().decode()
        assert page.count("<tr class='run'>") == 4
        report = re.search(r"href='(\.\./demo-plugin/\d{8}T\d{6}Z-[0-9a-f]{6}/demo-plugin-eval\.html)'", page).group(1)
        assert "<svg" in urllib.request.urlopen(url.rsplit("/", 1)[0] + "/" + report, timeout=30).read().decode()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
