"""Reports never overwrite each other: a plugin, its skill and its agent may share a name;
every evals.json gets a report named after its skill; every run keeps its JSON in history/."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import make_plugin, read_json, run_cli, simple_eval


def test_plugin_skill_and_agent_of_one_name_write_different_files(byok_env, tmp_path):
    plugin = make_plugin(
        tmp_path,
        plugin="doublecheck",
        skills={"doublecheck": {"eval": simple_eval()}},
        agents={"doublecheck": {"eval": simple_eval()}},
    )
    out = tmp_path / "runs"
    assert run_cli(["eval", plugin / "skills" / "doublecheck" / "eval.yaml", "--model", "m", "--output", out])[0] == 0
    assert run_cli(["eval", plugin / "agents" / "doublecheck" / "eval.yaml", "--model", "m", "--output", out])[0] == 0
    assert run_cli(["eval-all", plugin, "--model", "m", "--output", out])[0] == 0
    base = out / "doublecheck"
    skill = read_json(base / "doublecheck-skill-eval.json")
    agent = read_json(base / "doublecheck-agent-eval.json")
    whole = read_json(base / "eval-all-summary.json")
    assert [i["id"] for i in skill["items"]] == ["skills/doublecheck"]
    assert [i["id"] for i in agent["items"]] == ["agents/doublecheck"]
    assert len(whole["items"]) == 2
    html = sorted(p.name for p in base.glob("*.html"))
    assert html == ["doublecheck-agent-eval.html", "doublecheck-eval.html", "doublecheck-skill-eval.html"]
    assert "eval-all" in (base / "doublecheck-eval.html").read_text()
    # every run also kept its JSON in history/
    kept = sorted(p.name for p in (base / "history").rglob("*.json"))
    assert kept == ["doublecheck-agent-eval.json", "doublecheck-skill-eval.json", "eval-all-summary.json"]


def test_each_skills_evals_json_gets_its_own_report(byok_env, tmp_path):
    out = tmp_path / "runs"
    for name in ("alpha", "beta"):
        skill = tmp_path / "skills" / name
        (skill / "evals").mkdir(parents=True)
        (skill / "SKILL.md").write_text(f"You are {name}.\n")
        (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "../SKILL.md", "evals": [{"id": 1, "prompt": "p", "assertions": ["Answers the prompt"]}]}))
        code, _, err = run_cli(["tc-eval", skill / "evals" / "evals.json", "--model", "m", "--output", out])
        assert code == 0, err
    for name in ("alpha", "beta"):
        data = read_json(out / name / f"{name}-tc-eval.json")
        assert data["plugin"] == name
        assert name in (out / name / f"{name}-tc-eval.html").read_text()
    assert not (out / "evals").exists()


def test_history_keeps_every_run(byok_env, tmp_path):
    plugin = make_plugin(tmp_path, skills={"s": {"eval": simple_eval()}})
    out = tmp_path / "runs"
    for _ in range(3):
        assert run_cli(["eval-all", plugin, "--model", "m", "--output", out])[0] == 0
    runs = sorted((out / "demo-plugin" / "history").iterdir())
    assert len(runs) == 3, runs
    assert all((r / "eval-all-summary.json").is_file() for r in runs)
    # history entries are full reports that compare reads
    code, stdout, err = run_cli(["compare", runs[0] / "eval-all-summary.json", runs[-1] / "eval-all-summary.json"])
    assert code == 0, err
    assert Path(out / "demo-plugin" / "eval-all-summary.json").is_file()
