"""Markdown text that is safe to show: one place, used by every Markdown writer.

Everything that did not come from us (model output, provider errors, file and item names)
goes through :func:`md_text` before it lands in a Markdown report: HTML is escaped (an
``<img onerror=...>`` stays text in any renderer), as are entity references, link
brackets, backticks and table pipes; the text is folded onto one line and bounded.
"""

from __future__ import annotations

import re
from typing import Any

_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")


def md_text(value: Any, limit: int = 160) -> str:
    """``value`` as one line of Markdown-safe text, at most ``limit`` characters (cut with ``…``)."""
    text = " ".join(str(value).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("`", "'").replace("[", "\\[").replace("]", "\\]")
    # "<" starts every HTML tag and comment; escaping it (and entity references) is enough.
    return _ENTITY.sub("&amp;", text).replace("<", "&lt;")
