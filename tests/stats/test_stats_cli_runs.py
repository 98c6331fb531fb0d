"""End to end on the scripted server: --abort-after, --retry-errors, --adaptive, and compare
on reports written by real CLI runs."""

from __future__ import annotations

import json

import pytest

from conftest import Rule, make_plugin, read_json, run_cli, simple_eval, write_tc_eval

MARK = "SKILLMARK"
SKILL_TEXT = f"{MARK}: always greet with the word HELLO.\n"
BASELINE = "You are a helpful assistant."


def skill(tmp_path, trials=3, checks=("hello",)):
    make_plugin(tmp_path, skills={"greeter": {"prompt": SKILL_TEXT, "eval": simple_eval([{"type": "deterministic", "checks": list(checks)}], trials=trials)}})
    return tmp_path / "demo-plugin" / "skills" / "greeter" / "eval.yaml"


def report(out):
    return read_json(out / "demo-plugin" / "greeter-eval.json")


def test_abort_after_writes_incomplete_report_with_last_error_and_exits_30(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    byok_env.add(Rule(status=500, judge=False))
    path = skill(tmp_path, trials=10)
    out = tmp_path / "runs"
    code, stdout, stderr = run_cli(["eval", path, "--model", "m", "--output", out, "--abort-after", "3"])
    assert code == 30, stderr
    data = report(out)
    assert data["incomplete"] is True and data["verdict"] == "INCOMPLETE"
    assert "3 errored trials in a row" in data["incomplete_reason"]
    assert "last error" in data["incomplete_reason"] and "500" in data["incomplete_reason"]
    assert "incomplete:" in stderr and "500" in stderr
    # it stopped: far fewer than 20 trial calls reached the server
    assert len(byok_env.trial_requests()) < 20
    for ext in ("md", "html"):
        assert (out / "demo-plugin" / f"greeter-eval.{ext}").is_file()


def test_abort_after_zero_never_stops(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    byok_env.add(Rule(status=500, judge=False))
    path = skill(tmp_path, trials=4)
    out = tmp_path / "runs"
    code, _, _ = run_cli(["eval", path, "--model", "m", "--output", out, "--abort-after", "0"])
    assert code == 30  # every trial errored: an error, but the run finished
    data = report(out)
    assert data["incomplete"] is False
    assert len(byok_env.trial_requests()) == 8
    assert data["items"][0]["with_arm"]["errored"] == 4


def test_retry_errors_reruns_only_errored_trials_and_merges(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    srv = byok_env
    srv.add(
        Rule(reply="HELLO friend", system_contains=MARK, judge=False),
        Rule(reply="hi", system_contains=BASELINE, judge=False),
    )
    srv.add(Rule(status=500, judge=False, times=2))  # the first two trial calls fail
    path = skill(tmp_path, trials=4)
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out])
    first = report(out)
    it = first["items"][0]
    errored = it["with_arm"]["errored"] + it["without_arm"]["errored"]
    assert errored == 2, err
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps(first))
    before_calls = len(srv.trial_requests())

    code, stdout, err = run_cli(["eval", path, "--model", "m", "--output", out, "--retry-errors", saved])
    assert code == 0, err
    assert len(srv.trial_requests()) - before_calls == 2  # only the errored trials ran again
    merged = report(out)
    it2 = merged["items"][0]
    assert it2["with_arm"]["errored"] == 0 and it2["without_arm"]["errored"] == 0
    assert it2["with_arm"]["scored"] == 4 and it2["without_arm"]["scored"] == 4
    assert [t["index"] for t in it2["with_arm"]["trials"]] == [0, 1, 2, 3]
    assert it2["delta"] == 1.0 and it2["grade"] == "A"
    assert it2["stats"]["with"]["n"] == 4
    assert merged["settings"]["retried_trials"] == 2
    # the trials that were fine are kept as they were
    kept = {(t["arm"], t["index"]): t for t in it["with_arm"]["trials"] + it["without_arm"]["trials"] if t["status"] == "scored"}
    now = {(t["arm"], t["index"]): t for t in it2["with_arm"]["trials"] + it2["without_arm"]["trials"]}
    assert all(now[k] == v for k, v in kept.items())


def test_retry_errors_bad_inputs(byok_env, tmp_path):
    path = skill(tmp_path)
    code, _, err = run_cli(["eval", path, "--model", "m", "--retry-errors", tmp_path / "nope.json"])
    assert code == 30 and "nope.json: file not found" in err
    other = tmp_path / "tc.json"
    from helpers import item, passfail, run as mkrun

    other.write_text(mkrun([item(passfail(1, 0), passfail(0, 1))], command="tc-eval").model_dump_json())
    code, _, err = run_cli(["eval", path, "--model", "m", "--retry-errors", other])
    assert code == 30 and "is a 'tc-eval' run" in err


