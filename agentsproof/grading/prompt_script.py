"""agentv's prompt template script: an ``llm-grader`` / ``llm-rubric`` whose ``prompt`` is
``{command: [bun, run, prompts/x.ts], config: {…}}``.

As agentv runs it (``graders/prompt-resolution.ts``): the command gets agentv's script payload on
stdin (:mod:`agentsproof.grading.agentv_payload`, the entry's ``config`` as its ``config``) and
prints the judge prompt (``definePromptTemplate`` of its SDK does the printing); the trimmed
stdout is the prompt the judge reads. A command that fails, or prints nothing, errors the grader
("Prompt template execution failed: …"). It runs confined as a script grader does: it reads
the project and the trial's workspace, writes only a folder of its own, has no network.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from agentsproof.grading.context import TrialContext
from agentsproof.grading.script import ScriptGrader


class PromptScriptError(Exception):
    """Why the prompt template gave no prompt (the grader is errored with it)."""


async def written_prompt(spec: ScriptGrader, ctx: TrialContext) -> str:
    """The judge prompt the command prints for this trial; PromptScriptError with agentv's reason."""
    from agentsproof.core import bun, confine
    from agentsproof.core.errors import TargetError
    from agentsproof.grading.script import _prepare

    timeout = spec.timeout if ctx.timeout is None else min(spec.timeout, ctx.timeout)
    workspace = ctx.workspace.resolve() if ctx.workspace is not None and ctx.workspace.is_dir() and not ctx.workspace.is_symlink() else None
    env, command, readable, stdin = await asyncio.to_thread(_prepare, spec, ctx, dict(os.environ))
    missing = await asyncio.to_thread(bun.missing_reason, command[0])
    if missing is not None:
        raise PromptScriptError(f"Prompt template execution failed: {missing}")

    def env_in(folder: Path) -> dict[str, str]:  # agentv's workspace path: the trial's, else the program's own folder
        return {**env, "AGENTV_WORKSPACE_PATH": str(workspace or folder)}

    try:
        run = await confine.run_in_scratch(
            command, prefix="agentsproof-prompt-", readable=[*readable, *([workspace] if workspace else [])], stdin_text=stdin, timeout=timeout, env=env_in
        )
    except TargetError as err:
        raise PromptScriptError(f"Prompt template execution failed: {err}") from None
    if run.timed_out:
        raise PromptScriptError(f"Prompt template execution failed: timed out after {timeout:g} s")
    if run.returncode != 0:
        raise PromptScriptError(f"Prompt template execution failed: {confine.failure_line(run)} (exit code {run.returncode}, from {spec.shown()})")
    prompt = run.stdout.decode("utf-8", "replace").strip()
    if not prompt:
        raise PromptScriptError("Prompt template execution failed: Prompt template produced empty output")
    return prompt
