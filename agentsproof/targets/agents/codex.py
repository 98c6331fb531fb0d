"""The codex target: the real OpenAI Codex CLI (``codex exec --json``) in the trial's workspace.

Each trial is one ``codex exec --json`` run with the prompt on stdin, in the workspace, in a
hermetic home (:mod:`agentsproof.targets.agents.kit`): ``CODEX_HOME`` is a fresh folder of
that trial holding only the ``config.toml`` agentsproof writes, so no user config, login,
``AGENTS.md``, skills, plugins, history or memory reach it; Codex's bundled skills are
switched off, so the skill under test is the only one listed. The CLI is
``CODEX_CLI_PATH`` or ``codex`` on PATH.

**Model and provider.** The model is the target's ``model`` or the run's ``--model``.
With a ``base_url`` (or ``OPENAI_BASE_URL``, which Codex itself ignores) the config
defines a provider ``agentsproof`` there speaking the Responses API (``wire_api =
"responses"``) with the key from ``api_key_env`` (default ``OPENAI_API_KEY``); without
one, Codex's own OpenAI provider with that key.

**The with-arm.** ``inject: system`` (the default): the arm's system prompt replaces
Codex's base instructions (``model_instructions_file``); the baseline gets the generic one.
``inject: skill``: the skill is installed where Codex loads a user's skills,
``$CODEX_HOME/skills/<name>/`` with its folder; Codex lists it to the model, which reads
its SKILL.md when it decides to. Every skill of ``TrialInput.skills`` (activation suites,
the plugin arm) is installed so whatever ``inject`` says, with the arm's own instructions
(the generic ones, or an agent's), and the trial log says how they were offered.
Codex has no custom agents: an agent item's text replaces the base instructions either way.

**Sandbox.** ``sandbox_mode`` and ``approval_policy`` are Codex's own (approval defaults
to ``never``: nobody is there to approve). ``sandbox: true`` runs Codex under bubblewrap
(:mod:`agentsproof.isolation.sandbox`; the workspace writable, no network but the loopback
port of the provider's URL and ``loopback_ports``), and then Codex's own sandbox defaults
to ``danger-full-access`` (it cannot nest); unset, bubblewrap is used when the provider's
URL is on loopback and bubblewrap works here, else Codex's own ``workspace-write``.

**Turns.** A multi-turn trial (``TrialInput.turns``) sends each follow-up with
``codex exec resume <thread>`` in the same ``CODEX_HOME`` and workspace, within the trial's
one timeout; the answer is the last reply, the trajectory and tokens are summed over the
turns and the conversation goes to the trial log.

**Recorded.** The answer (the last agent message), every command, file change, MCP call
and web search with its output and outcome, tokens (cached input included); no cost
(Codex reports none). ``skill_used``/``skills_invoked`` from commands and file changes that
name a file of a staged skill (``inject: system``, one skill: True in the with-arm).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidationInfo, model_validator

from agentsproof.core.scrub import scrub_text
from agentsproof.model.graders import FieldError, Strict
from agentsproof.model.items import BASELINE_SYSTEM_PROMPT
from agentsproof.model.results import Usage
from agentsproof.targets.agents.base import Program
from agentsproof.targets.agents.cli_trial import AgentCliTarget, TurnPlan
from agentsproof.targets.agents.codex_events import CodexEvents
from agentsproof.targets.agents.kit import Harness, loopback_port
from agentsproof.targets.base import MAX_TARGET_TIMEOUT, EnvMapping, NativeLauncher, TargetError, TrialInput, http_url

PROGRAM = Program("CODEX_CLI_PATH", "codex", "the Codex CLI", "npm install -g @openai/codex")
PROVIDER_ID = "agentsproof"
_ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


class CodexTargetSpec(Strict):
    """The OpenAI Codex CLI (``codex exec``), working in the trial's workspace."""

    type: Literal["codex"]
    inject: Literal["skill", "system"] = Field(
        "system", description="system: the skill replaces Codex's base instructions; skill: installed in CODEX_HOME/skills."
    )
    model: str | None = Field(None, description="Default: the run's --model.")
    base_url: Annotated[str, AfterValidator(http_url)] | None = Field(
        None, description="An OpenAI-compatible server speaking the Responses API; default: OPENAI_BASE_URL, else OpenAI."
    )
    api_key_env: str = Field("OPENAI_API_KEY", pattern=_ENV_NAME, description="The variable holding the API key.")
    sandbox_mode: Literal["read-only", "workspace-write", "danger-full-access"] | None = Field(
        None, description="Codex's own sandbox; default: danger-full-access under bubblewrap, else workspace-write."
    )
    approval_policy: Literal["never", "on-request", "on-failure", "untrusted"] = "never"
    sandbox: bool | None = Field(None, strict=True, description="Run under bubblewrap; default: when the provider's URL is on loopback and bubblewrap works.")
    loopback_ports: list[Annotated[int, Field(ge=1, le=65535, strict=True)]] = Field(default_factory=list, max_length=32)
    env: EnvMapping = Field(default_factory=dict, description="Extra environment variables ('${VAR}' allowed).")
    timeout: float | None = Field(None, gt=0, le=MAX_TARGET_TIMEOUT, allow_inf_nan=False)

    @model_validator(mode="after")
    def _ports_need_sandbox(self) -> CodexTargetSpec:
        if self.loopback_ports and self.sandbox is False:
            raise FieldError("loopback_ports", "only applies with the sandbox")
        return self

    @model_validator(mode="after")
    def _key_is_set(self, info: ValidationInfo) -> CodexTargetSpec:
        """Once expanded for a run (:meth:`TargetDef.expanded`), the key's variable must be
        set: Codex would otherwise retry for minutes before each trial errors."""
        if (info.context or {}).get("expanded") and not (os.environ.get(self.api_key_env) or "").strip():
            state = "is empty" if self.api_key_env in os.environ else "is not set"
            raise FieldError("api_key_env", f"environment variable {self.api_key_env} {state} (Codex reads the API key from it)")
        return self


