"""Similar grader: the answer's embedding against the expected texts', by cosine similarity.

promptfoo's ``similar`` / ``not-similar`` assertion (EVAL.yaml and promptfooconfig.yaml)::

    - {type: similar, value: The expected output, threshold: 0.8}    # default threshold 0.75
    - {type: similar, value: [Expected one, Expected two]}           # similar to at least one
    - {type: not-similar, value: Something else}                     # similar to none of them

As promptfoo does, the answer and every expected text are embedded (one call to the run's
provider's OpenAI-compatible ``/embeddings``, through the client stack the judge uses; the
model is ``text-embedding-3-large``, promptfoo's default, or the assertion's
``provider: openai:embedding:MODEL``). ``similar`` passes when the best cosine similarity
reaches ``threshold``; ``not-similar`` when it stays at or below it. The check scores 1 or
0, with the similarity as its evidence. A provider without an embeddings API, or a failed
call, errors the grader (the trial is errored, never failed).
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import Field

from agentsproof.grading.base import GradeInput, GraderEntry
from agentsproof.llm.base import LLMError
from agentsproof.model.graders import MAX_WEIGHT, TurnScoped
from agentsproof.model.results import CheckResult, GraderResult

DEFAULT_MODEL = "text-embedding-3-large"
"""promptfoo's default embedding model."""
DEFAULT_THRESHOLD = 0.75
"""promptfoo's default similarity threshold."""


class SimilarGrader(TurnScoped):
    """The answer must mean the same as one of ``expected`` (cosine similarity of their
    embeddings at least ``threshold``); with ``negate``, as none of them (at most ``threshold``)."""

    type: Literal["similar"]
    expected: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1, description="The texts the answer is compared with.")
    threshold: float = Field(DEFAULT_THRESHOLD, ge=-1, le=1, strict=True, allow_inf_nan=False, description="The cosine similarity that passes.")
    negate: bool = Field(False, strict=True, description="Pass when the answer is similar to none of the texts (promptfoo's not-similar).")
    model: str = Field(DEFAULT_MODEL, min_length=1, description="The embedding model, through the run's provider.")
    weight: float = Field(1.0, gt=0, le=MAX_WEIGHT, strict=True, allow_inf_nan=False, description="Relative weight in the trial score.")


def cosine(a: list[float], b: list[float]) -> float:
    """The cosine similarity of two vectors (0 when either is all zeros)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm > 0 else 0.0


def verdict(spec: SimilarGrader, similarities: list[float]) -> GraderResult:
    """The check of one answer from its similarity to each expected text."""
    best = max(range(len(similarities)), key=lambda i: similarities[i])
    sim = similarities[best]
    passed = sim <= spec.threshold + 1e-9 if spec.negate else sim >= spec.threshold - 1e-9
    relation = "at most" if spec.negate else "at least"
    evidence = f"cosine similarity {sim:.3f} to {spec.expected[best]!r} (the closest of {len(similarities)}); {relation} {spec.threshold:g} passes"
    target = ("not similar to " if spec.negate else "similar to ") + " | ".join(spec.expected)
    check = CheckResult(kind="similar", target=target, passed=passed, evidence=evidence)
    return GraderResult(type="similar", weight=spec.weight, score=1.0 if passed else 0.0, checks=[check], reasoning=evidence)


async def grade(spec: SimilarGrader, given: GradeInput) -> GraderResult:
    """Embed the answer and the expected texts in one call, then compare."""
    judge = given.need_judge()
    try:
        vectors = await judge.client.embed([given.answer or " ", *spec.expected], spec.model, judge.timeout)
    except LLMError as err:
        return GraderResult(type="similar", weight=spec.weight, errored=True, error=f"embeddings ({spec.model}): {err}")
    answer, *expected = vectors
    return verdict(spec, [cosine(answer, e) for e in expected])


GRADER = GraderEntry(
    type="similar",
    config=SimilarGrader,
    grade=grade,
    judged=True,  # it calls the run's provider (the judge's client stack)
    judge_texts=lambda spec: [" ".join(spec.expected)],  # --plan: one embeddings call per trial, counted as a judge call
)
