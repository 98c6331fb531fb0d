"""eval.yaml ``judge_models``: a judge panel asks every model, combines the verdicts and reports its disagreement rate."""

from __future__ import annotations

import json

import pytest
from conftest import Rule, make_plugin, read_json, run_cli

from agentsproof.grading.judge import combine_verdicts


def _eval(combine=None):
    ev = {"version": "2", "judge_models": ["j1", "j2", "j3"], "defaults": {"trials": 4, "timeout": 30, "threshold": 0.5},
          "task": {"name": "t", "instruction": "Say hello.", "graders": [{"type": "assertions", "assertions": ["The reply contains 'hello'."]}]}}
    if combine:
        ev["judge"] = {"combine": combine}
    return ev


def test_panel_majority_and_disagreement_rate(byok_env, tmp_path):
    byok_env.add(
        Rule(reply=json.dumps({"evidence": "no", "passed": False}), model="j3", judge=True),  # a dissenting judge
        Rule(reply="hello", system_contains="PMARK", judge=False), Rule(reply="hi", judge=False),
    )
    make_plugin(tmp_path, skills={"greeter": {"prompt": "PMARK: say hello.\n", "eval": _eval()}})
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval", tmp_path / "demo-plugin" / "skills" / "greeter" / "eval.yaml", "--model", "m", "--output", out])
    assert code == 0, err
    it = read_json(out / "demo-plugin" / "greeter-eval.json")["items"][0]
    assert it["with_arm"]["mean_score"] == 1.0 and it["without_arm"]["mean_score"] == 0.0  # two of three say pass
    panel = it["stats"]["judge_panel"]
    assert panel["models"] == ["j1", "j2", "j3"] and panel["verdicts"] == 8
    assert panel["disagreements"] == 4 and panel["disagreement_rate"] == 0.5  # j3 dissents on every with-arm answer
    assert {r["model"] for r in byok_env.judge_requests()} == {"j1", "j2", "j3"}
    md = (out / "demo-plugin" / "greeter-eval.md").read_text(encoding="utf-8")
    assert "judge panel: j1, j2, j3 (mean); disagreed on 4 of 8 verdicts (50%)" in md


@pytest.mark.parametrize(
    "values, combine, expected, disagreed",
    [([(0.2, ""), (0.4, ""), (1.0, "")], "mean", 0.5333333, True), ([(0.2, ""), (0.4, ""), (1.0, "")], "majority", 0.4, True),
     ([(True, ""), (False, ""), (True, "")], "mean", True, True), ([(True, ""), (False, "")], "mean", False, True),
     ([("A", ""), ("A", ""), ("B", "")], "mean", "A", True), ([("A", ""), ("B", "")], "mean", "tie", True),
     ([(0.5, ""), (0.6, "")], "mean", 0.55, False)],
)
def test_combine_verdicts(values, combine, expected, disagreed):
    (value, _), d = combine_verdicts(values, combine)
    assert value == pytest.approx(expected) and d is disagreed


def test_a_panel_of_one_is_refused(byok_env, tmp_path):
    ev = _eval()
    ev["judge_models"] = ["j1"]
    make_plugin(tmp_path, skills={"greeter": {"prompt": "x\n", "eval": ev}})
    code, _, err = run_cli(["eval", tmp_path / "demo-plugin" / "skills" / "greeter" / "eval.yaml", "--model", "m"])
    assert code == 30 and "judge_models" in err


def test_regrade_asks_the_scoring_panel_again(byok_env, tmp_path):
    """``regrade`` of an eval with ``judge_models`` asks every panel model, not the single judge."""
    byok_env.add(
        Rule(reply=json.dumps({"evidence": "no", "passed": False}), model="j3", judge=True),
        Rule(reply="hello", system_contains="PMARK", judge=False), Rule(reply="hi", judge=False),
    )
    make_plugin(tmp_path, skills={"greeter": {"prompt": "PMARK: say hello.\n", "eval": _eval()}})
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval", tmp_path / "demo-plugin" / "skills" / "greeter" / "eval.yaml", "--model", "m", "--output", out])
    assert code == 0, err
    before = len(byok_env.judge_requests())
    code, _, err = run_cli(["regrade", out / "demo-plugin" / "greeter-eval.json", "--model", "m"])
    assert code == 0, err
    again = byok_env.judge_requests()[before:]
    assert len(again) == 24 and {r["model"] for r in again} == {"j1", "j2", "j3"}  # 8 trials x 3 models
    it = read_json(out / "demo-plugin" / "greeter-eval-regraded.json")["items"][0]
    assert it["with_arm"]["mean_score"] == 1.0
    assert it["stats"]["judge_panel"]["verdicts"] == 8 and it["stats"]["judge_panel"]["disagreements"] == 4
