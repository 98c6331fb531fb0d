"""A skill is a folder; an agent is a file with frontmatter. Both become one system prompt.

**Skills.** The with-arm system prompt is the SKILL.md text, unchanged, followed — when
the skill's folder holds other files (``references/``, ``assets/``, ``scripts/`` …) — by
a "Files of this skill" section built by one rule:

1. The folder's files are collected (:func:`folder_files`): regular files only, no
   dot-files or dot-folders, no symlinks, not SKILL.md itself, not ``eval.yaml``/
   ``eval.yml`` and not the ``evals/`` and ``runs/`` folders; at most
   :data:`MAX_FILES` files, :data:`MAX_DEPTH` folders deep.
2. Files that SKILL.md *mentions* — by their path relative to the folder
   (``references/api.md``) or, failing that, by their file name (``api.md``) — are inlined,
   in the order of their first mention, while they fit the token budget
   ``AGENTSPROOF_SKILL_INLINE_TOKENS`` (default 8,000; a token counted as 4 characters).
   Only UTF-8 text files of at most 200 KB are inlined.
3. Every other file (not mentioned, over the budget, binary, too large) is listed by its
   path and size, so the model knows it exists.

A folder with no other file gives exactly the SKILL.md text, as before.

**Agents.** An agent file may start with YAML frontmatter (``---`` … ``---``). The body
is the system prompt; ``name``, ``description``, ``tools`` and ``model`` are recorded.
Declared tools (``tools``, or ``allowed-tools`` in a skill or command) cannot run in a
chat trial: such an item carries a warning saying so, printed once per item and kept in
the report (``ItemResult.warnings``).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agentsproof.core.errors import InputError
from agentsproof.core.inputs import MAX_ATTACHED_FILE_BYTES, display, read_regular

INLINE_TOKENS_ENV = "AGENTSPROOF_SKILL_INLINE_TOKENS"
DEFAULT_INLINE_TOKENS = 8000
CHARS_PER_TOKEN = 4
MAX_FILES = 500
MAX_DEPTH = 8
SKIP_TOP = {"SKILL.md", "eval.yaml", "eval.yml"}
SKIP_TOP_DIRS = {"evals", "runs"}
_FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)
META_KEYS = ("name", "description", "tools", "allowed-tools", "model")


@dataclass(frozen=True)
class FolderFile:
    """One file of a skill folder, as :func:`folder_files` found it (``size`` in bytes)."""

    rel: str
    """Path relative to the skill folder, with ``/``."""
    path: Path
    size: int


@dataclass
class ItemPrompt:
    """The with-arm system prompt of an item, and what went into it (inlined and listed files)."""

    system_prompt: str
    meta: dict[str, Any] = field(default_factory=dict)
    """Recorded frontmatter: name, description, tools, model (what is present)."""
    warnings: list[str] = field(default_factory=list)
    inlined: list[str] = field(default_factory=list)
    listed: list[str] = field(default_factory=list)


def inline_budget_tokens() -> int:
    """Tokens of folder files a skill prompt may inline (``AGENTSPROOF_SKILL_INLINE_TOKENS``); InputError when malformed."""
    from agentsproof.core.envcfg import env_int

    return env_int(INLINE_TOKENS_ENV, DEFAULT_INLINE_TOKENS, lo=0, hi=10_000_000)


# ------------------------------------------------------------------ frontmatter


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """(frontmatter mapping, body). No frontmatter: ({}, text). Frontmatter that is not
    valid YAML (common: an unquoted ``description: a: b``) is read line by line as
    ``key: value`` pairs, so a sloppy header never blocks a run."""
    match = _FRONTMATTER.match(text)
    if not match:
        return {}, text
    raw, body = match.group(1), text[match.end() :]
    try:
        data = yaml.safe_load(raw) if len(raw) <= 100_000 else None
    except yaml.YAMLError:
        data = None
    if not isinstance(data, dict):
        data = {}
        for line in raw.splitlines():
            key, sep, value = line.partition(":")
            if sep and key.strip() and not key.startswith((" ", "\t", "-")):
                data[key.strip()] = _loose_value(value.strip())
    return {str(k): v for k, v in data.items()}, body


def _loose_value(raw: str) -> Any:
    """One frontmatter value on its own: a YAML list or scalar when it parses as one, else the text."""
    try:
        value = yaml.safe_load(raw) if raw else ""
    except yaml.YAMLError:
        value = None
    if isinstance(value, (list, str, int, float, bool)):
        return value
    return raw.strip("'\"")


def frontmatter_name(text: str) -> str | None:
    """The frontmatter's ``name:``, stripped; None when absent or blank."""
    meta, _ = split_frontmatter(text)
    name = meta.get("name")
    return name.strip() if isinstance(name, str) and name.strip() else None


def _tool_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [t.strip() for t in value.split(",") if t.strip()]
    if isinstance(value, list):
        return [str(t) for t in value if str(t).strip()]
    if isinstance(value, dict):
        return [str(k) for k in value]
    return []


def _tools_warning(kind: str, meta: dict[str, Any]) -> str | None:
    tools = _tool_list(meta.get("tools")) + _tool_list(meta.get("allowed-tools"))
    if not tools:
        return None
    shown = ", ".join(tools[:8]) + (f" and {len(tools) - 8} more" if len(tools) > 8 else "")
    return (
        f"this {kind} declares tools ({shown}) that cannot run in a chat trial: "
        "the trial measures its instructions only, and answers that need a tool are judged without it"
    )


