"""Hostile input against the real server, on SQLite and PostgreSQL: text no page can render
is refused at the edge (422 naming the field, the same on both), rows stored before that
check still render, foreign Host headers and form origins are refused, report URLs never
come from Host, concurrent appends never collide, chunked bodies over the limit get 413."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from pg import BACKENDS, make_db_url, pg_cluster  # noqa: F401 - fixture
from server_helpers import api, new_run, step, wait_grade
from serverkit import running_server

# raw JSON bodies: a lone surrogate escape and NaN/Infinity literals (json.dumps would refuse them)
BAD_BODIES = [
    ("runs", '{"projectSlug": "alpha", "label": "x\\ud800y"}', "label"),
    ("runs", '{"projectSlug": "alpha", "metadata": {"team": "\\udcff"}}', "metadata.team"),
    ("runs", '{"projectSlug": "alpha", "metadata": {"deep": [1, {"k": ["ok", "\\udfff"]}]}}', "metadata.deep[1].k[1]"),
    ("runs", '{"projectSlug": "alpha", "metadata": {"\\ud83d": 1}}', "metadata.\ufffd"),
    ("runs", '{"projectSlug": "alpha", "metadata": {"n": NaN}}', "metadata.n"),
    ("runs", '{"projectSlug": "alpha", "input": {"big": 1e999}}', "input.big"),
    ("steps", '{"type": "llm_call", "latency_ms": NaN}', "latency_ms"),
    ("steps", '{"type": "llm_call", "cost_usd": Infinity}', "cost_usd"),
    ("steps", '{"type": "llm_call", "output": {"text": "a\\ud800"}}', "output.text"),
    ("steps", '{"type": "llm_call", "name": "\\udc80tool"}', "name"),
    ("complete", '{"output": {"score": -Infinity}}', "output.score"),
]


@pytest.fixture(scope="module", params=BACKENDS)
def srv(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"hostile-{request.param}")
    with running_server(folder, db_url=make_db_url(request, request.param, folder)) as handle:
        handle.key = handle.create_key("alpha")
        handle.backend = request.param
        yield handle


def _post_raw(srv, key: str, path: str, raw: str, **headers: str) -> httpx.Response:
    return httpx.post(f"{srv.base_url}/{path}", content=raw.encode(), headers={"x-api-key": key, "content-type": "application/json", **headers}, timeout=30)


def test_bad_text_and_numbers_are_422_naming_the_field(srv):
    with api(srv, srv.key) as c:
        run_id = new_run(c, "alpha")
    details = []
    for target, raw, field in BAD_BODIES:
        path = {"runs": "runs", "steps": f"runs/{run_id}/steps", "complete": f"runs/{run_id}/complete"}[target]
        r = _post_raw(srv, srv.key, path, raw)
        assert r.status_code == 422, (raw, r.status_code, r.text)
        body = r.json()  # valid UTF-8 JSON: the bad input is never echoed
        text = json.dumps(body)
        assert field in body["detail"][0]["msg"], (field, body)
        assert "input" not in body["detail"][0] and "\\ud8" not in text.lower() and "nan" not in text.split("(")[0].lower().replace("finite", "")
        details.append(body["detail"][0]["msg"])
    # the same messages on both databases (the check runs before the database)
    assert details[0] == "Value error, label: text holds a lone UTF-16 surrogate (not valid Unicode)"
    assert details[6] == "Value error, latency_ms: numbers must be finite (no NaN or Infinity)"
    with api(srv, srv.key) as c:
        run = c.get(f"runs/{run_id}").json()
        assert run["steps"] == [] and run["status"] == "running"  # nothing stored
        lst = httpx.get(f"{srv.root_url}/projects/alpha/runs", timeout=30)
        assert lst.status_code == 200


def test_goldens_with_bad_text_are_refused(srv):
    with api(srv, srv.key) as c:
        r = c.post("goldens", content=b'{"name": "g", "input": "\\ud800", "suite": "s"}', headers={"content-type": "application/json"})
        assert r.status_code == 422 and "input" in r.json()["detail"], r.text
    form = {"name": "g", "input": '{"a": NaN}', "suite": "core"}
    r = httpx.post(f"{srv.root_url}/projects/alpha/goldens", data=form, timeout=30)
    assert r.status_code == 422 and "numbers must be finite" in r.text


def _insert_bad_rows(srv) -> tuple[str, str]:
    """A run and steps as an older server (or another tool) could have stored them."""
    with api(srv, srv.key) as c:
        run_id = new_run(c, "alpha", label="old-bad-row", metadata={"team": "x"})
        step(c, run_id, 0)
        public = c.post(f"runs/{run_id}/complete", json={"output": "fine"}).json()["publicUrl"]
        wait_grade(c, run_id)
    if srv.backend == "sqlite":
        con = sqlite3.connect(srv.db_url.split("///", 1)[1])
        con.execute("UPDATE runs SET label = CAST(X'6f6c642dff2d726f77' AS TEXT), metadata = ?, output = ? WHERE id = ?",
                    ('{"team": "\\ud800", "n": NaN}', '{"text": "\\udcff", "x": Infinity}', run_id))
        con.execute("INSERT INTO steps (run_id, step_index, type, name, input, output, latency_ms, cost_usd) VALUES (?, 1, 'llm_call', ?, ?, ?, ?, ?)",
                    (run_id, "na" + "\udcff".encode("utf-8", "surrogatepass").decode("latin-1") + "me", '"\\ud800"', "NaN", float("inf"), float("-inf")))
        con.commit()
        con.close()
    else:
        import psycopg

        with psycopg.connect(srv.db_url.replace("postgresql://", "postgresql://", 1), autocommit=True) as con:
            con.execute("INSERT INTO steps (run_id, step_index, type, name, latency_ms, cost_usd) VALUES (%s, 1, 'llm_call', 'nan-step', 'NaN', 'Infinity')", (run_id,))
            con.execute("UPDATE grades SET overall_score = 'NaN' WHERE run_id = %s", (run_id,))
    return run_id, public


def test_older_bad_rows_still_render(srv):
    run_id, public = _insert_bad_rows(srv)
    with api(srv, srv.key) as c:
        r = c.get(f"runs/{run_id}")
        assert r.status_code == 200, r.text
        run = r.json()
        assert [s["step_index"] for s in run["steps"]] == [0, 1]
        assert run["steps"][1]["latency_ms"] is None and run["steps"][1]["cost_usd"] is None
        if srv.backend == "sqlite":
            assert run["metadata"] == {"team": "\ufffd", "n": None} and run["output"] == {"text": "\ufffd", "x": None}
            assert "\ufffd" in run["label"]
    for url in (f"{srv.root_url}/projects/alpha/runs", f"{srv.root_url}/projects/alpha/runs?label=old", public):
        page = httpx.get(url, timeout=30)
        assert page.status_code == 200, (url, page.status_code)
        page.content.decode("utf-8")  # strict: valid UTF-8


def test_older_bad_rows_render_in_chromium(srv):
    from test_server_pages import ARGS, CHROMIUM, _need_chromium

    _need_chromium()
    from playwright.sync_api import sync_playwright

    _, public = _insert_bad_rows(srv)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            page = b.new_page()
            for url in (public, f"{srv.root_url}/projects/alpha/runs"):
                resp = page.goto(url)
                assert resp is not None and resp.status == 200
                assert "old" in page.content()
        finally:
            b.close()


def test_foreign_host_is_400_and_report_urls_never_come_from_host(srv):
    port = srv.port
    assert httpx.get(f"{srv.root_url}/", headers={"Host": "rebound.example"}, timeout=10).status_code == 400
    assert httpx.get(f"{srv.root_url}/api/health", headers={"Host": f"rebound.example:{port}"}, timeout=10).status_code == 400
    for ok in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "LOCALHOST"):
        assert httpx.get(f"{srv.root_url}/", headers={"Host": ok}, timeout=10).status_code == 200, ok
    with api(srv, srv.key) as c:
        run_id = new_run(c, "alpha")
        url = c.post(f"runs/{run_id}/complete", json={"output": 1}, headers={"Host": f"localhost:{port}"}).json()["publicUrl"]
        assert url.startswith(f"http://127.0.0.1:{port}/r/"), url


def test_form_posts_with_a_foreign_or_null_origin_are_refused(srv):
    with api(srv, srv.key) as c:
        g = c.post("goldens", json={"name": "csrf", "input": "x", "suite": "core"}).json()
    for headers in ({"Origin": "http://evil.example"}, {"Origin": "null"}, {"Origin": f"http://localhost:{srv.port + 1}"},
                    {"Origin": "null", "Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"}):
        r = httpx.post(f"{srv.root_url}/projects/alpha/goldens/{g['id']}/approve", headers=headers, timeout=10)
        assert r.status_code == 403, headers
    r = httpx.post(f"{srv.root_url}/projects/alpha/goldens", data={"name": "x", "input": "y"}, headers={"Origin": "http://evil.example", "Host": "evil.example"}, timeout=10)
    assert r.status_code == 400  # the Host alone is refused first
    with api(srv, srv.key) as c:
        assert c.get("goldens").json()[-1]["approved"] is False


def test_100_concurrent_appends_without_index_never_409(srv):
    with api(srv, srv.key) as c:
        run_id = new_run(c, "alpha")
    with httpx.Client(base_url=srv.base_url + "/", headers={"x-api-key": srv.key}, timeout=120, limits=httpx.Limits(max_connections=100)) as c:
        with ThreadPoolExecutor(100) as pool:
            res = list(pool.map(lambda i: step(c, run_id, None, name=f"s{i}"), range(100)))
        assert [r.status_code for r in res if r.status_code != 200] == []
        assert sorted(r.json()["stepIndex"] for r in res) == list(range(100))
        run = c.get(f"runs/{run_id}").json()
        assert sorted(s["name"] for s in run["steps"]) == sorted(f"s{i}" for i in range(100))


def test_chunked_body_over_the_limit_is_413(srv):
    def chunks():
        for _ in range(40):
            yield b"x" * (100 * 1024)  # 4 MB, no content-length

    with api(srv, srv.key) as c:
        run_id = new_run(c, "alpha")
    r = httpx.post(f"{srv.base_url}/runs/{run_id}/steps", content=chunks(), headers={"x-api-key": srv.key, "content-type": "application/json"}, timeout=30)
    assert r.status_code == 413, r.text
    assert httpx.get(f"{srv.base_url}/health", timeout=10).status_code == 200


def test_sqlite_file_is_created_owner_only(srv):
    if srv.backend != "sqlite":
        pytest.skip("a SQLite file only")
    mode = stat.S_IMODE(os.stat(srv.db_url.split("///", 1)[1]).st_mode)
    assert mode == 0o600, oct(mode)
