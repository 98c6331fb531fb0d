"""agentv's set-up and programs as targets, on copies of agentv's own constructs
(tests/data/agentv-real/examples/features/setup-hooks, MIT, see the LICENSE there), end to
end on the scripted server:

- ``environment.setup``, ``workspace.hooks`` and ``extensions`` (``file://x.mjs:beforeAll``)
  run before every trial in its workspace, in the sandbox, their output in the trial log;
  one that fails errors the trial; none can write outside the workspace;
- a ``cli`` provider in ``.agentv/providers.yaml`` runs as a sandboxed command target with
  agentv's placeholders (``{PROMPT}``, ``{OUTPUT_FILE}``);
- with the model alone (no agent target) the set-up is noted, not run.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentsproof.core.errors import InputError
from conftest import Rule, read_json, run_cli

REAL = Path(__file__).resolve().parents[1] / "data" / "agentv-real" / "examples" / "features" / "setup-hooks"

pytestmark = pytest.mark.skipif(shutil.which("node") is None or shutil.which("bwrap") is None, reason="needs node and bubblewrap")


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "setup-hooks"
    shutil.copytree(REAL, root)
    return root


def _trial(out: Path) -> dict:
    data = read_json(next(out.rglob("*-tc-eval.json")))
    return data["items"][0]["with_arm"]["trials"][0]


def test_setup_hooks_and_extensions_run_in_every_trials_workspace_and_the_cli_provider_answers(byok_env, tmp_path):
    root = _copy(tmp_path)
    byok_env.add(Rule(reply='{"reasoning": "reports it", "passed": true, "score": 1.0}', judge=True))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", root / "evals" / "suite.yaml", "--output", out, "--no-cache", "--model", "m"])
    assert code == 0, err
    trial = _trial(out)
    assert trial["status"] == "scored", trial
    log = "\n".join(e["text"] for e in trial["log"])
    assert "environment.setup: materialized pinned-commit" in log  # its stdout, in the trial log
    assert "workspace.hooks.before_all: before_all ran for sees-the-setup" in log
    assert "extensions[0]:beforeAll: extension saw the evals folder" in log
    assert "extensions[1]:afterEach: after sees-the-setup" in log  # after the trial
    answer = next(e["text"] for e in trial["log"] if e["role"] == "assistant")
    assert "READY pinned-commit" in answer and "HOOK sees-the-setup" in answer and "EXT beforeAll" in answer
    assert "prompt Report what the set-up prepared." in answer  # {PROMPT}, shell-quoted, reached the program
    assert [c["passed"] for g in trial["graders"] for c in g["checks"]] == [True, True, True, True]
    assert byok_env.judge_requests() and not byok_env.trial_requests()  # the program answered, the judge graded
    assert sorted(p.name for p in (root / "workspace-template").iterdir()) == ["seed.txt"]  # the project untouched
    assert "[0]: healthcheck read, not used" in err and "agentv:agent-rules" in err


def test_a_failing_setup_command_errors_the_trial_with_its_reason(byok_env, tmp_path):
    root = _copy(tmp_path)
    script = root / "scripts" / "materialize.sh"
    script.write_text(script.read_text().replace("test -f seed.txt", "echo 'cannot reach github.com' >&2; exit 7"))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", root / "evals" / "suite.yaml", "--output", out, "--no-cache", "--model", "m"])
    assert code == 30, err
    trial = _trial(out)
    assert trial["status"] == "errored"
    assert "environment.setup (bash ../scripts/materialize.sh pinned-commit) exited with code 7: cannot reach github.com" in trial["error"]
    assert not any("before_all ran" in e["text"] for e in trial["log"])  # nothing after the failed step


def test_a_hook_cannot_write_outside_its_workspace(byok_env, tmp_path):
    root = _copy(tmp_path)
    hook = root / "scripts" / "setup.mjs"
    hook.write_text("import { writeFileSync } from 'node:fs';\nwriteFileSync(process.cwd() + '/planted.txt', 'x');\n")
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", root / "evals" / "suite.yaml", "--output", out, "--no-cache", "--model", "m"])
    assert code == 30, err
    trial = _trial(out)
    assert trial["status"] == "errored" and "workspace.hooks.before_all" in trial["error"], trial["error"]
    assert "EROFS" in json.dumps(trial["log"]) or "read-only" in json.dumps(trial["log"])
    assert not (root / "evals" / "planted.txt").exists()


def test_with_the_model_alone_the_setup_is_noted_and_the_file_runs(byok_env, tmp_path):
    root = _copy(tmp_path)
    suite = root / "evals" / "suite.yaml"
    suite.write_text(suite.read_text().replace("providers:\n  - mock_setup_agent\n", ""))
    byok_env.add(Rule(reply="READY pinned-commit HOOK sees-the-setup EXT beforeAll", judge=False))
    byok_env.add(Rule(reply='{"reasoning": "ok", "passed": true, "score": 1.0}', judge=True))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", out, "--no-cache"])
    assert code == 0, err
    assert "environment.setup, extensions[0], extensions[1], workspace.hooks.before_all: set-up for an agent's workspace" in err
    assert _trial(out)["status"] == "scored"


@pytest.mark.parametrize(
    ("edit", "field", "words"),
    [
        (("    cwd: \".\"\n", "    cwd: \".\"\n    timeout_seconds: 5\n"), "environment.setup.timeout_seconds", "unknown key"),
        (("  - file://../scripts/workspace-setup.mjs:beforeAll\n", "  - file://../scripts/workspace-setup.mjs:onStart\n"), "extensions[0]", "beforeAll"),
        (("        - ../scripts/setup.mjs\n", "        - ../scripts/setup.mjs\n      retries: 2\n"), "workspace.hooks.before_all.retries", "unknown key"),
        (("  - file://../scripts/workspace-setup.mjs:afterEach\n", "  - file://../../../../outside.mjs:afterEach\n"), "extensions[1]", "outside"),
    ],
)
def test_a_bad_setup_entry_is_one_line_naming_the_field(tmp_path, edit, field, words):
    root = _copy(tmp_path)
    suite = root / "evals" / "suite.yaml"
    assert edit[0] in suite.read_text()
    suite.write_text(suite.read_text().replace(edit[0], edit[1]))
    (root / ".git").mkdir()
    code, _, err = run_cli(["eval", suite, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and len(err.strip().splitlines()) == 1, err
    assert f"suite.yaml: {field}:" in err and words in err, err


def test_the_cli_output_file_is_read_as_agentv_reads_it(tmp_path):
    """``output`` messages (the last assistant content is the answer, tool calls become
    trace steps), ``text``, or the file's text as it is."""
    from agentsproof.targets.command.agentv_run import answer_of, render

    trace = tmp_path / "trace.jsonl"
    text = json.dumps({"output": [{"role": "assistant", "content": "a", "tool_calls": [{"tool": "Read", "input": {"p": "x"}}]}, {"role": "assistant", "content": "b"}]})
    assert answer_of(text, trace) == ("b", None)
    assert json.loads(trace.read_text()) == {"tool": "Read", "input": {"p": "x"}}
    assert answer_of('{"text": "hi", "error": "boom"}', None) == ("hi", "boom")
    assert answer_of("plain words", None) == ("plain words", None)
    assert render("run {PROMPT} --out {OUTPUT_FILE} {UNKNOWN} {lower}", {"PROMPT": "'a b'", "OUTPUT_FILE": "'/o'"}) == "run 'a b' --out '/o' {UNKNOWN} {lower}"


