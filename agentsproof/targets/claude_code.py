"""The claude-code target: the real Claude Code CLI (``claude -p``) in the trial's workspace.

Each trial is one ``claude -p --output-format stream-json`` run with the prompt on stdin,
in the workspace, in a hermetic home (:mod:`agentsproof.targets.agent_cli`):
``CLAUDE_CONFIG_DIR`` is a fresh folder of that trial, so no user settings, login, skills,
plugins, agents, CLAUDE.md or memory reach it; Claude Code's bundled skills and built-in
plugins are switched off too, so the skill under test is the only one listed. The CLI is
``CLAUDE_CLI_PATH`` or ``claude`` on PATH.

**Model and credentials.** The model is the target's ``model`` or the run's ``--model``
(none: Claude Code's default). ``ANTHROPIC_API_KEY`` / ``ANTHROPIC_AUTH_TOKEN`` /
``CLAUDE_CODE_OAUTH_TOKEN``, ``ANTHROPIC_BASE_URL`` (BYOK: any server speaking the
Messages API) and the other ``ANTHROPIC_*`` settings are passed from the environment.

**The with-arm.** ``inject: system`` (the default, comparable with chat trials): the arm's
system prompt replaces Claude Code's (``--system-prompt``; the baseline gets the generic
one). ``inject: skill``: the skill is installed the way a user installs it, as
``$CLAUDE_CONFIG_DIR/skills/<name>/`` with its folder, listed to the model and loaded with
the ``Skill`` tool (added to the tools); an agent item becomes a custom agent (``--agents``)
selected for the session (``--agent``). Both keep the generic system prompt. Every skill of
``TrialInput.skills`` (activation suites, the plugin arm) is installed the same way whatever
``inject`` says (a system prompt holds one skill, not a choice among several), with the
Skill tool and the arm's own system prompt (the generic one, or an agent's in its plugin
arm); the trial log says how they were offered.

**Tools and permissions.** ``tools`` are the only built-in tools offered (``--tools``) and
are pre-approved (``--allowedTools``); ``permission_mode`` (default ``acceptEdits``) decides
the rest. ``sandbox: true`` runs the CLI under bubblewrap (the workspace writable, no
network but the loopback port of ``ANTHROPIC_BASE_URL`` and ``loopback_ports``).

**Turns.** A multi-turn trial (``TrialInput.turns``) sends each follow-up with
``--resume`` of the same session, in the same config folder and workspace, within the
trial's one timeout; the answer is the last reply, the trajectory, tokens and cost are
summed over the turns and the conversation goes to the trial log.

**Recorded.** The answer (the ``result``), every tool call with its result, outcome and
latency, tokens (cache reads and writes included) and the cost Claude Code reports;
``skill_used``/``skills_invoked`` from the ``Skill`` tool calls and from tool calls that
name a file of a staged skill (``inject: system``, one skill: True in the with-arm).
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from agentsproof.core.errors import ProviderUnavailable
from agentsproof.core.procgroup import Outcome
from agentsproof.llm.base import url_secrets
from agentsproof.model.graders import FieldError, Strict
from agentsproof.model.items import BASELINE_SYSTEM_PROMPT
from agentsproof.model.results import LogEvent, Usage
from agentsproof.model.skillfolder import split_frontmatter
from agentsproof.targets.agent_cli import (
    AgentCliTarget,
    Harness,
    RunSettings,
    Turn,
    converse,
    failure,
    find_program,
    installed_skills,
    loopback_port,
    offered_note,
    read_json_lines,
    run_cli,
    stage_skills,
    turns_log,
    watched_skill,
)
from agentsproof.targets.base import TargetError, TrialInput, TrialRecord, agent_model
from agentsproof.targets.claude_stream import SKILL_TOOL, ClaudeStream
from agentsproof.targets.spec import MAX_TARGET_TIMEOUT, TARGETS_FILE, env_mapping

ENV_CLI_PATH = "CLAUDE_CLI_PATH"
HINT_CLI = "install Claude Code: npm install -g @anthropic-ai/claude-code (or set CLAUDE_CLI_PATH to the claude binary)"
CREDENTIAL_ENVS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
PASSED_PREFIXES = ("ANTHROPIC_", "CLAUDE_CODE_USE_")
QUIET_ENV = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_DISABLE_BUNDLED_SKILLS": "1",
}
BUILTIN_PLUGINS = ("cc-plugin-agents-md@builtin", "cc-plugin-privacy@builtin", "cc-plugin-plugin-authoring@builtin")
"""Claude Code's built-in plugins, switched off in every trial's settings."""
PERMISSION_MODES = ("acceptEdits", "auto", "bypassPermissions", "manual", "dontAsk", "plan")


def find_cli() -> tuple[str | None, str]:
    """(path of the claude binary, '') or (None, what is wrong)."""
    return find_program(ENV_CLI_PATH, "claude", "the Claude Code CLI", HINT_CLI)


class ClaudeCodeTargetSpec(Strict):
    """The Claude Code CLI in print mode, working in the trial's workspace."""

    type: Literal["claude-code"]
    tools: list[Annotated[str, Field(min_length=1)]] = Field(
        default_factory=lambda: ["Bash", "Read", "Write", "Edit", "Glob", "Grep"],
        description="Built-in tools offered and pre-approved (--tools, --allowedTools).",
    )
    permission_mode: Literal["acceptEdits", "auto", "bypassPermissions", "manual", "dontAsk", "plan"] = Field(
        "acceptEdits", description="--permission-mode (bypassPermissions is refused when running as root)."
    )
    inject: Literal["skill", "system"] = Field(
        "system", description="system: the skill is the system prompt; skill: installed in the config dir's skills/ and loaded with the Skill tool."
    )
    model: str | None = Field(None, description="Default: the run's --model.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables ('${VAR}' allowed).")
    timeout: float | None = Field(None, gt=0, le=MAX_TARGET_TIMEOUT, allow_inf_nan=False)
    sandbox: bool = Field(False, strict=True, description="Run under bubblewrap: workspace read-write, no network but the API's loopback port.")
    loopback_ports: list[Annotated[int, Field(ge=1, le=65535, strict=True)]] = Field(default_factory=list, max_length=32)

    @field_validator("env")
    @classmethod
    def _env(cls, value: dict[str, str]) -> dict[str, str]:
        return env_mapping(value)

    @model_validator(mode="after")
    def _ports_need_sandbox(self) -> ClaudeCodeTargetSpec:
        if self.loopback_ports and not self.sandbox:
            raise FieldError("loopback_ports", "only applies with 'sandbox: true'")
        return self


