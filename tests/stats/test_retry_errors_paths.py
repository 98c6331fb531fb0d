"""--retry-errors from another folder, against another provider URL, and with eval-all's
DIR argument checked; items an aborted run never started say "not run"."""

from __future__ import annotations

import json

from conftest import Rule, ScriptedServer, make_plugin, read_json, run_cli, simple_eval

MARK = "SKILLMARK"


def _plugin(tmp_path, trials=2):
    return make_plugin(
        tmp_path,
        skills={
            "one": {"prompt": f"{MARK} one\n", "eval": simple_eval(trials=trials)},
            "two": {"prompt": f"{MARK} two\n", "eval": simple_eval(trials=trials)},
        },
    )


def test_retry_errors_from_another_folder_with_a_new_provider_url(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    byok_env.add(Rule(reply="hello", judge=False, times=6), Rule(status=500, judge=False))
    _plugin(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(["eval-all", "demo-plugin", "--model", "m", "--output", "runs", "--abort-after", "0"])
    saved = tmp_path / "runs" / "demo-plugin" / "eval-all-summary.json"
    first = read_json(saved)
    assert sum(it["with_arm"]["errored"] + it["without_arm"]["errored"] for it in first["items"]) == 2, err
    copy = tmp_path / "saved.json"
    copy.write_text(json.dumps(first))

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with ScriptedServer([Rule(reply="hello again", judge=False)]) as second:
        monkeypatch.setenv("AGENTSPROOF_PROVIDER_URL", second.base_url)
        code, _, err = run_cli(
            ["eval-all", tmp_path / "demo-plugin", "--model", "m", "--output", tmp_path / "runs", "--retry-errors", copy]
        )
        assert code == 0, err
        assert len(second.trial_requests()) == 2
    merged = read_json(saved)
    assert merged["settings"]["base_url"] == second.base_url
    assert all(it["with_arm"]["errored"] == 0 and it["without_arm"]["errored"] == 0 for it in merged["items"])


def test_retry_errors_refuses_a_dir_the_run_was_not_made_from(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    byok_env.add(Rule(status=500, judge=False, times=1))
    plugin = _plugin(tmp_path / "a")
    other = _plugin(tmp_path / "b")
    out = tmp_path / "runs"
    run_cli(["eval-all", plugin, "--model", "m", "--output", out])
    saved = out / "demo-plugin" / "eval-all-summary.json"
    code, _, err = run_cli(["eval-all", other, "--model", "m", "--output", out, "--retry-errors", saved])
    assert code == 30
    assert "items.eval_path" in err and str(other) in err
    assert len(err.strip().splitlines()) == 1


def test_items_an_aborted_run_never_started_say_not_run(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    byok_env.add(Rule(status=500, judge=False))
    plugin = _plugin(tmp_path, trials=3)
    out = tmp_path / "runs"
    code, stdout, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out, "--abort-after", "2", "--parallel", "1"])
    assert code == 30
    data = read_json(out / "demo-plugin" / "eval-all-summary.json")
    items = {it["name"]: it for it in data["items"]}
    assert items["two"]["status"] == "incomplete" and items["two"]["status_reason"].startswith("not run")
    assert data["overall"]["not_run"] == 1
    assert "NOT RUN" in stdout
    md = (out / "demo-plugin" / "eval-all-summary.md").read_text()
    assert "not run" in md and "no scored trial in the with-skill arm" not in md.split("two")[-1]
