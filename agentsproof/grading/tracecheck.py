"""Checks of a trajectory by tool name: the one implementation behind the ``tool_calls``
grader and the server's ``trace_assertions``.

A name pattern matches a whole tool name, case-sensitively; ``*`` is the only wildcard and
matches any run of characters (``mcp__*``, ``*_search``). Every other character, ``?`` and
``[`` included, stands for itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

KINDS = ("must_call", "must_not_call", "max_steps", "min_steps")
"""The ``KIND:ARG`` assertion forms of the SDK's ``trace_assertions``."""

_SHOWN = 5


@dataclass(frozen=True)
class Verdict:
    """One check's outcome and the evidence shown for it (which steps, which calls)."""

    passed: bool
    detail: str


@lru_cache(maxsize=512)
def _pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.DOTALL)


def matches(name: str, pattern: str) -> bool:
    """Whether tool ``name`` matches ``pattern`` (``*`` wildcards, whole name)."""
    return _pattern(pattern).fullmatch(name) is not None


def _steps(positions: list[int]) -> str:
    shown = ", ".join(str(p + 1) for p in positions[:_SHOWN])
    return shown + (f", … ({len(positions)} in all)" if len(positions) > _SHOWN else "")


def _names(names: Sequence[str]) -> str:
    if not names:
        return "no tool was called"
    distinct = list(dict.fromkeys(names))
    shown = ", ".join(distinct[:_SHOWN])
    return "calls: " + shown + (f", … ({len(distinct)} distinct)" if len(distinct) > _SHOWN else "")


def must_call(names: Sequence[str], pattern: str) -> Verdict:
    """Pass when some call's name matches ``pattern``."""
    hits = [i for i, n in enumerate(names) if matches(n, pattern)]
    if hits:
        return Verdict(True, f"called {len(hits)} time(s), at step {_steps(hits)}")
    return Verdict(False, f"never called {pattern!r} ({_names(names)})")


def must_not_call(names: Sequence[str], pattern: str) -> Verdict:
    """Pass when no call's name matches ``pattern``; the offending calls are named."""
    hits = [i for i, n in enumerate(names) if matches(n, pattern)]
    if hits:
        called = ", ".join(dict.fromkeys(names[i] for i in hits))
        return Verdict(False, f"called {len(hits)} time(s) ({called}), at step {_steps(hits)}")
    return Verdict(True, f"never called {pattern!r}")


def max_steps(count: int, limit: int) -> Verdict:
    """Pass when ``count`` steps are at most ``limit``."""
    return Verdict(count <= limit, f"{count} step(s), at most {limit} allowed")


def min_steps(count: int, limit: int) -> Verdict:
    """Pass when ``count`` steps are at least ``limit``."""
    return Verdict(count >= limit, f"{count} step(s), at least {limit} required")


def sequence(names: Sequence[str], patterns: Sequence[str]) -> Verdict:
    """The patterns called in this order; other calls may come between (the earliest
    match of each one after the previous is taken, which finds an order whenever one exists)."""
    found: list[str] = []
    at = 0
    for pattern in patterns:
        hit = next((i for i in range(at, len(names)) if matches(names[i], pattern)), None)
        if hit is None:
            where = f" after step {at}" if at else ""
            done = f"{' → '.join(found)}, then " if found else ""
            return Verdict(False, f"{done}no call to {pattern!r}{where} ({_names(names)})")
        found.append(f"{names[hit]} (step {hit + 1})")
        at = hit + 1
    return Verdict(True, "in order: " + " → ".join(found))


def parse(assertion: str) -> tuple[str, str] | None:
    """``("must_call", "search")`` for ``"must_call:search"``; None for free-text assertions."""
    kind, sep, arg = assertion.partition(":")
    kind = kind.strip().lower()
    if sep and kind in KINDS:
        return kind, arg.strip()
    return None


def check(kind: str, arg: str, names: Sequence[str]) -> Verdict:
    """One ``KIND:ARG`` assertion against the step names, in order (steps = ``len(names)``)."""
    if kind == "must_call":
        return must_call(names, arg)
    if kind == "must_not_call":
        return must_not_call(names, arg)
    if kind not in ("max_steps", "min_steps"):
        raise ValueError(f"unknown trace check {kind!r}")
    try:
        limit = int(arg)
    except ValueError:
        return Verdict(False, f"{arg!r} is not a whole number")
    return max_steps(len(names), limit) if kind == "max_steps" else min_steps(len(names), limit)
