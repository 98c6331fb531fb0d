"""What every agent target shares: the agent CLIs (``claude-code``, ``codex``) and the ACP agents.

:class:`AgentBase` is the one base of :class:`agentsproof.targets.agents.cli_trial.AgentCliTarget`
(an agent CLI run once per turn, its JSON stream read back) and
:class:`agentsproof.targets.acp.target.AcpBase` (an agent spoken to over ACP for the whole trial).
It holds the steps that do not depend on how the agent is spoken to:

- **Construction** (:class:`agentsproof.targets.base.TargetFactory`'s signature): the
  agent's program found (:class:`Program`: ``$ENV`` naming it, else its name on PATH), its
  model in the usual order (:func:`agentsproof.targets.base.agent_model`), bubblewrap when
  the entry asks for it (or by the agent's default), its secrets noted for masking.
- **The hermetic trial**: a fresh :class:`~agentsproof.targets.agents.kit.Harness` made and
  deleted on threads, the agent's own config written (``_configure``), the skills staged
  where the agent loads them (``_skills_folder``), the environment built from
  :meth:`Harness.env`, the agent's own variables and the entry's ``env``.
- **What a trial records and says**: ``describe`` (the agent's settings, its model and
  where it came from, ``loopback_ports``), ``skill_used``/``skills_invoked``
  (:func:`skill_use`), errors with the target's secrets masked, and the loopback ports and
  read-only mounts a trial's container needs.

A subclass keeps only what is its own: its :class:`Program`, its settings, config files,
environment, and how one trial talks to the agent (``_run``).
"""

from __future__ import annotations

import abc
import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from agentsproof.core.errors import InputError, IsolationError, ProviderUnavailable
from agentsproof.core.scrub import scrub_text, url_secrets
from agentsproof.core.threads import to_thread
from agentsproof.targets.agents.kit import Harness, find_program, installed_skills, loopback_port, stage_skills, watched_skill
from agentsproof.targets.base import TARGETS_FILE, Target, TargetError, TrialInput, TrialRecord, agent_model

if TYPE_CHECKING:
    from agentsproof.isolation.sandbox import Bwrap


@dataclass(frozen=True)
class Program:
    """Where an agent's program is: ``env`` (an executable file) when set, else ``binary`` on PATH."""

    env: str
    binary: str
    what: str
    """The program as a message names it (``the Codex CLI``)."""
    install: str
    """How to install it (``npm install -g @openai/codex``)."""

    def find(self) -> tuple[str | None, str]:
        """(its path, '') or (None, what is wrong and how to install it)."""
        return find_program(self.env, self.binary, self.what, f"install it: {self.install} (or set {self.env} to the {self.binary} binary)")


def skill_use(trial: TrialInput, in_prompt: bool, invoked: list[str]) -> tuple[bool, list[str]]:
    """(skill_used, skills_invoked): with the skill in the prompt, the with-arm's skill; else
    the staged skills the agent was seen loading (``invoked``), and whether the watched one is among them."""
    if in_prompt:
        skill = trial.skill if trial.with_skill else None
        return skill is not None, [skill.name] if skill is not None and skill.kind != "agent" else []
    names = list(dict.fromkeys(invoked))
    watched = watched_skill(trial)
    return watched is not None and watched in names, names


