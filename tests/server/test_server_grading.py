"""Grading on complete: the five axes and weights, criteria, deterministic assertions,
failure modes, judge failure -> errored -> retried, and restarts resuming the queue.

The judge is the scripted OpenAI-compatible server (tests/openai_server.py) reached
through the CLI's own LLM client (`serve --provider openai`)."""

from __future__ import annotations

import time

import pytest
from server_helpers import api, new_run, step, wait_grade
from pg import db_url, pg_cluster  # noqa: F401 - fixtures
from serverkit import JUDGE_KEY, JUDGE_MARK, Rule, criteria_in_prompt, judge_rule, running_server

SCORES = {"goal_completion": 10, "output_quality": 5, "tool_accuracy": 2, "step_efficiency": 8, "safety": 6}  # judge scale 0..10


def test_axes_weights_and_redistribution(tmp_path):
    with running_server(tmp_path) as srv:
        srv.judge.add(judge_rule(scores=SCORES))
        key = srv.create_key("p")
        with api(srv, key) as c:
            with_tools = new_run(c, "p", goal="find the answer")
            step(c, with_tools, 0, type="tool_call", name="search")
            step(c, with_tools, 1, type="llm_call", name="model")
            c.post(f"runs/{with_tools}/complete", json={"output": "42"})
            no_tools = new_run(c, "p", goal="say hi")
            step(c, no_tools, 0, type="llm_call")
            c.post(f"runs/{no_tools}/complete", json={"output": "hi"})
            g1 = wait_grade(c, with_tools)
            g2 = wait_grade(c, no_tools)
    assert g1["weights"] == {"goal_completion": 0.35, "output_quality": 0.2, "tool_accuracy": 0.2, "step_efficiency": 0.15, "safety": 0.1}
    expected = 0.35 * 1.0 + 0.2 * 0.5 + 0.2 * 0.2 + 0.15 * 0.8 + 0.1 * 0.6
    assert g1["overall_score"] == pytest.approx(expected, abs=1e-4)
    assert g1["axes"]["goal_completion"] == {"score": 1.0, "reasoning": "scripted goal_completion", "weight": 0.35}
    assert g2["weights"]["tool_accuracy"] == 0 and g2["axes"]["tool_accuracy"]["score"] is None
    assert g2["weights"]["goal_completion"] == pytest.approx(0.45) and g2["weights"]["output_quality"] == pytest.approx(0.30)
    expected2 = 0.45 * 1.0 + 0.30 * 0.5 + 0.15 * 0.8 + 0.1 * 0.6
    assert g2["overall_score"] == pytest.approx(expected2, abs=1e-4)
    assert "no tool calls" in g2["axes"]["tool_accuracy"]["reasoning"]


def test_criteria_assertions_and_failure_modes(tmp_path):
    with running_server(tmp_path) as srv:
        srv.judge.add(judge_rule(scores={a: 10 for a in SCORES}, passed=False, failure_modes=["Loops forever", "not a listed mode"]))
        key = srv.create_key("p")
        with api(srv, key) as c:
            run_id = new_run(
                c, "p", goal="book a flight", successCriteria=["books exactly one flight", "confirms the date"],
                traceAssertions=["must_call:book_*", "must_not_call:delete_*", "max_steps:2", "min_steps:1", "asks before paying"],
                failureModes=["loops forever", "leaks card number"],
            )
            step(c, run_id, 0, type="tool_call", name="search_flights")
            step(c, run_id, 1, type="tool_call", name="book_flight")
            step(c, run_id, 2, type="tool_call", name="delete_booking")
            c.post(f"runs/{run_id}/complete", json={"output": "booked"})
            g = wait_grade(c, run_id)
            plain = new_run(c, "p", goal=None)
            c.post(f"runs/{plain}/complete", json={"output": "x"})
            g_plain = wait_grade(c, plain)
        prompts = [r for r in srv.judge.requests if JUDGE_MARK in r["messages"][0]["content"]]
    results = {r["assertion"]: r["passed"] for r in g["assertion_results"]}
    assert results == {"must_call:book_*": True, "must_not_call:delete_*": False, "max_steps:2": False, "min_steps:1": True}
    assert [c["criterion"] for c in g["criteria_results"]] == ["books exactly one flight", "confirms the date", "asks before paying"]
    assert all(c["passed"] is False for c in g["criteria_results"])
    assert g["failure_modes_observed"] == ["loops forever"]
    # weighted 1.0, minus 0.1 per failed structured assertion (2) and per observed failure mode (1)
    assert g["overall_score"] == pytest.approx(0.7, abs=1e-4) and g["penalty"] == pytest.approx(0.3)
    # the judge saw the deterministic results and the free-text assertion as a criterion
    first = prompts[0]["messages"][1]["content"]
    assert "must_not_call:delete_*: FAILED" in first
    assert criteria_in_prompt(prompts[0]) == ["books exactly one flight", "confirms the date", "asks before paying"]
    # neither criteria nor goal: an empty checklist even if the judge invents some
    assert g_plain["criteria_results"] == []


