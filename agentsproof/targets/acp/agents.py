"""The built-in ACP agents: ``gemini``, ``qwen-code``, ``claude-code-acp``, ``codex-acp``.

Each is an :class:`agentsproof.targets.acp.target.AcpBase` that knows its program (an env var
naming the binary, else its name on PATH), its ACP flag, where it loads skills from in
its fresh home, how it is given its model (``--model``, then ``AGENTSPROOF_MODEL``, then
the entry's ``model:``, else the agent's own default) and its provider's credentials and
URL (read from agentsproof's environment, never the user's config files):

=================  ==========================  ==============================  ===========================================
kind               program (env var)           skills                          provider
=================  ==========================  ==============================  ===========================================
gemini             gemini --acp                ``$HOME/.gemini/skills``        ``GEMINI_API_KEY``, ``GOOGLE_GEMINI_BASE_URL``
qwen-code          qwen --acp                  ``$HOME/.qwen/skills``          ``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` (chat completions)
claude-code-acp    claude-code-acp             ``$CLAUDE_CONFIG_DIR/skills``   ``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL`` (Messages)
codex-acp          codex-acp                   ``$CODEX_HOME/skills``          ``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` (Responses)
=================  ==========================  ==============================  ===========================================

Adding another: a spec (``type: Literal["<kind>"]`` over :class:`BuiltinSpec`), a subclass
setting ``kind``, ``what``, its :class:`~agentsproof.targets.agents.base.Program`, the
other class attributes and its ``_configure`` (and ``_own_env`` where its provider needs
more than the key and URL), and one line in :data:`agentsproof.targets.registry.KINDS`.
What Claude Code and Codex need in a fresh home is shared with their CLI targets
(:func:`agentsproof.targets.agents.claude_code.claude_settings`, ``claude_env``;
:func:`agentsproof.targets.agents.codex.codex_config`, ``codex_env``).
"""

from __future__ import annotations

import abc
import json
import os
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, Field

from agentsproof.core.scrub import scrub_text
from agentsproof.targets.acp.target import AcpBase, AcpCommon
from agentsproof.targets.agents.base import AgentBase, Program
from agentsproof.targets.agents.kit import Harness
from agentsproof.targets.base import TrialInput, http_url

_ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


class BuiltinSpec(AcpCommon):
    """What a built-in ACP agent's entry has besides :class:`AcpCommon`."""

    inject: Literal["skill", "prompt"] = Field("skill", description="skill: installed where the agent loads skills; prompt: before the first prompt.")
    base_url: Annotated[str, AfterValidator(http_url)] | None = Field(None, description="The provider's URL; default: its usual variable.")
    api_key_env: str | None = Field(None, pattern=_ENV_NAME, description="The variable holding the API key; default: the agent's usual one.")


class GeminiSpec(BuiltinSpec):
    """Gemini CLI in ACP mode (``gemini --acp``)."""

    type: Literal["gemini"]


class QwenCodeSpec(BuiltinSpec):
    """Qwen Code in ACP mode (``qwen --acp``) on an OpenAI-compatible provider."""

    type: Literal["qwen-code"]


class ClaudeCodeAcpSpec(BuiltinSpec):
    """Claude Code through Zed's ACP adapter (``@zed-industries/claude-code-acp``)."""

    type: Literal["claude-code-acp"]


class CodexAcpSpec(BuiltinSpec):
    """Codex through Zed's ACP adapter (``@zed-industries/codex-acp``)."""

    type: Literal["codex-acp"]
    approval_policy: Literal["untrusted", "on-request", "on-failure", "never"] = Field(
        "untrusted", description="Codex's approval policy: what it asks the client (answered by permissions)."
    )


class BuiltinAcp(AcpBase):
    """A built-in ACP agent (see the module docstring); a subclass sets the class attributes."""

    acp_args: ClassVar[tuple[str, ...]] = ()
    model_flag: ClassVar[str | None] = None
    key_env: ClassVar[str]
    """The API key's usual variable."""
    url_env: ClassVar[str]
    """The provider URL's usual variable."""
    skills_in: ClassVar[tuple[str, str]]
    """(``home`` or ``config``, the folder below it) where the agent loads skills from."""
    config_var: ClassVar[str] = "$HOME"
    """The config folder as the docs name it (``$CODEX_HOME``)."""

    _find = AgentBase._find  # its Program, not a targets.yaml command

    @property
    def api_key_env(self) -> str:
        """The variable the API key is read from."""
        return str(self.spec.api_key_env or self.key_env)

    def _api_url(self) -> str | None:
        return self.spec.base_url or os.environ.get(self.url_env) or None

    def _credentials(self) -> list[str | None]:
        return [os.environ.get(self.api_key_env)]

    def _argv(self) -> list[str]:
        argv = [self.program, *self.acp_args]
        if self.model and self.model_flag:
            argv += [self.model_flag, self.model]
        return argv

    def _skills_place(self) -> tuple[str, str] | None:
        return self.skills_in

    def _skills_shown(self) -> str:
        base, rel = self.skills_in
        return f"$HOME/{rel}" if base == "home" else f"{self.config_var}/{rel}"

    @abc.abstractmethod
    def _configure(self, trial: TrialInput, harness: Harness) -> None:
        """Write the agent's own settings into the fresh home (or its config folder)."""

    def _provider_env(self) -> dict[str, str]:
        """The key (from ``api_key_env``) and the URL in the agent's usual variables."""
        env = {}
        key = os.environ.get(self.api_key_env)
        if key:
            env[self.key_env] = key
        url = self._api_url()
        if url:
            env[self.url_env] = url
        return env

    def _agent_settings(self) -> dict[str, Any]:
        s = self.shown
        out: dict[str, Any] = {"inject": s.inject, "skills_dir": self._skills_shown(), "api_key_env": self.api_key_env}
        if s.base_url:
            out["base_url"] = scrub_text(s.base_url, self._secrets)
        return out


