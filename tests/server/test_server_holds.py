"""The server holds (issue 30, item 4), on SQLite and PostgreSQL: values are checked at any
depth, old bad rows never break a page or a filter, golden ids are per project (with the
migration keeping older goldens), proof runs and orphan runs nobody will use are deleted,
a repeated create with one clientRunId gives one run, and serve's settings are checked."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import time

import httpx
import pytest
from pg import BACKENDS, make_db_url, pg_cluster  # noqa: F401 - fixture
from server_helpers import api, new_run, step
from serverkit import running_server


@pytest.fixture(scope="module", params=BACKENDS)
def srv(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"holds-{request.param}")
    with running_server(folder, db_url=make_db_url(request, request.param, folder)) as handle:
        handle.key = handle.create_key("holds")
        handle.other_key = handle.create_key("other")
        handle.backend = request.param
        yield handle


def _nested(depth: int, leaf: str) -> str:
    """Raw JSON: ``leaf`` inside ``depth`` levels of objects and lists."""
    return '{"a": [' * (depth // 2) + leaf + "]}" * (depth // 2)


def _post_raw(srv, path: str, raw: str) -> httpx.Response:
    return httpx.post(f"{srv.base_url}/{path}", content=raw.encode(), headers={"x-api-key": srv.key, "content-type": "application/json"}, timeout=30)


def _runs_page(srv, **params: str) -> httpx.Response:
    return httpx.get(f"{srv.root_url}/projects/holds/runs", params=params, timeout=30)


def test_values_are_checked_at_any_depth(srv):
    deep_nan = _post_raw(srv, "runs", '{"projectSlug": "holds", "label": "deep-nan", "metadata": {"k": ' + _nested(70, "NaN") + "}}")
    assert deep_nan.status_code == 422, deep_nan.text
    assert "nested deeper than 64 levels" in deep_nan.json()["detail"][0]["msg"]
    near_nan = _post_raw(srv, "runs", '{"projectSlug": "holds", "label": "near-nan", "metadata": {"k": ' + _nested(60, "NaN") + "}}")
    assert near_nan.status_code == 422 and "numbers must be finite" in near_nan.json()["detail"][0]["msg"], near_nan.text
    deep_golden = httpx.post(f"{srv.base_url}/goldens", content=('{"name": "deep", "input": ' + _nested(80, '"x"') + "}").encode(),
                             headers={"x-api-key": srv.key, "content-type": "application/json"}, timeout=30)
    assert deep_golden.status_code == 422 and "nested deeper than 64 levels" in deep_golden.text
    with api(srv, srv.key) as c:
        run_id = new_run(c, "holds", label="deep-ok", metadata={"team": "deep"}, input=json.loads(_nested(60, "1")))
        r = _post_raw(srv, f"runs/{run_id}/steps", '{"type": "llm_call", "output": ' + _nested(70, "Infinity") + "}")
        assert r.status_code == 422, r.text
        assert c.get(f"runs/{run_id}").json()["steps"] == []  # nothing stored
    page = _runs_page(srv, meta="team=deep")
    assert page.status_code == 200 and "deep-ok" in page.text and "deep-nan" not in page.text


def _spoil(srv, run_id: str, sqlite_json: str, pg_json: str) -> None:
    """Store ``metadata`` as an older server (or another tool) could have, past every check."""
    if srv.backend == "sqlite":
        con = sqlite3.connect(srv.db_url.split("///", 1)[1])
        con.execute("UPDATE runs SET metadata = ? WHERE id = ?", (sqlite_json, run_id))
        con.commit()
        con.close()
    else:
        import psycopg

        with psycopg.connect(srv.db_url, autocommit=True) as con:
            con.execute("UPDATE runs SET metadata = %s::json WHERE id = %s", (pg_json, run_id))


def test_bad_stored_rows_never_break_a_page_or_a_filter(srv):
    with api(srv, srv.key) as c:
        good = new_run(c, "holds", label="filter-good", metadata={"env": "prod"})
        spoilt = [new_run(c, "holds", label=f"filter-spoilt-{i}", metadata={"env": "prod"}) for i in range(3)]
    _spoil(srv, spoilt[0], '{"env": "prod", "n": ' + _nested(70, "NaN") + "}", '{"env": "prod", "t": "\\ud800"}')
    _spoil(srv, spoilt[1], "[" * 3000 + "]" * 3000, '{"t": "a\\u0000b", "env": "prod"}')
    _spoil(srv, spoilt[2], '{"env": "prod", "x": Infinity}', '{"env": "prod", "t": "\\udc00"}')
    for _ in range(2):  # for ever means: the second time too
        page = _runs_page(srv, meta="env=prod")
        assert page.status_code == 200, (page.status_code, page.text[:300])
        assert "filter-good" in page.text and "filter-spoilt" not in page.text  # the spoilt rows just do not match
    page = _runs_page(srv, label="filter-")
    assert page.status_code == 200 and all(f"filter-spoilt-{i}" in page.text for i in range(3))  # and are still listed
    page.content.decode("utf-8")
    with api(srv, srv.key) as c:
        for run_id in (good, *spoilt):
            assert c.get(f"runs/{run_id}").status_code == 200
    # a filter value the database cannot hold is a message on the page, not an error answer
    page = _runs_page(srv, meta="env=pr\x00od")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"] and "NUL" in page.text
    assert "no run" in page.text or "0 run(s)" in page.text
    log = srv.log_tail(200_000)
    assert "unavailable" not in log and "Traceback" not in log


def test_golden_ids_are_per_project(srv):
    gl = srv.workdir / "case-001.jsonl"
    gl.write_text(json.dumps({"id": "case-001", "name": "shared id", "input": "q", "goal": "g"}) + "\n")
    for project in ("staging", "prod"):
        res = srv.cli("golden", "import", str(gl), "--project", project, "--suite", "core", "--approve")
        assert res.returncode == 0, res.stderr
    listed = srv.cli("golden", "list").stdout
    assert "case-001\tstaging\t" in listed and "case-001\tprod\t" in listed
    res = srv.cli("golden", "approve", "case-001")
    assert res.returncode == 30 and "--project" in res.stderr and "prod" in res.stderr and "staging" in res.stderr
    assert srv.cli("golden", "approve", "case-001", "--project", "prod").returncode == 0
    with api(srv, srv.key) as mine, api(srv, srv.other_key) as other:
        assert mine.post("goldens", json={"id": "holds-secret", "name": "mine", "input": "q", "suite": "s", "approved": True}).status_code == 200
        # another project's key learns nothing: its id answers exactly as an id nobody uses
        taken = other.post("runs", json={"projectSlug": "other", "goldenId": "holds-secret"})
        unused = other.post("runs", json={"projectSlug": "other", "goldenId": "nobody-uses-this"})
        assert (taken.status_code, taken.json()) == (unused.status_code, unused.json()) == (404, {"detail": "golden not found"})
        cases = mine.get("proof-suites/s/cases", params={"projectSlug": "holds"}).json()
        taken = other.post(f"proof-runs/{cases['proofRunId']}/case-results", json={"goldenId": "holds-secret", "passed": True})
        assert taken.status_code == 404
        created = other.post("goldens", json={"id": "holds-secret", "name": "theirs", "input": "other q"})
        fresh = other.post("goldens", json={"id": "nobody-uses-this", "name": "theirs", "input": "other q"})
        assert created.status_code == fresh.status_code == 200
        assert {**created.json(), "id": ""} == {**fresh.json(), "id": ""}
        assert [g["name"] for g in mine.get("goldens").json() if g["id"] == "holds-secret"] == ["mine"]  # untouched
        run = mine.post("runs", json={"projectSlug": "holds", "goldenId": "holds-secret"}).json()["runId"]
        assert mine.get(f"runs/{run}").json()["input"] == "q"


def test_a_repeated_create_with_one_client_run_id_is_one_run(srv):
    with api(srv, srv.key) as c, api(srv, srv.other_key) as other:
        body = {"projectSlug": "holds", "input": "i", "clientRunId": "sdk-retry-1"}
        first = c.post("runs", json=body).json()["runId"]
        assert c.post("runs", json={**body, "label": "the retry"}).json()["runId"] == first
        theirs = other.post("runs", json={**body, "projectSlug": "other"}).json()["runId"]
        assert theirs != first  # per project: another project's run of that id is its own
        assert other.get(f"runs/{first}").status_code == 404


def _count(srv, sql: str, **params: str) -> int:
    """``SELECT count(*) ...`` on the server's database."""
    from sqlalchemy import text

    from agentsproof.server.db import open_db

    db = open_db(srv.db_url)
    try:
        with db.engine.connect() as con:
            return int(con.execute(text(sql), params).scalar_one())
    finally:
        db.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_unused_proof_runs_and_orphan_runs_are_deleted(backend, request, tmp_path):
    env = {"AGENTSPROOF_PROOF_RUN_TTL": "1", "AGENTSPROOF_PROOF_RUN_PURGE": "1", "AGENTSPROOF_ORPHAN_RUN_TTL": "1"}
    with running_server(tmp_path, db_url=make_db_url(request, backend, tmp_path), env=env) as srv:
        key = srv.create_key("sweep")
        with api(srv, key) as c:
            g = c.post("goldens", json={"name": "g", "input": "q", "suite": "core", "approved": True}).json()
            unused = [c.get("proof-suites/core/cases", params={"projectSlug": "sweep"}).json()["proofRunId"] for _ in range(5)]
            used = c.get("proof-suites/core/cases", params={"projectSlug": "sweep"}).json()["proofRunId"]
            assert c.post(f"proof-runs/{used}/case-results", json={"goldenId": g["id"], "passed": True}).status_code == 200
            orphan = new_run(c, "sweep", label="orphan")
            with_step = new_run(c, "sweep", label="with-step")
            assert step(c, with_step, 0).status_code == 200
            done = new_run(c, "sweep", label="done")
            assert c.post(f"runs/{done}/complete", json={"output": "x"}).status_code == 200
            deadline = time.monotonic() + 30
            in_project = "SELECT count(*) FROM proof_runs WHERE project_id = (SELECT id FROM projects WHERE slug = 'sweep')"
            while _count(srv, in_project) > 1 or c.get(f"runs/{orphan}").status_code != 404:
                assert time.monotonic() < deadline, "unused proof runs or the orphan run were never deleted"
                time.sleep(0.3)
            assert _count(srv, "SELECT count(*) FROM proof_runs WHERE id = :id", id=used) == 1  # it holds a case result: kept, as expired
            assert c.post(f"proof-runs/{used}/complete").status_code == 409
            assert all(c.post(f"proof-runs/{pr}/complete").status_code == 404 for pr in unused)
            assert c.get(f"runs/{with_step}").status_code == 200 and c.get(f"runs/{done}").status_code == 200
        page = httpx.get(f"{srv.root_url}/projects/sweep/proof-runs", timeout=30)
        assert page.status_code == 200 and page.text.count("expired") == 1


