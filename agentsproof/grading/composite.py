"""Composite grader: agentv's ``composite`` evaluator — child graders whose results an
aggregator turns into one score.

::

    - type: composite
      graders:                       # any graders, graded on the same trial
        - {type: llm_rubric, rubric: Is it safe?}
        - {type: llm_rubric, rubric: Is it good?}
      names: [safety, quality]       # each child's name, as the aggregator sees it
      aggregator: script             # weighted_average (default) | script | judge
      run: [node, safety-gate.js]    # script: reads {"results": {NAME: {score, verdict, hits, misses, reasoning}}, "output"}
                                     # on stdin, prints {"score": 0..1, ...}
      prompt: "… {{EVALUATOR_RESULTS_JSON}} …"   # judge: scores from the children's results
      weights: {safety: 0.3}         # weighted_average: each child's weight (default 1)

As agentv aggregates: ``weighted_average`` is the weighted mean of the children's scores, a
``script`` aggregator's printed score is the composite's (the script runs as a ``script``
grader does, in the trial's workspace), a ``judge`` aggregator is asked with the prompt, its
``{{EVALUATOR_RESULTS_JSON}}`` the children's results. A child's verdict is ``pass`` from
score 0.8 (agentv's). The composite's checks are its children's, named by them; a child that
errors errors the composite.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from agentsproof.grading.base import NESTED, GradeInput, GraderEntry
from agentsproof.model.graders import MAX_WEIGHT, FieldError, Strict
from agentsproof.model.results import CheckResult, GraderResult, Usage

PASS_MARK = 0.8
"""agentv's verdict: a child passes from this score."""
RESULTS = "{{EVALUATOR_RESULTS_JSON}}"


class CompositeGrader(Strict):
    """Child graders on the same trial, combined by a weighted mean, a script or the judge."""

    type: Literal["composite"]
    graders: list[dict[str, Any]] = Field(min_length=1, description="The child graders (any grader configs).")
    names: list[str] = Field(default_factory=list, description="Each child's name for the aggregator (default: its type and position).")
    aggregator: Literal["weighted_average", "script", "judge"] = Field("weighted_average", description="How the children's results combine.")
    weights: dict[str, float] = Field(default_factory=dict, description="weighted_average: a child's weight by name (default 1).")
    run: list[str] | None = Field(None, description="script: the aggregator's argv; it reads the results as JSON on stdin.")
    prompt: str | None = Field(None, description="judge: the judge's prompt, {{EVALUATOR_RESULTS_JSON}} the children's results.")
    weight: float = Field(1.0, gt=0, le=MAX_WEIGHT, strict=True, allow_inf_nan=False, description="Relative weight in the trial score.")

    @field_validator("graders")
    @classmethod
    def _children_are_graders(cls, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        children(value)  # a bad child is its field's error
        return value

    @model_validator(mode="after")
    def _aggregator_has_what_it_needs(self) -> CompositeGrader:
        if self.names and len(self.names) != len(self.graders):
            raise FieldError("names", f"names {len(self.names)} children; there are {len(self.graders)}")
        if self.aggregator == "script" and not self.run:
            raise FieldError("run", "a script aggregator needs the command to run")
        if self.aggregator == "judge" and not (self.prompt or "").strip():
            raise FieldError("prompt", "a judge aggregator needs its prompt")
        unknown = sorted(set(self.weights) - set(self.child_names()))
        if unknown:
            raise FieldError(f"weights.{unknown[0]}", "names no child")
        return self

    def child_names(self) -> list[str]:
        """Each child's name."""
        return self.names or [f"{g.get('type')}-{i + 1}" for i, g in enumerate(self.graders)]


def children(raw: list[dict[str, Any]]) -> list[Any]:
    """The child grader configs, validated by the registry's union."""
    if NESTED.configs is None:  # the registry loads this module, so it is there by the time a config is read
        raise RuntimeError("the grader registry is not loaded")
    return NESTED.configs(raw)


def _result(name: str, r: GraderResult) -> dict[str, Any]:
    score = r.score or 0.0
    return {
        "score": score,
        "verdict": "pass" if score >= PASS_MARK else "fail",
        "hits": [c.target for c in r.checks if c.passed],
        "misses": [c.target for c in r.checks if not c.passed],
        "reasoning": r.reasoning or "",
    }


async def grade(spec: CompositeGrader, given: GradeInput) -> GraderResult:
    """The children graded on the trial, then aggregated."""
    if NESTED.grade_all is None:  # grading.grade fills it; it is what calls this
        raise RuntimeError("a composite grader is graded by agentsproof.grading.grade")
    kids = children(spec.graders)
    names = spec.child_names()
    results = await NESTED.grade_all(given.answer, kids, given.judge, given.task, context=given.context)
    usage = Usage()
    for r in results:
        usage = usage + r.usage
    broken = next(((n, r) for n, r in zip(names, results, strict=True) if r.errored or r.score is None), None)
    if broken is not None:
        return GraderResult(type="composite", weight=spec.weight, errored=True, error=f"{broken[0]}: {broken[1].error}", usage=usage)
    checks = [c.model_copy(update={"kind": f"{n}: {c.kind}"}) for n, r in zip(names, results, strict=True) for c in r.checks]
    shown = {n: _result(n, r) for n, r in zip(names, results, strict=True)}
    if spec.aggregator == "weighted_average":
        weights = [spec.weights.get(n, 1.0) for n in names]
        total = sum(weights)
        score = sum(w * (r.score or 0.0) for w, r in zip(weights, results, strict=True)) / total if total > 0 else 0.0
        why = "weighted average of " + ", ".join(f"{n} {shown[n]['score']:.2f}×{w:g}" for n, w in zip(names, weights, strict=True))
        return GraderResult(type="composite", weight=spec.weight, score=score, checks=checks, reasoning=why, usage=usage)
    if spec.aggregator == "script":
        from agentsproof.grading.script import ScriptGrader, grade_script

        script = ScriptGrader(type="script", run=spec.run, stdin="json", payload={"results": shown})
        agg = await grade_script(script, given.context)
    else:
        from agentsproof.grading.llm_rubric import LLMRubricGrader
        from agentsproof.grading.llm_rubric import grade as judge_grade

        rubric = (spec.prompt or "").replace(RESULTS, json.dumps(shown, indent=2, ensure_ascii=False))
        agg = await judge_grade(LLMRubricGrader(type="llm_rubric", rubric=rubric), given)
    if agg.errored or agg.score is None:
        return GraderResult(type="composite", weight=spec.weight, errored=True, error=f"aggregator: {agg.error}", usage=usage)
    mark = CheckResult(kind="aggregator", target=spec.aggregator, passed=agg.score >= PASS_MARK, evidence=f"score {agg.score:g}")
    return GraderResult(type="composite", weight=spec.weight, score=agg.score, checks=[*checks, mark], reasoning=agg.reasoning, usage=usage + agg.usage)


GRADER = GraderEntry(
    type="composite",
    config=CompositeGrader,
    grade=grade,
    judged=True,  # its children or its aggregator may ask the judge
    judge_texts=lambda spec: [g.get("rubric", "") for g in spec.graders if isinstance(g.get("rubric"), str)] + ([spec.prompt] if spec.prompt else []),
)
