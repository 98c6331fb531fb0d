"""The HTML report's charts in headless Chromium: forest plot, per-case dots, pairwise bar.

Rendered from a real eval-all run on the scripted server; the page is loaded from disk
with every network request refused (the report must need none), a screenshot is saved
under the test's tmp dir, and the console must stay free of errors."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from conftest import Rule, make_plugin, read_json, run_cli

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"]
PAIR = "You compare two AI assistant answers"


def _need_chromium() -> None:
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        if os.environ.get("CI"):
            pytest.fail("chromium not installed (Debian package chromium) - required in CI")
        pytest.skip("chromium not installed")


def _plugin(tmp_path):
    graders = [{"type": "deterministic", "checks": ["hello"]}, {"type": "pairwise"}]
    cases = {"version": "2", "defaults": {"trials": 2}, "tasks": [{"name": f"case-{k}", "instruction": f"TASK-{k} greet <b>me</b>", "graders": graders} for k in range(5)]}
    one = {"version": "2", "defaults": {"trials": 3}, "task": {"name": "one", "instruction": "greet", "graders": graders[:1]}}
    make_plugin(tmp_path, skills={"many-cases": {"prompt": "GOODSKILL: hello.\n", "eval": cases}, "<img src=x onerror=window.__pwned=1>": {"prompt": "FLAT\n", "eval": one}})
    return tmp_path / "demo-plugin"


def test_report_charts_render_in_chromium(byok_env, tmp_path):
    _need_chromium()
    srv = byok_env
    srv.add(Rule(reply="good day", judge=False))
    srv.add(Rule(reply="hello there", system_contains="GOODSKILL", judge=False))

    def judge(req):
        user = req["messages"][1]["content"]
        a = user.split("<<<A\n", 1)[1].split("\nA>>>", 1)[0]
        return json.dumps({"reasoning": "r", "better": "A" if "hello" in a else "B"})

    srv.add(Rule(reply=judge, system_contains=PAIR))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval-all", _plugin(tmp_path), "--model", "m", "--output", out])
    assert code in (0, 1), err
    data = read_json(out / "demo-plugin" / "eval-all-summary.json")
    html_path = out / "demo-plugin" / "demo-plugin-eval.html"
    assert "<script src" not in html_path.read_text() and "<link" not in html_path.read_text()

    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, args=ARGS, headless=True, viewport={"width": 1200, "height": 900}
        )  # a fresh profile folder of its own
        try:
            page = browser.new_page()
            errors: list[str] = []
            external: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://") else (external.append(route.request.url), route.abort()))
            page.goto(html_path.as_uri())
            forest = page.locator("svg.forest")
            assert forest.count() == 1 and forest.is_visible()
            assert forest.locator("circle.est").count() == len(data["items"]) == 2
            assert forest.locator("line.ci").count() == 2
            assert forest.locator("rect.band").count() == 4
            labels = forest.locator("text").all_text_contents()
            assert any(t.startswith("<img src=x onerror=") for t in labels), labels  # escaped text, not markup
            assert page.evaluate("window.__pwned === undefined")
            box = forest.bounding_box()
            assert box["width"] > 500 and box["height"] > 60
            page.locator("button[data-expand='details.item']").click()
            many = page.locator("details.item", has_text="many-cases")
            dots = many.locator("svg.case-dots circle.case")
            assert dots.count() == 5
            bar = many.locator("svg.preference")
            assert bar.is_visible() and bar.locator("rect.pref").count() == 1  # the with arm won every pair
            assert "With-arm preference 1.00" in many.inner_text()
            page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        finally:
            browser.close()
    assert (tmp_path / "report.png").stat().st_size > 10_000
    assert errors == [] and external == []
