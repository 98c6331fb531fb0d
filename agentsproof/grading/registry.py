"""Grader types by name: one line each, an import path to the module's ``GRADER``.

Adding a grader: write ``agentsproof/grading/<name>.py`` (its config model, an async
``grade(spec, given)`` and ``GRADER = GraderKind(...)``, see :mod:`agentsproof.grading.base`)
and add its line below. The order is the order of ``type`` names in messages and of the
JSON Schema's union.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, TypeAlias, Union

from pydantic import BeforeValidator, Field

from agentsproof.core.validation import FieldError
from agentsproof.grading.base import GraderKind

GRADERS: dict[str, str] = {
    "deterministic": "agentsproof.grading.deterministic:GRADER",
    "llm_rubric": "agentsproof.grading.llm_rubric:GRADER",
    "assertions": "agentsproof.grading.assertions:GRADER",
    "files": "agentsproof.grading.files:GRADER",
    "script": "agentsproof.grading.script:GRADER",
    "tool_calls": "agentsproof.grading.tool_calls:GRADER",
    "skill_used": "agentsproof.grading.skill_used:GRADER",
    "pairwise": "agentsproof.grading.pairwise:GRADER",
}

GRADER_TYPES: tuple[str, ...] = tuple(GRADERS)


@cache
def kind(type_name: str) -> GraderKind:
    """The registered grader of this ``type``; KeyError for an unknown one."""
    module, _, attr = GRADERS[type_name].partition(":")
    found: GraderKind = getattr(importlib.import_module(module), attr)
    return found


def kinds() -> list[GraderKind]:
    return [kind(name) for name in GRADERS]


def _rewrite(value: Any) -> Any:
    for k in kinds():
        if k.rewrite is not None:
            value = k.rewrite(value)
    if isinstance(value, dict) and "turn" in value and isinstance(value.get("type"), str) and value["type"] in GRADERS:
        config = kind(value["type"]).config
        if "turn" not in config.model_fields:  # it reads the whole trial (workspace, trajectory), not one reply
            scoped = ", ".join(repr(k.type) for k in kinds() if "turn" in k.config.model_fields)
            raise FieldError("turn", f"a {value['type']!r} grader grades the whole trial, not one reply; 'turn' is for {scoped}")
    return value


def _union() -> Any:
    members = tuple(k.config for k in kinds())
    return Annotated[Union[members], Field(discriminator="type"), BeforeValidator(_rewrite)]  # noqa: UP007 - built at run time


if TYPE_CHECKING:
    # for the type checker: what any config offers (code needing one type's fields narrows with isinstance)
    from agentsproof.model.graders import GraderSpec

    GraderConfig: TypeAlias = GraderSpec
else:
    GraderConfig = _union()
"""Any grader's config, validated by its ``type`` (the eval-file models' ``graders``)."""
