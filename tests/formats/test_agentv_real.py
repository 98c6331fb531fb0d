"""Real agentv files (tests/data/agentv-real: copied from EntityProcess/agentv, MIT, see the
LICENSE there) run as they are: ``providers: [llm]`` resolved from ``.agentv/providers.yaml``
or, with no such file, as the configured model (said once); rubric ``operator`` guidance
reaches the judge."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import Rule, read_json, run_cli

REAL = Path(__file__).resolve().parents[1] / "data" / "agentv-real"
OPERATORS = REAL / "examples" / "features" / "rubric" / "evals" / "operators.eval.yaml"
ASSERT = REAL / "examples" / "features" / "assert" / "evals" / "suite.yaml"


def test_licence_notice_is_kept_beside_the_copies():
    assert "MIT License" in (REAL / "LICENSE").read_text() and "EntityProcess" in (REAL / "LICENSE").read_text()


def test_plain_llm_label_without_providers_file_is_the_configured_model_and_operators_reach_the_judge(byok_env, tmp_path):
    folder = tmp_path / "rubric" / "evals"
    shutil.copytree(OPERATORS.parent, folder)
    byok_env.add(Rule(reply="Q4 revenue increased to $10M from $8M. Gross margin declined to 42% from 45%.", judge=False))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", folder / OPERATORS.name, "--model", "m", "--output", out, "--no-cache"])
    assert code == 0, err
    assert err.count("'llm'") == 1 and "runs as the configured model" in err  # said once
    data = read_json(out / "rubric-operators" / "rubric-operators-tc-eval.json")
    assert data["items"][0]["with_arm"]["trials"][0]["passed"] is True
    judged = "\n".join(str(r["messages"]) for r in byok_env.judge_requests())
    assert "operator: correctness" in judged and "States Q4 revenue increased to $10M" in judged
    assert "operator: contradiction guard" in judged and "only an incompatible claim fails" in judged
    assert {r["model"] for r in byok_env.trial_requests()} == {"m"}


def test_label_resolved_from_agentv_providers_yaml(byok_env, tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(REAL, root)
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", root / ASSERT.relative_to(REAL), "--model", "m", "--output", out, "--no-cache"])
    assert code == 0, err
    assert "providers[0] 'llm' is 'azure' in" in err and ".agentv/providers.yaml" in err
    data = read_json(out / "assert-demo" / "assert-demo-tc-eval.json")
    assert [i["name"] for i in data["items"]] == ["contains-check", "json-response", "regex-check", "equals-check"]
    assert all(i["with_arm"]["trials"][0]["error"] is None for i in data["items"])


def test_label_missing_from_providers_yaml_is_one_line(byok_env, tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(REAL, root)
    suite = root / ASSERT.relative_to(REAL)
    suite.write_text(suite.read_text().replace("  - llm\n", "  - nosuch\n", 1))
    from agentsproof.core.errors import InputError
    from agentsproof.formats.agentevals.providers import resolve_label

    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and len(err.strip().splitlines()) == 1, err
    assert "suite.yaml" in err and ".agentv/providers.yaml (agent, azure, claude" in err and "21 more" in err
    with pytest.raises(InputError) as exc:
        resolve_label("nosuch", suite, "suite.yaml", "providers[0]")
    assert exc.value.field == "providers[0]" and "'nosuch' is not a targets.yaml target nor a label in" in exc.value.message


@pytest.mark.parametrize(("kind", "target"), [("copilot-cli", "copilot"), ("openai:gpt-4o", "chat")])
def test_provider_kinds(tmp_path, kind, target):
    from agentsproof.formats.agentevals.providers import resolve_label

    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "providers.yaml").write_text(f"providers:\n  - id: {kind}\n    label: mine\n    config: {{model: x}}\n")
    (tmp_path / "evals").mkdir()
    assert resolve_label("mine", tmp_path / "evals" / "a.eval.yaml", "a.eval.yaml", "providers[0]").target == target


AGENTV_TARGET = """
from typing import Literal

from agentsproof.model.graders import Strict
from agentsproof.targets.base import Target


class MySpec(Strict):
    type: Literal["my-agent"]


class MyAgent(Target):
    kind = "my-agent"
    spec_model = MySpec
    agentv_ids = ("my-agent-cli",)

    async def run(self, trial):
        raise AssertionError("not run")
