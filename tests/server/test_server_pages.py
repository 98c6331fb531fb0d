"""The pages in headless Chromium (Playwright driving /usr/bin/chromium): they render,
filters and pagination work, goldens can be edited and approved, the CLI's results show
a trend chart, there are no console errors, and agent output holding <script> is inert."""

from __future__ import annotations

import json
import os
import shutil
from datetime import date, timedelta

import pytest
from server_helpers import api, new_run, step, wait_grade
from pg import BACKENDS, make_db_url, pg_cluster  # noqa: F401 - fixture
from serverkit import running_server

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"]
EVIL = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


def _need_chromium() -> None:
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        if os.environ.get("CI"):
            pytest.fail("chromium not installed (Debian package chromium) - required in CI")
        pytest.skip("chromium not installed")


@pytest.fixture(scope="module")
def browser():
    _need_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="module", params=BACKENDS)
def site(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"pages-{request.param}")
    with running_server(folder, db_url=make_db_url(request, request.param, folder)) as srv:
        key = srv.create_key("shop")
        srv.create_key("other")
        with api(srv, key) as c:
            g = c.post("goldens", json={"name": "refund", "input": "refund order 1", "goal": "refund", "suite": "core"}).json()
            for i in range(30):
                new_run(c, "shop", label=f"batch-{i:02d}", metadata={"env": "dev" if i % 3 == 0 else "prod", "n": i}, goldenId=g["id"] if i == 5 else None)
            report_run = new_run(c, "shop", label="evil-output", goal="answer the question", successCriteria=["is short"], traceAssertions=["max_steps:5"],
                                 metadata={"env": "staging"}, input={"q": EVIL})
            step(c, report_run, 0, type="tool_call", name="lookup", output=EVIL)
            step(c, report_run, 1, type="llm_call", name="model")
            public = c.post(f"runs/{report_run}/complete", json={"output": "answer " + EVIL}).json()["publicUrl"]
            wait_grade(c, report_run)
        srv.key, srv.report_run, srv.public = key, report_run, public
        yield srv


@pytest.fixture
def page(browser):
    ctx = browser.new_context()
    pg = ctx.new_page()
    pg.errors = []
    pg.on("console", lambda m: pg.errors.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None)
    pg.on("pageerror", lambda e: pg.errors.append(f"pageerror: {e}"))
    yield pg
    ctx.close()


def _rows(page) -> list[str]:
    return page.locator("#runs tr.run-row td:nth-child(2)").all_inner_texts()


def test_projects_runs_filters_and_pagination(site, page):
    page.goto(site.root_url + "/")
    assert page.locator("h1").inner_text() == "Projects"
    page.click("text=shop")
    assert page.url.endswith("/projects/shop/runs")
    assert len(_rows(page)) == 25 and _rows(page)[0] == "evil-output"
    page.click("a[rel=next]")
    assert len(_rows(page)) == 6 and "page 2 of 2" in page.content()
    page.goto(site.root_url + "/projects/shop/runs")
    page.fill("input[name=label]", "batch-1")
    page.click("button:has-text('Filter')")
    assert sorted(_rows(page)) == [f"batch-{i}" for i in range(10, 20)]
    page.fill("input[name=label]", "")
    page.fill("input[name=meta]", "env=dev")
    page.click("button:has-text('Filter')")
    assert sorted(_rows(page)) == [f"batch-{i:02d}" for i in range(0, 30, 3)]
    page.fill("input[name=meta]", "n=7")  # a number in the metadata matches its text
    page.click("button:has-text('Filter')")
    assert _rows(page) == ["batch-07"]
    page.fill("input[name=meta]", "env=staging")
    page.click("button:has-text('Filter')")
    assert _rows(page) == ["evil-output"]
    page.fill("input[name=meta]", "")
    golden_id = site.cli("golden", "list", "--project", "shop").stdout.split("\t")[0]
    page.fill("input[name=golden]", golden_id)
    page.click("button:has-text('Filter')")
    assert _rows(page) == ["batch-05"]
    page.fill("input[name=golden]", "")
    tomorrow = (date.today() + timedelta(days=1)).isoformat()
    page.fill("input[name=since]", tomorrow)
    page.click("button:has-text('Filter')")
    assert _rows(page) == [] and "0 run(s)" in page.content()
    page.fill("input[name=since]", (date.today() - timedelta(days=1)).isoformat())
    page.fill("input[name=until]", tomorrow)
    page.click("button:has-text('Filter')")
    assert "31 run(s)" in page.content()
    assert page.errors == []


def test_run_report_renders_and_script_is_inert(site, page):
    page.goto(site.public)
    assert page.locator("h1").inner_text() == "Run report: evil-output"
    assert page.evaluate("window.__pwned") is None
    assert EVIL in page.locator("#output").inner_text()
    assert "<script>window.__pwned = 1</script>" in page.locator("#input").inner_text()
    assert page.locator("#axes tr").count() == 6  # header + five axes
    assert "tool accuracy" in page.locator("#axes").inner_text()
    assert page.locator("#criteria li").all_inner_texts()[0].startswith("✓ is short")
    assert "max_steps:5" in page.locator("#assertions").inner_text()
    assert page.locator("#steps tr.step").count() == 2 and "12 ms" in page.locator("#steps").inner_text()
    assert page.locator("script").count() == 0
    assert page.errors == []
    # the public URL is revocable
    with api(site, site.key) as c:
        assert c.post(f"runs/{site.report_run}/revoke-public").status_code == 200
    resp = page.goto(site.public)
    assert resp.status == 404


