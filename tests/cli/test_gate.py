"""A CI gate that fails closed (issue 46): a refused eval file fails `--ci`, the verdict in
every report agrees with the exit code, UNPROVEN is never a green PASS, and every non-zero
exit ends with one line saying why. Also the numbers that must agree: a delta paired by
case says so, an unpriced model's cost is "unknown"."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from conftest import Rule, make_plugin, read_json, run_cli, simple_eval, write_tc_eval

MARK = "SKILLMARK"
SKILL = f"{MARK}: greet the user.\n"


def _skills(tmp_path, *, bad: bool = True, trials: int = 3):
    skills = {"good": {"prompt": SKILL, "eval": simple_eval(trials=trials)}}
    if bad:
        skills["zz-typo"] = {"prompt": SKILL, "eval": {**simple_eval(trials=trials), "defaults": {"trialz": 3}}}
    return make_plugin(tmp_path, skills=skills)


def _why(err: str) -> str:
    """The last line on stderr: the one that says why the run exits non-zero."""
    return err.strip().splitlines()[-1]


def test_ci_fails_closed_on_a_refused_eval_file(byok_env, tmp_path):
    plugin = _skills(tmp_path)
    out = tmp_path / "out"
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out, "--ci"])
    assert code == 30, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err  # the file and the reason on one line
    assert "zz-typo" in lines[0] and "defaults.trialz" in lines[0] and "--allow-refused" in lines[0]
    assert not byok_env.requests and not out.exists()  # before any trial
    # --allow-refused: the others run, the refusal is listed and recorded
    byok_env.add(Rule(reply="hello", system_contains=MARK, judge=False), Rule(reply="nope", judge=False))
    code, _, err = run_cli(["eval-all", plugin, "--model", "m", "--output", out, "--ci", "--allow-refused"])
    assert code == 0, err
    data = read_json(out / "demo-plugin" / "eval-all-summary.json")
    assert [i["name"] for i in data["items"]] == ["good"] and "defaults.trialz" in data["settings"]["refused"][0]["error"]
    assert data["verdict"] == "PASS"


def test_without_ci_a_refused_file_is_listed_and_the_others_run(byok_env, tmp_path):
    byok_env.add(Rule(reply="hello", system_contains=MARK, judge=False), Rule(reply="nope", judge=False))
    code, _, err = run_cli(["eval-all", _skills(tmp_path), "--model", "m", "--output", tmp_path / "out"])
    assert code == 0, err
    assert "refused: " in err and "defaults.trialz" in err


def test_fail_on_underpowered_is_a_fail_verdict_with_its_reason(byok_env, tmp_path):
    """One case is underpowered: --ci --fail-on-underpowered exits 1 and every report says FAIL, not PASS."""
    byok_env.add(Rule(reply="hello", system_contains=MARK, judge=False), Rule(reply="nope", judge=False))
    plugin = _skills(tmp_path, bad=False)
    out = tmp_path / "out"
    summary = tmp_path / "summary.md"
    code, stdout, err = run_cli(
        ["eval-all", plugin, "--model", "m", "--output", out, "--ci", "--fail-on-underpowered", "--junit", tmp_path / "j.xml"],
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert code == 1, err
    assert _why(err) == "exit 1: 1 item underpowered (--fail-on-underpowered)"
    assert "verdict: FAIL" in stdout and "verdict: PASS" not in stdout
    assert read_json(out / "demo-plugin" / "eval-all-summary.json")["verdict"] == "FAIL"
    html = (out / "demo-plugin" / "demo-plugin-eval.html").read_text(encoding="utf-8")
    assert 'class="r r-FAIL verdict">FAIL<' in html and "r-PASS verdict" not in html
    assert "**Verdict: FAIL**" in (out / "demo-plugin" / "eval-all-summary.md").read_text(encoding="utf-8")
    assert "— FAIL" in summary.read_text(encoding="utf-8")
    # the same run without the flag passes: the gate is the flag's
    code, stdout, err = run_cli(["eval-all", plugin, "--model", "m", "--output", tmp_path / "o2", "--ci"])
    assert code == 0, err and "verdict: PASS" in stdout


def test_a_failing_item_ends_with_its_reason(byok_env, tmp_path):
    byok_env.add(Rule(reply="nope", judge=False))
    plugin = _skills(tmp_path, bad=False)
    code, stdout, err = run_cli(["eval-all", plugin, "--model", "m", "--output", tmp_path / "out", "--ci"])
    assert code == 1, err
    assert _why(err) == "exit 1: good pass rate 0 % < 60 %"
    assert "verdict: FAIL" in stdout


def test_unproven_is_never_a_green_pass(byok_env, tmp_path):
    """tc-eval's default single trial: every case reads UNPROVEN, and so does the run — in the
    terminal, JSON, Markdown, HTML badge, JUnit and step summary; --ci exits 1 saying why."""
    byok_env.add(Rule(reply="HELLO", system_contains="UPPERCASE", judge=False), Rule(reply="hello", judge=False))
    byok_env.add(Rule(reply='{"verdict": "pass", "reason": "ok"}', judge=True))
    path = write_tc_eval(tmp_path / "tc", [{"id": 1, "prompt": "greet", "assertions": ["Is in uppercase"]},
                                           {"id": 2, "prompt": "greet again", "assertions": ["Is in uppercase"]}])
    out = tmp_path / "out"
    summary = tmp_path / "summary.md"
    junit = tmp_path / "junit.xml"
    code, stdout, err = run_cli(["tc-eval", path, "--model", "m", "--output", out, "--junit", junit, "--ci"],
                                env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert code == 1, err
    assert _why(err).startswith("exit 1: 2 items unproven (passed on fewer than 3 scored trials per arm")
    assert "verdict: UNPROVEN · 2/2 passed · 2 unproven (passed on too few trials)" in stdout and "PASS" not in stdout.replace("UNPROVEN", "")
    data = read_json(next(out.glob("*/*-tc-eval.json")))
    assert data["verdict"] == "UNPROVEN"
    html = next(out.glob("*/*-tc-eval.html")).read_text(encoding="utf-8")
    assert 'class="r r-UNPROVEN verdict">UNPROVEN<' in html and 'r-PASS verdict' not in html and '>PASS<' not in html
    assert "**Verdict: UNPROVEN**" in next(out.glob("*/*-tc-eval.md")).read_text(encoding="utf-8")
    assert "— UNPROVEN" in summary.read_text(encoding="utf-8") and "**2/2 passed** · 2 unproven (too few trials)" in summary.read_text(encoding="utf-8")
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("failures") == "2"
    assert all(c.find("failure").get("type") == "unproven" for c in suite.findall("testcase"))
    # without --ci the run still reads UNPROVEN, and exits 0
    code, stdout, err = run_cli(["tc-eval", path, "--model", "m", "--output", tmp_path / "o2"])
    assert code == 0, err and "verdict: UNPROVEN" in stdout
    # enough trials: PASS
    code, stdout, err = run_cli(["tc-eval", path, "--model", "m", "--output", tmp_path / "o3", "--trials", "3", "--ci"])
    assert code == 0, err
    assert "verdict: PASS" in stdout


def test_an_errored_item_ends_with_why(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    byok_env.add(Rule(status=503, system_contains=MARK, judge=False), Rule(reply="nope", judge=False))
    code, _, err = run_cli(["eval-all", _skills(tmp_path, bad=False), "--model", "m", "--output", tmp_path / "out", "--ci"])
    assert code == 30, err
    why = _why(err)
    assert why.startswith("exit 30: 1 item errored, no grade (good; 3 errored trials; first: ") and "503" in why


def test_a_delta_paired_by_case_says_so_and_shows_its_means(byok_env, tmp_path, monkeypatch):
    """With an errored trial the arm means are over every scored trial but the delta is the
    mean of per-case deltas: the table says the delta is paired and shows the paired means."""
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    byok_env.add(
        Rule(status=500, system_contains=MARK, user_contains="BETA", judge=False, times=2),
        Rule(reply="nope", system_contains=MARK, user_contains="BETA", judge=False),
        Rule(reply="hello", system_contains=MARK, judge=False),
        Rule(reply="nope", judge=False),
    )
    graders = [{"type": "deterministic", "checks": ["hello"]}]
    ev = {"version": "2", "defaults": {"trials": 3, "timeout": 30, "threshold": 0.6},
          "tasks": [{"name": "alpha", "instruction": "ALPHA greet", "graders": graders},
                    {"name": "beta", "instruction": "BETA greet", "graders": graders}]}
    plugin = make_plugin(tmp_path, skills={"greeter": {"prompt": SKILL, "eval": ev}})
    out = tmp_path / "out"
    code, stdout, err = run_cli(["eval", plugin / "skills" / "greeter", "--model", "m", "--output", out])
    assert code == 0, err
    it = read_json(out / "demo-plugin" / "greeter-eval.json")["items"][0]
    assert it["with_arm"]["mean_score"] == 0.75 and it["delta"] == 0.5  # (1 + 1 + 1 + 0)/4, but (1 + 0)/2 − 0
    basis = it["stats"]["delta_basis"]
    assert basis["paired"] and basis["with"] == 0.5 and basis["without"] == 0.0 and basis["cases"] == 2
    line = "delta +0.50 is paired by case: with 0.50, w/o 0.00 averaged over its 2 cases where both arms scored"
    assert line in stdout
    md = (out / "demo-plugin" / "greeter-eval.md").read_text(encoding="utf-8")
    assert "(paired by case: 0.50 − 0.00)" in md and "| mean of the per-case means (the delta's basis) | 0.50 | 0.00 |" in md
    html = (out / "demo-plugin" / "greeter-eval.html").read_text(encoding="utf-8")
    assert "paired by case: 0.50 − 0.00" in html


def test_an_unpriced_models_cost_is_unknown_even_from_the_cache(byok_env, tmp_path, monkeypatch):
    monkeypatch.delenv("AGENTSPROOF_NO_CACHE", raising=False)
    monkeypatch.setenv("AGENTSPROOF_CACHE_DIR", str(tmp_path / "cache"))
    byok_env.add(Rule(reply="hello", system_contains=MARK, judge=False), Rule(reply="nope", judge=False))
    plugin = _skills(tmp_path, bad=False)
    for run in ("o1", "o2"):  # the second run answers every trial from the cache
        code, _, err = run_cli(["eval", plugin / "skills" / "good", "--model", "unpriced-model", "--output", tmp_path / run])
        assert code == 0, err
    for ext in ("md", "html"):
        text = (tmp_path / "o2" / "demo-plugin" / f"good-eval.{ext}").read_text(encoding="utf-8")
        assert "$0.0000" not in text and "unknown" in text
    md = (tmp_path / "o2" / "demo-plugin" / "good-eval.md").read_text(encoding="utf-8")
    assert "cost: with unknown · baseline unknown" in md
