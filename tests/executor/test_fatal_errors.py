"""Errors that name their cause and stop the run at once (issue 46.5): a refused key
(HTTP 401/403) is not retried and stops the run at the first trial that meets it; an
endpoint that cannot be reached at the first call stops the run naming the URL in use and
the variable that set it; such a run writes its report into its own run folder, beside the
last good report, never over it. Calls are counted at the scripted server."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from conftest import Rule, make_plugin, read_json, run_cli, simple_eval

CHECKS = [{"type": "deterministic", "checks": ["hello"]}]


def _plugin(tmp_path: Path) -> Path:
    return make_plugin(tmp_path, skills={"s": {"eval": simple_eval(CHECKS, trials=5)}})


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again on leaving: nothing listens there


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_stops_the_run_at_the_first_call_and_keeps_the_last_good_report(status, byok_env, tmp_path):
    plugin = _plugin(tmp_path)
    out = tmp_path / "runs"
    eval_file = plugin / "skills" / "s" / "eval.yaml"
    byok_env.add(Rule(reply="hello"))
    code, _, err = run_cli(["eval", eval_file, "--model", "m", "--output", out])
    assert code == 0, err
    good = (out / "demo-plugin" / "s-eval.json").read_bytes()

    byok_env.rules.clear()
    byok_env.add(Rule(status=status, message="invalid key"))
    before = len(byok_env.requests)
    code, stdout, err = run_cli(["eval", eval_file, "--model", "m", "--output", out, "--parallel", "1"])
    assert code == 30
    assert len(byok_env.requests) - before == 1, "one call: not retried, and no other trial ran"
    assert f"HTTP {status}" in err and "stopped at the first failing call" in err
    # the last good report is untouched; this run's report is in its own folder, and says why it stopped
    assert (out / "demo-plugin" / "s-eval.json").read_bytes() == good
    latest = out / "demo-plugin" / "latest"
    assert latest.is_symlink()
    failed = read_json(latest / "s-eval.json")
    assert failed["incomplete"] is True and f"HTTP {status}" in failed["incomplete_reason"]
    assert f"{latest.resolve().name}/s-eval.json" in stdout, "the report printed is the run folder's"
    assert "the last good reports in" in stdout and "were left as they were" in stdout
    assert err.index("stopping the run") < err.index("incomplete:"), "the cause is said at once, before the report is written"
    errored = [t for it in failed["items"] for arm in ("with_arm", "without_arm") for t in it[arm]["trials"]]
    assert len(errored) == 1 and errored[0]["status"] == "errored"


def test_an_unreachable_endpoint_names_the_url_and_its_variable_and_stops(monkeypatch, tmp_path):
    port = _closed_port()
    url = f"http://127.0.0.1:{port}/v1"
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_TYPE", "openai")
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_URL", url)
    monkeypatch.setenv("AGENTSPROOF_PROVIDER_KEY", "k")
    plugin = _plugin(tmp_path)
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval", plugin / "skills" / "s" / "eval.yaml", "--model", "m", "--output", out, "--parallel", "1"])
    assert code == 30
    assert f"cannot reach {url} (set by AGENTSPROOF_PROVIDER_URL)" in err
    assert not (out / "demo-plugin" / "s-eval.json").exists(), "no report in the place of a good one"
    report = read_json(out / "demo-plugin" / "latest" / "s-eval.json")
    trials = [t for it in report["items"] for arm in ("with_arm", "without_arm") for t in it[arm]["trials"]]
    assert len(trials) == 1 and "cannot reach" in trials[0]["error"], "stopped at the first trial"


def test_a_server_error_is_not_fatal(byok_env, tmp_path):
    """A 500 fails one call and is retried; the run goes on (only 401/403 and an unreachable start stop it)."""
    plugin = _plugin(tmp_path)
    byok_env.add(Rule(status=500, times=1), Rule(reply="hello"))
    code, _, err = run_cli(["eval", plugin / "skills" / "s" / "eval.yaml", "--model", "m", "--output", tmp_path / "runs", "--parallel", "1"])
    assert code == 0, err
    report = json.loads((tmp_path / "runs" / "demo-plugin" / "s-eval.json").read_text())
    assert report["incomplete"] is False


def test_no_provider_configured_says_what_auto_looked_for(monkeypatch, tmp_path):
    for var in ("AGENTSPROOF_PROVIDER_TYPE", "AGENTSPROOF_PROVIDER_URL", "AGENTSPROOF_PROVIDER_KEY", "ANTHROPIC_API_KEY", "AGENTSPROOF_MODEL"):
        monkeypatch.delenv(var, raising=False)
    plugin = _plugin(tmp_path)
    code, _, err = run_cli(["eval", plugin / "skills" / "s" / "eval.yaml", "--model", "gpt-4o", "--output", tmp_path / "runs"])
    assert code == 30
    line = err.strip().splitlines()[-1]
    assert "auto looked for openai (AGENTSPROOF_PROVIDER_URL or AGENTSPROOF_PROVIDER_KEY: not set)" in line
    assert "copilot (" in line and "local (" in line and "anthropic (ANTHROPIC_API_KEY: not set)" in line


def test_an_eval_kept_apart_from_its_skill_is_told_the_layouts_that_work(byok_env, tmp_path):
    plugin = make_plugin(tmp_path, skills={"s": {"eval": simple_eval(CHECKS)}})
    apart = tmp_path / "evals" / "s"
    apart.mkdir(parents=True)
    ev = simple_eval(CHECKS)
    ev["skill"] = "../../demo-plugin/skills/s/SKILL.md"
    import yaml

    (apart / "eval.yaml").write_text(yaml.safe_dump(ev))
    code, _, err = run_cli(["eval", apart / "eval.yaml", "--model", "m", "--output", tmp_path / "runs"])
    assert code == 30 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "is outside the eval's folder" in err and "layouts that work: " in err
    assert "skills/<name>/eval.yaml with 'skill: SKILL.md'" in err and "evals/<plugin>/skills/<name>/" in err and len(err) < 600
    assert plugin.is_dir() and byok_env.requests == []


def test_an_eval_copied_away_from_its_skill_is_told_the_layouts_that_work(byok_env, tmp_path):
    """The README's eval.yaml ('skill: SKILL.md') copied into a folder without the skill: the
    refusal names the file it looked for and the layouts that work, on one line."""
    apart = tmp_path / "apart"
    apart.mkdir()
    import yaml

    (apart / "eval.yaml").write_text(yaml.safe_dump(simple_eval(CHECKS) | {"skill": "SKILL.md"}))
    code, _, err = run_cli(["eval", apart / "eval.yaml", "--model", "m", "--output", tmp_path / "runs"])
    assert code == 30 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "file 'SKILL.md' not found (looked in" in err and "layouts that work: " in err and "evals/<plugin>/skills/<name>/" in err
    assert byok_env.requests == []


def test_retry_errors_finishes_a_run_stopped_at_a_refused_key(byok_env, tmp_path):
    plugin = _plugin(tmp_path)
    out = tmp_path / "runs"
    eval_file = plugin / "skills" / "s" / "eval.yaml"
    byok_env.add(Rule(status=401, message="bad key"))
    assert run_cli(["eval", eval_file, "--model", "m", "--output", out, "--parallel", "1"])[0] == 30
    byok_env.rules.clear()
    byok_env.add(Rule(reply="hello"))
    code, _, err = run_cli(["eval", eval_file, "--model", "m", "--output", out, "--retry-errors", out / "demo-plugin" / "latest" / "s-eval.json"])
    assert code == 0, err
    report = read_json(out / "demo-plugin" / "s-eval.json")  # now where the README says
    item = report["items"][0]
    assert report["incomplete"] is False and item["with_arm"]["scored"] == item["without_arm"]["scored"] == 5
