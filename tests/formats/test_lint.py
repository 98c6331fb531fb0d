"""`agentsproof lint`: one broken eval per defect class, each caught as one line naming the
file, the field and a fix; a clean eval passes; `--json` for CI; the same errors refuse a run
before any model call."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import run_cli

SKILL = "---\nname: s\ndescription: Writes release notes.\n---\nAlways group the changes under Added, Changed and Fixed headings in that order.\nEnd every release note with a line naming the version number and the date.\n"


def _task(name: str, graders: list[dict[str, Any]] | None = None, instruction: str = "Write the release notes for v2.") -> dict[str, Any]:
    return {"name": name, "instruction": instruction, "graders": graders or [{"type": "deterministic", "checks": ["Added"]}]}


def _write(tmp: Path, tasks: list[dict[str, Any]] | None = None, text: str | None = None, **extra: Any) -> Path:
    d = tmp / "skills" / "s"
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text(SKILL)
    ev = {"version": "2", "skill": "SKILL.md", **extra, "tasks": tasks or [_task(f"t{i}") for i in range(5)]}
    (d / "eval.yaml").write_text(text if text is not None else yaml.safe_dump(ev, sort_keys=False))
    return d / "eval.yaml"


def _five(first: dict[str, Any]) -> list[dict[str, Any]]:
    return [first, *(_task(f"t{i}") for i in range(1, 5))]


def _lint(*args: Any) -> tuple[int, list[dict[str, Any]]]:
    code, out, err = run_cli(["lint", "--json", *args])
    assert "Traceback" not in err, err
    return code, json.loads(out)["problems"]


def test_clean_eval_passes(tmp_path: Path) -> None:
    path = _write(tmp_path)
    code, out, err = run_cli(["lint", path])
    assert code == 0, out + err
    assert out == "" and "no problems found" in err


AGENT = {"execution": {"mode": "agent", "target": "copilot"}}

BROKEN: dict[str, tuple[dict[str, Any], str, str]] = {
    # defect class: (eval.yaml changes, expected rule, expected field)
    "must contain and must not contain the same text": (
        {"tasks": _five(_task("t0", [{"type": "deterministic", "checks": {"mustContain": ["Fixed headings"], "mustNotContain": ["fixed"]}}]))},
        "impossible-check", "tasks[0].graders[0].checks.mustNotContain[0]"),
    "across two graders": (
        {"tasks": _five(_task("t0", [{"type": "deterministic", "checks": ["v2"]}, {"type": "deterministic", "checks": {"mustNotContain": ["V2"]}}]))},
        "impossible-check", "tasks[0].graders[1].checks.mustNotContain[0]"),
    "regex that cannot match": (
        {"tasks": _five(_task("t0", [{"type": "deterministic", "checks": {"regexMatch": ["Added$\\s+Fixed"]}}]))},
        "impossible-regex", "tasks[0].graders[0].checks.regexMatch[0]"),
    "files regex that cannot match": (
        {**AGENT, "tasks": _five(_task("t0", [{"type": "files", "regexMatch": {"NOTES.md": ["(?!)v2"]}}]))},
        "impossible-regex", "tasks[0].graders[0].regexMatch['NOTES.md'][0]"),
    "file must exist and be absent": (
        {**AGENT, "tasks": _five(_task("t0", [{"type": "files", "exists": ["NOTES.md"]}, {"type": "files", "absent": ["NOTES.md"]}]))},
        "impossible-check", "tasks[0].graders[1].absent[0]"),
    "tool both required and banned": (
        {**AGENT, "tasks": _five(_task("t0", [{"type": "tool_calls", "must_call": ["bash"], "must_not_call": ["bash"]}]))},
        "impossible-check", "tasks[0].graders[0].must_call[0]"),
    "blank rubric": (
        {"tasks": _five(_task("t0", [{"type": "llm_rubric", "rubric": "   "}]))},
        "empty-grader", "tasks[0].graders[0].rubric"),
    "grader with nothing to check": (
        {"tasks": _five(_task("t0", [{"type": "deterministic", "checks": {"mustContain": []}}]))},
        "empty-grader", "tasks[0].graders[0].checks"),
    "files glob outside the workspace": (
        {**AGENT, "tasks": _five(_task("t0", [{"type": "files", "exists": ["../secrets.txt"]}]))},
        "outside-workspace", "tasks[0].graders[0].exists[0]"),
    "zero weight": (
        {"tasks": _five(_task("t0", [{"type": "deterministic", "checks": ["Added"], "weight": 0}]))},
        "zero-weight", "tasks[0].graders[0].weight"),
    "duplicate case names": (
        {"tasks": [_task("same"), _task("same"), *(_task(f"t{i}") for i in range(3))]},
        "duplicate-case", "tasks[1].name"),
    "missing workspace fixture": ({**AGENT, "workspace": "fixtures/"}, "missing-file", "workspace"),
    "missing grader script": (
        {**AGENT, "tasks": _five(_task("t0", [{"type": "script", "script": "check.py"}]))},
        "missing-file", "tasks[0].graders[0].script"),
    "grader command running a file the workspace lacks": (
        {**AGENT, "tasks": _five(_task("t0", [{"type": "script", "run": "python3 tests/check_notes.py"}]))},
        "missing-file", "tasks[0].graders[0].run"),
    "missing oracle script": ({"oracle": {"script": "make_notes.py"}}, "missing-file", "oracle.script"),
    "too few cases": ({"tasks": [_task("only")]}, "too-few-cases", "tasks"),
    "instruction quotes the skill": (
        {"tasks": _five(_task("t0", instruction="Write notes for v2. Always group the changes under Added, Changed and Fixed headings in that order. "
                                                 "End every release note with a line naming the version number and the date."))},
        "quotes-skill", "tasks[0].instruction"),
}


@pytest.mark.parametrize("defect", list(BROKEN))
def test_each_defect_class_is_one_line_with_field_and_fix(tmp_path: Path, defect: str) -> None:
    changes, rule, field = BROKEN[defect]
    path = _write(tmp_path, **changes)
    code, problems = _lint(path)
    severity = next(p["severity"] for p in problems if p["rule"] == rule)
    assert code == (1 if severity == "error" else 0)  # warnings alone pass, as with ruff or eslint
    if severity == "warning":
        assert _lint("--strict", path)[0] == 1  # --strict fails on them too
    assert [(p["rule"], p["field"]) for p in problems if p["rule"] != "too-few-cases" or rule == "too-few-cases"] == [(rule, field)], problems
    p = next(p for p in problems if p["rule"] == rule)
    assert p["file"].endswith("eval.yaml") and p["fix"]
    code, out, _ = run_cli(["lint", path])
    line = next(ln for ln in out.splitlines() if f"[{rule}]" in ln)
    assert field in line and "(fix: " in line and "eval.yaml" in line


def test_duplicate_yaml_key(tmp_path: Path) -> None:
    path = _write(tmp_path, text="version: '2'\nskill: SKILL.md\nskill: SKILL.md\ntask: {name: a, instruction: b, graders: [{type: deterministic, checks: [x]}]}\n")
    code, problems = _lint(path)
    assert code == 1 and problems[0]["rule"] == "duplicate-key" and problems[0]["field"] == "line 3", problems


def test_unreadable_fixture(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    path = _write(tmp_path, **AGENT, workspace="fixtures/")
    (path.parent / "fixtures").mkdir()
    secret = path.parent / "fixtures" / "data.csv"
    secret.write_text("a,b\n")
    secret.chmod(0)
    try:
        code, problems = _lint(path)
    finally:
        secret.chmod(0o644)
    assert code == 1 and [(p["rule"], p["field"]) for p in problems] == [("unreadable-file", "workspace")], problems
    assert "data.csv" in problems[0]["message"]


def test_fixture_symlink_leaving_the_folder(tmp_path: Path) -> None:
    path = _write(tmp_path, **AGENT, workspace="fixtures/")
    (path.parent / "fixtures").mkdir()
    (path.parent / "fixtures" / "link").symlink_to("/etc/hostname")
    code, problems = _lint(path)
    assert code == 1 and problems[0]["rule"] == "bad-fixture", problems


def test_evals_json_and_eval_yaml_tests(tmp_path: Path) -> None:
    (tmp_path / "SKILL.md").write_text(SKILL)
    (tmp_path / "evals.json").write_text(json.dumps({"skill_name": "SKILL.md", "evals": [
        {"id": 1, "prompt": "a", "expected_output": "b"}, {"id": 2, "prompt": "c", "expected_output": "d"}]}))
    code, problems = _lint(tmp_path / "evals.json")
    assert code == 0 and [(p["rule"], p["field"]) for p in problems] == [("too-few-cases", "evals")], problems  # a warning alone passes
    data = json.loads((tmp_path / "evals.json").read_text())
    data["evals"][1]["id"] = 1
    (tmp_path / "evals.json").write_text(json.dumps(data))
    code, problems = _lint(tmp_path / "evals.json")
    assert code == 1 and [(p["rule"], p["field"]) for p in problems] == [("duplicate-case", "evals[1].id")], problems
    (tmp_path / "EVAL.yaml").write_text(yaml.safe_dump({"name": "s", "tests": [
        {"id": "x", "input": "hi", "assert": [{"type": "contains", "value": "Hello"}, {"type": "not-contains", "value": "Hello"}]}]}))
    code, problems = _lint(tmp_path / "EVAL.yaml")
    assert code == 1 and ("impossible-check", "tests[0].assert") in {(p["rule"], p["field"]) for p in problems}, problems


def test_targets_yaml(tmp_path: Path) -> None:
    (tmp_path / "targets.yaml").write_text(yaml.safe_dump({
        "mini": {"type": "command", "command": ["python3", "{here}/agent.py", "{prompt}"]},
        "bad": {"type": "command", "command": ["./nowhere-agent"]},
    }))
    code, problems = _lint(tmp_path / "targets.yaml")
    assert code == 1
    assert {(p["rule"], p["field"]) for p in problems} == {("missing-file", "mini.command[1]"), ("missing-file", "bad.command[0]")}, problems
    (tmp_path / "targets.yaml").write_text("mini: {type: nope}\n")
    code, problems = _lint(tmp_path / "targets.yaml")
    assert code == 1 and problems[0]["field"] == "mini.type"


def test_folder_lints_every_file_and_errors_only(tmp_path: Path) -> None:
    _write(tmp_path, tasks=[_task("only")])
    code, problems = _lint(tmp_path)
    assert code == 0 and [p["rule"] for p in problems] == ["too-few-cases"]  # a warning alone passes
    assert _lint(tmp_path, "--strict")[0] == 1
    code, problems = _lint(tmp_path, "--errors-only")
    assert code == 0 and problems == []


def test_missing_path_is_exit_30(tmp_path: Path) -> None:
    code, out, err = run_cli(["lint", tmp_path / "nope.yaml"])
    assert code == 30 and "nope.yaml" in err and "not found" in err


def test_a_run_is_refused_by_a_lint_error_before_any_call(tmp_path: Path, byok_env: Any) -> None:
    path = _write(tmp_path, tasks=_five(_task("t0", [{"type": "deterministic", "checks": {"mustContain": ["v2"], "mustNotContain": ["v2"]}}])))
    code, out, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "runs"])
    assert code == 30, out + err
    assert err.count("\n") == 1 and "tasks[0].graders[0].checks.mustNotContain[0]" in err and "fix:" in err
    assert byok_env.requests == []
    assert not (tmp_path / "runs").exists()


def test_a_run_is_not_refused_by_warnings(tmp_path: Path, byok_env: Any) -> None:
    path = _write(tmp_path, tasks=[_task("only")])
    code, out, err = run_cli(["eval", path, "--model", "m", "--trials", "1", "--output", tmp_path / "runs"])
    assert code == 0, out + err


def test_judge_flags_overfitting_with_evidence(tmp_path: Path, byok_env: Any) -> None:
    from openai_server import Rule

    path = _write(tmp_path, tasks=_five(_task("t0", [{"type": "deterministic", "checks": ["Added, Changed and Fixed headings"]}])))
    finding = {"findings": [
        {"field": "tasks[0].graders[0]", "kind": "overfitting", "evidence": "the check copies 'Added, Changed and Fixed headings' from the skill", "fix": "check that the changes are grouped"},
        {"field": "tasks[3].instruction", "kind": "skill-not-needed", "evidence": "any model writes release notes"},
        {"field": "not.a.field", "kind": "overfitting", "evidence": "dropped"},
    ]}
    byok_env.rules.append(Rule(reply=json.dumps(finding), system_contains="You review an eval"))
    code, problems = _lint(path, "--judge", "--model", "m", "--strict")
    assert code == 1  # the reviewer's findings are warnings: --strict fails on them
    got = [(p["rule"], p["field"]) for p in problems]
    assert got == [("overfitting", "tasks[0].graders[0]"), ("skill-not-needed", "tasks[3].instruction")], problems
    assert "copies 'Added, Changed and Fixed headings'" in problems[0]["message"] and problems[0]["fix"] == "check that the changes are grouped"
    assert len(byok_env.requests) == 1
    sent = json.dumps(byok_env.requests[0])
    assert "Always group the changes" in sent and "tasks[0].graders[0]" in sent  # the skill and the checks were shown


def test_judge_failure_is_exit_30(tmp_path: Path, byok_env: Any) -> None:
    from openai_server import Rule

    path = _write(tmp_path)
    byok_env.rules.append(Rule(reply="not json at all", system_contains="You review an eval"))
    code, out, err = run_cli(["lint", path, "--judge", "--model", "m"])
    assert code == 30 and "reviewer failed" in err and err.count("\n") == 1


def test_activation_suite_defects(tmp_path: Path) -> None:
    """An activation suite with a prompt on both sides (error), a duplicate (error), too few
    should-not prompts (warning) and a prompt that copies the description (warning)."""
    should = ["Write the release notes for v3", "write the  release notes for v3", "Draft a changelog for 1.2",
              "Summarise what changed since 1.0", "Writes release notes.", "What goes into the notes for this tag?"]
    path = _write(tmp_path, activation={"should": should, "should_not": ["Draft a changelog for 1.2", "Fix this failing test"]})
    code, problems = _lint(path)
    assert code == 1
    got = {(p["rule"], p["field"], p["severity"]) for p in problems}
    assert ("duplicate-prompt", "activation.should[1]", "error") in got
    assert ("contradictory-prompt", "activation.should_not[0]", "error") in got
    assert ("too-few-prompts", "activation.should_not", "warning") in got
    assert ("prompt-copies-description", "activation.should[4]", "warning") in got
    assert not any(p["field"] == "activation.should" for p in problems)  # six should prompts are enough


def test_a_clean_activation_suite_passes(tmp_path: Path) -> None:
    path = _write(tmp_path, activation={
        "should": [f"Write the release notes for v{i}" for i in range(5)],
        "should_not": [f"Fix failing test number {i}" for i in range(5)],
    })
    code, out, err = run_cli(["lint", path])
    assert code == 0, out + err


def test_lint_exit_codes_problems_in_a_file_are_1_a_path_it_cannot_check_is_30(tmp_path):
    """docs/lint-oracle-regrade.md: 1 for what is wrong in a file (its loader's refusals
    too), 30 for a PATH lint cannot check at all; a file below a folder that cannot be read
    is one of the folder's problems."""
    bad = tmp_path / "bad" / "EVAL.yaml"
    bad.parent.mkdir()
    bad.write_text("tests: [\n")
    code, out, _ = run_cli(["lint", bad])
    assert code == 1 and "invalid YAML" in out
    code, _, err = run_cli(["lint", tmp_path / "missing.yaml"])
    assert code == 30 and err.count("\n") == 1 and "not found" in err
    fifo = tmp_path / "pipe" / "EVAL.yaml"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    code, _, err = run_cli(["lint", fifo])
    assert code == 30 and err.count("\n") == 1 and "is not a regular file" in err, err
    code, out, _ = run_cli(["lint", fifo.parent])  # found below a folder: one of its problems
    assert code == 1 and "[unreadable-file]" in out, out
    (tmp_path / "empty").mkdir()
    code, _, err = run_cli(["lint", tmp_path / "empty"])
    assert code == 30 and "has no eval.yaml" in err
