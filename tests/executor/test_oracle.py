"""The oracle preflight: every grader runs on the eval's reference solution before any trial;
an oracle failing a check refuses the run (no trial call), --no-oracle skips it, and the
report shows the oracle's score. Chat evals on the scripted server; agent evals with a real
command agent and the real files/script graders."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml
from conftest import run_cli

AGENT = '''import pathlib, sys
count = pathlib.Path(sys.argv[2])
count.write_text(str(int(count.read_text() or 0) + 1) if count.exists() else "1")
pathlib.Path("summary.md").write_text("# Summary\\nTotal revenue: 3500\\n")
print("Wrote summary.md")
'''


def _chat_eval(tmp: Path, graders: list[dict[str, Any]], oracle: dict[str, Any]) -> Path:
    d = tmp / "plug" / "skills" / "s"
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text("Report totals with a thousands separator.\n")
    ev = {"version": "2", "skill": "SKILL.md", "defaults": {"trials": 1, "timeout": 30}, "oracle": oracle,
          "task": {"name": "total", "instruction": "What is the total revenue?", "graders": graders}}
    (d / "eval.yaml").write_text(yaml.safe_dump(ev, sort_keys=False))
    return d / "eval.yaml"


def test_oracle_failing_a_wrong_check_refuses_the_run(tmp_path: Path, byok_env: Any) -> None:
    # the check wants "3500" but the right answer (the oracle's) writes "3,500": no good answer can pass
    path = _chat_eval(tmp_path, [{"type": "deterministic", "checks": ["Total revenue: 3500"]}], {"answer": "Total revenue: 3,500"})
    code, out, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "runs"])
    assert code == 30, out + err
    assert err.count("\n") == 1, err
    assert "eval.yaml: oracle: the oracle of task 'total' fails 1 check(s): graders[0] (deterministic): mustContain 'Total revenue: 3500'" in err
    assert "--no-oracle" in err
    assert byok_env.requests == []  # refused before any trial
    code, out, err = run_cli(["eval", path, "--model", "m", "--no-oracle", "--output", tmp_path / "runs"])
    assert code == 0, out + err
    report = json.loads(next((tmp_path / "runs").rglob("*-eval.json")).read_text())
    assert report["items"][0]["oracle"] is None


def test_passing_oracle_is_scored_in_the_report(tmp_path: Path, byok_env: Any) -> None:
    path = _chat_eval(tmp_path, [{"type": "deterministic", "checks": ["3,500"]}, {"type": "llm_rubric", "rubric": "States the total as '3,500'."}],
                      {"answer": "Total revenue: 3,500"})
    code, out, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "runs"])
    assert code == 0, out + err
    report = json.loads(next((tmp_path / "runs").rglob("*-eval.json")).read_text())
    oracle = report["items"][0]["oracle"]
    assert oracle["score"] == 1.0 and oracle["tasks"][0]["passed"] is True and oracle["tasks"][0]["task"] == "total"
    judged = byok_env.judge_requests()
    assert any("Total revenue: 3,500" in json.dumps(r) for r in judged)  # the rubric judged the oracle's answer
    md = next((tmp_path / "runs").rglob("*-eval.md")).read_text()
    assert "**Oracle:** the reference solution scored 1.00" in md


def _agent_eval(tmp: Path, oracle: dict[str, Any], files_check: str) -> tuple[Path, Path]:
    d = tmp / "plug" / "skills" / "csv"
    (d / "fixtures").mkdir(parents=True)
    (d / "fixtures" / "data.csv").write_text("region,revenue\nnorth,1000\nsouth,2500\n")
    (d / "SKILL.md").write_text("Write summary.md with the revenue total.\n")
    (tmp / "agent.py").write_text(AGENT)
    count = tmp / "calls.txt"
    (d / "targets.yaml").write_text(yaml.safe_dump({"mini": {"type": "command", "command": [sys.executable, str(tmp / "agent.py"), "{prompt}", str(count)], "sandbox": False}}))  # it counts its runs in a file outside its workspace
    (d / "check.py").write_text("import pathlib,sys\nsys.exit(0 if pathlib.Path('summary.md').read_text().startswith('# Summary') else 1)\n")
    (d / "make_summary.py").write_text("import pathlib\npathlib.Path('summary.md').write_text('# Summary\\nTotal revenue: 3500\\n')\nprint('done')\n")
    ev = {"version": "2", "skill": "SKILL.md", "execution": {"mode": "agent", "target": "mini"}, "workspace": "fixtures/",
          "defaults": {"trials": 1, "timeout": 60}, "oracle": oracle,
          "task": {"name": "summary", "instruction": "Summarise data.csv into summary.md.", "graders": [
              {"type": "files", "exists": ["summary.md"], "mustContain": {"summary.md": [files_check]}},
              {"type": "script", "script": "check.py"},
              {"type": "tool_calls", "max_steps": 5}]}}
    (d / "eval.yaml").write_text(yaml.safe_dump(ev, sort_keys=False))
    return d / "eval.yaml", count


def test_agent_oracle_script_makes_the_expected_workspace(tmp_path: Path) -> None:
    path, count = _agent_eval(tmp_path, {"script": "make_summary.py"}, "Total revenue: 3500")
    code, out, err = run_cli(["eval", path, "--output", tmp_path / "runs"])
    assert code == 0, out + err
    oracle = json.loads(next((tmp_path / "runs").rglob("*-eval.json")).read_text())["items"][0]["oracle"]
    assert oracle["score"] == 1.0 and oracle["tasks"][0]["not_checked"] == ["graders[2] (tool_calls)"]
    assert count.read_text() == "2"  # the agent ran its two trials; the oracle is not the agent


def test_agent_oracle_command_failing_a_files_check(tmp_path: Path) -> None:
    path, count = _agent_eval(tmp_path, {"run": [sys.executable, "make_summary.py"]}, "Total revenue: 3,500")
    (path.parent / "fixtures" / "make_summary.py").write_text((path.parent / "make_summary.py").read_text())
    code, out, err = run_cli(["eval", path, "--output", tmp_path / "runs"])
    assert code == 30, out + err
    assert "oracle: the oracle of task 'summary' fails 1 check(s): graders[0] (files): mustContain" in err and "3,500" in err
    assert not count.exists()  # no agent trial ran


def test_oracle_command_that_fails_is_named(tmp_path: Path) -> None:
    path, count = _agent_eval(tmp_path, {"run": "exit 3"}, "Total revenue: 3500")
    code, out, err = run_cli(["eval", path, "--output", tmp_path / "runs"])
    assert code == 30 and "the oracle command exited 3" in err, err


def test_bad_oracle_field_is_one_line(tmp_path: Path, byok_env: Any) -> None:
    path = _chat_eval(tmp_path, [{"type": "deterministic", "checks": ["x"]}], {"timeout": 5})
    code, out, err = run_cli(["eval", path, "--model", "m"])
    assert code == 30 and "oracle.answer: required field is missing" in err, err
