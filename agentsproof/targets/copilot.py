"""The copilot target: the GitHub Copilot CLI, through its SDK, working in the trial's folder.

Each trial is one fresh Copilot session on a CLI process the target shares between its
trials (started on the first trial, stopped by :meth:`CopilotTarget.aclose`). The session
works in the trial's workspace with the target's ``tools`` only; the model is ``--model``,
else ``AGENTSPROOF_MODEL``, else the target's ``model`` (:func:`agentsproof.targets.base.agent_model`),
else Copilot's own default; GitHub login or BYOK (``AGENTSPROOF_COPILOT_PROVIDER_URL``)
come from the environment as for the ``copilot`` chat provider.

**The with-arm.** ``inject: system`` (the default, comparable with chat trials): the arm's
system prompt (the skill or agent text) replaces Copilot's whole system message.
``inject: skill`` loads it the way Copilot does: a skill is written to
``<temp folder>/<name>/SKILL.md`` (with the other files of its folder) *outside* the
workspace, offered through ``skill_directories`` with Copilot's ``skill`` tool; an agent
becomes a custom agent, selected for the session. Both keep the generic baseline system
message. The baseline arm has the same workspace, tools and system message and no skill
or agent. Copilot's built-in skills and custom instructions are left out of every session,
so the two arms differ by the skill alone.

**skill_used.** ``inject: system``: True in the with-arm (the text is the system message),
False in the baseline. ``inject: skill``: True when Copilot reports invoking the skill, or
a tool call touched the skill's folder (e.g. ``view`` of its SKILL.md); for an agent, when
Copilot reports selecting it. False otherwise, and in the baseline.

**Permissions.** Every permission request is answered by the guard in
:mod:`agentsproof.targets.copilot_guard` (the workspace only; read its limitations).

A timeout aborts and deletes the session, which stops the tools it started (shell
commands included), and errors the trial; so does an SDK or CLI failure, with the reason
scrubbed of keys and tokens.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from agentsproof.core.errors import ProviderUnavailable
from agentsproof.llm.base import LLMError
from agentsproof.llm.copilot import CopilotClient, copilot_status
from agentsproof.llm.copilot_events import AgentEventCollector
from agentsproof.model.graders import Strict
from agentsproof.model.items import BASELINE_SYSTEM_PROMPT
from agentsproof.model.results import LogEvent
from agentsproof.model.skillfolder import split_frontmatter
from agentsproof.targets.base import Target, TargetError, TrialInput, TrialRecord, agent_model
from agentsproof.targets.copilot_guard import PermissionGuard, inside
from agentsproof.targets.spec import MAX_TARGET_TIMEOUT

SKILL_TOOL = "skill"
MAX_STAGED_BYTES = 50 * 1024 * 1024
"""A skill folder is copied for ``inject: skill`` up to this many bytes (SKILL.md always)."""


class CopilotTargetSpec(Strict):
    """The GitHub Copilot CLI through its SDK, working in the trial's workspace."""

    type: Literal["copilot"]
    tools: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=lambda: ["bash", "view", "create"])
    inject: Literal["skill", "system"] = Field(
        "system", description="system: the skill is the system message; skill: loaded as a Copilot skill (skill_directories)."
    )
    model: str | None = Field(None, description="Used when neither --model nor AGENTSPROOF_MODEL is given; else Copilot's default.")
    timeout: float | None = Field(None, gt=0, le=MAX_TARGET_TIMEOUT, allow_inf_nan=False)


