"""Every problem a file's loader refuses, in one lint run.

A format's loader stops at the first problem it finds (one line, as a run prints it). To
show the others too, lint takes the field that error names out of the file's parsed data
(in memory: :func:`agentsproof.core.inputs.parsed_as`, nothing is written) and loads it
again, until it loads or nothing more can be taken out. An error that only follows from
what was taken out (the key is now missing, the case left with nothing to check) is not
reported: the field it names is taken out in turn. The fields reported name the file as it
is: an index after a removed list entry is counted as in the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from agentsproof.core.errors import InputError

Seg = str | int
T = TypeVar("T")

MAX_ROUNDS = 100
"""Loads of one file lint tries (each takes one field out)."""

_TOKEN = re.compile(r"\[(\d+)\]|\['([^']*)'\]|\.?([^.\[\]]+)")
_PATH_IN_TEXT = re.compile(r"\b[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*|\[\d+\])*\[\d+\](?:\.[A-Za-z_][\w-]*|\[\d+\])*")


def parse_field(text: str) -> list[Seg] | None:
    """``tests[2].assert[0].value`` as ``["tests", 2, "assert", 0, "value"]``; None for a
    field that is not a path into the data (``line 3``, ``(top level)``, ``--skill``)."""
    if not text or " " in text or text.startswith(("(", "-")):
        return None
    out: list[Seg] = []
    pos = 0
    for m in _TOKEN.finditer(text):
        if m.start() != pos:
            return None
        pos = m.end()
        index, quoted, name = m.groups()
        out.append(int(index) if index is not None else quoted if quoted is not None else name)
    return out if pos == len(text) else None


def format_field(path: list[Seg]) -> str:
    """The inverse of :func:`parse_field`."""
    text = ""
    for seg in path:
        if isinstance(seg, int):
            text += f"[{seg}]"
        else:
            text += f".{seg}" if text else seg
    return text


@dataclass
class Reduction:
    """A file's parsed data with fields taken out, and how its indices map to the file's."""

    data: Any
    removed: list[list[Seg]] = field(default_factory=list)
    """What was taken out, as paths into the file."""
    gaps: dict[tuple[Seg, ...], list[int]] = field(default_factory=dict)
    """Per list (its path in the file), the indices of the entries taken out."""

    def original(self, path: list[Seg]) -> list[Seg]:
        """A path into the reduced data as a path into the file."""
        out: list[Seg] = []
        for seg in path:
            if isinstance(seg, int):
                idx = seg
                for gone in sorted(self.gaps.get(tuple(out), ())):
                    if gone <= idx:
                        idx += 1
                out.append(idx)
            else:
                out.append(seg)
        return out

    def original_text(self, text: str) -> str:
        """A field (or a message naming fields) with its indices as in the file."""
        if not self.gaps:
            return text

        def one(m: re.Match[str]) -> str:
            path = parse_field(m.group(0))
            return format_field(self.original(path)) if path else m.group(0)

        whole = parse_field(text)
        return format_field(self.original(whole)) if whole is not None else _PATH_IN_TEXT.sub(one, text)

    def follows(self, path: list[Seg], message: str = "") -> bool:
        """True when an error at ``path`` (in the file) may follow from what was taken out:
        it is in, or holds, a field taken out, or it says that a key beside one is missing
        (a judge's ``value`` once its ``prompt`` was taken out)."""
        if any(_prefix(r, path) or _prefix(path, r) for r in self.removed):
            return True
        return "missing" in message and any(len(r) == len(path) and r[:-1] == path[:-1] for r in self.removed)

    def take_out(self, path: list[Seg], *, unique: bool = False) -> bool:
        """Take out the deepest existing field on ``path`` (a missing key: the mapping that
        lacks it); False when that would be the whole file. ``unique``: a name that must be
        unique is given a fresh one instead (the rest of its case is still checked)."""
        node = self.data
        parents: list[tuple[Any, Seg]] = []
        for seg in path:
            found = _child(node, seg)
            if found is _ABSENT:
                break
            parents.append((node, seg))
            node = found
        if not parents:
            return False
        orig = self.original([seg for _, seg in parents])
        container, seg = parents[-1]
        if unique and len(parents) == len(path) and isinstance(node, str):
            container[seg] = f"{node} (lint: copy {len(self.removed) + 1})"
        elif isinstance(container, list) and isinstance(seg, int):
            container.pop(seg)
            self.gaps.setdefault(tuple(orig[:-1]), []).append(int(orig[-1]))
        else:
            del container[seg]
        self.removed.append(orig)
        return True


_ABSENT = object()


def _child(node: Any, seg: Seg) -> Any:
    if isinstance(node, dict) and isinstance(seg, str) and seg in node:
        return node[seg]
    if isinstance(node, list) and isinstance(seg, int) and 0 <= seg < len(node):
        return node[seg]
    return _ABSENT


def _prefix(short: list[Seg], long: list[Seg]) -> bool:
    return len(short) <= len(long) and long[: len(short)] == short


def every_error(path: Path, src: str, data: Any, first: InputError, attempt: Callable[[], T]) -> tuple[list[InputError], T | None, Reduction]:
    """The loader errors of the file at ``path`` (``src`` as errors name it; ``data`` its
    parse; ``first`` the error of its first load), each with its field and the fields its
    message names as in the file, and what ``attempt`` returned once the reduced data
    loaded (None if it never did)."""
    from agentsproof.core.inputs import parsed_as

    red = Reduction(data)
    errors = [first]
    err: InputError | None = first
    for _ in range(MAX_ROUNDS):
        if err is None:
            break
        at = parse_field(err.field or "")
        unique = "must be unique" in err.message
        if err.source not in (None, src) or at is None or not red.take_out(at, unique=unique):
            return errors, None, red  # another file's problem, or none of this file to take out
        try:
            with parsed_as(path, red.data):
                return errors, attempt(), red
        except InputError as nxt:
            err = nxt
        except Exception:  # noqa: BLE001 - a loader surprised by what was taken out: the errors so far stand
            return errors, None, red
        where = parse_field(err.field or "")
        if err.source in (None, src) and (where is None and not err.field or where is not None and red.follows(red.original(where), err.message)):
            continue  # follows from what was taken out: not reported, taken out in turn
        errors.append(InputError(err.source, red.original_text(err.field) if err.field else err.field, red.original_text(err.message)))
    return errors, None, red
