"""--ci-rule: the default fails a point F; ``interval`` fails only a shown harm or a shown low pass rate."""

from __future__ import annotations

from conftest import Rule, make_plugin, read_json, run_cli, simple_eval
from helpers import item, passfail

from agentsproof.stats.item import harm_not_shown, interval_rule_passes

MARK = "SKILLMARK"
BASELINE = "You are a helpful assistant."


def skill(tmp_path, trials=3):
    evl = simple_eval([{"type": "deterministic", "checks": ["hello"]}], trials=trials)
    make_plugin(tmp_path, skills={"greeter": {"prompt": f"{MARK}: greet with HELLO.\n", "eval": evl}})
    return tmp_path / "demo-plugin" / "skills" / "greeter" / "eval.yaml"


def report(out):
    return read_json(out / "demo-plugin" / "greeter-eval.json")["items"][0]


def test_interval_rule_on_item_stats():
    unshown = item(passfail(2, 1), passfail(3, 0))  # delta -0.33, its interval reaches 0
    assert unshown.grade == "F" and harm_not_shown(unshown.stats)
    assert interval_rule_passes(unshown.stats, 0.5)
    shown = item(passfail(0, 20), passfail(20, 0))
    assert shown.grade == "F" and not harm_not_shown(shown.stats)
    assert not interval_rule_passes(shown.stats, 0.0)
    low_rate = item(passfail(1, 29), passfail(0, 30))  # a C, but a pass rate shown below 0.5
    assert low_rate.grade == "C" and not interval_rule_passes(low_rate.stats, 0.5)
    assert interval_rule_passes(low_rate.stats, 0.1)


def _point_f(byok_env):
    byok_env.add(Rule(reply="HELLO", system_contains=MARK, judge=False), Rule(reply="HELLO there", system_contains=BASELINE, judge=False))
    byok_env.add(Rule(reply="hi", system_contains=MARK, judge=False, times=1))  # one with-arm trial fails: delta -0.33


def test_default_rule_fails_a_point_f_and_says_its_harm_is_not_shown(byok_env, tmp_path):
    _point_f(byok_env)
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval", skill(tmp_path), "--model", "m", "--output", out, "--ci"])
    it = report(out)
    assert it["grade"] == "F" and it["stats"]["grade_label"].startswith("F on this case (harm not shown: 95 % interval spans F–")
    assert code == 1, err
    assert "1 item fails on a point F whose harm is not shown" in err and "--ci-rule interval" in err


def test_interval_rule_passes_a_point_f_whose_harm_is_not_shown(byok_env, tmp_path):
    _point_f(byok_env)
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval", skill(tmp_path), "--model", "m", "--output", out, "--ci", "--ci-rule", "interval"])
    assert code == 0, err
    data = read_json(out / "demo-plugin" / "greeter-eval.json")
    assert data["settings"]["ci_rule"] == "interval"
    it = data["items"][0]
    assert it["grade"] == "F" and it["passed"] is True
    assert it["stats"]["grade_label"].startswith("F on this case (harm not shown: 95 % interval spans F–")  # marked under either rule
    code, _, err = run_cli(["regrade", out / "demo-plugin" / "greeter-eval.json"])  # re-graded under the run's own rule
    assert code == 0, err
    again = read_json(out / "demo-plugin" / "greeter-eval-regraded.json")["items"][0]
    assert again["grade"] == "F" and again["passed"] is True


def test_interval_rule_fails_a_shown_harm(byok_env, tmp_path):
    byok_env.add(Rule(reply="hi", system_contains=MARK, judge=False), Rule(reply="HELLO there", system_contains=BASELINE, judge=False))
    out = tmp_path / "runs"
    code, _, err = run_cli(["eval", skill(tmp_path, trials=5), "--model", "m", "--output", out, "--ci", "--ci-rule", "interval"])
    assert code == 1, err
    it = report(out)
    assert it["passed"] is False and it["stats"]["delta_ci"][1] < 0
    assert "harm is not shown" not in err


def test_a_five_case_harm_says_which_question_shows_it_in_the_label_the_note_and_the_reports(byok_env, tmp_path):
    """Five cases, every trial 0.00 with the skill and 1.00 without: the harm is shown on these
    cases (question (a)'s interval within F) but not yet for tasks like these (question (b),
    what the grade's interval answers from 5 cases, spans F–C). The label, the --ci note on
    stderr and the reports' underpowered reason all name the question; none says "harm not
    shown" of these cases, nor "not settled" of a harm."""
    byok_env.add(Rule(reply="hi", system_contains=MARK, judge=False), Rule(reply="HELLO there", system_contains=BASELINE, judge=False))
    tasks = [{"name": f"t{k}", "instruction": f"TASK-{k} greet me", "graders": [{"type": "deterministic", "checks": ["hello"]}]} for k in range(5)]
    make_plugin(tmp_path, skills={"greeter": {"prompt": f"{MARK}: greet with HELLO.\n", "eval": {"version": "2", "defaults": {"trials": 3}, "tasks": tasks}}})
    out = tmp_path / "runs"
    code, stdout, err = run_cli(["eval", tmp_path / "demo-plugin" / "skills" / "greeter", "--model", "m", "--output", out, "--ci"])
    assert code == 1, err
    it = report(out)
    s = it["stats"]
    assert it["grade"] == "F" and s["question"] == "tasks" and harm_not_shown(s)
    assert s["grade_label"] == (
        "F on these 5 cases (95 % interval within F); for tasks like these harm not shown yet: about 1 more case like these would show it"
    )
    assert s["grade_label"] in stdout
    assert "--ci: 1 item fails on a point F whose harm is not shown" in err
    assert "skills/greeter for tasks like these (on these 5 cases it is shown)" in err
    assert any(r.startswith("the interval for tasks like these spans F–") for r in s["verdict_reasons"])
    md = (out / "demo-plugin" / "greeter-eval.md").read_text(encoding="utf-8")
    assert "(the interval for tasks like these spans F–" in md and "harm not shown yet" in md