class CodexTarget(AgentCliTarget[CodexEvents]):
    """Codex (``codex exec --json``) as a target: one session per trial in the trial's workspace."""

    spec_model = CodexTargetSpec
    """Its targets.yaml entry (``type: codex``)."""
    kind = "codex"
    native_launchers = (
        NativeLauncher(
            "codex.js",
            ((3, "@openai/codex-linux-*/vendor/*-unknown-linux-musl/bin/codex"), (1, "vendor/*-unknown-linux-musl/codex/codex")),
        ),
    )
    what = "Codex"
    home_what = "Codex's home"
    offered_how = "as Codex skills ($CODEX_HOME/skills/<name>/SKILL.md)"
    stream_type = CodexEvents
    program_info = PROGRAM
    spec: CodexTargetSpec
    shown: CodexTargetSpec

    @cached_property
    def base_url(self) -> str | None:
        """The provider's URL: ``base_url``, else ``OPENAI_BASE_URL`` (read as the target is made)."""
        return self.spec.base_url or os.environ.get("OPENAI_BASE_URL") or None

    def _api_url(self) -> str | None:
        return self.base_url

    def _credentials(self) -> list[str | None]:
        return [os.environ.get(self.spec.api_key_env)]

    def _sandbox_default(self) -> bool:
        return loopback_port(self.base_url) is not None

    @property
    def sandbox_mode(self) -> str:
        """The ``--sandbox`` mode Codex is given: the spec's, else full access inside bubblewrap, else workspace-write."""
        return self.spec.sandbox_mode or ("danger-full-access" if self.bwrap is not None else "workspace-write")

    def _settings(self) -> dict[str, Any]:
        s = self.shown
        out: dict[str, Any] = {
            "inject": s.inject,
            **self._model_shown(),
            "sandbox": self.bwrap is not None,
            "sandbox_mode": self.sandbox_mode,
            "approval_policy": s.approval_policy,
            "env": sorted(s.env),
        }
        if s.base_url:
            out["base_url"] = scrub_text(s.base_url, self._secrets)
        return out

    # -- a turn ----------------------------------------------------------------

    def _turns(self, trial: TrialInput, staged: dict[str, Path], workspace: Path) -> TurnPlan[CodexEvents]:
        """Each follow-up with ``codex exec resume`` on the same thread."""
        thread = _Thread()
        return TurnPlan(argv=lambda n: self._argv(workspace, thread.id), took=thread.took, ready=thread.ready)

    def _told(self, seen: CodexEvents) -> bool:
        return seen.failure is not None

    def _reported_error(self, seen: CodexEvents) -> TargetError | None:
        return None if seen.failure is None else TargetError(f"Codex reported an error: {seen.failure}")

    def _notes_of(self, seen: CodexEvents) -> list[str]:
        return ["codex: " + w for w in seen.warnings if w]

    def _usage_of(self, seen: CodexEvents) -> Usage:
        return seen.usage

    # -- set-up ----------------------------------------------------------------

    def _configure(self, trial: TrialInput, harness: Harness) -> None:
        """CODEX_HOME: config.toml and the base instructions."""
        instructions = harness.root / "instructions.md"
        # several skills (activation, the plugin arm): the arm's own text (generic, or an agent's)
        text = trial.system if self.spec.inject == "system" or _agent(trial) or trial.skills else BASELINE_SYSTEM_PROMPT
        instructions.write_text(text, encoding="utf-8")
        (harness.config / "config.toml").write_text(self._config(instructions), encoding="utf-8")

    def _config(self, instructions: Path) -> str:
        """CODEX_HOME's ``config.toml`` (:func:`codex_config`)."""
        return codex_config(
            model=self.model,
            base_url=self.base_url,
            key_env=self.spec.api_key_env,
            sandbox_mode=self.sandbox_mode,
            approval_policy=self.spec.approval_policy,
            instructions=instructions,
        )

    def _argv(self, workspace: Path, thread: str | None = None) -> list[str]:
        """``codex exec`` for the first turn; ``codex exec resume THREAD`` (in the same
        workspace, with the same config) for a follow-up."""
        if thread is None:
            argv = [self.program, "exec", "--json", "--skip-git-repo-check", "--sandbox", self.sandbox_mode, "-C", str(workspace)]
        else:
            argv = [self.program, "exec", "resume", "--json", "--skip-git-repo-check"]
        if self.model:
            argv += ["--model", self.model]
        return [*argv, *([thread] if thread else []), "-"]

    def _own_env(self, harness: Harness) -> dict[str, str]:
        return codex_env(self.spec.api_key_env, harness)

    def _skill_in_prompt(self, trial: TrialInput) -> bool:
        return super()._skill_in_prompt(trial) or _agent(trial)


