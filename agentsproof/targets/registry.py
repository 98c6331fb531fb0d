"""From a target name to a running :class:`~agentsproof.targets.base.Target`.

Each kind lives in its own module, imported only when a run uses it; adding a kind is one
module and one line in :data:`KINDS`.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from agentsproof.targets.base import Target
from agentsproof.targets.config import TargetDef, find_target

KINDS: dict[str, str] = {
    "command": "agentsproof.targets.command:CommandTarget",
    "http": "agentsproof.targets.http:HttpTarget",
    "copilot": "agentsproof.targets.copilot:CopilotTarget",
}


def build_target(defn: TargetDef, *, model: str | None = None) -> Target:
    """A target ready to run: ``${VAR}`` references expanded (InputError when one is missing).

    ``model`` is the run's ``--model`` (targets that talk to a model use it unless their
    own settings name one); ``source`` (the targets file) is what set-up errors name."""
    module_name, cls_name = KINDS[defn.spec.type].split(":")
    cls: Any = getattr(importlib.import_module(module_name), cls_name)
    return cls(defn.name, defn.expanded(), defn.spec, model=model, source=defn.source)


def resolve(name: str, near: Path | None, explicit: Path | None = None) -> TargetDef:
    return find_target(name, near, explicit)