def test_serve_reads_its_settings_through_envcfg(tmp_path):
    """Every AGENTSPROOF_* number the server reads (found in its source), malformed: one line, exit 30."""
    import os
    import re
    from pathlib import Path

    import agentsproof.server

    read = sorted({m for p in Path(agentsproof.server.__file__).parent.glob("*.py")
                   for m in re.findall(r'env_(?:int|number)\(\s*"(AGENTSPROOF_\w+)"', p.read_text(encoding="utf-8"))})
    assert {"AGENTSPROOF_MAX_BODY", "AGENTSPROOF_HEADER_TIMEOUT", "AGENTSPROOF_PROOF_RUN_TTL", "AGENTSPROOF_GRADE_RETRY_DELAY"} <= set(read)
    bad = {"AGENTSPROOF_HEADER_TIMEOUT": "-1", "AGENTSPROOF_PROOF_RUN_TTL": "soon"}
    for name, value in ((n, bad.get(n, "abc")) for n in read):
        env = {**os.environ, name: value}
        res = subprocess.run([sys.executable, "-m", "agentsproof", "serve", "--port", "0", "--db", f"sqlite:///{tmp_path / 'env.db'}"],
                             capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
        assert res.returncode == 30, (name, res.returncode, res.stderr[-500:])
        lines = res.stderr.strip().splitlines()
        assert lines[-1].startswith(f"error: environment: {name}: ") and "internal error" not in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_migration_to_per_project_golden_ids_keeps_older_goldens(backend, request, tmp_path):
    """A database at revision 0002 (golden ids global) with goldens is upgraded: every golden
    is kept as it was, and an id may then be used by a second project."""
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import text

    import agentsproof.server.db as server_db

    url = server_db.resolve_db_url(make_db_url(request, backend, tmp_path))
    engine = server_db.make_engine(url)
    cfg = Config()
    cfg.set_main_option("script_location", str(server_db.Path(server_db.__file__).parent / "migrations"))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0002")
        conn.execute(text("INSERT INTO projects (slug, created_at) VALUES ('staging', CURRENT_TIMESTAMP)"))
        conn.execute(text("INSERT INTO goldens (id, project_id, suite_slug, name, input, goal, approved, created_at, updated_at) "
                          "VALUES ('case-001', (SELECT id FROM projects WHERE slug = 'staging'), 'core', 'old golden', '\"q\"', 'the goal', true, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"))
    engine.dispose()
    srv_url = url.replace("postgresql+psycopg://", "postgresql://")
    with running_server(tmp_path / "srv", db_url=srv_url) as srv:
        key = srv.create_key("staging")
        with api(srv, key) as c:
            assert [(g["id"], g["name"], g["input"], g["goal"], g["suite"], g["approved"]) for g in c.get("goldens").json()] == [
                ("case-001", "old golden", "q", "the goal", "core", True)]
            assert [g["id"] for g in c.get("proof-suites/core/cases", params={"projectSlug": "staging"}).json()["cases"]] == ["case-001"]
        gl = tmp_path / "prod.jsonl"
        gl.write_text(json.dumps({"id": "case-001", "name": "prod golden", "input": "p"}) + "\n")
        res = srv.cli("golden", "import", str(gl), "--project", "prod", "--suite", "core")
        assert res.returncode == 0, res.stderr
        with api(srv, key) as c:
            assert c.get("goldens").json()[0]["name"] == "old golden"


ODD_KEYS = ['te"am', "o'clock", "a.b", "$", "x[0]", "*", "équipe", '"', "a\\\\b"]


def test_metadata_filter_keys_of_any_text_work(srv):
    """A key with a quote, a dot, `$`, `[`, `*` or non-ASCII letters is a key like any other
    (bound as a value, never spliced into a JSON path): its run is found, others are not,
    true/false/numbers compare as PostgreSQL's text of them, and no outage is logged."""
    with api(srv, srv.key) as c:
        for i, key in enumerate(ODD_KEYS):
            new_run(c, "holds", label=f"odd-key-{i}", metadata={key: f"v{i}", "plain": "x"})
        new_run(c, "holds", label="odd-typed", metadata={"flag": True, "n": 7, "ratio": 0.5})
    for i, key in enumerate(ODD_KEYS):
        page = _runs_page(srv, meta=f"{key}=v{i}")
        assert page.status_code == 200, (key, page.status_code, page.text[:300])
        assert set(re.findall(r"odd-key-(\d+)", page.text)) == {str(i)}, key
        assert _runs_page(srv, meta=f"{key}=nope").status_code == 200
    for query in ("flag=true", "n=7", "ratio=0.5"):
        page = _runs_page(srv, meta=query)
        assert page.status_code == 200 and "odd-typed" in page.text, query
    assert "odd-typed" not in _runs_page(srv, meta="flag=1").text
    log = srv.log_tail(200_000)
    assert "unavailable" not in log and "database error" not in log and "Traceback" not in log