class ClaudeCodeTarget(AgentCliTarget):

    spec_model = ClaudeCodeTargetSpec
    """Its targets.yaml entry (``type: claude-code``)."""
    kind = "claude-code"
    uses_workspace = True
    offers_skills = True

    def __init__(self, name: str, spec: ClaudeCodeTargetSpec, shown: ClaudeCodeTargetSpec | None = None, *,
                 model: str | None = None, source: str = TARGETS_FILE):
        cli, problem = find_cli()
        if cli is None:
            raise ProviderUnavailable(f"target {name!r} (claude-code): {problem}")
        self.cli = cli
        self.name = name
        self.spec = spec
        self.shown = shown or spec
        self.run_model = model
        self.model, self.model_source = agent_model(model, spec.model)
        self.timeout = spec.timeout
        self.bwrap = None
        if spec.sandbox:
            from agentsproof.targets.sandbox import find_bwrap

            self.bwrap = find_bwrap(source, name)
        self._secrets = [v for v in [*(os.environ.get(n) for n in CREDENTIAL_ENVS), *spec.env.values()] if v]
        self._secrets += url_secrets(os.environ.get("ANTHROPIC_BASE_URL"))

    def describe(self) -> dict[str, Any]:
        s = self.shown
        out: dict[str, Any] = {
            "target": self.name, "target_type": self.kind, "tools": list(s.tools), "permission_mode": s.permission_mode,
            "inject": s.inject, "model": self.shown.model if self.model_source == "the target's model setting" else self.model, "model_source": self.model_source, "sandbox": s.sandbox, "env": sorted(s.env),
        }
        if s.loopback_ports:
            out["loopback_ports"] = list(s.loopback_ports)
        return out

    async def _run(self, trial: TrialInput) -> TrialRecord:
        """The prompt, then each of ``trial.turns`` with ``--resume`` of the same session,
        within one timeout; the answer is the reply to the last one."""
        if trial.workspace is None:
            raise TargetError("the claude-code target needs the trial's workspace")
        workspace = Path(os.path.realpath(trial.workspace))
        timeout = self.spec.timeout or trial.timeout
        harness = Harness.create("agentsproof-claude-")
        try:
            staged = self._install(trial, harness)
            session = str(uuid.uuid4())

            async def one_turn(n: int, prompt: str, left: float) -> Turn:
                out = await run_cli(RunSettings(
                    argv=self._argv(trial, staged, session, resume=n > 0), workspace=workspace, harness=harness,
                    env=self._env(harness), timeout=left, stdin_text=prompt, sandbox=self.bwrap,
                    loopback_ports=self._ports(),
                ))
                events, notes = read_json_lines(harness.stream)
                stream = ClaudeStream(staged=staged).take_all(events)
                self._check(stream, out, timeout)
                return stream, out, notes

            turns, follow_ups = await converse(trial, timeout, "Claude Code", one_turn)
        finally:
            harness.remove()
        return self._record(trial, turns, follow_ups)

    def _check(self, stream: ClaudeStream, out: Outcome, timeout: float) -> None:
        problem = failure(out, timeout, "Claude Code")
        if problem is not None and (out.timed_out or stream.result is None):
            raise problem
        error = stream.error()
        if error is not None:  # Claude Code has retried what it retries: not again here
            reason, status = error
            kind = "auth" if status in (401, 403) else "http" if status else "error"
            raise TargetError(reason, status=status, kind=kind)
        if stream.answer() is None:
            raise TargetError("Claude Code finished without an answer", retryable=True, kind="malformed")

    def _record(self, trial: TrialInput, turns: list[Turn], follow_ups: list[str]) -> TrialRecord:
        log, trajectory, invoked, latency = turns_log(
            turns, follow_ups, self._secrets,
            lambda stream: [f"kept the first tool calls, dropped {stream.dropped}"] if stream.dropped else [],
        )
        offered = offered_note(trial, self.spec.inject, "as Claude Code skills ($CLAUDE_CONFIG_DIR/skills/<name>/SKILL.md, the Skill tool)")
        if offered:
            log.insert(0, LogEvent(t=0.0, role="info", text=offered))
        usage = Usage()
        for stream, _, _ in turns:
            usage = usage + stream.usage()
        costs = [stream.cost() for stream, _, _ in turns]
        last = turns[-1][0]
        last.invoked = invoked
        used, names = self._skill_use(trial, last)
        cost = None if any(c is None for c in costs) else sum(c for c in costs if c is not None)
        return TrialRecord(
            answer=(last.answer() or "").strip(), trajectory=trajectory, usage=usage, cost_usd=cost,
            latency_s=latency, skill_used=used, skills_invoked=names, log=log,
            replies=[(stream.answer() or "").strip() for stream, _, _ in turns], skills_offered=offered or None,
        )

    # -- set-up ----------------------------------------------------------------

    def _install(self, trial: TrialInput, harness: Harness) -> dict[str, Path]:
        """The hermetic config dir: settings, and the skills of ``inject: skill``."""
        settings = {
            "enabledPlugins": {p: False for p in BUILTIN_PLUGINS},
            "autoMemoryEnabled": False,
            "includeCoAuthoredBy": False,
        }
        try:
            (harness.config / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
        except OSError as exc:
            raise TargetError(f"cannot prepare Claude Code's config folder: {exc.strerror or exc}") from None
        if self.spec.inject != "skill" and not trial.skills:
            return {}
        # several skills (activation suites, the plugin arm) are staged whatever ``inject`` says:
        # a system prompt holds one skill, not a choice among them
        return stage_skills(installed_skills(trial), harness.config / "skills")

    def _agent(self, trial: TrialInput) -> dict[str, Any] | None:
        skill = trial.skill if trial.with_skill else None
        if skill is None or skill.kind != "agent" or self.spec.inject != "skill":
            return None
        meta, body = split_frontmatter(skill.text)
        description = meta.get("description") if isinstance(meta.get("description"), str) else skill.name
        return {skill.name: {"description": description, "prompt": body.strip() or skill.text, "tools": list(self.spec.tools)}}

    def _argv(self, trial: TrialInput, staged: dict[str, Path], session: str, *, resume: bool = False) -> list[str]:
        tools = list(dict.fromkeys(self.spec.tools))
        if staged:
            tools = list(dict.fromkeys([*tools, SKILL_TOOL]))
        system = trial.system if self.spec.inject == "system" and not trial.skills else BASELINE_SYSTEM_PROMPT
        if trial.skills and trial.item.kind == "agent" and trial.arm == "plugin":
            system = trial.system  # an agent's plugin arm: the agent's text, its plugin's skills offered
        argv = [
            self.cli, "-p", "--output-format", "stream-json", "--verbose",
            "--resume" if resume else "--session-id", session,
            "--tools", ",".join(tools),
            "--permission-mode", self.spec.permission_mode,
            "--system-prompt", system,
            "--strict-mcp-config",
        ]
        if tools:
            argv += ["--allowedTools", ",".join(tools)]
        if self.model:
            argv += ["--model", self.model]
        agent = self._agent(trial)
        if agent is not None:
            argv += ["--agents", json.dumps(agent), "--agent", next(iter(agent))]
        return argv

    def _env(self, harness: Harness) -> dict[str, str]:
        env = harness.env()
        env.update({k: v for k, v in os.environ.items() if k.startswith(PASSED_PREFIXES) and k != "ANTHROPIC_CONFIG_DIR"})
        if "CLAUDE_CODE_OAUTH_TOKEN" in os.environ:
            env["CLAUDE_CODE_OAUTH_TOKEN"] = os.environ["CLAUDE_CODE_OAUTH_TOKEN"]
        env.update(QUIET_ENV)
        env["CLAUDE_CONFIG_DIR"] = str(harness.config)
        env.update(self.spec.env)
        return env

    def _ports(self) -> list[int]:
        port = loopback_port(os.environ.get("ANTHROPIC_BASE_URL"))
        return [*self.spec.loopback_ports, *([port] if port else [])]

    def _skill_use(self, trial: TrialInput, stream: ClaudeStream) -> tuple[bool, list[str]]:
        if self.spec.inject == "system" and not trial.skills:
            skill = trial.skill if trial.with_skill else None
            return (skill is not None, [skill.name] if skill is not None and skill.kind != "agent" else [])
        agent = self._agent(trial)
        if agent is not None:
            listed = (stream.init or {}).get("agents")
            name = next(iter(agent))
            return (isinstance(listed, list) and name in listed, [])
        invoked = list(dict.fromkeys(stream.invoked))
        watched = watched_skill(trial)
        return (watched is not None and watched in invoked, invoked)

