"""Plugin layouts: where a plugin's skills and agents are, whatever shape it is published in.

Three layouts are recognised, in this order:

- **Claude Code**: ``.claude-plugin/plugin.json``. Its optional ``skills``, ``agents`` and
  ``commands`` fields (a path or a list of paths) name extra locations; the default
  folders ``skills/``, ``agents/`` and ``commands/`` of the plugin are always read.
- **awesome-copilot**: ``plugin.json`` or ``.github/plugin/plugin.json``. Paths come from
  ``skills``/``agents`` and ``extensions."com.github.awesome-copilot".skills/agents``.
  Each path (``./skills/<name>/``, ``./agents/<name>.md``) is looked up in the plugin
  folder, then at the **repository root**, where ``agents/<name>.md`` may be stored as
  ``agents/<name>.agent.md``. A kind the manifest does not list is read from the
  plugin's default folder, if it has one.
- **plain folder**: ``skills/<name>/SKILL.md`` and ``agents/*.md``.

The repository root is the nearest folder above the plugin that holds ``.git`` or
``skills/``/``agents/`` (at most :data:`MAX_UP` levels up; the plugin folder itself when
none is found). Manifest paths must stay inside it: an absolute path, ``..`` or a
symlink leading out, or a path that does not resolve, is one error line naming the
manifest and the field (exit 30). Found by scanning a folder, a symlinked item leading out
of the repository root is skipped.

A path names a skill folder (holding SKILL.md), a folder of skill folders, an agent/
command file, or a folder of them. Item names come from frontmatter ``name:``, else the
folder name (skills) or the file name without ``.agent.md``/``.md``. Commands are
evaluated as agents (a prompt file).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError
from agentsproof.core.inputs import MAX_SOURCE_FILE_BYTES, _is_absolute_ref, display, read_json_file, read_text, safe_name
from agentsproof.model.skillfolder import frontmatter_name

SKILL_FILE = "SKILL.md"
IGNORED_AGENT_FILES = {"readme.md"}
"""Documentation that sits in agents/ but is not an agent."""
MANIFESTS = (
    ("claude-code", Path(".claude-plugin") / "plugin.json"),
    ("awesome-copilot", Path("plugin.json")),
    ("awesome-copilot", Path(".github") / "plugin" / "plugin.json"),
)
EXTENSION_KEY = "com.github.awesome-copilot"
MAX_UP = 8
KINDS = {"skills": "skill", "agents": "agent", "commands": "command"}


@dataclass(frozen=True)
class LayoutItem:
    """One skill, agent or command a plugin holds, and where its file is."""

    kind: str
    """``skill`` or ``agent`` (a command is an agent)."""
    name: str
    source: Path
    """The SKILL.md or the agent/command file."""
    origin: str = ""
    """``skill``, ``agent`` or ``command``: what the plugin calls it."""

    @property
    def folder(self) -> Path | None:
        """A skill's folder (copied whole); None for agents."""
        return self.source.parent if self.kind == "skill" else None


@dataclass
class Layout:
    """A plugin as found: its layout, folder, repository root, name and items."""

    style: str
    """How the plugin is laid out: ``folder``, ``awesome-copilot`` or ``claude-code``."""
    plugin_dir: Path
    root: Path
    """The repository root: manifest paths resolve here second and must stay inside it."""
    name: str
    items: list[LayoutItem] = field(default_factory=list)
    manifest: Path | None = None


def repository_root(plugin_dir: Path) -> Path:
    """The plugin's repository root: the nearest folder above with ``.git`` or ``skills/``/``agents/`` (at most :data:`MAX_UP` up), else the plugin folder."""
    start = plugin_dir.resolve()
    here = start
    for _ in range(MAX_UP + 1):
        if (here / ".git").exists():
            return here
        if here != start and ((here / "skills").is_dir() or (here / "agents").is_dir()):
            return here
        if here.parent == here:
            break
        here = here.parent
    return start


