"""Start-up stays lean: the path from ``agentsproof eval ...`` to the first model call
imports only what it needs. Structural, not timed: a fresh interpreter runs the real CLI
against the scripted server (in the same process), which records ``sys.modules`` when the
first chat request arrives. The heavy packages come later (reports) or never (the openai SDK)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import make_plugin, simple_eval

HEAVY = (
    "openai", "jinja2", "scipy", "numpy", "aiohttp", "rich",
    "agentsproof.report.jinja", "agentsproof.report.views", "agentsproof.report.render", "agentsproof.report.stream", "agentsproof.report.exports",
)

PROBE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from openai_server import Rule, ScriptedServer

seen = {}

def reply(req):
    seen.setdefault("at_first_call", sorted(sys.modules))
    return "hello"

with ScriptedServer([Rule(reply=reply)]) as srv:
    import os
    os.environ["AGENTSPROOF_PROVIDER_URL"] = srv.base_url
    from agentsproof.cli import main
    try:
        main(sys.argv[2:], standalone_mode=False)
    except SystemExit:
        pass
seen["at_exit"] = sorted(sys.modules)
print(json.dumps(seen))
"""


def _probe(args: list[str], transport: str | None = None) -> dict[str, list[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTSPROOF_")}
    env.update(
        AGENTSPROOF_PROVIDER_TYPE="openai", AGENTSPROOF_PROVIDER_KEY="sk-probe", AGENTSPROOF_NO_CACHE="1",
        PYTHONPATH=os.pathsep.join(sys.path),
    )
    if transport:
        env["AGENTSPROOF_HTTP_TRANSPORT"] = transport
    tests = str(Path(__file__).resolve().parent)
    out = subprocess.run([sys.executable, "-c", PROBE, tests, *map(str, args)], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _heavy(modules: list[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY)


@pytest.fixture
def eval_yaml(tmp_path: Path) -> Path:
    plugin = make_plugin(tmp_path, skills={"s": {"eval": simple_eval()}})
    return plugin / "skills" / "s" / "eval.yaml"


def test_eval_reaches_its_first_call_without_heavy_imports(eval_yaml, tmp_path):
    seen = _probe(["eval", eval_yaml, "--model", "m", "--trials", "2", "--output", tmp_path / "runs"])
    assert _heavy(seen["at_first_call"]) == []
    # the probe sees imports: after the run the reports have loaded jinja2 (and the statistics numpy)
    assert {"jinja2", "numpy", "agentsproof.report.views", "agentsproof.report.stream"} <= set(seen["at_exit"])
    assert "openai" not in seen["at_exit"]  # the OpenAI-compatible client never loads the SDK
    assert "scipy.stats" not in seen["at_exit"]  # ~0.5 s of CPU to import: the quantiles come from scipy.special
    assert (tmp_path / "runs").rglob("*.html")


def test_eval_all_reaches_its_first_call_without_heavy_imports(tmp_path):
    plugin = make_plugin(tmp_path, skills={"a": {"eval": simple_eval()}, "b": {"eval": simple_eval()}})
    seen = _probe(["eval-all", plugin, "--model", "m", "--output", tmp_path / "runs"])
    assert _heavy(seen["at_first_call"]) == []


def test_httpx_own_transport_is_as_lean(eval_yaml, tmp_path):
    # AGENTSPROOF_HTTP_TRANSPORT=httpx (what a configured proxy also gets): httpx's client, still no SDK
    seen = _probe(["eval", eval_yaml, "--model", "m", "--output", tmp_path / "runs"], transport="httpx")
    assert _heavy(seen["at_first_call"]) == [] and "httpx" in seen["at_first_call"]
    assert "agentsproof.llm.http_pool" in seen["at_first_call"] and "openai" not in seen["at_exit"]


def test_importing_the_cli_and_parsing_arguments_is_light(eval_yaml):
    code = (
        "import sys, json\n"
        "from agentsproof.cli import main\n"
        "ctx = main.make_context('agentsproof', ['eval'])\n"
        f"sub = main.get_command(ctx, 'eval').make_context('eval', [{str(eval_yaml)!r}, '--smoke', '--model', 'm'], parent=ctx)\n"
        "assert sub.params['model'] == 'm'\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    modules = json.loads(out.stdout)
    assert _heavy(modules) == [] and "httpx" not in modules and "agentsproof.sdk.client" not in modules
