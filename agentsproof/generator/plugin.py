"""Find the skills and agents of a plugin folder, and where their evals go.

A plugin holds ``skills/<name>/SKILL.md`` and ``agents/<name>.md`` files. Each becomes one
:class:`PluginItem`; its eval lands in ``<out>/skills/<name>/`` or ``<out>/agents/<name>/``
next to a copy of the source file, so that the eval's ``skill:``/``agent:`` reference is
just the file name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentsproof.errors import InputError

SKILL_FILE = "SKILL.md"
IGNORED_AGENT_FILES = {"readme.md"}
"""Documentation that sits in agents/ but is not an agent."""


@dataclass(frozen=True)
class PluginItem:
    kind: str
    """``skill`` or ``agent``."""
    name: str
    source: Path
    """The SKILL.md or agent .md inside the plugin."""

    @property
    def label(self) -> str:
        """``skills/<name>`` or ``agents/<name>``: how the item is named in messages."""
        return f"{self.kind}s/{self.name}"

    @property
    def file_name(self) -> str:
        """The copied file's name, which is also the eval's skill:/agent: value."""
        return SKILL_FILE if self.kind == "skill" else f"{self.name}.md"

    def out_dir(self, out: Path) -> Path:
        return out / f"{self.kind}s" / self.name


@dataclass
class Plugin:
    root: Path
    name: str
    items: list[PluginItem]

    def count(self, kind: str) -> int:
        return sum(1 for i in self.items if i.kind == kind)


def plugin_name(root: Path) -> str:
    return root.resolve().name


def discover_plugin(plugin_dir: Path) -> Plugin:
    """The plugin's skills (sorted by name), then its agents; InputError when there are none."""
    root = Path(plugin_dir)
    if not root.exists():
        raise InputError(str(root), "--plugin-dir", "directory not found")
    if not root.is_dir():
        raise InputError(str(root), "--plugin-dir", "is not a directory")
    items: list[PluginItem] = []
    skills_dir = root / "skills"
    if skills_dir.is_dir():
        for sub in sorted(p for p in skills_dir.iterdir() if p.is_dir()):
            source = sub / SKILL_FILE
            if source.is_file():
                items.append(PluginItem("skill", sub.name, source))
    agents_dir = root / "agents"
    if agents_dir.is_dir():
        for source in sorted(p for p in agents_dir.glob("*.md") if p.is_file()):
            if source.name.lower() not in IGNORED_AGENT_FILES:
                items.append(PluginItem("agent", source.stem, source))
    if not items:
        hint = ""
        if (root / SKILL_FILE).is_file():
            hint = f" ({root} looks like a single skill folder; pass the plugin folder that contains skills/)"
        raise InputError(str(root), "--plugin-dir", f"no skills/*/SKILL.md or agents/*.md found{hint}")
    return Plugin(root=root, name=plugin_name(root), items=items)
