"""The codex target: the real OpenAI Codex CLI (``codex exec --json``) in the trial's workspace.

Each trial is one ``codex exec --json`` run with the prompt on stdin, in the workspace, in a
hermetic home (:mod:`agentsproof.targets.agent_cli`): ``CODEX_HOME`` is a fresh folder of
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
(:mod:`agentsproof.targets.sandbox`; the workspace writable, no network but the loopback
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
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from agentsproof.core.errors import InputError, ProviderUnavailable
from agentsproof.core.procgroup import Outcome
from agentsproof.core.scrub import scrub_text, url_secrets
from agentsproof.model.graders import FieldError, Strict
from agentsproof.model.items import BASELINE_SYSTEM_PROMPT
from agentsproof.model.results import LogEvent, Usage
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
from agentsproof.targets.codex_events import CodexEvents
from agentsproof.targets.spec import MAX_TARGET_TIMEOUT, TARGETS_FILE, env_mapping, http_url

ENV_CLI_PATH = "CODEX_CLI_PATH"
HINT_CLI = "install Codex: npm install -g @openai/codex (or set CODEX_CLI_PATH to the codex binary)"
PROVIDER_ID = "agentsproof"
_ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


def find_cli() -> tuple[str | None, str]:
    """(path of the codex binary, '') or (None, what is wrong)."""
    return find_program(ENV_CLI_PATH, "codex", "the Codex CLI", HINT_CLI)


class CodexTargetSpec(Strict):
    """The OpenAI Codex CLI (``codex exec``), working in the trial's workspace."""

    type: Literal["codex"]
    inject: Literal["skill", "system"] = Field(
        "system", description="system: the skill replaces Codex's base instructions; skill: installed in CODEX_HOME/skills."
    )
    model: str | None = Field(None, description="Default: the run's --model.")
    base_url: str | None = Field(None, description="An OpenAI-compatible server speaking the Responses API; default: OPENAI_BASE_URL, else OpenAI.")
    api_key_env: str = Field("OPENAI_API_KEY", pattern=_ENV_NAME, description="The variable holding the API key.")
    sandbox_mode: Literal["read-only", "workspace-write", "danger-full-access"] | None = Field(
        None, description="Codex's own sandbox; default: danger-full-access under bubblewrap, else workspace-write."
    )
    approval_policy: Literal["never", "on-request", "on-failure", "untrusted"] = "never"
    sandbox: bool | None = Field(
        None, strict=True, description="Run under bubblewrap; default: when the provider's URL is on loopback and bubblewrap works."
    )
    loopback_ports: list[Annotated[int, Field(ge=1, le=65535, strict=True)]] = Field(default_factory=list, max_length=32)
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables ('${VAR}' allowed).")
    timeout: float | None = Field(None, gt=0, le=MAX_TARGET_TIMEOUT, allow_inf_nan=False)

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return None if value is None else http_url(value)

    @field_validator("env")
    @classmethod
    def _env(cls, value: dict[str, str]) -> dict[str, str]:
        return env_mapping(value)

    @model_validator(mode="after")
    def _ports_need_sandbox(self) -> CodexTargetSpec:
        if self.loopback_ports and self.sandbox is False:
            raise FieldError("loopback_ports", "only applies with the sandbox")
        return self

    @model_validator(mode="after")
    def _key_is_set(self, info: Any) -> CodexTargetSpec:
        """Once expanded for a run (:meth:`TargetDef.expanded`), the key's variable must be
        set: Codex would otherwise retry for minutes before each trial errors."""
        if (info.context or {}).get("expanded") and not (os.environ.get(self.api_key_env) or "").strip():
            state = "is empty" if self.api_key_env in os.environ else "is not set"
            raise FieldError("api_key_env", f"environment variable {self.api_key_env} {state} (Codex reads the API key from it)")
        return self


