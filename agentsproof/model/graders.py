"""Grader models of eval.yaml: what each grader type accepts, validated strictly.

Answer graders (``deterministic``, ``llm_rubric``, ``assertions``) read the final answer;
agent graders (``files``, ``script``, ``tool_calls``, ``skill_used``) read what an agent
trial left behind: its workspace, its trajectory, whether it loaded the skill.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

MAX_WEIGHT = 1000.0
MAX_SCRIPT_TIMEOUT = 3600.0


class FieldError(ValueError):
    """A validator error about a named field (relative to the model that raises it)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Checks(Strict):
    """String and regex checks of a deterministic grader; each entry is one check."""

    mustContain: list[str] = Field(default_factory=list, description="Substrings that must appear.")
    mustNotContain: list[str] = Field(default_factory=list, description="Substrings that must not appear.")
    regexMatch: list[str] = Field(default_factory=list, description="Python regexes that must match somewhere (re.search).")
    caseSensitive: bool = Field(False, strict=True, description="Match mustContain/mustNotContain case-sensitively.")

    @field_validator("regexMatch")
    @classmethod
    def _compile(cls, patterns: list[str]) -> list[str]:
        for i, pattern in enumerate(patterns):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise FieldError(f"[{i}]", f"{pattern!r} is not a valid regex: {exc}") from None
        return patterns

    @field_validator("mustContain", "mustNotContain")
    @classmethod
    def _non_empty(cls, items: list[str]) -> list[str]:
        for i, item in enumerate(items):
            if not item:
                raise FieldError(f"[{i}]", "is an empty string")
        return items

    def count(self) -> int:
        return len(self.mustContain) + len(self.mustNotContain) + len(self.regexMatch)


class DeterministicGrader(Strict):
    type: Literal["deterministic"]
    checks: Checks
    weight: float = Field(1.0, gt=0, le=MAX_WEIGHT, strict=True, allow_inf_nan=False, description="Relative weight in the trial score.")

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
            raise FieldError("checks", "a deterministic grader needs at least one check")
        return self


class LLMRubricGrader(Strict):
    type: Literal["llm_rubric"]
    rubric: str = Field(min_length=1, description="What the judge scores, 0 to 1.")
    weight: float = Field(1.0, gt=0, le=MAX_WEIGHT, strict=True, allow_inf_nan=False)


class AssertionsGrader(Strict):
    type: Literal["assertions"]
    assertions: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)
    weight: float = Field(1.0, gt=0, le=MAX_WEIGHT, strict=True, allow_inf_nan=False)


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


def _globs(items: list[str]) -> list[str]:
    out = []
    for i, item in enumerate(items):
        try:
            out.append(workspace_glob(item))
        except ValueError as exc:
            raise FieldError(f"[{i}]", str(exc)) from None
    return out


def _one_or_many(value: Any) -> Any:
    """``"a.md"`` is shorthand for ``["a.md"]``."""
    return [value] if isinstance(value, str) else value