def _name_from_file(path: Path, fallback: str) -> str:
    try:
        text = read_text(path, source=display(path), field=None, max_bytes=MAX_SOURCE_FILE_BYTES)
    except InputError:
        text = ""
    return safe_name(frontmatter_name(text) or fallback, fallback="item")


def _agent_stem(path: Path) -> str:
    name = path.name
    for suffix in (".agent.md", ".md"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root)
    except OSError:
        return False


def _skills_in(folder: Path, root: Path) -> list[Path]:
    """SKILL.md of a skill folder, or of each skill folder inside a folder of skills."""
    if (folder / SKILL_FILE).is_file():
        return [folder / SKILL_FILE]
    return sorted(
        sub / SKILL_FILE for sub in folder.iterdir() if not sub.name.startswith(".") and sub.is_dir() and _inside(sub, root) and (sub / SKILL_FILE).is_file()
    )


def _agents_in(folder: Path, root: Path) -> list[Path]:
    return sorted(
        p for p in folder.glob("*.md") if p.is_file() and _inside(p, root) and p.name.lower() not in IGNORED_AGENT_FILES and not p.name.startswith(".")
    )


class _Collector:
    def __init__(self, layout: Layout):
        self.layout = layout
        self.seen: dict[Path, str] = {}
        self.names: dict[tuple[str, str], Path] = {}

    def add(self, origin: str, source: Path, where: str) -> None:
        real = source.resolve()
        if real in self.seen:
            return
        kind = "skill" if origin == "skill" else "agent"
        fallback = source.parent.name if kind == "skill" else _agent_stem(source)
        name = _name_from_file(source, safe_name(fallback))
        if (kind, name) in self.names:
            other = self.names[(kind, name)]
            if origin == "command":
                name = f"{name}-command"
            if (kind, name) in self.names:
                raise InputError(where, None, f"two {kind}s are named {name!r}: {display(other)} and {display(source)}; rename one (frontmatter name:)")
        self.seen[real] = name
        self.names[(kind, name)] = source
        self.layout.items.append(LayoutItem(kind, name, source, origin))

    def scan_folder(self, origin: str, folder: Path) -> None:
        root = self.layout.root
        if origin == "skill":
            for source in _skills_in(folder, root):
                self.add(origin, source, display(folder))
        else:
            for source in _agents_in(folder, root):
                self.add(origin, source, display(folder))


def _entries(value: Any, manifest: str, field_name: str) -> list[tuple[str, str]]:
    """(field, path) pairs of a manifest field holding a path or a list of paths."""
    if value is None:
        return []
    if isinstance(value, str):
        return [(field_name, value)]
    if not isinstance(value, list):
        raise InputError(manifest, field_name, "expected a path or a list of paths")
    out = []
    for i, entry in enumerate(value):
        if not isinstance(entry, str) or not entry.strip():
            raise InputError(manifest, f"{field_name}[{i}]", "expected a non-empty path string")
        out.append((f"{field_name}[{i}]", entry))
    return out


def resolve_ref(ref: str, layout: Layout, origin: str, manifest: str, field_name: str) -> Path:
    """A manifest path resolved in the plugin folder, then at the repository root."""
    if "\x00" in ref:
        raise InputError(manifest, field_name, "contains a NUL character")
    if _is_absolute_ref(ref):
        raise InputError(manifest, field_name, f"{ref!r} is an absolute path; give a path relative to the plugin folder")
    root = layout.root.resolve()
    names = [ref]
    if origin != "skill" and ref.rstrip("/").lower().endswith(".md") and not ref.lower().endswith(".agent.md"):
        names.append(ref.rstrip("/")[:-3] + ".agent.md")
    tried = []
    for base in dict.fromkeys([layout.plugin_dir.resolve(), root]):
        for name in names:
            candidate = base / name
            tried.append(candidate)
            if not candidate.exists():
                continue
            if not _inside(candidate, root):
                raise InputError(manifest, field_name, f"{ref!r} leads out of the repository root {display(root)}")
            return candidate.resolve()
    if all(not Path(os.path.normpath(c)).is_relative_to(root) for c in tried):  # not found, and outside anyway
        raise InputError(manifest, field_name, f"{ref!r} leads out of the repository root {display(root)}")
    where = display(layout.plugin_dir) + (f" or {display(root)}" if root != layout.plugin_dir.resolve() else "")
    raise InputError(manifest, field_name, f"{ref!r} not found (looked in {where})")


