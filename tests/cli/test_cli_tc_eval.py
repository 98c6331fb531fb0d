"""`agentsproof tc-eval` end to end on the scripted server.

The server's default judge passes an assertion when every 'quoted' word in it occurs in
the response, and scores a rubric by the share of its 'quoted' words the response holds.
The skill written here contains MARK, so the arms can be told apart.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SECRET_KEY, Rule, all_output_text, read_json, run_cli, write_tc_eval

MARK = "TCMARK"
SKILL = f"{MARK}: answer with pytest code and fixtures.\n"
MODEL = "test-model"


def with_arm(reply: str, **kw) -> Rule:
    return Rule(reply=reply, system_contains=MARK, judge=False, **kw)


def tc(tmp_path: Path, evals: list[dict], out: Path | None = None, *extra: str) -> tuple[int, str, str, dict | None]:
    path = write_tc_eval(tmp_path / "cases", evals, skill_text=SKILL)
    out = out or tmp_path / "out"
    code, stdout, stderr = run_cli(["tc-eval", path, "--model", MODEL, "--output", out, *extra])
    report = out / "cases" / "cases-tc-eval.json"  # evals.json is named after its skill's folder
    return code, stdout, stderr, read_json(report) if report.exists() else None


def items(data: dict) -> dict[str, dict]:
    return {i["id"]: i for i in data["items"]}


def test_tc_eval_default_paths_and_one_trial(byok_env, tmp_path, monkeypatch):
    byok_env.add(with_arm("uses 'pytest'"))
    path = write_tc_eval(tmp_path / "cases", [{"id": 1, "prompt": "write a test", "assertions": ["Mentions 'pytest'"]}], skill_text=SKILL)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(["tc-eval", path, "--model", MODEL])
    assert code == 0, err
    base = tmp_path / "runs" / "cases"  # not "evals": the report names the skill's folder
    for ext in ("html", "md", "json"):
        assert (base / f"cases-tc-eval.{ext}").is_file()
    data = read_json(base / "cases-tc-eval.json")
    assert data["command"] == "tc-eval" and data["plugin"] == "cases"
    assert len(byok_env.trial_requests()) == 2  # --trials defaults to 1 per arm
    item = data["items"][0]
    assert item["id"] == "case-1" and item["kind"] == "case"
    assert item["grade"] == "A" and item["passed"]
    assert data["cases"]["total"] == 1 and data["cases"]["passed"] == 1


def test_report_stem_follows_the_json_name(byok_env, tmp_path):
    path = write_tc_eval(tmp_path / "cases", [{"id": 7, "prompt": "p", "assertions": ["Answers the prompt"]}], skill_text=SKILL, name="checkout-cases.json")
    code, _, err = run_cli(["tc-eval", path, "--model", MODEL, "--output", tmp_path / "out"])
    assert code == 0, err
    assert (tmp_path / "out/checkout-cases/checkout-cases-tc-eval.html").is_file()
    assert (tmp_path / "out/checkout-cases/checkout-cases-tc-eval.json").is_file()


def test_assertions_only_each_judged_in_a_fresh_call(byok_env, tmp_path):
    srv = byok_env
    srv.add(with_arm("import pytest\n@pytest.fixture\ndef page(): ..."))
    evals = [
        {
            "id": 1,
            "prompt": "Write a smoke test.",
            "assertions": ["Uses 'pytest'", "Defines a 'fixture'", "Mentions 'playwright'"],
        }
    ]
    code, _, err, data = tc(tmp_path, evals)
    assert code == 0, err
    item = data["items"][0]
    w, wo = item["with_arm"], item["without_arm"]
    assert w["mean_score"] == pytest.approx(2 / 3) and wo["mean_score"] == 0.0
    g = w["trials"][0]["graders"]
    assert len(g) == 1 and g[0]["type"] == "assertions" and g[0]["weight"] == 1.0
    checks = g[0]["checks"]
    assert [(c["target"], c["passed"]) for c in checks] == [
        ("Uses 'pytest'", True),
        ("Defines a 'fixture'", True),
        ("Mentions 'playwright'", False),
    ]
    assert all(c["evidence"] for c in checks)
    judges = srv.judge_requests()
    assert len(judges) == 6  # 3 assertions × 2 arms, one call each
    for req in judges:
        assert len(req["messages"]) == 2  # fresh conversation: system + one user message
        claims = [a for a in evals[0]["assertions"] if a in req["messages"][1]["content"]]
        assert len(claims) == 1  # exactly one assertion per call
        assert req["temperature"] == 0


def test_expected_output_only_is_a_rubric_with_weight_one(byok_env, tmp_path):
    byok_env.add(with_arm("a test with 'zebra' and 'lion'"), Rule(reply="only zebra here", judge=False))
    evals = [{"id": 2, "prompt": "p", "expected_output": "Mentions 'zebra' and 'lion'."}]
    code, _, err, data = tc(tmp_path, evals)
    assert code == 0, err
    item = data["items"][0]
    g = item["with_arm"]["trials"][0]["graders"]
    assert [(x["type"], x["weight"]) for x in g] == [("llm_rubric", 1.0)]
    assert item["with_arm"]["mean_score"] == 1.0
    assert item["without_arm"]["mean_score"] == 0.5
    assert item["delta"] == 0.5 and item["grade"] == "A"
    assert len(byok_env.judge_requests()) == 2


def test_both_graders_weigh_assertions_0_7_and_rubric_0_3(byok_env, tmp_path):
    # with arm: assertion passes (1.0), rubric 0.0 → 0.7 ; baseline: assertion fails, rubric 1.0 → 0.3
    byok_env.add(with_arm("uses 'pytest'"), Rule(reply="a 'zebra'", judge=False))
    evals = [{"id": 3, "prompt": "p", "assertions": ["Uses 'pytest'"], "expected_output": "Mentions 'zebra'."}]
    code, _, err, data = tc(tmp_path, evals, None, "--threshold", "0.7")
    assert code == 0, err
    item = data["items"][0]
    g = item["with_arm"]["trials"][0]["graders"]
    assert sorted((x["type"], x["weight"]) for x in g) == [("assertions", 0.7), ("llm_rubric", 0.3)]
    assert item["with_arm"]["mean_score"] == pytest.approx(0.7)
    assert item["without_arm"]["mean_score"] == pytest.approx(0.3)
    assert item["delta"] == pytest.approx(0.4) and item["grade"] == "A"
    assert item["passed"] is True  # 0.7 ≥ --threshold 0.7


def test_neither_grader_runs_and_scores_one(byok_env, tmp_path):
    """Seed 000's weight rule "neither: score always 1.0": a case with nothing to check runs, scores 1.0 in both arms."""
    byok_env.add(Rule(reply="an answer", judge=False))
    code, _, err, data = tc(tmp_path, [{"id": 4, "prompt": "p"}], None)
    assert data is not None, err
    [item] = data["items"]
    assert [t["score"] for t in item["with_arm"]["trials"] + item["without_arm"]["trials"]] == [1.0] * (
        len(item["with_arm"]["trials"]) + len(item["without_arm"]["trials"])
    )
    assert all(t["graders"] == [] for t in item["with_arm"]["trials"])
    assert not byok_env.judge_requests()


