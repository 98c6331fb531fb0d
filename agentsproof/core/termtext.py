"""Text that is safe to print on a terminal: one place, used by every line we print.

A key, a name or a message that came from an input file (an eval key, an item name, a
target's name, a model's reply) may hold control characters: an ESC that starts a
terminal escape sequence (colours, a moved cursor, a retitled window, a hyperlink), a
carriage return that overwrites what was printed, a BEL, a NUL. :func:`term_text` shows
each of them as an escape (``\\x1b``, ``\\r``, ``\\u202e``) so that what the user sees is
what the file holds, on one line. Undecodable file-name bytes (surrogates) are shown as
``\\x..`` too, as :func:`agentsproof.core.inputs.display` does.
"""

from __future__ import annotations

import re
from typing import Any

_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
"""C0 and C1 controls, DEL, line/paragraph separators, bidi overrides and isolates, and
surrogates (lone, or undecodable bytes)."""


def _escaped(m: re.Match[str]) -> str:
    ch = m.group(0)
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte kept by surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    if ch in "\t\n\r":
        return {"\t": "\\t", "\n": "\\n", "\r": "\\r"}[ch]
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def term_text(value: Any) -> str:
    """``value`` as one printable line: every control character escaped (the rest as is)."""
    text = str(value)
    if text.isprintable():
        return text
    return _UNSAFE.sub(_escaped, text)


def console_text(text: str) -> str:
    """What the console streams print: :func:`term_text` for text of several lines. Line
    breaks and tabs stay; a carriage return stays only where the progress line puts one
    (at the start of the text, or before a line break)."""
    if text.isprintable():
        return text

    def sub(m: re.Match[str]) -> str:
        ch = m.group(0)
        if ch in "\n\t":
            return ch
        if ch == "\r" and (m.start() == 0 or text.startswith("\n", m.end())):
            return ch
        return _escaped(m)

    return _UNSAFE.sub(sub, text)
