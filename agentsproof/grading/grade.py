"""Grading one trial: its graders run (by type, from the registry), then their scores combine.

``grade_all`` runs a trial's graders and ``combine`` turns them into the trial score:
the weighted average of the grader scores. Any errored grader makes the trial errored.
A grader never raises: whatever goes wrong becomes an errored result with its reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from agentsproof.grading.base import NESTED, GradeInput
from agentsproof.grading.context import TrialContext
from agentsproof.grading.judge import Judge, JudgeError
from agentsproof.grading.registry import entry
from agentsproof.model.graders import GraderSpec
from agentsproof.model.results import CheckResult, GraderResult

__all__ = ["Judge", "JudgeError", "TrialContext", "combine", "failed_gate", "grade_all", "needs_judge"]


def needs_judge(graders: Sequence[GraderSpec]) -> bool:
    """True when a grader asks the LLM judge (the run then builds one)."""
    return any((k := entry(g.type)).judged or (k.asks_judge is not None and k.asks_judge(g)) for g in graders)


def turn_reply(spec: GraderSpec, response: str, replies: Sequence[str]) -> str | None:
    """What a grader with ``turn:`` grades: the reply to the N-th user message, or
    (``all``) every reply joined; the last reply without ``turn:`` (or when no replies were
    recorded). None: the conversation ended before turn N."""
    turn = getattr(spec, "turn", None)
    if turn is None or not replies:
        return response
    if turn == "all":
        return "\n\n".join(replies)
    return replies[turn - 1] if turn <= len(replies) else None


async def _grade_one(response: str, spec: GraderSpec, judge: Judge | None, task: str, ctx: TrialContext) -> GraderResult:
    grade = entry(spec.type).grade
    if grade is None:
        raise TypeError(f"a {spec.type!r} grader is not graded per trial")
    answer = turn_reply(spec, response, ctx.replies)
    if answer is None:
        turn = getattr(spec, "turn", None)
        why = f"the conversation ended after {len(ctx.replies)} turn{'s' if len(ctx.replies) != 1 else ''}, before turn {turn}"
        check = CheckResult(kind="turn", target=str(turn), passed=False, evidence=why)
        return GraderResult(type=spec.type, weight=float(getattr(spec, "weight", 1.0)), score=0.0, checks=[check], reasoning=why)
    return await grade(spec, GradeInput(answer=answer, context=ctx, judge=judge, task=task))


async def _grade_safely(response: str, spec: GraderSpec, judge: Judge | None, task: str, ctx: TrialContext) -> GraderResult:
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
    graders: Sequence[GraderSpec],
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
    graders = [g for g in graders if not entry(g.type).per_pair]  # judged per pair after both arms ran
    ctx = context or TrialContext(answer=response, timeout=timeout)
    # Graders that may write in the workspace (scripts) run one by one after the others have read it; a trial
    # without a workspace (a chat trial) gives each script a fresh folder of its own, so they run together.
    first = [i for i, g in enumerate(graders) if not entry(g.type).runs_last or (ctx.workspace is None and ctx.environment is None)]
    results: dict[int, GraderResult] = dict(
        zip(first, await asyncio.gather(*(_grade_safely(response, graders[i], judge, task, ctx) for i in first)), strict=True)
    )
    for i, g in enumerate(graders):
        if i not in results:
            results[i] = await _grade_safely(response, g, judge, task, ctx)
    return [results[i] for i in range(len(graders))]


NESTED.grade_all = grade_all  # a composite grader grades its children so (grading/composite.py)


def combine(results: Sequence[GraderResult]) -> float | None:
    """Weighted average of grader scores; None if any grader errored. No graders → 1.0."""
    scores: list[float] = []
    for r in results:
        if r.errored or r.score is None:
            return None
        scores.append(r.score)
    total = sum(r.weight for r in results)
    if not results or total <= 0:
        return 1.0
    return sum(score * r.weight for score, r in zip(scores, results, strict=True)) / total


def failed_gate(specs: Sequence[GraderSpec], results: Sequence[GraderResult]) -> bool:
    """True when a grader marked ``required`` (EVAL.yaml's ``required``, ``min_score`` or an
    LLM assertion's ``threshold``) scored below its pass mark: the trial fails, whatever its score."""
    graded = [spec for spec in specs if not entry(spec.type).per_pair]  # as in grade_all: no result of their own
    return any(
        getattr(spec, "required", False) and res.score is not None and res.score < getattr(spec, "pass_mark", 1.0) - 1e-9
        for spec, res in zip(graded, results, strict=True)
    )
