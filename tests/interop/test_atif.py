"""ATIF trajectories: `--atif DIR` writes each agent trial in Harbor's format; `import atif`
grades them (ours: a round trip to the same scores; another tool's: its tool calls and
final message), with no target run. A real command agent writes a JSONL trace."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from conftest import run_cli

AGENT = '''import json, os, pathlib, sys
count = pathlib.Path(sys.argv[2])
count.write_text(str(int(count.read_text()) + 1) if count.exists() else "1")
skilled = bool(os.environ.get("AGENTSPROOF_SKILL_FILE"))
trace = pathlib.Path(os.environ["AGENTSPROOF_TRACE_FILE"])
with trace.open("w") as fh:
    fh.write(json.dumps({"tool": "read_file", "arguments": {"path": "data.csv"}, "result": "3 lines"}) + "\\n")
    fh.write(json.dumps({"tool": "write_file", "arguments": "summary.md", "result": "ok"}) + "\\n")
pathlib.Path("summary.md").write_text("# Summary\\nTotal revenue: 3,500\\n" if skilled else "Revenue 3500\\n")
print("Wrote summary.md with the total." if skilled else "done")
'''


def _agent_eval(tmp: Path, graders: list[dict[str, Any]]) -> tuple[Path, Path]:
    d = tmp / "plug" / "skills" / "csv"
    (d / "fixtures").mkdir(parents=True)
    (d / "fixtures" / "data.csv").write_text("region,revenue\nnorth,1000\nsouth,2500\n")
    (d / "SKILL.md").write_text("Write summary.md with a '# Summary' title and totals with a thousands separator.\n")
    (tmp / "agent.py").write_text(AGENT)
    count = tmp / "calls.txt"
    (d / "targets.yaml").write_text(yaml.safe_dump({"mini": {"type": "command", "command": [sys.executable, str(tmp / "agent.py"), "{prompt}", str(count)], "sandbox": False}}))  # it counts its runs in a file outside its workspace
    ev = {"version": "2", "skill": "SKILL.md", "execution": {"mode": "agent", "target": "mini"}, "workspace": "fixtures/",
          "defaults": {"trials": 2, "timeout": 60},
          "task": {"name": "summary", "instruction": "Summarise data.csv into summary.md.", "graders": graders}}
    (d / "eval.yaml").write_text(yaml.safe_dump(ev, sort_keys=False))
    return d / "eval.yaml", count


GRADERS = [
    {"type": "files", "exists": ["summary.md"], "mustContain": {"summary.md": ["Total revenue: 3,500"]}},
    {"type": "tool_calls", "sequence": ["read_file", "write_file"]},
    {"type": "deterministic", "checks": ["total"]},
]


def _scores(report: dict[str, Any]) -> dict[tuple[str, int], tuple[float, list[float]]]:
    item = report["items"][0]
    return {(t["arm"], t["index"]): (t["score"], [g["score"] for g in t["graders"]]) for arm in ("with_arm", "without_arm") for t in item[arm]["trials"]}


def test_atif_export_is_harbor_shaped_and_round_trips_to_the_same_grades(tmp_path: Path) -> None:
    path, count = _agent_eval(tmp_path, GRADERS)
    atif = tmp_path / "atif"
    code, out, err = run_cli(["eval", path, "--output", tmp_path / "runs", "--atif", atif])
    assert code == 0, out + err
    report = json.loads(next(p for p in (tmp_path / "runs").rglob("*-eval.json") if "history" not in p.parts).read_text())
    files = sorted(p.relative_to(atif).as_posix() for p in atif.rglob("*.json"))
    assert files == ["skills-csv/with-1.json", "skills-csv/with-2.json", "skills-csv/without-1.json", "skills-csv/without-2.json"]
    doc = json.loads((atif / "skills-csv" / "with-1.json").read_text())
    assert doc["schema_version"] == "ATIF-v1.4" and doc["agent"]["name"] == "mini" and doc["agent"]["version"]
    assert [s["source"] for s in doc["steps"]] == ["system", "user", "agent", "agent", "agent"]
    assert [s["step_id"] for s in doc["steps"]] == [1, 2, 3, 4, 5]
    call = doc["steps"][2]["tool_calls"][0]
    assert call["function_name"] == "read_file" and call["arguments"] == {"path": "data.csv"}
    assert doc["steps"][2]["observation"]["results"][0] == {"source_call_id": call["tool_call_id"], "content": "3 lines"}
    assert doc["steps"][3]["tool_calls"][0]["arguments"] == {"input": "summary.md"}  # ATIF arguments are objects
    assert doc["steps"][-1]["message"] == "Wrote summary.md with the total."
    assert doc["final_metrics"]["total_steps"] == 5
    assert re.fullmatch(r"[0-9a-f-]{36}", doc["session_id"])
    assert list((atif / "files").rglob("*"))  # the produced files' contents travel with them

    code, out, err = run_cli(["import", "atif", atif, "--eval", path, "--output", tmp_path / "imported"])
    assert code == 0, out + err
    assert "imported 4 ATIF trajectories: 0 target calls" in err
    assert count.read_text() == "4"  # the agent ran only in the original run
    imported = json.loads(next((tmp_path / "imported").rglob("*-imported.json")).read_text())
    assert _scores(imported) == _scores(report)
    assert imported["items"][0]["with_arm"]["trials"][0]["trajectory"] == report["items"][0]["with_arm"]["trials"][0]["trajectory"]
    assert imported["regraded"]["imported"] == "atif" and imported["regraded"]["target_calls"] == 0


HARBOR = {
    "schema_version": "ATIF-v1.2",
    "session_id": "025B810F-B3A2-4C67-93C0-FE7A142A947A",
    "agent": {"name": "other-agent", "version": "1.0.0", "model_name": "gemini-2.5-flash"},
    "steps": [
        {"step_id": 1, "source": "user", "message": "Summarise data.csv into summary.md."},
        {"step_id": 2, "source": "agent", "message": "I will read the data.", "reasoning_content": "dropped",
         "tool_calls": [{"tool_call_id": "c1", "function_name": "read_file", "arguments": {"path": "data.csv"}}],
         "observation": {"results": [{"source_call_id": "c1", "content": "region,revenue"}]},
         "metrics": {"prompt_tokens": 520, "completion_tokens": 80, "cached_tokens": 200, "cost_usd": 0.00045}},
        {"step_id": 3, "source": "agent", "message": "", "tool_calls": [{"tool_call_id": "c2", "function_name": "write_file", "arguments": {"path": "summary.md"}}]},
        {"step_id": 4, "source": "agent", "message": "The total revenue is 3,500.", "metrics": {"prompt_tokens": 600, "completion_tokens": 44}},
    ],
}


def test_another_tools_trajectory_is_graded(tmp_path: Path) -> None:
    path, count = _agent_eval(tmp_path, GRADERS[1:])
    folder = tmp_path / "harbor"
    folder.mkdir()
    (folder / "trial-1.json").write_text(json.dumps(HARBOR))
    code, out, err = run_cli(["import", "atif", folder, "--eval", path, "--output", tmp_path / "imported"])
    assert code == 0, out + err
    report = json.loads(next((tmp_path / "imported").rglob("*-imported.json")).read_text())
    trial = report["items"][0]["with_arm"]["trials"][0]
    assert trial["score"] == 1.0 and trial["response"] == "The total revenue is 3,500."
    assert [s["name"] for s in trial["trajectory"]] == ["read_file", "write_file"]
    assert trial["usage"]["prompt_tokens"] == 1120 and trial["cost_usd"] == 0.00045
    assert report["items"][0]["without_arm"]["trials"] == [] and report["settings"]["baseline"] == "none"
    assert not count.exists()


def test_a_files_grader_on_a_trajectory_without_files_is_refused(tmp_path: Path) -> None:
    path, _ = _agent_eval(tmp_path, GRADERS)
    folder = tmp_path / "harbor"
    folder.mkdir()
    (folder / "t.json").write_text(json.dumps(HARBOR))
    code, out, err = run_cli(["import", "atif", folder, "--eval", path])
    assert code == 30 and "t.json: grader 'files' of 'csv' reads the workspace, and this trajectory records no files" in err, err


def test_bad_trajectory_is_one_line(tmp_path: Path) -> None:
    path, _ = _agent_eval(tmp_path, GRADERS[1:])
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "t.json").write_text(json.dumps({**HARBOR, "schema_version": "v9"}))
    code, out, err = run_cli(["import", "atif", folder, "--eval", path])
    assert code == 30 and "t.json: schema_version: 'v9': expected an ATIF version" in err and err.count("\n") == 1, err


def test_another_tools_trajectory_graded_by_a_chat_eval_with_a_judge(tmp_path: Path, byok_env: Any) -> None:
    d = tmp_path / "plug" / "skills" / "totals"
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text("Write totals with a thousands separator.\n")
    ev = {"version": "2", "skill": "SKILL.md", "defaults": {"trials": 1, "timeout": 30},
          "tasks": [{"name": n, "instruction": i, "graders": [{"type": "deterministic", "checks": ["3,500"]}, {"type": "llm_rubric", "rubric": "Says '3,500'."}]}
                    for n, i in (("summary", "Summarise data.csv into summary.md."), ("other", "What is the total?"))]}
    (d / "eval.yaml").write_text(yaml.safe_dump(ev, sort_keys=False))
    folder = tmp_path / "harbor"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps(HARBOR))
    other = {**HARBOR, "steps": [{"step_id": 1, "source": "user", "message": "What is the total?"}, {"step_id": 2, "source": "agent", "message": "3500"}]}
    (folder / "b.json").write_text(json.dumps(other))
    code, out, err = run_cli(["import", "atif", folder, "--eval", d / "eval.yaml", "--model", "m", "--output", tmp_path / "imported"])
    assert code == 0, out + err
    report = json.loads(next((tmp_path / "imported").rglob("*-imported.json")).read_text())
    by_case = {t["case"]: t["score"] for t in report["items"][0]["with_arm"]["trials"]}
    assert by_case == {"summary": 1.0, "other": 0.0}  # each trajectory graded by its own task's graders
    assert len(byok_env.judge_requests()) == 2 and byok_env.trial_requests() == []
