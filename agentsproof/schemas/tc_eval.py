"""evals.json: hand-authored test cases run by ``agentsproof tc-eval``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agentsproof.config import FieldError, format_validation_error
from agentsproof.errors import InputError

MAX_FILE_BYTES = 200_000


class TCEvalCase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: int = Field(description="Unique integer id of the case.")
    prompt: Annotated[str, Field(min_length=1)]
    expected_output: str | None = Field(None, description="Graded by an LLM rubric (0-1).")
    assertions: list[Annotated[str, Field(min_length=1)]] = Field(
        default_factory=list, description="Each judged pass/fail in its own LLM call."
    )
    files: list[Annotated[str, Field(min_length=1)]] = Field(
        default_factory=list, description="Paths relative to the JSON file, injected into the prompt."
    )

    @field_validator("id", mode="before")
    @classmethod
    def _strict_int(cls, value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("must be an integer")
        return value

    @field_validator("expected_output")
    @classmethod
    def _blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("is empty; leave it out instead")
        return value


class TCEvalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    skill_name: Annotated[str, Field(min_length=1)] = Field(description="Skill .md path, relative to the JSON file.")
    evals: list[TCEvalCase] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> "TCEvalConfig":
        seen: set[int] = set()
        for i, case in enumerate(self.evals):
            if case.id in seen:
                raise FieldError(f"evals[{i}].id", f"{case.id} is used by another case too; ids must be unique")
            seen.add(case.id)
        return self


class LoadedCase(BaseModel):
    case: TCEvalCase
    file_contents: list[tuple[str, str]] = Field(default_factory=list)

    def full_prompt(self) -> str:
        """The user message: the prompt, then each attached file in a fenced block."""
        if not self.file_contents:
            return self.case.prompt
        parts = [self.case.prompt, "", "Attached files:"]
        for name, text in self.file_contents:
            parts += ["", f"--- {name} ---", text.rstrip("\n"), f"--- end of {name} ---"]
        return "\n".join(parts)


class LoadedTCEval(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: Path
    config: TCEvalConfig
    skill_path: Path
    skill_text: str
    cases: list[LoadedCase]


def load_tc_eval(path: str | Path) -> LoadedTCEval:
    p = Path(path)
    src = str(p)
    if not p.is_file():
        raise InputError(src, None, "file not found" if not p.exists() else "is not a file")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise InputError(src, None, "is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise InputError(src, f"line {exc.lineno}", f"invalid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise InputError(src, None, "expected a JSON object at the top level")
    try:
        cfg = TCEvalConfig.model_validate(data)
    except ValidationError as exc:
        field, msg = format_validation_error(exc)
        raise InputError(src, field, msg) from None

    base = p.parent.resolve()
    skill = (base / cfg.skill_name).resolve()
    if not skill.is_file():
        raise InputError(src, "skill_name", f"file {cfg.skill_name!r} not found (looked in {p.parent})")
    try:
        skill_text = skill.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(src, "skill_name", f"{cfg.skill_name!r} is not UTF-8 text") from None
    if not skill_text.strip():
        raise InputError(src, "skill_name", f"{cfg.skill_name!r} is empty")

    cases: list[LoadedCase] = []
    for i, case in enumerate(cfg.evals):
        contents: list[tuple[str, str]] = []
        for j, rel in enumerate(case.files):
            field = f"evals[{i}].files[{j}]"
            target = (base / rel).resolve()
            if not target.is_relative_to(base):
                raise InputError(src, field, f"{rel!r} leaves the folder of the JSON file; only files inside it may be attached")
            if not target.is_file():
                raise InputError(src, field, f"file {rel!r} not found")
            raw = target.read_bytes()
            if len(raw) > MAX_FILE_BYTES:
                raise InputError(src, field, f"{rel!r} is {len(raw)} bytes; at most {MAX_FILE_BYTES} may be attached")
            try:
                contents.append((rel, raw.decode("utf-8")))
            except UnicodeDecodeError:
                raise InputError(src, field, f"{rel!r} is not UTF-8 text") from None
        cases.append(LoadedCase(case=case, file_contents=contents))
    return LoadedTCEval(path=p, config=cfg, skill_path=skill, skill_text=skill_text, cases=cases)


def evals_json_schema() -> dict:
    """JSON Schema of evals.json, for editors and CI validation."""
    return TCEvalConfig.model_json_schema()