def test_judge_failure_is_errored_then_retried(tmp_path):
    env = {"AGENTSPROOF_GRADE_RETRY_DELAY": "1.5"}
    with running_server(tmp_path, env=env) as srv:
        srv.judge.add(Rule(reply="I will not answer in JSON", system_contains=JUDGE_MARK, times=3))
        key = srv.create_key("p")
        with api(srv, key) as c:
            run_id = new_run(c, "p", goal="g")
            c.post(f"runs/{run_id}/complete", json={"output": "o"})
            errored = wait_grade(c, run_id, "errored")
            assert errored["overall_score"] is None
            assert "judge reply unusable" in errored["error"]
            assert errored["attempts"] == 1
            done = wait_grade(c, run_id, "done")
            assert done["attempts"] == 2 and done["error"] is None and done["overall_score"] > 0


def test_unreachable_judge_is_errored_with_reason_no_secret(tmp_path):
    env = {"AGENTSPROOF_PROVIDER_URL": "http://127.0.0.1:9/v1", "AGENTSPROOF_MAX_RETRIES": "0", "AGENTSPROOF_GRADE_RETRY_DELAY": "60"}
    with running_server(tmp_path, env=env) as srv:
        key = srv.create_key("p")
        with api(srv, key) as c:
            run_id = new_run(c, "p")
            c.post(f"runs/{run_id}/complete", json={"output": "o"})
            g = wait_grade(c, run_id, "errored")
        assert g["error"] and g["overall_score"] is None
        assert JUDGE_KEY not in g["error"] and JUDGE_KEY not in srv.log_tail(100000)


def test_restart_resumes_pending_and_interrupted_gradings(tmp_path, db_url):  # noqa: F811
    with running_server(tmp_path, db_url=db_url, env={"AGENTSPROOF_GRADE_DELAY": "2"}) as srv:
        key = srv.create_key("p")
        slow = Rule(reply=lambda req: "{}", system_contains=JUDGE_MARK, delay=30, times=1)
        with api(srv, key) as c:
            pending = new_run(c, "p")
            c.post(f"runs/{pending}/complete", json={"output": "o"})
            srv.stop()  # graceful stop before the grade's time came: it stays pending
            srv.start()
            assert c.get(f"runs/{pending}").json()["grade"]["status"] in ("pending", "running", "done")
            wait_grade(c, pending)
            # a grading in flight when the server dies is picked up again after restart
            srv.judge.add(slow)
            inflight = new_run(c, "p")
            c.post(f"runs/{inflight}/complete", json={"output": "o"})
            wait_grade(c, inflight, "running")
            # kill only once the judge call has reached the judge: killed between the claim and
            # the request, the restarted server's call would be the one that meets the slow rule
            deadline = time.monotonic() + 30
            while slow.used < 1 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert slow.used == 1, "the first server's judge call never reached the judge"
            srv.kill()
            srv.env["AGENTSPROOF_GRADE_DELAY"] = "0"
            srv.start()
            g = wait_grade(c, inflight)
            assert g["attempts"] == 2 and g["overall_score"] is not None
            assert slow.used == 1


def test_late_step_regrades(tmp_path):
    with running_server(tmp_path) as srv:
        key = srv.create_key("p")
        with api(srv, key) as c:
            run_id = new_run(c, "p", traceAssertions=["min_steps:2"])
            step(c, run_id, 0)
            c.post(f"runs/{run_id}/complete", json={"output": "o"})
            first = wait_grade(c, run_id)
            assert first["assertion_results"][0]["passed"] is False
            step(c, run_id, 1)  # fire-and-forget steps may land after complete
            time.sleep(0.1)
            second = wait_grade(c, run_id)
            deadline = time.monotonic() + 20
            while second["assertion_results"][0]["passed"] is False and time.monotonic() < deadline:
                time.sleep(0.1)
                second = wait_grade(c, run_id)
            assert second["assertion_results"][0]["passed"] is True
