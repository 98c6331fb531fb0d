"""The one registry skeleton: a table of in-tree entries, then the installed plugins'.

Each of the four registries (providers ``llm/registry.py``, graders ``grading/registry.py``,
targets ``targets/registry.py``, formats ``formats/registry.py``) is one :class:`Registry`
over its table of ``name -> "module:ATTR"`` lines and the check an entry must pass. Built-in
entries and entry-point plugins (:mod:`agentsproof.core.entrypoints`) go through the same
path, as simonw/llm's plugin hooks do: a name is looked up in the table, then in the
installed packages; a module is imported only when its entry is asked for.

Code outside a registry module asks its :class:`Registry` (or the module's functions), never
its raw table: ``name in GRADERS`` misses every plugin (``tests/test_registries.py`` fails on
such a read).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Generic, TypeVar

from agentsproof.core import entrypoints

T = TypeVar("T")


class Registry(Generic[T]):
    """The entries of one ``agentsproof.*`` group: the in-tree ``table``, then the plugins'.

    ``check(name, found)`` says why a plugin's object is not a usable entry of that name
    (None: it is); an in-tree line is trusted (a failure there is a bug)."""

    def __init__(self, group: str, table: Mapping[str, str], check: Callable[[str, object], str | None] | None = None) -> None:
        if group not in entrypoints.GROUPS:
            raise ValueError(f"unknown registry {group!r}")
        self.group = group
        """``providers``, ``graders``, ``targets`` or ``formats``."""
        self.table = table
        """The in-tree lines, kept by reference (a test may add one)."""
        self.check = check

    def get(self, name: str) -> T:
        """The entry ``name`` (in-tree, else an installed plugin's); KeyError for an unknown
        one, :class:`~agentsproof.core.entrypoints.PluginError` for a plugin that does not load."""
        found: T = entrypoints.load(self.group, self.table, name, self.check)
        return found

    def find(self, name: str) -> T | None:
        """The entry ``name``, or None when neither the table nor a plugin has it."""
        return self.get(name) if self.has(name) else None

    def has(self, name: str) -> bool:
        """``name`` is an in-tree entry or a usable plugin's (nothing is imported)."""
        return name in self.table or name in self.plugin_names()

    def builtin(self, name: str) -> bool:
        """``name`` is an in-tree entry (not a plugin's)."""
        return name in self.table

    def names(self) -> tuple[str, ...]:
        """Every name, in-tree first (nothing is imported)."""
        return tuple(entrypoints.lines(self.group, self.table))

    def builtin_names(self) -> tuple[str, ...]:
        """The in-tree names, in the table's order."""
        return tuple(self.table)

    def plugin_names(self) -> tuple[str, ...]:
        """The usable plugins' names (looked up, not imported)."""
        return tuple(n for n in entrypoints.lines(self.group, self.table) if n not in self.table)

    def lines(self) -> dict[str, str]:
        """Every ``name -> "module:ATTR"`` line, in-tree first (nothing is imported)."""
        return entrypoints.lines(self.group, self.table)

    def all(self) -> dict[str, T]:
        """Every entry, in-tree first; a plugin that does not load is skipped, said once on stderr."""
        return entrypoints.load_all(self.group, self.table, self.check)

    def refusal(self, plugin: entrypoints.Plugin) -> str:
        """Why an installed plugin of this group is not used ("" when it is)."""
        return entrypoints.refusal(plugin, self.table)

    def installed(self) -> tuple[entrypoints.Plugin, ...]:
        """Every entry point of this group in the installed packages, refused ones included."""
        return entrypoints.installed(entrypoints.GROUPS[self.group])