def test_a_uv_run_python_grader_runs_on_python3_when_uv_is_not_installed(monkeypatch, tmp_path):
    """agentv's psychotherapy and sdk-python examples grade with ``uv run [python] x.py``."""
    from agentsproof.grading.script import without_uv

    monkeypatch.setenv("PATH", str(tmp_path))  # no uv (nor anything else) on PATH
    assert without_uv(["uv", "run", "validate_output.py", "--strict"])[1:] == ["validate_output.py", "--strict"]
    assert without_uv(["uv", "run", "python", "/x/check.py"])[1:] == ["/x/check.py"]
    assert without_uv(["uv", "run", "pytest", "-q"]) == ["uv", "run", "pytest", "-q"]  # not a script: left to fail as it is
    (tmp_path / "uv").write_text("#!/bin/sh\n")
    (tmp_path / "uv").chmod(0o755)
    assert without_uv(["uv", "run", "x.py"]) == ["uv", "run", "x.py"]  # uv installed: uv runs it


def test_a_docker_recipe_is_the_container_every_agent_trial_runs_in(tmp_path):
    """agentv's docker-workspace example (a copy): image, workdir and resources become the
    trials' container (docs/environments.md); with the model alone it is said and not used."""
    from agentsproof.formats.agentevals.items import load_suite, suite_items

    root = tmp_path / "docker-workspace"
    shutil.copytree(REAL.parent / "docker-workspace", root)
    (root / ".agentv").mkdir()
    loaded = load_suite(root / "evals" / "docker-example.EVAL.yaml")
    env = loaded.suite.environment
    assert (env.image, env.workdir, env.memory_mb, env.cpus) == ("python:3.11-slim", "/workspace", 2048, 1)
    (root / "targets.yaml").write_text("agent:\n  type: command\n  command: [cat]\n")
    (item,) = suite_items(loaded, trials=1, threshold=None, timeout=30, target="agent")
    assert item.environment is env
    (item,) = suite_items(loaded, trials=1, threshold=None, timeout=30, target=None)
    assert item.environment is None  # the model alone: no container


