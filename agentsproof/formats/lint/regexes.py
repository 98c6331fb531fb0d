"""Regexes that compile but can never match any text.

Read from Python's own parse tree (``re._parser``), so only certain cases are named: an
end anchor with something required after it, a start anchor with something required
before it, an empty negative lookahead ``(?!)``, a class that excludes everything
(``[^\\s\\S]``), ``\\b`` right beside ``\\B``. A pattern this does not understand is assumed
to be able to match (lint never refuses a working check).
"""

from __future__ import annotations

import importlib
import re
from typing import Any

try:  # Python 3.11+: re's own parser (private, so imported by name)
    _c: Any = importlib.import_module("re._constants")
    _p: Any = importlib.import_module("re._parser")
except ImportError:  # pragma: no cover - older Pythons
    _c = importlib.import_module("sre_constants")
    _p = importlib.import_module("sre_parse")

_COMPLEMENTS = ({_c.CATEGORY_SPACE, _c.CATEGORY_NOT_SPACE}, {_c.CATEGORY_WORD, _c.CATEGORY_NOT_WORD}, {_c.CATEGORY_DIGIT, _c.CATEGORY_NOT_DIGIT})


def impossible(pattern: str) -> str | None:
    """Why ``pattern`` can never match (a short reason), or None when it may match."""
    try:
        tree = _p.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return None  # invalid patterns are the loader's error, not ours
    multiline = bool(tree.state.flags & re.MULTILINE)
    try:
        return _seq(list(tree), multiline)
    except (RecursionError, TypeError, ValueError, AttributeError):  # an unfamiliar tree: assume it can match
        return None


def _min_width(items: list[Any]) -> int:
    try:
        return int(_p.SubPattern(_p.State(), items).getwidth()[0])
    except Exception:  # noqa: BLE001 - width unknown: treat as empty (never a false alarm)
        return 0


def _seq(items: list[Any], multiline: bool) -> str | None:
    for i, (op, av) in enumerate(items):
        reason = _node(op, av, multiline)
        if reason:
            return reason
        rest, before = items[i + 1 :], items[:i]
        if op is _c.AT:
            if av is _c.AT_END_STRING and _min_width(rest) > 0:
                return "'\\Z' (end of text) is followed by more text to match"
            if av is _c.AT_END and not multiline and _min_width(rest) > 0 and not _only_newline(rest):
                return "'$' (end of text) is followed by more text to match (add (?m) for line ends)"
            if av is _c.AT_BEGINNING_STRING and _min_width(before) > 0:
                return "'\\A' (start of text) comes after text that must match first"
            if av is _c.AT_BEGINNING and not multiline and _min_width(before) > 0:
                return "'^' (start of text) comes after text that must match first (add (?m) for line starts)"
            if i + 1 < len(items) and items[i + 1][0] is _c.AT and {av, items[i + 1][1]} == {_c.AT_BOUNDARY, _c.AT_NON_BOUNDARY}:
                return "'\\b' and '\\B' at the same place"
    return None


def _only_newline(rest: list[Any]) -> bool:
    """``$\\n`` matches before a final newline."""
    consuming = [(op, av) for op, av in rest if op is not _c.AT]
    return len(consuming) == 1 and consuming[0] == (_c.LITERAL, ord("\n"))


def _node(op: Any, av: Any, multiline: bool) -> str | None:
    if op is _c.ASSERT_NOT and not list(av[1]):
        return "'(?!)' (an empty negative lookahead) never matches"
    if op is _c.IN:
        negate = any(o is _c.NEGATE for o, _ in av)
        cats = {a for o, a in av if o is _c.CATEGORY}
        if negate and any(pair <= cats for pair in _COMPLEMENTS):
            return "the character class excludes every character"
    if op is _c.SUBPATTERN:
        return _seq(list(av[-1]), multiline)
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", None)) and av[0] > 0:
        return _seq(list(av[2]), multiline)
    if op is _c.BRANCH:
        reasons = [_seq(list(alt), multiline) for alt in av[1]]
        if reasons and all(reasons):
            return reasons[0]
    if op is _c.ASSERT:
        return _seq(list(av[1]), multiline)
    return None
