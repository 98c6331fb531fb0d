"""Suggestions are for grades A/B/C (the spec); an F item gets an advice section of its own."""

from __future__ import annotations

from conftest import Rule, run_cli, write_tc_eval

MARK = "ADVMARK"


def test_f_gets_its_own_labelled_advice_and_a_gets_suggestions(byok_env, tmp_path):
    byok_env.add(Rule(reply="uses pytest only", system_contains=MARK, judge=False))
    byok_env.add(Rule(reply="uses pytest and a fixture", user_contains="BASELINE WINS", judge=False))
    byok_env.add(Rule(reply="nothing useful", user_contains="BASELINE WINS", system_contains=MARK, judge=False))
    path = write_tc_eval(tmp_path / "adv", [
        {"id": 1, "prompt": "SKILL WINS", "assertions": ["Uses 'pytest'", "Uses a 'fixture'"]},
        {"id": 2, "prompt": "BASELINE WINS", "assertions": ["Uses 'pytest'"]},
    ], skill_text=f"{MARK}\n")
    out = tmp_path / "out"
    code, _, err = run_cli(["tc-eval", path, "--model", "m", "--output", out])
    assert code == 0, err
    md = (out / "adv" / "adv-tc-eval.md").read_text(encoding="utf-8")
    case1, case2 = md.split("### case: case 1", 1)[1].split("### case: case 2", 1)
    assert "— A," in case1.splitlines()[0] and "**Suggestions**" in case1 and "Advice for grade F" not in case1
    assert "— F," in case2.splitlines()[0]
    assert "**Advice for grade F: the skill is not helping**" in case2 and "**Suggestions**" not in case2
    html = (out / "adv" / "adv-tc-eval.html").read_text(encoding="utf-8")
    assert html.count("<h3>Advice for grade F: the skill is not helping</h3>") == 1 and html.count("<h3>Suggestions</h3>") == 1
