"""The ``max_words`` grader: the answer has at most ``words`` words.

In an eval.yaml::

    graders:
      - type: max_words
        words: 20
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentsproof.grading.base import GradeInput, GraderKind
from agentsproof.model.graders import Strict
from agentsproof.model.results import CheckResult, GraderResult


class MaxWordsGrader(Strict):
    """Passes when the final answer has at most ``words`` words."""

    type: Literal["max_words"]
    words: int = Field(gt=0, strict=True, description="The most words the answer may have.")
    weight: float = Field(1.0, gt=0, le=100, strict=True, allow_inf_nan=False, description="Relative weight in the trial score.")


async def grade(spec: MaxWordsGrader, given: GradeInput) -> GraderResult:
    count = len(given.answer.split())
    passed = count <= spec.words
    check = CheckResult(kind="max_words", target=f"at most {spec.words} words", passed=passed, evidence=f"{count} words")
    return GraderResult(type="max_words", weight=spec.weight, score=1.0 if passed else 0.0, checks=[check])


# The entry point's name (max_words) must be this type; the config's Literal too.
GRADER = GraderKind(type="max_words", config=MaxWordsGrader, grade=grade)
