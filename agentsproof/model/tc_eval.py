"""evals.json: hand-authored test cases run by ``agentsproof tc-eval``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agentsproof.model.evalfile import FieldError, format_validation_error
from agentsproof.core.errors import InputError

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
    from agentsproof.core.inputs import MAX_SOURCE_FILE_BYTES, confined, display, read_json_file, read_text

    p = Path(path)
    src = display(p)
    if not p.exists() and not p.is_symlink():
        raise InputError(src, None, "file not found")
    if p.is_dir():
        raise InputError(src, None, "is a directory, expected an evals.json file")
    data = read_json_file(p)
    if not isinstance(data, dict):
        raise InputError(src, None, "expected a JSON object at the top level")
    try:
        cfg = TCEvalConfig.model_validate(data)
    except ValidationError as exc:
        field, msg = format_validation_error(exc)
        raise InputError(src, field, msg) from None

    skill = confined(cfg.skill_name, p, "skill_name")
    if not skill.exists():
        raise InputError(src, "skill_name", f"file {cfg.skill_name!r} not found (looked in {display(p.parent)})")
    skill_text = read_text(skill, source=src, field="skill_name", max_bytes=MAX_SOURCE_FILE_BYTES, what="skill file")
    if not skill_text.strip():
        raise InputError(src, "skill_name", f"{cfg.skill_name!r} is empty")

    cases: list[LoadedCase] = []
    for i, case in enumerate(cfg.evals):
        contents: list[tuple[str, str]] = []
        for j, rel in enumerate(case.files):
            field = f"evals[{i}].files[{j}]"
            target = confined(rel, p, field)
            if not target.exists():
                raise InputError(src, field, f"file {rel!r} not found")
            contents.append((rel, read_text(target, source=src, field=field, max_bytes=MAX_FILE_BYTES, what="attached file")))
        cases.append(LoadedCase(case=case, file_contents=contents))
    return LoadedTCEval(path=p, config=cfg, skill_path=skill, skill_text=skill_text, cases=cases)


def evals_json_schema() -> dict:
    """JSON Schema of evals.json, for editors and CI validation."""
    return TCEvalConfig.model_json_schema()
