"""One trial of a built-in agent CLI (``claude-code``, ``codex``): the steps they share.

:class:`AgentCliTarget` runs every trial the same way, whichever the CLI: a hermetic
harness (:mod:`agentsproof.targets.agents.kit`) with the CLI's own config written and the
skills staged; the prompt, then each follow-up, as one CLI run each within the trial's one
timeout (:func:`converse`); each run's JSON stream read by the CLI's own
:class:`agentsproof.targets.agents.kit.EventStream`; a failed run mapped to a
:class:`TargetError`; one :class:`TrialRecord` from all the turns (:func:`turns_log`),
with tokens and cost summed and how the skills were offered and used. Every error leaves
with the target's secrets masked.

What it shares with the ACP agents (construction, the hermetic install, the environment,
``describe``, masking, the container's ports and mounts) is
:class:`agentsproof.targets.agents.base.AgentBase`'s. A subclass keeps only what
differs: its program (``program_info``), its config files (``_configure``), its arguments
for each turn (:meth:`AgentCliTarget._turns`), its environment, its event reader and what
its stream says about the run's end.
"""

from __future__ import annotations

import abc
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Generic, Protocol, TypeVar

from agentsproof.core.phases import phase
from agentsproof.core.procgroup import Outcome
from agentsproof.core.scrub import scrub_text
from agentsproof.core.threads import to_thread
from agentsproof.core.units import seconds
from agentsproof.model.results import LogEvent, ToolCall, Usage
from agentsproof.targets.agents.base import AgentBase, skill_use
from agentsproof.targets.agents.kit import (
    CliCall,
    EventStream,
    Harness,
    failure,
    offered_note,
    read_json_lines,
    run_cli,
)
from agentsproof.targets.base import TargetError, TrialInput, TrialRecord, next_user_message

S = TypeVar("S", bound=EventStream)
"""The CLI's own :class:`EventStream`."""
Turn = tuple[S, Outcome, list[str]]
"""One turn: (the parsed event stream; the CLI's outcome; notes from reading the stream)."""


async def converse(
    trial: TrialInput,
    timeout: float,
    what: str,
    one_turn: Callable[[int, str, float], Awaitable[Turn[S]]],
    ready: Callable[[int], None] | None = None,
) -> tuple[list[Turn[S]], list[str]]:
    """(the turns, the follow-ups sent): the prompt, then each follow-up of
    :func:`agentsproof.targets.base.next_user_message`, all within ``timeout``.
    ``one_turn(n, prompt, seconds left)`` runs turn ``n``; ``ready(n)`` may refuse a
    follow-up (raise) before the time left is checked."""
    deadline = time.monotonic() + timeout
    conversation = [{"role": "user", "content": trial.prompt}]
    turns: list[Turn[S]] = []
    n = 0
    while True:
        left = deadline - time.monotonic()
        if n:
            if ready is not None:
                ready(n)
            if left <= 0:
                raise TargetError(f"{what} timed out after {seconds(timeout)} (at turn {n + 1})", kind="timeout")
        turn = await one_turn(n, conversation[-1]["content"], timeout if n == 0 else left)
        turns.append(turn)
        conversation.append({"role": "assistant", "content": (turn[0].answer() or "").strip()})
        follow_up = await next_user_message(trial, conversation)
        if follow_up is None:
            break
        conversation.append({"role": "user", "content": follow_up})
        n += 1
    return turns, [m["content"] for m in conversation if m["role"] == "user"][1:]


def turns_log(
    turns: list[Turn[S]],
    follow_ups: list[str],
    secrets: list[str],
    notes_of: Callable[[S], list[str]],
) -> tuple[list[LogEvent], list[ToolCall], list[str], float]:
    """(log, trajectory, skills invoked in order, latency) of a trial's turns: each turn's
    stderr (secrets masked) and notes (``notes_of(stream)`` adds the target's own), the
    reply and follow-up between turns."""
    log: list[LogEvent] = []
    trajectory: list[ToolCall] = []
    invoked: list[str] = []
    latency = 0.0
    for n, (stream, out, notes) in enumerate(turns):
        if n:
            log.append(LogEvent(t=latency, role="assistant", text=(turns[n - 1][0].answer() or "").strip()))
            log.append(LogEvent(t=latency, role="user", text=follow_ups[n - 1]))
        log += [LogEvent(t=latency + t, role="info", text=scrub_text("stderr: " + line, secrets)) for t, line in out.stderr]
        log += [LogEvent(t=latency + out.latency_s, role="info", text=note) for note in [*notes, *out.notes, *notes_of(stream)]]
        trajectory += stream.trajectory()
        invoked += [name for name in stream.invoked if name not in invoked]
        latency += out.latency_s
    return log, trajectory, invoked, latency


class AgentCliSpec(Protocol):
    """What every agent CLI's targets.yaml entry has."""

    @property
    def inject(self) -> str:
        """How the with-arm's skill reaches the agent: ``system`` (the system prompt) or ``skill`` (installed)."""

    @property
    def model(self) -> str | None:
        """The target's own ``model:`` (None: the run's ``--model``)."""

    @property
    def env(self) -> dict[str, str]:
        """Extra environment variables for the CLI (``${VAR}`` references allowed)."""

    @property
    def timeout(self) -> float | None:
        """Seconds per trial (None: the item's timeout)."""

    @property
    def sandbox(self) -> bool | None:
        """Run the CLI under bubblewrap."""

    @property
    def loopback_ports(self) -> list[int]:
        """Loopback ports the sandboxed agent may reach besides its API's."""