class AgentBase(Target):
    """An agent working in the trial's workspace in a hermetic home (see the module docstring)."""

    program_info: ClassVar[Program]
    """How its program is found."""
    what: ClassVar[str]
    """The agent as the messages name it (``Claude Code``)."""
    home_what: ClassVar[str] = ""
    """Its config as a message names it (default: ``<what>'s config``)."""
    uses_workspace = True
    runs_in_environment = True
    offers_skills = True

    spec: Any
    shown: Any
    _secrets: list[str]

    def __init__(self, name: str, spec: Any, shown: Any = None, *, model: str | None = None, source: str = TARGETS_FILE):
        self.name = name
        self.spec = spec
        self.shown = shown or spec
        self.source = source
        self.program = self._find()
        self.model, self.model_source = agent_model(model, spec.model)
        self.timeout = spec.timeout
        self.bwrap = self._sandbox(source)
        self._secrets = [v for v in [*self._credentials(), *spec.env.values()] if v]
        self._secrets += url_secrets(self._api_url())
        self._removals: set[asyncio.Future[None]] = set()

    # -- what a subclass says --------------------------------------------------

    def _find(self) -> str:
        """The agent's program (ProviderUnavailable when it cannot be found)."""
        path, problem = self.program_info.find()
        if path is None:
            raise ProviderUnavailable(f"target {self.name!r} ({self.kind}): {problem}")
        return path

    @abc.abstractmethod
    def _api_url(self) -> str | None:
        """The URL of the model's API (its loopback port is let through the sandbox)."""

    def _credentials(self) -> list[str | None]:
        """The values of the variables that hold its credentials (masked everywhere)."""
        return []

    @abc.abstractmethod
    def _settings(self) -> dict[str, Any]:
        """What :meth:`describe` says after the target's name and type."""

    def _configure(self, trial: TrialInput, harness: Harness) -> None:
        """Write the agent's own config into ``harness`` (an OSError is reported as such)."""

    def _own_env(self, harness: Harness) -> dict[str, str]:
        """The agent's credentials and settings, over :meth:`Harness.env` and under ``env``."""
        return {}

    def _skills_folder(self, trial: TrialInput, harness: Harness) -> Path | None:
        """Where this trial's skills are staged (None: nowhere, the skill is in the prompt)."""
        return None

    def _sandbox_default(self) -> bool:
        """Whether bubblewrap is used (when it works here) with the entry's ``sandbox`` unset."""
        return False

    @abc.abstractmethod
    async def _run(self, trial: TrialInput) -> TrialRecord:
        """One trial."""

    # -- what every agent does -------------------------------------------------

    def _sandbox(self, source: str) -> Bwrap | None:
        """The bubblewrap to run under: ``sandbox: true`` (an error when it cannot work),
        ``sandbox: false`` none, unset the agent's default (when bubblewrap works here)."""
        from agentsproof.isolation.sandbox import find_bwrap

        want = self.spec.sandbox
        if want is False or (want is None and not self._sandbox_default()):
            return None
        try:
            return find_bwrap(source, self.name)
        except InputError:
            if want:
                raise
            return None

    def describe(self) -> dict[str, Any]:
        """The agent's settings as written (``${VAR}`` unexpanded), with ``loopback_ports`` when set."""
        out: dict[str, Any] = {"target": self.name, "target_type": self.kind, **self._settings()}
        if self.shown.loopback_ports:
            out["loopback_ports"] = list(self.shown.loopback_ports)
        return out

    def _model_shown(self) -> dict[str, Any]:
        """``model`` (as written when it is the target's own) and ``model_source``."""
        model = self.shown.model if self.model_source == "the target's model setting" else self.model
        return {"model": model, "model_source": self.model_source}

    async def run(self, trial: TrialInput) -> TrialRecord:
        """One trial (see :meth:`_run`); a TargetError's reason has the target's secrets masked."""
        try:
            return await self._run(trial)
        except (TargetError, IsolationError) as err:  # a container's reason may quote the agent's output too
            raise type(err)(scrub_text(str(err), self._secrets), kind=err.kind, retryable=err.retryable, status=err.status) from None

    def _workspace(self, trial: TrialInput) -> Path:
        """The trial's workspace, resolved (TargetError without one)."""
        if trial.workspace is None:
            raise TargetError(f"the {self.kind} target needs the trial's workspace")
        return Path(os.path.realpath(trial.workspace))

    async def _new_harness(self) -> Harness:
        """A fresh harness for one trial (made on a thread), named after the kind (``agentsproof-claude-``)."""
        return await to_thread(Harness.create, f"agentsproof-{self.kind.split('-')[0]}-")

    def _install(self, trial: TrialInput, harness: Harness) -> dict[str, Path]:
        """The agent's config, and the trial's skills staged (file work: run it in a thread)."""
        try:
            self._configure(trial, harness)
        except OSError as exc:
            home = self.home_what or f"{self.what}'s config"
            raise TargetError(f"cannot prepare {home}: {exc.strerror or exc}") from None
        folder = self._skills_folder(trial, harness)
        return {} if folder is None else stage_skills(installed_skills(trial), folder)

    def _env(self, harness: Harness) -> dict[str, str]:
        env = harness.env()
        env.update(self._own_env(harness))
        env.update(self.spec.env)
        return env

    def _ports(self) -> list[int]:
        port = loopback_port(self._api_url())
        return [*self.spec.loopback_ports, *([port] if port else [])]

    def loopback_ports(self) -> list[int]:
        """In a trial's container: the API's loopback port and ``loopback_ports``, relayed in."""
        return self._ports()

    def container_mounts(self) -> list[Path]:
        """In a trial's container: the agent's installed package, mounted read-only at its host path."""
        from agentsproof.targets.agents.container import cli_mounts

        return cli_mounts(self.program)

    def _remove_later(self, harness: Harness) -> None:
        """Delete the trial's harness on our threads while the run goes on (the trial's record
        does not wait for it); :meth:`aclose` waits for every deletion."""
        removal = asyncio.ensure_future(to_thread(harness.remove))
        self._removals.add(removal)
        removal.add_done_callback(self._removals.discard)

    async def aclose(self) -> None:
        """Wait until every trial's harness is deleted, then release what the base target holds."""
        while self._removals:
            await asyncio.gather(*list(self._removals), return_exceptions=True)
        await super().aclose()