def _add_ref(col: _Collector, origin: str, path: Path, manifest: str, field_name: str, ref: str) -> None:
    if path.is_dir():
        col.scan_folder(origin, path)
        if origin == "skill" and not _skills_in(path, col.layout.root):
            raise InputError(manifest, field_name, f"{ref!r} holds no {SKILL_FILE} (directly or in a sub-folder)")
    elif origin == "skill":
        if path.name != SKILL_FILE:
            raise InputError(manifest, field_name, f"{ref!r} is a file; a skill is a folder holding {SKILL_FILE}")
        col.add(origin, path, manifest)
    else:
        col.add(origin, path, manifest)


def _manifest_layout(kind: str, plugin_dir: Path, manifest_path: Path) -> Layout:
    src = display(manifest_path)
    data = read_json_file(manifest_path)
    if not isinstance(data, dict):
        raise InputError(src, None, "expected a JSON object")
    raw_name = data.get("name")
    name = safe_name(raw_name) if isinstance(raw_name, str) and raw_name.strip() else safe_name(plugin_dir.resolve().name, "plugin")
    layout = Layout(style=kind, plugin_dir=plugin_dir, root=repository_root(plugin_dir), name=name, manifest=manifest_path)
    ext = data.get("extensions")
    ext = ext.get(EXTENSION_KEY) if isinstance(ext, dict) else None
    if ext is not None and not isinstance(ext, dict):
        raise InputError(src, f"extensions.{EXTENSION_KEY}", "expected an object")
    col = _Collector(layout)
    for key, origin in KINDS.items():
        refs = _entries(data.get(key), src, key)
        if ext:
            refs += _entries(ext.get(key), src, f'extensions."{EXTENSION_KEY}".{key}')
        if kind == "claude-code" or not refs:
            default = plugin_dir / key
            if default.is_dir() and (origin != "command" or kind == "claude-code"):
                col.scan_folder(origin, default)
        for field_name, ref in refs:
            _add_ref(col, origin, resolve_ref(ref, layout, origin, src, field_name), src, field_name, ref)
    return layout


def find_layout(plugin_dir: Path, option: str = "--plugin-dir") -> Layout:
    """The plugin's layout and items (skills sorted by name, then agents); InputError when none."""
    root = Path(plugin_dir)
    if not root.exists():
        raise InputError(str(root), option, "directory not found")
    if not root.is_dir():
        raise InputError(str(root), option, "is not a directory")
    for kind, rel in MANIFESTS:
        if (root / rel).is_file() or (root / rel).is_symlink():
            layout = _manifest_layout(kind, root, root / rel)
            break
    else:
        layout = Layout(style="folder", plugin_dir=root, root=repository_root(root), name=safe_name(root.resolve().name, "plugin"))
        col = _Collector(layout)
        for key in ("skills", "agents"):
            if (root / key).is_dir():
                col.scan_folder(KINDS[key], root / key)
    layout.items.sort(key=lambda i: (i.kind != "skill", i.name))
    if not layout.items:
        hint = ""
        if (root / SKILL_FILE).is_file():
            hint = f" ({root} looks like a single skill folder; pass the plugin folder that contains skills/)"
        what = "no skills/*/SKILL.md or agents/*.md found"
        if layout.manifest is not None:
            what = f"{display(layout.manifest)} lists no skill or agent that exists, and there is no skills/ or agents/ folder"
        raise InputError(str(root), option, what + hint)
    return layout


