"""`agentsproof convert`: evals.json ⇄ EVAL.yaml round trips, eval.yaml → EVAL.yaml to the
same graders, lossy fields named, and a run exported for agentprobe (read by the installed
agentprobe-eval's own loader and compare)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import Rule, read_json, run_cli

ROOT = Path(__file__).resolve().parents[2]
AGENTPROBE_PY = Path(os.environ.get("AGENTSPROOF_AGENTPROBE_PYTHON") or ROOT / ".venv-interop" / "bin" / "python")

CASES = [
    {"id": 1, "prompt": "Summarise the notes", "expected_output": "Three bullet points", "assertions": ["Uses bullets", "Mentions the deadline"]},
    {"id": 2, "prompt": "Read the file", "files": ["notes.txt"], "assertions": ["Quotes the file"]},
    {"id": 3, "prompt": "Say hi", "expected_output": "A greeting"},
]


def _skill_folder(tmp_path: Path) -> Path:
    evals = tmp_path / "skills" / "notes" / "evals"
    evals.mkdir(parents=True)
    (evals.parent / "SKILL.md").write_text("Answer in bullets.\n")
    (evals / "notes.txt").write_text("deadline friday\n")
    (evals / "evals.json").write_text(json.dumps({"skill_name": "../SKILL.md", "evals": CASES}))
    return evals


def test_evals_json_to_eval_yaml_and_back_gives_the_same_cases(tmp_path):
    evals = _skill_folder(tmp_path)
    code, out, err = run_cli(["convert", evals / "evals.json", "--to", "EVAL.yaml"])
    assert code == 0 and err == "", err
    doc = yaml.safe_load(out)
    assert doc["name"] == "notes" and [t["id"] for t in doc["tests"]] == [1, 2, 3]
    first = doc["tests"][0]
    assert first["input"] == "Summarise the notes" and first["expected_output"] == "Three bullet points"
    assert first["rubrics"] == ["Uses bullets", "Mentions the deadline"] and first["criteria"]
    (evals / "EVAL.yaml").write_text(out)
    code, _, err = run_cli(["convert", evals / "EVAL.yaml", "--to", "evals-json", "--out", evals / "back.json"])
    assert code == 0 and "lossy" not in err, err
    back = json.loads((evals / "back.json").read_text())
    assert back == {"skill_name": "../SKILL.md", "evals": CASES}
    # written into another folder, its paths are relative to where it is written (and it loads there)
    code, _, err = run_cli(["convert", evals / "EVAL.yaml", "--to", "evals-json", "--out", tmp_path / "skills" / "back.json"])
    assert code == 0, err
    moved = json.loads((tmp_path / "skills" / "back.json").read_text())
    assert moved["skill_name"] == "notes/SKILL.md" and moved["evals"][1]["files"] == ["notes/evals/notes.txt"]


def test_converted_eval_yaml_runs_the_same_graders_as_the_evals_json(tmp_path):
    from agentsproof.formats.agentevals.items import load_suite, suite_items
    from agentsproof.formats.evals_json import items_from_tc_eval
    from agentsproof.formats.evals_json import load_tc_eval

    evals = _skill_folder(tmp_path)
    _, out, _ = run_cli(["convert", evals / "evals.json", "--to", "eval-yaml"])
    (evals / "EVAL.yaml").write_text(out)
    ours = items_from_tc_eval(load_tc_eval(evals / "evals.json"), trials=1, threshold=0.6, timeout=60)
    theirs = suite_items(load_suite(evals / "EVAL.yaml"), trials=1, threshold=0.6, timeout=60, target=None)
    for a, b in zip(ours, theirs):
        assert a.prompt == b.prompt.replace("./", "") or a.prompt.split("\n")[0] == b.prompt.split("\n")[0]
        types_a = sorted((g.type, getattr(g, "assertions", None)) for g in a.graders)
        types_b = sorted((g.type, getattr(g, "assertions", None)) for g in b.graders)
        assert types_a == types_b
        wa = {g.type: g.weight for g in a.graders}
        total_b = sum(g.weight for g in b.graders)
        assert {g.type: round(g.weight / total_b, 6) for g in b.graders} == {k: round(v / sum(wa.values()), 6) for k, v in wa.items()}


EVAL = """\
version: "2"
skill: SKILL.md
description: checks
defaults: {trials: 3}
task:
  name: write-it
  instruction: Write the summary
  graders:
    - type: deterministic
      checks: {mustContain: [Summary], mustNotContain: [TODO], regexMatch: ["\\\\d+ items"], caseSensitive: true}
    - type: llm_rubric
      rubric: Clear and short
      weight: 2
    - type: assertions
      assertions: [Has a title]
