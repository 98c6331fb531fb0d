"""JSON read back from our own files (journals, saved reports) with every number finite:
``NaN``, ``Infinity`` and a literal that overflows a float (``1e400``) are refused, so no
score read back can be NaN or infinite (a NaN score would print ``nan`` and grade F)."""

from __future__ import annotations

import json
import math
from typing import Any


class NotFinite(ValueError):
    """A number in the JSON text is NaN or infinite."""


def _constant(name: str) -> Any:
    raise NotFinite(f"{name} is not a number agentsproof writes")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotFinite(f"{text} is too large for a number")
    return value


def loads_finite(text: str | bytes) -> Any:
    """``json.loads`` refusing non-finite numbers (:class:`NotFinite`, a ValueError)."""
    return json.loads(text, parse_constant=_constant, parse_float=_float)
