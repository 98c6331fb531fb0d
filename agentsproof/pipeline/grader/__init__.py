"""Graders: each is a function of (response, spec) returning a GraderResult.

``grade_all`` runs a trial's graders and ``combine`` turns them into the trial score:
the weighted average of the grader scores. Any errored grader makes the trial errored.
"""

from __future__ import annotations

import asyncio
from typing import Sequence

from agentsproof.config import AssertionsGrader, DeterministicGrader, GraderConfig, LLMRubricGrader
from agentsproof.pipeline.grader.assertions import grade_assertions
from agentsproof.pipeline.grader.deterministic import grade_deterministic
from agentsproof.pipeline.grader.judge import Judge, JudgeError
from agentsproof.pipeline.grader.llm_rubric import grade_rubric
from agentsproof.schemas.artifacts import GraderResult

__all__ = ["Judge", "JudgeError", "grade_all", "combine", "needs_judge"]


def needs_judge(graders: Sequence[GraderConfig]) -> bool:
    return any(not isinstance(g, DeterministicGrader) for g in graders)


async def _grade_one(response: str, spec: GraderConfig, judge: Judge | None, task: str) -> GraderResult:
    if isinstance(spec, DeterministicGrader):
        return grade_deterministic(response, spec)
    if judge is None:
        raise RuntimeError("an LLM grader needs a judge")
    if isinstance(spec, LLMRubricGrader):
        return await grade_rubric(response, spec, judge, task)
    if isinstance(spec, AssertionsGrader):
        return await grade_assertions(response, spec, judge, task)
    raise TypeError(f"unknown grader {type(spec).__name__}")


async def grade_all(response: str, graders: Sequence[GraderConfig], judge: Judge | None, task: str) -> list[GraderResult]:
    return list(await asyncio.gather(*(_grade_one(response, g, judge, task) for g in graders)))


def combine(results: Sequence[GraderResult]) -> float | None:
    """Weighted average of grader scores; None if any grader errored. No graders → 1.0."""
    if any(r.errored or r.score is None for r in results):
        return None
    total = sum(r.weight for r in results)
    if not results or total <= 0:
        return 1.0
    return sum(r.score * r.weight for r in results) / total  # type: ignore[operator]
