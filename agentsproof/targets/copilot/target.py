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

**Hermetic.** Every session gets its own empty config directory (``config_directory``,
deleted after the trial) with config discovery off, so no user settings, skills, MCP
servers or instructions of ``~/.copilot`` reach it; with BYOK or a token in the
environment the CLI process itself runs on a private, empty ``COPILOT_HOME`` too (a login
stored by ``copilot /login`` lives in ``~/.copilot``, which is then kept for the login only).

**skill_used.** ``inject: system``: True in the with-arm (the text is the system message),
False in the baseline. ``inject: skill``: True when Copilot reports invoking the skill, or
a tool call touched the skill's folder (e.g. ``view`` of its SKILL.md); for an agent, when
Copilot reports selecting it. False otherwise, and in the baseline.

**Several skills** (``trial.skills``: activation suites, the plugin arm): every one is
staged as above, whatever ``inject`` says, with the generic system message; Copilot offers
them all through its ``skill`` tool and ``skills_invoked`` lists those it invoked, by
folder name, in order.

**Permissions.** Every permission request is answered by the guard in
:mod:`agentsproof.targets.copilot.guard` (the workspace only; read its limitations).

**Turns.** A multi-turn trial (``TrialInput.turns``) sends each follow-up in the same
session after the previous reply went idle; the answer is the last reply.

A timeout aborts and deletes the session, which stops the tools it started (shell
commands included), and errors the trial; so does an SDK or CLI failure, with the reason
scrubbed of keys and tokens.

