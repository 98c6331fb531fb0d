"""--plan (no call), --max-calls and --max-cost (a clean stop before the limit), tokens and cost in reports."""

from __future__ import annotations

import json

from conftest import Rule, make_plugin, read_json, run_cli

MARK = "BUDGETSKILL"


def _plugin(tmp_path, trials=2, tasks=2, graders=None):
    graders = graders or [{"type": "deterministic", "checks": ["hello"]}]
    ev = {"version": "2", "defaults": {"trials": trials}, "tasks": [{"name": f"t{k}", "instruction": f"TASK-{k} greet me", "graders": graders} for k in range(tasks)]}
    make_plugin(tmp_path, skills={"greeter": {"prompt": f"{MARK}: greet with hello.\n", "eval": ev}})
    return tmp_path / "demo-plugin" / "skills" / "greeter" / "eval.yaml"


def test_plan_counts_calls_tokens_and_cost_and_calls_nothing(byok_env, tmp_path):
    graders = [
        {"type": "deterministic", "checks": ["hello"]},
        {"type": "llm_rubric", "rubric": "friendly"},
        {"type": "assertions", "assertions": ["greets", "is short"]},
        {"type": "pairwise"},
    ]
    path = _plugin(tmp_path, trials=2, tasks=2, graders=graders)
    code, out, err = run_cli(["eval", path, "--model", "gpt-4o", "--plan", "--output", tmp_path / "out"])
    assert code == 0, err
    assert byok_env.requests == []  # no call at all
    assert not (tmp_path / "out").exists()  # and no report
    lines = {ln.split()[0]: ln for ln in out.splitlines() if ln.startswith("  ")}
    # 2 cases x 2 trials per case = 4 trials per arm: 8 trial calls; 3 judge calls per trial: 24; 4 pairs x 2 orders: 8
    assert lines["trials"].split()[2] == "8" and lines["judges"].split()[2] == "24"
    assert "pairwise judge" in out and " 8 " in [ln for ln in out.splitlines() if "pairwise judge" in ln][0]
    assert "total: 40 LLM calls" in out and "about $" in out and "retry budget" in out
    assert "provider openai" in out


def test_plan_with_an_unpriced_model_says_so(byok_env, tmp_path):
    code, out, err = run_cli(["eval", _plugin(tmp_path), "--model", "my-proxy-model", "--plan"])
    assert code == 0, err
    assert "no price" in out and "cost unknown" in out and byok_env.requests == []


def test_max_calls_stops_cleanly_before_the_limit(byok_env, tmp_path):
    srv = byok_env
    srv.add(Rule(reply="hello", judge=False))
    out = tmp_path / "out"
    code, stdout, err = run_cli(["eval", _plugin(tmp_path, trials=5, tasks=2), "--model", "m", "--output", out, "--max-calls", "7"])
    assert code == 30, stdout + err
    assert len(srv.requests) == 7  # never the 8th
    data = read_json(out / "demo-plugin" / "greeter-eval.json")
    assert data["incomplete"] is True and "--max-calls 7" in data["incomplete_reason"]
    assert data["settings"]["budget"]["calls"] == 7 and data["settings"]["max_calls"] == 7
    trials = data["items"][0]["with_arm"]["trials"] + data["items"][0]["without_arm"]["trials"]
    assert len(trials) == 7 and all(t["status"] == "scored" for t in trials)  # the stopped call is "not run", never errored
    assert "--max-calls" in err


def test_max_cost_stops_before_crossing_it(byok_env, tmp_path, monkeypatch):
    srv = byok_env
    srv.add(Rule(reply="hello", judge=False, usage=(1000, 1000)))
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"m": {"input": 1, "output": 1}}))  # $1 per million tokens
    monkeypatch.setenv("AGENTSPROOF_PRICES", str(prices))
    out = tmp_path / "out"
    # a call costs $0.002 (2,000 tokens); its worst case before the call is ~1,040 tokens: the limit lets 5 through
    code, stdout, err = run_cli(["eval", _plugin(tmp_path, trials=10, tasks=1), "--model", "m", "--output", out, "--max-cost", "0.0105"])
    assert code == 30, stdout + err
    data = read_json(out / "demo-plugin" / "greeter-eval.json")
    spent = data["settings"]["budget"]["spent_usd"]
    assert spent <= 0.0105 and len(srv.requests) == 5 and spent == 0.01
    assert "--max-cost" in data["incomplete_reason"]
    html = (out / "demo-plugin" / "greeter-eval.html").read_text()
    assert "Tokens and cost" in html and "$0.0100" in html and "max-cost 0.0105" in html


def test_max_cost_needs_a_price_and_is_checked_before_any_call(byok_env, tmp_path):
    code, _, err = run_cli(["eval", _plugin(tmp_path), "--model", "my-proxy-model", "--max-cost", "1"])
    assert code == 30 and len(err.strip().splitlines()) == 1 and "no price for model 'my-proxy-model'" in err
    assert byok_env.requests == []


def test_reports_show_tokens_and_cost_per_arm_and_in_total(byok_env, tmp_path, monkeypatch):
    srv = byok_env
    srv.add(Rule(reply="nope", judge=False, usage=(100, 50)))
    srv.add(Rule(reply="hello", system_contains=MARK, judge=False, usage=(300, 100)))
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"m": {"input": 10, "output": 20}}))
    monkeypatch.setenv("AGENTSPROOF_PRICES", str(prices))
    out = tmp_path / "out"
    code, _, err = run_cli(["eval", _plugin(tmp_path, trials=1, tasks=2), "--model", "m", "--output", out])
    assert code == 0, err
    md = (out / "demo-plugin" / "greeter-eval.md").read_text()
    # with: 2 trials x (300 in + 100 out) = 800 tokens, 2 x $0.005 = $0.0100; baseline: 2 x 150 = 300 tokens, 2 x $0.002 = $0.0040
    assert "| with arm | 2 | 0 | 800 | 0 | 800 | $0.0100 |" in md  # calls made, from cache, tokens …
    assert "| baseline arm | 2 | 0 | 300 | 0 | 300 | $0.004000 |" in md
    assert "| total | 4 | 0 | 1,100 | 0 | 1,100 | $0.0140 |" in md
