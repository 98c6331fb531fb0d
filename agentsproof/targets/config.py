"""targets.yaml: the agents a trial can run, by name.

Looked up, for a name, in this order (the first file that defines it wins):

1. the file given with ``--targets FILE``;
2. ``targets.yaml`` beside the eval file;
3. ``.agentsproof/targets.yaml`` in the eval's folder and every folder above it;
4. ``$XDG_CONFIG_HOME/agentsproof/targets.yaml`` (``~/.config/agentsproof/targets.yaml``).

A built-in target ``copilot`` (tools ``bash``, ``view``, ``create``) exists without a file.

String values may refer to environment variables as ``${NAME}`` so that no secret is
written in a file; they are expanded when the run starts (a missing variable is an input
error naming the file and the field) and never shown in reports, which carry the text as
written. ``{here}`` stands for the folder of the targets.yaml itself (e.g. an agent script
kept beside it: ``command: [python3, "{here}/agent.py", "{prompt}"]``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from agentsproof.core.errors import InputError
from agentsproof.model.graders import FieldError, Strict, workspace_glob

TARGETS_FILE = "targets.yaml"
MAX_TARGET_TIMEOUT = 86_400.0
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _relative(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return workspace_glob(value)
    except ValueError as exc:
        raise ValueError(str(exc)) from None


class CommandTargetSpec(Strict):
    """Any CLI agent, run in the trial's workspace."""

    type: Literal["command"]
    command: list[Annotated[str, Field(min_length=1)]] = Field(
        min_length=1, description="argv; '{prompt}' is replaced by the instruction (else it goes on stdin)."
    )
    stdin: bool = Field(False, strict=True, description="Send the instruction on stdin even when argv has '{prompt}'.")
    skill_path: str = Field(
        ".agents/skills/{name}/SKILL.md",
        description="Where the with-arm's skill file is installed in the workspace ('{name}' = the skill's name).",
    )
    answer_file: str | None = Field(None, description="Read the answer from this workspace file instead of stdout.")
    trace_file: str | None = Field(
        None, description="A JSONL file of tool calls the agent writes (relative to the workspace); env AGENTSPROOF_TRACE_FILE names it."
    )
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables ('${VAR}' allowed).")
    timeout: float | None = Field(None, gt=0, le=MAX_TARGET_TIMEOUT, allow_inf_nan=False, description="Seconds; default: the eval's.")
    sandbox: bool = Field(False, strict=True, description="Run under bubblewrap: workspace read-write, the rest read-only, loopback only.")
    loopback_ports: list[Annotated[int, Field(ge=1, le=65535, strict=True)]] = Field(
        default_factory=list,
        max_length=32,
        description="With sandbox: host ports on 127.0.0.1 the agent may still reach (e.g. a local model server), as 127.0.0.1:PORT inside.",
    )

    @field_validator("skill_path", "answer_file", "trace_file")
    @classmethod
    def _inside(cls, value: str | None) -> str | None:
        return _relative(value)

    @model_validator(mode="after")
    def _ports_need_sandbox(self) -> CommandTargetSpec:
        if self.loopback_ports and not self.sandbox:
            raise FieldError("loopback_ports", "only applies with 'sandbox: true' (without a sandbox every port is reachable)")
        if len(set(self.loopback_ports)) != len(self.loopback_ports):
            raise FieldError("loopback_ports", "lists a port twice")
        return self


class HttpTargetSpec(Strict):
    """Any JSON agent endpoint: POST {request_field: prompt, ...extra} → answer at a dotted path."""

    type: Literal["http"]
    url: str = Field(min_length=1)
    with_url: str | None = Field(None, description="A second endpoint for the with-arm (instead of skill_field).")
    request_field: str = Field("prompt", min_length=1, description="Dotted path of the instruction in the request body.")
    answer_field: str = Field("answer", min_length=1, description="Dotted path of the answer in the reply, e.g. 'choices.0.text'.")
    tools_field: str | None = Field(None, description="Dotted path of the tool calls (names, or objects with 'name').")
    skill_field: str | None = Field(None, description="Dotted path the with-arm's skill text is sent in.")
    skill_used_field: str | None = Field(None, description="Dotted path of a boolean: the agent used the skill.")
    usage_field: str | None = Field(None, description="Dotted path of an OpenAI-style usage object.")
    cost_field: str | None = Field(None, description="Dotted path of the trial's cost in USD (a number); default: usage.cost.")
    token_env: str | None = Field(None, description="Env var holding a bearer token (sent as Authorization: Bearer).")
    headers: dict[str, str] = Field(default_factory=dict, description="Extra headers ('${VAR}' allowed).")
    extra: dict[str, Any] = Field(default_factory=dict, description="Fixed fields merged into every request body.")
    timeout: float | None = Field(None, gt=0, le=MAX_TARGET_TIMEOUT, allow_inf_nan=False)
    max_concurrency: int | None = Field(None, ge=1, le=512, strict=True)

    @field_validator("url", "with_url")
    @classmethod
    def _http(cls, value: str | None) -> str | None:
        if value is not None and not _ENV_REF.search(value) and not re.match(r"^https?://", value):
            raise ValueError(f"{value!r} is not an http:// or https:// URL")
        return value

    @field_validator("token_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", value):
            raise ValueError(f"{value!r} is not an environment variable name (give the name, not the token)")
        return value

    @model_validator(mode="after")
    def _one_skill_route(self) -> HttpTargetSpec:
        if self.skill_field is not None and self.with_url is not None:
            raise FieldError("with_url", "give one of skill_field and with_url")
        if self.skill_field is None and self.with_url is None:
            raise FieldError(
                "skill_field", "is required (or with_url): without one, both arms send the same request and the eval measures nothing"
            )
        return self