**In a container** (the item has an ``environment:``): the trial's session runs on its own
CLI process inside the trial's container, the SDK talking to it over ``docker exec``
(:mod:`agentsproof.targets.copilot.container`); the session works in the container's
workdir and may use the whole container (it is the boundary).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from agentsproof.core.errors import ProviderUnavailable
from agentsproof.core.phases import phase
from agentsproof.core.safepath import UnsafePath
from agentsproof.core.threads import to_thread
from agentsproof.core.units import seconds
from agentsproof.llm.base import LLMError
from agentsproof.llm.copilot import TOKEN_ENVS, CopilotClient, copilot_status, login_source
from agentsproof.llm.copilot_events import AgentEventCollector
from agentsproof.model.graders import Strict
from agentsproof.model.items import BASELINE_SYSTEM_PROMPT, SkillFile
from agentsproof.model.results import LogEvent
from agentsproof.model.skillfolder import split_frontmatter
from agentsproof.targets.base import MAX_TARGET_TIMEOUT, Target, TargetError, TrialInput, TrialRecord, agent_model, next_user_message
from agentsproof.targets.copilot.guard import PermissionGuard, inside

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
    """GitHub Copilot through its SDK and CLI as a target: one session per trial in the trial's workspace."""

    spec_model = CopilotTargetSpec
    """Its targets.yaml entry (``type: copilot``)."""
    kind = "copilot"
    uses_workspace = True
    runs_in_environment = True
    offers_skills = True
    agentv_ids = ("copilot", "copilot-cli", "copilot-sdk")

    def __init__(
        self,
        name: str,
        spec: CopilotTargetSpec,
        shown: CopilotTargetSpec | None = None,
        *,
        model: str | None = None,
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
        self._home: Path | None = None
        if self.runtime.provider is not None or login_source() in TOKEN_ENVS:
            # the login does not live in ~/.copilot: the CLI gets a private, empty one
            self._home = Path(os.path.realpath(tempfile.mkdtemp(prefix="agentsproof-copilot-home-")))
            self.runtime.home = str(self._home)

    def loopback_ports(self) -> list[int]:
        """In a trial's container: the BYOK endpoint's port on 127.0.0.1, relayed in."""
        from agentsproof.targets.agents.kit import loopback_port

        port = loopback_port((self.runtime.provider or {}).get("base_url"))
        return [port] if port else []

    def container_mounts(self) -> list[Path]:
        """In a trial's container: the CLI's installed package (its native binary), mounted read-only at its host path."""
        from agentsproof.targets.agents.container import cli_mounts
        from agentsproof.targets.copilot.container import native_cli

        native = native_cli(self.runtime.cli_path)
        return cli_mounts(native) if native else []

    def describe(self) -> dict[str, Any]:
        """Its tools, inject, model (with its source), and the rest of its settings as written."""
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
        """Close the Copilot runtime, then delete the private home folder."""
        try:
            await self.runtime.aclose()
        finally:
            if self._home is not None:
                shutil.rmtree(self._home, ignore_errors=True)

    # -- one trial -------------------------------------------------------------

    async def run(self, trial: TrialInput) -> TrialRecord:
        """One trial in a new session in the trial's workspace (the skill staged for the with-arm);
        TargetError for an errored one."""
        if trial.workspace is None:
            raise TargetError("the copilot target needs the trial's workspace")
        t0 = time.perf_counter()
        workspace = Path(os.path.realpath(trial.workspace))
        timeout = self.spec.timeout or trial.timeout
        log: list[LogEvent] = []
        events = AgentEventCollector()
        box = trial.environment
        with phase("setup"):  # file work in a thread: never on the loop
            staged, config = await to_thread(self._folders, trial)
        runtime, scratch = self.runtime, None
        try:
            guard: PermissionGuard
            if box is not None:  # the CLI in the trial's container (the container is the boundary)
                from agentsproof.targets.copilot.container import container_runtime
                from agentsproof.targets.copilot.guard import ContainedGuard

                scratch = Path(await to_thread(tempfile.mkdtemp, prefix="agentsproof-copilot-exec-"))
                with phase("setup"):
                    runtime = await container_runtime(self, box, [p for p in (config, staged) if p is not None], scratch)
                workspace = Path(box.workdir)
                guard = ContainedGuard(workspace, [staged] if staged else [], log, t0)
            else:
                guard = PermissionGuard(workspace, [staged] if staged else [], log, t0)
            options = self._options(trial, workspace, staged, guard, events)
            options.update(config_directory=str(config), enable_config_discovery=False)  # hermetic: nothing of the user's config
            with phase("agent"):
                replies, follow_ups = await self._drive(options, trial, events, timeout, staged, runtime)
        except TargetError as err:
            if box is not None and err.kind == "timeout":  # nothing the session started lives on in its container
                await box.stop(f"the agent ran past its {seconds(timeout)} timeout")
            raise
        finally:
            with phase("cleanup"):
                if runtime is not self.runtime:
                    await runtime.aclose()  # this trial's own CLI process, in its container
                await to_thread(_remove, config, staged, scratch)
        if events.error is not None:
            raise _target_error(runtime.session_error(events.error))
        answer = events.final_text()
        if answer is None:
            raise _target_error(runtime.no_answer(events))
        trajectory = events.trajectory()
        for reply, follow_up in zip(replies, follow_ups, strict=True):
            log += [LogEvent(t=time.perf_counter() - t0, role="assistant", text=reply), LogEvent(t=time.perf_counter() - t0, role="user", text=follow_up)]
        return TrialRecord(
            answer=answer,
            trajectory=trajectory,
            usage=events.usage,
            cost_usd=events.cost,
            latency_s=time.perf_counter() - t0,
            skill_used=self._skill_used(trial, staged, events, [s.arguments for s in trajectory]),
            skills_invoked=_invoked(events, staged),
            log=log,
            replies=[*replies, answer],
        )

    async def _drive(
        self, options: dict[str, Any], trial: TrialInput, events: AgentEventCollector, timeout: float, staged: Path | None, runtime: CopilotClient
    ) -> tuple[list[str], list[str]]:
        """Create the session on ``runtime``'s CLI, send the prompt and wait for idle, then each
        follow-up of a multi-turn trial (``turns``, then the simulated user) the same way; then
        abort and delete it. (the replies before the last message, the follow-ups sent)."""
        client = session = None
        replies: list[str] = []
        follow_ups: list[str] = []
        deadline = asyncio.timeout(timeout)
        try:
            async with deadline:
                with phase("cli_start"):  # the shared CLI process, started on the first trial (inside "agent")
                    client = await runtime.sdk()
                session = await client.create_session(**options)
                if staged is not None and events.skills_loaded is not None and not _loaded(events.skills_loaded, staged):
                    raise TargetError(f"Copilot did not load the skill from {staged} (check its SKILL.md front matter)")
                conversation = [{"role": "user", "content": trial.prompt}]
                await session.send(trial.prompt)
                await events.done.wait()
                while events.error is None:
                    conversation.append({"role": "assistant", "content": events.final_text() or ""})
                    follow_up = await next_user_message(trial, conversation)
                    if follow_up is None:
                        break
                    replies.append(conversation[-1]["content"])
                    follow_ups.append(follow_up)
                    conversation.append({"role": "user", "content": follow_up})
                    events.done.clear()
                    await session.send(follow_up)
                    await events.done.wait()
        except TimeoutError as exc:
            if not deadline.expired():  # the SDK's own timeout, not the trial's
                raise _target_error(runtime.sdk_error(exc)) from None
            raise TargetError(f"trial timed out after {seconds(timeout)}", kind="timeout") from None
        except LLMError as err:
            raise _target_error(err) from None
        except Exception as exc:  # noqa: BLE001 - SDK/CLI failures become errored trials
            raise _target_error(runtime.sdk_error(exc)) from None
        finally:
            if session is not None:
                await runtime.dispose(client, session, finished=events.done.is_set())
            elif client is not None:  # created but cancelled before it was handed back
                with contextlib.suppress(Exception):  # it may not exist at all
                    await asyncio.shield(client.delete_session(options["session_id"]))
        return replies, follow_ups

    def _options(self, trial: TrialInput, workspace: Path, staged: Path | None, guard: PermissionGuard, events: AgentEventCollector) -> dict[str, Any]:
        tools = list(dict.fromkeys(self.spec.tools))
        system = trial.system
        options: dict[str, Any] = {}
        skill = trial.skill if trial.with_skill else None
        if trial.skills:  # several skills offered the way Copilot offers them (activation, the plugin arm)
            system = BASELINE_SYSTEM_PROMPT
            if staged is not None:
                options["skill_directories"] = [str(staged)]
                tools = list(dict.fromkeys([*tools, SKILL_TOOL]))
        elif skill is not None and self.spec.inject == "skill":
            system = BASELINE_SYSTEM_PROMPT
            if skill.kind == "agent":
                meta, body = split_frontmatter(skill.text)
                description = meta.get("description")
                options["custom_agents"] = [
                    {
                        "name": skill.name,
                        "description": description if isinstance(description, str) else "",
                        "prompt": body.strip() or skill.text,
                        "tools": tools,
                        "infer": False,
                    }
                ]
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

    def _folders(self, trial: TrialInput) -> tuple[Path | None, Path]:
        """(the staged skills or None, a fresh private config folder): run in a thread."""
        staged = self._stage(trial)
        try:
            return staged, Path(os.path.realpath(tempfile.mkdtemp(prefix="agentsproof-copilot-config-")))
        except OSError as exc:
            _remove(None, staged)
            raise TargetError(f"cannot create Copilot's config folder: {exc.strerror or exc}") from None

    def _stage(self, trial: TrialInput) -> Path | None:
        """The skills to offer as ``<temp>/<name>/SKILL.md`` plus their folders' files,
        outside the workspace: every skill of ``trial.skills`` (activation suites, the plugin
        arm: whatever ``inject`` says), else the with-arm's skill for ``inject: skill``;
        None when nothing is staged."""
        skills = [s for s in trial.skills if s.kind == "skill"]
        if not trial.skills:
            skill = trial.skill if trial.with_skill else None
            if skill is None or self.spec.inject != "skill" or skill.kind == "agent":
                return None
            skills = [skill]
        if not skills:
            return None
        root = Path(os.path.realpath(tempfile.mkdtemp(prefix="agentsproof-copilot-skill-")))
        try:
            for skill in skills:
                _stage_one(root, skill)
        except OSError as exc:
            shutil.rmtree(root, ignore_errors=True)
            raise TargetError(f"could not stage the skill for Copilot: {exc.strerror if isinstance(exc, UnsafePath) else exc}") from None
        return root

    def _skill_used(self, trial: TrialInput, staged: Path | None, events: AgentEventCollector, arguments: list[str]) -> bool:
        skill = trial.skill if trial.with_skill else None
        if skill is None:
            return False
        if trial.skills:
            return skill.name in (_invoked(events, staged) or [])
        if self.spec.inject == "system":
            return True
        if skill.kind == "agent":
            return skill.name in events.agents_selected
        if staged is None:
            return False
        where = str(staged)
        return any(inside(path, [staged]) for _, path in events.skills_invoked if path) or any(where in a for a in arguments)


def _stage_one(root: Path, skill: SkillFile) -> None:
    """``root/<name>/SKILL.md`` and the skill's files, through :mod:`agentsproof.core.safepath`
    (a name that is not one plain path component is refused; no link is written through)."""
    from agentsproof.core import safepath

    why = safepath.name_problem(skill.name)
    if why is not None:
        raise safepath.UnsafePath(f"its name {why}")
    folder = root / skill.name
    folder.mkdir()  # root is a fresh private folder; a name given twice is refused here
    total = 0
    for rel, path in skill.files:
        total += path.stat().st_size
        if total > MAX_STAGED_BYTES:
            break
        safepath.write_file(folder, rel, safepath.read_file(path, MAX_STAGED_BYTES), exist="fail")
    text = skill.text
    if not split_frontmatter(text)[0]:  # Copilot skips a SKILL.md without front matter
        text = f"---\nname: {skill.name}\n---\n{text}"
    safepath.write_file(folder, "SKILL.md", text.encode("utf-8"))


def _remove(*folders: Path | None) -> None:
    for folder in folders:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def _invoked(events: AgentEventCollector, staged: Path | None) -> list[str] | None:
    """The staged skills Copilot invoked, in order (None: nothing was staged)."""
    if staged is None:
        return None
    names = []
    for name, path in events.skills_invoked:
        if path and inside(path, [staged]):
            rel = Path(os.path.realpath(path)).relative_to(staged).parts
            names.append(rel[0] if rel else name)
        elif name:
            names.append(name)
    return names


def _target_error(err: LLMError) -> TargetError:
    if isinstance(err, TargetError):
        return err
    return TargetError(str(err), retryable=err.retryable, status=err.status, retry_after=err.retry_after, kind=err.kind)


def _loaded(paths: list[str], staged: Path) -> bool:
    return any(inside(p, [staged]) for p in paths)
