"""The acp target: any agent that speaks the Agent Client Protocol, over its stdio.

ACP is JSON-RPC 2.0, one message a line, between a client (here agentsproof) and an
agent process: ``initialize``, ``session/new`` with a working folder, ``session/prompt``
per user message with the agent's ``session/update`` notifications streamed meanwhile
(message and thought chunks, plans, tool calls and their progress), the agent's requests
to the client (``session/request_permission``, ``fs/read_text_file``,
``fs/write_text_file``, ``terminal/*``) and ``session/cancel``. It is spoken through the
published SDK (``agent-client-protocol``, the ``acp`` extra), over a transport of our own
that reads the agent's stdout so a line that is not a JSON-RPC message is an errored
trial, not one the SDK logs and skips.

**A trial** starts the agent (``command`` and ``args``; the built-ins in
:mod:`agentsproof.targets.acp.agents` know their own) in a hermetic harness
(:class:`agentsproof.targets.agents.kit.Harness`: a fresh ``HOME``, config and ``TMPDIR``;
only :data:`~agentsproof.targets.agents.kit.PASSED_ENV`, the target's own variables and
``env`` reach it), in its own process group, under bubblewrap (``sandbox``; default:
when bubblewrap works here) with the loopback ports of its API. The workspace is the
session's ``cwd``; the instruction is the first prompt and each later turn
(:func:`agentsproof.targets.base.next_user_message`) the next, in the same session, all
within the trial's timeout. At the timeout the prompt is cancelled (``session/cancel``),
then the process group ended; the trial is errored (``timed out``). An agent that exits,
answers a request with an error, or writes a line that is not JSON-RPC makes the trial
errored with that reason.

**Recorded** (:mod:`agentsproof.targets.acp.client`): the reply to each prompt, every
tool call (name, input, output, status, latency), every permission decision and refused
request, thoughts and plans in the trial log, tokens (``PromptResponse.usage``) and cost
(``usage_update``) where the agent reports them; ``skill_used``/``skills_invoked`` from
tool calls that load or read a staged skill.

**Skills.** With ``skills_dir`` (a folder below the fresh ``HOME`` where the agent looks
for skills) the with-arm's skill, and every skill of ``TrialInput.skills``, is staged
there as ``<name>/SKILL.md`` with its folder (``inject: skill``); without it, the arm's
system prompt (the skill, or the generic baseline) goes before the first prompt
(``inject: prompt``).
"""

from __future__ import annotations

import os
import time
from collections import deque
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, model_validator

from agentsproof.core.errors import ProviderUnavailable
from agentsproof.core.phases import phase
from agentsproof.core.scrub import scrub_text
from agentsproof.core.threads import to_thread
from agentsproof.model.graders import FieldError, Strict
from agentsproof.model.results import LogEvent
from agentsproof.targets.acp.client import TOOL_KINDS, AcpRecorder, PermissionPolicy
from agentsproof.targets.agents.base import AgentBase, skill_use
from agentsproof.targets.agents.kit import Harness, installed_skills, offered_note
from agentsproof.targets.base import MAX_TARGET_TIMEOUT, TARGETS_FILE, EnvMapping, NativeLauncher, TargetError, TrialInput, TrialRecord, next_user_message

ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"]
assert len(TOOL_KINDS) == len(ToolKind.__args__)  # type: ignore[attr-defined]


class PermissionsSpec(Strict):
    """How the agent's permission requests are answered, by ACP tool kind."""

    allow: list[ToolKind] = Field(default_factory=list, description="Tool kinds always allowed.")
    deny: list[ToolKind] = Field(default_factory=list, description="Tool kinds always refused (wins over allow).")
    default: Literal["allow", "deny"] = Field("allow", description="The answer for any other kind.")

    def policy(self) -> PermissionPolicy:
        """The policy the recorder applies."""
        return PermissionPolicy(allow=tuple(self.allow), deny=tuple(self.deny), default=self.default)


class AcpCommon(Strict):
    """What every ACP agent's targets.yaml entry has."""

    model: str | None = Field(None, description="Default: the run's --model.")
    env: EnvMapping = Field(default_factory=dict, description="Extra environment variables ('${VAR}' allowed).")
    timeout: float | None = Field(None, gt=0, le=MAX_TARGET_TIMEOUT, allow_inf_nan=False)
    permissions: PermissionsSpec = Field(default_factory=PermissionsSpec)
    sandbox: bool | None = Field(None, strict=True, description="Run under bubblewrap; default: when bubblewrap works here.")
    loopback_ports: list[Annotated[int, Field(ge=1, le=65535, strict=True)]] = Field(default_factory=list, max_length=32)

    @model_validator(mode="after")
    def _ports_need_sandbox(self) -> AcpCommon:
        if self.loopback_ports and self.sandbox is False:
            raise FieldError("loopback_ports", "only applies with the sandbox")
        return self


