"""Presets are trials per arm per ITEM (the spec's 5/15/30), spread round robin over its
cases with at least one each; --trials-per-case N is the per-case form; --plan says when
the cases force more."""

from __future__ import annotations

import pytest
from conftest import Rule, make_plugin, read_json, run_cli


def _multi(tmp_path, cases: int, trials: int = 1):
    ev = {
        "version": "2",
        "defaults": {"trials": trials, "timeout": 30, "threshold": 0.6},
        "tasks": [
            {"name": f"t{i}", "instruction": f"Say hello to user {i}.", "graders": [{"type": "deterministic", "checks": ["hello"]}]}
            for i in range(cases)
        ],
    }
    make_plugin(tmp_path, skills={"greeter": {"prompt": "GREETMARK: always say hello.\n", "eval": ev}})
    return tmp_path / "demo-plugin" / "skills" / "greeter" / "eval.yaml"


@pytest.mark.parametrize(
    "cases, flags, per_arm",
    [(5, ["--smoke"], 5), (3, ["--smoke"], 5), (7, ["--smoke"], 7), (5, ["--reliable"], 15), (3, ["--trials-per-case", "2"], 6),
     (3, ["--trials", "2"], 6), (3, [], 3)],
)
def test_presets_are_per_item(byok_env, tmp_path, cases, flags, per_arm):
    byok_env.add(Rule(reply="hello there", system_contains="GREETMARK", judge=False), Rule(reply="hi", judge=False))
    path = _multi(tmp_path, cases)
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out, "--parallel", "8", *flags])
    assert code == 0, err
    it = read_json(out / "demo-plugin" / "greeter-eval.json")["items"][0]
    assert it["trials_requested"] == per_arm and it["with_arm"]["scored"] == per_arm
    assert len(byok_env.trial_requests()) == 2 * per_arm
    rows = it["stats"]["cases"]["rows"]
    assert len(rows) == cases and all(r["n_with"] >= 1 for r in rows)
    assert max(r["n_with"] for r in rows) - min(r["n_with"] for r in rows) <= 1  # round robin


def test_plan_says_when_cases_force_more_trials(byok_env, tmp_path):
    path = _multi(tmp_path, 7)
    code, out, err = run_cli(["eval", path, "--model", "m", "--smoke", "--plan"])
    assert code == 0, err
    assert "7 trials per arm" in out and "5 per arm per item, spread round robin over its cases" in out
    assert "1 item has more cases than 5 trials, so it runs one trial per case: greeter (7 cases)" in out
    assert not byok_env.trial_requests()


def test_preset_and_trials_per_case_conflict(byok_env, tmp_path):
    path = _multi(tmp_path, 3)
    code, _, err = run_cli(["eval", path, "--model", "m", "--smoke", "--trials-per-case", "2"])
    assert code == 30 and "--trials-per-case" in err and "--smoke" in err
