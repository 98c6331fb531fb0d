"""The activation runner: every prompt of a plugin's activation suites, one turn each, with
all of the plugin's skills installed; the only result is which skills the agent loaded.

A trial is one :class:`~agentsproof.targets.base.TrialInput` with ``skills`` set and
nothing to grade; the target reports ``skills_invoked`` (see
:mod:`agentsproof.targets.copilot.target`, :mod:`agentsproof.targets.command.target` and the chat
target's simulation, :mod:`agentsproof.targets.chat.skill_choice`). A target that cannot tell
(``skills_invoked`` is None), a failure or a timeout makes the trial *errored*, with its
reason; errored trials are left out of every score and counted. So is every trial of a
target that cannot offer several skills (``Target.offers_skills`` false). A trial keeps
the target's line on how it offered them (``ActivationTrial.offered``).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentsproof.core.errors import TrialError
from agentsproof.core.units import seconds
from agentsproof.llm.base import LLMError
from agentsproof.model.activation import ActivationPrompt, ActivationSuite, ActivationTrial
from agentsproof.model.items import BASELINE_SYSTEM_PROMPT, EvalItem, SkillFile
from agentsproof.targets.base import Target, TrialInput
from agentsproof.targets.chat.target import TIMEOUT_GRACE_S

if TYPE_CHECKING:
    from agentsproof.isolation.workspace import Workspaces

DEFAULT_ACTIVATION_TIMEOUT = 120.0
"""Seconds per activation trial: one turn."""
MAX_REASON_CHARS = 300


@dataclass
class ActivationJob:
    """One prompt of one suite, ``trials`` times."""

    skill: str
    prompt: ActivationPrompt


def jobs(suites: Sequence[ActivationSuite]) -> list[ActivationJob]:
    """Every suite's prompts, one job each, in suite order."""
    return [ActivationJob(s.skill.name, p) for s in suites for p in s.prompts]


def _item(job: ActivationJob, timeout: float, target: str) -> EvalItem:
    digest = hashlib.sha256(f"{job.skill}\0{job.prompt.expect}\0{job.prompt.text}".encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return EvalItem(
        id=f"activation-{job.skill}-{digest}",
        name=job.skill,
        kind="skill",
        source_path="",
        system_prompt=BASELINE_SYSTEM_PROMPT,
        task_name="activation",
        prompt=job.prompt.text,
        graders=[],
        trials=1,
        timeout=timeout,
        threshold=0.0,
        target=target,
    )


async def run_one(
    target: Target, job: ActivationJob, index: int, skills: list[SkillFile], timeout: float, workspaces: Workspaces | None = None
) -> ActivationTrial:
    """One activation trial (never raises for a target's failure: that is an errored trial)."""
    item = _item(job, timeout, target.name)
    limit = target.timeout or timeout
    folder = None
    t0 = time.perf_counter()
    try:
        if not target.offers_skills:
            raise LLMError(f"the {target.kind} target cannot offer several skills to its agent, so it cannot run an activation suite")
        if target.uses_workspace:
            if workspaces is None:
                raise LLMError("an agent target needs a workspace")
            folder = workspaces.create(item.id, "activation", index)
        trial = TrialInput(
            item=item,
            arm="with",
            index=index,
            system=BASELINE_SYSTEM_PROMPT,
            prompt=job.prompt.text,
            timeout=limit,
            workspace=folder,
            skill=None,
            skills=list(skills),
        )
        await target.prepare(trial)
        rec = await asyncio.wait_for(target.run(trial), limit + 2 * TIMEOUT_GRACE_S)
        if rec.skills_invoked is None:
            raise LLMError(f"the {target.kind} target cannot tell which skills the agent loaded")
        fired = list(dict.fromkeys(rec.skills_invoked))
        return ActivationTrial(
            job.skill, job.prompt, index, fired, latency_s=rec.latency_s or time.perf_counter() - t0, cost_usd=rec.cost_usd, offered=rec.skills_offered
        )
    except (TimeoutError, Exception) as err:  # noqa: BLE001 - an errored trial, never the end of the run
        if isinstance(err, TrialError):
            reason = str(err)
        elif isinstance(err, asyncio.TimeoutError):
            reason = f"trial timed out after {seconds(limit)}"
        else:
            reason = f"the {target.kind} target failed unexpectedly: {type(err).__name__}: {' '.join(str(err).split())}"
        return ActivationTrial(job.skill, job.prompt, index, None, error=reason[:MAX_REASON_CHARS], latency_s=time.perf_counter() - t0)
    finally:
        if folder is not None and workspaces is not None:
            workspaces.finish(folder)


async def run_activation(
    target: Target,
    suites: Sequence[ActivationSuite],
    skills: list[SkillFile],
    *,
    trials: int = 1,
    parallel: int = 1,
    timeout: float = DEFAULT_ACTIVATION_TIMEOUT,
    on_trial: Callable[[ActivationTrial], None] | None = None,
) -> list[ActivationTrial]:
    """Every prompt of ``suites`` ``trials`` times with ``skills`` installed, ``parallel`` at once."""
    limit = max(1, parallel)
    if target.max_concurrency:
        limit = min(limit, target.max_concurrency)
    sem = asyncio.Semaphore(limit)
    spaces = None
    if target.uses_workspace:
        from agentsproof.isolation.workspace import Workspaces

        spaces = Workspaces()

    async def one(job: ActivationJob, i: int) -> ActivationTrial:
        async with sem:
            done = await run_one(target, job, i, skills, timeout, spaces)
        if on_trial is not None:
            on_trial(done)
        return done

    try:
        return list(await asyncio.gather(*(one(j, i) for j in jobs(suites) for i in range(trials))))
    finally:
        if spaces is not None:
            spaces.close()
