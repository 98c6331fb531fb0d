"""Reading the Markdown docs the way a renderer does, for the tests that check them."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def outside_fences(text: str) -> list[str]:
    """The lines of ``text`` that are not inside a fenced code block (the fence lines too)."""
    out: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        m = _FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None and m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip()[len(m.group(1)):]:
            fence = None
        elif fence is None:
            out.append(line)
    return out


def markdown_headings(text: str) -> list[str]:
    """The ATX headings of ``text`` (``# ...`` outside code fences; a ``#`` comment in a
    YAML or shell block is not a heading)."""
    return [line for line in outside_fences(text) if re.match(r"^\s{0,3}#{1,6}(\s|$)", line)]


def headings(*pages: str) -> str:
    """The headings of ``docs/<page>`` for each page, one a line."""
    return "\n".join(h for page in pages for h in markdown_headings((DOCS / page).read_text(encoding="utf-8")))


def table_column(text: str, after_heading: str) -> list[str]:
    """The first cells of the first table below the heading ``after_heading``."""
    lines = outside_fences(text)
    start = next(i for i, line in enumerate(lines) if line.strip() == after_heading)
    rows: list[str] = []
    for line in lines[start + 1:]:
        if line.startswith("|"):
            rows.append(line.split("|")[1].strip())
        elif rows:
            break
    return [r for r in rows[2:]]  # below the header and its --- line