def codex_config(*, model: str | None, base_url: str | None, key_env: str, sandbox_mode: str, approval_policy: str, instructions: Path | None = None) -> str:
    """A hermetic ``$CODEX_HOME/config.toml`` (written by tomli-w: every value quoted as TOML
    wants): the model, a provider ``agentsproof`` at ``base_url`` speaking the Responses
    API with the key from ``key_env``, no analytics, no bundled skills. Shared by ``codex``
    and ``codex-acp`` (Codex inside Zed's ACP adapter)."""
    import tomli_w

    config: dict[str, Any] = {}
    if instructions is not None:
        config["model_instructions_file"] = str(instructions)
    config.update(approval_policy=approval_policy, sandbox_mode=sandbox_mode, check_for_update_on_startup=False)
    if model:
        config["model"] = model
    if base_url:
        config["model_provider"] = PROVIDER_ID
    config["analytics"] = {"enabled": False}
    config["skills"] = {"bundled": {"enabled": False}}
    if base_url:
        config["model_providers"] = {PROVIDER_ID: {"name": PROVIDER_ID, "base_url": base_url, "env_key": key_env, "wire_api": "responses"}}
    return tomli_w.dumps(config)


def codex_env(key_env: str, harness: Harness) -> dict[str, str]:
    """Codex's variables: the API key's (when set) and ``CODEX_HOME``, the trial's own config folder."""
    env = {}
    key = os.environ.get(key_env)
    if key:
        env[key_env] = key
    env["CODEX_HOME"] = str(harness.config)
    return env


@dataclass
class _Thread:
    """The thread a trial's follow-ups resume: the first one Codex reports."""

    id: str | None = None

    def took(self, seen: CodexEvents) -> None:
        self.id = self.id or seen.thread_id

    def ready(self, n: int) -> None:
        if self.id is None:
            raise TargetError("Codex reported no thread id, so the conversation cannot go on", kind="malformed")


def _agent(trial: TrialInput) -> bool:
    """An agent item's with-arm: Codex has no custom agents, so its text is the instructions."""
    return trial.with_skill and trial.skill is not None and trial.skill.kind == "agent"