NONE_FOUND = "no eval files (eval.yaml, *.eval.yaml, EVAL.yaml, promptfooconfig.yaml, evals/evals.json, Harbor task.toml) found"
SKIPPED_FOLDERS = ("runs", "node_modules", ".git")
"""Folders below DIR that eval-all does not look in: reports, installed packages, git's store."""


def plugin_evals(directory: Path) -> list[Path]:
    """eval-all's discovery: every eval file below ``directory`` (:func:`discover_evals`); when
    there is none and the folder is a plugin (any layout above), the eval files in its skills'
    folders (``<skill>/`` or ``<skill>/evals/``), wherever the manifest puts them."""
    try:
        return discover_evals(directory)
    except InputError as err:
        d = Path(directory)
        if not d.is_dir() or not err.message.startswith(NONE_FOUND):
            raise
        try:
            layout = find_layout(d, option="DIR")
        except InputError:
            raise err from None
    from agentsproof.formats.registry import discoverable

    found: list[Path] = []
    skipped: list[str] = []
    for item in layout.items:
        before = len(found)
        folder = item.folder
        for sub in ("", "evals"):
            if folder is None:  # an agent file: no folder an eval could sit in beside it
                break
            here = folder / sub if sub else folder
            if not here.is_dir():
                continue
            for p in sorted(here.iterdir()):
                if p.is_file() and discoverable(p) and _inside(p, layout.root.resolve()):
                    found.append(p)
        if len(found) == before:
            skipped.append(f"{item.kind}s/{item.name}")
    if found and skipped:  # said, never silent: an agent file has no folder for an eval beside it
        from agentsproof.core.notice import note

        shown = ", ".join(skipped[:5]) + (f" and {len(skipped) - 5} more" if len(skipped) > 5 else "")
        note(
            f"{directory}: no eval file for {shown}: not run (write them with "
            f"`agentsproof eval-generate --plugin-dir {directory}`, then run eval-all on its output)"
        )
    if not found:
        raise InputError(
            str(directory),
            None,
            f"{NONE_FOUND} below this directory or in the folders of its {len(layout.items)} items; "
            f"write them with `agentsproof eval-generate --plugin-dir {directory}`",
        )
    from agentsproof.formats.agentevals.items import drop_duplicates

    return drop_duplicates(sorted(dict.fromkeys(found)))


def _not_owned(found: list[Path]) -> list[Path]:
    """Without the files below a folder another discovered file owns whole (a skill's
    evals/evals.json inside a Harbor task's environment/skills/ is that task's, not an eval)."""
    from agentsproof.formats.registry import owned_folders

    owned = owned_folders(found)
    return [p for p in found if not any(p.parent != o and p.is_relative_to(o) for o in owned)]


def _searched(folders: tuple[str, ...]) -> bool:
    return not any(part in SKIPPED_FOLDERS for part in folders)


def discover_evals(directory: str | Path) -> list[Path]:
    """Every eval file below ``directory``, sorted for a stable order: what a format's
    ``discoverable`` claims (eval.yaml, EVAL.yaml, agentv's ``*.eval.yaml``,
    promptfooconfig.yaml, ``evals/evals.json`` — not beside an EVAL.yaml: they hold the same
    cases), outside :data:`SKIPPED_FOLDERS`."""
    d = Path(directory)
    if not d.exists():
        raise InputError(str(d), None, "directory not found")
    if not d.is_dir():
        raise InputError(str(d), None, "is a file, not a directory (run one eval file with `agentsproof eval`)")
    from agentsproof.formats.agentevals.items import drop_duplicates
    from agentsproof.formats.registry import discoverable

    found = drop_duplicates(sorted(p for p in d.rglob("*") if _searched(p.relative_to(d).parts[:-1]) and p.is_file() and discoverable(p)))
    found = _not_owned(found)
    if not found:
        raise InputError(str(d), None, f"{NONE_FOUND} below this directory")
    return found
