"""A trial's workspace as the files grader sees it: globs that never leave it, and
entries resolved without following a symlink out of it."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from agentsproof.core.units import human_size

MAX_WALK_ENTRIES = 100_000
"""A glob with wildcards looks at no more than this many workspace entries."""


@dataclass(frozen=True)
class Entry:
    """One path in a trial's workspace, as a grader sees it: folder or file, its size, or why it is refused."""

    rel: str
    """'/'-separated, relative to the workspace."""
    resolved: Path
    is_dir: bool = False
    size: int = 0
    problem: str | None = None
    """Why it is refused (e.g. a symlink leading outside the workspace); None when usable."""

    def shown(self) -> str:
        """The entry as evidence: ``path (size)``, ``path/ (folder)``, or ``path (why refused)``."""
        if self.problem:
            return f"{self.rel} ({self.problem})"
        return f"{self.rel}/ (folder)" if self.is_dir else f"{self.rel} ({human_size(self.size)})"


def _segment_regex(seg: str) -> str:
    """One path segment of a glob as a regex: ``*``, ``?`` and ``[...]`` / ``[!...]``."""
    out, i = [], 0
    while i < len(seg):
        ch = seg[i]
        if ch == "*":
            while i + 1 < len(seg) and seg[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            j = i + 1
            j += seg[j : j + 1] == "!"
            j += seg[j : j + 1] == "]"
            end = seg.find("]", j)
            if end < 0:
                out.append(re.escape(ch))
            else:
                body = seg[i + 1 : end]
                negate = body.startswith("!")
                body = "".join("\\" + c if c in "\\[&~|" else c for c in (body[1:] if negate else body))
                if body.startswith("^"):
                    body = "\\" + body
                out.append("[" + ("^/" if negate else "") + body + "]")
                i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def glob_regex(pattern: str) -> re.Pattern[str] | None:
    """The regex a workspace path must fully match; None when ``pattern`` has no wildcard."""
    segs = _segments(pattern)
    if not any(c in seg for seg in segs for c in "*?["):
        return None
    parts = []
    for i, seg in enumerate(segs):
        last = i == len(segs) - 1
        if seg == "**":
            parts.append(".*" if last else "(?:[^/]*/)*")
        else:
            parts.append(_segment_regex(seg) + ("" if last else "/"))
    return re.compile("".join(parts), re.DOTALL)


def _segments(pattern: str) -> list[str]:
    segs: list[str] = []
    for seg in pattern.replace("\\", "/").split("/"):
        if seg == "..":
            if segs:
                segs.pop()
        elif seg not in ("", "."):
            segs.append(seg)
    return segs


class Workspace:
    """The trial's folder, as globs see it."""

    def __init__(self, root: Path):
        if root.is_symlink():  # a workspace an agent swapped for a link is never followed
            raise ValueError(f"the workspace {root} is a symlink")
        self.root = root.resolve()
        self._names: list[tuple[str, bool]] | None = None
        self.truncated = False

    def inspect(self, rel: str) -> Entry | None:
        """The entry at ``rel``, resolved and checked; None when nothing is there."""
        path = self.root / rel if rel else self.root
        try:
            os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as err:
            return Entry(rel, path, problem=f"cannot be read: {err.strerror or err}")
        try:
            resolved = path.resolve(strict=True)
        except (OSError, RuntimeError):
            return Entry(rel, path, problem="a broken symlink")
        if resolved != self.root and not resolved.is_relative_to(self.root):
            return Entry(rel, resolved, problem="a symlink leading outside the workspace, refused")
        try:
            st = os.stat(resolved)
        except OSError as err:
            return Entry(rel, resolved, problem=f"cannot be read: {err.strerror or err}")
        if stat.S_ISDIR(st.st_mode):
            return Entry(rel, resolved, is_dir=True)
        if not stat.S_ISREG(st.st_mode):
            return Entry(rel, resolved, problem="not a regular file, refused")
        return Entry(rel, resolved, size=st.st_size)

    def _walk(self) -> list[tuple[str, bool]]:
        if self._names is None:
            names: list[tuple[str, bool]] = []
            for dirpath, dirnames, filenames in os.walk(self.root, followlinks=False):
                base = Path(dirpath).relative_to(self.root).as_posix()
                prefix = "" if base == "." else base + "/"
                for name, is_dir in [(d, True) for d in sorted(dirnames)] + [(f, False) for f in sorted(filenames)]:
                    if len(names) >= MAX_WALK_ENTRIES:
                        self.truncated = True
                        dirnames[:] = []
                        break
                    names.append((prefix + name, is_dir))
                if self.truncated:
                    break
            self._names = names
        return self._names

    def match(self, pattern: str) -> list[Entry]:
        """Everything ``pattern`` names in the workspace, sorted by path."""
        rx = glob_regex(pattern)
        if rx is None:
            found = self.inspect("/".join(_segments(pattern)))
            return [found] if found is not None else []
        hits = sorted(rel for rel, _ in self._walk() if rx.fullmatch(rel))
        return [e for e in (self.inspect(rel) for rel in hits) if e is not None]

    def nothing(self, pattern: str) -> str:
        """The evidence when ``pattern`` matches nothing (saying so when the walk stopped at its cap)."""
        more = f" (stopped looking after {MAX_WALK_ENTRIES} entries)" if self.truncated and glob_regex(pattern) else ""
        return f"no file matches {pattern}{more}"
