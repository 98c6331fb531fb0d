"""evals.json: hand-authored test cases run by ``agentsproof tc-eval``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agentsproof.model.graders import FieldError

MAX_FILE_BYTES = 200_000

CASE_METADATA = ("name", "category", "kind", "description", "tags", "notes")
"""Per-eval keys real skill-creator files carry besides the schema's: kept as the case's
metadata (``name`` also labels the case), never graded."""

FILE_METADATA = ("description", "version", "notes", "$schema")
"""Top-level keys real evals.json files carry besides ``skill_name`` and ``evals``: read and ignored."""


def _assertion_text(value: object, field: str) -> object:
    """An assertion as skill-creator's grading.json writes it, ``{"text": ...}`` (with an ``id``
    or ``passed``/``evidence`` beside it), or ``{"name": ..., "description": ...}``: its statement."""
    if not isinstance(value, dict):
        return value
    for key in ("text", "description", "expectation", "assertion", "check", "statement", "claim"):
        if isinstance(value.get(key), str):
            return value[key]
    raise FieldError(field, "an assertion object needs its statement in 'text' (or 'description')")


class TCEvalCase(BaseModel):
    """One case of evals.json: a prompt, its attached files and what its answer is graded on."""

    model_config = ConfigDict(extra="forbid")

    id: int | str = Field(description="Unique id of the case: an integer (skill-creator's schema), or a name as some real files give.")
    prompt: Annotated[str, Field(min_length=1)]
    expected_output: str | None = Field(None, description="Graded by an LLM rubric (0-1).")
    assertions: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list, description="Each judged pass/fail in its own LLM call.")
    files: list[Annotated[str, Field(min_length=1)]] = Field(
        default_factory=list, description="Paths relative to the JSON file (or, in a skill's evals/ folder, to the skill folder), injected into the prompt."
    )
    name: str | None = Field(None, description="The case's label in reports (metadata; not graded).")
    metadata: dict[str, object] = Field(default_factory=dict, description="category, kind, description, tags, notes: carried with the case, not graded.")

    @model_validator(mode="before")
    @classmethod
    def _expectations(cls, data: object) -> object:
        """skill-creator calls the assertions ``expectations``."""
        if isinstance(data, dict) and "expectations" in data:
            if "assertions" in data:
                raise FieldError("expectations", "is the same as 'assertions'; keep one")
            data = dict(data)
            data["assertions"] = data.pop("expectations")
        if isinstance(data, dict):
            data = dict(data)
            meta = {k: data.pop(k) for k in CASE_METADATA[1:] if k in data}
            if meta:
                if "metadata" in data:
                    raise FieldError("metadata", f"give {', '.join(meta)} inside metadata or beside it, not both")
                data["metadata"] = meta
            if isinstance(data.get("name"), (int, float)) and not isinstance(data.get("name"), bool):
                data["name"] = str(data["name"])
            if isinstance(data.get("assertions"), list):
                data["assertions"] = [_assertion_text(a, f"assertions[{i}]") for i, a in enumerate(data["assertions"])]
        return data

    @field_validator("id", mode="before")
    @classmethod
    def _strict_int(cls, value: object) -> object:
        if isinstance(value, str) and value.strip() and len(value) <= 200:
            return value.strip()
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("must be an integer (or a name)")
        return value

    @field_validator("expected_output")
    @classmethod
    def _blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("is empty; leave it out instead")
        return value


class TCEvalConfig(BaseModel):
    """An evals.json file: the skill under test and its cases (ids unique)."""

    model_config = ConfigDict(extra="forbid")

    skill_name: Annotated[str, Field(min_length=1)] = Field(
        description="Skill .md path, relative to the JSON file; or (skill-creator's layout, <skill>/evals/evals.json) the skill's name, meaning the SKILL.md above the evals/ folder."
    )
    evals: list[TCEvalCase] = Field(min_length=1)
    description: str | None = Field(None, description="Read and ignored (real files carry it).")
    version: str | int | float | None = Field(None, description="Read and ignored (real files carry it).")
    notes: str | list[str] | None = Field(None, description="Read and ignored (real files carry it).")
    schema_: str | None = Field(None, alias="$schema", description="Read and ignored.")

    @model_validator(mode="after")
    def _unique_ids(self) -> TCEvalConfig:
        seen: set[int | str] = set()
        for i, case in enumerate(self.evals):
            if case.id in seen:
                raise FieldError(f"evals[{i}].id", f"{case.id} is used by another case too; ids must be unique")
            seen.add(case.id)
        return self


class LoadedCase(BaseModel):
    """A case with its attached files read: (name, text) pairs, in order."""

    case: TCEvalCase
    file_contents: list[tuple[str, str]] = Field(default_factory=list)
    file_paths: list[Path] = Field(default_factory=list)
    """Where each attached file was read (a folder's files one by one), in ``file_contents``' order."""
    error: str | None = None
    """A problem of this case alone (a fixture that is missing): its trials are errored with it."""

    def full_prompt(self) -> str:
        """The user message: the prompt, then each attached file in a fenced block."""
        if not self.file_contents:
            return self.case.prompt
        parts = [self.case.prompt, "", "Attached files:"]
        for name, text in self.file_contents:
            parts += ["", f"--- {name} ---", text.rstrip("\n"), f"--- end of {name} ---"]
        return "\n".join(parts)


class LoadedTCEval(BaseModel):
    """An evals.json validated and read: its skill's text and every case with its files."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: Path
    config: TCEvalConfig
    skill_path: Path
    skill_text: str
    cases: list[LoadedCase]
    triggers: list[tuple[str, bool]] = Field(default_factory=list)
    """The (prompt, should_trigger) of the cases that say whether the skill should load: an activation suite."""


def evals_json_schema() -> dict:
    """JSON Schema of evals.json, for editors and CI validation."""
    return TCEvalConfig.model_json_schema()
