"""The ``max_words`` grader: the answer has at most ``words`` words.

In an eval.yaml::

    graders:
      - type: max_words
        words: 20

Besides grading it shows two of a grader's hooks: ``lint`` (what ``agentsproof lint`` says
about its config without a model: a limit so high that no answer fails it) and
``logged=False`` (its check's evidence says it all, so the runner adds no score line of its
own to the trial's log).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from pydantic import Field

from agentsproof.plugin import CheckResult, Finding, GradeInput, GraderEntry, GraderResult, LintCase, Strict


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


NEVER_FAILS = 2000
"""A limit at least this high passes every answer a chat or an agent gives."""


def lint(spec: Any, case: LintCase) -> Iterator[Finding]:
    """What ``agentsproof lint`` reports about this grader's config, without a model."""
    if isinstance(spec, MaxWordsGrader) and spec.words >= NEVER_FAILS:
        yield Finding(
            f"{case.where}.words",
            "never-fails",
            f"max_words: {spec.words} words is more than any answer gives, so this grader never fails",
            f"set words below {NEVER_FAILS}, to the length a good answer needs",
            "warning",
        )


# The entry point's name (max_words) must be this type; the config's Literal too.
GRADER = GraderEntry(type="max_words", config=MaxWordsGrader, grade=grade, lint=lint, logged=False)
