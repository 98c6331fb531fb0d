"""Single-arm regression runs (``--baseline none``).

A grade compares two arms, so a run with one arm has none. What it has instead, per item
or case: the pass rate of its trials with an exact (Clopper–Pearson) 95 % interval, whether it is **flaky**
(some trials passed, some failed), and its errored trials (left out of the rate, as
always). An item passes when its pass rate reaches the threshold; ``--ci`` exits 1 when
any item does not.
"""

from __future__ import annotations

from typing import Any

from agentsproof.model.results import ArmResult, ItemResult

SINGLE_ARM_NOTE = "single-arm run (--baseline none): no baseline arm, so no delta and no grade"


def is_flaky(arm: ArmResult) -> bool:
    """True when some scored trials of the arm passed and some failed."""
    passed = arm.passed_trials
    return 0 < passed < arm.scored


def single_arm_stats(arm: ArmResult) -> dict[str, Any]:
    """The stats of a single-arm item: the with-skill arm's stats, whether it is flaky, and the note that there is no baseline."""
    from agentsproof.stats.item import arm_stats

    return {
        "single_arm": True,
        "with": arm_stats(arm),
        "flaky": is_flaky(arm),
        "note": SINGLE_ARM_NOTE,
    }


def grade_single_arm(res: ItemResult, incomplete: bool) -> ItemResult:
    """Fill in an item of a single-arm run: pass rate, pass/fail, errored; no delta/grade."""
    w = res.with_arm
    res.pass_rate = w.pass_rate
    res.stats = single_arm_stats(w)
    if w.mean_score is None:
        res.status = "errored"
        first = next((t.error for t in w.trials if t.error), None)
        res.status_reason = "no scored trial" + (f"; first error: {first}" if first else "")
        res.passed = False
        return res
    res.passed = (res.pass_rate or 0.0) >= res.threshold - 1e-9
    if incomplete:
        res.status = "incomplete"
        res.status_reason = f"{w.scored + w.errored} of {res.trials_requested} trials ran before the run stopped"
    if is_flaky(w):
        res.suggestions = [
            f"flaky: {w.passed_trials} of {w.scored} trials passed; run more trials (--reliable) to measure its pass rate, "
            "or tighten the prompt or the checks that flip"
        ]
    return res


def flaky_items(items: list[ItemResult]) -> list[ItemResult]:
    """The items of a single-arm run marked flaky."""
    return [i for i in items if i.stats.get("flaky")]