def test_golden_create_edit_approve_in_the_ui(site, page):
    page.goto(site.root_url + "/projects/shop/goldens")
    page.fill("#golden-form input[name=name]", "ui golden <b>")
    page.fill("#golden-form input[name=suite]", "ui-suite")
    page.fill("#golden-form textarea[name=input]", '{"question": "2+2"}')
    page.fill("#golden-form textarea[name=goal]", "add numbers")
    page.fill("#golden-form textarea[name=success_criteria]", "says 4\nis short")
    page.click("#golden-form button[type=submit]")
    assert page.locator("h1").inner_text() == "Golden: ui golden <b>"
    page.fill("#golden-form textarea[name=goal]", "add two numbers")
    page.click("#golden-form button[type=submit]")
    with api(site, site.key) as c:
        assert c.get("proof-suites/ui-suite/cases", params={"projectSlug": "shop"}).json()["cases"] == []
        page.goto(site.root_url + "/projects/shop/goldens")
        page.locator("#goldens tr", has_text="ui golden").locator("button:has-text('Approve')").click()
        (case,) = c.get("proof-suites/ui-suite/cases", params={"projectSlug": "shop"}).json()["cases"]
    assert case["input"] == {"question": "2+2"} and case["goal"] == "add two numbers"
    assert case["success_criteria"] == ["says 4", "is short"] and case["successCriteria"] == ["says 4", "is short"]
    page.fill("#import-form textarea[name=jsonl]", '{"name": "bad", "success_criteria": 3, "input": 1}')
    page.fill("#import-form input[name=suite]", "ui-suite")
    page.click("#import-form button")
    assert "success_criteria: expected a list of strings" in page.locator("#error").inner_text()
    assert [e for e in page.errors if "status of 422" not in e] == []  # the 422 of the bad import itself


def _report(created: str, delta: float, ci: list[float] | None) -> dict:
    item = {"id": "skills/greet", "name": "greet", "kind": "skill", "delta": delta, "passed": delta > 0, "status": "complete",
            "stats": {"delta": delta, "delta_ci": ci} if ci else {}}
    return {"schema_version": "1", "tool": "agentsproof", "command": "eval", "plugin": "demo", "created_at": created, "model": "m",
            "verdict": "PASS", "items": [item]}


def test_push_and_results_trend(site, page, tmp_path):
    files = []
    for i, (delta, ci) in enumerate([(0.1, [-0.1, 0.3]), (0.25, [0.05, 0.45]), (0.4, None)]):
        f = tmp_path / f"r{i}.json"
        f.write_text(json.dumps(_report(f"2026-01-0{i + 1}T00:00:00+00:00", delta, ci)))
        files.append(str(f))
    res = site.cli("push", *files)
    assert res.returncode == 0 and res.stdout.count("pushed:") == 3
    assert site.cli("push", files[0]).stdout.startswith("already stored")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"command": "nope"}))
    res = site.cli("push", str(bad))
    assert res.returncode == 30 and res.stderr.strip() == f"error: {bad}: command: expected one of eval, eval-all, tc-eval, got 'nope'"
    page.goto(site.root_url + "/results")
    assert page.locator("#reports tr").count() == 4
    trend = page.locator(".trend", has_text="greet")
    assert trend.locator("circle").count() == 3
    assert trend.locator("line[stroke-width='3']").count() == 2  # interval bars where delta_ci is known
    titles = trend.locator("circle title").all_text_contents()
    assert titles[1] == "2026-01-02T00:00:00+00:00: delta +0.25 [+0.05, +0.45]"
    assert page.errors == []


def test_other_pages_render_without_errors(site, page):
    for path in ("/projects/shop/proof-runs", "/projects/other/runs", "/projects/nope/runs", "/r/" + "0" * 32, "/projects/shop/runs?since=garbage"):
        page.goto(site.root_url + path)
        assert page.locator("h1").count() == 1
    assert "is not a date" in page.content()
    assert [e for e in page.errors if "404" not in e] == []


def test_cross_site_form_posts_are_refused(site):
    import httpx

    before = site.cli("golden", "list", "--project", "shop").stdout
    form = {"name": "csrf", "input": "x", "suite": "core", "approved": "1"}
    for headers in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}):
        r = httpx.post(site.root_url + "/projects/shop/goldens", data=form, headers=headers)
        assert r.status_code == 403
    golden_id = before.split("\t")[0]
    assert httpx.post(f"{site.root_url}/projects/shop/goldens/{golden_id}/approve", headers={"Origin": "http://evil.example"}).status_code == 403
    assert site.cli("golden", "list", "--project", "shop").stdout == before
    ok = httpx.post(site.root_url + "/projects/shop/goldens", data=form, headers={"Origin": site.root_url})
    assert ok.status_code == 303


def test_api_docs_page_renders_offline(site, browser):
    """/api/docs needs nothing but this server: every request that would leave loopback is
    refused and recorded, and the page still shows every route and schema."""
    ctx = browser.new_context()
    outside: list[str] = []

    def gate(route):
        url = route.request.url
        if url.startswith(site.root_url + "/"):
            return route.continue_()
        outside.append(url)
        return route.abort()

    ctx.route("**/*", gate)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
    pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        resp = pg.goto(site.root_url + "/api/docs")
        assert resp is not None and resp.status == 200
        assert outside == [] and errors == []
        assert pg.locator("script").count() == 0
        assert pg.locator("h1").inner_text().startswith("AgentsProof server")
        routes = pg.locator("#routes").inner_text()
        for method, path in (("POST", "/api/runs"), ("POST", "/api/runs/{run_id}/steps"), ("GET", "/api/proof-suites/{suite_slug}/cases")):
            assert method in routes and path in routes, routes
        run_create = pg.locator("#schema-RunCreate").inner_text()
        assert "clientRunId" in run_create and "maxLength 200" in run_create
        pg.click("a:has-text('/api/runs/{run_id}/complete')")
        assert pg.locator(".op:target").count() == 1
    finally:
        ctx.close()
