"""`agentsproof eval` and `eval-all` end to end: CLI → runner → real openai client →
scripted server on loopback → graders → reports.

The server tells the arms apart by the system prompt: every skill file written here
contains a marker, the baseline ("You are a helpful assistant.") does not.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from conftest import SECRET_KEY, Rule, all_output_text, make_plugin, read_json, run_cli, simple_eval

MARK = "SKILLMARK"
SKILL_TEXT = f"{MARK}: always greet with the word HELLO and sign with -- bot.\n"
MODEL = "test-model"


def with_arm(reply: str, **kw) -> Rule:
    return Rule(reply=reply, system_contains=MARK, judge=False, **kw)


def without_arm(reply: str, **kw) -> Rule:
    return Rule(reply=reply, system_contains="You are a helpful assistant.", judge=False, **kw)


def one_skill(tmp_path: Path, ev: dict, name: str = "greeter", plugin: str = "demo-plugin") -> Path:
    make_plugin(tmp_path, plugin=plugin, skills={name: {"prompt": SKILL_TEXT, "eval": ev}})
    return tmp_path / plugin / "skills" / name / "eval.yaml"


def eval_cli(path: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli(["eval", path, "--model", MODEL, "--output", out, *extra])


def item_of(out: Path, plugin: str = "demo-plugin", name: str = "greeter") -> dict:
    data = read_json(out / plugin / f"{name}-eval.json")
    assert len(data["items"]) == 1
    return data["items"][0]


# ---------------------------------------------------------------- the happy path


def test_eval_v2_skill_grade_a_reports_and_requests(byok_env, tmp_path, monkeypatch):
    srv = byok_env
    srv.add(with_arm("HELLO there -- bot"), without_arm("hi"))
    path = one_skill(tmp_path, simple_eval([{"type": "deterministic", "checks": ["hello", "-- bot"]}], trials=2))
    monkeypatch.chdir(tmp_path)  # default --output is runs/ in the working directory

    code, out, err = run_cli(["eval", path, "--model", MODEL])

    assert code == 0, err
    base = tmp_path / "runs" / "demo-plugin"
    for ext in ("md", "json", "html"):
        assert (base / f"greeter-eval.{ext}").is_file()
        assert f"greeter-eval.{ext}" in out
    data = read_json(base / "greeter-eval.json")
    assert data["command"] == "eval" and data["plugin"] == "demo-plugin"
    assert data["provider"] == "openai" and data["model"] == MODEL
    assert data["verdict"] == "UNPROVEN"  # passed on 2 trials per arm: too few to say anything, never a green PASS
    item = data["items"][0]
    assert item["kind"] == "skill" and item["name"] == "greeter"
    assert item["with_arm"]["mean_score"] == 1.0
    assert item["without_arm"]["mean_score"] == 0.0
    assert item["delta"] == 1.0 and item["grade"] == "A"
    assert item["pass_rate"] == 1.0 and item["passed"] is True
    assert item["with_arm"]["scored"] == 2 and item["with_arm"]["errored"] == 0

    # two arms × two trials, the skill text as system prompt in exactly half of them
    trials = srv.trial_requests()
    assert len(trials) == 4 and not srv.judge_requests()
    systems = [r["messages"][0]["content"] for r in trials]
    assert systems.count(SKILL_TEXT) == 2
    assert systems.count("You are a helpful assistant.") == 2
    assert all(r["messages"][1]["content"] == "Say hello to the user." for r in trials)
    assert all(r["model"] == MODEL for r in trials)

    # each check reported with pass/fail and evidence
    t0 = item["with_arm"]["trials"][0]
    checks = t0["graders"][0]["checks"]
    assert [(c["kind"], c["target"], c["passed"]) for c in checks] == [
        ("mustContain", "hello", True),
        ("mustContain", "-- bot", True),
    ]
    assert all(c["evidence"] for c in checks)
    assert t0["response"] == "HELLO there -- bot"
    assert t0["usage"]["total_tokens"] > 0 and t0["latency_s"] >= 0

    html = (base / "greeter-eval.html").read_text()
    md = (base / "greeter-eval.md").read_text()
    for report in (html, md):
        assert "greeter" in report and "+1.00" in report


def test_eval_v1_tasks_list_uses_first_task(byok_env, tmp_path):
    srv = byok_env
    srv.add(with_arm("first task answer"))
    ev = {
        "version": "1",
        "skill": "SKILL.md",
        "defaults": {"trials": 1},
        "tasks": [
            {"name": "one", "instruction": "FIRST instruction", "graders": [{"type": "deterministic", "checks": ["first"]}]},
            {"name": "two", "instruction": "SECOND instruction", "graders": [{"type": "deterministic", "checks": ["second"]}]},
        ],
    }
    path = one_skill(tmp_path, ev)
    code, _, err = eval_cli(path, tmp_path / "out")
    assert code == 0, err
    users = {r["messages"][1]["content"] for r in srv.trial_requests()}
    assert users == {"FIRST instruction"}
    item = item_of(tmp_path / "out")
    assert item["task_name"] == "one"
    assert item["with_arm"]["mean_score"] == 1.0 and item["without_arm"]["mean_score"] == 0.0


def test_eval_v1_without_version_key_and_numeric_version(byok_env, tmp_path):
    byok_env.add(with_arm("hello"))
    text = (
        "version: 1\nskill: SKILL.md\ntasks:\n  - name: a\n    instruction: go\n"
        "    graders:\n      - type: deterministic\n        checks: [hello]\n"
    )
    make_plugin(tmp_path, skills={"greeter": {"prompt": SKILL_TEXT, "eval": text}})
    code, _, err = eval_cli(tmp_path / "demo-plugin/skills/greeter/eval.yaml", tmp_path / "out")
    assert code == 0, err
    assert item_of(tmp_path / "out")["grade"] == "A"


def test_eval_agent(byok_env, tmp_path):
    srv = byok_env
    srv.add(Rule(reply="I will review: LGTM", system_contains="AGENTMARK", judge=False))
    make_plugin(
        tmp_path,
        agents={"reviewer": {"prompt": "AGENTMARK you review code.\n", "eval": simple_eval([{"type": "deterministic", "checks": ["lgtm"]}])}},
    )
    code, _, err = eval_cli(tmp_path / "demo-plugin/agents/reviewer/eval.yaml", tmp_path / "out")
    assert code == 0, err
    data = read_json(tmp_path / "out/demo-plugin/reviewer-agent-eval.json")  # agents never collide with skills
    item = data["items"][0]
    assert item["kind"] == "agent" and item["grade"] == "A"
    assert data["agents"]["total"] == 1 and data["skills"]["total"] == 0


# ---------------------------------------------------------------- graders and weights


def test_deterministic_all_check_kinds_and_case_sensitivity(byok_env, tmp_path):
    byok_env.add(with_arm("Hello World, order #1234 shipped"), without_arm("hello world, TODO: order pending"))
    graders = [
        {
            "type": "deterministic",
            "checks": {
                "mustContain": ["Hello"],
                "mustNotContain": ["TODO"],
                "regexMatch": [r"#\d{4}"],
                "caseSensitive": True,
            },
        }
    ]
    path = one_skill(tmp_path, simple_eval(graders))
    code, _, err = eval_cli(path, tmp_path / "out")
    assert code == 0, err
    item = item_of(tmp_path / "out")
    assert item["with_arm"]["mean_score"] == 1.0
    # baseline: "hello" fails case-sensitively, TODO present, no #dddd
    assert item["without_arm"]["mean_score"] == 0.0
    checks = item["without_arm"]["trials"][0]["graders"][0]["checks"]
    assert [(c["kind"], c["passed"]) for c in checks] == [
        ("mustContain", False),
        ("mustNotContain", False),
        ("regexMatch", False),
    ]
    assert "TODO" in checks[1]["evidence"]


def test_weighted_average_of_graders(byok_env, tmp_path):
    # with arm: first grader 1.0, second 0.0 → (1*0.7 + 0*0.3) / 1.0 = 0.7
    # baseline: first grader 0.0, second 1.0 → 0.3
    byok_env.add(with_arm("alpha"), without_arm("beta"))
    graders = [
        {"type": "deterministic", "checks": ["alpha"], "weight": 0.7},
        {"type": "deterministic", "checks": ["beta"], "weight": 0.3},
    ]
    path = one_skill(tmp_path, simple_eval(graders, threshold=0.7))
    code, _, err = eval_cli(path, tmp_path / "out")
    assert code == 0, err
    item = item_of(tmp_path / "out")
    assert item["with_arm"]["mean_score"] == pytest.approx(0.7)
    assert item["without_arm"]["mean_score"] == pytest.approx(0.3)
    assert item["delta"] == pytest.approx(0.4) and item["grade"] == "A"
    # 0.7 ≥ threshold 0.7: the trial passes on the boundary
    assert item["with_arm"]["trials"][0]["passed"] is True


def test_weights_need_not_sum_to_one(byok_env, tmp_path):
    byok_env.add(with_arm("alpha"), without_arm("none"))
    graders = [
        {"type": "deterministic", "checks": ["alpha"], "weight": 3},
        {"type": "deterministic", "checks": ["beta"], "weight": 1},
    ]
    path = one_skill(tmp_path, simple_eval(graders))
    code, _, err = eval_cli(path, tmp_path / "out")
    assert code == 0, err
    assert item_of(tmp_path / "out")["with_arm"]["mean_score"] == pytest.approx(0.75)


def test_llm_rubric_grader(byok_env, tmp_path):
    srv = byok_env
    # the default judge scores the share of quoted terms the response contains
    srv.add(with_arm("We use pytest and fixtures."), without_arm("Just test it."))
    graders = [
        {"type": "deterministic", "checks": ["test"], "weight": 0.5},
        {"type": "llm_rubric", "rubric": "Mentions 'pytest' and 'fixtures'.", "weight": 0.5},
    ]
    path = one_skill(tmp_path, simple_eval(graders))
    code, _, err = run_cli(["eval", path, "--model", MODEL, "--judge-model", "judge-x", "--output", tmp_path / "out"])
    assert code == 0, err
    item = item_of(tmp_path / "out")
    assert item["with_arm"]["mean_score"] == pytest.approx(1.0)
    assert item["without_arm"]["mean_score"] == pytest.approx(0.5)
    assert item["grade"] == "A"
    judges = srv.judge_requests()
    assert len(judges) == 2
    for req in judges:
        assert req["model"] == "judge-x" and req["temperature"] == 0
        assert "response_format" in req
    g = item["with_arm"]["trials"][0]["graders"][1]
    assert g["type"] == "llm_rubric" and g["score"] == 1.0 and g["reasoning"]


def test_assertions_grader_in_eval_yaml(byok_env, tmp_path):
    srv = byok_env
    srv.add(with_arm("Use 'pytest' with a conftest"), without_arm("Use unittest"))
    graders = [{"type": "assertions", "assertions": ["Mentions 'pytest'", "Mentions 'conftest'"]}]
    path = one_skill(tmp_path, simple_eval(graders))
    code, _, err = eval_cli(path, tmp_path / "out")
    assert code == 0, err
    item = item_of(tmp_path / "out")
    assert item["with_arm"]["mean_score"] == 1.0 and item["without_arm"]["mean_score"] == 0.0
    # each assertion is its own fresh judge call: 2 assertions × 2 arms
    judges = srv.judge_requests()
    assert len(judges) == 4
    assert all(len(r["messages"]) == 2 for r in judges)


# ---------------------------------------------------------------- grades, pass rule, exit codes


def _ten_checks() -> list[dict]:
    return [{"type": "deterministic", "checks": [f"w{i}x" for i in range(10)]}]


def _words(n: int) -> str:
    return " ".join(f"w{i}x" for i in range(n)) or "nothing"


@pytest.mark.parametrize(
    "with_n, without_n, grade",
    [
        (3, 0, "A"),  # exactly +0.30
        (7, 4, "A"),  # 0.7 - 0.4 = 0.29999999999999993 in floating point: still A
        (2, 0, "B"),  # +0.20
        (5, 3, "B"),  # 0.5 - 0.3 = +0.2
        (4, 4, "C"),  # exactly 0
        (1, 0, "C"),  # +0.10
        (3, 4, "F"),  # -0.10
    ],
)
def test_grade_boundaries_through_cli(byok_env, tmp_path, with_n, without_n, grade):
    byok_env.add(with_arm(_words(with_n)), without_arm(_words(without_n)))
    path = one_skill(tmp_path, simple_eval(_ten_checks(), threshold=0.0))
    code, _, err = eval_cli(path, tmp_path / "out", "--ci")
    item = item_of(tmp_path / "out")
    assert item["grade"] == grade
    assert item["delta"] == pytest.approx((with_n - without_n) / 10)
    # threshold 0: every trial passes; only F fails the eval
    assert item["passed"] is (grade != "F")
    # one trial per arm: a pass is UNPROVEN, and --ci fails closed on it, saying why in one line
    assert code == 1, err
    why = err.strip().splitlines()[-1]
    assert why.startswith("exit 1: ") and ("grade F (delta -0.10)" if grade == "F" else "1 item unproven") in why
    assert read_json(tmp_path / "out/demo-plugin/greeter-eval.json")["verdict"] == ("FAIL" if grade == "F" else "UNPROVEN")


def test_exact_b_boundary_with_float_noise(byok_env, tmp_path):
    # 7/20 - 4/20 = 0.35 - 0.2 = 0.14999999999999997: the delta means +0.15 → B
    checks = [{"type": "deterministic", "checks": [f"w{i}x" for i in range(20)]}]
    byok_env.add(with_arm(_words(7)), without_arm(_words(4)))
    path = one_skill(tmp_path, simple_eval(checks, threshold=0.0))
    code, _, err = eval_cli(path, tmp_path / "out")
    assert code == 0, err
    assert item_of(tmp_path / "out")["grade"] == "B"


def test_trial_passes_at_exact_threshold(byok_env, tmp_path):
    # 6/10 = 0.6 = threshold → the trial passes, pass rate 1.0
    byok_env.add(with_arm(_words(6)), without_arm(_words(0)))
    path = one_skill(tmp_path, simple_eval(_ten_checks(), threshold=0.6))
    code, _, err = eval_cli(path, tmp_path / "out", "--ci", "--trials", "3")
    assert code == 0, err
    item = item_of(tmp_path / "out")
    assert item["with_arm"]["trials"][0]["passed"] is True
    assert item["pass_rate"] == 1.0 and item["passed"] is True


def test_pass_rate_below_threshold_fails_even_with_grade_a(byok_env, tmp_path):
    # with arm: score 0.5 < threshold 0.6 in every trial → pass rate 0, though delta +0.5 (A)
    byok_env.add(with_arm(_words(5)), without_arm(_words(0)))
    path = one_skill(tmp_path, simple_eval(_ten_checks(), threshold=0.6, trials=2))
    out = tmp_path / "out"
    code, stdout, err = eval_cli(path, out, "--ci")
    assert code == 1, err
    item = item_of(out)
    assert item["grade"] == "A" and item["pass_rate"] == 0.0 and item["passed"] is False
    assert read_json(out / "demo-plugin/greeter-eval.json")["verdict"] == "FAIL"
    assert "FAIL" in stdout
    # without --ci a failing eval still exits 0
    code, _, err = eval_cli(path, tmp_path / "out2")
    assert code == 0, err


def test_grade_f_fails_even_with_full_pass_rate(byok_env, tmp_path):
    byok_env.add(with_arm(_words(7)), without_arm(_words(10)))
    path = one_skill(tmp_path, simple_eval(_ten_checks(), threshold=0.5))
    code, _, err = eval_cli(path, tmp_path / "out", "--ci")
    item = item_of(tmp_path / "out")
    assert item["pass_rate"] == 1.0 and item["grade"] == "F" and item["passed"] is False
    assert code == 1, err


def test_pass_rate_counts_trials_of_the_with_arm(byok_env, tmp_path):
    # 2 of 4 with-arm trials score 1.0, the others 0.0: pass rate 0.5 ≥ threshold 0.5
    byok_env.add(with_arm(_words(10), times=2), with_arm(_words(0)), without_arm(_words(0)))
    path = one_skill(tmp_path, simple_eval(_ten_checks(), threshold=0.5, trials=4))
    code, _, err = eval_cli(path, tmp_path / "out", "--ci")
    assert code == 0, err
    item = item_of(tmp_path / "out")
    assert item["with_arm"]["passed_trials"] == 2
    assert item["pass_rate"] == 0.5 and item["with_arm"]["mean_score"] == 0.5
    assert item["passed"] is True


def test_threshold_flag_overrides_eval_yaml(byok_env, tmp_path):
    byok_env.add(with_arm(_words(5)), without_arm(_words(0)))
    path = one_skill(tmp_path, simple_eval(_ten_checks(), threshold=0.9))
    code, _, err = eval_cli(path, tmp_path / "out", "--ci", "--threshold", "0.5", "--trials", "3")
    assert code == 0, err
    item = item_of(tmp_path / "out")
    assert item["threshold"] == 0.5 and item["passed"] is True


# ---------------------------------------------------------------- presets, trials, parallel


@pytest.mark.parametrize("flag, n", [("--smoke", 5), ("--reliable", 15), ("--regression", 30), (None, 3)])
def test_presets_set_trials_per_arm(byok_env, tmp_path, flag, n):
    byok_env.add(with_arm("hello"))
    path = one_skill(tmp_path, simple_eval(trials=3))
    args = [flag] if flag else []
    code, _, err = eval_cli(path, tmp_path / "out", "--parallel", "16", *args)
    assert code == 0, err
    assert len(byok_env.trial_requests()) == 2 * n
    item = item_of(tmp_path / "out")
    assert item["with_arm"]["scored"] == n and item["without_arm"]["scored"] == n
    assert item["trials_requested"] == n


def test_trials_flag(byok_env, tmp_path):
    byok_env.add(with_arm("hello"))
    path = one_skill(tmp_path, simple_eval(trials=3))
    code, _, err = eval_cli(path, tmp_path / "out", "--trials", "2")
    assert code == 0, err
    assert len(byok_env.trial_requests()) == 4


@pytest.mark.parametrize("parallel", [1, 3])
def test_parallel_bounds_concurrency(byok_env, tmp_path, parallel):
    srv = byok_env
    srv.latency = 0.05
    srv.add(with_arm("hello"))
    path = one_skill(tmp_path, simple_eval(trials=6))
    code, _, err = eval_cli(path, tmp_path / "out", "--parallel", str(parallel))
    assert code == 0, err
    assert len(srv.trial_requests()) == 12
    assert srv.max_in_flight == parallel


def test_parallel_is_shared_across_evals_and_judge_calls(byok_env, tmp_path):
    srv = byok_env
    srv.latency = 0.03
    srv.add(with_arm("We use 'pytest'"))
    rubric = [{"type": "llm_rubric", "rubric": "Mentions 'pytest'."}]
    make_plugin(
        tmp_path,
        skills={n: {"prompt": SKILL_TEXT, "eval": simple_eval(rubric, trials=4)} for n in ("a", "b", "c")},
    )
    code, _, err = run_cli(["eval-all", tmp_path / "demo-plugin", "--model", MODEL, "--output", tmp_path / "out", "--parallel", "4"])
    assert code == 0, err
    assert len(srv.trial_requests()) == 24 and len(srv.judge_requests()) == 24
    assert 2 <= srv.max_in_flight <= 4


# ---------------------------------------------------------------- model selection


def test_model_from_env(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MODEL", "env-model")
    byok_env.add(with_arm("hello"))
    path = one_skill(tmp_path, simple_eval())
    code, _, err = run_cli(["eval", path, "--output", tmp_path / "out"])
    assert code == 0, err
    assert {r["model"] for r in byok_env.requests} == {"env-model"}
    # --model wins over the env
    code, _, err = run_cli(["eval", path, "--output", tmp_path / "out", "--model", "flag-model"])
    assert code == 0, err
    assert byok_env.requests[-1]["model"] == "flag-model"


def test_missing_model_is_one_line_exit_30(byok_env, tmp_path):
    path = one_skill(tmp_path, simple_eval())
    code, out, err = run_cli(["eval", path, "--output", tmp_path / "out"])
    assert code == 30
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "--model" in lines[0] and "AGENTSPROOF_MODEL" in lines[0]
    assert "Traceback" not in err + out
    assert not byok_env.requests
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- errored trials


def test_server_errors_make_trials_errored_not_zero(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "1")
    srv = byok_env
    # the first with-arm trial gets 500 twice (one try + one retry) → errored
    srv.add(Rule(status=500, system_contains=MARK, times=2), with_arm("hello"))
    path = one_skill(tmp_path, simple_eval(trials=3))
    out = tmp_path / "out"
    code, stdout, err = eval_cli(path, out, "--parallel", "1")
    assert code == 0, err
    item = item_of(out)
    w = item["with_arm"]
    assert w["errored"] == 1 and w["scored"] == 2
    bad = [t for t in w["trials"] if t["status"] == "errored"]
    assert len(bad) == 1
    assert "500" in bad[0]["error"] and bad[0]["score"] is None and bad[0]["passed"] is None
    # excluded from the arm's scores: mean over the 2 scored trials is 1.0, not 2/3
    assert w["mean_score"] == 1.0 and item["pass_rate"] == 1.0 and item["grade"] == "A"
    assert item["without_arm"]["errored"] == 0
    # retried once, then given up: 3 + 3 trial calls + 1 retry
    assert len(srv.trial_requests()) == 7
    md = (out / "demo-plugin/greeter-eval.md").read_text()
    html = (out / "demo-plugin/greeter-eval.html").read_text()
    assert "500" in md and "500" in html


def test_all_trials_errored_in_an_arm_is_exit_30_with_reason(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    byok_env.add(Rule(status=503, system_contains=MARK), without_arm("hi"))
    path = one_skill(tmp_path, simple_eval(trials=2))
    out = tmp_path / "out"
    code, stdout, err = eval_cli(path, out, "--ci")
    assert code == 30
    data = read_json(out / "demo-plugin/greeter-eval.json")
    item = data["items"][0]
    assert item["status"] == "errored" and item["grade"] is None and item["delta"] is None
    assert "503" in item["status_reason"]
    assert data["verdict"] == "ERROR" and data["overall"]["errored"] == 1


def test_retry_after_429_then_success_is_scored(byok_env, tmp_path):
    srv = byok_env
    srv.add(Rule(status=429, retry_after=0.01, times=2), with_arm("hello"))
    path = one_skill(tmp_path, simple_eval(trials=2))
    code, _, err = eval_cli(path, tmp_path / "out", "--parallel", "1")
    assert code == 0, err
    item = item_of(tmp_path / "out")
    assert item["with_arm"]["errored"] == 0 and item["without_arm"]["errored"] == 0
    assert item["with_arm"]["scored"] == 2
    assert len(srv.trial_requests()) == 6


def test_timed_out_attempt_is_retried_within_the_trial_budget(byok_env, tmp_path):
    srv = byok_env
    srv.add(Rule(reply="hello", delay=3.0, system_contains=MARK, times=1), with_arm("hello"))
    path = one_skill(tmp_path, simple_eval(trials=2, timeout=1.0))
    code, _, err = eval_cli(path, tmp_path / "out", "--parallel", "4")
    assert code == 0, err
    w = item_of(tmp_path / "out")["with_arm"]
    assert w["errored"] == 0 and w["scored"] == 2
    assert len([r for r in srv.trial_requests() if MARK in str(r["messages"])]) == 3  # one attempt timed out, then retried


def test_timeout_makes_trial_errored(byok_env, tmp_path):
    srv = byok_env
    srv.add(Rule(reply="hello", delay=3.0, system_contains=MARK), Rule(reply="hello"))
    path = one_skill(tmp_path, simple_eval(trials=1, timeout=0.4))
    code, _, err = eval_cli(path, tmp_path / "out", "--parallel", "4")
    assert code == 30, err  # the with-arm has no scored trial
    w = item_of(tmp_path / "out")["with_arm"]
    assert w["errored"] == 1 and w["scored"] == 0
    bad = w["trials"][0]
    assert "timed out" in bad["error"]  # cut before the 3 s reply arrived; how soon: bench/timings.py trial-budget


def test_dropped_connection_is_retried_then_scored(byok_env, tmp_path):
    srv = byok_env
    srv.add(Rule(drop=True, times=1), with_arm("hello"))
    path = one_skill(tmp_path, simple_eval())
    code, _, err = eval_cli(path, tmp_path / "out")
    assert code == 0, err
    item = item_of(tmp_path / "out")
    assert item["with_arm"]["errored"] == 0 and item["without_arm"]["errored"] == 0
    assert len(srv.trial_requests()) == 3


def test_dropped_connection_every_time_is_errored(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "2")
    srv = byok_env
    srv.add(Rule(drop=True, system_contains=MARK, times=3), with_arm("hello"))
    path = one_skill(tmp_path, simple_eval(trials=2))
    code, _, err = eval_cli(path, tmp_path / "out", "--parallel", "1")
    assert code == 0, err
    w = item_of(tmp_path / "out")["with_arm"]
    assert w["errored"] == 1 and w["scored"] == 1
    bad = next(t for t in w["trials"] if t["status"] == "errored")
    assert "connection" in bad["error"].lower() and "3 attempts" in bad["error"]


def test_judge_reply_not_json_is_retried_then_scored(byok_env, tmp_path):
    srv = byok_env
    srv.add(Rule(reply="Looks great to me!", judge=True, times=1), with_arm("We use 'pytest'"))
    rubric = [{"type": "llm_rubric", "rubric": "Mentions 'pytest'."}]
    path = one_skill(tmp_path, simple_eval(rubric))
    code, _, err = eval_cli(path, tmp_path / "out", "--parallel", "1")
    assert code == 0, err
    item = item_of(tmp_path / "out")
    assert item["with_arm"]["errored"] == 0 and item["without_arm"]["errored"] == 0
    assert len(srv.judge_requests()) == 3  # one retry
    retried = [r for r in srv.judge_requests() if len(r["messages"]) == 4]
    assert len(retried) == 1 and "could not be used" in retried[0]["messages"][3]["content"]


def test_judge_never_returns_json_errors_the_trial(byok_env, tmp_path):
    srv = byok_env
    srv.add(Rule(reply="I refuse to answer in JSON.", judge=True), with_arm("We use 'pytest'"))
    rubric = [
        {"type": "deterministic", "checks": ["pytest"]},
        {"type": "llm_rubric", "rubric": "Mentions 'pytest'."},
    ]
    path = one_skill(tmp_path, simple_eval(rubric))
    out = tmp_path / "out"
    code, _, err = eval_cli(path, out)
    assert code == 30  # no arm has a scored trial: the eval has no grade
    item = item_of(out)
    for arm in ("with_arm", "without_arm"):
        t = item[arm]["trials"][0]
        assert t["status"] == "errored" and t["score"] is None
        assert "llm_rubric" in t["error"] and "3 attempts" in t["error"]
        g = t["graders"][1]
        assert g["errored"] is True and g["score"] is None
    assert item["grade"] is None
    assert len(srv.judge_requests()) == 6  # 3 attempts per trial


def test_abort_after_consecutive_errors_writes_incomplete_report(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    byok_env.add(Rule(status=500))
    path = one_skill(tmp_path, simple_eval(trials=10))
    out = tmp_path / "out"
    code, _, err = eval_cli(path, out, "--parallel", "1", "--abort-after", "3")
    assert code == 30
    data = read_json(out / "demo-plugin/greeter-eval.json")
    assert data["incomplete"] is True and data["verdict"] == "INCOMPLETE"
    assert len(byok_env.trial_requests()) == 3
    assert "3 errored trials in a row" in err


# ---------------------------------------------------------------- eval-all


def test_eval_all_skills_and_agents(byok_env, tmp_path, monkeypatch):
    srv = byok_env
    srv.add(with_arm("hello"), Rule(reply="lgtm", system_contains="AGENTMARK", judge=False))
    plugin = make_plugin(
        tmp_path,
        plugin="my-plugin",
        skills={
            "good": {"prompt": SKILL_TEXT, "eval": simple_eval(trials=2)},
            "weak": {"prompt": "no marker here\n", "eval": simple_eval(trials=2)},
        },
        agents={"rev": {"prompt": "AGENTMARK\n", "eval": simple_eval([{"type": "deterministic", "checks": ["lgtm"]}], trials=2)}},
    )
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(["eval-all", plugin, "--model", MODEL, "--ci"])
    assert code == 1, err  # "weak" gets delta 0 and pass rate 0 → FAIL
    base = tmp_path / "runs" / "my-plugin"
    for name in ("my-plugin-eval.html", "eval-all-summary.md", "eval-all-summary.json"):
        assert (base / name).is_file(), name
    data = read_json(base / "eval-all-summary.json")
    assert data["command"] == "eval-all" and data["plugin"] == "my-plugin"
    items = {i["name"]: i for i in data["items"]}
    assert set(items) == {"good", "weak", "rev"}
    assert items["good"]["grade"] == "A" and items["good"]["passed"]
    assert items["rev"]["kind"] == "agent" and items["rev"]["grade"] == "A"
    assert items["weak"]["grade"] == "C" and not items["weak"]["passed"]
    assert data["skills"]["total"] == 2 and data["skills"]["passed"] == 1 and data["skills"]["failed"] == 1
    assert data["agents"]["total"] == 1 and data["agents"]["passed"] == 1
    assert data["overall"]["avg_delta"] == pytest.approx(2 / 3)
    assert data["verdict"] == "FAIL"
    assert len(srv.trial_requests()) == 12
    html = (base / "my-plugin-eval.html").read_text()
    assert "Agents" in html and "Skills" in html
    # without --ci the same failing run exits 0
    code, _, err = run_cli(["eval-all", plugin, "--model", MODEL, "--output", tmp_path / "o2"])
    assert code == 0, err


def test_eval_all_skills_only_report_has_no_agents_section_data(byok_env, tmp_path):
    byok_env.add(with_arm("hello"))
    plugin = make_plugin(tmp_path, skills={"a": {"prompt": SKILL_TEXT, "eval": simple_eval()}})
    code, _, err = run_cli(["eval-all", plugin, "--model", MODEL, "--output", tmp_path / "out", "--ci", "--trials", "3"])
    assert code == 0, err
    data = read_json(tmp_path / "out/demo-plugin/eval-all-summary.json")
    assert data["agents"]["total"] == 0 and data["skills"]["total"] == 1


def test_eval_all_validates_every_file_before_any_call(byok_env, tmp_path):
    """A bad file is listed before any call and the others run; --strict refuses the run."""
    plugin = make_plugin(
        tmp_path,
        skills={
            "ok": {"prompt": SKILL_TEXT, "eval": simple_eval()},
            "zz-bad": {"prompt": SKILL_TEXT, "eval": {**simple_eval(), "defaults": {"trialz": 1}}},
        },
    )
    code, out, err = run_cli(["eval-all", plugin, "--model", MODEL, "--output", tmp_path / "out", "--strict"])
    assert code == 30
    assert "zz-bad" in err and "defaults.trialz" in err
    assert not byok_env.requests
    byok_env.add(with_arm("hello"))
    code, out, err = run_cli(["eval-all", plugin, "--model", MODEL, "--output", tmp_path / "out"])
    assert code == 0, err
    assert err.index("defaults.trialz") < err.index("done: ")  # listed before the first trial ran
    data = read_json(tmp_path / "out/demo-plugin/eval-all-summary.json")
    assert [i["name"] for i in data["items"]] == ["ok"]
    assert "defaults.trialz" in data["settings"]["refused"][0]["error"]


def test_eval_all_mixed_yaml_versions(byok_env, tmp_path):
    byok_env.add(with_arm("hello"))
    v1 = {
        "version": "1",
        "tasks": [{"name": "t", "instruction": "hi", "graders": [{"type": "deterministic", "checks": ["hello"]}]}],
    }
    plugin = make_plugin(tmp_path, skills={"old": {"prompt": SKILL_TEXT, "eval": v1}, "new": {"prompt": SKILL_TEXT, "eval": simple_eval()}})
    code, _, err = run_cli(["eval-all", plugin, "--model", MODEL, "--output", tmp_path / "out", "--ci", "--trials", "3"])
    assert code == 0, err
    data = read_json(tmp_path / "out/demo-plugin/eval-all-summary.json")
    assert sorted(i["grade"] for i in data["items"]) == ["A", "A"]


# ---------------------------------------------------------------- secrets and escaping


def test_api_key_never_reaches_reports_or_output(byok_env, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSPROOF_MAX_RETRIES", "0")
    srv = byok_env
    srv.add(Rule(status=401, system_contains=MARK, times=1), with_arm("hello"))
    rubric = [{"type": "deterministic", "checks": ["hello"]}, {"type": "llm_rubric", "rubric": "Says 'hello'."}]
    path = one_skill(tmp_path, simple_eval(rubric, trials=2))
    out = tmp_path / "out"
    code, stdout, err = eval_cli(path, out, "--parallel", "1")
    assert (out / "demo-plugin/latest/greeter-eval.json").is_file()  # a 401 stops the run: its report in its own run folder
    blob = all_output_text(out, stdout, err)
    assert "401" in blob  # the failure is reported...
    assert SECRET_KEY not in blob  # ...without the key
    assert "sk-test" not in blob


def test_model_output_is_escaped_in_html(byok_env, tmp_path):
    byok_env.add(with_arm("hello <script>alert('x')</script>"))
    path = one_skill(tmp_path, simple_eval())
    code, _, err = eval_cli(path, tmp_path / "out")
    assert code == 0, err
    html = (tmp_path / "out/demo-plugin/greeter-eval.html").read_text()
    assert "<script>alert('x')</script>" not in html
    assert "&lt;script&gt;" in html


def test_eval_yaml_file_written_by_hand_in_spec_format(byok_env, tmp_path):
    """The example from the spec, verbatim apart from the strings."""
    byok_env.add(with_arm("expected keyword and pattern-42, all steps covered"))
    spec_yaml = """\
