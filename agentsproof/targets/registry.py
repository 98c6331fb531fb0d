"""Target kinds by name: one line each, an import path to the class that runs it.

Adding a kind of agent: write ``agentsproof/targets/<kind>.py`` with a :class:`Target`
subclass whose ``kind`` is its name and whose ``spec_model`` is its targets.yaml entry
(a strict model with ``type: Literal["<kind>"]``), and add its line to ``KINDS``. Modules
are imported only when a run or a targets.yaml needs them.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Annotated, Any, Union

from pydantic import Field

from agentsproof.targets.base import Target
from agentsproof.targets.spec import TargetDef

KINDS: dict[str, str] = {
    "command": "agentsproof.targets.command:CommandTarget",
    "http": "agentsproof.targets.http:HttpTarget",
    "copilot": "agentsproof.targets.copilot:CopilotTarget",
    "claude-code": "agentsproof.targets.claude_code:ClaudeCodeTarget",
    "codex": "agentsproof.targets.codex:CodexTarget",
}

TARGET_TYPES: tuple[str, ...] = tuple(KINDS)


@cache
def target_class(kind: str) -> type[Target]:
    """The class of target kind ``kind``; KeyError for an unknown one."""
    module_name, _, cls_name = KINDS[kind].partition(":")
    cls: type[Target] = getattr(importlib.import_module(module_name), cls_name)
    return cls


def spec_union() -> Any:
    """Any target's targets.yaml entry, validated by its ``type``."""
    members = tuple(target_class(kind).spec_model for kind in KINDS)
    return Annotated[Union[members], Field(discriminator="type")]  # noqa: UP007 - built at run time


def build_target(defn: TargetDef, *, model: str | None = None) -> Target:
    """A target ready to run: ``${VAR}`` references expanded (InputError when one is missing).

    ``model`` is the run's ``--model`` (targets that talk to a model use it unless their
    own settings name one); ``source`` (the targets file) is what set-up errors name."""
    cls: Any = target_class(defn.spec.type)
    target: Target = cls(defn.name, defn.expanded(), defn.spec, model=model, source=defn.source)
    return target
