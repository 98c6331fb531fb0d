"""A skill cut into the parts ``agentsproof ablate`` prices, and the skill without some of them.

The parts of a skill folder are, in this order:

* each top-level **section** of SKILL.md: a ``## `` heading and everything up to the next
  ``## `` heading (headings inside fenced code blocks do not count). The frontmatter and
  what comes before the first ``## `` heading (the title and its lead) are the skill's
  frame: they stay in every variant;
* each **file or folder** of the skill folder's other files (:func:`skillfolder.folder_files`'s
  rule): a file at the top of the folder is one part, and so is each entry directly inside
  a top-level folder (``references/api.md``, ``scripts/lint.sh``, ``assets/templates/`` as
  one part for everything under it).

A part's size is its text's tokens, counted as the rest of agentsproof counts them
(:data:`skillfolder.CHARS_PER_TOKEN` characters a token; a binary file by its bytes).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentsproof.model.skillfolder import CHARS_PER_TOKEN, folder_files, split_frontmatter

_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_SECTION = re.compile(r"^## (?!#)")


@dataclass(frozen=True)
class Part:
    """One part of a skill: a SKILL.md section or a file (or folder) of the skill folder."""

    id: str
    """Stable and safe as a name: ``section-2-usage`` or ``file-references-api-md``."""
    kind: str
    """``section`` or ``file``."""
    title: str
    """The section's heading text, or the file's path relative to the skill folder (a folder ends in ``/``)."""
    tokens: int
    files: tuple[str, ...] = ()
    """A file part: the paths (relative to the skill folder) it stands for."""
    span: tuple[int, int] = (0, 0)
    """A section part: its lines ``[start, end)`` in SKILL.md."""


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "part"


def _tokens(chars: int) -> int:
    return max(1, -(-chars // CHARS_PER_TOKEN))


def sections(skill_text: str) -> list[Part]:
    """The ``## `` sections of SKILL.md, in order (none: an empty list)."""
    meta_len = len(skill_text) - len(split_frontmatter(skill_text)[1])
    head_lines = skill_text[:meta_len].count("\n")
    lines = skill_text.splitlines(keepends=True)
    starts: list[tuple[int, str]] = []
    fenced = False
    for n, line in enumerate(lines):
        if n < head_lines:
            continue
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and _SECTION.match(line):
            starts.append((n, line[3:].strip()))
    parts = []
    for k, (start, title) in enumerate(starts):
        end = starts[k + 1][0] if k + 1 < len(starts) else len(lines)
        chars = sum(len(x) for x in lines[start:end])
        parts.append(Part(f"section-{k + 1}-{_slug(title)}", "section", title, _tokens(chars), span=(start, end)))
    return parts


def _file_tokens(files: Iterable[Path]) -> int:
    total = 0
    for path in files:
        try:
            total += len(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            with contextlib.suppress(OSError):
                total += path.stat().st_size
    return _tokens(total)


def file_parts(files: Sequence[tuple[str, Path]]) -> list[Part]:
    """The file (and folder) parts of a skill's other files ((path relative to the skill
    folder, the file), as ``SkillFile.files`` holds them), in path order."""
    groups: dict[str, list[tuple[str, Path]]] = {}
    for rel, path in files:
        segments = rel.split("/")
        key = rel if len(segments) <= 2 else "/".join(segments[:2]) + "/"
        groups.setdefault(key, []).append((rel, path))
    return [Part(f"file-{_slug(key)}", "file", key, _file_tokens(p for _r, p in fs), files=tuple(r for r, _p in fs)) for key, fs in sorted(groups.items())]


def folder_parts(folder: Path, *, exclude: tuple[Path, ...] = ()) -> list[Part]:
    """The file parts of a skill folder as :func:`skillfolder.folder_files` finds its files."""
    return file_parts([(f.rel, f.path) for f in folder_files(folder, exclude=exclude)])


def cut(skill_text: str, files: Sequence[tuple[str, Path]] = ()) -> list[Part]:
    """Every part of a skill: its sections, then its files (none given: sections only)."""
    parts = sections(skill_text) + file_parts(files)
    seen: dict[str, int] = {}
    unique = []
    for p in parts:  # two headings of one slug stay two parts
        n = seen[p.id] = seen.get(p.id, 0) + 1
        unique.append(p if n == 1 else Part(f"{p.id}-{n}", p.kind, p.title, p.tokens, p.files, p.span))
    return unique


def text_without(skill_text: str, removed: Sequence[Part]) -> str:
    """SKILL.md with the removed sections taken out (frontmatter and frame kept)."""
    drop = [p.span for p in removed if p.kind == "section"]
    if not drop:
        return skill_text
    lines = skill_text.splitlines(keepends=True)
    kept = [line for n, line in enumerate(lines) if not any(a <= n < b for a, b in drop)]
    return "".join(kept)


def files_without(removed: Sequence[Part]) -> set[str]:
    """The skill folder's files (relative paths) the removed parts stand for."""
    return {rel for p in removed if p.kind == "file" for rel in p.files}
