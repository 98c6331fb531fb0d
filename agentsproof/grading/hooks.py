"""What a grader type tells the layers above about itself: its lint facts and its EVAL.yaml form.

A grader module's ``GRADER`` (:class:`agentsproof.grading.base.GraderEntry`) may carry a
``lint`` hook and a ``to_agentevals`` hook; ``agentsproof lint`` (:mod:`agentsproof.formats.lint.checks`)
and ``convert`` (:mod:`agentsproof.interop.convert`) call them and keep no list of grader
types of their own. The values here are plain data, so a grader states what it knows
without importing the layers that use it:

- :class:`Finding`: a problem of this grader alone (a blank rubric, a missing script);
- :class:`Patterns`: regular expressions it will match (lint reports one that can never match);
- :class:`Needle`: a text that must, or must not, appear in some place (lint pairs them up
  across the case's graders and reports a pair no answer can pass);
- :class:`Presence`: a path that must exist, or be absent (lint reports a path that must do both).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias


@dataclass(frozen=True)
class Finding:
    """A problem of one grader's config, found without a model."""

    field: str
    """The full field path, e.g. ``tasks[0].graders[1].rubric``."""
    rule: str
    """The defect class (``empty-grader``, ``missing-file``…), as in lint's JSON output."""
    message: str
    fix: str
    severity: Literal["error", "warning"] = "error"


@dataclass(frozen=True)
class Patterns:
    """Regular expressions a grader matches, at ``field[i]``."""

    field: str
    patterns: Sequence[str]


@dataclass(frozen=True)
class Needle:
    """A text that must (``present``) or must not appear in one place."""

    scope: tuple[str, Hashable]
    """Where: ``("answer", turn)`` or ``("file", path)``. Lint reports places in the order
    of their first element's name (answers before files), each in the order first seen."""
    label: str
    """The place in a message: ``the answer``, ``file 'out.txt'``."""
    present: bool
    text: str
    case_sensitive: bool
    field: str
    within: tuple[str, Hashable] | None = None
    """A wider place whose excluded texts also bind this one (a turn's reply is also in ``turn: all``)."""


@dataclass(frozen=True)
class Presence:
    """A path (glob) that must exist, or be absent, after the trial."""

    glob: str
    exists: bool
    field: str


LintFact: TypeAlias = Finding | Patterns | Needle | Presence


@dataclass(frozen=True)
class LintCase:
    """What a grader's lint hook may look at besides its config."""

    where: str
    """The grader's field, e.g. ``tasks[0].graders[1]``."""
    eval_path: Path
    """The linted file."""
    agent_mode: bool = False
    """The eval runs agent trials (in a workspace)."""
    workspace: Path | None = None
    """The case's workspace seed folder, if it has one."""


@dataclass
class ConvertCase:
    """One grader being converted to EVAL.yaml assertions (``agentsproof convert``)."""

    where: str
    """The grader's field in the source file."""
    skill: str
    """The skill's name (``skill-used`` asserts it)."""
    weight: dict[str, Any]
    """``{"weight": w}`` when the grader's weight is not 1, else empty: spread into each assertion."""
    warnings: list[str] = field(default_factory=list)

    def warn(self, text: str) -> None:
        """Record one warning for ``convert`` to print (a lossy field)."""
        self.warnings.append(text)

    def left_out(self, type_name: str) -> list[Any]:
        """No assertion: the grader is left out, with the warning that says so."""
        self.warn(f"{self.where}: a {type_name!r} grader has no EVAL.yaml form; it is left out")
        return []


def typed_assertion(spec: Any, case: ConvertCase) -> list[Any]:
    """An agentsproof grader that EVAL.yaml takes as a typed assertion with the same fields
    (``files``, ``tool-calls``: ``formats/agentevals/asserts.py`` reads them back)."""
    fields = spec.model_dump(by_alias=True, exclude={"type", "weight"}, exclude_defaults=True)
    return [{"type": spec.type.replace("_", "-"), **fields, **case.weight}]