class FilesGrader(Strict):
    """Files the agent must (not) leave in its workspace, and what they must hold.

    Globs are relative to the workspace: ``*`` and ``?`` stay within one folder, ``**``
    spans folders, and wildcards match names starting with a dot too. A content check
    (mustContain, mustNotContain, regexMatch, json) on a glob holds for every file it
    matches, and fails when it matches none. Each string, pattern and glob is one check;
    the score is the share that passed.
    """

    type: Literal["files"]
    exists: list[str] = Field(default_factory=list, description="Globs that must each match at least one file or folder.")
    absent: list[str] = Field(default_factory=list, description="Globs that must match nothing.")
    mustContain: dict[str, list[str]] = Field(default_factory=dict, description="Per file (or glob): substrings it must contain.")
    mustNotContain: dict[str, list[str]] = Field(default_factory=dict, description="Per file (or glob): substrings it must not contain.")
    regexMatch: dict[str, list[str]] = Field(default_factory=dict, description="Per file (or glob): regexes that must match (re.search).")
    json_valid: list[str] = Field(default_factory=list, alias="json", description="Globs whose files must be valid JSON.")
    caseSensitive: bool = Field(False, strict=True, description="Match mustContain/mustNotContain case-sensitively.")
    weight: float = Field(1.0, gt=0, le=MAX_WEIGHT, strict=True, allow_inf_nan=False, description="Relative weight in the trial score.")

    @field_validator("exists", "absent", mode="before")
    @classmethod
    def _glob_shorthand(cls, value: Any) -> Any:
        return _one_or_many(value)

    @field_validator("exists", "absent")
    @classmethod
    def _check_globs(cls, items: list[str]) -> list[str]:
        return _globs(items)

    @field_validator("json_valid", mode="before")
    @classmethod
    def _json_forms(cls, value: Any) -> Any:
        # json: "out.json" | ["a.json", "b/*.json"] | {"out.json": "valid"}
        if isinstance(value, dict):
            for key, want in value.items():
                if want not in ("valid", True):
                    raise FieldError(f"[{key!r}]", "use 'valid' (the only JSON check)")
            return list(value)
        return _one_or_many(value)

    @field_validator("json_valid")
    @classmethod
    def _json_globs(cls, items: list[str]) -> list[str]:
        return _globs(items)

    @field_validator("mustContain", "mustNotContain", "regexMatch", mode="before")
    @classmethod
    def _per_file_shorthand(cls, value: Any) -> Any:
        # {"summary.md": "revenue"} is shorthand for {"summary.md": ["revenue"]}.
        if isinstance(value, dict):
            return {key: _one_or_many(checks) for key, checks in value.items()}
        return value

    @field_validator("mustContain", "mustNotContain", "regexMatch")
    @classmethod
    def _per_file(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for path, checks in value.items():
            try:
                key = workspace_glob(path)
            except ValueError as exc:
                raise FieldError(f"[{path!r}]", str(exc)) from None
            if not checks:
                raise FieldError(f"[{path!r}]", "is empty; give at least one string")
            for i, check in enumerate(checks):
                if not check:
                    raise FieldError(f"[{path!r}][{i}]", "is an empty string")
            if key in out:
                raise FieldError(f"[{path!r}]", f"names the same files as {key!r}; merge the two")
            out[key] = checks
        return out

    @field_validator("regexMatch")
    @classmethod
    def _compile(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for path, patterns in value.items():
            for i, pattern in enumerate(patterns):
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise FieldError(f"[{path!r}][{i}]", f"{pattern!r} is not a valid regex: {exc}") from None
        return value

    @model_validator(mode="after")
    def _has_checks(self) -> "FilesGrader":
        if not (self.exists or self.absent or self.mustContain or self.mustNotContain or self.regexMatch or self.json_valid):
            raise FieldError("exists", "a files grader needs at least one check (exists, absent, mustContain, mustNotContain, regexMatch, json)")
        return self


SCRIPT_INTERPRETERS = {".py": "python3", ".sh": "sh", ".bash": "bash", ".js": "node", ".mjs": "node", ".cjs": "node"}
"""How a ``script:`` file is run, by extension; other files are run directly (executable)."""


class ScriptGrader(Strict):
    """A command run in the trial's workspace after the agent finished.

    Accepted forms (exactly one of them)::

        run: pytest -q tests/          # a shell command (sh -c), skillgrade's form
        run: [python3, check.py]       # an argv list, no shell
        command: ...                   # the same as run
        script: checks/verify.py       # a file in the workspace, run by its extension:
                                       # .py python3, .sh sh, .bash bash, .js/.mjs/.cjs node,
                                       # anything else directly (it must be executable)

    skillgrade's deterministic grader (``type: deterministic`` with ``run:`` and no
    ``checks``) is read as this grader.

    Exit 0 = pass (score 1), other exits = fail (score 0), unless stdout's last non-empty
    line (or all of stdout) is a JSON object with a ``score`` from 0 to 1, which is then the
    score, with optional ``details`` (text) and ``checks`` (``[{"name", "passed",
    "message"}]``, skillgrade's output). A score outside 0..1 or a run past the timeout
    errors the grader. The command gets env ``AGENTSPROOF_WORKSPACE`` (its working folder)
    and ``AGENTSPROOF_ANSWER_FILE`` (the final answer, in a file outside the workspace);
    ``stdin: answer`` also gives it the answer on stdin (EVAL.yaml's code-grader), ``stdin:
    json`` agentv's payload ``{"output": ..., "answer": ...}``.
    Relative paths in ``run`` and ``script`` are relative to the workspace, so a checker
    file comes from the eval's ``workspace:`` folder (or an absolute path).
    """

    type: Literal["script"]
    run: str | list[Annotated[str, Field(min_length=1)]] | None = Field(
        None, description="A shell command (run with sh -c), or an argv list. Alias: command."
    )
    script: str | None = Field(
        None, description="A script file relative to the workspace, run by its extension (.py with python3, .sh with sh, .js with node)."
    )
    stdin: Literal["none", "answer", "json"] = Field(
        "none", description="What the command reads on stdin: nothing, the answer, or agentv's JSON payload {output, answer}."
    )
    timeout: float = Field(
        60.0, gt=0, le=MAX_SCRIPT_TIMEOUT, strict=False, allow_inf_nan=False,
        description="Seconds; capped by the trial's timeout. The command and all it started are stopped then.",
    )
    weight: float = Field(1.0, gt=0, le=MAX_WEIGHT, strict=True, allow_inf_nan=False, description="Relative weight in the trial score.")

    @model_validator(mode="before")
    @classmethod
    def _command_alias(cls, data: Any) -> Any:
        if isinstance(data, dict) and "command" in data:
            if "run" in data:
                raise FieldError("command", "is the same as 'run'; keep one")
            data = {("run" if k == "command" else k): v for k, v in data.items()}
        return data

    @field_validator("run")
    @classmethod
    def _not_empty(cls, value: str | list[str] | None) -> str | list[str] | None:
        if (isinstance(value, str) and not value.strip()) or (isinstance(value, list) and not value):
            raise ValueError("is empty; give the command to run")
        return value

    @field_validator("script")
    @classmethod
    def _script_path(cls, value: str | None) -> str | None:
        if value is None:
            return None
        path = workspace_glob(value)
        if any(ch in path for ch in "*?["):
            raise ValueError(f"{value!r} is a glob; give one file")
        return path

    @model_validator(mode="after")
    def _one_form(self) -> "ScriptGrader":
        if self.run is None and self.script is None:
            raise FieldError("run", "required field is missing; give 'run' (a command) or 'script' (a file)")
        if self.run is not None and self.script is not None:
            raise FieldError("script", "give 'run' or 'script', not both")
        return self

    def argv(self, eval_dir: Path | None = None) -> list[str]:
        """What is executed, with the workspace as the working folder. A ``script:`` found
        beside the eval file runs from there (out of the agent's sight); otherwise it is
        looked up in the workspace."""
        if isinstance(self.run, str):
            return ["sh", "-c", self.run]
        if isinstance(self.run, list):
            return list(self.run)
        assert self.script is not None
        beside_eval = eval_dir is not None and (eval_dir / self.script).is_file()
        path = str((eval_dir / self.script).resolve()) if beside_eval and eval_dir is not None else self.script
        interpreter = SCRIPT_INTERPRETERS.get(PurePosixPath(self.script).suffix.lower())
        if interpreter:
            return [interpreter, path]
        return [path if path.startswith(("/", "./")) else "./" + path]

    def shown(self) -> str:
        """The command as written, on one line, for reports."""
        if isinstance(self.run, str):
            text = " ".join(self.run.split())
        elif isinstance(self.run, list):
            text = shlex.join(self.run)
        else:
            text = f"script {self.script}"
        return text if len(text) <= 200 else text[:199] + "…"


class ToolCallsGrader(Strict):
    """Checks of the trajectory, with the SDK's trace_assertions vocabulary.

    Names may use ``*`` wildcards (``mcp__*``); every other character stands for itself.
    Steps are the tool calls of the trial. Each entry is one check; the score is the share
    that passed."""

    type: Literal["tool_calls"]
    must_call: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list, description="Tools that must each be called at least once.")
    must_not_call: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list, description="Tools that must never be called.")
    max_steps: int | None = Field(None, ge=0, strict=True, description="At most this many tool calls.")
    min_steps: int | None = Field(None, ge=0, strict=True, description="At least this many tool calls.")
    sequence: list[Annotated[str, Field(min_length=1)]] = Field(
        default_factory=list, description="Tools called in this order (other calls may come between)."
    )
    weight: float = Field(1.0, gt=0, le=MAX_WEIGHT, strict=True, allow_inf_nan=False, description="Relative weight in the trial score.")

    @field_validator("must_call", "must_not_call", "sequence", mode="before")
    @classmethod
    def _name_shorthand(cls, value: Any) -> Any:
        return _one_or_many(value)

    @model_validator(mode="after")
    def _has_checks(self) -> "ToolCallsGrader":
        if not (self.must_call or self.must_not_call or self.sequence) and self.max_steps is None and self.min_steps is None:
            raise FieldError("must_call", "a tool_calls grader needs at least one check (must_call, must_not_call, max_steps, min_steps, sequence)")
        if self.max_steps is not None and self.min_steps is not None and self.min_steps > self.max_steps:
            raise FieldError("min_steps", f"{self.min_steps} is more than max_steps ({self.max_steps})")
        return self


