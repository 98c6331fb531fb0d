"""LLM rubric grader: a judge scores the response 0–1 against a rubric."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import Field

from agentsproof.grading.base import GradeInput, GraderEntry
from agentsproof.grading.hooks import ConvertCase, Finding, LintCase, LintFact
from agentsproof.grading.judge import Judge, JudgeError, judge_json, verdict_text
from agentsproof.grading.script import ScriptGrader
from agentsproof.llm.replies import MAX_NUMBER_CHARS
from agentsproof.model.graders import MAX_WEIGHT, TurnScoped
from agentsproof.model.results import CheckResult, GraderResult


class LLMRubricGrader(TurnScoped):
    """``type: llm_rubric``: the judge scores the answer against a rubric, 0 to 1."""

    type: Literal["llm_rubric"]
    rubric: str = Field(min_length=1, description="What the judge scores, 0 to 1.")
    weight: float = Field(1.0, gt=0, le=MAX_WEIGHT, strict=True, allow_inf_nan=False)
    judge_model: str | None = Field(
        None, min_length=1, description="This grader's judge model, through the run's judge provider (default: the run's judge model or panel)."
    )
    prompt_script: ScriptGrader | None = Field(
        None,
        description="agentv's prompt template script: a command printing the judge prompt for each trial, which replaces the rubric (grading/prompt_script.py).",
    )


RUBRIC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string"},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["reasoning", "score"],
}

RUBRIC_SYSTEM = (
    "You grade an AI assistant's response against a rubric. Be strict and literal: credit only what the "
    "response actually contains. Reply with a JSON object: a short 'reasoning' string, then 'score', a "
    "number from 0 (fails the rubric) to 1 (fully meets it). Criteria with their own ranges add up to that total."
)


def _validate(obj: dict[str, Any]) -> tuple[float, str]:
    """The verdict: 'score' (or 'rating') a number in 0..1, or a string holding one ("0.7").

    Anything else (a boolean, NaN, a number outside 0..1 such as 42) is refused, never
    clamped: the judge is asked again, and the grader errors after the last attempt.
    """
    key = "score" if "score" in obj else ("rating" if "rating" in obj else None)
    if key is None:
        raise ValueError("missing 'score'")
    score = obj[key]
    if isinstance(score, str):
        text = score.strip()
        try:
            score = float(text) if len(text) <= MAX_NUMBER_CHARS else None
        except ValueError:
            score = None
        if score is None:
            raise ValueError(f"'{key}' {text[:20]!r} is not a number")
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        raise ValueError(f"'{key}' is not a number")
    if not (math.isfinite(score) and 0.0 <= float(score) <= 1.0):
        raise ValueError(f"'{key}' {score:g} is outside 0..1")
    return float(score), verdict_text(obj.get("reasoning", obj.get("reason", "")))


def _rubric_prompt(task: str, rubric: str, response: str) -> str:
    return (
        f"## Task given to the assistant\n{task}\n\n## Rubric\n{rubric}\n\n"
        f"## Assistant response\n<<<RESPONSE\n{response}\nRESPONSE>>>\n\nGrade the response now."
    )


async def grade_rubric(response: str, spec: LLMRubricGrader, judge: Judge, task: str) -> GraderResult:
    """The judge's 0–1 score of ``response`` against the rubric; errored when the judge gives no valid verdict."""
    try:
        (score, reasoning), usage, _ = await judge_json(judge, RUBRIC_SYSTEM, _rubric_prompt(task, spec.rubric, response), RUBRIC_SCHEMA, _validate)
    except JudgeError as err:
        return GraderResult(type="llm_rubric", weight=spec.weight, errored=True, error=str(err))
    except Exception as err:  # noqa: BLE001 - never an exception out of a grader
        error = f"judge failed unexpectedly: {type(err).__name__}: {str(err)[:300]}"
        return GraderResult(type="llm_rubric", weight=spec.weight, errored=True, error=error)
    check = CheckResult(kind="rubric", target=spec.rubric.strip(), passed=score >= 0.5, evidence=reasoning)
    return GraderResult(type="llm_rubric", weight=spec.weight, score=score, checks=[check], reasoning=reasoning, usage=usage)


async def grade(spec: LLMRubricGrader, given: GradeInput) -> GraderResult:
    """The llm_rubric grader's hook: the judged answer (files included) scored against the rubric."""
    judge = given.need_judge()
    if spec.judge_model:  # promptfoo's assertion provider: another model of the same provider
        import dataclasses

        judge = dataclasses.replace(judge, model=spec.judge_model, panel=(), tally=None)
    if spec.prompt_script is not None:  # agentv's prompt template: the judge prompt the command prints
        from agentsproof.grading.prompt_script import PromptScriptError, written_prompt

        try:
            spec = spec.model_copy(update={"rubric": await written_prompt(spec.prompt_script, given.context)})
        except PromptScriptError as err:
            return GraderResult(type="llm_rubric", weight=spec.weight, errored=True, error=str(err))
    return await grade_rubric(given.judged_answer(), spec, judge, given.task)


def lint(spec: LLMRubricGrader, case: LintCase) -> Iterator[LintFact]:
    """An ``empty-grader`` finding when the rubric is blank."""
    if not spec.rubric.strip():
        yield Finding(f"{case.where}.rubric", "empty-grader", "is blank: the judge has nothing to score", "write what a good answer does, or remove the grader")


def to_agentevals(spec: LLMRubricGrader, case: ConvertCase) -> list[Any]:
    """One EVAL.yaml ``llm-rubric`` assertion holding the rubric (and the weight, when not 1); agentv's
    prompt template script stays one (``prompt: {command, config}``)."""
    if spec.prompt_script is not None and spec.prompt_script.run is not None:
        config = {"config": spec.prompt_script.config} if spec.prompt_script.config else {}
        return [{"type": "llm-rubric", "prompt": {"command": spec.prompt_script.run, **config}, **case.weight}]
    return [{"type": "llm-rubric", "value": spec.rubric, **case.weight}]


GRADER = GraderEntry(
    type="llm_rubric",
    config=LLMRubricGrader,
    grade=grade,
    judged=True,
    judge_texts=lambda spec: [spec.rubric],
    lint=lint,
    to_agentevals=to_agentevals,
)
