"""``agentsproof lint``: what lint finds, as lines or JSON, and the gate every run passes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentsproof.core.errors import EXIT_FAILED, EXIT_OK, InputError
from agentsproof.formats.base import Loaded
from agentsproof.formats.lint.problems import Problem

EXIT_PROBLEMS = EXIT_FAILED
"""Lint found an error (or, with ``--strict``, a warning too), as ruff, eslint and
yamllint exit 1 on what they find; warnings alone exit 0."""


def lint(paths: Sequence[Path], *, errors_only: bool = False) -> list[Problem]:
    """The problems lint finds in ``paths`` (files or folders), each once; only errors with ``errors_only``."""
    from agentsproof.formats.lint.lint import lint_path

    found: list[Problem] = []
    for p in paths:
        found += lint_path(Path(p))
    seen: set[tuple[str, str, str]] = set()
    out = []
    for prob in found:  # one file reached twice (a folder and a file in it) is reported once
        key = (prob.file, prob.field, prob.message)
        if key not in seen and (prob.severity == "error" or not errors_only):
            seen.add(key)
            out.append(prob)
    return out


def exit_code(problems: Sequence[Problem], *, strict: bool = False) -> int:
    """``agentsproof lint``'s exit code: :data:`EXIT_PROBLEMS` when there is an error (with
    ``strict``, any problem), else 0: warnings alone pass, as with the linters users know."""
    failing = problems if strict else [p for p in problems if p.severity == "error"]
    return EXIT_PROBLEMS if failing else EXIT_OK


def as_json(problems: Sequence[Problem], reviews: Sequence[Any] = ()) -> str:
    """The problems as ``--json`` prints them, with the error and warning counts."""
    data = {
        "problems": [p.as_json() for p in problems],
        "errors": sum(p.severity == "error" for p in problems),
        "warnings": sum(p.severity == "warning" for p in problems),
    }
    return json.dumps(data, indent=2)


def gate(loaded: Loaded, path: Path) -> None:
    """Before a run, after its file loaded: the first lint *error* of the loaded file refuses
    the run (one line, exit 30), checked on what the load read (the file is not read again).
    Warnings (too few cases, quoting the skill) never stop a run; what the loader itself
    refuses it reports, as before. ``path``: the file or folder as given (for the hint)."""
    from agentsproof.formats.lint.lint import check_loaded

    errors = [p for p in check_loaded(loaded) if p.severity == "error"]
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more: `agentsproof lint {path}`)" if len(errors) > 1 else ""
        raise InputError(first.file, first.field, f"{first.message} (fix: {first.fix}){more}")
