"""``agentsproof verify``'s findings and how two numbers are compared: :class:`Difference`
(a stated number and its re-derivation, named by its field) and :func:`same` (equal, floats
within :data:`TOLERANCE`). Shared by :mod:`agentsproof.executor.verify` and the modules it
calls for parts of a report (``verify_extras``), which import from here, not from it."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

TOLERANCE = 1e-9


@dataclass(frozen=True)
class Difference:
    """One stated number (or fact) that its re-derivation does not give."""

    field: str
    stated: Any
    derived: Any

    def line(self) -> str:
        """``field: stated X, derived Y``."""
        return f"{self.field}: the report states {_show(self.stated)}, derived {_show(self.derived)}"


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def same(a: Any, b: Any) -> bool:
    """Equal, floats within :data:`TOLERANCE` (relative for large values), in lists and mappings too."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return True
        return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return set(a) == set(b) and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


def diff(out: list[Difference], field: str, stated: Any, derived: Any) -> None:
    """Append a :class:`Difference` to ``out`` when ``stated`` and ``derived`` are not :func:`same`."""
    if not same(stated, derived):
        out.append(Difference(field, stated, derived))


def diff_tree(out: list[Difference], field: str, stated: Any, derived: Any) -> None:
    """Every key of ``derived`` compared with ``stated``'s, naming the deepest key that differs."""
    if isinstance(derived, Mapping) and isinstance(stated, Mapping):
        for k, v in derived.items():
            if k not in stated:
                out.append(Difference(f"{field}.{k}", "(missing)", v))
            else:
                diff_tree(out, f"{field}.{k}", stated[k], v)
        return
    if isinstance(derived, list) and isinstance(stated, list) and len(derived) == len(stated) and any(isinstance(x, Mapping) for x in derived):
        for n, (s, d) in enumerate(zip(stated, derived, strict=True)):
            diff_tree(out, f"{field}[{n}]", s, d)
        return
    diff(out, field, stated, derived)
