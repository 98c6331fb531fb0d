"""Build ItemResult / RunResult objects with known trial scores and check results."""

from __future__ import annotations

import math
from typing import Sequence

from agentsproof.model.results import ArmResult, CheckResult, GraderResult, ItemResult, RunResult, TrialResult, compute_grade
from agentsproof.stats import item_stats


def arm(name: str, scores: Sequence[float | None], threshold: float = 0.5, checks: Sequence[Sequence[tuple[str, bool]]] | None = None) -> ArmResult:
    trials = []
    for i, s in enumerate(scores):
        if s is None:
            trials.append(TrialResult(index=i, arm=name, status="errored", error="HTTP 500: scripted"))
            continue
        gr = []
        if checks is not None:
            gr = [GraderResult(type="deterministic", weight=1.0, score=s, checks=[CheckResult(kind="mustContain", target=t, passed=p) for t, p in checks[i]])]
        trials.append(TrialResult(index=i, arm=name, status="scored", score=s, passed=s >= threshold - 1e-9, graders=gr))
    return ArmResult(arm=name, system_prompt_kind="skill" if name == "with" else "baseline", trials=trials).summarize()


def item(with_scores, without_scores, *, id: str = "skills/x", sha: str = "abc", with_checks=None, without_checks=None, threshold: float = 0.5) -> ItemResult:
    w = arm("with", with_scores, threshold, with_checks)
    wo = arm("without", without_scores, threshold, without_checks)
    res = ItemResult(
        id=id, name=id.split("/")[-1], kind="skill", eval_path=None, source_path="SKILL.md", source_sha256=sha,
        task_name="t", instruction="i", threshold=threshold, trials_requested=len(with_scores), with_arm=w, without_arm=wo,
    )
    if w.mean_score is not None and wo.mean_score is not None:
        res.delta = w.mean_score - wo.mean_score
        res.grade = compute_grade(res.delta)
        res.pass_rate = w.pass_rate
    else:
        res.status = "errored"
    res.stats = item_stats(res)
    return res


def passfail(passed: int, failed: int, errored: int = 0) -> list[float | None]:
    return [1.0] * passed + [0.0] * failed + [None] * errored


def run(items: list[ItemResult], **kw) -> RunResult:
    base = dict(tool_version="0.1.0", command="eval-all", plugin="p", provider="openai", model="m", judge_model="m", settings={"trials": 10})
    base.update(kw)
    return RunResult(items=items, **base)


def fisher_two_sided(a: int, n1: int, b: int, n2: int) -> float:
    """Independent Fisher exact test: sum the hypergeometric tables no likelier than the observed one."""
    s = a + b
    total = math.comb(n1 + n2, s)

    def pmf(x: int) -> float:
        return math.comb(n1, x) * math.comb(n2, s - x) / total

    obs = pmf(a)
    return min(1.0, sum(pmf(x) for x in range(max(0, s - n2), min(n1, s) + 1) if pmf(x) <= obs * (1 + 1e-7)))