def test_agentvs_local_cli_example_runs_in_its_cwd_with_its_files(byok_env, tmp_path):
    """agentv's local-cli example as it is (a copy): no workspace, so the program runs in its
    ``cwd: ..`` (read-only), ``uv run ./mock_cli.py`` (python3 when uv is not installed), the
    attached files passed through ``{FILES}`` in ``files_format``."""
    root = tmp_path / "local-cli"
    shutil.copytree(REAL.parent / "local-cli", root)
    byok_env.add(Rule(reply='{"reasoning": "echoed", "passed": true, "score": 1.0}', judge=True))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", root / "evals" / "suite.yaml", "--output", out, "--no-cache", "--model", "m"])
    assert code == 0, err
    assert f"in {root.resolve()} (its cwd; read-only)" in err
    trial = _trial(out)
    answer = next(e["text"] for e in trial["log"] if e["role"] == "assistant")
    assert "python.instructions.md" in answer and "example.txt" in answer, answer
    assert not byok_env.trial_requests()  # the program answered; the model only judged
    assert sorted(p.name for p in root.iterdir()) == [".agentv", "README.md", "evals", "mock_cli.py"]  # nothing written there


def test_agentvs_targets_file_names_a_cli_target_too(tmp_path):
    """``.agentv/targets.yaml`` (``targets: [{name, provider: cli, command, timeout_seconds}]``)
    is found as providers.yaml is; a label that is no cli entry is not ours to run."""
    from agentsproof.targets.command.agentv import agentv_target
    from agentsproof.targets.config import find_target

    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: my-agent\n    provider: cli\n    command: agent run {PROMPT} > {OUTPUT_FILE}\n    timeout_seconds: 120\n"
        "  - name: llm\n    provider: openai\n"
    )
    suite = tmp_path / "evals" / "x.eval.yaml"
    suite.parent.mkdir()
    suite.write_text("environment: {type: host, workdir: .}\ntests: [{id: a, input: hi}]\n")
    found = find_target("my-agent", suite)
    assert found.spec.type == "command" and found.spec.sandbox is True and found.spec.timeout == 120
    assert found.spec.command[3] == "agent run {PROMPT} > {OUTPUT_FILE}" and len(found.spec.command) == 5  # no cwd: the eval has a workspace
    assert agentv_target("llm", suite) is None
    (tmp_path / ".agentv" / "targets.yaml").write_text("targets:\n  - name: my-agent\n    provider: cli\n    command: ''\n")
    with pytest.raises(InputError, match=r"\[0\]\.command: a cli provider needs a command"):
        agentv_target("my-agent", suite)
