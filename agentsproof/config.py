"""Eval-file models (eval.yaml v1/v2) and their loader.

Validation is strict: unknown keys, wrong types, bad regexes, non-positive weights and
missing skill/agent files are all :class:`~agentsproof.errors.InputError`, which the CLI
prints as one line naming the file and the field, with exit code 30.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agentsproof.errors import InputError

DEFAULT_TRIALS = 1
DEFAULT_TIMEOUT = 300.0
DEFAULT_THRESHOLD = 0.6


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Checks(_Strict):
    """String and regex checks of a deterministic grader; each entry is one check."""

    mustContain: list[str] = Field(default_factory=list, description="Substrings that must appear.")
    mustNotContain: list[str] = Field(default_factory=list, description="Substrings that must not appear.")
    regexMatch: list[str] = Field(default_factory=list, description="Python regexes that must match somewhere (re.search).")
    caseSensitive: bool = Field(False, description="Match mustContain/mustNotContain case-sensitively.")

    @field_validator("regexMatch")
    @classmethod
    def _compile(cls, patterns: list[str]) -> list[str]:
        for i, pattern in enumerate(patterns):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"regexMatch[{i}] {pattern!r} is not a valid regex: {exc}") from None
        return patterns

    @field_validator("mustContain", "mustNotContain")
    @classmethod
    def _non_empty(cls, items: list[str]) -> list[str]:
        for i, item in enumerate(items):
            if not item:
                raise ValueError(f"entry {i} is an empty string")
        return items

    def count(self) -> int:
        return len(self.mustContain) + len(self.mustNotContain) + len(self.regexMatch)


class DeterministicGrader(_Strict):
    type: Literal["deterministic"]
    checks: Checks
    weight: float = Field(1.0, gt=0, description="Relative weight in the trial score.")

    @field_validator("checks", mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        # A plain list is shorthand for mustContain.
        if isinstance(value, list):
            return {"mustContain": value}
        return value

    @model_validator(mode="after")
    def _has_checks(self) -> "DeterministicGrader":
        if self.checks.count() == 0:
            raise ValueError("a deterministic grader needs at least one check")
        return self


class LLMRubricGrader(_Strict):
    type: Literal["llm_rubric"]
    rubric: str = Field(min_length=1, description="What the judge scores, 0 to 1.")
    weight: float = Field(1.0, gt=0)


class AssertionsGrader(_Strict):
    type: Literal["assertions"]
    assertions: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)
    weight: float = Field(1.0, gt=0)


GraderConfig = Annotated[
    Union[DeterministicGrader, LLMRubricGrader, AssertionsGrader], Field(discriminator="type")
]


class Defaults(_Strict):
    trials: int = Field(DEFAULT_TRIALS, ge=1, le=1000, description="Trials per arm.")
    timeout: float = Field(DEFAULT_TIMEOUT, gt=0, description="Seconds per trial.")
    threshold: float = Field(DEFAULT_THRESHOLD, ge=0, le=1, description="Pass rate required in the with-skill arm.")


class TaskConfig(_Strict):
    name: str = Field(min_length=1)
    instruction: str = Field(min_length=1)
    graders: list[GraderConfig] = Field(min_length=1)


class SkillEvalConfig(_Strict):
    """One eval.yaml. Exactly one of ``skill`` and ``agent`` is set."""

    version: Literal["1", "2"] = "2"
    skill: str | None = None
    agent: str | None = None
    name: str | None = Field(None, description="Display name; defaults to the skill/agent folder name.")
    description: str | None = None
    defaults: Defaults = Field(default_factory=Defaults)
    task: TaskConfig | None = None
    tasks: list[TaskConfig] | None = None

    @field_validator("version", mode="before")
    @classmethod
    def _version_str(cls, value: Any) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(int(value)) if float(value).is_integer() else str(value)
        return value

    @model_validator(mode="after")
    def _shape(self) -> "SkillEvalConfig":
        if (self.skill is None) == (self.agent is None):
            raise ValueError("set exactly one of 'skill' and 'agent'")
        if self.version == "2":
            if self.task is None:
                raise ValueError("version 2 needs a 'task' mapping" + (" ('tasks' is the v1 form)" if self.tasks else ""))
            if self.tasks is not None:
                raise ValueError("version 2 takes 'task', not 'tasks'")
        else:
            if self.tasks is None and self.task is None:
                raise ValueError("version 1 needs a 'tasks' list")
            if self.tasks is not None and not self.tasks:
                raise ValueError("'tasks' is empty")
        return self

    @property
    def kind(self) -> str:
        return "skill" if self.skill is not None else "agent"

    @property
    def source(self) -> str:
        return self.skill if self.skill is not None else self.agent  # type: ignore[return-value]

    @property
    def primary_task(self) -> TaskConfig:
        if self.task is not None:
            return self.task
        assert self.tasks
        return self.tasks[0]


def format_validation_error(exc: ValidationError) -> tuple[str, str]:
    """The first error of a pydantic ValidationError as (dotted field path, message)."""
    err = exc.errors()[0]
    loc = [str(p) for p in err.get("loc", ()) if not _is_union_tag(p)]
    field = ".".join(_join_loc(loc)) or "(top level)"
    kind = err.get("type", "")
    msg = err.get("msg", "invalid value")
    if kind == "extra_forbidden":
        msg = "unknown key"
    elif kind == "missing":
        msg = "required field is missing"
    elif msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    elif kind == "union_tag_invalid" or kind == "literal_error":
        msg = msg.replace("Input tag", "type")
    return field, msg


def _is_union_tag(part: Any) -> bool:
    return isinstance(part, str) and part in {"deterministic", "llm_rubric", "assertions"}


def _join_loc(loc: list[str]) -> list[str]:
    out: list[str] = []
    for part in loc:
        if part.isdigit() and out:
            out[-1] = f"{out[-1]}[{part}]"
        else:
            out.append(part)
    return out


def read_yaml(path: Path) -> Any:
    if not path.exists():
        raise InputError(str(path), None, "file not found")
    if path.is_dir():
        raise InputError(str(path), None, "is a directory, expected an eval.yaml file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(str(path), None, "is not UTF-8 text") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "YAML"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(str(path), where, f"invalid YAML: {problem}") from None


def parse_eval_config(data: Any, source: str) -> SkillEvalConfig:
    if not isinstance(data, dict):
        raise InputError(source, None, "expected a YAML mapping at the top level")
    try:
        return SkillEvalConfig.model_validate(data)
    except ValidationError as exc:
        field, msg = format_validation_error(exc)
        raise InputError(source, field, msg) from None


class LoadedEval(BaseModel):
    """An eval.yaml after validation, with its skill/agent file resolved and read."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: Path
    config: SkillEvalConfig
    source_path: Path
    source_text: str

    @property
    def kind(self) -> str:
        return self.config.kind

    @property
    def name(self) -> str:
        if self.config.name:
            return self.config.name
        # evals/<plugin>/skills/<name>/eval.yaml -> <name>
        return self.path.parent.name


def load_eval(path: str | Path) -> LoadedEval:
    """Read, validate and resolve one eval.yaml."""
    p = Path(path)
    cfg = parse_eval_config(read_yaml(p), str(p))
    field = cfg.kind
    source = (p.parent / cfg.source).resolve()
    if not source.is_file():
        raise InputError(str(p), field, f"file {cfg.source!r} not found (looked in {p.parent})")
    try:
        text = source.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(str(p), field, f"{cfg.source!r} is not UTF-8 text") from None
    if not text.strip():
        raise InputError(str(p), field, f"{cfg.source!r} is empty")
    return LoadedEval(path=p, config=cfg, source_path=source, source_text=text)


def discover_evals(directory: str | Path) -> list[Path]:
    """Every eval.yaml below ``directory``, sorted for a stable order."""
    d = Path(directory)
    if not d.exists():
        raise InputError(str(d), None, "directory not found")
    if not d.is_dir():
        raise InputError(str(d), None, "is not a directory")
    found = sorted(
        p for p in d.rglob("*") if p.is_file() and p.name in ("eval.yaml", "eval.yml") and "runs" not in p.relative_to(d).parts[:-1]
    )
    if not found:
        raise InputError(str(d), None, "no eval.yaml files found below this directory")
    return found
