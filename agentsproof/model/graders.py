"""What every grader config shares: strict models, field errors, checks, workspace globs.

Each grader type's own config model lives beside its grader in :mod:`agentsproof.grading`
(registered in :mod:`agentsproof.grading.registry`).

Answer graders (``deterministic``, ``llm_rubric``, ``assertions``) read the final answer;
agent graders (``files``, ``script``, ``tool_calls``, ``skill_used``) read what an agent
trial left behind: its workspace, its trajectory, whether it loaded the skill.
"""

from __future__ import annotations

import re
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentsproof.core.validation import FieldError as FieldError  # re-exported: grader configs raise it

MAX_WEIGHT = 1000.0


class Strict(BaseModel):
    """The base of every eval-file model: unknown keys are refused, fields may be given by alias."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class TurnScoped(Strict):
    """The shared ``turn:`` of the graders that read replies (deterministic, llm_rubric,
    assertions): which reply of a multi-turn trial they grade."""

    turn: int | Literal["all"] | None = Field(
        None, description="Grade the reply to the N-th user message (1: to the instruction), or 'all' replies joined; default: the last reply."
    )

    @field_validator("turn", mode="before")
    @classmethod
    def _turn(cls, value: Any) -> Any:
        if value is None or value == "all" or (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
            return value
        raise ValueError(f"{value!r} is not a turn; give N >= 1 (the reply to the N-th user message) or 'all'")


class Checks(Strict):
    """String and regex checks of a deterministic grader; each entry is one check."""

    mustContain: list[str] = Field(default_factory=list, description="Substrings that must appear.")
    mustNotContain: list[str] = Field(default_factory=list, description="Substrings that must not appear.")
    regexMatch: list[str] = Field(default_factory=list, description="Python regexes that must match somewhere (re.search).")
    caseSensitive: bool = Field(False, strict=True, description="Match mustContain/mustNotContain case-sensitively.")

    @field_validator("regexMatch")
    @classmethod
    def _compile(cls, patterns: list[str]) -> list[str]:
        check_regexes(patterns)
        return patterns

    @field_validator("mustContain", "mustNotContain")
    @classmethod
    def _non_empty(cls, items: list[str]) -> list[str]:
        for i, item in enumerate(items):
            if not item:
                raise FieldError(f"[{i}]", "is an empty string")
        return items

    def count(self) -> int:
        """How many checks there are (substrings, forbidden substrings and regexes together)."""
        return len(self.mustContain) + len(self.mustNotContain) + len(self.regexMatch)


def workspace_glob(pattern: str) -> str:
    """A glob or path relative to the workspace; absolute paths and ``..`` that leave it are refused."""
    text = pattern.replace("\\", "/")
    if not text.strip():
        raise ValueError("is an empty path")
    if text.startswith("/") or re.match(r"^[A-Za-z]:", text) or text.startswith("~"):
        raise ValueError(f"{pattern!r} is an absolute path; give it relative to the workspace")
    depth = 0
    for part in text.split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                raise ValueError(f"{pattern!r} leaves the workspace ('..')")
        elif part not in ("", "."):
            depth += 1
    return text


def script_path(value: str) -> str:
    """A ``script:`` file (a script grader's or an oracle's): one relative path that stays
    inside its folder (:func:`workspace_glob`'s rule: no absolute path, no ``..`` out), not a glob."""
    path = workspace_glob(value)
    if any(ch in path for ch in "*?["):
        raise ValueError(f"{value!r} is a glob; give one file")
    return path


def one_or_many(value: Any) -> Any:
    """``"a.md"`` is shorthand for ``["a.md"]``."""
    return [value] if isinstance(value, str) else value


class GraderSpec(Protocol):
    """What code outside a grader's own module may rely on in any grader config (the
    configs are pydantic models defined beside their graders, :mod:`agentsproof.grading`)."""

    @property
    def type(self) -> str:
        """The grader's ``type:`` as written in the eval file (its registry name)."""
        ...

    def model_dump(self, *, mode: str = "python") -> dict[str, Any]:
        """The config as plain data (pydantic's; ``mode="json"`` for the journal's fingerprints)."""
        ...


def check_regexes(patterns: list[str], where: str = "") -> None:
    """FieldError ``<where>[i]`` for the first pattern Python's ``re`` cannot compile."""
    for i, pattern in enumerate(patterns):
        try:
            re.compile(pattern)
        except re.error as exc:
            raise FieldError(f"{where}[{i}]", f"{pattern!r} is not a valid regex: {exc}") from None