def test_retry_errors_tc_eval(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    srv = byok_env
    srv.add(Rule(reply="HELLO", judge=False))
    srv.add(Rule(status=500, judge=False, times=1))
    tc = write_tc_eval(tmp_path / "tc", [{"id": 1, "prompt": "greet me", "expected_output": "a greeting 'HELLO'"}])
    out = tmp_path / "runs"
    run_cli(["tc-eval", tc, "--model", "m", "--output", out, "--trials", "2"])
    saved = read_json(out / "tc" / "tc-tc-eval.json")
    assert sum(i["with_arm"]["errored"] + i["without_arm"]["errored"] for i in saved["items"]) == 1
    p = tmp_path / "saved.json"
    p.write_text(json.dumps(saved))
    code, _, err = run_cli(["tc-eval", tc, "--model", "m", "--output", out, "--retry-errors", p])
    assert code == 0, err
    merged = read_json(out / "tc" / "tc-tc-eval.json")
    assert all(i["with_arm"]["errored"] + i["without_arm"]["errored"] == 0 for i in merged["items"])
    assert merged["items"][0]["with_arm"]["scored"] == 2


def test_adaptive_stops_early_on_a_clear_cut_skill(byok_env, tmp_path):
    srv = byok_env
    srv.add(
        Rule(reply="HELLO friend", system_contains=MARK, judge=False),
        Rule(reply="hi", system_contains=BASELINE, judge=False),
    )
    path = skill(tmp_path, trials=3)
    out = tmp_path / "runs"
    code, stdout, err = run_cli(["eval", path, "--model", "m", "--output", out, "--adaptive"])
    assert code == 0, err
    data = report(out)
    it = data["items"][0]
    assert it["grade"] == "A"
    assert it["trials_requested"] == 15  # the adaptive cap when no trial count is given (--reliable)
    n = it["with_arm"]["scored"]
    assert 5 <= n < 15 and len(srv.trial_requests()) == 2 * n
    assert data["settings"]["adaptive"]["correction"].startswith("Bonferroni")
    assert data["settings"]["adaptive"]["looks"] == [5, 8, 11, 15]
    stop = it["stats"]["adaptive_stop"]
    assert stop["label"] == "98.8 % interval within A" and stop["kind"] == "grade" and stop["trials"] == n and stop["cap"] == 15
    assert stop["looks"] == [k for k in (5, 8, 11, 15) if k <= n]
    assert f"adaptive stop: 98.8 % interval within A after {n} of 15 trials per arm" in stdout
    # one case: the verdict is underpowered, and nothing beside it says "settled"
    row = next(line for line in stdout.splitlines() if "[underpowered]" in line)
    assert "settled" not in stdout.replace("unsettled", "").replace("not settled", "")
    assert "A on this case (98.8 % interval within A); for tasks like these not settled yet: about" in row
    # the printed interval is the stopping rule's (level 1 - 0.05/4), not a 95 % one
    assert it["stats"]["delta_ci"] == pytest.approx(stop["interval"]) and it["stats"]["delta_ci_level"] == pytest.approx(stop["level"])
    md = (out / "demo-plugin" / "greeter-eval.md").read_text(encoding="utf-8")
    assert "- adaptive stop: 98.8 % interval within A after" in md


def test_adaptive_gives_a_perfect_five_case_skill_a_clear_a_on_its_cases(byok_env, tmp_path):
    """Five cases, every trial 1.00 with the skill and 0.00 without, cap 15 (3 trials per
    case): tasks like these cannot settle by the cap, so the stop is a clear A on these 5
    cases with what would settle tasks like these — not "unsettled: the cap would not settle it"."""
    byok_env.add(Rule(reply="HELLO friend", system_contains=MARK, judge=False), Rule(reply="hi", system_contains=BASELINE, judge=False))
    tasks = [{"name": f"t{k}", "instruction": f"TASK-{k} greet me", "graders": [{"type": "deterministic", "checks": ["hello"]}]} for k in range(5)]
    make_plugin(tmp_path, skills={"greeter": {"prompt": SKILL_TEXT, "eval": {"version": "2", "defaults": {"trials": 3}, "tasks": tasks}}})
    out = tmp_path / "runs"
    code, stdout, err = run_cli(["eval", tmp_path / "demo-plugin" / "skills" / "greeter", "--model", "m", "--output", out, "--adaptive"])
    assert code == 0, err
    it = report(out)["items"][0]
    stop = it["stats"]["adaptive_stop"]
    assert stop["kind"] == "grade" and stop["question"] == "cases", stop
    assert "unsettled" not in stdout
    assert stop["label"].startswith("98.8 % interval within A on these 5 cases (for tasks like these not settled yet: about ")
    n = it["with_arm"]["scored"]
    assert f"adaptive stop: {stop['label']} after {n} of 15 trials per arm" in stdout
    row = next(line for line in stdout.splitlines() if line.lstrip().startswith("greeter"))
    assert "A on these 5 cases (98.8 % interval within A); for tasks like these not settled yet: about" in row
    assert it["stats"]["questions"]["cases"]["delta_ci"] == pytest.approx(stop["interval"])


def test_adaptive_records_the_looks_of_the_items_cap(byok_env, tmp_path):
    """--trials 6 on an item of 5 cases is a cap of 30 trials per arm: the looks recorded
    are those of 30, not of 6 (the per-case count)."""
    srv = byok_env
    srv.add(Rule(reply="HELLO", judge=False))
    tasks = [{"name": f"t{k}", "instruction": f"TASK-{k} say hi", "graders": [{"type": "deterministic", "checks": ["hello"]}]} for k in range(5)]
    make_plugin(tmp_path, skills={"greeter": {"prompt": SKILL_TEXT, "eval": {"version": "2", "defaults": {"trials": 6}, "tasks": tasks}}})
    path = tmp_path / "demo-plugin" / "skills" / "greeter" / "eval.yaml"
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval", path, "--model", "m", "--output", out, "--adaptive", "--trials", "6"])
    assert code == 0, err
    data = report(out)
    assert data["items"][0]["trials_requested"] == 30
    assert data["settings"]["adaptive"]["looks"] == [5, 8, 11, 15, 20, 25, 30]


def test_adaptive_stops_when_the_cap_cannot_settle_it(byok_env, tmp_path):
    """Both arms identical (delta 0 on the C/F edge), cap 8: projected to 8 trials the
    interval would support no statement, so the run stops at its first look (5) for
    futility rather than spend 3 more trials per arm that cannot decide anything."""
    srv = byok_env
    srv.add(Rule(reply="HELLO", judge=False))
    path = skill(tmp_path)
    out = tmp_path / "runs"
    code, stdout, err = run_cli(["eval", path, "--model", "m", "--output", out, "--adaptive", "--trials", "8"])
    assert code == 0, err
    it = report(out)["items"][0]
    assert it["with_arm"]["scored"] == 5 and it["trials_requested"] == 8
    stop = it["stats"]["adaptive_stop"]
    assert stop["label"] == "unsettled: the cap would not settle it" and stop["kind"] == "futility" and stop["looks"] == [5]
    assert "adaptive stop: unsettled: the cap would not settle it after 5 of 8 trials per arm" in stdout


def test_adaptive_stops_for_futility_on_a_skill_without_effect(byok_env, tmp_path):
    """Identical arms (every trial passes): the interval rules out B or better, so the run
    stops with "no meaningful effect: C or F" well before the cap of 100. (All-pass arms
    cannot rule out B at 30 trials and 9 looks with any valid interval: with chances 1 and
    0.85, a true B, both arms pass 30 of 30 with chance 0.85**30 = 0.0076 > 0.05/9.)"""
    srv = byok_env
    srv.add(Rule(reply="HELLO", judge=False))
    path = skill(tmp_path)
    out = tmp_path / "runs"
    code, stdout, err = run_cli(["eval", path, "--model", "m", "--output", out, "--adaptive", "--trials", "100"])
    assert code == 0, err
    it = report(out)["items"][0]
    stop = it["stats"]["adaptive_stop"]
    assert stop["label"] == "no meaningful effect: C or F" and stop["kind"] == "futility"
    assert it["with_arm"]["scored"] == stop["trials"] <= 60 and stop["interval"][1] < 0.15
    assert "adaptive stop: no meaningful effect: C or F" in stdout
    html = (out / "demo-plugin" / "greeter-eval.html").read_text(encoding="utf-8")
    assert "Adaptive stop" in html and "no meaningful effect: C or F" in html


def test_compare_on_reports_from_real_runs(byok_env, tmp_path):
    srv = byok_env
    path = skill(tmp_path, trials=10)
    srv.add(Rule(reply="HELLO friend", system_contains=MARK, judge=False), Rule(reply="hi", system_contains=BASELINE, judge=False))
    out1, out2 = tmp_path / "r1", tmp_path / "r2"
    assert run_cli(["eval", path, "--model", "m", "--output", out1])[0] == 0
    srv.add(Rule(reply="hi there", system_contains=MARK, judge=False))  # the skill stopped working
    run_cli(["eval", path, "--model", "m", "--output", out2])
    b, a = out1 / "demo-plugin" / "greeter-eval.json", out2 / "demo-plugin" / "greeter-eval.json"
    code, out, err = run_cli(["compare", b, a, "--ci"])
    assert code == 1, err
    row = next(line for line in out.splitlines() if "skills/greeter" in line)
    assert "10/10 (100%)" in row and "0/10 (0%)" in row and "WORSE" in row
    assert "+1.00 → +0.00" in row and "A → C" in row
    code, out, _ = run_cli(["compare", b, b, "--ci"])
    assert code == 0 and "SAME" in out
