"""``agentsproof verify`` validates each distinct grader result and token count once, however
many trials record it (``commands.verify._Shared``): trials that record the same values share
one object, and still an edit of one trial's grader is that trial's alone, and a grader that
does not validate is named where it is."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Rule, make_plugin, read_json, run_cli, simple_eval

from agentsproof.commands.verify import _light
from agentsproof.model.results import RunResult


def _report(tmp_path: Path, srv) -> Path:
    srv.add(Rule(reply="HELLO", judge=False))
    evals = {"greeter": {"prompt": "SKILLMARK: say hello.\n", "eval": simple_eval([{"type": "deterministic", "checks": ["HELLO"]}], trials=4)}}
    plugin = make_plugin(tmp_path, skills=evals)
    out = tmp_path / "out"
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out])
    assert code in (0, 1), err
    return out / "demo-plugin" / "eval-all-summary.json"


def _write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_trials_with_equal_graders_share_one_object_and_the_same_numbers(byok_env, tmp_path):
    data = read_json(_report(tmp_path, byok_env))
    trials = data["items"][0]["with_arm"]["trials"]
    assert len(trials) == 4 and all(t["graders"] == trials[0]["graders"] for t in trials)
    light = RunResult.model_validate(_light(data))
    full = RunResult.model_validate(data)
    got = light.items[0].with_arm.trials
    assert all(t.graders[0] is got[0].graders[0] for t in got) and got[1].usage is got[0].usage
    for a, b in zip(got, full.items[0].with_arm.trials, strict=True):
        assert a.graders == b.graders and a.usage == b.usage and a.score == b.score


def test_an_edit_of_one_trials_grader_is_that_trials_alone(byok_env, tmp_path):
    data = read_json(_report(tmp_path, byok_env))
    data["items"][0]["with_arm"]["trials"][2]["graders"][0]["score"] = 0.0  # its twins keep 1.0
    code, out, _ = run_cli(["verify", _write(tmp_path, data)])
    assert code == 1 and "NOT verified" in out
    assert "items[0].with_arm.trials[2].score" in out, out
    for n in (0, 1, 3):
        assert f"items[0].with_arm.trials[{n}].score" not in out, out


def test_a_grader_that_does_not_validate_is_named_where_it_is(byok_env, tmp_path):
    data = read_json(_report(tmp_path, byok_env))
    data["items"][0]["with_arm"]["trials"][3]["graders"][0]["weight"] = "heavy"  # trials 0-2 hold the same grader, valid
    code, _, err = run_cli(["verify", _write(tmp_path, data)])
    assert code == 30, err
    assert "items[0].with_arm.trials[3].graders[0].weight" in err and "Traceback" not in err, err


def test_the_collector_is_paused_while_a_report_is_checked_and_then_as_it_was(byok_env, tmp_path, monkeypatch):
    import gc

    from agentsproof.commands import verify as verify_module

    report = _report(tmp_path, byok_env)
    seen: list[bool] = []
    real = verify_module._verify_run

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(verify_module, "_verify_run", spy)
    assert gc.isenabled()
    try:
        assert verify_module.verify(report).ok
        assert seen == [False] and gc.isenabled()
        gc.disable()
        assert verify_module.verify(report).ok
        assert not gc.isenabled()
        gc.enable()
        verify_module.verify(report, regrade=True)
        assert seen == [False, False, True] and gc.isenabled()
    finally:
        gc.enable()
