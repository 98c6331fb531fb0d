"""agentv's script assertions (``script`` / ``code-grader``) and custom assertions
(:mod:`agentsproof.formats.agentevals.custom`) as ``script`` graders, for
:mod:`agentsproof.formats.agentevals.asserts`.

As agentv passes them: the command (a command line or an argv list; words naming a file
beside the eval file, or in ``cwd``, become its full path), ``config`` and every key agentv
does not know on a script (``fields``, ``algorithm``, ``expected_tools``, ``expect_created`` …)
in the payload's ``config`` on stdin. ``provider`` (agentv's model proxy for the script) is
noted, not given: a script that calls it errors its trial.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from agentsproof.formats.agentevals.custom import custom_argv
from agentsproof.formats.agentevals.negation import NOT_NEGATABLE
from agentsproof.grading.script import ScriptGrader

SCRIPT_KINDS = ("script", "code-grader")
"""``b`` below is the assertions' :class:`agentsproof.formats.agentevals.asserts.Builder` (not imported: it imports this module)."""
SCRIPT_OWN = {"command", "cwd", "config", "provider"}
"""A script assertion's own keys (its others are its config)."""


def custom_assertion(b: Any, where: str, entry: dict[str, Any], kind: str, found: Path, common: set[str]) -> None:
    """An agentv custom assertion: its file run as a script with the payload on stdin, the entry's other keys its config."""
    label = entry.get("metric") or entry.get("name") or kind
    if not isinstance(label, str) or not label.strip():
        raise b.err(f"{where}.metric", "must be a non-empty string")
    if entry.get("negate") not in (None, False):
        raise b.err(f"{where}.negate", f"negating {kind!r} is not supported: {NOT_NEGATABLE['script']}")
    config = {k: v for k, v in entry.items() if k not in common}
    grader = ScriptGrader(type="script", run=custom_argv(found), stdin="json", weight=b._weight(where, entry), config=config or None)
    b.judge_model = None
    b.add(grader, label, b._gate(where, entry))


def script_assertion(b: Any, where: str, entry: dict[str, Any], kind: str, weight: float, gate: float | None, label: str, common: set[str]) -> None:
    """agentv's script grader: its command, ``cwd``, ``config`` (with its unknown keys) and ``provider`` (noted)."""
    config = {k: v for k, v in entry.items() if k not in common | SCRIPT_OWN | {"threshold"}}
    own = entry.get("config")
    if own is not None and not isinstance(own, dict):
        raise b.err(f"{where}.config", "must be a mapping (passed to the script as the payload's config)")
    config |= own or {}
    if entry.get("provider") not in (None, False):
        from agentsproof.formats.agentevals.providers import say_once

        say_once(b.src, f"{where}.provider: agentv's model proxy for a script is not given; a script that calls it errors its trial")
    base = None
    if entry.get("cwd") is not None:
        from agentsproof.core.inputs import confined

        rel = entry["cwd"]
        if not isinstance(rel, str) or not rel.strip():
            raise b.err(f"{where}.cwd", "must be a folder relative to the eval file")
        folder = b.path.resolve().parent
        base = confined(rel, b.path, f"{where}.cwd", root=folder.parent if folder.name == "evals" else None)
        if not base.is_dir():
            raise b.err(f"{where}.cwd", f"folder {rel!r} not found")
    run = command_argv(b, where, entry, base)
    stdin = "json" if kind == "script" or config else "answer"
    b.add(ScriptGrader(type="script", run=run, stdin=stdin, weight=weight, config=config or None), label, gate)


def command_argv(b: Any, where: str, entry: dict[str, Any], base: Path | None = None) -> list[str]:
    """The command as an argv; words naming a file beside the EVAL.yaml (or in ``base``, the
    script's ``cwd``) become its full path (the command runs in the trial's workspace, not beside the eval)."""
    cmd = entry.get("command")
    if isinstance(cmd, str) and cmd.strip():
        argv = shlex.split(cmd)
    elif isinstance(cmd, list) and cmd and all(isinstance(c, str) and c for c in cmd):
        argv = list(cmd)
    else:
        raise b.err(f"{where}.command", "must be a command line or a list of words")
    base = base or b.path.resolve().parent
    from agentsproof.formats.agentevals.words import names_file

    return [str((base / w).resolve()) if names_file(base, w) else w for w in argv]
