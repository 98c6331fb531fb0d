"""The one reader of AGENTSPROOF_* settings from the environment.

A text setting is :func:`env_text`. Every numeric setting goes through :func:`env_number` (or :func:`env_int`): an unset or
empty variable gives the default, a malformed or out-of-range value is one error line
naming the variable — exit 30 from any command, never a silent fallback.
"""

from __future__ import annotations

import math
import os
from typing import TypeVar

from agentsproof.core.errors import InputError

N = TypeVar("N", int, float)


def cache_root() -> str:
    """Where agentsproof keeps its caches (responses, compiled templates):
    ``$AGENTSPROOF_CACHE_DIR``, else ``$XDG_CACHE_HOME/agentsproof``, else ``~/.cache/agentsproof``."""
    return os.environ.get("AGENTSPROOF_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "agentsproof"
    )


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    if value is None or not value.strip():
        return None
    return value.strip()


def env_text(name: str) -> str | None:
    """A text setting: its value stripped, or None when it is unset or blank."""
    return _raw(name)


def env_number(name: str, default: float, *, lo: float | None = None, hi: float | None = None) -> float:
    """A numeric setting: ``default`` when unset or blank; InputError when it is not a finite number or lies outside [lo, hi]."""
    raw = _raw(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise InputError("environment", name, f"{raw!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError("environment", name, f"{raw!r} is not a finite number")
    return _within(name, raw, value, lo, hi, "g")


def env_int(name: str, default: int, *, lo: int | None = None, hi: int | None = None) -> int:
    """A whole-number setting: ``default`` when unset or blank; InputError when it is not an integer or lies outside [lo, hi]."""
    raw = _raw(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InputError("environment", name, f"{raw!r} is not a whole number") from None
    return _within(name, raw, value, lo, hi, "")


def _within(name: str, raw: str, value: N, lo: float | None, hi: float | None, fmt: str) -> N:
    """``value`` when it lies in [lo, hi] (either may be None); else one InputError line."""
    if (lo is None or value >= lo) and (hi is None or value <= hi):
        return value
    if lo is not None and hi is not None:
        bounds = f"between {lo:{fmt}} and {hi:{fmt}}"
    elif lo is not None:
        bounds = f"at least {lo:{fmt}}"
    else:
        bounds = f"at most {hi:{fmt}}"
    raise InputError("environment", name, f"{raw!r} must be {bounds}")
