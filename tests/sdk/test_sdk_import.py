"""``import agentsproof`` and ``from agentsproof import AgentsProof`` stay light."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("openai", "scipy", "numpy", "jinja2", "agentsproof.cli", "click", "rich", "pydantic", "yaml", "httpx")


def _loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport sys, json\nprint(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_agentsproof_loads_nothing_heavy():
    assert _loaded_after("import agentsproof") == []


def test_using_the_sdk_loads_nothing_heavy(tmp_path):
    code = (
        "from agentsproof import AgentsProof, AgentRun, trace_llm, StepPayload\n"
        f"ap = AgentsProof(api_key='k', base_url='http://127.0.0.1:9/api', spool_dir={str(tmp_path)!r})\n"
        "run = ap.start_run(project_slug='p', input='x')\n"
        "run.trace('tool_call', 't', lambda: 1)\n"
    )
    assert _loaded_after(code) == []


def test_the_probe_detects_a_heavy_import():
    # guards the two tests above against passing vacuously
    assert _loaded_after("import agentsproof, jinja2") == ["jinja2"]


def test_public_names_match_the_published_sdk():
    import agentsproof

    published = ["AgentsProof", "AgentRun", "trace_llm", "trace_tool", "atrace_llm", "atrace_tool",
                 "StepPayload", "StepType", "GoldenCase", "ProofSuiteResult"]
    for name in published:
        assert getattr(agentsproof, name) is not None
    assert agentsproof.__version__
    assert set(published) <= set(dir(agentsproof))


def test_the_sdk_version_is_the_harness_version_and_goes_in_the_user_agent(tmp_path):
    # the SDK imports nothing from the harness, so it keeps its own copy of the version
    import agentsproof
    from agentsproof.core.version import __version__
    from agentsproof.sdk import transport
    from sdk_recorder import RecordingServer

    assert transport.SDK_VERSION == __version__ == agentsproof.__version__
    srv = RecordingServer().start()
    try:
        ap = agentsproof.AgentsProof(api_key="k", base_url=srv.base_url, spool_dir=tmp_path)
        assert ap.start_run(project_slug="p", input="x").complete("y")["publicUrl"]
    finally:
        srv.stop()
    assert [r.path for r in srv.requests] == ["/api/runs", "/api/runs/run-1/complete"]
    assert {r.headers.get("user-agent") for r in srv.requests} == {f"agentsproof-python/{__version__}"}


def test_the_client_satisfies_the_protocols_run_and_suite_are_typed_against(tmp_path):
    # run.py and suite.py never import client.py (no import cycle): they rely on these Protocols
    from agentsproof.sdk._base import RunClient, TrackedRun
    from agentsproof.sdk.client import AgentsProof
    from agentsproof.sdk.suite import SuiteClient

    ap = AgentsProof(api_key="k", base_url="http://127.0.0.1:9/api", spool_dir=tmp_path)
    assert isinstance(ap, RunClient) and isinstance(ap, SuiteClient)
    run = ap.start_run(project_slug="p", input="x")
    assert isinstance(run, TrackedRun)
    ap._forget(run)  # nothing to spool at exit
