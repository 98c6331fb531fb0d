"""A gold set for ``judge-check``: JSON Lines of items a person labelled.

Each line is one of three forms (``id`` optional; blank lines and lines starting with
``//`` are skipped):

- **rubric**: ``{"task", "answer", "rubric", "score"}`` — the person's score, 0 to 1;
- **assertion**: ``{"task", "answer", "assertion", "label"}`` — true when the claim holds;
- **pairwise**: ``{"task", "answer_a", "answer_b", "preference"}`` (``"A"``, ``"B"`` or
  ``"tie"``), optional ``"criteria"``.

A bad line is one clear error naming the file, the line and the field (exit 30).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError
from agentsproof.core.inputs import display

KINDS = ("rubric", "assertion", "pairwise")
MAX_GOLD_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True)
class GoldItem:
    """One line of a gold file: a task, the answer(s) and the person's verdict on it (``human``)."""

    id: str
    kind: str
    task: str
    rubric: str | None = None
    assertion: str | None = None
    criteria: str | None = None
    answer: str | None = None
    answer_a: str | None = None
    answer_b: str | None = None
    human: Any = None
    """rubric: a float 0..1; assertion: a bool; pairwise: "A", "B" or "tie"."""


def _text(obj: dict[str, Any], key: str, where: str, *, required: bool = True) -> str | None:
    v = obj.get(key)
    if v is None and not required:
        return None
    if not isinstance(v, str) or not v.strip():
        raise InputError(where, key, "must be a non-empty string")
    return v


KEYS = {
    "rubric": ("id", "task", "answer", "rubric", "score"),
    "assertion": ("id", "task", "answer", "assertion", "label"),
    "pairwise": ("id", "task", "answer_a", "answer_b", "preference", "criteria"),
}
"""The keys each kind of line may have: any other is refused (a misspelt ``scroe`` would
otherwise be silently dropped, or a line of one kind read as another)."""


def _known_keys(obj: dict[str, Any], kind: str, where: str) -> None:
    unknown = sorted(str(k) for k in obj if k not in KEYS[kind])
    if unknown:
        raise InputError(where, unknown[0], f"unknown key for a {kind} item; expected only {', '.join(KEYS[kind])}")


def _parse_line(obj: Any, where: str, number: int) -> GoldItem:
    if not isinstance(obj, dict):
        raise InputError(where, None, "each line must be a JSON object")
    kind = "rubric" if "rubric" in obj else "assertion" if "assertion" in obj else "pairwise" if "answer_a" in obj or "preference" in obj else None
    if kind is not None:
        _known_keys(obj, kind, where)
    task = _text(obj, "task", where)
    ident = str(obj.get("id") or f"line-{number}")
    if "rubric" in obj:
        score = obj.get("score")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score) or not 0 <= score <= 1:
            raise InputError(where, "score", "must be the person's score, a number from 0 to 1")
        return GoldItem(ident, "rubric", task or "", rubric=_text(obj, "rubric", where), answer=_text(obj, "answer", where), human=float(score))
    if "assertion" in obj:
        label = obj.get("label")
        if not isinstance(label, bool):
            raise InputError(where, "label", "must be true (the claim holds) or false")
        return GoldItem(ident, "assertion", task or "", assertion=_text(obj, "assertion", where), answer=_text(obj, "answer", where), human=label)
    if "answer_a" in obj or "preference" in obj:
        pref = obj.get("preference")
        if not isinstance(pref, str) or pref.strip().upper() not in ("A", "B", "TIE"):
            raise InputError(where, "preference", 'must be "A", "B" or "tie"')
        p = pref.strip().upper()
        return GoldItem(
            ident,
            "pairwise",
            task or "",
            criteria=_text(obj, "criteria", where, required=False),
            answer_a=_text(obj, "answer_a", where),
            answer_b=_text(obj, "answer_b", where),
            human="tie" if p == "TIE" else p,
        )
    raise InputError(where, None, "needs 'rubric' and 'score', 'assertion' and 'label', or 'answer_a', 'answer_b' and 'preference'")


def load_gold(path: Path) -> list[GoldItem]:
    """The items of a gold JSONL file (blank and ``//`` lines skipped); InputError naming the line otherwise."""
    src = display(path)
    if path.is_symlink() or not path.is_file():
        raise InputError(src, None, "not a regular file")
    if path.stat().st_size > MAX_GOLD_BYTES:
        raise InputError(src, None, f"larger than {MAX_GOLD_BYTES // (1024 * 1024)} MB")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise InputError(src, None, "is not UTF-8 text") from None
    items: list[GoldItem] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("//"):
            continue
        where = f"{src}:{number}"
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as err:
            raise InputError(where, None, f"is not JSON: {err.msg}") from None
        item = _parse_line(obj, where, number)
        if item.id in seen:
            raise InputError(where, "id", f"{item.id!r} is used twice")
        seen.add(item.id)
        items.append(item)
    if not items:
        raise InputError(src, None, "has no gold items")
    return items
