"""Large HTML reports draw trial details in the browser (agentsproof.report.lazy), in
headless Chromium: the same rows and details as the full report, on opening an item or a
trial, by a link to a trial, or with "Expand"; no console errors; hostile text stays text."""

from __future__ import annotations

import os
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agentsproof.report.render import render_html
from agentsproof.model.results import RunResult
from conftest import Rule, make_plugin, run_cli, simple_eval

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"]
EVIL = "hello </script><script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\"> & \u2028 é"
STATIC_TRIAL = re.compile(r'<details class="trial t-(scored|errored)"')
GRADERS = [{"type": "deterministic", "checks": {"mustContain": ["hello"], "regexMatch": ["^h"]}}]


@pytest.fixture(scope="module")
def browser():
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        if os.environ.get("CI"):
            pytest.fail("chromium not installed (Debian package chromium) - required in CI")
        pytest.skip("chromium not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser, tmp_path):
    ctx = browser.new_context(user_agent="agentsproof-test")
    pg = ctx.new_page()
    pg.errors = []
    pg.on("console", lambda m: pg.errors.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None)
    pg.on("pageerror", lambda e: pg.errors.append(f"pageerror: {e}"))
    yield pg
    ctx.close()


def _run(byok_env, tmp_path: Path, items: int, trials: int) -> Path:
    byok_env.add(Rule(status=400, message="bad <b>request</b>", times=2), Rule(reply=EVIL, times=7), Rule(reply="nope"))
    plugin = make_plugin(tmp_path, skills={f"s{i}": {"eval": simple_eval(GRADERS, trials=trials)} for i in range(items)})
    out = tmp_path / "runs"
    # in a thread of its own: Playwright's sync API keeps an event loop running in this one
    with ThreadPoolExecutor(1) as pool:
        code, _, err = pool.submit(run_cli, ["eval-all", plugin, "--model", "m", "--output", out, "--abort-after", "0"]).result()
    assert code == 0, err
    return out / "demo-plugin"


JS_TRIALS = """() => Array.from(document.querySelectorAll('details.trial')).map(d => {
  d.open = true;
  // the text of the row and of the details; white space between elements is markup, not content
  return [d.id, d.querySelector('summary').textContent.replace(/\\s+/g, ''),
          (d.querySelector('.tbody') || {textContent: ''}).textContent.replace(/\\s+/g, '')];
})"""


def _all_trials(page, url: str) -> list:
    page.goto(url)
    page.click("button[data-expand=\"details.item, details.trial\"]")  # opens every item, draws and opens every trial
    page.wait_for_function("document.querySelectorAll('details.trial .tbody').length === document.querySelectorAll('details.trial').length")
    return page.evaluate(JS_TRIALS)


def test_lazy_trials_show_what_the_full_report_shows(byok_env, tmp_path, monkeypatch, page):
    monkeypatch.setenv("AGENTSPROOF_HTML_LAZY_AFTER", "0")  # every report drawn lazily
    folder = _run(byok_env, tmp_path, 2, 4)
    lazy = folder / "demo-plugin-eval.html"
    html = lazy.read_text(encoding="utf-8")
    assert 'type="application/json"' in html and not STATIC_TRIAL.search(html)
    full = tmp_path / "full.html"
    full.write_text(render_html(RunResult.model_validate_json((folder / "eval-all-summary.json").read_text())), encoding="utf-8")
    got, want = _all_trials(page, lazy.as_uri()), _all_trials(page, full.as_uri())
    assert len(want) == 16 and got == want
    assert any("ERRORED" in row[1] for row in got) and any("window.__pwned" in row[2] for row in got)
    assert page.evaluate("window.__pwned") is None and page.errors == []


def test_a_link_to_a_trial_draws_and_opens_it(byok_env, tmp_path, monkeypatch, page):
    monkeypatch.setenv("AGENTSPROOF_HTML_LAZY_AFTER", "0")
    folder = _run(byok_env, tmp_path, 1, 3)
    url = (folder / "demo-plugin-eval.html").as_uri()
    page.goto(url + "#item-skills-s0-without-2")
    el = page.locator("#item-skills-s0-without-2")
    assert el.evaluate("d => d.open") and "Response" in el.locator(".tbody").text_content()
    assert page.evaluate("document.querySelector('details.item').open") and page.errors == []


def test_a_large_report_opens_lazily_and_its_trials_appear_when_expanded(byok_env, tmp_path, page):
    folder = _run(byok_env, tmp_path, 1, 501)  # 1,002 trials: past the default of 1,000
    html = (folder / "demo-plugin-eval.html").read_text(encoding="utf-8")
    assert not STATIC_TRIAL.search(html) and html.count('type="application/json"') == 2
    page.goto((folder / "demo-plugin-eval.html").as_uri())
    assert page.locator("details.trial").count() == 0
    page.locator("details.item > summary").first.click()  # the user opens the item
    page.wait_for_function("document.querySelectorAll('details.trial').length === 1002")
    trial = page.locator("#item-skills-s0-with-500")
    trial.locator("summary").click()
    body = trial.locator(".tbody")
    body.wait_for()
    assert "Response" in body.text_content() and "mustContain" in body.text_content()
    errored = page.locator("details.trial.t-errored").first
    errored.locator("summary").click()
    assert "Errored — left out of the scores." in errored.locator(".tbody").text_content()
    assert page.errors == [] and page.evaluate("window.__pwned") is None
