"""compare: ↑/↓ markers, the overall pass-rate row, --config warnings, --last N over a runs
folder, and agentprobe / agentv inputs."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Rule, run_cli, write_tc_eval

MARK = "CMPMARK"


def _two_runs(srv, tmp_path: Path, before_cfg: list[str], after_cfg: list[str]) -> Path:
    path = write_tc_eval(tmp_path / "reg", [{"id": 1, "prompt": "ONE", "assertions": ["Uses 'pytest'"]},
                                            {"id": 2, "prompt": "TWO", "assertions": ["Uses 'pytest'"]}], skill_text=f"{MARK}\n")
    out = tmp_path / "runs"
    base = ["tc-eval", path, "--model", "m", "--output", out, "--trials", "3", "--baseline", "none"]
    srv.add(Rule(reply="import pytest", judge=False))
    bad = Rule(reply="nothing", user_contains="TWO", judge=False)
    srv.add(bad)
    code, _, err = run_cli(base + before_cfg)
    assert code == 0, err
    srv.rules.remove(bad)  # the "fix": case 2 passes from now on
    code, _, err = run_cli(base + after_cfg)
    assert code == 0, err
    return out


def test_compare_last_two_runs_markers_overall_row_and_config_warning(byok_env, tmp_path):
    out = _two_runs(byok_env, tmp_path, ["--config", "prompt=v1", "--config", "model=m"], ["--config", "prompt=v2", "--config", "model=m"])
    md = tmp_path / "cmp.md"
    code, stdout, err = run_cli(["compare", "--last", "2", out, "--markdown", md])
    assert code == 0, err
    lines = stdout.splitlines()
    assert "warning: configuration differs: prompt: 'v1' before, 'v2' after" in lines
    assert not any("model" in line and "differs" in line for line in lines)
    row1 = next(line for line in lines if line.strip().startswith("case-1"))
    row2 = next(line for line in lines if line.strip().startswith("case-2"))
    assert " = " in row1 and "SAME" in row1
    assert "0/3 (0%)" in row2 and "3/3 (100%)" in row2 and " ↑ " in row2 and "NOISE" in row2
    overall = next(line for line in lines if line.strip().startswith("pass rate"))
    assert "3/6 (50%)" in overall and "6/6 (100%)" in overall and "+50.0 pts" in overall and "↑" in overall
    text = md.read_text(encoding="utf-8")
    assert "| **pass rate** | **3/6 (50%)** | **6/6 (100%)** | **↑** | **+50.0 pts** |" in text
    code, stdout, _ = run_cli(["compare", "--last", "2", out, "--json"])
    assert json.loads(stdout)["items"][1]["after_rate"] == 1.0


def test_compare_notes_when_no_configuration_was_recorded(byok_env, tmp_path):
    out = _two_runs(byok_env, tmp_path, [], [])
    code, stdout, err = run_cli(["compare", "--last", "2", out])
    assert code == 0, err
    assert "warning: no configuration recorded in either run (--config KEY=VALUE)" in stdout


def test_compare_last_needs_enough_runs(tmp_path):
    (tmp_path / "runs").mkdir()
    code, _, err = run_cli(["compare", "--last", "2", tmp_path / "runs"])
    assert code == 30 and err.strip() == f"error: {tmp_path / 'runs'}: --last: holds no saved runs (history/<time>/*.json)"
    code, _, err = run_cli(["compare", tmp_path / "runs"])
    assert code == 30 and err.strip() == "error: command line: compare: give BEFORE AFTER, or --last N [RUNS_DIR]"


def _agentprobe_report(path: Path, run_id: str, results: list[tuple[str, bool, bool]], config: dict) -> Path:
    """An agentprobe RunReport as its storage writes it (results[] with case_id/passed/errored)."""
    rows = [{"case_id": c, "passed": p, "answer": "42", "tools_used": [], "latency_ms": 12.5,
             "failure_reasons": [] if p else ["wrong answer (exact): expected '42', got '41'"], "error": "HTTP 429" if e else None, "errored": e}
            for c, p, e in results]
    path.write_text(json.dumps({"run_id": run_id, "started_at": "2026-01-01T00:00:00+00:00", "dataset": "nova", "adapter": "http",
                                "total": len(rows), "passed": sum(p for _, p, _ in results), "pass_rate": 0.5, "results": rows,
                                "repeats": 2, "summaries": [], "agent_config": config, "errored": sum(e for *_, e in results)}), encoding="utf-8")
    return path


def test_compare_reads_agentprobe_reports(tmp_path):
    before = _agentprobe_report(tmp_path / "a.json", "r1", [("calc-1", True, False), ("calc-1", True, False), ("calc-2", True, False), ("calc-2", False, True)], {"prompt": "plain"})
    after = _agentprobe_report(tmp_path / "b.json", "r2", [("calc-1", False, False), ("calc-1", False, False), ("calc-2", True, False), ("calc-2", True, False)], {"prompt": "pirate"})
    code, stdout, err = run_cli(["compare", before, after, "--json"])
    assert code == 0, err
    data = json.loads(stdout)
    items = {i["id"]: i for i in data["items"]}
    assert items["case-calc-1"]["before_passed"] == 2 and items["case-calc-1"]["after_passed"] == 0
    assert items["case-calc-2"]["before_scored"] == 1 and items["case-calc-2"]["before_errored"] == 1  # errored left out
    assert "configuration differs: prompt: 'plain' before, 'pirate' after" in data["warnings"]


def test_compare_reads_agentv_index_jsonl(tmp_path):
    def index(folder: Path, rows: list[tuple[str, float, str]]) -> Path:
        folder.mkdir()
        lines = [json.dumps({"timestamp": "2026-01-01T00:00:00Z", "test_id": t, "suite": "demo", "score": s, "target": "default",
                             "token_usage": {"input": 10, "output": 2}, "duration_ms": 90, "execution_status": st,
                             "scores": [{"type": "contains", "score": s, "verdict": "pass" if s == 1 else "fail"}]}) for t, s, st in rows]
        (folder / "index.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        return folder / "index.jsonl"

    before = index(tmp_path / "run1", [("says-ok", 1, "ok"), ("says-banana", 0, "quality_failure")])
    after = index(tmp_path / "run2", [("says-ok", 1, "ok"), ("says-banana", 1, "ok")])
    code, stdout, err = run_cli(["compare", before, tmp_path / "run2"])  # a run folder works too
    assert code == 0, err
    row = next(line for line in stdout.splitlines() if "case-says-banana" in line)
    assert "0/1 (0%)" in row and "1/1 (100%)" in row and "↑" in row
    assert after.exists()


def test_compare_unknown_format_is_one_line(tmp_path):
    a = tmp_path / "a.json"
    a.write_text('{"hello": 1}', encoding="utf-8")
    code, _, err = run_cli(["compare", a, a])
    assert code == 30
    assert err.strip() == f"error: {a}: unknown format: expected an agentsproof JSON report, an agentprobe report (.json) or an agentv index.jsonl"
    b = tmp_path / "b.jsonl"
    b.write_text('{"test_id": "x", "score": 1}\nnot json\n', encoding="utf-8")
    code, _, err = run_cli(["compare", b, b])
    assert code == 30 and err.startswith(f"error: {b}: line 2: not JSON") and len(err.strip().splitlines()) == 1


def test_compare_last_with_several_reports_asks_which(tmp_path):
    runs = tmp_path / "runs"
    for plugin, stamp in (("alpha", "20260101T000000Z"), ("beta", "20260102T000000Z")):
        copy = runs / plugin / "history" / stamp / f"{plugin}-eval.json"
        copy.parent.mkdir(parents=True)
        copy.write_text("{}")
    code, _, err = run_cli(["compare", "--last", "2", runs])
    assert code == 30 and len(err.strip().splitlines()) == 1
    assert "--last: holds runs of 2 plugins" in err and "alpha/alpha-eval.json" in err and "beta/beta-eval.json" in err
    assert f"compare --last 2 {runs / 'alpha'}" in err