"""


def test_eval_yaml_to_eval_yaml_keeps_the_graders_and_names_lossy_fields(tmp_path):
    from agentsproof.formats.eval_yaml.models import load_eval
    from agentsproof.formats.agentevals.items import load_suite, suite_items

    folder = tmp_path / "skills" / "summ"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("Summarise.\n")
    (folder / "eval.yaml").write_text(EVAL)
    code, out, err = run_cli(["convert", folder / "eval.yaml", "--to", "EVAL.yaml", "--out", folder / "EVAL.yaml"])
    assert code == 0 and f"warning: {folder / 'eval.yaml'}: lossy: defaults: EVAL.yaml has no such field" in err, err
    orig = load_eval(folder / "eval.yaml").config.task.graders
    item = suite_items(load_suite(folder / "EVAL.yaml"), trials=1, threshold=None, timeout=60, target=None)[0]
    assert item.prompt == "Write the summary" and item.arms == ("with", "without")
    det = [g for g in item.graders if g.type == "deterministic"]
    assert [c for g in det for c in g.checks.mustContain] == orig[0].checks.mustContain
    assert [c for g in det for c in g.checks.mustNotContain] == orig[0].checks.mustNotContain
    assert [c for g in det for c in g.checks.regexMatch] == orig[0].checks.regexMatch
    assert all(g.checks.caseSensitive for g in det if g.checks.mustContain or g.checks.mustNotContain)
    rub = next(g for g in item.graders if g.type == "llm_rubric")
    assert (rub.rubric, rub.weight) == ("Clear and short", 2.0)
    assert next(g for g in item.graders if g.type == "assertions").assertions == ["Has a title"]


def test_lossy_reverse_conversion_names_each_field(tmp_path):
    p = tmp_path / "EVAL.yaml"
    (tmp_path / "SKILL.md").write_text("Greet.\n")
    p.write_text("name: x\nexecution: {target: default}\ntests:\n  - id: alpha\n    input: hi\n    criteria: Greets\n"
                 "    rubrics: [Says hi]\n    assert: [{type: contains, value: hi}]\n")
    code, out, err = run_cli(["convert", p, "--to", "evals-json"])
    assert code == 0, err
    assert json.loads(out)["evals"] == [{"id": 1, "prompt": "hi", "assertions": ["Says hi"]}]
    for field in ("tests[0].id: 'alpha' is not a whole number", "tests[0].criteria:",
                  "tests[0].assert[0]: a 'contains' assertion has no evals.json form", "execution: evals.json has no such field"):
        assert f"lossy: {field}" in err, err
    code, _, err = run_cli(["convert", p, "--to", "EVAL.yaml"])
    assert code == 30 and err.count("\n") == 1 and "is an EVAL.yaml already" in err


def _run_dataset(srv, tmp_path: Path, name: str, reply_b: str) -> Path:
    srv.add(Rule(reply="4", user_contains="CALC", judge=False))
    srv.add(Rule(reply=reply_b, user_contains="BANANA", judge=False))
    ds = tmp_path / "cases.jsonl"
    ds.write_text(json.dumps({"id": "calc", "input": "2+2? CALC", "expected_answer": "4"}) + "\n"
                  + json.dumps({"id": "fruit", "input": "BANANA?", "expected_answer": "banana", "answer_match": "contains"}) + "\n")
    out = tmp_path / name
    code, _, err = run_cli(["tc-eval", ds, "--model", "m", "--output", out, "--trials", "10", "--config", f"prompt={name}"])
    assert code == 0, err
    return out / "cases" / "cases-tc-eval.json"


def test_agentprobe_report_export_is_read_by_agentprobe_itself(byok_env, tmp_path):
    if not AGENTPROBE_PY.exists():
        if os.environ.get("CI"):
            pytest.fail("agentprobe-eval is not installed; `make interop-tools` installs it")
        pytest.skip("agentprobe-eval not installed; run `make interop-tools`")
    before = _run_dataset(byok_env, tmp_path, "before", "a banana")
    after = _run_dataset(byok_env, tmp_path, "after", "an apple")
    files = []
    for run, name in ((before, "b.json"), (after, "a.json")):
        code, _, err = run_cli(["convert", run, "--to", "agentprobe-report", "--out", tmp_path / name])
        assert code == 0, err
        files.append(tmp_path / name)
    check = ("import sys\nfrom agentprobe.storage import load_report\n"
             "r = load_report(sys.argv[1]); print(r.total, r.passed, r.repeats, [(s.case_id, s.pass_rate) for s in r.summaries], r.agent_config)")
    proc = subprocess.run([str(AGENTPROBE_PY), "-c", check, str(files[0])], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "20 20 10 [('calc', 1.0), ('fruit', 1.0)] {'prompt': 'before'}"
    theirs = subprocess.run([str(AGENTPROBE_PY.parent / "agentprobe-compare"), *map(str, files)], capture_output=True, text=True, timeout=120)
    assert theirs.returncode == 0, theirs.stderr
    verdicts = {line.split()[1].rstrip(":"): line.split()[0] for line in theirs.stdout.splitlines() if line.startswith("  ") and len(line.split()) > 1}
    assert verdicts.get("fruit") == "WORSE" and verdicts.get("calc") == "SAME", theirs.stdout
    code, stdout, err = run_cli(["compare", *files, "--json"])  # and ours reads the export as agentprobe's format
    assert code == 0, err
    ours = {i["name"]: i["verdict"] for i in json.loads(stdout)["items"]}
    assert ours == {"calc": "SAME", "fruit": "WORSE"}
    assert read_json(before)["settings"]["config"] == {"prompt": "before"}


def test_agent_graders_convert_to_typed_assertions_and_back_to_the_same_graders(tmp_path):
    """eval.yaml's files and tool_calls graders become EVAL.yaml `files` / `tool-calls`
    assertions that build the same graders (not lossy)."""
    import yaml

    from agentsproof.formats.eval_yaml.models import load_eval
    from agentsproof.formats.agentevals.items import load_suite, suite_items

    folder = tmp_path / "skills" / "summ"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("Summarise.\n")
    graders = [
        {"type": "files", "exists": ["summary.md"], "mustContain": {"summary.md": ["Total"]}, "json": ["out.json"], "weight": 2},
        {"type": "tool_calls", "must_call": ["write_file"], "max_steps": 6, "sequence": ["read_file", "write_file"]},
    ]
    (folder / "eval.yaml").write_text(yaml.safe_dump({"version": "2", "skill": "SKILL.md", "execution": {"mode": "agent", "target": "copilot"},
                                                      "task": {"name": "t", "instruction": "Summarise it", "graders": graders}}))
    code, _, err = run_cli(["convert", folder / "eval.yaml", "--to", "EVAL.yaml", "--out", folder / "EVAL.yaml"])
    assert code == 0 and "files" not in err and "tool_calls" not in err, err
    orig = load_eval(folder / "eval.yaml").config.task.graders
    item = suite_items(load_suite(folder / "EVAL.yaml"), trials=1, threshold=None, timeout=60, target=None)[0]
    built = {g.type: g for g in item.graders}
    for g in orig:
        assert built[g.type].model_dump(exclude={"weight"}) == g.model_dump(exclude={"weight"})
    assert built["files"].weight / built["tool_calls"].weight == 2.0


def _tasks_eval(version: str) -> str:
    tasks = "".join(
        f"  - name: t{i}\n    instruction: Task number {i}\n    graders:\n      - type: deterministic\n        checks: {{mustContain: [r{i}]}}\n"
        for i in range(5)
    )
    return f'version: "{version}"\nskill: SKILL.md\ntasks:\n{tasks}'


def test_version_2_eval_yaml_keeps_every_case(tmp_path):
    from agentsproof.formats.agentevals.items import load_suite, suite_items

    folder = tmp_path / "skills" / "five"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("Do it.\n")
    (folder / "eval.yaml").write_text(_tasks_eval("2"))
    code, _, err = run_cli(["convert", folder / "eval.yaml", "--to", "EVAL.yaml", "--out", folder / "EVAL.yaml"])
    assert code == 0 and "left out" not in err, err
    items = suite_items(load_suite(folder / "EVAL.yaml"), trials=1, threshold=None, timeout=60, target=None)
    assert [i.prompt for i in items] == [f"Task number {i}" for i in range(5)]
    assert [g.checks.mustContain for i in items for g in i.graders] == [[f"r{i}"] for i in range(5)]
    # version 1 means its first task: said, and the other four left out
    (folder / "eval.yaml").write_text(_tasks_eval("1"))
    code, _, err = run_cli(["convert", folder / "eval.yaml", "--to", "EVAL.yaml", "--out", folder / "v1.EVAL.yaml"])
    assert code == 0 and "version 1 eval.yaml runs its first task only" in err and "other 4 are left out" in err
    assert len(yaml.safe_load((folder / "v1.EVAL.yaml").read_text())["tests"]) == 1