class CopilotTarget(Target):

    spec_model = CopilotTargetSpec
    """Its targets.yaml entry (``type: copilot``)."""
    kind = "copilot"
    uses_workspace = True

    def __init__(
        self, name: str, spec: CopilotTargetSpec, shown: CopilotTargetSpec | None = None, *, model: str | None = None,
        source: str = "built-in",
    ):
        ok, problem = copilot_status()
        if not ok:
            raise ProviderUnavailable(f"target {name!r} (copilot): {problem}")
        self.name = name
        self.spec = spec
        self.shown = shown or spec
        self.run_model = model
        self.model, self.model_source = agent_model(model, spec.model)
        self.runtime = CopilotClient.from_env()

    def describe(self) -> dict[str, Any]:
        return {
            "target": self.name,
            "target_type": self.kind,
            "tools": list(self.shown.tools),
            "inject": self.shown.inject,
            # as written when it is the target's own (a ${VAR} stays unexpanded)
            "model": self.shown.model if self.model_source == "the target's model setting" else self.model,
            "model_source": self.model_source,
        }

    async def aclose(self) -> None:
        await self.runtime.aclose()

    # -- one trial -------------------------------------------------------------

    async def run(self, trial: TrialInput) -> TrialRecord:
        if trial.workspace is None:
            raise TargetError("the copilot target needs the trial's workspace")
        t0 = time.perf_counter()
        workspace = Path(os.path.realpath(trial.workspace))
        timeout = self.spec.timeout or trial.timeout
        log: list[LogEvent] = []
        events = AgentEventCollector()
        staged = self._stage(trial)
        try:
            guard = PermissionGuard(workspace, [staged] if staged else [], log, t0)
            options = self._options(trial, workspace, staged, guard, events)
            await self._drive(options, trial.prompt, events, timeout, staged)
        finally:
            if staged is not None:
                shutil.rmtree(staged, ignore_errors=True)
        if events.error is not None:
            raise _target_error(self.runtime.session_error(events.error))
        answer = events.final_text()
        if answer is None:
            raise _target_error(self.runtime.no_answer(events))
        trajectory = events.trajectory()
        return TrialRecord(
            answer=answer,
            trajectory=trajectory,
            usage=events.usage,
            cost_usd=events.cost,
            latency_s=time.perf_counter() - t0,
            skill_used=self._skill_used(trial, staged, events, [s.arguments for s in trajectory]),
            log=log,
        )

    async def _drive(self, options: dict[str, Any], prompt: str, events: AgentEventCollector, timeout: float, staged: Path | None) -> None:
        """Create the session, send the prompt, wait for idle; then abort and delete it."""
        runtime = self.runtime
        client = session = None
        deadline = asyncio.timeout(timeout)
        try:
            async with deadline:
                client = await runtime.sdk()
                session = await client.create_session(**options)
                if staged is not None and events.skills_loaded is not None and not _loaded(events.skills_loaded, staged):
                    raise TargetError(f"Copilot did not load the skill from {staged} (check its SKILL.md front matter)")
                await session.send(prompt)
                await events.done.wait()
        except TimeoutError as exc:
            if not deadline.expired():  # the SDK's own timeout, not the trial's
                raise _target_error(runtime.sdk_error(exc)) from None
            raise TargetError(f"trial timed out after {timeout:g}s", kind="timeout") from None
        except LLMError as err:
            raise _target_error(err) from None
        except Exception as exc:  # noqa: BLE001 - SDK/CLI failures become errored trials
            raise _target_error(runtime.sdk_error(exc)) from None
        finally:
            if session is not None:
                await runtime.dispose(client, session, finished=events.done.is_set())
            elif client is not None:  # created but cancelled before it was handed back
                try:
                    await asyncio.shield(client.delete_session(options["session_id"]))
                except Exception:  # noqa: BLE001 - it may not exist at all
                    pass

    def _options(self, trial: TrialInput, workspace: Path, staged: Path | None, guard: PermissionGuard, events: AgentEventCollector) -> dict[str, Any]:
        tools = list(dict.fromkeys(self.spec.tools))
        system = trial.system
        options: dict[str, Any] = {}
        skill = trial.skill if trial.with_skill else None
        if skill is not None and self.spec.inject == "skill":
            system = BASELINE_SYSTEM_PROMPT
            if skill.kind == "agent":
                meta, body = split_frontmatter(skill.text)
                description = meta.get("description")
                options["custom_agents"] = [{
                    "name": skill.name,
                    "description": description if isinstance(description, str) else "",
                    "prompt": body.strip() or skill.text,
                    "tools": tools,
                    "infer": False,
                }]
                options["agent"] = skill.name
            elif staged is not None:
                options["skill_directories"] = [str(staged)]
                tools = list(dict.fromkeys([*tools, SKILL_TOOL]))
        options.update(
            session_id=f"agentsproof-{uuid.uuid4()}",
            model=self.model,
            system_message={"mode": "replace", "content": system},
            available_tools=tools,
            on_permission_request=guard.decide,
            working_directory=str(workspace),
            infinite_sessions={"enabled": False},
            skip_custom_instructions=True,
            included_builtin_skills=[],
            on_event=events.on_event,
        )
        if self.runtime.provider is not None:
            options["provider"] = dict(self.runtime.provider)
        return options

    def _stage(self, trial: TrialInput) -> Path | None:
        """For ``inject: skill``: the skill as ``<temp>/<name>/SKILL.md`` plus its folder's
        files, outside the workspace; None when nothing is staged."""
        skill = trial.skill if trial.with_skill else None
        if skill is None or self.spec.inject != "skill" or skill.kind == "agent":
            return None
        root = Path(os.path.realpath(tempfile.mkdtemp(prefix="agentsproof-copilot-skill-")))
        try:
            folder = root / skill.name
            folder.mkdir()
            total = 0
            for rel, path in skill.files:
                total += path.stat().st_size
                if total > MAX_STAGED_BYTES:
                    break
                dest = folder / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, dest)
            text = skill.text
            if not split_frontmatter(text)[0]:  # Copilot skips a SKILL.md without front matter
                text = f"---\nname: {skill.name}\n---\n{text}"
            (folder / "SKILL.md").write_text(text, encoding="utf-8")
        except OSError as exc:
            shutil.rmtree(root, ignore_errors=True)
            raise TargetError(f"could not stage the skill for Copilot: {exc}") from None
        return root

    def _skill_used(self, trial: TrialInput, staged: Path | None, events: AgentEventCollector, arguments: list[str]) -> bool:
        skill = trial.skill if trial.with_skill else None
        if skill is None:
            return False
        if self.spec.inject == "system":
            return True
        if skill.kind == "agent":
            return skill.name in events.agents_selected
        if staged is None:
            return False
        where = str(staged)
        return any(inside(path, [staged]) for _, path in events.skills_invoked if path) or any(where in a for a in arguments)


def _target_error(err: LLMError) -> TargetError:
    if isinstance(err, TargetError):
        return err
    return TargetError(str(err), retryable=err.retryable, status=err.status, retry_after=err.retry_after, kind=err.kind)


def _loaded(paths: list[str], staged: Path) -> bool:
    return any(inside(p, [staged]) for p in paths)