class AcpTargetSpec(AcpCommon):
    """Any agent speaking ACP on its stdio."""

    type: Literal["acp"]
    command: str = Field(min_length=1, description="The agent's program (a path, or a name on PATH).")
    args: list[str] = Field(default_factory=list, description="Its arguments (e.g. ['acp'], ['--acp']).")
    model_arg: str | None = Field(None, description="The option that sets the model (e.g. --model), given the model when there is one.")
    model_env: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="The variable that sets the model.")
    skills_dir: str | None = Field(None, description="Where the agent loads skills from, relative to its (fresh) HOME, e.g. .config/goose/skills.")
    inject: Literal["skill", "prompt"] | None = Field(
        None, description="skill: staged in skills_dir; prompt: the skill before the first prompt. Default: skill with skills_dir."
    )
    api_url: str | None = Field(None, description="The model API's URL, when on loopback its port is let through the sandbox.")

    @model_validator(mode="after")
    def _inject_needs_dir(self) -> AcpTargetSpec:
        if self.inject == "skill" and not self.skills_dir:
            raise FieldError("inject", "'skill' needs skills_dir (where the agent loads skills from)")
        if self.skills_dir is not None:
            from agentsproof.core import safepath

            try:
                safepath.parts(self.skills_dir)
            except safepath.UnsafePath as exc:
                raise FieldError("skills_dir", f"must be a relative path below HOME: {exc}") from None
        return self