class CopilotTargetSpec(Strict):
    """The GitHub Copilot CLI through its SDK, working in the trial's workspace."""

    type: Literal["copilot"]
    tools: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=lambda: ["bash", "view", "create"])
    inject: Literal["skill", "system"] = Field(
        "system", description="system: the skill is the system message; skill: loaded as a Copilot skill (skill_directories)."
    )
    model: str | None = Field(None, description="Default: the run's --model.")
    timeout: float | None = Field(None, gt=0, le=MAX_TARGET_TIMEOUT, allow_inf_nan=False)


TargetSpec = Annotated[CommandTargetSpec | HttpTargetSpec | CopilotTargetSpec, Field(discriminator="type")]
TARGET_TYPES = ("command", "http", "copilot")
BUILTIN = {"copilot": {"type": "copilot"}}


@dataclass(frozen=True)
class TargetDef:
    name: str
    spec: Any
    """The spec as written (``${VAR}`` references unexpanded): safe to show."""
    source: str
    """The file it came from (or 'built-in')."""
    folder: Path | None = None
    """The folder of that file (``{here}``); None for the built-in targets."""

    def expanded(self) -> Any:
        """The spec with ``${VAR}`` and ``{here}`` replaced; InputError naming a missing variable."""
        data = _expand(self.spec.model_dump(by_alias=True), self.source, self.name, self.folder)
        return type(self.spec).model_validate(data)


def _expand(value: Any, source: str, field: str, here: Path | None) -> Any:
    if isinstance(value, str):
        def sub(m: re.Match[str]) -> str:
            name = m.group(1)
            if name not in os.environ:
                raise InputError(source, field, f"environment variable {name} is not set")
            return os.environ[name]

        text = _ENV_REF.sub(sub, value)
        return text.replace("{here}", str(here)) if here is not None else text
    if isinstance(value, dict):
        return {k: _expand(v, source, f"{field}.{k}", here) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, source, f"{field}[{i}]", here) for i, v in enumerate(value)]
    return value


def parse_targets(data: Any, source: str, folder: Path | None = None) -> dict[str, TargetDef]:
    from pydantic import TypeAdapter

    from agentsproof.core.validation import format_validation_error

    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(source, None, "expected a mapping of target names to settings")
    adapter: TypeAdapter[Any] = TypeAdapter(TargetSpec)
    out: dict[str, TargetDef] = {}
    for name, spec in data.items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise InputError(source, str(name), "is not a valid target name (letters, digits, '.', '_', '-')")
        if not isinstance(spec, dict):
            raise InputError(source, name, "expected a mapping with a 'type'")
        if "type" not in spec:
            raise InputError(source, f"{name}.type", "required field is missing; use one of " + ", ".join(map(repr, TARGET_TYPES)))
        if spec["type"] not in TARGET_TYPES:
            raise InputError(source, f"{name}.type", f"unknown target type {spec['type']!r}; use one of " + ", ".join(map(repr, TARGET_TYPES)))
        try:
            model = adapter.validate_python(spec)
        except ValidationError as exc:
            field, msg = format_validation_error(exc)
            parts = field.split(".", 1)
            if parts[0] in TARGET_TYPES:
                field = parts[1] if len(parts) > 1 else "(top level)"
            raise InputError(source, f"{name}.{field}", msg) from None
        out[name] = TargetDef(name=name, spec=model, source=source, folder=folder)
    return out


def candidate_files(near: Path | None, explicit: Path | None = None) -> list[Path]:
    """The targets.yaml files that may define a name, in lookup order."""
    files: list[Path] = []
    if explicit is not None:
        files.append(explicit)
    if near is not None:
        folder = near.resolve() if near.is_dir() else near.resolve().parent
        files.append(folder / TARGETS_FILE)
        for parent in [folder, *folder.parents]:
            files.append(parent / ".agentsproof" / TARGETS_FILE)
    config_home = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    files.append(config_home / "agentsproof" / TARGETS_FILE)
    return files


def find_target(name: str, near: Path | None, explicit: Path | None = None) -> TargetDef:
    """The definition of target ``name``; InputError (naming where it looked) when none."""
    from agentsproof.core.inputs import display
    from agentsproof.core.validation import read_yaml

    if explicit is not None and not explicit.is_file():
        raise InputError("command line", "--targets", f"file {display(explicit)!r} not found")
    looked: list[str] = []
    for path in candidate_files(near, explicit):
        if not path.is_file():
            continue
        looked.append(display(path))
        defs = parse_targets(read_yaml(path), display(path), path.resolve().parent)
        if name in defs:
            return defs[name]
    if name in BUILTIN:
        return parse_targets({name: BUILTIN[name]}, "built-in")[name]
    where = ", ".join(looked) if looked else f"no {TARGETS_FILE} found beside the eval, in .agentsproof/ above it, or in ~/.config/agentsproof/"
    known = sorted(set(BUILTIN))
    raise InputError(None, None, f"unknown target {name!r} ({where}; built-in: {', '.join(known)})")


def check_target_name(name: str, near: Path, source: str, field: str, explicit: Path | None = None) -> TargetDef:
    """``find_target`` with the error reported against the file and field that named it."""
    try:
        return find_target(name, near, explicit)
    except InputError as err:
        if err.source is None:
            raise InputError(source, field, err.message) from None
        raise


def targets_json_schema() -> dict[str, Any]:
    """JSON Schema of targets.yaml (a mapping of target names to settings), for editors."""
    from pydantic import TypeAdapter

    one = TypeAdapter(TargetSpec).json_schema()
    defs = one.pop("$defs", {})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "targets.yaml",
        "type": "object",
        "propertyNames": {"pattern": _NAME.pattern},
        "additionalProperties": one,
        "$defs": defs,
    }