class CodexTarget(AgentCliTarget):

    spec_model = CodexTargetSpec
    """Its targets.yaml entry (``type: codex``)."""
    kind = "codex"
    uses_workspace = True
    offers_skills = True

    def __init__(self, name: str, spec: CodexTargetSpec, shown: CodexTargetSpec | None = None, *,
                 model: str | None = None, source: str = TARGETS_FILE):
        cli, problem = find_cli()
        if cli is None:
            raise ProviderUnavailable(f"target {name!r} (codex): {problem}")
        self.cli = cli
        self.name = name
        self.spec = spec
        self.shown = shown or spec
        self.run_model = model
        self.model, self.model_source = agent_model(model, spec.model)
        self.timeout = spec.timeout
        self.base_url = spec.base_url or os.environ.get("OPENAI_BASE_URL") or None
        self.bwrap = self._sandbox(source)
        self._secrets = [v for v in [os.environ.get(spec.api_key_env), *spec.env.values()] if v]
        self._secrets += url_secrets(self.base_url)

    def _sandbox(self, source: str) -> Any:
        from agentsproof.targets.sandbox import find_bwrap

        if self.spec.sandbox is True:
            return find_bwrap(source, self.name)
        if self.spec.sandbox is None and loopback_port(self.base_url) is not None:
            try:
                return find_bwrap(source, self.name)
            except InputError:
                return None
        return None

    @property
    def sandbox_mode(self) -> str:
        return self.spec.sandbox_mode or ("danger-full-access" if self.bwrap is not None else "workspace-write")

    def describe(self) -> dict[str, Any]:
        s = self.shown
        out: dict[str, Any] = {
            "target": self.name, "target_type": self.kind, "inject": s.inject, "model": self.shown.model if self.model_source == "the target's model setting" else self.model, "model_source": self.model_source,
            "sandbox": self.bwrap is not None, "sandbox_mode": self.sandbox_mode, "approval_policy": s.approval_policy,
            "env": sorted(s.env),
        }
        if s.base_url:
            out["base_url"] = scrub_text(s.base_url, self._secrets)
        if s.loopback_ports:
            out["loopback_ports"] = list(s.loopback_ports)
        return out

    async def _run(self, trial: TrialInput) -> TrialRecord:
        """The prompt, then each of ``trial.turns`` with ``codex exec resume`` on the same
        thread, within one timeout; the answer is the reply to the last one."""
        if trial.workspace is None:
            raise TargetError("the codex target needs the trial's workspace")
        workspace = Path(os.path.realpath(trial.workspace))
        timeout = self.spec.timeout or trial.timeout
        harness = Harness.create("agentsproof-codex-")
        thread: str | None = None

        def ready(n: int) -> None:
            if thread is None:
                raise TargetError("Codex reported no thread id, so the conversation cannot go on", kind="malformed")

        try:
            staged = self._install(trial, harness)

            async def one_turn(n: int, prompt: str, left: float) -> Turn:
                nonlocal thread
                out = await run_cli(RunSettings(
                    argv=self._argv(workspace, thread), workspace=workspace, harness=harness, env=self._env(harness),
                    timeout=left, stdin_text=prompt, sandbox=self.bwrap, loopback_ports=self._ports(),
                ))
                events, notes = read_json_lines(harness.stream)
                seen = CodexEvents(staged=staged).take_all(events)
                self._check(seen, out, timeout)
                thread = thread or seen.thread_id
                return seen, out, notes

            turns, follow_ups = await converse(trial, timeout, "Codex", one_turn, ready)
        finally:
            harness.remove()
        return self._record(trial, turns, follow_ups)

    def _check(self, seen: CodexEvents, out: Outcome, timeout: float) -> None:
        problem = failure(out, timeout, "Codex")
        if problem is not None and (out.timed_out or seen.failure is None):
            raise problem
        if seen.failure is not None:
            raise TargetError(f"Codex reported an error: {seen.failure}")
        if seen.answer() is None:
            raise TargetError("Codex finished without an answer", retryable=True, kind="malformed")

    def _record(self, trial: TrialInput, turns: list[Turn], follow_ups: list[str]) -> TrialRecord:
        log, trajectory, invoked, latency = turns_log(
            turns, follow_ups, self._secrets, lambda seen: ["codex: " + w for w in seen.warnings if w],
        )
        offered = offered_note(trial, self.spec.inject, "as Codex skills ($CODEX_HOME/skills/<name>/SKILL.md)")
        if offered:
            log.insert(0, LogEvent(t=0.0, role="info", text=offered))
        usage = Usage()
        for seen, _, _ in turns:
            usage = usage + seen.usage
        last = turns[-1][0]
        last.invoked = invoked
        used, names = self._skill_use(trial, last)
        return TrialRecord(answer=(last.answer() or "").strip(), trajectory=trajectory, usage=usage, latency_s=latency,
                           skill_used=used, skills_invoked=names, log=log, replies=[(seen.answer() or "").strip() for seen, _, _ in turns],
                           skills_offered=offered or None)

    # -- set-up ----------------------------------------------------------------

    def _install(self, trial: TrialInput, harness: Harness) -> dict[str, Path]:
        """CODEX_HOME: config.toml, the base instructions, and the skills of ``inject: skill``."""
        instructions = harness.root / "instructions.md"
        # several skills (activation, the plugin arm): the arm's own text (generic, or an agent's)
        text = trial.system if self.spec.inject == "system" or _agent(trial) or trial.skills else BASELINE_SYSTEM_PROMPT
        try:
            instructions.write_text(text, encoding="utf-8")
            (harness.config / "config.toml").write_text(self._config(instructions), encoding="utf-8")
        except OSError as exc:
            raise TargetError(f"cannot prepare Codex's home: {exc.strerror or exc}") from None
        if self.spec.inject != "skill" and not trial.skills:
            return {}
        # several skills are staged whatever ``inject`` says: instructions hold one skill, not a choice
        return stage_skills(installed_skills(trial), harness.config / "skills")

    def _config(self, instructions: Path) -> str:
        """CODEX_HOME's ``config.toml`` (written by tomli-w: every value quoted as TOML wants)."""
        import tomli_w

        config: dict[str, Any] = {
            "model_instructions_file": str(instructions),
            "approval_policy": self.spec.approval_policy,
            "sandbox_mode": self.sandbox_mode,
            "check_for_update_on_startup": False,
        }
        if self.model:
            config["model"] = self.model
        if self.base_url:
            config["model_provider"] = PROVIDER_ID
        config["analytics"] = {"enabled": False}
        config["skills"] = {"bundled": {"enabled": False}}
        if self.base_url:
            config["model_providers"] = {PROVIDER_ID: {
                "name": PROVIDER_ID, "base_url": self.base_url, "env_key": self.spec.api_key_env, "wire_api": "responses",
            }}
        return tomli_w.dumps(config)

    def _argv(self, workspace: Path, thread: str | None = None) -> list[str]:
        """``codex exec`` for the first turn; ``codex exec resume THREAD`` (in the same
        workspace, with the same config) for a follow-up."""
        if thread is None:
            argv = [self.cli, "exec", "--json", "--skip-git-repo-check", "--sandbox", self.sandbox_mode, "-C", str(workspace)]
        else:
            argv = [self.cli, "exec", "resume", "--json", "--skip-git-repo-check"]
        if self.model:
            argv += ["--model", self.model]
        return [*argv, *([thread] if thread else []), "-"]

    def _env(self, harness: Harness) -> dict[str, str]:
        env = harness.env()
        key = os.environ.get(self.spec.api_key_env)
        if key:
            env[self.spec.api_key_env] = key
        env["CODEX_HOME"] = str(harness.config)
        env.update(self.spec.env)
        return env

    def _ports(self) -> list[int]:
        port = loopback_port(self.base_url)
        return [*self.spec.loopback_ports, *([port] if port else [])]

    def _skill_use(self, trial: TrialInput, seen: CodexEvents) -> tuple[bool, list[str]]:
        if (self.spec.inject == "system" and not trial.skills) or _agent(trial):
            skill = trial.skill if trial.with_skill else None
            return (skill is not None, [skill.name] if skill is not None and skill.kind != "agent" else [])
        watched = watched_skill(trial)
        return (watched is not None and watched in seen.invoked, list(seen.invoked))


def _agent(trial: TrialInput) -> bool:
    """An agent item's with-arm: Codex has no custom agents, so its text is the instructions."""
    return trial.with_skill and trial.skill is not None and trial.skill.kind == "agent"
