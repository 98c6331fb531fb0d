"""Target kinds by name: one line each, an import path to the class that runs it.

:data:`MODEL_KINDS` holds ``chat``, the kind an item runs when it names no agent (one chat
call with the run's model, built by the session from the run's client); :func:`is_agent`
tells an agent target's name from it, so no code compares a target with ``"chat"`` itself.
:data:`KINDS` holds the agent kinds a targets.yaml entry (or a built-in name) runs.

Adding a kind of agent: write ``agentsproof/targets/<kind>/target.py`` with a :class:`Target`
subclass whose ``kind`` is its name and whose ``spec_model`` is its targets.yaml entry
(a strict model with ``type: Literal["<kind>"]``), and add its line to ``KINDS``. Modules
are imported only when a run or a targets.yaml needs them. Its constructor takes what
:func:`build_target` passes (:data:`agentsproof.targets.base.TargetFactory`). A kind whose
targets.yaml entry needs nothing but its ``type`` is also a built-in target of that name
(:func:`builtin_names`: ``copilot``, ``claude-code``, ``codex``). A kind of an installed
package (entry-point group ``agentsproof.targets``, :mod:`agentsproof.core.entrypoints`)
follows the in-tree ones.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Annotated, Any, Union, cast

from pydantic import Field

from agentsproof.core.entrypoints import import_path
from agentsproof.core.registry import Registry
from agentsproof.targets.base import Target, TargetDef, TargetFactory

KINDS: dict[str, str] = {
    "command": "agentsproof.targets.command.target:CommandTarget",
    "http": "agentsproof.targets.http.target:HttpTarget",
    "copilot": "agentsproof.targets.copilot.target:CopilotTarget",
    "claude-code": "agentsproof.targets.agents.claude_code:ClaudeCodeTarget",
    "codex": "agentsproof.targets.agents.codex:CodexTarget",
    "acp": "agentsproof.targets.acp.target:AcpTarget",
    "gemini": "agentsproof.targets.acp.agents:GeminiTarget",
    "qwen-code": "agentsproof.targets.acp.agents:QwenCodeTarget",
    "claude-code-acp": "agentsproof.targets.acp.agents:ClaudeCodeAcpTarget",
    "codex-acp": "agentsproof.targets.acp.agents:CodexAcpTarget",
    "replay": "agentsproof.targets.replay.target:ReplayTarget",
}


FOREIGN: dict[str, str] = {
    "agentv-cli": "agentsproof.targets.command.agentv:agentv_target",
    "agentv-replay": "agentsproof.targets.replay.agentv:replay_target",
}
"""Where a target name not in any targets.yaml may be defined in another tool's own files,
tried in this order: each line a ``(name, near) -> TargetDef | None`` of the kind that runs
it (agentv's ``cli`` providers are command targets, its ``replay`` providers replay ones)."""

CHAT = "chat"
"""The kind an item runs when it names no agent: one chat call with the run's model."""

MODEL_KINDS: dict[str, str] = {
    CHAT: "agentsproof.targets.chat.target:ChatTarget",
}
"""Kinds the session builds from the run's provider and model (no targets.yaml entry, no
:data:`KINDS` constructor): a trial of one is a model call, not an agent's run."""


def is_agent(name: str | None) -> bool:
    """``name`` (an item's ``target``) is an agent target from targets.yaml or a built-in
    one, not a kind of :data:`MODEL_KINDS` (the chat call); None: no target named, a chat item."""
    return name is not None and name not in MODEL_KINDS


def _check(kind: str, found: Any) -> str | None:
    if not (isinstance(found, type) and issubclass(found, Target)):
        return "not a subclass of agentsproof.targets.base.Target"
    if found.kind != kind:
        return f"its kind is {found.kind!r}, not its entry point's name"
    if found.spec_model is None:
        return "it has no spec_model (its targets.yaml entry)"
    return None


REGISTRY: Registry[type[Target]] = Registry("targets", KINDS, _check)
"""Every target kind: :data:`KINDS`, then the installed plugins' (:mod:`agentsproof.core.registry`)."""


@cache
def target_class(kind: str) -> type[Target]:
    """The class of target kind ``kind`` (a model kind, in-tree, else an installed plugin's);
    KeyError for an unknown one, PluginError for a plugin that does not load."""
    if kind in MODEL_KINDS:
        found: type[Target] = import_path(MODEL_KINDS[kind])
        return found
    return REGISTRY.get(kind)


def classes() -> dict[str, type[Target]]:
    """Every kind's class: the in-tree ones, then the installed plugins' that load."""
    return REGISTRY.all()


def plugin_kinds() -> tuple[str, ...]:
    """The kinds of installed packages (looked up, not imported)."""
    return REGISTRY.plugin_names()


def target_types() -> tuple[str, ...]:
    """Every kind's name (a targets.yaml ``type``), in order."""
    return tuple(classes())


def builtin_names() -> tuple[str, ...]:
    """The kinds that are targets by their name alone (their entry needs only ``type``)."""
    from pydantic import ValidationError

    names = []
    for kind, cls in classes().items():
        model = cls.spec_model
        try:
            if model is not None:
                model.model_validate({"type": kind})
                names.append(kind)
        except ValidationError:
            continue
    return tuple(names)


def foreign_target(name: str, near: Path | None) -> TargetDef | None:
    """The target ``name`` as another tool's files near ``near`` define it (:data:`FOREIGN`,
    in order); None when none of them does."""
    for line in FOREIGN.values():
        found: TargetDef | None = import_path(line)(name, near)
        if found is not None:
            return found
    return None


def __getattr__(name: str) -> Any:
    if name == "TARGET_TYPES":  # the in-tree kinds and the installed plugins'
        return target_types()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def spec_union() -> Any:
    """Any target's targets.yaml entry, validated by its ``type``."""
    members = tuple(cls.spec_model for cls in classes().values())
    return Annotated[Union[members], Field(discriminator="type")]  # noqa: UP007 - built at run time


def build_target(defn: TargetDef, *, model: str | None = None) -> Target:
    """A target ready to run: ``${VAR}`` references expanded (InputError when one is missing).

    ``model`` is the run's ``--model`` (targets that talk to a model use it unless their
    own settings name one); ``source`` (the targets file) is what set-up errors name."""
    cls = cast(TargetFactory, target_class(defn.spec.type))
    target: Target = cls(defn.name, defn.expanded(), defn.spec, model=model, source=defn.source)
    return target
