"""A plugin's skills and agents (found by :mod:`.layout`), and where their evals go.

Each item's eval lands in ``<out>/skills/<name>/`` or ``<out>/agents/<name>/``: a skill's
whole folder is copied there (SKILL.md with its references/, assets/, scripts/ …), an
agent's file as ``<name>.md``, so the eval's ``skill:``/``agent:`` reference is just the
file name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentsproof.formats.layout import SKILL_FILE, Layout, LayoutItem, find_layout

__all__ = ["SKILL_FILE", "Plugin", "PluginItem", "discover_plugin", "plugin_name"]


class PluginItem(LayoutItem):
    """One skill or agent of a plugin (a :class:`LayoutItem` with output paths)."""

    @property
    def label(self) -> str:
        """``skills/<name>`` or ``agents/<name>``: how the item is named in messages."""
        return f"{self.kind}s/{self.name}"

    @property
    def file_name(self) -> str:
        """The copied file's name, which is also the eval's skill:/agent: value."""
        return SKILL_FILE if self.kind == "skill" else f"{self.name}.md"

    def out_dir(self, out: Path) -> Path:
        """Where the item's eval and copied files go: ``<out>/skills/<name>`` or ``<out>/agents/<name>``."""
        return out / f"{self.kind}s" / self.name


@dataclass
class Plugin:
    """A plugin to generate evals for: its name, its skills and agents, and the layout they were found in."""

    root: Path
    """The repository root (the plugin folder for a plain folder): where sources are named from."""
    name: str
    items: list[PluginItem]
    layout: Layout | None = None

    def count(self, kind: str) -> int:
        """How many items of ``kind`` (``skill`` or ``agent``) the plugin has."""
        return sum(1 for i in self.items if i.kind == kind)

    def relative(self, path: Path) -> str:
        """``path`` relative to the plugin folder, else to the repository root."""
        bases = ([self.layout.plugin_dir] if self.layout is not None else []) + [self.root]
        for base in bases:
            try:
                return path.resolve().relative_to(base.resolve()).as_posix()
            except ValueError:
                continue
        return path.name

    def source_label(self, path: Path) -> str:
        """``<folder>/<path inside it>``: the plugin folder, else the repository root, named
        with the folder that really holds ``path`` (so the label is a path that exists)."""
        bases = ([self.layout.plugin_dir] if self.layout is not None else []) + [self.root]
        for base in bases:
            try:
                rel = path.resolve().relative_to(base.resolve()).as_posix()
            except ValueError:
                continue
            return f"{base.resolve().name}/{rel}"
        return path.name


def plugin_name(root: Path) -> str:
    """The plugin's name when nothing declares one: its folder's name (links resolved)."""
    return root.resolve().name


def discover_plugin(plugin_dir: Path) -> Plugin:
    """The plugin's skills (sorted by name), then its agents; InputError when there are none."""
    layout = find_layout(Path(plugin_dir))
    items = [PluginItem(i.kind, i.name, i.source, i.origin) for i in layout.items]
    return Plugin(root=layout.root, name=layout.name, items=items, layout=layout)
