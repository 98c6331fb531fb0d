"""Extensions from installed packages: the ``agentsproof.*`` entry-point groups.

A package adds a provider, grader, target or input format without a fork by declaring an
entry point in one of :data:`GROUPS`; its value is an import path ``"module:ATTR"``, the
same as a line of the in-tree registry (``llm/registry.py``'s ``ENTRIES``,
``grading/registry.py``'s ``GRADERS``, ``targets/registry.py``'s ``KINDS``,
``formats/registry.py``'s ``FORMATS``)::

    [project.entry-points."agentsproof.graders"]
    max_words = "agentsproof_example.grader:GRADER"

Installed packages are looked up only when a registry is asked for a name it does not
hold, or for all of its entries (start-up reads no package metadata). A plugin named like
a built-in entry (or like another plugin of its group) is refused, said once on stderr; a
plugin that cannot be imported is one line naming the entry point and the error
(:class:`PluginError`, exit 30) when it is used, and a warning (then skipped) when a
registry lists all of its entries. ``agentsproof doctor`` lists every plugin found and
whether it loads. See docs/plugins.md.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from agentsproof.core.errors import AgentsproofError

GROUPS: dict[str, str] = {registry: f"agentsproof.{registry}" for registry in ("providers", "graders", "targets", "formats")}
"""Registry -> its entry-point group (``agentsproof.providers``, ...: group names, not modules)."""


Check = Callable[[str, Any], "str | None"]
"""``(name, loaded object) -> why it is not a usable entry of that name`` (None: it is)."""


class PluginError(AgentsproofError):
    """An installed plugin could not be loaded (exit 30); ``str`` is the one line."""


@dataclass(frozen=True)
class Plugin:
    """One entry point of an ``agentsproof.*`` group, as installed."""

    name: str
    group: str
    value: str
    """``module:ATTR``."""
    package: str
    version: str
    refused: str = ""
    """Why the registry ignores it (a clash with a built-in name or another plugin), or ""."""

    def where(self) -> str:
        """How a message names the plugin: its name, entry point, package and version."""
        return f"plugin {self.name!r} (entry point {self.group} = {self.value!r}, package {self.package} {self.version})"


@cache
def installed(group: str) -> tuple[Plugin, ...]:
    """Every entry point of ``group`` in the installed packages, sorted by name (then
    package); the second of two with one name is refused."""
    from importlib.metadata import entry_points

    found = []
    for ep in entry_points(group=group):
        dist = getattr(ep, "dist", None)
        package = dist.name if dist is not None else "unknown"
        version = dist.version if dist is not None else "?"
        found.append(Plugin(ep.name, group, ep.value, package, version))
    found.sort(key=lambda p: (p.name, p.package))
    out: list[Plugin] = []
    for p in found:
        if any(q.name == p.name for q in out):
            p = Plugin(p.name, p.group, p.value, p.package, p.version, refused=f"another plugin of {group} is named {p.name!r}")
        out.append(p)
    return tuple(out)


def say_once(line: str, registry: str) -> None:
    """``warning: LINE`` on stderr, once per process (the one say-once set, :mod:`agentsproof.core.notice`)."""
    from agentsproof.core.notice import warn_once

    warn_once(line, ("plugins", registry, line))


def plugins(registry: str, builtin: Mapping[str, str]) -> dict[str, Plugin]:
    """The usable plugins of ``registry`` (``providers``, ``graders``, ...) by name; one
    whose name is in ``builtin`` (the in-tree table) is refused, said once on stderr."""
    group = GROUPS[registry]
    out: dict[str, Plugin] = {}
    for p in installed(group):
        why = refusal(p, builtin)
        if why:
            say_once(f"{p.where()} is refused: {why}", registry)
            continue
        out[p.name] = p
    return out


def refusal(p: Plugin, builtin: Mapping[str, str]) -> str:
    """Why ``p`` is not used ("" when it is)."""
    return p.refused or (f"the name {p.name!r} is built in" if p.name in builtin else "")


def lines(registry: str, builtin: Mapping[str, str]) -> dict[str, str]:
    """The in-tree table followed by the usable plugins' lines (nothing is imported)."""
    return {**builtin, **{name: p.value for name, p in plugins(registry, builtin).items()}}


def lookup(registry: str, builtin: Mapping[str, str], name: str) -> str:
    """The import path of ``name``: its in-tree line, else an installed plugin's. KeyError
    when neither has it (the packages are looked at only on a miss)."""
    if name in builtin:
        return builtin[name]
    found = plugins(registry, builtin).get(name)
    if found is None:
        raise KeyError(name)
    return found.value


def import_path(value: str) -> Any:
    """The object ``"module:ATTR"`` names."""
    module, _, attr = value.partition(":")
    found = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        found = getattr(found, part)
    return found


def load(registry: str, builtin: Mapping[str, str], name: str, check: Check | None = None) -> Any:
    """The object registered as ``name``. An in-tree line is imported as is (a failure is a
    bug); a plugin that fails to import, or that ``check`` finds wrong (it returns why), is
    one :class:`PluginError` line naming the entry point."""
    value = lookup(registry, builtin, name)
    if name in builtin:
        return import_path(value)
    plugin = plugins(registry, builtin)[name]
    try:
        found = import_path(value)
    except Exception as err:  # noqa: BLE001 - a third-party module: any failure is that plugin's, said in one line
        raise PluginError(f"{plugin.where()} failed to load: {type(err).__name__}: {err}") from None
    why = check(name, found) if check is not None else None
    if why:
        raise PluginError(f"{plugin.where()} is not usable: {why}")
    return found


def load_all(registry: str, builtin: Mapping[str, str], check: Check | None = None) -> dict[str, Any]:
    """Every entry of ``registry``, in-tree first; a plugin that does not load is skipped
    with its one line said once on stderr (a lookup by its name raises that line)."""
    out: dict[str, Any] = {}
    for name in lines(registry, builtin):
        try:
            out[name] = load(registry, builtin, name, check)
        except PluginError as err:
            say_once(f"{err}; skipped", registry)
    return out
