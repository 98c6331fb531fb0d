"""The claude-code target: the real Claude Code CLI (``claude -p``) in the trial's workspace.

Each trial is one ``claude -p --output-format stream-json`` run with the prompt on stdin,
in the workspace, in a hermetic home (:mod:`agentsproof.targets.agents.kit`):
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
the rest. The CLI runs under bubblewrap (the workspace writable, no network but the
loopback port of ``ANTHROPIC_BASE_URL`` and ``loopback_ports``) by default when that URL is
on loopback, as Codex does; a remote API would be out of the sandbox's reach, so it then
runs unconfined unless ``sandbox: true`` (with a local gateway) says otherwise.

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

from pydantic import Field, model_validator

from agentsproof.model.graders import FieldError, Strict
from agentsproof.model.items import BASELINE_SYSTEM_PROMPT
from agentsproof.model.results import Usage
from agentsproof.model.skillfolder import split_frontmatter
from agentsproof.targets.agents.base import Program
from agentsproof.targets.agents.claude_stream import SKILL_TOOL, ClaudeStream
from agentsproof.targets.agents.cli_trial import AgentCliTarget, TurnPlan
from agentsproof.targets.agents.kit import Harness, loopback_port
from agentsproof.targets.base import MAX_TARGET_TIMEOUT, EnvMapping, TargetError, TrialInput

PROGRAM = Program("CLAUDE_CLI_PATH", "claude", "the Claude Code CLI", "npm install -g @anthropic-ai/claude-code")
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


def claude_settings(harness: Harness) -> None:
    """The hermetic ``$CLAUDE_CONFIG_DIR/settings.json``: built-in plugins, auto memory and the
    co-author line off (``claude-code`` and ``claude-code-acp``)."""
    settings = {"enabledPlugins": {p: False for p in BUILTIN_PLUGINS}, "autoMemoryEnabled": False, "includeCoAuthoredBy": False}
    (harness.config / "settings.json").write_text(json.dumps(settings), encoding="utf-8")


def claude_env(harness: Harness) -> dict[str, str]:
    """Claude Code's variables: the ``ANTHROPIC_*`` and ``CLAUDE_CODE_USE_*`` settings and the
    OAuth token passed on, telemetry and bundled skills off, the trial's own config folder."""
    env = {k: v for k, v in os.environ.items() if k.startswith(PASSED_PREFIXES) and k != "ANTHROPIC_CONFIG_DIR"}
    if "CLAUDE_CODE_OAUTH_TOKEN" in os.environ:
        env["CLAUDE_CODE_OAUTH_TOKEN"] = os.environ["CLAUDE_CODE_OAUTH_TOKEN"]
    env.update(QUIET_ENV)
    env["CLAUDE_CONFIG_DIR"] = str(harness.config)
    return env


def claude_credentials() -> list[str | None]:
    """The values of Claude Code's credential variables (masked everywhere)."""
    return [os.environ.get(n) for n in CREDENTIAL_ENVS]


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
    env: EnvMapping = Field(default_factory=dict, description="Extra environment variables ('${VAR}' allowed).")
    timeout: float | None = Field(None, gt=0, le=MAX_TARGET_TIMEOUT, allow_inf_nan=False)
    sandbox: bool | None = Field(
        None,
        strict=True,
        description="Run under bubblewrap: workspace read-write, no network but the API's loopback port; "
        "default: when ANTHROPIC_BASE_URL is on loopback and bubblewrap works (a remote API is out of the sandbox's reach).",
    )
    loopback_ports: list[Annotated[int, Field(ge=1, le=65535, strict=True)]] = Field(default_factory=list, max_length=32)

    @model_validator(mode="after")
    def _ports_need_sandbox(self) -> ClaudeCodeTargetSpec:
        if self.loopback_ports and self.sandbox is False:
            raise FieldError("loopback_ports", "only applies with the sandbox")
        return self


class ClaudeCodeTarget(AgentCliTarget[ClaudeStream]):
    """Claude Code (``claude -p``) as a target: one session per trial in the trial's workspace."""

    spec_model = ClaudeCodeTargetSpec
    """Its targets.yaml entry (``type: claude-code``)."""
    kind = "claude-code"
    what = "Claude Code"
    home_what = "Claude Code's config folder"
    offered_how = "as Claude Code skills ($CLAUDE_CONFIG_DIR/skills/<name>/SKILL.md, the Skill tool)"
    stream_type = ClaudeStream
    program_info = PROGRAM
    spec: ClaudeCodeTargetSpec
    shown: ClaudeCodeTargetSpec

    def _api_url(self) -> str | None:
        return os.environ.get("ANTHROPIC_BASE_URL")

    def _sandbox_default(self) -> bool:
        return loopback_port(self._api_url()) is not None  # a remote API: bubblewrap would cut the agent off from it

    def _credentials(self) -> list[str | None]:
        return claude_credentials()

    def _settings(self) -> dict[str, Any]:
        s = self.shown
        return {
            "tools": list(s.tools),
            "permission_mode": s.permission_mode,
            "inject": s.inject,
            **self._model_shown(),
            "sandbox": self.bwrap is not None,
            "env": sorted(s.env),
        }

    # -- a turn ----------------------------------------------------------------

    def _turns(self, trial: TrialInput, staged: dict[str, Path], workspace: Path) -> TurnPlan[ClaudeStream]:
        """Each follow-up with ``--resume`` of the same session."""
        session = str(uuid.uuid4())
        return TurnPlan(argv=lambda n: self._argv(trial, staged, session, resume=n > 0))

    def _told(self, stream: ClaudeStream) -> bool:
        return stream.result is not None

    def _reported_error(self, stream: ClaudeStream) -> TargetError | None:
        error = stream.error()
        if error is None:
            return None
        reason, status = error
        kind = "auth" if status in (401, 403) else "http" if status else "error"
        return TargetError(reason, status=status, kind=kind)

    def _notes_of(self, stream: ClaudeStream) -> list[str]:
        return [f"kept the first tool calls, dropped {stream.dropped}"] if stream.dropped else []

    def _usage_of(self, stream: ClaudeStream) -> Usage:
        return stream.usage()

    def _cost_of(self, stream: ClaudeStream) -> float | None:
        return stream.cost()

    # -- set-up ----------------------------------------------------------------

    def _configure(self, trial: TrialInput, harness: Harness) -> None:
        """The hermetic config dir's settings."""
        claude_settings(harness)

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
            self.program,
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--resume" if resume else "--session-id",
            session,
            "--tools",
            ",".join(tools),
            "--permission-mode",
            self.spec.permission_mode,
            "--system-prompt",
            system,
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

    def _own_env(self, harness: Harness) -> dict[str, str]:
        return claude_env(harness)

    def _skill_use(self, trial: TrialInput, stream: ClaudeStream) -> tuple[bool, list[str]]:
        agent = self._agent(trial)  # only with inject: skill, so never with the skill in the prompt
        if agent is not None:
            listed = (stream.init or {}).get("agents")
            return (isinstance(listed, list) and next(iter(agent)) in listed, [])
        return super()._skill_use(trial, stream)