# ------------------------------------------------------------------ folder files


def folder_files(folder: Path, *, root: Path | None = None, exclude: tuple[Path, ...] = ()) -> list[FolderFile]:
    """The files of a skill folder by the rule in the module docstring, sorted by path.

    Nothing is followed out of ``root`` (default: the folder): symlinks are skipped
    outright, and only regular files are taken (no FIFOs or devices). Folders and files in
    ``exclude`` (an agent eval's ``workspace:`` seed, its ``script:`` graders) are not part
    of the skill."""
    out: list[FolderFile] = []
    limit = (root or folder).resolve()
    base = folder.resolve()
    skipped = {p.resolve() for p in exclude}
    if not base.is_relative_to(limit):
        return out
    stack: list[tuple[Path, str, int]] = [(base, "", 0)]
    while stack and len(out) < MAX_FILES:
        here, prefix, depth = stack.pop()
        try:
            entries = sorted(os.scandir(here), key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            rel = f"{prefix}{name}"
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                continue
            if stat.S_ISDIR(st.st_mode):
                if skipped and Path(entry.path).resolve() in skipped:
                    continue
                if depth + 1 < MAX_DEPTH and not (depth == 0 and name in SKIP_TOP_DIRS):
                    subdirs.append((Path(entry.path), rel + "/", depth + 1))
                continue
            if not stat.S_ISREG(st.st_mode) or (depth == 0 and name in SKIP_TOP):
                continue
            if skipped and Path(entry.path).resolve() in skipped:
                continue
            out.append(FolderFile(rel, Path(entry.path), st.st_size))
            if len(out) >= MAX_FILES:
                break
        stack.extend(reversed(subdirs))
    return sorted(out, key=lambda f: f.rel)


def _first_mention(text: str, f: FolderFile) -> int | None:
    for needle in (f.rel, f.rel.rsplit("/", 1)[-1]):
        m = re.search(rf"(?<![\w.-]){re.escape(needle)}(?![\w-])", text)
        if m:
            return m.start()
    return None


def _read_inline(f: FolderFile) -> str | None:
    if f.size > MAX_ATTACHED_FILE_BYTES:
        return None
    try:
        data = read_regular(f.path, source=display(f.path), field=None, max_bytes=MAX_ATTACHED_FILE_BYTES)
        return data.decode("utf-8")
    except (InputError, ValueError):  # unreadable, raced away or binary (not UTF-8): listed, not inlined
        return None


def skill_prompt(skill_text: str, folder: Path, *, root: Path | None = None, budget_tokens: int | None = None, exclude: tuple[Path, ...] = ()) -> ItemPrompt:
    """SKILL.md plus its folder's files (inlined or listed); see the module docstring."""
    meta, _body = split_frontmatter(skill_text)
    result = ItemPrompt(system_prompt=skill_text, meta={k: meta[k] for k in META_KEYS if k in meta})
    warning = _tools_warning("skill", meta)
    if warning:
        result.warnings.append(warning)
    files = folder_files(folder, root=root, exclude=exclude)
    if not files:
        return result
    budget = (inline_budget_tokens() if budget_tokens is None else budget_tokens) * CHARS_PER_TOKEN
    mentioned = sorted(((pos, f) for f in files if (pos := _first_mention(skill_text, f)) is not None), key=lambda pf: (pf[0], pf[1].rel))
    blocks: list[str] = []
    for _pos, f in mentioned:
        text = _read_inline(f)
        if text is None or len(text) > budget:
            continue
        budget -= len(text)
        blocks.append(f"### {f.rel}\n\n<<<FILE {f.rel}\n{text.rstrip()}\nFILE>>>")
        result.inlined.append(f.rel)
    rest = [f for f in files if f.rel not in result.inlined]
    result.listed = [f.rel for f in rest]
    parts = [skill_text.rstrip(), "", "---", "", "## Files of this skill", ""]
    if blocks:
        parts += ["The files this skill refers to, as they are in its folder:", "", *blocks, ""]
    if rest:
        parts += ["Other files in the skill's folder (not shown here):", ""]
        parts += [f"- {f.rel} ({f.size:,} bytes)" for f in rest]
    return _with_prompt(result, "\n".join(parts).rstrip() + "\n")


def _with_prompt(result: ItemPrompt, prompt: str) -> ItemPrompt:
    result.system_prompt = prompt
    return result


def agent_prompt(agent_text: str) -> ItemPrompt:
    """The agent body as the system prompt, its frontmatter recorded, a tools warning."""
    meta, body = split_frontmatter(agent_text)
    result = ItemPrompt(system_prompt=body.lstrip("\r\n") if meta else agent_text, meta={k: meta[k] for k in META_KEYS if k in meta})
    if not result.system_prompt.strip():
        result.system_prompt = agent_text  # frontmatter only: keep what there is
    warning = _tools_warning("agent", meta)
    if warning:
        result.warnings.append(warning)
    return result


def item_prompt(kind: str, source: Path, text: str, *, root: Path | None = None, exclude: tuple[Path, ...] = ()) -> ItemPrompt:
    """The with-arm system prompt of a skill (its folder) or an agent (its body)."""
    if kind == "skill":
        return skill_prompt(text, source.parent, root=root, exclude=exclude)
    return agent_prompt(text)
