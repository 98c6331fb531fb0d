"""The /api routes over real HTTP against `agentsproof serve`, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from server_helpers import api, new_run, step, wait_grade
from pg import BACKENDS, make_db_url, pg_cluster  # noqa: F401 - fixture
from serverkit import running_server


@pytest.fixture(scope="module", params=BACKENDS)
def srv(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"api-{request.param}")
    with running_server(folder, db_url=make_db_url(request, request.param, folder)) as handle:
        handle.key_a = handle.create_key("alpha")
        handle.key_b = handle.create_key("beta")
        yield handle


def test_missing_wrong_and_revoked_keys_get_401(srv):
    for key in (None, "", "ap_wrong", "x" * 500):
        with api(srv, key) as c:
            assert c.post("runs", json={"projectSlug": "alpha", "input": 1}).status_code == 401
            assert c.get("proof-suites/s/cases", params={"projectSlug": "alpha"}).status_code == 401
    key = srv.create_key("alpha")
    with api(srv, key) as c:
        run_id = new_run(c, "alpha")
        listed = srv.cli("keys", "list").stdout
        assert key not in listed and key[:10] in listed  # only the prefix is ever shown
        key_id = next(line.split("\t")[0] for line in listed.splitlines() if key[:10] in line)
        assert srv.cli("keys", "revoke", key_id).returncode == 0
        assert c.post("runs", json={"projectSlug": "alpha"}).status_code == 401
        assert step(c, run_id, 0).status_code == 401
    with api(srv, srv.key_a) as c:  # other keys of the project still work
        assert step(c, run_id, 0).status_code == 200


def test_keys_are_stored_hashed(srv):
    key = srv.create_key("alpha")
    if srv.db_url.startswith("sqlite"):
        raw = open(srv.db_url.split("///", 1)[1], "rb").read()
        assert key.encode() not in raw
    assert key not in srv.log_tail(100000)


def test_steps_out_of_order_and_duplicates(srv):
    with api(srv, srv.key_a) as c:
        run_id = new_run(c, "alpha", label="ooo", goal="greet", metadata={"team": "x"})
        order = [3, 1, 0, 2, 1, 3, 0, 4]
        with ThreadPoolExecutor(4) as pool:
            res = list(pool.map(lambda i: step(c, run_id, i, type="tool_call" if i == 2 else "llm_call"), order))
        assert all(r.status_code == 200 for r in res), [r.text for r in res]
        assert sum(r.json()["duplicate"] for r in res) == 3
        # a step without step_index goes last
        assert step(c, run_id, None).json()["stepIndex"] == 5
        assert step(c, run_id, None).json()["stepIndex"] == 6
        run = c.get(f"runs/{run_id}").json()
        assert [s["step_index"] for s in run["steps"]] == [0, 1, 2, 3, 4, 5, 6]
        assert run["steps"][2]["type"] == "tool_call" and run["steps"][0]["output"] == "out0"
        assert run["metadata"] == {"team": "x"}
        done = c.post(f"runs/{run_id}/complete", json={"output": {"answer": "hi"}})
        assert done.status_code == 200
        url = done.json()["publicUrl"]
        assert re.fullmatch(re.escape(srv.root_url) + r"/r/[0-9a-f]{32}", url)
        grade = wait_grade(c, run_id)
        assert grade["weights"]["tool_accuracy"] == 0.2  # the run has a tool call
        assert set(grade["axes"]) == {"goal_completion", "output_quality", "tool_accuracy", "step_efficiency", "safety"}
        # completing twice keeps the same public URL
        assert c.post(f"runs/{run_id}/complete", json={"output": "again"}).json()["publicUrl"] == url


def test_bad_bodies_are_4xx(srv):
    with api(srv, srv.key_a) as c:
        run_id = new_run(c, "alpha")
        assert step(c, run_id, 0, type="bogus").status_code == 422
        assert step(c, run_id, -1).status_code == 422
        assert c.post(f"runs/{run_id}/steps", content=b"{not json", headers={"content-type": "application/json"}).status_code == 422
        assert c.post("runs/nope/complete", json={}).status_code == 404
        # NUL characters: refused the same way on SQLite and PostgreSQL, never a 500
        assert c.post("runs", json={"projectSlug": "alpha", "label": "a\x00b"}).status_code == 422
        assert c.post("goldens", json={"name": "n", "input": {"k\x00": 1}}).status_code == 422
        assert c.get("proof-suites/a%00b/cases").status_code in (404, 422)
        assert c.post(f"runs/{run_id}/complete", json={"output": "ok\x00"}).status_code == 422
        fresh = new_run(c, "alpha")
        assert step(c, fresh, None).json()["stepIndex"] == 0 and step(c, fresh, None).json()["stepIndex"] == 1
        big = c.post("runs", content=json.dumps({"projectSlug": "alpha", "input": "x" * (3 * 1024 * 1024)}), headers={"content-type": "application/json"})
        assert big.status_code == 413


def test_cross_project_isolation(srv):
    gl = srv.workdir / "iso.jsonl"
    gl.write_text(json.dumps({"id": "iso-golden-a", "name": "a", "input": "q", "goal": "g"}) + "\n")
    assert srv.cli("golden", "import", str(gl), "--project", "alpha", "--suite", "iso", "--approve").returncode == 0
    with api(srv, srv.key_a) as a, api(srv, srv.key_b) as b:
        run_a = new_run(a, "alpha", goal="secret goal")
        step(a, run_a, 0)
        cases = a.get("proof-suites/iso/cases", params={"projectSlug": "alpha"})
        assert cases.status_code == 200 and [g["id"] for g in cases.json()["cases"]] == ["iso-golden-a"]
        prun = cases.json()["proofRunId"]
        # beta's key can neither read nor write alpha's things
        assert b.get(f"runs/{run_a}").status_code == 404
        assert step(b, run_a, 1).status_code == 404
        assert b.post(f"runs/{run_a}/complete", json={"output": "x"}).status_code == 404
        assert b.post(f"runs/{run_a}/revoke-public").status_code == 404
        assert b.post("runs", json={"projectSlug": "alpha", "input": 1}).status_code == 403
        assert b.post("runs", json={"projectSlug": "beta", "goldenId": "iso-golden-a"}).status_code == 404
        assert b.get("proof-suites/iso/cases", params={"projectSlug": "alpha"}).status_code == 403
        assert b.get("proof-suites/iso/cases", params={"projectSlug": "beta"}).status_code == 404
        assert b.get("goldens", params={"projectSlug": "alpha"}).status_code == 403
        assert b.get("goldens").json() == []
        # golden ids are per project: beta's "iso-golden-a" is a golden of its own, answered as for an unused id
        own = b.post("goldens", json={"id": "iso-golden-a", "input": "beta's", "approved": True})
        fresh = b.post("goldens", json={"id": "iso-golden-new", "input": "beta's", "approved": True})
        assert own.status_code == fresh.status_code == 200
        assert {**own.json(), "id": None} == {**fresh.json(), "id": None}
        assert b.post(f"proof-runs/{prun}/case-results", json={"goldenId": "iso-golden-a", "passed": True}).status_code == 404
        assert b.post(f"proof-runs/{prun}/complete").status_code == 404
        # a run of beta cannot be attached to alpha's proof run and vice versa
        run_b = new_run(b, "beta")
        assert a.post(f"proof-runs/{prun}/case-results", json={"goldenId": "iso-golden-a", "runId": run_b, "passed": True}).status_code == 404
        # and nothing changed for alpha
        run = a.get(f"runs/{run_a}").json()
        assert len(run["steps"]) == 1 and run["status"] == "running"
        assert a.get("goldens").json()[0]["input"] == "q"


def test_golden_defaults_explicit_fields_win(srv):
    with api(srv, srv.key_a) as c:
        g = c.post("goldens", json={"name": "def", "input": "golden input", "goal": "golden goal", "expected_output": "42",
                                    "success_criteria": ["c1"], "trace_assertions": ["max_steps:3"], "failure_modes": ["loops"],
                                    "expectedBehavior": "be brief", "suite": "defaults"})
        assert g.status_code == 200, g.text
        gid = g.json()["id"]
        run_id = new_run(c, "alpha", goldenId=gid, goal="explicit goal", successCriteria=["mine"])
        run = c.get(f"runs/{run_id}").json()
        assert run["goal"] == "explicit goal" and run["success_criteria"] == ["mine"]
        assert run["input"] == "hello" and run["expected_output"] == "42"
        assert run["trace_assertions"] == ["max_steps:3"] and run["failure_modes"] == ["loops"]
        assert run["expected_behavior"] == "be brief" and run["goldenId"] == gid
        # the published SDK's proof suites link the golden only through metadata.goldenId
        r2 = c.post("runs", json={"projectSlug": "alpha", "metadata": {"goldenId": gid}}).json()["runId"]
        assert c.get(f"runs/{r2}").json()["input"] == "golden input"
        assert c.post("runs", json={"projectSlug": "alpha", "goldenId": "missing"}).status_code == 404


def test_suite_serves_only_approved_goldens_in_both_casings(srv):
    lines = [
        {"id": "suite-g1", "name": "one", "input": {"q": 1}, "goal": "g1", "expected_output": "o1", "expected_behavior": "b1",
         "success_criteria": ["s1"], "trace_assertions": ["must_call:search"]},
        {"id": "suite-g2", "name": "two", "input": "i2"},
    ]
    gl = srv.workdir / "suite.jsonl"
    gl.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    res = srv.cli("golden", "import", str(gl), "--project", "alpha", "--suite", "reg")
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["suite-g1", "suite-g2"]
    with api(srv, srv.key_a) as c:
        assert c.get("proof-suites/reg/cases", params={"projectSlug": "alpha"}).json()["cases"] == []
        assert srv.cli("golden", "approve", "suite-g1").returncode == 0
        assert "suite-g1\talpha\treg\tapproved" in srv.cli("golden", "list", "--project", "alpha").stdout
        data = c.get("proof-suites/reg/cases", params={"projectSlug": "alpha"}).json()
        (case,) = data["cases"]
        assert case["id"] == "suite-g1" and case["input"] == {"q": 1}
        assert case["expected_output"] == case["expectedOutput"] == "o1"
        assert case["expected_behavior"] == case["expectedBehavior"] == "b1"
        assert case["success_criteria"] == case["successCriteria"] == ["s1"]
        assert case["trace_assertions"] == case["traceAssertions"] == ["must_call:search"]
        pr = data["proofRunId"]
        run_id = new_run(c, "alpha", metadata={"goldenId": "suite-g1", "proofRunId": pr})
        ok = c.post(f"proof-runs/{pr}/case-results", json={"goldenId": "suite-g1", "runId": run_id, "score": None, "passed": True, "failureSummary": None})
        assert ok.status_code == 200
        assert c.post(f"proof-runs/{pr}/case-results", json={"goldenId": "suite-g2", "runId": None, "score": 0.25, "passed": False, "failureSummary": "boom"}).status_code == 200
        done = c.post(f"proof-runs/{pr}/complete").json()
        assert done["passedCases"] == done["passed_cases"] == 1
        assert done["failedCases"] == done["failed_cases"] == 1
        assert done["overallScore"] == pytest.approx((1.0 + 0.25) / 2)
        assert re.fullmatch(re.escape(srv.root_url) + r"/p/[0-9a-f]{32}", done["publicUrl"]) and done["public_url"] == done["publicUrl"]
        assert c.get("proof-suites/nope/cases", params={"projectSlug": "alpha"}).status_code == 404


def test_golden_import_bad_input_is_one_line_exit_30(srv):
    bad = srv.workdir / "bad.jsonl"
    bad.write_text(json.dumps({"input": "ok"}) + "\n" + json.dumps({"input": "x", "success_criteria": "not a list"}) + "\n")
    res = srv.cli("golden", "import", str(bad), "--project", "alpha", "--suite", "s")
    assert res.returncode == 30
    assert res.stderr.strip() == f"error: {bad}:2: success_criteria: expected a list of strings"
    bad.write_text("{nope\n")
    res = srv.cli("golden", "import", str(bad), "--project", "alpha", "--suite", "s")
    assert res.returncode == 30 and res.stderr.startswith(f"error: {bad}: line 1: invalid JSON") and len(res.stderr.strip().splitlines()) == 1
    res = srv.cli("golden", "import", str(bad), "--project", "bad slug!", "--suite", "s")
    assert res.returncode == 30 and "--project" in res.stderr
