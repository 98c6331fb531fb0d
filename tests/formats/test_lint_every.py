"""`agentsproof lint FILE` shows every problem of a file in one run, in each format: the
loader's errors one by one (the refused field taken out, the file loaded again in memory),
then the case checks of what loads; each problem one line naming the file and the field (as
in the file, also after a removed case); nothing written; a problem that only follows from
what lint took out is not reported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import run_cli

from agentsproof.formats.lint.every import Reduction, format_field, parse_field

EVAL_YAML = """\
description: four problems
tests:
  - id: one
    input: Say hello
    bogus_key: 1
    assert:
      - type: contains
        value: hello
  - id: two
    input: Say hi
    assert:
      - type: contains
        value: hi
  - id: one
    input: Say bye
    assert:
      - type: regex
        value: "(unclosed"
  - id: four
    input: Say yo
    assert:
      - type: contains
        value: yo
      - type: not-contains
        value: yo
  - id: five
    input: Say ho
    assert:
      - type: contains
        value: ho
"""


def _lint(path: Path) -> tuple[int, list[dict[str, Any]], str]:
    code, out, err = run_cli(["lint", "--json", path])
    assert "Traceback" not in err, err
    return code, json.loads(out)["problems"], err


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_every_problem_of_an_agentv_file_in_one_run(tmp_path: Path) -> None:
    suite = tmp_path / "greet.eval.yaml"
    suite.write_text(EVAL_YAML)
    before = _snapshot(tmp_path)
    code, problems, _ = _lint(suite)
    assert code == 1
    assert [(p["field"], p["rule"]) for p in problems] == [
        ("tests[0].bogus_key", "unknown-key"),
        ("tests[2].id", "duplicate-case"),
        ("tests[2].assert[0].value", "bad-regex"),
        ("tests[3].assert", "impossible-check"),  # after tests[2]'s assertion was taken out: still its index in the file
    ], problems
    assert {p["file"] for p in problems} == {str(suite)}
    assert "tests[0]" in problems[1]["message"]  # the case it duplicates, by its index in the file
    assert _snapshot(tmp_path) == before  # lint wrote nothing


def test_the_lines_name_file_and_field_and_the_exit_code_says_problems(tmp_path: Path) -> None:
    suite = tmp_path / "greet.eval.yaml"
    suite.write_text(EVAL_YAML)
    code, out, err = run_cli(["lint", suite])
    assert code == 1, out + err
    lines = [line for line in (out + err).splitlines() if ": error: " in line]
    assert len(lines) == 4 and all(line.startswith(f"{suite}: tests[") for line in lines), lines
    assert "4 problem(s): 4 error(s)" in out + err


def test_every_problem_of_an_evals_json_in_one_run(tmp_path: Path) -> None:
    (tmp_path / "SKILL.md").write_text("---\nname: b\ndescription: Does things.\n---\nDo things well.\n")
    evals = tmp_path / "evals"
    evals.mkdir()
    data = {
        "skill_name": "b",
        "bogus": 1,
        "evals": [
            {"id": 1, "prompt": "p1", "expected_output": "x", "wat": 2},
            {"id": 1, "prompt": "p2", "expected_output": "y"},
            {"id": 3, "prompt": "p3"},
            {"id": 4, "prompt": "p4", "expected_output": "z"},
            {"id": 5, "prompt": "p5", "expected_output": "w"},
        ],
    }
    (evals / "evals.json").write_text(json.dumps(data))
    code, problems, _ = _lint(evals / "evals.json")
    assert code == 1
    assert sorted((p["field"], p["rule"]) for p in problems) == [
        ("bogus", "read-as"),  # keys no evals.json reader knows change nothing measured: a warning, never a refusal
        ("evals[0].wat", "read-as"),
        ("evals[1].id", "duplicate-case"),
        ("evals[2]", "nothing-to-check"),
    ], problems
    warning = next(p for p in problems if p["field"] == "evals[2]")
    assert warning["severity"] == "warning" and "cannot show a difference" in warning["message"]


def test_every_problem_of_an_eval_yaml_in_one_run(tmp_path: Path) -> None:
    (tmp_path / "SKILL.md").write_text("---\nname: b\ndescription: Does things.\n---\nDo things well.\n")
    tasks = "".join(f"  - name: t{i}\n    instruction: do {i}\n    graders: [{{type: deterministic, checks: ['x']}}]\n" for i in range(3, 6))
    (tmp_path / "eval.yaml").write_text(
        'version: "2"\nskill: SKILL.md\ncolour: red\ntasks:\n'
        "  - name: a\n    instruction: do a\n    graders: [{type: deterministic, checks: ['x']}]\n"
        "  - name: b\n    instruction: do b\n    graders: [{type: regex, pattern: '(x'}]\n"
        "  - name: c\n    instruction: do c\n    graders: [{type: deterministic, checks: {mustContain: ['Q'], mustNotContain: ['q']}}]\n" + tasks
    )
    code, problems, _ = _lint(tmp_path / "eval.yaml")
    assert code == 1
    assert [(p["field"], p["rule"]) for p in problems] == [
        ("colour", "unknown-key"),
        ("tasks[1].graders[0].type", "unknown-grader"),
        ("tasks[2].graders[0].checks.mustNotContain[0]", "impossible-check"),
    ], problems


def test_every_problem_of_a_promptfoo_config_in_one_run(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        'prompts: ["Answer: {{q}}"]\nproviders: [openai:gpt-4o-mini]\ntests:\n'
        "  - vars: {q: one}\n    assert: [{type: contains, value: one}]\n"
        "  - vars: {q: two}\n    assert: [{type: regex, value: '(two'}]\n"
        "  - vars: {q: three}\n    assert: [{type: wobble, value: x}]\n"
        "  - vars: {q: four}\n"
    )
    code, problems, _ = _lint(config)
    assert code == 1
    errors = sorted((p["field"], p["rule"]) for p in problems if p["severity"] == "error")
    assert errors == [("tests[1].assert[0].value", "bad-regex"), ("tests[2].assert[0].type", "invalid")], problems
    assert ("warning", "nothing-to-check") in {(p["severity"], p["rule"]) for p in problems}, problems  # tests[3]: it runs
    assert "'wobble' is not graded" in next(p["message"] for p in problems if p["field"] == "tests[2].assert[0].type")


def test_a_missing_required_field_is_one_problem_not_two(tmp_path: Path) -> None:
    """Taking out a bad value leaves the key missing: that follows from lint, not from the file."""
    suite = tmp_path / "s.eval.yaml"
    body = "".join(f"  - id: c{i}\n    input: Say {i}\n    assert: [{{type: contains, value: '{i}'}}]\n" for i in range(5))
    suite.write_text("description: one problem\ntests:\n  - id: bad\n    input: 5\n    assert: [{type: contains, value: x}]\n" + body)
    code, problems, _ = _lint(suite)
    assert code == 1 and len([p for p in problems if p["severity"] == "error"]) == 1, problems
    assert problems[0]["field"].startswith("tests[0].input"), problems


def test_a_file_that_does_not_parse_is_one_problem(tmp_path: Path) -> None:
    suite = tmp_path / "s.eval.yaml"
    suite.write_text("tests:\n  - id: a\n    id: b\n")
    code, problems, _ = _lint(suite)
    assert code == 1 and [p["rule"] for p in problems] == ["duplicate-key"], problems


def test_fields_are_parsed_and_indices_mapped_back_to_the_file() -> None:
    assert parse_field("tests[2].assert[0].value") == ["tests", 2, "assert", 0, "value"]
    assert parse_field("regexMatch['NOTES.md'][0]") == ["regexMatch", "NOTES.md", 0]
    assert parse_field("line 3") is None and parse_field("(top level)") is None and parse_field("") is None
    assert format_field(["tests", 2, "assert", 0]) == "tests[2].assert[0]"
    red = Reduction({"tests": [{"a": 1}, {"a": 2}, {"a": 3}, {"a": 4}]})
    assert red.take_out(["tests", 1]) and red.take_out(["tests", 1])  # the file's tests[1], then its tests[2]
    assert red.data == {"tests": [{"a": 1}, {"a": 4}]}
    assert red.original(["tests", 1, "a"]) == ["tests", 3, "a"]
    assert red.original_text("tests[1].a duplicates tests[0]") == "tests[3].a duplicates tests[0]"
    assert red.follows(["tests", 2, "a"]) and red.follows(["tests"]) and not red.follows(["tests", 3])
    assert not red.take_out(["nothing"])  # the whole file is never taken out
