"""``bun``, agentv's runtime, and our own ``agentv`` grader SDK for the programs it runs.

agentv runs its TypeScript graders, custom assertions and ``cli`` mock agents with ``bun``
(``bun run graders/check.ts``), and those files ``import { defineScriptGrader } from
'agentv'`` (or ``@agentv/sdk``, ``@agentv/eval``). agentsproof finds bun, in this order:
``AGENTSPROOF_BUN`` (a path to the binary), the venv's tool area (``make bun`` installs a
pinned bun into ``.venv/bun-cli``), ``PATH``. The ``agentv`` module those files import is
our own implementation of agentv's documented SDK (``agentsproof/data/agentv_sdk``: the
stdin/stdout contract, ``defineScriptGrader`` / ``defineCodeGrader`` / ``defineAssertion`` /
``definePromptTemplate``, ``createProviderClient``, a small ``z``), put on bun's module path
with ``NODE_PATH`` (after the file's own ``node_modules``, so a project that installed
agentv's real package keeps it): nothing is written into the user's project.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

ENV = "AGENTSPROOF_BUN"
"""A path to the bun binary to use."""
TOOL_DIR = "bun-cli"
"""Where ``make bun`` installs bun inside the venv (``.venv/bun-cli/node_modules/.bin/bun``)."""
INSTALL_HINT = f"agentv's runtime: `make bun` installs it into the venv, or set {ENV} to its path"
SDK_DIR = Path(__file__).resolve().parent.parent / "data" / "agentv_sdk"
"""The folder holding our ``agentv`` module (and its ``@agentv/sdk``, ``@agentv/eval`` aliases), for NODE_PATH."""
NAMES = ("bun", "bunx")


def find_bun() -> str | None:
    """The bun binary to run (absolute path), or None when there is none."""
    given = os.environ.get(ENV, "").strip()
    if given:
        return given if os.path.isfile(given) and os.access(given, os.X_OK) else None
    from agentsproof.core.extras import venv_tool

    return venv_tool(TOOL_DIR, "bun") or shutil.which("bun")


def resolve(argv: list[str]) -> list[str]:
    """``argv`` with a bare ``bun`` / ``bunx`` as the binary found (unchanged when none is found:
    running it then fails with :data:`INSTALL_HINT`)."""
    if not argv or argv[0] not in NAMES:
        return argv
    found = find_bun()
    if found is None:
        return argv
    return [found if argv[0] == "bun" else str(Path(found).with_name("bunx")), *argv[1:]]


def runtime_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` (a program's environment) with bun's folder on PATH (after the others, when it
    is not there already) and our agentv SDK on NODE_PATH (after the caller's own), so that a
    shell line running ``bun run x.ts`` finds both. The venv's bun folder holds only bun."""
    out = dict(env)
    found = find_bun()
    path = out.get("PATH", os.defpath)
    if found is not None:
        folder = str(Path(found).parent)
        if folder not in path.split(os.pathsep) and shutil.which("bun", path=path) is None:
            out["PATH"] = path + os.pathsep + folder if path else folder
    node_path = out.get("NODE_PATH", "")
    if str(SDK_DIR) not in node_path.split(os.pathsep):
        out["NODE_PATH"] = node_path + os.pathsep + str(SDK_DIR) if node_path else str(SDK_DIR)
    out.setdefault("BUN_RUNTIME_TRANSPILER_CACHE_PATH", "0")  # no cache files in a read-only home
    return out


def missing_reason(program: str) -> str | None:
    """Why ``program`` cannot run when it is bun and no bun is found (None otherwise)."""
    if Path(program).name in NAMES and find_bun() is None:
        return f"cannot run {program!r}: bun is not installed ({INSTALL_HINT})"
    return None
