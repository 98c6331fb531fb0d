"""The flight recorder and `agentsproof regrade`: a run's trials graded again after the eval
was edited, with zero target calls (a real command agent counts its own invocations; the
scripted server counts trial and judge calls), the real files/script graders reading the
recorded files, and a grader needing what was not recorded refused by name."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import run_cli

AGENT = '''import os, pathlib, sys
count = pathlib.Path(sys.argv[2])
count.write_text(str(int(count.read_text()) + 1) if count.exists() else "1")
skilled = bool(os.environ.get("AGENTSPROOF_SKILL_FILE"))
text = "# Summary\\nTotal revenue: 3,500\\n" if skilled else "Revenue is 3500\\n"
pathlib.Path("summary.md").write_text(text)
pathlib.Path("data.csv").unlink()
print("Wrote summary.md")
'''


def _agent_eval(tmp: Path, check: str) -> tuple[Path, Path]:
    d = tmp / "plug" / "skills" / "csv"
    (d / "fixtures").mkdir(parents=True)
    (d / "fixtures" / "data.csv").write_text("region,revenue\nnorth,1000\nsouth,2500\n")
    (d / "fixtures" / "notes.txt").write_text("seed file, unchanged\n")
    (d / "SKILL.md").write_text("Write summary.md starting with '# Summary' and totals with a thousands separator.\n")
    (tmp / "agent.py").write_text(AGENT)
    count = tmp / "calls.txt"
    (d / "targets.yaml").write_text(yaml.safe_dump({"mini": {"type": "command", "command": [sys.executable, str(tmp / "agent.py"), "{prompt}", str(count)], "sandbox": False}}))  # it counts its runs in a file outside its workspace
    (d / "check.py").write_text("import pathlib,sys\nsys.exit(0 if pathlib.Path('summary.md').read_text().startswith('# Summary') else 1)\n")
    _write_eval(d, check)
    return d / "eval.yaml", count


def _write_eval(d: Path, check: str) -> None:
    ev = {"version": "2", "skill": "SKILL.md", "execution": {"mode": "agent", "target": "mini"}, "workspace": "fixtures/",
          "defaults": {"trials": 2, "timeout": 60},
          "task": {"name": "summary", "instruction": "Summarise data.csv into summary.md.", "graders": [
              {"type": "files", "exists": ["summary.md", "notes.txt"], "absent": ["data.csv"], "mustContain": {"summary.md": [check]}},
              {"type": "script", "script": "check.py"}]}}
    (d / "eval.yaml").write_text(yaml.safe_dump(ev, sort_keys=False))


def _report(folder: Path, pattern: str = "*-eval.json") -> tuple[Path, dict[str, Any]]:
    path = next(p for p in folder.rglob(pattern) if "history" not in p.parts)
    return path, json.loads(path.read_text())


def test_agent_run_regraded_after_a_check_fix_with_zero_target_calls(tmp_path: Path) -> None:
    path, count = _agent_eval(tmp_path, "Total revenue: 3500")  # wrong: the skill writes 3,500
    code, out, err = run_cli(["eval", path, "--output", tmp_path / "runs"])
    assert code == 0, out + err
    run_json, before = _report(tmp_path / "runs")
    assert before["items"][0]["with_arm"]["mean_score"] == 0.875  # the wrong check failed every skilled trial
    assert count.read_text() == "4"
    # the recorder kept the produced file, content-addressed beside the report
    rec = next(f for f in before["items"][0]["with_arm"]["trials"][0]["files"] if f["path"] == "summary.md")
    stored = run_json.with_name(run_json.stem + ".files") / rec["sha256"][:2] / rec["sha256"]
    assert stored.read_text() == "# Summary\nTotal revenue: 3,500\n"

    _write_eval(path.parent, "Total revenue: 3,500")  # the check fixed after the run
    code, out, err = run_cli(["regrade", run_json])
    assert code == 0, out + err
    assert count.read_text() == "4"  # no agent ran
    assert "0 target calls, 0 judge calls" in err
    new_json = run_json.with_name(run_json.stem + "-regraded.json")
    after = json.loads(new_json.read_text())
    item = after["items"][0]
    assert item["with_arm"]["mean_score"] == 1.0 and item["without_arm"]["mean_score"] == 0.375
    assert after["regraded"]["target_calls"] == 0 and after["regraded"]["from"] == str(run_json.resolve())
    changes = " | ".join(after["regraded"]["changes"])
    assert "Total revenue: 3500" in changes and "Total revenue: 3,500" in changes and "with-arm mean 0.88 -> 1.00" in changes
    md = new_json.with_suffix(".md").read_text()
    assert "**Re-graded** from" in md and "0 target calls" in md
    assert json.loads(run_json.read_text()) == before  # the original report is untouched
    # a re-graded report re-grades again (its files are the original's), and says where the trials came from
    code, out, err = run_cli(["regrade", new_json, "--output", run_json.parent / "again"])
    assert code == 0, out + err
    again = json.loads((run_json.parent / "again" / new_json.name).read_text())
    assert again["regraded"]["from"] == str(run_json.resolve()) and again["items"][0]["with_arm"]["mean_score"] == 1.0
    assert count.read_text() == "4"


def test_regrade_with_an_edited_copy_via_eval(tmp_path: Path) -> None:
    path, count = _agent_eval(tmp_path, "Total revenue: 3500")
    assert run_cli(["eval", path, "--output", tmp_path / "runs"])[0] == 0
    run_json, _ = _report(tmp_path / "runs")
    edited = path.parent / "eval-fixed.yaml"
    _write_eval(path.parent, "Total revenue: 3,500")
    path.rename(edited)
    code, out, err = run_cli(["regrade", run_json, "--eval", edited, "--output", tmp_path / "regraded"])
    assert code == 0, out + err
    _, after = _report(tmp_path / "regraded", "*-regraded.json")
    assert after["items"][0]["with_arm"]["mean_score"] == 1.0 and after["regraded"]["eval"] == [str(edited.resolve())]
    assert count.read_text() == "4"


def test_a_file_that_was_not_recorded_is_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, count = _agent_eval(tmp_path, "Total revenue: 3500")
    monkeypatch.setenv("AGENTSPROOF_RECORD_MAX_FILE_BYTES", "10")  # summary.md is larger
    assert run_cli(["eval", path, "--output", tmp_path / "runs"])[0] == 0
    run_json, _ = _report(tmp_path / "runs")
    code, out, err = run_cli(["regrade", run_json])
    assert code == 30, out + err
    assert err.count("\n") == 1
    assert "items[0]: cannot re-grade: item 'skills/csv' case 'summary': grader 'files' needs the file 'summary.md'" in err
    assert "was not recorded" in err


def _chat_eval(tmp: Path, rubric: str) -> Path:
    d = tmp / "plug" / "skills" / "s"
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_text("Answer politely.\n")
    ev = {"version": "2", "skill": "SKILL.md", "defaults": {"trials": 2, "timeout": 30},
          "task": {"name": "greet", "instruction": "Say hello.", "graders": [{"type": "llm_rubric", "rubric": rubric}]}}
    (d / "eval.yaml").write_text(yaml.safe_dump(ev, sort_keys=False))
    return d / "eval.yaml"


def test_rubric_fixed_after_a_chat_run_is_regraded_with_judge_calls_only_cached(
    tmp_path: Path, byok_env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _chat_eval(tmp_path, "Mentions 'goodbye'.")  # rewards the wrong thing
    code, out, err = run_cli(["eval", path, "--model", "m", "--output", tmp_path / "runs"])
    assert code == 0, out + err
    run_json, before = _report(tmp_path / "runs")
    trials, judges = len(byok_env.trial_requests()), len(byok_env.judge_requests())
    assert (trials, judges) == (4, 4) and before["items"][0]["with_arm"]["mean_score"] == 0.0
    _chat_eval(tmp_path, "Says 'OK'.")  # the scripted model answers "OK"
    monkeypatch.delenv("AGENTSPROOF_NO_CACHE")  # judges cached like any judge
    code, out, err = run_cli(["regrade", run_json, "--model", "m", "--no-cache"])
    assert code == 0, out + err
    assert len(byok_env.trial_requests()) == trials  # no trial ran
    assert len(byok_env.judge_requests()) == judges + 4 and "0 target calls, 4 judge calls" in err
    after = json.loads(run_json.with_name(run_json.stem + "-regraded.json").read_text())
    assert after["items"][0]["with_arm"]["mean_score"] == 1.0
    assert "s: with-arm mean 0.00 -> 1.00" in after["regraded"]["changes"], after["regraded"]["changes"]
    assert run_cli(["regrade", run_json, "--model", "m"])[0] == 0  # fills the cache
    seen = len(byok_env.judge_requests())
    code, out, err = run_cli(["regrade", run_json, "--model", "m"])
    assert code == 0 and len(byok_env.judge_requests()) == seen, err  # a re-grade again: every verdict from the cache
    assert "0 target calls, 0 judge calls" in err
    assert len(byok_env.trial_requests()) == trials


def test_tc_eval_run_regraded_and_a_renamed_task_refused(tmp_path: Path, byok_env: Any) -> None:
    from conftest import write_tc_eval

    path = write_tc_eval(tmp_path, [{"id": 1, "prompt": "Say hi", "expected_output": "Mentions 'nope'."},
                                    {"id": 2, "prompt": "Say bye", "expected_output": "Mentions 'nope'."}])
    code, out, err = run_cli(["tc-eval", path, "--model", "m", "--output", tmp_path / "runs"])
    assert code == 0, out + err
    run_json, before = _report(tmp_path / "runs", "*-tc-eval.json")
    trials = len(byok_env.trial_requests())
    data = json.loads(path.read_text())
    for case in data["evals"]:
        case["expected_output"] = "Mentions 'OK'."
    path.write_text(json.dumps(data))
    code, out, err = run_cli(["regrade", run_json, "--model", "m"])
    assert code == 0, out + err
    after = json.loads(run_json.with_name(run_json.stem + "-regraded.json").read_text())
    assert [it["with_arm"]["mean_score"] for it in after["items"]] == [1.0, 1.0]
    assert [it["with_arm"]["mean_score"] for it in before["items"]] == [0.0, 0.0]
    assert len(byok_env.trial_requests()) == trials


def test_a_task_renamed_after_the_run_is_refused(tmp_path: Path, byok_env: Any) -> None:
    d = tmp_path / "plug" / "skills" / "s"
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text("Answer.\n")
    tasks = [{"name": n, "instruction": f"Say {n}.", "graders": [{"type": "deterministic", "checks": ["x"]}]} for n in ("a", "b")]
    ev = {"version": "2", "skill": "SKILL.md", "defaults": {"trials": 1, "timeout": 30}, "tasks": tasks}
    (d / "eval.yaml").write_text(yaml.safe_dump(ev))
    code, out, err = run_cli(["eval", d / "eval.yaml", "--model", "m", "--output", tmp_path / "runs"])
    assert code == 0, out + err
    ev["tasks"][0]["name"] = "renamed"
    (d / "eval.yaml").write_text(yaml.safe_dump(ev))
    run_json, _ = _report(tmp_path / "runs")
    code, out, err = run_cli(["regrade", run_json])
    assert code == 30 and "answered task 'a', which the eval now has no more" in err, err


def test_eval_all_run_regraded_after_one_eval_is_edited(tmp_path: Path, byok_env: Any) -> None:
    from conftest import make_plugin, simple_eval

    plugin = make_plugin(tmp_path, skills={
        "a": {"eval": simple_eval([{"type": "deterministic", "checks": ["nope"]}])},
        "b": {"eval": simple_eval([{"type": "deterministic", "checks": ["OK"]}])},
    })
    code, out, err = run_cli(["eval-all", plugin, "--model", "m", "--output", tmp_path / "runs"])
    assert code == 0, out + err
    run_json = next(p for p in (tmp_path / "runs").rglob("eval-all-summary.json") if "history" not in p.parts)
    trials = len(byok_env.trial_requests())
    ev = yaml.safe_load((plugin / "skills" / "a" / "eval.yaml").read_text())
    ev["task"]["graders"][0]["checks"] = ["OK"]
    (plugin / "skills" / "a" / "eval.yaml").write_text(yaml.safe_dump(ev))
    code, out, err = run_cli(["regrade", run_json])
    assert code == 0, out + err
    after = json.loads(run_json.with_name(run_json.stem + "-regraded.json").read_text())
    assert {it["name"]: it["with_arm"]["mean_score"] for it in after["items"]} == {"a": 1.0, "b": 1.0}
    assert any(c.startswith("a: graders deterministic(nope) -> deterministic(OK)") for c in after["regraded"]["changes"])
    assert not any(c.startswith("b:") for c in after["regraded"]["changes"])
    assert len(byok_env.trial_requests()) == trials


def test_recorded_files_hold_no_registered_secret(tmp_path: Path) -> None:
    """The file store is an output like the report: a secret an agent wrote into a file is
    stored masked (text and binary files), and its digest names what was stored."""
    import hashlib

    from agentsproof.core import scrub
    from agentsproof.executor.recorder import FileStore
    from agentsproof.model.results import FileRecord

    secret = "sk-recorded-Secret-123456"
    scrub.register(secret)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text(f"token={secret}\n")
    (ws / "blob.bin").write_bytes(b"\xff\xfe" + secret.encode() + b"\x00")
    recs = [FileRecord(path="notes.txt", status="created", size=(ws / "notes.txt").stat().st_size),
            FileRecord(path="blob.bin", status="created", size=(ws / "blob.bin").stat().st_size)]
    store = FileStore(tmp_path / "store")
    store.keep(ws, recs)
    for rec in recs:
        assert rec.sha256 is not None
        data = store.get(rec.sha256)
        assert data is not None and secret.encode() not in data
        assert hashlib.sha256(data).hexdigest() == rec.sha256
    assert store.get(recs[0].sha256 or "") == b"token=***\n"
