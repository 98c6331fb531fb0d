"""microsoft/waza and mgechev/skillgrade eval.yaml files, as their projects ship them (copies
under tests/data/waza-real and tests/data/skillgrade-real, MIT licences beside them): each is
a registered format (detected, linted, run, converted to EVAL.yaml), end to end on the
scripted server; a skillgrade task also runs on a command agent, its workspace files at
their ``dest`` and its deterministic grader scoring the workspace."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import yaml
from conftest import Rule, only_report, run_cli

from agentsproof.formats import registry

DATA = Path(__file__).resolve().parents[1] / "data"


def _copy(tmp_path: Path, name: str) -> Path:
    dst = tmp_path / name
    shutil.copytree(DATA / name, dst)
    return dst


def test_licence_notices_are_kept_beside_the_copies():
    """The MIT notices of both projects sit at the top of their copies."""
    assert "Microsoft Corporation" in (DATA / "waza-real" / "LICENSE").read_text()
    assert "Minko Gechev" in (DATA / "skillgrade-real" / "LICENSE").read_text()


def test_each_file_is_detected_as_its_tools(tmp_path):
    """Each copy is read as its own tool's format by every command; agentsproof's eval.yaml stays its own."""
    waza, sg = DATA / "waza-real", DATA / "skillgrade-real"
    for path in (waza / "examples/code-explainer/eval.yaml", waza / "examples/grader-showcase/eval.yaml", waza / "skills/waza-interactive/tests/eval.yaml"):
        for command in ("eval", "tc-eval", "lint", "eval-all"):
            assert registry.detect(path, command).name == "waza", (path, command)
    for path in (sg / "examples/superlint/eval.yaml", sg / "examples/angular-modern/eval.yaml"):
        for command in ("eval", "tc-eval", "lint", "eval-all"):
            assert registry.detect(path, command).name == "skillgrade", (path, command)
    own = tmp_path / "eval.yaml"  # agentsproof's own eval.yaml stays its own
    own.write_text(yaml.safe_dump({"version": "2", "skill": "SKILL.md", "tasks": [{"name": "a", "instruction": "b", "graders": [{"type": "deterministic", "checks": ["x"]}]}]}))
    assert registry.detect(own, "eval").name == "eval.yaml"


def test_waza_code_explainer_runs_its_tasks_with_the_skill(byok_env, tmp_path):
    """Task files from a glob, fixtures from fixtures/, global and task graders (code, text)."""
    root = _copy(tmp_path, "waza-real") / "examples" / "code-explainer"
    byok_env.add(Rule(reply="This recursive factorial function has a base case n <= 1 and calls itself.", judge=False))
    code, _, err = run_cli(["eval", root / "eval.yaml", "--model", "m", "--trials", "1", "--output", tmp_path / "out", "--no-cache"])
    assert code in (0, 1), err
    data = only_report(tmp_path / "out")
    assert sorted(it["id"] for it in data["items"]) == sorted(
        f"case-{t}" for t in ("explain-python-recursion-001", "explain-js-async-001", "explain-list-comprehension-001", "explain-sql-join-001")
    ), [it["id"] for it in data["items"]]
    for it in data["items"]:
        assert it["with_arm"]["scored"] == 1 and it["without_arm"]["scored"] == 1  # SKILL.md beside: both arms
    sent = "\n".join(str(r["messages"]) for r in byok_env.trial_requests())
    assert "def factorial" in sent  # fixtures/factorial.py attached to its task
    assert "config.executor: agentsproof runs the model (or --target), never waza's mock executor" in err
    assert "expected: described, not graded" in err


def test_waza_grader_showcase_errors_only_the_task_it_cannot_grade(byok_env, tmp_path):
    """No SKILL.md for 'general-coding-assistant': single arm; skill_invocation errors its
    task with the reason; file, code, text, behavior and action_sequence graders run."""
    root = _copy(tmp_path, "waza-real") / "examples" / "grader-showcase"
    byok_env.add(Rule(reply="Python, JavaScript and TypeScript are popular for web development.", judge=False))
    code, _, err = run_cli(["eval", root / "eval.yaml", "--model", "m", "--trials", "1", "--output", tmp_path / "out", "--no-cache"])
    assert code == 30, err  # a run with an errored trial
    by = {it["id"]: it for it in only_report(tmp_path / "out")["items"]}
    assert len(by) == 6
    skipped = by["case-skill-invocation-001"]["with_arm"]
    assert skipped["scored"] == 0 and skipped["errored"] == 1 and "skill_invocation" in json.dumps(skipped)
    assert all(it["with_arm"]["scored"] == 1 for k, it in by.items() if k != "case-skill-invocation-001")
    regex = by["case-regex-demo-001"]
    assert regex["with_arm"]["pass_rate"] == 1.0, regex  # every regex_match matches, no regex_not_match does
    assert "single arm" in err


def test_waza_inline_tasks_with_validators(byok_env, tmp_path):
    """waza-interactive's eval: tasks written inline (id, prompt, validators), the SKILL.md above tests/."""
    root = _copy(tmp_path, "waza-real") / "skills" / "waza-interactive"
    byok_env.add(Rule(reply="Scenario 2: run waza_eval_run to run your evals.", judge=False))
    code, _, err = run_cli(["eval", root / "tests" / "eval.yaml", "--model", "m", "--trials", "1", "--output", tmp_path / "out", "--no-cache"])
    assert code in (0, 1), err
    by = {it["id"]: it for it in only_report(tmp_path / "out")["items"]}
    assert len(by) == 6 and by["case-trigger-run-evals"]["with_arm"]["pass_rate"] == 1.0
    assert any("waza-interactive" in str(r["messages"]) for r in byok_env.trial_requests())  # the skill is the with-arm's


