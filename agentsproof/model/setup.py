"""Set-up commands an eval file names, run around every agent trial in its workspace.

agentv's ``environment.setup``, ``workspace.hooks`` (``before_all``, ``before_each``,
``after_each``, ``after_all``) and ``extensions`` (``file://hook.mjs:beforeAll``) are
programs: each becomes a :class:`SetupCommand` on the item, run by
:mod:`agentsproof.targets.agents.setup` in the trial's workspace, in the command target's
sandbox, its output in the trial log. Every trial gets a fresh copy of the workspace, so a
``before_all`` runs before every trial, as a ``before_each`` does (first), and an
``after_*`` after it (a failing ``before`` errors the trial; a failing ``after`` is a note,
as in agentv).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

STDIN_KINDS = ("workspace", "environment", "extension", "none")


@dataclass(frozen=True)
class SetupCommand:
    """One program to run around an agent trial."""

    label: str
    """Where the file names it, e.g. ``environment.setup`` or ``workspace.hooks.before_all``."""
    when: Literal["before", "after"]
    argv: tuple[str, ...]
    """Run without a shell; ``{{workspace_path}}``, ``{{test_id}}``, ``{{eval_run_id}}``,
    ``{{case_input}}`` and ``{{case_metadata}}`` are filled per trial."""
    cwd: str
    """The folder it runs in (absolute; in the project, read-only, or the workspace)."""
    project: str
    """The project root: visible read-only inside the sandbox."""
    mount_at: str | None = None
    """Where the trial's workspace is seen inside the sandbox (agentv's ``workdir``, at its
    real path so that the command's relative paths resolve as in agentv); None: at its own path."""
    stdin: str = "none"
    """What it reads on stdin: agentv's JSON context for a ``workspace`` hook, an
    ``environment`` recipe, an ``extension`` call (see :data:`STDIN_KINDS`)."""
    env: tuple[tuple[str, str], ...] = ()
    timeout: float = 60.0
    fatal: bool = True
    """A failure errors the trial (``before``); else it is a note in the trial log."""
    test_id: str = ""
    eval_dir: str = ""
