"""Sizes, signed numbers and durations as people read them (reports, evidence lines, refusals)."""

from __future__ import annotations


def human_size(n: int) -> str:
    """A size in bytes as people read it: ``512 B``, ``12 KB``, ``3.4 MB`` (1024-based)."""
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.0f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def signed(value: float | None, digits: int = 2) -> str:
    """``+0.12`` / ``-0.12``; a value that rounds to zero is ``+0.00`` (never ``-0.00``)."""
    if value is None:
        return "—"
    text = f"{value:+.{digits}f}"
    return "+" + text[1:] if text.startswith("-") and float(text) == 0 else text


def seconds(value: float) -> str:
    """A duration for a message: ``29.5s``, ``3s``, ``2m 05s`` (never ``29.5109s``)."""
    if value >= 120:
        m, s = divmod(round(value), 60)
        return f"{m}m {s:02d}s"
    rounded = round(value, 1)
    return f"{rounded:g}s"


def tidy(value: object, places: int = 12) -> object:
    """Float dust off a result (``1.39e-17`` → ``0.0``, ``-0.0`` → ``0.0``), in lists and
    mappings too; other values unchanged."""
    if isinstance(value, float):
        out = round(value, places)
        return 0.0 if out == 0 else out
    if isinstance(value, list):
        return [tidy(v, places) for v in value]
    if isinstance(value, tuple):
        return tuple(tidy(v, places) for v in value)
    if isinstance(value, dict):
        return {k: tidy(v, places) for k, v in value.items()}
    return value
