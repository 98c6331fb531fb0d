"""The installed plugins (entry points of the ``agentsproof.*`` groups), for ``agentsproof doctor``.

Each is loaded through its registry, the way a run would load it, so that ``ok`` means a
run can use it and ``failed`` gives the same one line a run would.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentsproof.core import entrypoints
from agentsproof.core.registry import Registry


@dataclass(frozen=True)
class PluginStatus:
    """One installed plugin as doctor lists it: where it comes from and whether it loads."""

    name: str
    group: str
    package: str
    version: str
    ok: bool
    why: str = ""

    def line(self) -> str:
        """``plugin: NAME (GROUP, PACKAGE VERSION): ok`` or ``...: failed: why``."""
        state = "ok" if self.ok else f"failed: {self.why}"
        return f"plugin: {self.name} ({self.group}, {self.package} {self.version}): {state}"


def _registries() -> dict[str, tuple[Registry[Any], Callable[[str], Any]]]:
    from agentsproof.formats import registry as formats
    from agentsproof.grading import registry as graders
    from agentsproof.llm import registry as providers
    from agentsproof.targets import registry as targets

    return {
        "providers": (providers.REGISTRY, providers.entry),
        "graders": (graders.REGISTRY, graders.entry),
        "targets": (targets.REGISTRY, targets.target_class),
        "formats": (formats.REGISTRY, formats.get),
    }


def plugin_statuses() -> list[PluginStatus]:
    """Every plugin installed, in the order of :data:`entrypoints.GROUPS`, with whether it loads."""
    out: list[PluginStatus] = []
    for registry, get in _registries().values():
        for p in registry.installed():
            why = registry.refusal(p)
            if not why:
                try:
                    get(p.name)
                except entrypoints.PluginError as err:
                    why = str(err).removeprefix(p.where() + " ")
            out.append(PluginStatus(p.name, p.group, p.package, p.version, ok=not why, why=why))
    return out
