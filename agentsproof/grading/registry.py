"""Grader types by name: one line each, an import path to the module's ``GRADER``.

Adding a grader: write ``agentsproof/grading/<name>.py`` (its config model, an async
``grade(spec, given)`` and ``GRADER = GraderEntry(...)``, see :mod:`agentsproof.grading.base`)
and add its line below. The order is the order of ``type`` names in messages and of the
JSON Schema's union. A grader of an installed package (entry-point group
``agentsproof.graders``, :mod:`agentsproof.core.entrypoints`) follows the in-tree ones.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, TypeAlias, Union

from pydantic import BeforeValidator, Field

from agentsproof.core.registry import Registry
from agentsproof.core.validation import FieldError
from agentsproof.grading.base import NESTED, GraderEntry

GRADERS: dict[str, str] = {
    "deterministic": "agentsproof.grading.deterministic:GRADER",
    "llm_rubric": "agentsproof.grading.llm_rubric:GRADER",
    "assertions": "agentsproof.grading.assertions:GRADER",
    "files": "agentsproof.grading.files:GRADER",
    "script": "agentsproof.grading.script:GRADER",
    "tool_calls": "agentsproof.grading.tool_calls:GRADER",
    "skill_used": "agentsproof.grading.skill_used:GRADER",
    "pairwise": "agentsproof.grading.pairwise:GRADER",
    "verifier": "agentsproof.grading.verifier:GRADER",
    "similar": "agentsproof.grading.similar:GRADER",
    "execution_metrics": "agentsproof.grading.execution_metrics:GRADER",
    "composite": "agentsproof.grading.composite:GRADER",
}


def _check(type_name: str, found: Any) -> str | None:
    if not isinstance(found, GraderEntry):
        return "not a GraderEntry"
    return None if found.type == type_name else f"its type is {found.type!r}, not its entry point's name"


REGISTRY: Registry[GraderEntry] = Registry("graders", GRADERS, _check)
"""Every grader: :data:`GRADERS`, then the installed plugins' (:mod:`agentsproof.core.registry`)."""


@cache
def entry(type_name: str) -> GraderEntry:
    """The registered grader of this ``type`` (in-tree, else an installed plugin's);
    KeyError for an unknown one, PluginError for a plugin that does not load."""
    return REGISTRY.get(type_name)


def find(type_name: str) -> GraderEntry | None:
    """The registered grader of this ``type`` (a plugin's too), None for an unknown one."""
    return entry(type_name) if REGISTRY.has(type_name) else None


def entries() -> list[GraderEntry]:
    """Every grader: the in-tree ones, then the installed plugins' that load (one that
    does not is skipped, said once on stderr)."""
    return list(REGISTRY.all().values())


def grader_types() -> tuple[str, ...]:
    """Every grader ``type`` name, in order."""
    return tuple(k.type for k in entries())


def __getattr__(name: str) -> Any:
    if name == "GRADER_TYPES":  # the in-tree names and the installed plugins' (which are looked up on first use)
        return grader_types()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _rewrite(value: Any) -> Any:
    for k in entries():
        if k.rewrite is not None:
            value = k.rewrite(value)
    if isinstance(value, dict) and "turn" in value and isinstance(value.get("type"), str) and value["type"] in grader_types():
        config = entry(value["type"]).config
        if "turn" not in config.model_fields:  # it reads the whole trial (workspace, trajectory), not one reply
            scoped = ", ".join(repr(k.type) for k in entries() if "turn" in k.config.model_fields)
            raise FieldError("turn", f"a {value['type']!r} grader grades the whole trial, not one reply; 'turn' is for {scoped}")
    return value


def _union() -> Any:
    members = tuple(k.config for k in entries())
    return Annotated[Union[members], Field(discriminator="type"), BeforeValidator(_rewrite)]  # noqa: UP007 - built at run time


if TYPE_CHECKING:
    # for the type checker: what any config offers (code needing one type's fields narrows with isinstance)
    from agentsproof.model.graders import GraderSpec

    GraderConfig: TypeAlias = GraderSpec
else:
    GraderConfig = _union()
"""Any grader's config, validated by its ``type`` (the eval-file models' ``graders``)."""


def _configs(raw: list[Any]) -> list[Any]:
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Any] = TypeAdapter(list[GraderConfig])
    return list(adapter.validate_python(raw))


NESTED.configs = _configs  # a composite grader's children (grading/composite.py)