def test_files_are_injected_into_the_prompt(byok_env, tmp_path):
    srv = byok_env
    d = tmp_path / "cases"
    (d / "data").mkdir(parents=True)
    (d / "data" / "sales.csv").write_text("month,revenue\nMarch,120\nJuly,340\n")
    (d / "notes.txt").write_text("Remember the fiscal year starts in April.")
    evals = [{"id": 1, "prompt": "Find the top month.", "files": ["data/sales.csv", "notes.txt"], "assertions": ["Answers the prompt"]}]
    code, _, err, data = tc(tmp_path, evals)
    assert code == 0, err
    users = [r["messages"][-1]["content"] for r in srv.trial_requests()]
    assert len(users) == 2
    for u in users:
        assert u.startswith("Find the top month.")
        assert "month,revenue\nMarch,120\nJuly,340" in u
        assert "fiscal year starts in April" in u
        assert "data/sales.csv" in u and "notes.txt" in u
        assert u.index("March,120") < u.index("fiscal year")


def test_file_escaping_the_folder_is_rejected_before_any_call(byok_env, tmp_path):
    (tmp_path / "secret.txt").write_text("top secret")
    evals = [{"id": 1, "prompt": "p", "assertions": ["Answers the prompt"]}, {"id": 2, "prompt": "q", "files": ["../secret.txt"], "assertions": ["Answers the prompt"]}]
    code, out, err, data = tc(tmp_path, evals)
    assert code == 30
    assert "evals[1].files[0]" in err and "../secret.txt" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert data is None and not byok_env.requests


def test_failing_case_exit_codes(byok_env, tmp_path):
    byok_env.add(with_arm("uses 'pytest'"))
    evals = [
        {"id": 1, "prompt": "p", "assertions": ["Uses 'pytest'"]},
        {"id": 2, "prompt": "q", "assertions": ["Uses 'cypress'"]},  # nobody passes: delta 0, pass rate 0
    ]
    code, stdout, err, data = tc(tmp_path, evals, None, "--ci")
    assert code == 1, err
    by_id = items(data)
    assert by_id["case-1"]["passed"] and not by_id["case-2"]["passed"]
    assert by_id["case-2"]["grade"] == "C" and by_id["case-2"]["pass_rate"] == 0.0
    assert data["cases"]["passed"] == 1 and data["cases"]["failed"] == 1 and data["verdict"] == "FAIL"
    code, _, err, _ = tc(tmp_path, evals, tmp_path / "o2")
    assert code == 0, err


