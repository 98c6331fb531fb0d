"""Graders: each is a function of (response or trial context, spec) returning a GraderResult.

``grade_all`` runs a trial's graders and ``combine`` turns them into the trial score:
the weighted average of the grader scores. Any errored grader makes the trial errored.
A grader never raises: whatever goes wrong becomes an errored result with its reason.
"""

from __future__ import annotations

import asyncio
from typing import Sequence

from agentsproof.model.evalfile import (
    AssertionsGrader,
    DeterministicGrader,
    FilesGrader,
    GraderConfig,
    LLMRubricGrader,
    PairwiseGrader,
    ScriptGrader,
    SkillUsedGrader,
    ToolCallsGrader,
)
from agentsproof.grading.assertions import grade_assertions
from agentsproof.grading.context import TrialContext, judged_response
from agentsproof.grading.deterministic import grade_deterministic
from agentsproof.grading.judge import Judge, JudgeError
from agentsproof.grading.llm_rubric import grade_rubric
from agentsproof.model.results import GraderResult

__all__ = ["Judge", "JudgeError", "TrialContext", "grade_all", "combine", "failed_gate", "needs_judge"]

JUDGED = (LLMRubricGrader, AssertionsGrader, PairwiseGrader)


def needs_judge(graders: Sequence[GraderConfig]) -> bool:
    return any(isinstance(g, JUDGED) for g in graders)


async def _grade_one(response: str, spec: GraderConfig, judge: Judge | None, task: str, ctx: TrialContext) -> GraderResult:
    if isinstance(spec, DeterministicGrader):
        return grade_deterministic(response, spec)
    if isinstance(spec, FilesGrader):
        from agentsproof.grading.files import grade_files

        return grade_files(spec, ctx)
    if isinstance(spec, ScriptGrader):
        from agentsproof.grading.script import grade_script

        return await grade_script(spec, ctx)
    if isinstance(spec, ToolCallsGrader):
        from agentsproof.grading.tool_calls import grade_tool_calls

        return grade_tool_calls(spec, ctx)
    if isinstance(spec, SkillUsedGrader):
        from agentsproof.grading.skill_used import grade_skill_used

        return grade_skill_used(spec, ctx)
    if judge is None:
        raise RuntimeError("an LLM grader needs a judge")
    shown = judged_response(response, ctx)
    if isinstance(spec, LLMRubricGrader):
        return await grade_rubric(shown, spec, judge, task)
    if isinstance(spec, AssertionsGrader):
        return await grade_assertions(shown, spec, judge, task)
    raise TypeError(f"unknown grader {type(spec).__name__}")


async def _grade_safely(response: str, spec: GraderConfig, judge: Judge | None, task: str, ctx: TrialContext) -> GraderResult:
    try:
        return await _grade_one(response, spec, judge, task, ctx)
    except Exception as err:  # noqa: BLE001 - an errored grader, never an exception out of grading
        reason = " ".join(f"{type(err).__name__}: {err}".split())[:400]
        return GraderResult(
            type=str(getattr(spec, "type", type(spec).__name__)),
            weight=float(getattr(spec, "weight", 1.0)),
            errored=True,
            error=f"grader failed: {reason}",
        )


async def grade_all(
    response: str,
    graders: Sequence[GraderConfig],
    judge: Judge | None,
    task: str,
    *,
    timeout: float | None = None,
    context: TrialContext | None = None,
) -> list[GraderResult]:
    """Run every grader of one trial (concurrently); one result per grader, in order.

    ``timeout`` (the eval's ``timeout``, seconds) bounds all judge calls of this trial
    together, retries and re-asks included; a grader that runs out of it is errored with
    the reason. None keeps the judge's own per-call timeout only. ``context`` carries what an
    agent trial left (workspace, files, trajectory) for the agent graders and the judges.
    """
    if judge is not None:
        judge = judge.within(timeout)
    graders = [g for g in graders if not isinstance(g, PairwiseGrader)]  # judged per pair after both arms ran
    ctx = context or TrialContext(answer=response, timeout=timeout)
    # Script graders may write in the workspace: they run one by one after the others have read it.
    first = [i for i, g in enumerate(graders) if not isinstance(g, ScriptGrader)]
    results: dict[int, GraderResult] = dict(
        zip(first, await asyncio.gather(*(_grade_safely(response, graders[i], judge, task, ctx) for i in first)))
    )
    for i, g in enumerate(graders):
        if i not in results:
            results[i] = await _grade_safely(response, g, judge, task, ctx)
    return [results[i] for i in range(len(graders))]


def combine(results: Sequence[GraderResult]) -> float | None:
    """Weighted average of grader scores; None if any grader errored. No graders → 1.0."""
    if any(r.errored or r.score is None for r in results):
        return None
    total = sum(r.weight for r in results)
    if not results or total <= 0:
        return 1.0
    return sum(r.score * r.weight for r in results) / total  # type: ignore[operator]


def failed_gate(specs: Sequence[GraderConfig], results: Sequence[GraderResult]) -> bool:
    """True when a grader marked ``required`` (EVAL.yaml's ``required``, ``min_score`` or an
    LLM assertion's ``threshold``) scored below its pass mark: the trial fails, whatever its score."""
    return any(
        getattr(spec, "required", False) and res.score is not None and res.score < getattr(spec, "pass_mark", 1.0) - 1e-9
        for spec, res in zip(specs, results)
    )
