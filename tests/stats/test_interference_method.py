"""The interference verdict names the question its interval answers, and that interval's method."""

from __future__ import annotations

from helpers import item

from agentsproof.model.results import ArmResult, TrialResult
from agentsproof.stats.interference import interference
from agentsproof.stats.score import SCORE_METHOD
from agentsproof.stats.tasks import BETTING_METHOD
from agentsproof.stats.wald import QUASI_METHOD


def _with_cases(res, cases: int, plugin_scores):
    for arm in (res.with_arm, res.without_arm):
        for t in arm.trials:
            t.case = f"c{t.index % cases}"
    trials = [TrialResult(index=i, arm="plugin", status="scored", score=s, passed=s >= 0.5, case=f"c{i % cases}")
              for i, s in enumerate(plugin_scores)]
    res.plugin_arm = ArmResult(arm="plugin", system_prompt_kind="plugin", trials=trials).summarize()
    return res


def test_five_cases_answer_tasks_like_these_with_the_betting_interval():
    res = _with_cases(item([1.0, 0.0] * 10, [0.0] * 20), 5, [1.0] * 20)
    out = interference(res)
    assert out["question"] == "tasks"
    assert out["method"] == "plugin − alone, on tasks like these (b): " + BETTING_METHOD


def test_one_case_answers_these_cases_with_the_score_interval_for_pass_fail():
    res = _with_cases(item([1.0, 0.0] * 5, [0.0] * 10), 1, [1.0] * 10)
    out = interference(res)
    assert out["question"] == "cases"
    assert out["method"] == "plugin − alone, on these cases (a): " + SCORE_METHOD


def test_one_case_answers_these_cases_with_the_welch_interval_for_graded():
    res = _with_cases(item([1.0, 0.5] * 5, [0.0] * 10), 1, [0.75] * 10)
    out = interference(res)
    assert out["question"] == "cases"
    assert out["method"] == "plugin − alone, on these cases (a): " + QUASI_METHOD



def test_verdict_reads_the_printed_ends():
    from agentsproof.stats.interference import verdict_of

    assert verdict_of((-0.3, -0.004)) == "none shown"  # prints [-0.30, -0.00]: includes 0
    assert verdict_of((-0.3, -0.006)) == "interferes"  # prints -0.01
    assert verdict_of((0.004, 0.3)) == "none shown"  # prints +0.00
    assert verdict_of((0.006, 0.3)) == "helps"
