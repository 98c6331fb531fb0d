"""eval.yaml ``judge: {gold: FILE}``: the run measures its judge on the gold set and warns below the kappa floor."""

from __future__ import annotations

import json

from conftest import Rule, make_plugin, read_json, run_cli


def _plugin(tmp_path, gold_rows, floor=None):
    judge = {"gold": "gold.jsonl", **({"kappa_floor": floor} if floor is not None else {})}
    ev = {"version": "2", "judge": judge, "defaults": {"trials": 2, "timeout": 30, "threshold": 0.5},
          "task": {"name": "t", "instruction": "Say hello.", "graders": [{"type": "assertions", "assertions": ["The reply contains 'hello'."]}]}}
    make_plugin(tmp_path, skills={"greeter": {"prompt": "GMARK: say hello.\n", "eval": ev}})
    folder = tmp_path / "demo-plugin" / "skills" / "greeter"
    (folder / "gold.jsonl").write_text("\n".join(json.dumps(r) for r in gold_rows) + "\n", encoding="utf-8")
    return folder / "eval.yaml"


def _rows(flip: int):
    """Eight assertion items the scripted judge decides by the quoted word; ``flip`` of them labelled the other way."""
    rows = []
    for i in range(8):
        has = i % 2 == 0
        rows.append({"task": "t", "answer": "hello there" if has else "good day", "assertion": "The reply contains 'hello'.",
                     "label": has if i >= flip else not has})
    return rows


def test_low_kappa_on_the_gold_set_warns_in_the_report(byok_env, tmp_path):
    byok_env.add(Rule(reply="hello", system_contains="GMARK", judge=False), Rule(reply="hi", judge=False))
    path = _plugin(tmp_path, _rows(flip=3))
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out])
    assert code == 0, err
    it = read_json(out / "demo-plugin" / "greeter-eval.json")["items"][0]
    ja = it["stats"]["judge_agreement"]
    assert ja["kappa_floor"] == 0.6 and ja["kinds"]["assertion"]["accuracy"]["value"] == 5 / 8
    assert ja["kinds"]["assertion"]["kappa"]["value"] < 0.6
    assert any("Cohen's kappa" in w and "below 0.6" in w for w in it["warnings"])
    assert "Cohen's kappa" in err
    md = (out / "demo-plugin" / "greeter-eval.md").read_text(encoding="utf-8")
    assert "judge agreement with people" in md


def test_a_judge_that_agrees_gets_no_warning(byok_env, tmp_path):
    byok_env.add(Rule(reply="hello", system_contains="GMARK", judge=False), Rule(reply="hi", judge=False))
    path = _plugin(tmp_path, _rows(flip=0), floor=0.8)
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out])
    assert code == 0, err
    it = read_json(out / "demo-plugin" / "greeter-eval.json")["items"][0]
    assert it["stats"]["judge_agreement"]["kinds"]["assertion"]["kappa"]["value"] == 1.0
    assert not any("kappa" in w for w in it["warnings"])


def test_missing_gold_file_is_one_clear_error(byok_env, tmp_path):
    path = _plugin(tmp_path, _rows(0))
    (path.parent / "gold.jsonl").unlink()
    code, _, err = run_cli(["eval", path, "--model", "m"])
    assert code == 30 and "judge.gold" in err and "not found" in err