QUIET_SETTINGS: dict[str, Any] = {
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
}
"""What Gemini CLI's and Qwen Code's ``settings.json`` (one lineage) both switch off."""


def _settings_json(folder: Path, auth: str, **more: Any) -> None:
    """``folder/settings.json`` of Gemini CLI or Qwen Code: ``auth`` selected, folder trust
    off (the workspace is the agent's), :data:`QUIET_SETTINGS`, and ``more``."""
    data = {"security": {"auth": {"selectedType": auth}, "folderTrust": {"enabled": False}}, **QUIET_SETTINGS, **more}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps(data, indent=2), encoding="utf-8")


class GeminiTarget(BuiltinAcp):
    """Gemini CLI (``gemini --acp``): an API key, its own settings in the fresh home."""

    spec_model = GeminiSpec
    """Its targets.yaml entry (``type: gemini``)."""
    kind, what = "gemini", "Gemini CLI"
    program_info = Program("GEMINI_CLI_PATH", "gemini", "Gemini CLI", "npm install -g @google/gemini-cli")
    acp_args, model_flag = ("--acp",), "--model"
    key_env, url_env = "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"
    skills_in = ("home", ".gemini/skills")

    def _configure(self, trial: TrialInput, harness: Harness) -> None:
        _settings_json(harness.home / ".gemini", "gemini-api-key", skills={"enabled": True})

    def _own_env(self, harness: Harness) -> dict[str, str]:
        return {**self._provider_env(), "GEMINI_CLI_NO_RELAUNCH": "true", "GEMINI_CLI_TRUST_WORKSPACE": "true"}


class QwenCodeTarget(BuiltinAcp):
    """Qwen Code (``qwen --acp``) on an OpenAI-compatible chat-completions provider."""

    spec_model = QwenCodeSpec
    """Its targets.yaml entry (``type: qwen-code``)."""
    kind, what = "qwen-code", "Qwen Code"
    program_info = Program("QWEN_CLI_PATH", "qwen", "Qwen Code", "npm install -g @qwen-code/qwen-code")
    acp_args, model_flag = ("--acp",), "--model"
    key_env, url_env = "OPENAI_API_KEY", "OPENAI_BASE_URL"
    skills_in = ("home", ".qwen/skills")

    def _configure(self, trial: TrialInput, harness: Harness) -> None:
        _settings_json(harness.home / ".qwen", "openai", **({"model": {"name": self.model}} if self.model else {}))

    def _own_env(self, harness: Harness) -> dict[str, str]:
        return {**self._provider_env(), **({"OPENAI_MODEL": self.model} if self.model else {})}


class ClaudeCodeAcpTarget(BuiltinAcp):
    """Claude Code through ``claude-code-acp``: Claude Code's own hermetic settings and variables, the Messages API."""

    spec_model = ClaudeCodeAcpSpec
    """Its targets.yaml entry (``type: claude-code-acp``)."""
    kind = what = "claude-code-acp"
    program_info = Program("CLAUDE_CODE_ACP_PATH", "claude-code-acp", "claude-code-acp", "npm install -g @zed-industries/claude-code-acp")
    key_env, url_env = "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"
    skills_in, config_var = ("config", "skills"), "$CLAUDE_CONFIG_DIR"

    def _credentials(self) -> list[str | None]:
        from agentsproof.targets.agents.claude_code import claude_credentials

        return [*super()._credentials(), *claude_credentials()]

    def _configure(self, trial: TrialInput, harness: Harness) -> None:
        from agentsproof.targets.agents.claude_code import claude_settings

        claude_settings(harness)

    def _own_env(self, harness: Harness) -> dict[str, str]:
        from agentsproof.targets.agents.claude_code import claude_env

        return {**claude_env(harness), **self._provider_env(), **({"ANTHROPIC_MODEL": self.model} if self.model else {})}


class CodexAcpTarget(BuiltinAcp):
    """Codex through ``codex-acp``: Codex's own hermetic ``CODEX_HOME``, a provider speaking the Responses API."""

    spec_model = CodexAcpSpec
    """Its targets.yaml entry (``type: codex-acp``)."""
    kind = what = "codex-acp"
    program_info = Program("CODEX_ACP_PATH", "codex-acp", "codex-acp", "npm install -g @zed-industries/codex-acp")
    key_env, url_env = "OPENAI_API_KEY", "OPENAI_BASE_URL"
    skills_in, config_var = ("config", "skills"), "$CODEX_HOME"

    def _configure(self, trial: TrialInput, harness: Harness) -> None:
        from agentsproof.targets.agents.codex import codex_config

        sandbox_mode = "danger-full-access" if self.bwrap is not None or trial.environment is not None else "workspace-write"
        text = codex_config(
            model=self.model, base_url=self._api_url(), key_env=self.api_key_env, sandbox_mode=sandbox_mode, approval_policy=self.spec.approval_policy
        )
        (harness.config / "config.toml").write_text(text, encoding="utf-8")

    def _own_env(self, harness: Harness) -> dict[str, str]:
        from agentsproof.targets.agents.codex import codex_env

        return codex_env(self.api_key_env, harness)
