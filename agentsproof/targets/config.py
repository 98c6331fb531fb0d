"""targets.yaml: the agents a trial can run, by name.

Looked up, for a name, in this order (the first file that defines it wins):

1. the file given with ``--targets FILE``;
2. ``targets.yaml`` beside the eval file;
3. ``.agentsproof/targets.yaml`` in the eval's folder and every folder above it;
4. ``$XDG_CONFIG_HOME/agentsproof/targets.yaml`` (``~/.config/agentsproof/targets.yaml``);
5. agentv's ``cli`` provider of that label in ``.agentv/providers.yaml`` or
   ``.agentv/targets.yaml`` at or above the eval (a command target:
   :mod:`agentsproof.targets.command.agentv`).

Built-in targets exist without a file: every kind of :mod:`agentsproof.targets.registry`
whose entry needs nothing but its ``type`` (``copilot`` with tools ``bash``, ``view``,
``create``, ``claude-code`` and ``codex``, each with its defaults; :func:`builtin`). A
targets.yaml may redefine a built-in name only when it is owned by the user (or root) and neither it nor its folder
can be written by others (a file planted in a shared temp folder is refused, with one line
naming it); each redefinition is said once on stderr.

String values may refer to environment variables as ``${NAME}`` so that no secret is
written in a file; they are expanded when the run starts (a missing variable is an input
error naming the file and the field) and never shown in reports, which carry the text as
written. ``{here}`` stands for the folder of the targets.yaml itself (e.g. an agent script
kept beside it: ``command: [python3, "{here}/agent.py", "{prompt}"]``).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from agentsproof.core.errors import InputError
from agentsproof.targets import registry
from agentsproof.targets.base import TARGETS_FILE, TargetDef
from agentsproof.targets.registry import spec_union

if TYPE_CHECKING:
    from agentsproof.model.environment import Environment

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def builtin() -> dict[str, dict[str, str]]:
    """The built-in targets' entries, by name: ``{kind: {"type": kind}}`` for every kind the
    targets registry can run by its name alone."""
    return {kind: {"type": kind} for kind in registry.builtin_names()}


def __getattr__(name: str) -> Any:
    if name == "BUILTIN":  # the former constant, read from the targets registry
        return builtin()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def parse_targets(data: Any, source: str, folder: Path | None = None) -> dict[str, TargetDef]:
    """A targets.yaml's entries by name, each checked against its kind's model; InputError naming ``source`` and the entry otherwise."""
    from pydantic import TypeAdapter

    from agentsproof.core.validation import format_validation_error

    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(source, None, "expected a mapping of target names to settings")
    adapter: TypeAdapter[Any] = TypeAdapter(spec_union())
    types = registry.target_types()
    out: dict[str, TargetDef] = {}
    for name, spec in data.items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise InputError(source, str(name), "is not a valid target name (letters, digits, '.', '_', '-')")
        if not isinstance(spec, dict):
            raise InputError(source, name, "expected a mapping with a 'type'")
        if "type" not in spec:
            raise InputError(source, f"{name}.type", "required field is missing; use one of " + ", ".join(map(repr, types)))
        if spec["type"] not in types:
            raise InputError(source, f"{name}.type", f"unknown target type {spec['type']!r}; use one of " + ", ".join(map(repr, types)))
        spec = dict(spec)
        raw_env = spec.pop("environment", None)
        try:
            model = adapter.validate_python(spec)
        except ValidationError as exc:
            field, msg = format_validation_error(exc)
            parts = field.split(".", 1)
            if parts[0] in types:
                field = parts[1] if len(parts) > 1 else "(top level)"
            raise InputError(source, f"{name}.{field}", msg) from None
        env = _environment(raw_env, source, name, folder, spec["type"]) if raw_env is not None else None
        out[name] = TargetDef(name=name, spec=model, source=source, folder=folder, environment=env)
    return out


def _environment(raw: Any, source: str, name: str, folder: Path | None, kind: str) -> Environment:
    """A target's ``environment:`` (the image its trials run in when the eval names none),
    checked as eval.yaml's is, its Dockerfile and context inside the targets.yaml's folder."""
    from agentsproof.core.validation import format_validation_error
    from agentsproof.model.environment import EnvironmentSpec, resolve_confined

    field = f"{name}.environment"
    if not registry.target_class(kind).runs_in_environment:  # Target.runs_in_environment: its agent runs in the container
        raise InputError(source, field, f"a {kind} target does not run in a container")
    if not isinstance(raw, dict):
        raise InputError(source, field, "expected a mapping (image: NAME or dockerfile: FILE, workdir, cpus, memory_mb, ...)")
    try:
        spec = EnvironmentSpec.model_validate(raw)
    except ValidationError as exc:
        sub, msg = format_validation_error(exc)
        raise InputError(source, f"{field}.{sub}" if sub and sub != "(top level)" else field, msg) from None
    if folder is None:
        raise InputError(source, field, "a built-in target has no environment; define the target in a targets.yaml")
    return resolve_confined(spec, folder / Path(source).name, field, root=folder)  # inside the targets.yaml's folder


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
    builtins = builtin()
    for path in candidate_files(near, explicit):
        if not path.is_file():
            continue
        looked.append(display(path))
        defs = parse_targets(read_yaml(path), display(path), path.resolve().parent)
        if name in defs:
            if name in builtins:
                _check_redefinition(path, name)
            return defs[name]
    foreign = registry.foreign_target(name, near)  # agentv's cli or replay provider of that label in .agentv/
    if foreign is not None:
        return foreign
    if name in builtins:
        return parse_targets({name: builtins[name]}, "built-in")[name]
    if name in registry.plugin_kinds():
        registry.target_class(name)  # an installed kind that does not load: its one line (PluginError)
    where = ", ".join(looked) if looked else f"no {TARGETS_FILE} found beside the eval, in .agentsproof/ above it, or in ~/.config/agentsproof/"
    known = sorted(builtins)
    raise InputError(None, None, f"unknown target {name!r} ({where}; built-in: {', '.join(known)})")


def _unsafe(st: os.stat_result, what: str, *, sticky_ok: bool) -> str | None:
    """Why a file or folder with this status could be someone else's doing, or None."""
    if st.st_uid not in (os.getuid(), 0):
        return f"{what} is owned by another user (uid {st.st_uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not (sticky_ok and st.st_mode & stat.S_ISVTX):
        return f"{what} can be written by others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _check_redefinition(path: Path, name: str) -> None:
    """A built-in name redefined by ``path``: InputError unless the file is the user's own
    and safe from others; otherwise said once."""

    from agentsproof.core.inputs import display

    try:
        link = path.lstat()
        checks = [(path.stat(), "the file", False), (path.parent.stat(), "its folder", True)]
    except OSError as err:
        raise InputError(display(path), name, f"cannot check who owns it: {err.strerror or err}") from None
    if stat.S_ISLNK(link.st_mode):  # a link's own mode means nothing; who made it does
        checks.append((os.stat_result((stat.S_IFLNK | 0o755, *tuple(link)[1:])), "the symlink", False))
    for st, what, sticky_ok in checks:
        why = _unsafe(st, what, sticky_ok=sticky_ok)
        if why:
            raise InputError(
                display(path), name, f"redefines the built-in target {name!r}, but {why}; refused (remove it, or make it yours and not writable by others)"
            )
    from agentsproof.core.notice import note_once

    note_once(f"target {name!r} is defined by {display(path)}, not the built-in", key=("targets.yaml", name, str(path)))


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

    from agentsproof.model.environment import EnvironmentSpec

    one = TypeAdapter(spec_union()).json_schema()
    defs = one.pop("$defs", {})
    env = EnvironmentSpec.model_json_schema()
    defs.update(env.pop("$defs", {}))
    defs["EnvironmentSpec"] = env
    kinds = {k for k in registry.target_types() if registry.target_class(k).uses_workspace}
    for entry in defs.values():  # the kinds whose agent works in a workspace may name the image their trials run in
        props = entry.get("properties")
        if isinstance(props, dict) and isinstance(props.get("type"), dict) and props["type"].get("const") in kinds:
            props["environment"] = {"$ref": "#/$defs/EnvironmentSpec"}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "targets.yaml",
        "type": "object",
        "propertyNames": {"pattern": _NAME.pattern},
        "additionalProperties": one,
        "$defs": defs,
    }
