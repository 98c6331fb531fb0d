"""tc-eval on agentprobe-style JSONL datasets: matching rules, failure reasons, single and
dual arms, errored runs, and checks on load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentsproof.formats.dataset import DatasetCase, answer_pattern, graders_for
from agentsproof.grading.deterministic import grade_deterministic
from conftest import Rule, read_json, run_cli


@pytest.mark.parametrize(
    "expected, match, answer, ok",
    [
        ("42", "exact", "  42\n", True),
        ("42", "exact", "42 apples", False),
        ("50", "contains", "I have 50 apples.", True),
        ("50", "contains", "I have 500 apples.", False),  # not inside 500
        ("50", "contains", "It costs 1.50", False),
        ("500", "contains", "about 1,500 of them", False),  # the comma is part of the number
        ("422734", "contains", "The sum is 422,734.", True),  # thousands separators ignored
        ("422,734", "contains", "The sum is 422734", True),
        ("500", "contains", "500, then 600", True),
        ("500", "contains", "500,000", False),
        ("Paris", "contains", "It is paris, of course", True),
        ("1.5", "contains", "x=1.5;", True),
        ("Paris", "contains", "Parisian food", False),
    ],
)
def test_answer_matching_rules(expected, match, answer, ok):
    g = grade_deterministic(answer, graders_for(DatasetCase("c", "q", expected, match))[0])
    assert g.checks[0].passed is ok, answer_pattern(expected, match)


def _dataset(tmp_path: Path, rows: list[dict]) -> Path:
    p = tmp_path / "cases.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return p


ROWS = [
    {"id": "calc-1", "input": "What is 2+2? CALC1", "expected_answer": "4", "tags": ["math"]},
    {"id": "calc-2", "input": "How many? CALC2", "expected_answer": "50", "answer_match": "contains"},
    {"id": "blank", "input": "Say nothing BLANK", "expected_answer": "hi"},
    {"id": "down", "input": "DOWN please", "expected_answer": "x"},
]


def _serve(srv) -> None:
    srv.add(Rule(reply="4", user_contains="CALC1", judge=False))
    srv.add(Rule(reply="There are 500 of them.", user_contains="CALC2", judge=False))
    srv.add(Rule(reply="   ", user_contains="BLANK", judge=False))
    srv.add(Rule(status=400, message="scripted outage", user_contains="DOWN", judge=False))


def test_dataset_without_a_skill_runs_the_model_alone_with_failure_reasons(byok_env, tmp_path):
    _serve(byok_env)
    out = tmp_path / "out"
    code, stdout, err = run_cli(["tc-eval", _dataset(tmp_path, ROWS), "--model", "m", "--output", out, "--trials", "2",
                                 "--jsonl", tmp_path / "t.jsonl"])
    assert code == 30, err  # "down" has no scored run: errored, not failed
    assert len(byok_env.trial_requests()) == 8 and byok_env.judge_requests() == []  # one arm, no judge
    data = read_json(out / "cases" / "cases-tc-eval.json")
    assert data["settings"]["baseline"] == "none"
    items = {i["id"]: i for i in data["items"]}
    assert items["case-calc-1"]["passed"] and items["case-calc-1"]["pass_rate"] == 1.0
    check = items["case-calc-2"]["with_arm"]["trials"][0]["graders"][0]["checks"][0]
    assert check["kind"] == "answer (contains)" and check["target"] == "50" and not check["passed"]
    assert check["evidence"] == "wrong answer (contains): expected '50', got 'There are 500 of them.'"
    blank = items["case-blank"]["with_arm"]["trials"][0]["graders"][0]["checks"][0]
    assert blank["evidence"] == "empty answer"
    assert items["case-down"]["status"] == "errored" and "scripted outage" in items["case-down"]["status_reason"]
    lines = [json.loads(x) for x in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert {r["case"] for r in lines} == {"calc-1", "calc-2", "blank", "down"}


def test_dataset_with_a_skill_runs_both_arms(byok_env, tmp_path):
    byok_env.add(Rule(reply="I think 5", judge=False))
    byok_env.add(Rule(reply="4", system_contains="DSKILL", judge=False))
    skill = tmp_path / "SKILL.md"
    skill.write_text("DSKILL: answer with the number only.\n")
    out = tmp_path / "out"
    code, _, err = run_cli(["tc-eval", _dataset(tmp_path, ROWS[:1]), "--skill", skill, "--model", "m", "--output", out, "--trials", "3", "--ci"])
    assert code == 0, err
    item = read_json(out / "cases" / "cases-tc-eval.json")["items"][0]
    assert item["grade"] == "A" and item["delta"] == 1.0 and len(item["without_arm"]["trials"]) == 3


@pytest.mark.parametrize(
    "lines, message",
    [
        (['{"id": "a", "input": "q", "expected_answer": "1"}', '{"id": "a", "input": "r", "expected_answer": "2"}'],
         "line 2: id: 'a' is also the id on line 1; ids must be unique"),
        (['{"id": "a", "input": "  ", "expected_answer": "1"}'], "line 1: input: is missing or empty"),
        (['', '{"id": "a", "input": "q", "expected_answer": ""}'], "line 2: expected_answer: is empty; leave it out to check only the tools"),
        (['{"id": "a", "input": "q", "expected_answer": "1", "answer_match": "fuzzy"}'], "line 1: answer_match: 'fuzzy': expected 'exact' or 'contains'"),
        (['{"id": "a", "input": "q", "expected": "1"}'], "line 1: expected: unknown key"),
        (['{"id": "a", "input": "q", "expected_answer": "1"}', "{oops"], "line 2: not JSON"),
    ],
)
def test_bad_datasets_are_one_line_naming_the_line(byok_env, tmp_path, lines, message):
    p = tmp_path / "cases.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = run_cli(["tc-eval", p, "--model", "m", "--output", tmp_path / "out"])
    assert code == 30 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"error: {p}: {message}")
    assert byok_env.requests == []


def test_skill_flag_is_only_for_datasets(byok_env, tmp_path):
    from conftest import write_tc_eval

    path = write_tc_eval(tmp_path / "x", [{"id": 1, "prompt": "p"}])
    code, _, err = run_cli(["tc-eval", path, "--skill", path, "--model", "m"])
    assert code == 30 and err.strip() == "error: command line: --skill: is for a JSONL dataset or an EVAL.yaml; an evals.json names its skill in skill_name"
