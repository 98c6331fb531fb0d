"""The ``activation:`` block of an eval.yaml (its models only; the loader is
:mod:`agentsproof.formats.activation`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from agentsproof.model.activation import (
    DEFAULT_MIN_PRECISION,
    DEFAULT_MIN_RECALL,
    DEFAULT_SHOULD_NOT_TYPE,
    DEFAULT_SHOULD_TYPE,
    SHOULD_NOT_TYPES,
    SHOULD_TYPES,
    ActivationPrompt,
)
from agentsproof.model.graders import FieldError, Strict

MAX_ACTIVATION_PROMPTS = 500
PromptType = Literal["explicit", "implicit", "contextual", "negative", "near-miss"]


class ActivationEntry(Strict):
    """One prompt of an ``activation:`` list and its type (default: ``implicit`` under should, ``negative`` under should_not)."""

    prompt: str = Field(min_length=1, max_length=20_000)
    type: PromptType | None = None

    @field_validator("type", mode="before")
    @classmethod
    def _dash(cls, value: Any) -> Any:
        return value.replace("_", "-") if isinstance(value, str) else value


def _entries(value: Any) -> Any:
    if isinstance(value, list):
        return [{"prompt": v} if isinstance(v, str) else v for v in value]
    return value


class ActivationConfig(Strict):
    """Prompts that should and should not load the skill (``agentsproof activation``)."""

    should: list[ActivationEntry] = Field(default_factory=list, max_length=MAX_ACTIVATION_PROMPTS)
    should_not: list[ActivationEntry] = Field(default_factory=list, max_length=MAX_ACTIVATION_PROMPTS)
    min_recall: float = Field(DEFAULT_MIN_RECALL, ge=0, le=1, allow_inf_nan=False, description="--ci floor on recall.")
    min_precision: float = Field(DEFAULT_MIN_PRECISION, ge=0, le=1, allow_inf_nan=False, description="--ci floor on precision.")

    @field_validator("should", "should_not", mode="before")
    @classmethod
    def _plain_prompts(cls, value: Any) -> Any:
        """A plain string is a prompt of the default type."""
        return _entries(value)

    @model_validator(mode="after")
    def _typed(self) -> ActivationConfig:
        if not self.should and not self.should_not:
            raise FieldError("should", "give 'should' and/or 'should_not' prompts")
        for key, allowed in (("should", SHOULD_TYPES), ("should_not", SHOULD_NOT_TYPES)):
            for i, entry in enumerate(getattr(self, key)):
                if entry.type is not None and entry.type not in allowed:
                    raise FieldError(f"{key}[{i}].type", f"{entry.type!r} is not a {key} type; use one of {', '.join(allowed)}")
        return self

    def prompts(self) -> list[ActivationPrompt]:
        """Every prompt as an :class:`ActivationPrompt`: the should prompts first, then the should-not ones, each with its type or the default."""
        out = [ActivationPrompt(e.prompt, True, e.type or DEFAULT_SHOULD_TYPE) for e in self.should]
        return out + [ActivationPrompt(e.prompt, False, e.type or DEFAULT_SHOULD_NOT_TYPE) for e in self.should_not]