def test_lint_and_convert(tmp_path):
    """lint passes (warnings only: what is read differently); convert writes an EVAL.yaml that loads."""
    for name, rel in (("waza-real", "examples/grader-showcase/eval.yaml"), ("skillgrade-real", "examples/superlint/eval.yaml")):
        path = _copy(tmp_path, name) / rel
        code, out, err = run_cli(["lint", path])
        assert code == 0 and " 0 error(s)" in err, out + err
        assert "[read-as]" in out
        dst = path.parent / "converted.eval.yaml"
        code, out, err = run_cli(["convert", path, "--to", "EVAL.yaml", "--out", dst])
        assert code == 0, err
        converted = yaml.safe_load(dst.read_text())
        assert converted["tests"] and all("assert" in t for t in converted["tests"])
    assert "skill-invocation-001" in err or "skill-invocation-001" not in json.dumps(converted)


def test_skillgrade_in_chat_runs_both_graders(byok_env, tmp_path):
    """superlint: the deterministic grader (its JSON score) and the llm_rubric (its text judged)."""
    root = _copy(tmp_path, "skillgrade-real") / "examples" / "superlint"
    byok_env.add(Rule(reply="I ran superlint check, fix and verify.", judge=False))
    code, _, err = run_cli(["eval", root / "eval.yaml", "--model", "m", "--trials", "1", "--output", tmp_path / "out", "--no-cache"])
    assert code in (0, 1), err
    item = only_report(tmp_path / "out")["items"][0]
    assert item["id"] == "case-fix-linting-errors" and item["with_arm"]["scored"] == 1 and item["without_arm"]["scored"] == 1
    judged = "\n".join(str(r["messages"]) for r in byok_env.judge_requests())
    assert "Did the agent follow check" in judged
    assert "defaults.agent: the agent is --target" in err and "/usr/local/bin/superlint" in err


WRITER = """
import os, sys
if os.path.exists("app.js") and 'var greeting' in open("app.js").read():
    open("app.js", "w").write("const greeting = 'hello world';\\n")
    open(".superlint-passed", "w").write("ok")
    print("fixed app.js")
else:
    print("no app.js here: " + ", ".join(sorted(os.listdir("."))))
"""


def test_skillgrade_on_an_agent_places_files_at_dest_and_grades_the_workspace(byok_env, tmp_path):
    """A command agent that fixes app.js only where skillgrade puts it (dest: app.js): the
    deterministic grader then scores the workspace 1.00 in both arms."""
    root = _copy(tmp_path, "skillgrade-real") / "examples" / "superlint"
    (root / "agent.py").write_text(WRITER)
    (root / "targets.yaml").write_text(yaml.safe_dump({"fixer": {"type": "command", "command": [sys.executable, "{here}/agent.py"]}}))
    code, _, err = run_cli(["eval", root / "eval.yaml", "--target", "fixer", "--targets", root / "targets.yaml", "--model", "m", "--trials", "1", "--output", tmp_path / "out", "--no-cache"])
    assert code in (0, 1), err
    item = only_report(tmp_path / "out")["items"][0]
    for arm in ("with_arm", "without_arm"):
        trial = item[arm]["trials"][0]
        scores = [g for g in trial["graders"] if g.get("type") == "script"]
        assert scores and scores[0]["score"] == 1.0, trial
