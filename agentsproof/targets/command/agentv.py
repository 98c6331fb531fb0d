"""agentv's ``cli`` providers as command targets.

agentv defines programs as targets in ``.agentv/providers.yaml`` (a list of ``{id: cli,
label, command, ...}``, or ``{providers: [...]}``) and ``.agentv/targets.yaml`` (``targets:
[{name, provider: cli, command, ...}]``), in the eval's folder or a folder above it. A
label that names such an entry (and no targets.yaml target) runs as our ``command``
target, sandboxed as every command target is (bubblewrap: the workspace read-write, the
rest read-only, no network), with its settings passed as agentv passes them
(:mod:`agentsproof.targets.command.agentv_run` runs the command line):

- ``command``: a shell line; ``{PROMPT}``, ``{PROMPT_FILE}``, ``{OUTPUT_FILE}``,
  ``{FILES}``, ``{EVAL_ID}``, ``{ATTEMPT}`` filled, each shell-quoted; the answer is the
  output file (agentv's JSON ``output``/``text``, or its text);
- ``files_format`` (``attachments_format``): how each of ``{FILES}`` is written;
- ``timeout_seconds``: the target's timeout;
- ``cwd``: as agentv, the command runs in the eval's workspace when it has one (the trial's
  workspace, a copy of ``environment.workdir``), else in ``cwd`` relative to the eval file
  (else the eval file's folder), read-only in the sandbox (the output file is written
  outside it);
- ``healthcheck``, ``verbose``, ``keep_temp_files``, ``workers``, ``grader_target``:
  read, not used (a note says so): they do not change what is measured (the judge is
  ``--judge-model`` / ``--model``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError
from agentsproof.core.notice import note_once
from agentsproof.targets.base import TargetDef

RUNNER = Path(__file__).resolve().parent / "agentv_run.py"
CLI_KINDS = frozenset({"cli", "command"})
KNOWN = {"id", "provider", "label", "name", "command", "files_format", "attachments_format", "cwd", "timeout_seconds"}
NOTED = {"healthcheck", "verbose", "cli_verbose", "keep_temp_files", "keep_output_files", "workers", "grader_target", "judge_target", "config"}


def _kind(entry: dict[str, Any]) -> str:
    raw = entry.get("provider", entry.get("id"))
    return str(raw).split(":", 1)[0].strip().lower() if isinstance(raw, str) else ""


def _label(entry: dict[str, Any]) -> str | None:
    for key in ("label", "name"):
        if isinstance(entry.get(key), str):
            return str(entry[key])
    return None


def find_entry(name: str, near: Path) -> tuple[Path, int, dict[str, Any]] | None:
    """The nearest ``.agentv`` file's ``cli`` entry named ``name`` (file, index, entry), or None."""
    from agentsproof.targets.base import agentv_entries

    for file, i, entry in agentv_entries(near, order=("targets", "providers")):
        if _label(entry) == name and _kind(entry) in CLI_KINDS:
            return file, i, entry
    return None


def agentv_target(name: str, near: Path | None) -> TargetDef | None:
    """A command target for agentv's ``cli`` entry ``name`` near the eval file; None when there is none."""
    from agentsproof.core.inputs import display
    from agentsproof.targets.command.target import CommandTargetSpec

    if near is None:
        return None
    found = find_entry(name, near)
    if found is None:
        return None
    file, i, entry = found
    src = display(file)
    at = f"[{i}]"
    command = entry.get("command")
    if isinstance(command, list) and all(isinstance(c, str) for c in command):
        command = " ".join(command)
    if not isinstance(command, str) or not command.strip():
        raise InputError(src, f"{at}.command", "a cli provider needs a command (a shell line with {PROMPT}, {OUTPUT_FILE}, ...)")
    if "\x00" in command:
        raise InputError(src, f"{at}.command", "holds a NUL character")
    fmt = entry.get("files_format", entry.get("attachments_format", "{path}"))
    if not isinstance(fmt, str):
        raise InputError(src, f"{at}.files_format", "must be a string such as '--file {path}'")
    fmt = fmt or "{path}"
    timeout = entry.get("timeout_seconds")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 86_400):
        raise InputError(src, f"{at}.timeout_seconds", "must be a number of seconds from 0 to 86400")
    cwd = _cwd(src, at, entry, near)
    from agentsproof.core.confine import project_of
    from agentsproof.core.project import project_root

    # the cwd's project (and --root's) are named too, not read by the runner: the sandbox shows them read-only under a masked /tmp
    run_in = [str(cwd), str(project_of(cwd)), str(project_root(near))] if cwd else []
    spec = CommandTargetSpec.model_validate(
        {"type": "command", "command": [sys.executable, "-I", str(RUNNER), command, fmt, *run_in], "timeout": timeout, "sandbox": True}
    )
    where = f"in {display(cwd)} (its cwd; read-only)" if cwd else "in the trial's workspace"
    notes = [f"{at}: {name!r} is agentv's cli provider: it runs as a command target, sandboxed, {where}"]
    ignored = sorted(k for k in entry if k in NOTED)
    if ignored:
        notes.append(f"{at}: {', '.join(ignored)} read, not used: they do not change what is measured (the judge is --judge-model / --model)")
    unknown = sorted(str(k) for k in entry if k not in KNOWN and k not in NOTED)
    if unknown:
        notes.append(f"{at}: {', '.join(unknown)} not read by agentsproof")
    for note in notes:
        note_once(f"{src}: {note}", key=("agentv-cli", src, note))
    return TargetDef(name=name, spec=spec, source=src, folder=None)


def _cwd(src: str, at: str, entry: dict[str, Any], near: Path) -> Path | None:
    """agentv's rule: the eval's workspace when it has one (None: the trial's workspace), else
    ``cwd`` relative to the eval file's folder (else that folder), inside the project."""
    from agentsproof.core.project import resolve_ref
    from agentsproof.core.validation import read_yaml

    if near.is_dir():
        return None
    try:
        data = read_yaml(near)
    except InputError:
        return None
    if not isinstance(data, dict) or data.get("environment") is not None or data.get("workspace") is not None:
        return None
    raw = entry.get("cwd")
    if raw is not None and not isinstance(raw, str):
        raise InputError(src, f"{at}.cwd", "must be a folder path")
    folder = resolve_ref(raw or ".", near, f"{at}.cwd", must_exist=False)
    return folder if folder.is_dir() else None