"""


def test_an_agentv_kind_is_the_fact_of_its_target_kind(tmp_path, monkeypatch):
    """Which agentv provider kinds a target kind runs is on its registry entry (``agentv_ids``):
    a new kind (one module, one registry line) is found with no list in the agentv reader."""
    import sys

    from agentsproof.formats.agentevals.providers import resolve_label
    from agentsproof.targets import registry

    (tmp_path / "agentsproof_my_agent.py").write_text(AGENTV_TARGET, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry.KINDS, "my-agent", "agentsproof_my_agent:MyAgent")
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "providers.yaml").write_text("providers:\n  - id: my-agent-cli\n    label: mine\n")
    (tmp_path / "evals").mkdir()
    try:
        got = resolve_label("mine", tmp_path / "evals" / "a.eval.yaml", "a.eval.yaml", "providers[0]")
        assert got.target == "my-agent"
    finally:
        registry.target_class.cache_clear()
        sys.modules.pop("agentsproof_my_agent", None)


def test_unknown_operator_is_named(byok_env, tmp_path):
    folder = tmp_path / "evals"
    shutil.copytree(OPERATORS.parent, folder)
    f = folder / OPERATORS.name
    f.write_text(f.read_text().replace("operator: contradiction", "operator: consistency"))
    code, _, err = run_cli(["eval", f, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and "value[1].operator" in err and "'consistency'" in err, err


TRIALS = REAL / "examples" / "features" / "trials" / "evals" / "suite.yaml"


def test_evaluate_options_repeat_is_the_trials_and_the_rest_is_said(byok_env, tmp_path):
    folder = tmp_path / "trials" / "evals"
    shutil.copytree(TRIALS.parent, folder)
    byok_env.add(Rule(reply="15 * 7 = 105. The capital of Australia is Canberra.", judge=False))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", folder / "suite.yaml", "--model", "m", "--output", out, "--no-cache"])
    assert code == 0, err
    assert "evaluate_options.budget_usd: not used by agentsproof" in err
    data = read_json(out / "trials" / "trials-tc-eval.json")
    assert [len(i["with_arm"]["trials"]) for i in data["items"]] == [2, 2]  # repeat: 2


def test_environment_host_workdir_seeds_agent_trials_and_docker_is_their_container(tmp_path):
    from agentsproof.core.errors import InputError
    from agentsproof.formats.agentevals.parse import parse_suite

    (tmp_path / "workspace-template").mkdir()
    (tmp_path / "evals").mkdir()
    path = tmp_path / "evals" / "a.eval.yaml"
    base = {"tests": [{"id": "t", "input": "hi", "assert": ["says hi"]}]}
    suite = parse_suite({**base, "environment": {"type": "host", "workdir": "../workspace-template"}}, path)
    assert suite.workdir == (tmp_path / "workspace-template").resolve()
    docker = parse_suite({**base, "environment": {"type": "docker", "image": "python:3.11"}}, path)
    assert docker.workdir is None and docker.environment.image == "python:3.11"  # tests/environments/test_agentv_docker.py runs one
    with pytest.raises(InputError) as err:
        parse_suite({**base, "environment": {"type": "podman", "image": "python:3.11"}}, path)
    assert err.value.field == "environment.type" and "'podman'" in err.value.message
    suite = parse_suite({"tests": [{"id": "t", "input": "hi", "expected_output": [{"role": "assistant", "content": {"total": 3}}]}]}, path)
    assert suite.tests[0].expected_output == '{\n  "total": 3\n}'


def test_tests_from_a_file(tmp_path):
    from agentsproof.formats.agentevals.parse import parse_suite

    (tmp_path / "cases.yaml").write_text("- id: a\n  input: hi\n  assert: [says hi]\n")
    (tmp_path / "cases.jsonl").write_text('{"id": "b", "input": "yo", "assert": ["says yo"]}\n')
    assert [t.id for t in parse_suite({"tests": "./cases.yaml"}, tmp_path / "s.eval.yaml").tests] == ["a"]
    assert [t.prompt for t in parse_suite({"tests": "file://cases.jsonl"}, tmp_path / "s.eval.yaml").tests] == ["yo"]


def test_regex_flags_judge_prompt_files_and_extensions(tmp_path):
    import re

    from agentsproof.core.errors import InputError
    from agentsproof.formats.agentevals.asserts import build_graders
    from agentsproof.formats.agentevals.parse import parse_suite

    (tmp_path / "grader.md").write_text("Question: {{ input }}\nAnswer: {{ output }}\nScore 0 to 1.\n")
    path = tmp_path / "s.eval.yaml"
    suite = parse_suite({"tests": [{"id": "t", "input": "Give an email", "assert": [
        {"type": "regex", "value": "[a-z]+@[a-z]+", "flags": "i"},
        {"type": "llm-rubric", "prompt": "file://grader.md", "metric": "quality"},
    ]}]}, path)
    graders = build_graders("s.eval.yaml", path, suite.tests[0], None, "tests[0]").graders
    pattern = graders[0].checks.regexMatch[0]
    assert pattern.startswith("(?i)") and re.search(pattern, "Mail ME@EXAMPLE")
    assert "Question: Give an email" in graders[1].rubric and "(the assistant response, shown below)" in graders[1].rubric
    with pytest.raises(InputError) as err:  # agentv's extensions run (tests/formats/test_agentv_setup.py); a hook agentv has not is refused
        parse_suite({"extensions": ["file://grader.md:onStart"], "tests": [{"id": "t", "input": "hi"}]}, path)
    assert err.value.field == "extensions[0]" and "beforeAll" in err.value.message
