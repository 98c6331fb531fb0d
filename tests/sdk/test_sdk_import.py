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
