"""Which paths each command accepts, and the one-line hints when the wrong one is given."""

from __future__ import annotations

from pathlib import Path

from conftest import Rule, make_plugin, read_json, run_cli, simple_eval


def _plugin(tmp_path: Path) -> Path:
    return make_plugin(tmp_path, skills={"greeter": {"prompt": "MARK: say hello\n", "eval": simple_eval()}})


def test_eval_accepts_the_folder_holding_eval_yaml(tmp_path, byok_env):
    byok_env.add(Rule(reply="hello there", system_contains="MARK", judge=False), Rule(reply="hi", judge=False))
    plugin = _plugin(tmp_path)
    code, out, err = run_cli(["eval", plugin / "skills" / "greeter", "--model", "m", "--output", tmp_path / "runs"])
    assert code == 0, err
    item = read_json(tmp_path / "runs" / "demo-plugin" / "greeter-eval.json")["items"][0]
    assert (item["grade"], item["delta"]) == ("A", 1.0)


def test_eval_on_a_plugin_folder_points_to_eval_all(tmp_path, byok_env):
    plugin = _plugin(tmp_path)
    code, out, err = run_cli(["eval", plugin, "--model", "m"])
    assert code == 30
    assert err.strip().count("\n") == 0
    assert "no eval.yaml in it" in err and "eval-all" in err
    assert byok_env.requests == []


def test_eval_all_on_a_file_points_to_eval(tmp_path, byok_env):
    plugin = _plugin(tmp_path)
    code, out, err = run_cli(["eval-all", plugin / "skills" / "greeter" / "eval.yaml", "--model", "m"])
    assert code == 30
    assert "is a file, not a directory" in err and "agentsproof eval" in err


def test_errored_item_prints_dash_not_a_percentage(tmp_path, byok_env):
    byok_env.add(Rule(status=500, judge=False))
    plugin = _plugin(tmp_path)
    code, out, err = run_cli(["eval", plugin / "skills" / "greeter" / "eval.yaml", "--model", "m", "--output", tmp_path / "r"])
    assert code == 30
    line = next(l for l in out.splitlines() if l.strip().startswith("greeter"))
    assert "ERROR" in line and "%" not in line


def test_eval_all_reports_each_finished_item_on_stderr(tmp_path, byok_env):
    byok_env.add(Rule(reply="hello there", system_contains="MARK", judge=False), Rule(reply="hi", judge=False))
    plugin = make_plugin(
        tmp_path,
        skills={"greeter": {"prompt": "MARK: say hello\n", "eval": simple_eval(trials=2)}},
        agents={"helper": {"prompt": "MARK: helper\n", "eval": simple_eval(trials=2)}},
    )
    code, out, err = run_cli(["eval-all", plugin, "--model", "m", "--output", tmp_path / "runs"])
    assert code == 0, err
    done = sorted(line.strip() for line in err.splitlines() if line.strip().startswith("done:"))
    assert done == [
        "done: agents/helper  with 1.00 (2 scored)  without 0.00 (2 scored)",
        "done: skills/greeter  with 1.00 (2 scored)  without 0.00 (2 scored)",
    ]


def test_schema_command_prints_each_json_schema():
    import json

    for which, must_have in (("eval-yaml", "defaults"), ("evals-json", "skill_name"), ("report", "schema_version")):
        code, out, err = run_cli(["schema", which])
        assert code == 0, err
        assert must_have in json.loads(out)["properties"]
    code, out, err = run_cli(["schema", "bogus"])
    assert code == 30 and "bogus" in err
