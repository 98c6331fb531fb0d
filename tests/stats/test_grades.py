"""Grades, trial scores and the pass rule (pure logic on the real result models)."""

from __future__ import annotations

import pytest

from agentsproof.executor.finalize import build_run, finalize_item
from agentsproof.executor.runner import ItemRun
from agentsproof.model.items import EvalItem
from agentsproof.grading.grade import combine
from agentsproof.model.results import ArmResult, GraderResult, TrialResult, compute_grade


@pytest.mark.parametrize(
    "delta, grade",
    [
        (0.30, "A"), (1.0, "A"), (0.45 - 0.15, "A"), (0.7 - 0.4, "A"), (0.3 - 1e-12, "A"),
        (0.2949, "B"), (0.15, "B"), (0.35 - 0.2, "B"), (0.25, "B"),
        (0.1449, "C"), (0.0, "C"), (-0.0, "C"), (0.1 + 0.2 - 0.3, "C"), (0.3 - 0.1 - 0.2, "C"),
        (-0.0051, "F"), (-1.0, "F"), (-0.15, "F"),
        # the grade of the printed number: +0.1499 prints "+0.15", −0.0001 prints "+0.00"
        (0.2999, "A"), (0.1499, "B"), (-0.0001, "C"), (-0.0049, "C"),
    ],
)  # fmt: skip
def test_compute_grade_bands(delta, grade):
    assert compute_grade(delta) == grade


def g(score, weight, errored=False):
    return GraderResult(type="deterministic", weight=weight, score=None if errored else score, errored=errored)


def test_combine_weighted_average():
    assert combine([g(1.0, 0.7), g(0.0, 0.3)]) == pytest.approx(0.7)
    assert combine([g(0.5, 1), g(1.0, 3)]) == pytest.approx(0.875)
    assert combine([g(0.4, 2)]) == pytest.approx(0.4)


def test_combine_no_graders_is_one_and_errored_is_none():
    assert combine([]) == 1.0
    assert combine([g(1.0, 1), g(0, 1, errored=True)]) is None


def _trial(arm, i, score=None, threshold=0.6):
    if score is None:
        return TrialResult(index=i, arm=arm, status="errored", error="HTTP 500")
    return TrialResult(index=i, arm=arm, status="scored", score=score, passed=score >= threshold - 1e-9)


def _item(with_scores, without_scores, threshold=0.6):
    item = EvalItem(
        id="skills/x", name="x", kind="skill", source_path="S.md", system_prompt="s", task_name="t", prompt="p",
        graders=[], trials=len(with_scores), timeout=10, threshold=threshold,
    )  # fmt: skip
    w = ArmResult(arm="with", system_prompt_kind="skill", trials=[_trial("with", i, s, threshold) for i, s in enumerate(with_scores)])
    wo = ArmResult(arm="without", system_prompt_kind="baseline", trials=[_trial("without", i, s, threshold) for i, s in enumerate(without_scores)])
    return finalize_item(ItemRun(item=item, with_arm=w.summarize(), without_arm=wo.summarize()))


def test_errored_trials_are_excluded_not_zero():
    res = _item([1.0, None, 0.5], [0.0, 0.0, None])
    assert res.with_arm.scored == 2 and res.with_arm.errored == 1
    assert res.with_arm.mean_score == pytest.approx(0.75)
    assert res.without_arm.mean_score == 0.0
    assert res.pass_rate == 0.5  # 1 of 2 scored trials ≥ 0.6
    assert res.delta == pytest.approx(0.75) and res.grade == "A"


def test_pass_rule_threshold_boundary_and_f():
    assert _item([0.6, 0.6], [0.0, 0.0]).passed  # score == threshold passes; pass rate 1.0
    assert not _item([0.59, 0.59], [0.0, 0.0]).passed
    assert _item([1.0, 0.0], [0.0, 0.0], threshold=0.5).passed  # pass rate 0.5 ≥ 0.5
    assert not _item([1.0, 0.0, 0.0], [0.0, 0.0, 0.0], threshold=0.5).passed  # 1/3 < 0.5
    f = _item([0.9], [1.0], threshold=0.5)
    assert f.grade == "F" and f.pass_rate == 1.0 and not f.passed


def test_item_without_scored_arm_is_errored_without_grade():
    res = _item([None, None], [1.0, 1.0])
    assert res.status == "errored" and res.grade is None and res.delta is None and not res.passed
    assert "with-skill" in res.status_reason and "HTTP 500" in res.status_reason


def test_run_summary_and_verdict():
    good, bad, err = _item([1.0], [0.0]), _item([0.0], [0.0]), _item([None], [1.0])
    run = build_run("eval-all", "p", [good, bad, err], provider="openai", model="m", judge_model="m", settings={})
    assert (run.overall.total, run.overall.passed, run.overall.failed, run.overall.errored) == (3, 1, 1, 1)
    assert run.overall.avg_delta == pytest.approx(0.5)
    assert run.verdict == "ERROR"
    assert build_run("eval", "p", [good, bad], provider="o", model="m", judge_model="m", settings={}).verdict == "FAIL"
    # one trial per arm: it passed, but on too few trials to say anything (never a green PASS)
    assert build_run("eval", "p", [good], provider="o", model="m", judge_model="m", settings={}).verdict == "UNPROVEN"
    proven = _item([1.0] * 3, [0.0] * 3)
    assert build_run("eval", "p", [proven], provider="o", model="m", judge_model="m", settings={}).verdict == "PASS"