class SkillUsedGrader(Strict):
    """Whether the agent loaded or read the skill in the trial (``expected: false`` for
    "must not use it"). Errors when the target cannot tell."""

    type: Literal["skill_used"]
    expected: bool = Field(True, strict=True, description="true: the skill must be used; false: it must not be.")
    weight: float = Field(1.0, gt=0, le=MAX_WEIGHT, strict=True, allow_inf_nan=False, description="Relative weight in the trial score.")


class PairwiseGrader(Strict):
    """A judge sees the with- and without-skill answers to the same prompt side by side and
    picks the better one or a tie, asked twice with the order swapped (disagreement = tie).
    Not part of the trial score: the report shows the with-arm preference rate."""

    type: Literal["pairwise"]
    criteria: str | None = Field(None, min_length=1, description="What makes an answer better (default: which answer serves the request better).")


GRADER_TYPES = ("deterministic", "llm_rubric", "assertions", "files", "script", "tool_calls", "skill_used", "pairwise")
AGENT_GRADER_TYPES = ("files", "script", "tool_calls", "skill_used")


def _skillgrade_forms(value: Any) -> Any:
    """skillgrade's script grader (``type: deterministic`` with ``run:``) is our ``script``."""
    if isinstance(value, dict) and value.get("type") == "deterministic" and "checks" not in value and ("run" in value or "command" in value):
        return {**value, "type": "script"}
    return value


GraderConfig = Annotated[
    Union[
        DeterministicGrader, LLMRubricGrader, AssertionsGrader, FilesGrader, ScriptGrader, ToolCallsGrader, SkillUsedGrader,
        PairwiseGrader,
    ],
    Field(discriminator="type"),
    BeforeValidator(_skillgrade_forms),
]