@dataclass
class TurnPlan(Generic[S]):
    """How a trial's turns are started: ``argv(n)`` is turn ``n``'s command line; ``took``
    sees each turn's checked stream (e.g. to learn the session to resume); ``ready(n)`` may
    refuse a follow-up (see :func:`converse`)."""

    argv: Callable[[int], list[str]]
    took: Callable[[S], None] | None = None
    ready: Callable[[int], None] | None = None


class AgentCliTarget(AgentBase, Generic[S]):
    """A built-in agent CLI (see the module docstring); a subclass sets the class
    attributes and the hooks below (and :class:`~agentsproof.targets.agents.base.AgentBase`'s)."""

    offered_how: ClassVar[str]
    """How it offers several skills, for :func:`offered_note`."""
    stream_type: type[S]
    """The CLI's event reader."""

    spec: AgentCliSpec
    shown: AgentCliSpec

    # -- what a subclass says --------------------------------------------------

    @abc.abstractmethod
    def _turns(self, trial: TrialInput, staged: dict[str, Path], workspace: Path) -> TurnPlan[S]:
        """How this trial's turns are started."""

    @abc.abstractmethod
    def _told(self, stream: S) -> bool:
        """Whether the stream says how the run ended (then it wins over a failed exit)."""

    @abc.abstractmethod
    def _reported_error(self, stream: S) -> TargetError | None:
        """The error the CLI itself reported, or None."""

    def _notes_of(self, stream: S) -> list[str]:
        """The trial log's notes on one turn's stream."""
        return []

    def _usage_of(self, stream: S) -> Usage:
        return Usage()

    def _cost_of(self, stream: S) -> float | None:
        return None

    def _skill_in_prompt(self, trial: TrialInput) -> bool:
        """Whether the with-arm's skill is in the prompt (not offered as a skill)."""
        return self.spec.inject == "system" and not trial.skills

    def _skills_folder(self, trial: TrialInput, harness: Harness) -> Path | None:
        """``<config>/skills`` with ``inject: skill``, and whenever the trial offers several
        skills (activation suites, the plugin arm: a system prompt holds one skill, not a choice among them)."""
        return harness.config / "skills" if self.spec.inject == "skill" or trial.skills else None

    # -- what every agent CLI does ---------------------------------------------

    async def _run(self, trial: TrialInput) -> TrialRecord:
        """The prompt, then each of ``trial.turns`` in the same session, within one
        timeout; the answer is the reply to the last one."""
        workspace = self._workspace(trial)
        timeout = self.spec.timeout or trial.timeout
        # every file step (the harness, the CLI's config, the skills, the stream) runs in a thread: never on the loop
        with phase("setup"):
            harness = await self._new_harness()
        try:
            with phase("setup"):
                staged = await to_thread(self._install, trial, harness)
                plan = self._turns(trial, staged, workspace)

            async def one_turn(n: int, prompt: str, left: float) -> Turn[S]:
                out = await run_cli(
                    CliCall(
                        argv=plan.argv(n),
                        workspace=workspace,
                        harness=harness,
                        env=self._env(harness),
                        timeout=left,
                        stdin_text=prompt,
                        sandbox=self.bwrap,
                        loopback_ports=self._ports(),
                        environment=trial.environment,
                        launchers=self.native_launchers,
                    )
                )
                with phase("events"):
                    stream, notes = await to_thread(self._read_stream, harness, staged)
                self._check(stream, out, timeout)
                if plan.took is not None:
                    plan.took(stream)
                return stream, out, notes

            turns, follow_ups = await converse(trial, timeout, self.what, one_turn, plan.ready)
        finally:
            with phase("cleanup"):
                self._remove_later(harness)
        return await to_thread(self._record, trial, turns, follow_ups)  # the record of a long stream takes CPU: off the loop

    def _read_stream(self, harness: Harness, staged: dict[str, Path]) -> tuple[S, list[str]]:
        """(the turn's stream read and parsed, notes on what was skipped): file work and parsing, run in a thread."""
        events, notes = read_json_lines(harness.stream)
        return self.stream_type(staged=staged).take_all(events), notes

    def _check(self, stream: S, out: Outcome, timeout: float) -> None:
        problem = failure(out, timeout, self.what)
        if problem is not None and (out.timed_out or not self._told(stream)):
            raise problem
        error = self._reported_error(stream)  # the CLI has retried what it retries: not again here
        if error is not None:
            raise error
        if stream.answer() is None:
            raise TargetError(f"{self.what} finished without an answer", retryable=True, kind="malformed")

    def _record(self, trial: TrialInput, turns: list[Turn[S]], follow_ups: list[str]) -> TrialRecord:
        log, trajectory, invoked, latency = turns_log(turns, follow_ups, self._secrets, self._notes_of)
        offered = offered_note(trial, self.spec.inject, self.offered_how)
        if offered:
            log.insert(0, LogEvent(t=0.0, role="info", text=offered))
        usage = Usage()
        for stream, _, _ in turns:
            usage = usage + self._usage_of(stream)
        costs = [self._cost_of(stream) for stream, _, _ in turns]
        last = turns[-1][0]
        last.invoked = invoked
        used, names = self._skill_use(trial, last)
        cost = None if any(c is None for c in costs) else sum(c for c in costs if c is not None)
        return TrialRecord(
            answer=(last.answer() or "").strip(),
            trajectory=trajectory,
            usage=usage,
            cost_usd=cost,
            latency_s=latency,
            skill_used=used,
            skills_invoked=names,
            log=log,
            replies=[(stream.answer() or "").strip() for stream, _, _ in turns],
            skills_offered=offered or None,
        )

    def _skill_use(self, trial: TrialInput, stream: S) -> tuple[bool, list[str]]:
        """(skill_used, skills_invoked): the with-arm's skill when it is in the prompt, else
        what the stream shows the agent loading."""
        return skill_use(trial, self._skill_in_prompt(trial), stream.invoked)
