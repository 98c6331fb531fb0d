"""Whether a word of a command names a file beside the eval (a leaf: the assertion builders share it)."""

from __future__ import annotations

from pathlib import Path


def names_file(base: Path, word: str) -> bool:
    """``word`` names a file beside the eval (an inline script, too long or many-lined for a
    file name, never does)."""
    if word.startswith("-") or "\n" in word or len(word) > 1024:
        return False
    try:
        return (base / word).is_file()
    except OSError:  # a word that is no possible file name (too long a component)
        return False
