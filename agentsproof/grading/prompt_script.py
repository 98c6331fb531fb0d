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
import tempfile
from pathlib import Path

from agentsproof.grading.context import TrialContext
from agentsproof.grading.script import ScriptGrader


class PromptScriptError(Exception):
    """Why the prompt template gave no prompt (the grader is errored with it)."""


async def written_prompt(spec: ScriptGrader, ctx: TrialContext) -> str:
    """The judge prompt the command prints for this trial; PromptScriptError with agentv's reason."""
    from agentsproof.core import bun, confine
    from agentsproof.core.errors import TargetError
    from agentsproof.core.procgroup import run_group
    from agentsproof.core.rmtree import remove_tree
    from agentsproof.grading.script import _prepare

    timeout = spec.timeout if ctx.timeout is None else min(spec.timeout, ctx.timeout)
    tmp = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="agentsproof-prompt-"))
    try:
        folder = ctx.workspace.resolve() if ctx.workspace is not None and ctx.workspace.is_dir() and not ctx.workspace.is_symlink() else tmp
        env = {**os.environ, "AGENTV_WORKSPACE_PATH": str(folder)}
        env, command, readable, stdin = await asyncio.to_thread(_prepare, spec, ctx, env)
        missing = await asyncio.to_thread(bun.missing_reason, command[0])
        if missing is not None:
            raise PromptScriptError(f"Prompt template execution failed: {missing}")
        try:
            await asyncio.to_thread(confine.bwrap)
            argv = confine.confined_argv(command, cwd=tmp, writable=[tmp], readable=[*readable, folder])
            run = await run_group(argv, cwd=tmp, env=env, stdin_text=stdin, timeout=timeout)
        except TargetError as err:
            raise PromptScriptError(f"Prompt template execution failed: {err}") from None
    finally:
        await asyncio.to_thread(remove_tree, tmp)
    if run.timed_out:
        raise PromptScriptError(f"Prompt template execution failed: timed out after {timeout:g} s")
    if run.returncode != 0:
        last = run.stderr[-1][1].strip()[:300] if run.stderr else f"exit code {run.returncode}"
        raise PromptScriptError(f"Prompt template execution failed: {last} (exit code {run.returncode}, from {spec.shown()})")
    prompt = run.stdout.decode("utf-8", "replace").strip()
    if not prompt:
        raise PromptScriptError("Prompt template execution failed: Prompt template produced empty output")
    return prompt
