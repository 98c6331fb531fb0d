"""agentv's custom assertions: a ``type`` that names a file in the nearest ``.agentv/assertions/``
folder above the eval file (``.agentv/assertions/min-words.ts`` → ``type: min-words``), run as
agentv runs it: ``bun run FILE`` with agentv's script payload on stdin (``output``, ``config`` with
the assertion's other keys) and its ``{"pass", "score", "reason"}`` on stdout, as a ``script``
grader. Built-in types win over a file of the same name, as in agentv. The file runs with the
bun :mod:`agentsproof.core.bun` finds and our own ``agentv`` SDK module on its path; without bun
the grader errors naming ``make bun``.
"""

from __future__ import annotations

import re
from pathlib import Path

from agentsproof.core.inputs import MAX_REPO_LEVELS

EXTENSIONS = (".ts", ".js", ".mts", ".mjs")
"""The file extensions agentv discovers, in the order it tries them."""
RUNNER = ("bun", "run")
"""How agentv runs an assertion file (its SDK's ``defineAssertion`` reads stdin, prints the verdict)."""


def find_custom(path: Path, kind: str) -> Path | None:
    """The file defining assertion type ``kind`` for the eval file ``path``: in the nearest
    ``.agentv/assertions/`` folder at or above the eval's folder (not past a ``.git`` folder), or None."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]*", kind):
        return None
    folder = path.resolve().parent
    for candidate in (folder, *list(folder.parents)[:MAX_REPO_LEVELS]):
        assertions = candidate / ".agentv" / "assertions"
        if assertions.is_dir() and not assertions.is_symlink():
            for ext in EXTENSIONS:
                found = assertions / f"{kind}{ext}"
                if found.is_file() and not found.is_symlink() and found.resolve().is_relative_to(candidate.resolve()):
                    return found
            return None  # the nearest folder only
        if (candidate / ".git").exists():
            break
    return None


def custom_argv(found: Path) -> list[str]:
    """The command that runs an assertion file."""
    return [*RUNNER, str(found)]
