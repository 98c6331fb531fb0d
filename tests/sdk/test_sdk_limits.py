"""Nothing lost for its values: every case of ``limit_cases.py`` (at and over each limit of
``agentsproof/data/wire_limits.json``, NUL, lone surrogates, huge integers, unknown step types)
goes through the Python SDK and the TypeScript SDK to the real server, on SQLite and on
PostgreSQL, and is delivered (not spooled) with what the server holds as the fitting rules say.
The server's models, the Python SDK and the TypeScript SDK's embedded copy share the one table."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from limit_cases import CASES, CHECKS, LIMITS, PY_KWARGS, ROOT, for_python
from sdk_server import get_run, running_server

from agentsproof import AgentsProof
from agentsproof.server import protocol as P
from pg import BACKENDS, pg_cluster  # noqa: F401 - fixture

PROJECT = "limits"
TS_AGENT = Path(__file__).with_name("ts_agent.mjs")


@pytest.fixture(scope="module", params=BACKENDS)
def server(request, tmp_path_factory):
    db_url = None if request.param == "sqlite" else request.getfixturevalue("pg_cluster").new_database()
    with running_server(tmp_path_factory.mktemp("limits-server"), db_url=db_url) as srv:
        srv.key = srv.create_key(PROJECT)
        yield srv


def _check_all(server, results, spool: Path) -> None:
    assert list(spool.glob("**/*.json")) == [], "nothing may be spooled"
    bad = [r for r in results if not r["publicUrl"] or r.get("spooled")]
    assert bad == [], bad
    for r in results:
        stored = get_run(server, server.key, r["remoteRunId"])
        try:
            CHECKS[r["name"]](stored)
        except AssertionError as err:
            raise AssertionError(f"case {r['name']}: {err}") from err


def test_every_case_is_delivered_by_the_python_sdk(server, tmp_path):
    ap = AgentsProof(api_key=server.key, base_url=server.base_url, spool_dir=tmp_path, complete_timeout=60)
    results = []
    for c in CASES:
        kwargs = {PY_KWARGS[k]: for_python(v) for k, v in c["run"].items()}
        run = ap.start_run(project_slug=PROJECT, client_run_id=f"py-{c['name']}", **kwargs)
        for step in c["steps"]:
            run.log_step(for_python(step))
        res = run.complete(for_python(c["output"]))
        results.append({"name": c["name"], "publicUrl": res.get("publicUrl"), "spooled": res.get("spooled"),
                        "remoteRunId": run.remote_run_id, "error": res.get("error")})
    _check_all(server, results, tmp_path)


def test_every_case_is_delivered_by_the_typescript_sdk(server, tmp_path):
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("node is missing (CI)")
        pytest.skip("node is not installed")
    env = {**os.environ, "AP_BASE_URL": server.base_url, "AP_KEY": server.key, "AP_PROJECT": PROJECT, "AGENTSPROOF_SPOOL_DIR": str(tmp_path)}
    out = subprocess.run([node, str(TS_AGENT)], input=json.dumps(CASES), env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    _check_all(server, json.loads(out.stdout.strip().splitlines()[-1]), tmp_path)


def test_the_server_models_read_the_one_table():
    run, step = P.RunCreate.model_json_schema()["properties"], P.StepIn.model_json_schema()["properties"]
    assert P.WIRE_LIMITS_FILE == ROOT / "agentsproof" / "data" / "wire_limits.json"
    for key, limit in {**LIMITS["run"]["text"], **LIMITS["run"]["ids"]}.items():
        assert run[key]["anyOf"][0]["maxLength"] == limit, key
    for key, limit in LIMITS["run"]["lists"].items():
        assert run[key]["anyOf"][0]["maxItems"] == limit, key
    for key, spec in LIMITS["step"]["numbers"].items():
        s = step[key]["anyOf"][0]
        assert (s["minimum"], s["maximum"]) == (spec["min"], spec["max"]), key
    assert step["name"]["anyOf"][0]["maxLength"] == LIMITS["step"]["text"]["name"]
    assert list(P.STEP_TYPES) == LIMITS["step"]["types"]


def test_the_typescript_sdk_embeds_the_same_table():
    source = (ROOT / "sdk" / "typescript" / "lib" / "index.js").read_text(encoding="utf-8")
    m = re.search(r"^// BEGIN wire_limits\.json.*\nconst WIRE_LIMITS = (\{.*?\n\});\n// END wire_limits\.json$", source, re.S | re.M)
    assert m, "lib/index.js lacks its generated WIRE_LIMITS block"
    assert json.loads(m.group(1)) == LIMITS


def test_the_python_sdk_reads_the_same_table():
    from agentsproof.sdk import limits

    assert limits.LIMITS_FILE == P.WIRE_LIMITS_FILE and limits.LIMITS == LIMITS
