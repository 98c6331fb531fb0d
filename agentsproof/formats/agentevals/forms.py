"""The forms an EVAL.yaml assertion's grader may take besides its own: *gated* (``required``,
``min_score``, an LLM ``threshold``: a trial that scores below its pass mark fails, whatever
its total) and *reported* (agentv's and promptfoo's ``weight: 0``: graded and reported, not
part of the score). Each is a subclass of the grader's config, made once per grader class."""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel, Field


@cache
def gated(base: type[BaseModel]) -> type[BaseModel]:
    """``base`` with ``required`` and ``pass_mark``."""
    namespace = {"__annotations__": {"required": bool, "pass_mark": float}, "required": True, "pass_mark": 1.0, "__module__": __name__}
    return type(f"Required{base.__name__}", (base,), namespace)


@cache
def reported(base: type[BaseModel]) -> type[BaseModel]:
    """``base`` whose weight is 0: its result is in the report, its score is not in the trial's."""
    namespace = {"__annotations__": {"weight": float}, "weight": Field(0.0, ge=0.0, le=0.0, strict=True), "__module__": __name__}
    return type(f"Reported{base.__name__}", (base,), namespace)


def shaped(grader: BaseModel, gate: float | None, zero: bool) -> Any:
    """``grader`` gated at ``gate`` (when given) and with weight 0 when ``zero``."""
    if gate is not None:
        grader = gated(type(grader))(**grader.model_dump(by_alias=True), pass_mark=gate)
    if zero:
        grader = reported(type(grader))(**{**grader.model_dump(by_alias=True), "weight": 0.0})
    return grader