class AcpBase(AgentBase):
    """An ACP agent as a target: one session per trial in the trial's workspace. The
    defaults of its hooks are the plain ``acp`` entry's; a built-in overrides them."""

    what: ClassVar[str] = "the ACP agent"
    native_launchers = (NativeLauncher("codex-acp.js", ((2, "codex-acp-linux-*/bin/codex-acp"),)),)
    """codex-acp's Node wrapper (a plain ``acp`` entry may run it too): its platform package's binary runs in a container."""

    def __init__(self, name: str, spec: Any, shown: Any = None, *, model: str | None = None, source: str = TARGETS_FILE):
        import importlib.util

        if importlib.util.find_spec("acp") is None:
            from agentsproof.core.extras import install_line

            raise ProviderUnavailable(f"target {name!r} ({self.kind}) needs the 'acp' extra (agent-client-protocol): {install_line('acp')}")
        super().__init__(name, spec, shown, model=model, source=source)

    # -- what a built-in says (acp_agents.py) ----------------------------------

    def _find(self) -> str:
        import shutil

        cmd = self.spec.command
        found = cmd if os.sep in cmd and os.access(cmd, os.X_OK) else shutil.which(cmd)
        if not found:
            raise ProviderUnavailable(f"target {self.name!r} ({self.kind}): the agent's command {cmd!r} was not found")
        return str(found)

    def _argv(self) -> list[str]:
        argv = [self.program, *self.spec.args]
        if self.model and self.spec.model_arg:
            argv += [self.spec.model_arg, self.model]
        return argv

    def _api_url(self) -> str | None:
        return getattr(self.spec, "api_url", None)

    def _own_env(self, harness: Harness) -> dict[str, str]:
        if self.model and getattr(self.spec, "model_env", None):
            return {self.spec.model_env: self.model}
        return {}

    def _skills_place(self) -> tuple[str, str] | None:
        """(``home`` or ``config``, the folder below it) where the agent loads skills from; None: nowhere known."""
        rel = getattr(self.spec, "skills_dir", None)
        return ("home", str(rel)) if rel else None

    def _skills_shown(self) -> str:
        place = self._skills_place()
        return f"$HOME/{place[1]}" if place else ""

    def _agent_settings(self) -> dict[str, Any]:
        """What :meth:`describe` says of the agent itself (before its model, sandbox, env and permissions)."""
        s = self.shown
        return {"command": s.command, "args": list(s.args), "skills_dir": s.skills_dir, "inject": "prompt" if self._inject_prompt() else "skill"}

    # -- what every ACP agent does ---------------------------------------------

    def _sandbox_default(self) -> bool:
        return True

    def container_mounts(self) -> list[Path]:
        """In a trial's container: the agent's npm install (the folder holding its
        ``node_modules``), mounted read-only at its host path; none for a program that is not
        one (the image's own program of that name is run)."""
        return super().container_mounts() if "node_modules" in Path(os.path.realpath(self.program)).parts else []

    def _launch(self, trial: TrialInput) -> list[str]:
        """The command line; in a container, the mounted install's native binary, or without a
        mounted install the entry's ``command`` as written (the image's own, never resolved on the host)."""
        argv = self._argv()
        if trial.environment is not None:
            if self.container_mounts():
                from agentsproof.targets.agents.container import native_program

                argv[0] = native_program(argv[0], self.native_launchers)
            else:
                argv[0] = getattr(self.spec, "command", argv[0])
        return argv

    def _settings(self) -> dict[str, Any]:
        s = self.shown
        return {
            **self._agent_settings(),
            **self._model_shown(),
            "sandbox": self.bwrap is not None,
            "env": sorted(s.env),
            "permissions": s.permissions.model_dump(),
        }

    def _inject_prompt(self) -> bool:
        """Whether the with-arm's one skill goes before the first prompt (not installed)."""
        return getattr(self.spec, "inject", None) == "prompt" or self._skills_place() is None

    def _skill_in_prompt(self, trial: TrialInput) -> bool:
        """The arm's system prompt goes before the first prompt: ``inject: prompt``, or an
        agent item's with-arm (an agent is not a skill to install); never with several skills."""
        if trial.skills:
            return False
        agent = trial.with_skill and trial.skill is not None and trial.skill.kind == "agent"
        return self._inject_prompt() or agent

    def _first_prompt(self, trial: TrialInput) -> str:
        if self._skill_in_prompt(trial) and trial.system:
            return f"{trial.system}\n\n{trial.prompt}"
        return trial.prompt

    def _skills_folder(self, trial: TrialInput, harness: Harness) -> Path | None:
        place = self._skills_place()
        if trial.skills and place is None:
            raise TargetError(f"{self.what} cannot be offered several skills (activation suites, the plugin arm) without skills_dir")
        if place is None or not installed_skills(trial) or self._skill_in_prompt(trial):
            return None
        return (harness.home if place[0] == "home" else harness.config) / place[1]

    async def _run(self, trial: TrialInput) -> TrialRecord:
        from agentsproof.targets.acp.session import AgentProcess, converse

        workspace = self._workspace(trial)
        timeout = self.spec.timeout or trial.timeout
        with phase("setup"):  # every file step runs in a thread: never on the loop
            harness = await self._new_harness()
        t0 = time.monotonic()
        try:
            with phase("setup"):
                staged = await to_thread(self._install, trial, harness)
            proc = AgentProcess(self._launch(trial), workspace, harness, self._env(harness), self.bwrap, self._ports(), self.what, box=trial.environment)
            recorder = AcpRecorder(workspace=workspace, policy=self.spec.permissions.policy(), staged=staged, t0=t0)
            try:
                await proc.start(recorder)
                await converse(proc, recorder, trial, self._first_prompt(trial), timeout, next_user_message)
            finally:
                await proc.stop()
                self._stderr(recorder, proc.stderr)
        finally:
            with phase("cleanup"):
                self._remove_later(harness)
        return await to_thread(self._record, trial, recorder, staged, time.monotonic() - t0)

    def _stderr(self, recorder: AcpRecorder, lines: deque[tuple[float, str]]) -> None:
        for t, line in lines:
            recorder.log.append(LogEvent(t=t, role="info", text=scrub_text("stderr: " + line, self._secrets)))

    def _record(self, trial: TrialInput, rec: AcpRecorder, staged: dict[str, Path], latency: float) -> TrialRecord:
        how = f"as skills of {self.what} ({self._skills_shown()}/<name>/SKILL.md)"
        offered = offered_note(trial, "skill", how)
        log = sorted(rec.log, key=lambda e: e.t)
        if offered:
            log.insert(0, LogEvent(t=0.0, role="info", text=offered))
        if rec.dropped:
            log.append(LogEvent(t=latency, role="info", text=f"kept the first tool calls, dropped {rec.dropped}"))
        used, names = skill_use(trial, self._skill_in_prompt(trial), rec.invoked)
        if rec.usage.total_tokens == 0 and rec.cost is None:
            log.append(LogEvent(t=latency, role="info", text=f"tokens and cost: not reported by {self.what}"))
        answer = rec.replies[-1] if rec.replies else ""
        return TrialRecord(
            answer=answer,
            trajectory=rec.trajectory(),
            usage=rec.usage,
            cost_usd=rec.cost,
            latency_s=latency,
            skill_used=used,
            skills_invoked=names,
            log=log,
            replies=list(rec.replies),
            skills_offered=offered or None,
        )


class AcpTarget(AcpBase):
    """Any ACP agent from its targets.yaml entry (``command``, ``args``, ``env``, ...)."""

    spec_model = AcpTargetSpec
    """Its targets.yaml entry (``type: acp``)."""
    kind = "acp"
