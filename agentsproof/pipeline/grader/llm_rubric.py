"""LLM rubric grader: a judge scores the response 0–1 against a rubric."""

from __future__ import annotations

from typing import Any

from agentsproof.config import LLMRubricGrader
from agentsproof.pipeline.grader.judge import Judge, JudgeError, judge_json
from agentsproof.schemas.artifacts import CheckResult, GraderResult

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
    key = "score" if "score" in obj else ("rating" if "rating" in obj else None)
    if key is None:
        raise ValueError("missing 'score'")
    score = obj[key]
    if isinstance(score, str):
        score = float(score.strip())  # a ValueError here is retried like any unusable reply
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        raise ValueError("'score' is not a number")
    if not 0.0 <= float(score) <= 1.0:
        raise ValueError(f"'score' {score} is outside 0..1")
    return float(score), str(obj.get("reasoning", obj.get("reason", "")))


def rubric_prompt(task: str, rubric: str, response: str) -> str:
    return (
        f"## Task given to the assistant\n{task}\n\n## Rubric\n{rubric}\n\n"
        f"## Assistant response\n<<<RESPONSE\n{response}\nRESPONSE>>>\n\nGrade the response now."
    )


async def grade_rubric(response: str, spec: LLMRubricGrader, judge: Judge, task: str) -> GraderResult:
    try:
        (score, reasoning), usage, _ = await judge_json(
            judge, RUBRIC_SYSTEM, rubric_prompt(task, spec.rubric, response), RUBRIC_SCHEMA, _validate
        )
    except JudgeError as err:
        return GraderResult(type="llm_rubric", weight=spec.weight, errored=True, error=str(err))
    check = CheckResult(kind="rubric", target=spec.rubric.strip(), passed=score >= 0.5, evidence=reasoning)
    return GraderResult(type="llm_rubric", weight=spec.weight, score=score, checks=[check], reasoning=reasoning, usage=usage)
