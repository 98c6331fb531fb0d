"""One lint problem: the file, the field, what is wrong and how to fix it, on one line."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

Severity = Literal["error", "warning"]

MIN_CASES = 5
"""Fewer cases than this cannot show that a skill helps in general (dotnet/skills' bar)."""


@dataclass(frozen=True)
class Problem:
    """One lint problem: where (file, field), which defect class, what is wrong and how to fix it."""

    file: str
    field: str
    rule: str
    """A stable name of the defect class (e.g. ``impossible-check``), for CI filters."""
    message: str
    fix: str
    severity: Severity = "error"

    def line(self) -> str:
        """One printable line: a key or name quoted from the file shows its control
        characters escaped (:func:`agentsproof.core.termtext.term_text`)."""
        from agentsproof.core.termtext import term_text

        where = f"{self.file}: {self.field}" if self.field else self.file
        return term_text(f"{where}: {self.severity}: {self.message} (fix: {self.fix}) [{self.rule}]")

    def as_json(self) -> dict[str, Any]:
        """The problem's fields as a JSON object (``lint --json``)."""
        return asdict(self)


def fix_for(message: str) -> tuple[str, str]:
    """The defect class and a fix for a loader's error message (the loaders stop at the first
    problem and say what is wrong; lint adds what to do)."""
    m = message.lower()
    table = (
        ("duplicate key", "duplicate-key", "keep one of the two keys (YAML keeps only the last, silently, elsewhere)"),
        ("must be unique", "duplicate-case", "rename one of the cases"),
        ("not a valid regex", "bad-regex", "correct the pattern (escape special characters with \\)"),
        ("leaves the workspace", "outside-workspace", "give the path relative to the workspace, without '..' that leaves it"),
        ("absolute path", "outside-workspace", "give the path relative to the workspace"),
        ("symlink", "bad-fixture", "replace the link with the file itself (links are not followed)"),
        ("not found", "missing-file", "create the file or correct the path (relative to the eval file)"),
        ("cannot be read", "unreadable-file", "make the file readable"),
        ("not a regular file", "unreadable-file", "point to a regular file, not a symlink or device"),
        ("at least one check", "empty-grader", "add a check or remove the grader"),
        ("is empty", "empty-field", "fill it in or remove it"),
        ("unknown key", "unknown-key", "remove the key or correct its spelling (see `agentsproof schema`)"),
        ("required field is missing", "missing-field", "add the field"),
        ("greater than 0", "zero-weight", "give a positive weight, or remove the grader"),
        ("above 0", "zero-weight", "give a positive weight, or remove the check"),
        ("unknown grader type", "unknown-grader", "use one of the grader types listed"),
    )
    for needle, rule, fix in table:
        if needle in m:
            return rule, fix
    return "invalid", "correct the field as the message says (`agentsproof schema` shows every field)"