version: "2"
skill: SKILL.md

defaults:
  trials: 1
  timeout: 300
  threshold: 0.6

task:
  name: my-task-name
  instruction: |
    The natural language prompt sent to the agent.
  graders:
    - type: deterministic
      checks:
        mustContain:
          - "expected keyword"
        mustNotContain:
          - "forbidden string"
        regexMatch:
          - "pattern-\\\\d+"
      weight: 0.7

    - type: llm_rubric
      rubric: |
        Correctness (0-0.5): mentions 'expected keyword'.
        Completeness (0-0.5): mentions 'all steps'.
      weight: 0.3
"""
    assert yaml.safe_load(spec_yaml)["task"]["graders"][0]["checks"]["regexMatch"] == ["pattern-\\d+"]
    make_plugin(tmp_path, skills={"greeter": {"prompt": SKILL_TEXT, "eval": spec_yaml}})
    code, _, err = eval_cli(tmp_path / "demo-plugin/skills/greeter/eval.yaml", tmp_path / "out")
    assert code == 0, err
    item = item_of(tmp_path / "out")
    assert item["with_arm"]["mean_score"] == pytest.approx(1.0)
    # baseline "OK": fails mustContain and regex, passes mustNotContain (1/3), judge 0 → 0.7/3
    assert item["without_arm"]["mean_score"] == pytest.approx(0.7 / 3)


def test_judge_calls_obey_the_eval_timeout(byok_env, tmp_path):
    """A judge that never answers in time: the trial errors with the eval's timeout (per
    attempt, retries included) instead of waiting on the judge: a judge that was waited for
    would answer score 1 after its 10 s. (How soon it stops: bench/timings.py, judge-timeout.)"""
    srv = byok_env
    srv.add(Rule(reply='{"score": 1, "reasoning": "late"}', judge=True, delay=10.0), with_arm("hello"))
    path = one_skill(tmp_path, simple_eval([{"type": "llm_rubric", "rubric": "says hello"}], trials=1, timeout=1.0))
    code, _, err = eval_cli(path, tmp_path / "out")
    assert code == 30, err
    w = item_of(tmp_path / "out")["with_arm"]
    assert w["errored"] == 1
    # the judge's deadline ("ran out of the eval's timeout") or, on a loaded machine, the retry
    # budget's message ("timed out after 0.5s … no retry fits in the 1s budget") says why
    assert re.search(r"\b(?:timeout|timed out)\b", w["trials"][0]["error"]), w["trials"][0]["error"]
