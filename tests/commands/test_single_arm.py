"""--baseline none (single-arm regression runs) and --config, end to end on the scripted server."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Rule, make_plugin, read_json, run_cli, simple_eval, write_tc_eval

MARK = "ONEARM"
SKILL = f"{MARK}: answer with pytest code.\n"


def _system(req: dict) -> str:
    return "".join(m.get("content") or "" for m in req["messages"] if m.get("role") == "system")


def _cases(tmp_path: Path) -> Path:
    return write_tc_eval(
        tmp_path / "reg",
        [
            {"id": 1, "prompt": "STABLE task", "assertions": ["Uses 'pytest'"]},
            {"id": 2, "prompt": "FLAKY task", "assertions": ["Uses 'pytest'"]},
            {"id": 3, "prompt": "BROKEN task", "assertions": ["Uses 'pytest'"]},
        ],
        skill_text=SKILL,
    )


def test_single_arm_run_reports_pass_rates_flaky_cases_and_errors(byok_env, tmp_path):
    srv = byok_env
    srv.add(Rule(reply="import pytest", judge=False))
    srv.add(Rule(reply="no tests here", user_contains="FLAKY", judge=False, times=2))  # 2 of 4 fail
    srv.add(Rule(status=400, message="scripted refusal", user_contains="BROKEN", judge=False))
    out = tmp_path / "out"
    code, stdout, err = run_cli(["tc-eval", _cases(tmp_path), "--model", "m", "--output", out, "--trials", "4",
                                 "--baseline", "none", "--config", "prompt=v2", "--ci"])
    assert code == 30, err  # case 3 has no scored trial: errored, never failed
    assert len(srv.trial_requests()) == 12 and all(MARK in _system(r) for r in srv.trial_requests())  # no baseline arm
    data = read_json(out / "reg" / "reg-tc-eval.json")
    assert data["settings"]["baseline"] == "none" and data["settings"]["config"] == {"prompt": "v2"}
    items = {i["id"]: i for i in data["items"]}
    stable, flaky, broken = items["case-1"], items["case-2"], items["case-3"]
    for it in (stable, flaky):
        assert it["grade"] is None and it["delta"] is None and it["without_arm"]["trials"] == []
        assert it["stats"]["single_arm"] is True
    assert stable["pass_rate"] == 1.0 and stable["passed"] and not stable["stats"]["flaky"]
    assert stable["stats"]["with"]["pass_rate_ci"][0] == pytest.approx(0.025 ** (1 / 4), abs=1e-4)  # exact: 4 of 4 passed
    assert flaky["pass_rate"] == 0.5 and not flaky["passed"] and flaky["stats"]["flaky"]
    assert broken["status"] == "errored" and "scripted refusal" in broken["status_reason"]
    assert data["cases"] == {**data["cases"], "passed": 1, "failed": 1, "errored": 1}
    md = (out / "reg" / "reg-tc-eval.md").read_text(encoding="utf-8")
    assert "**Single-arm run** (`--baseline none`)" in md and "Flaky (some trials passed, some failed): case 2." in md
    html = (out / "reg" / "reg-tc-eval.html").read_text(encoding="utf-8")
    assert "Single-arm run" in html
    assert "flaky: 2 of 4 trials passed" in stdout and "config: prompt=v2" in stdout


def test_single_arm_ci_fails_on_a_pass_rate_below_threshold(byok_env, tmp_path):
    byok_env.add(Rule(reply="import pytest", judge=False))
    byok_env.add(Rule(reply="nothing", user_contains="FLAKY", judge=False, times=1))
    path = write_tc_eval(tmp_path / "reg", [{"id": 1, "prompt": "STABLE", "assertions": ["Uses 'pytest'"]},
                                            {"id": 2, "prompt": "FLAKY", "assertions": ["Uses 'pytest'"]}], skill_text=SKILL)
    args = ["tc-eval", path, "--model", "m", "--output", tmp_path / "out", "--trials", "2", "--baseline", "none"]
    code, stdout, err = run_cli(args + ["--ci"])
    assert code == 1, err  # case 2 passed 1 of 2 < 0.6
    assert "config:" not in stdout, "a run without --config prints no config line"
    code, _, err = run_cli(args + ["--threshold", "0.5", "--ci"])
    assert code == 0, err


def test_single_arm_eval_runs_the_skill_only(byok_env, tmp_path):
    byok_env.add(Rule(reply="hello", system_contains="SKILLMARK", judge=False))
    plugin = make_plugin(tmp_path, skills={"greeter": {"prompt": "SKILLMARK greet.\n", "eval": simple_eval(trials=3)}})
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", tmp_path / "out", "--baseline", "none", "--ci"])
    assert code == 0, err
    assert len(byok_env.trial_requests()) == 3
    item = read_json(tmp_path / "out" / "demo-plugin" / "eval-all-summary.json")["items"][0]
    assert item["grade"] is None and item["pass_rate"] == 1.0 and item["passed"]


def test_single_arm_refuses_adaptive(byok_env, tmp_path):
    code, _, err = run_cli(["tc-eval", _cases(tmp_path), "--model", "m", "--baseline", "none", "--adaptive"])
    assert code == 30 and len(err.strip().splitlines()) == 1
    assert err.startswith("error: command line: --adaptive:") and byok_env.trial_requests() == []