@pytest.mark.parametrize("flag, n", [(["--smoke"], 5), (["--reliable"], 15), (["--regression"], 30), (["--trials", "2"], 2)])
def test_tc_eval_trial_counts(byok_env, tmp_path, flag, n):
    evals = [{"id": 1, "prompt": "p", "assertions": ["Answers the prompt"]}, {"id": 2, "prompt": "q", "assertions": ["Answers the prompt"]}]
    code, _, err, data = tc(tmp_path, evals, None, "--parallel", "20", *flag)
    assert code == 0, err
    assert len(byok_env.trial_requests()) == 2 * 2 * n
    for it in data["items"]:
        assert it["with_arm"]["scored"] == n and it["without_arm"]["scored"] == n


def test_tc_eval_judge_failure_errors_the_trial(byok_env, tmp_path):
    byok_env.add(Rule(reply="PASS (no json, sorry)", judge=True), with_arm("uses 'pytest'"))
    code, _, err, data = tc(tmp_path, [{"id": 1, "prompt": "p", "assertions": ["Uses 'pytest'"]}])
    assert code == 30
    item = data["items"][0]
    assert item["status"] == "errored" and item["grade"] is None
    t = item["with_arm"]["trials"][0]
    assert t["status"] == "errored" and t["score"] is None and "assertions" in t["error"]


def test_tc_eval_server_errors_counted_and_secret_not_leaked(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    byok_env.add(Rule(status=500, system_contains=MARK, times=1), with_arm("ok"))
    out = tmp_path / "out"
    code, stdout, err, data = tc(tmp_path, [{"id": 1, "prompt": "p", "assertions": ["Answers the prompt"]}], out, "--trials", "3", "--parallel", "1")
    assert code == 0, err
    w = data["items"][0]["with_arm"]
    assert w["errored"] == 1 and w["scored"] == 2
    assert SECRET_KEY not in all_output_text(out, stdout, err)


def test_tc_eval_timeout_flag(byok_env, tmp_path):
    # every with-arm attempt is slower than the timeout: retries within it cannot help
    byok_env.add(Rule(reply="slow", delay=3.0, system_contains=MARK))
    code, _, err, data = tc(tmp_path, [{"id": 1, "prompt": "p", "assertions": ["Answers the prompt"]}], None, "--timeout", "0.3", "--trials", "2", "--parallel", "4")
    assert code == 30, err
    w = data["items"][0]["with_arm"]
    assert w["errored"] == 2 and all("timed out" in t["error"] for t in w["trials"])
    # cut before the 3 s reply arrived (no trial scored); how soon: bench/timings.py trial-budget


def test_tc_eval_spec_example_shape(byok_env, tmp_path):
    """The evals.json example from the spec, with its data file present."""
    d = tmp_path / "cases"
    (d / "data").mkdir(parents=True)
    (d / "data" / "sales_2025.csv").write_text("month,revenue\nJan,1\n")
    evals = [
        {
            "id": 1,
            "prompt": "I have a CSV of monthly sales data. Find the top 3 months by revenue and make a bar chart.",
            "expected_output": "A bar chart showing the top 3 months by revenue, with labeled axes and values.",
            "files": ["data/sales_2025.csv"],
            "assertions": ["The output includes a bar chart image file", "The chart shows exactly 3 months"],
        },
        {"id": 2, "prompt": "Write a test for a search box.", "expected_output": "A test that types into a search input."},
        {"id": 3, "prompt": "Create a smoke test.", "assertions": ["The response includes code that navigates to a URL"]},
    ]
    code, _, err, data = tc(tmp_path, evals)
    assert code == 0, err
    weights = {
        it["id"]: sorted((g["type"], g["weight"]) for g in it["with_arm"]["trials"][0]["graders"]) for it in data["items"]
    }
    assert weights == {
        "case-1": [("assertions", 0.7), ("llm_rubric", 0.3)],
        "case-2": [("llm_rubric", 1.0)],
        "case-3": [("assertions", 1.0)],
    }
    # case 1: 2 assertion calls + 1 rubric call per trial; case 2: 1; case 3: 1 — both arms
    assert len(byok_env.judge_requests()) == 2 * (3 + 1 + 1)
