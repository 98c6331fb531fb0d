"""The command target: any CLI agent (Claude Code ``-p``, codex, aider, a script) run in the
trial's workspace.

**Command line.** ``command`` is an argv list, run without a shell, with the workspace as
the current folder. In every element ``{prompt}`` becomes the instruction, ``{workspace}``
the workspace's absolute path, ``{skill_file}`` the installed skill file (empty in the
baseline arm) and ``{model}`` the run's ``--model``, else ``AGENTSPROOF_MODEL`` (or empty). When no element holds
``{prompt}``, or ``stdin: true``, the instruction is written on stdin (else stdin is empty).

**With-arm.** :meth:`CommandTarget.prepare` (before the runner's snapshot, so it never
counts as the agent's work) installs the skill/agent text in the workspace at
``skill_path`` (``{name}`` = its name). A skill whose source is a ``SKILL.md`` in its own
folder gets that folder's other files beside it, by the rule of
:func:`agentsproof.model.skillfolder.folder_files` (regular files, no symlinks or dot-files,
bounded). Nothing is ever written through a symlink, and a file already at that path
(from the seed) is an errored trial. The baseline arm runs the same command in the same
kind of workspace with nothing installed.

**Environment.** agentsproof's own environment, plus ``env`` from targets.yaml, plus:
``AGENTSPROOF_WORKSPACE`` (the workspace), ``AGENTSPROOF_ARM`` (``with``/``without``),
``AGENTSPROOF_TRACE_FILE`` (where a trace may be written) and, in the with-arm only,
``AGENTSPROOF_SKILL_FILE`` (the installed file, absolute) and ``AGENTSPROOF_SKILL_NAME``;
bun's folder at the end of ``PATH`` and our ``agentv`` module at the end of ``NODE_PATH``
(:mod:`agentsproof.core.bun`: agentv's ``cli`` agents run ``bun run x.ts``).

**Answer.** stdout (UTF-8, undecodable bytes replaced, first :data:`MAX_OUTPUT_BYTES`,
stripped), or the ``answer_file`` in the workspace. An empty answer is an answer. A
non-zero exit, a missing answer file and a timeout are errored trials; their one-line
reasons carry the last lines of stderr with every ``env`` value and ``${VAR}`` value
masked. The last stderr lines also go into the session log.

**Several skills** (``trial.skills``: activation suites, the plugin arm): each is installed
at ``skill_path`` with its own ``{name}``; ``skills_invoked`` is the installed skills the
trace names as loaded (``{"skill": "<name>"}`` lines, see :mod:`agentsproof.targets.command.trace`),
in order; None when the agent wrote no trace.

**Trace.** Each trial has a private harness folder outside the workspace (so nothing
agentsproof writes shows up as a file the agent created). Without ``trace_file``,
``AGENTSPROOF_TRACE_FILE`` points into it; with ``trace_file`` it is that file in the
workspace (which then does count as a created file). The format is in
:mod:`agentsproof.targets.command.trace`; ``skill_used`` is None when no trace was written (the
baseline arm, which has no skill installed, is always False).

**Processes.** The agent runs in its own process group: see :mod:`agentsproof.core.procgroup`.

**Sandbox.** The command runs under bubblewrap unless the target says ``sandbox: false``
(then the run warns once that the agent is unconfined): see
:mod:`agentsproof.isolation.sandbox` for what is and is not reachable. Only the command's
own arguments (never the filled ``{prompt}``) can make a path under /tmp visible in it.
"""

from __future__ import annotations

import os
import re
import signal
import tempfile
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from agentsproof.core.errors import IsolationError
from agentsproof.core.notice import warn
from agentsproof.core.procgroup import MAX_OUTPUT_BYTES, Outcome, run_group
from agentsproof.core.rmtree import remove_tree
from agentsproof.core.scrub import clip, register, scrub
from agentsproof.core.units import seconds
from agentsproof.model.graders import FieldError, Strict
from agentsproof.model.results import LogEvent
from agentsproof.targets.base import MAX_TARGET_TIMEOUT, TARGETS_FILE, EnvMapping, Target, TargetError, TrialInput, TrialRecord, agent_model, relative
from agentsproof.targets.command.trace import parse_trace, read_bounded, skills_in_trace

if TYPE_CHECKING:
    from agentsproof.model.items import SkillFile

REASON_CHARS = 300
MAX_SKILL_BYTES = 50 * 1024 * 1024
"""Of the skill folder's files copied beside the installed skill."""
DEFAULT_TRACE_NAME = "trace.jsonl"
_PLACEHOLDER = re.compile(r"\{(prompt|workspace|skill_file|model)\}")
ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SECRET_KEY = re.compile(r"key|token|secret|passw|pwd|auth|credential|cookie|bearer", re.I)


class CommandTargetSpec(Strict):
    """Any CLI agent, run in the trial's workspace."""

    type: Literal["command"]
    command: list[Annotated[str, Field(min_length=1)]] = Field(
        min_length=1, description="argv; '{prompt}' is replaced by the instruction (else it goes on stdin)."
    )
    stdin: bool = Field(False, strict=True, description="Send the instruction on stdin even when argv has '{prompt}'.")
    skill_path: str = Field(
        ".agents/skills/{name}/SKILL.md",
        description="Where the with-arm's skill file is installed in the workspace ('{name}' = the skill's name).",
    )
    answer_file: str | None = Field(None, description="Read the answer from this workspace file instead of stdout.")
    trace_file: str | None = Field(
        None, description="A JSONL file of tool calls the agent writes (relative to the workspace); env AGENTSPROOF_TRACE_FILE names it."
    )
    env: EnvMapping = Field(default_factory=dict, description="Extra environment variables ('${VAR}' allowed).")
    timeout: float | None = Field(None, gt=0, le=MAX_TARGET_TIMEOUT, allow_inf_nan=False, description="Seconds; default: the eval's.")
    sandbox: bool = Field(
        True,
        strict=True,
        description="Run under bubblewrap (the default): workspace read-write, the rest read-only, loopback only. false: unconfined.",
    )
    loopback_ports: list[Annotated[int, Field(ge=1, le=65535, strict=True)]] = Field(
        default_factory=list,
        max_length=32,
        description="With sandbox: host ports on 127.0.0.1 the agent may still reach (e.g. a local model server), as 127.0.0.1:PORT inside.",
    )

    @field_validator("skill_path", "answer_file", "trace_file")
    @classmethod
    def _inside(cls, value: str | None) -> str | None:
        return relative(value)

    @field_validator("command")
    @classmethod
    def _no_nul(cls, value: list[str]) -> list[str]:
        for i, arg in enumerate(value):
            if "\x00" in arg:
                raise FieldError(f"[{i}]", "holds a NUL character, which no command argument can")
        return value

    @model_validator(mode="after")
    def _ports_need_sandbox(self) -> CommandTargetSpec:
        if self.loopback_ports and not self.sandbox:
            raise FieldError("loopback_ports", "only applies in the sandbox, and this target says 'sandbox: false' (every port is reachable)")
        if len(set(self.loopback_ports)) != len(self.loopback_ports):
            raise FieldError("loopback_ports", "lists a port twice")
        return self


class CommandTarget(Target):
    """Any agent run as a command line in the trial's workspace, the prompt on stdin or in its arguments."""

    spec_model = CommandTargetSpec
    """Its targets.yaml entry (``type: command``)."""
    kind = "command"
    uses_workspace = True
    runs_in_environment = True
    offers_skills = True

    def __init__(self, name: str, spec: CommandTargetSpec, shown: CommandTargetSpec, *, model: str | None = None, source: str = TARGETS_FILE):
        """``spec`` has ``${VAR}`` expanded; ``shown`` is as written (for reports).
        ``source`` names the targets file in a sandbox error."""
        self.name = name
        self.spec = spec
        self.shown = shown
        self.model, self.model_source = agent_model(model, None)
        self.timeout = spec.timeout
        self.bwrap = None
        if spec.sandbox:
            from agentsproof.isolation.sandbox import find_bwrap

            self.bwrap = find_bwrap(source, name)
        self._unconfined_note = None if spec.sandbox else source
        self._secrets = _secret_values(spec, shown)
        # masked everywhere: ${VAR} values (registered as they were expanded) and the literal
        # values of secret-looking env keys; every env value is masked in this target's errors
        register(*(v for k, v in spec.env.items() if _SECRET_KEY.search(k)))

    def describe(self) -> dict[str, Any]:
        """The command's settings as written (``${VAR}`` unexpanded); env variables by name only."""
        s = self.shown
        out: dict[str, Any] = {
            "target": self.name,
            "target_type": self.kind,
            "command": list(s.command),
            "stdin": s.stdin,
            "skill_path": s.skill_path,
            "answer_file": s.answer_file,
            "trace_file": s.trace_file,
            "timeout": s.timeout,
            "sandbox": s.sandbox,
            "env": sorted(s.env),
        }
        if s.loopback_ports:
            out["loopback_ports"] = list(s.loopback_ports)
        if any("{model}" in c for c in s.command):
            out["model"], out["model_source"] = self.model or "", self.model_source
        return out

    def loopback_ports(self) -> list[int]:
        """``loopback_ports``: in a trial's container as in the sandbox, the host ports it may reach at 127.0.0.1."""
        return list(self.spec.loopback_ports)

    async def prepare(self, trial: TrialInput) -> None:
        """Install the with-arm's skill in the workspace (nothing in the baseline arm); with
        ``trial.skills`` (activation, the plugin arm) every one of them, each at ``skill_path``."""
        if trial.workspace is None:
            return
        skills = _to_install(trial)
        try:
            for skill in skills:
                install_skill(skill, trial.workspace.resolve(), self.spec.skill_path)
        except OSError as exc:
            raise TargetError(f"cannot install the skill: {exc.strerror or exc}") from None

    async def run(self, trial: TrialInput) -> TrialRecord:
        """One trial (the first one notes an unconfined target); a TargetError's reason has the target's secrets masked."""
        if self._unconfined_note is not None:  # said once, when its first trial starts
            _say_unconfined(self.name, self._unconfined_note)
            self._unconfined_note = None
        try:
            return await self._run(trial)
        except (TargetError, IsolationError) as err:  # its reason may quote stderr or a path: mask the secrets
            raise type(err)(self._scrub(str(err)), kind=err.kind) from None

    async def _run(self, trial: TrialInput) -> TrialRecord:
        if trial.workspace is None:
            raise TargetError("the command target needs a workspace")
        workspace = trial.workspace.resolve()
        timeout = self.spec.timeout or trial.timeout
        skill = skill_file(trial.skill, workspace, self.spec.skill_path) if trial.skill is not None else None
        first = [skill_file(s, workspace, self.spec.skill_path) for s in _to_install(trial)[:1]]
        if first and not (first[0].exists() or first[0].is_symlink()):
            await self.prepare(trial)  # a caller that skipped prepare()
        if trial.environment is not None:  # the item's container replaces the sandbox
            from agentsproof.targets.command.container import run_in_container

            return await run_in_container(self.spec, self.model, _PLACEHOLDER, self._record, trial, timeout)
        try:
            harness = Path(tempfile.mkdtemp(prefix="agentsproof-trial-"))
        except OSError as exc:  # e.g. a full or unwritable temp folder
            raise TargetError(f"cannot prepare the trial in {tempfile.gettempdir()}: {exc.strerror or exc}") from None
        bridge = None
        try:
            try:
                trace = workspace / self.spec.trace_file if self.spec.trace_file else harness / DEFAULT_TRACE_NAME
                trace.parent.mkdir(parents=True, exist_ok=True)  # an empty folder never shows as a change
                argv, stdin_text = self._argv(trial.prompt, workspace, skill)
                env = self._env(trial, workspace, trace, skill)
                if self.bwrap is not None:
                    from agentsproof.isolation.sandbox import LoopbackBridge, bwrap_argv
                    from agentsproof.isolation.workspace import covered_root

                    bridge = LoopbackBridge(harness, self.spec.loopback_ports)
                    sockets = await bridge.start()
                    argv = bwrap_argv(
                        self.bwrap,
                        workspace=workspace,
                        workspaces_root=covered_root(workspace),
                        harness=harness,
                        argv=argv,
                        sockets=sockets,
                        named=self._named(),
                    )
            except OSError as exc:
                raise TargetError(f"cannot prepare the trial: {exc.strerror or exc}") from None
            out = await run_group(argv, cwd=workspace, env=env, stdin_text=stdin_text, timeout=timeout)
            return self._record(out, trial, workspace, trace, skill, timeout)
        finally:
            if bridge is not None:
                await bridge.aclose()
            left = remove_tree(harness)  # the agent could write there: never through a symlink
            if left:
                warn(f"trial folder {left}")

    def _argv(self, prompt: str, workspace: Path, skill: Path | None) -> tuple[list[str], str | None]:
        values = {"prompt": prompt, "workspace": str(workspace), "skill_file": str(skill or ""), "model": self.model or ""}
        argv = [_PLACEHOLDER.sub(lambda m: values[m.group(1)], arg) for arg in self.spec.command]
        on_stdin = self.spec.stdin or not any("{prompt}" in arg for arg in self.spec.command)
        return argv, (prompt if on_stdin else None)

    def _named(self) -> list[str]:
        """The command's arguments that name paths by themselves: none with a placeholder."""
        return [arg for arg in self.spec.command if not _PLACEHOLDER.search(arg)]

    def _env(self, trial: TrialInput, workspace: Path, trace: Path, skill: Path | None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("AGENTSPROOF_SKILL_FILE", "AGENTSPROOF_SKILL_NAME")}
        env.update(self.spec.env)
        env.update(AGENTSPROOF_WORKSPACE=str(workspace), AGENTSPROOF_ARM=trial.arm, AGENTSPROOF_TRACE_FILE=str(trace))
        if skill is not None and trial.skill is not None:
            env.update(AGENTSPROOF_SKILL_FILE=str(skill), AGENTSPROOF_SKILL_NAME=trial.skill.name)
        from agentsproof.core.bun import runtime_env

        return runtime_env(env)  # agentv's cli agents: `bun run x.ts` finds bun and our agentv module

    def _record(self, out: Outcome, trial: TrialInput, workspace: Path, trace: Path, skill: Path | None, timeout: float) -> TrialRecord:
        if out.timed_out:
            raise TargetError(f"agent timed out after {seconds(timeout)}" + _tail(out.stderr), kind="timeout")
        if out.returncode != 0:
            what = f"agent was killed by signal {_signal_name(-out.returncode)}" if out.returncode < 0 else f"agent exited with code {out.returncode}"
            raise TargetError(what + _tail(out.stderr))
        log = [LogEvent(t=t, role="info", text=self._scrub("stderr: " + line)) for t, line in out.stderr]
        log += [LogEvent(t=out.latency_s, role="info", text=note) for note in out.notes]
        if self.spec.answer_file:
            data = read_bounded(workspace / self.spec.answer_file, workspace)
            if data is None:
                raise TargetError(f"the agent wrote no answer file {self.spec.answer_file!r} (or it is not a regular file in the workspace)")
            answer_bytes, cut = data
        else:
            answer_bytes, cut = out.stdout, out.stdout_cut
        if cut:
            log.append(LogEvent(t=out.latency_s, role="info", text=f"the answer was cut at {MAX_OUTPUT_BYTES:,} bytes"))
        skill_name = trial.skill.name if trial.skill else (trial.item.skill.name if trial.item.skill else trial.item.name)
        mentions = [skill.relative_to(workspace).as_posix(), str(skill)] if skill else []
        steps, used, notes = parse_trace(trace, workspace, mentions, skill_name)
        if skill is None:
            used = False  # the baseline: no skill was installed, so none can have been used
        installed = [s.name for s in _to_install(trial)]
        loaded = skills_in_trace(trace, workspace)
        invoked = [n for n in loaded if n in installed] if loaded is not None else ([] if not installed else None)
        if trial.skills and trial.skill is not None:
            used = trial.skill.name in (invoked or [])
        log += [LogEvent(t=out.latency_s, role="info", text=note) for note in notes]
        return TrialRecord(
            answer=answer_bytes.decode("utf-8", "replace").strip(), trajectory=steps, latency_s=out.latency_s, skill_used=used, skills_invoked=invoked, log=log
        )

    def _scrub(self, text: str) -> str:
        return scrub(text, self._secrets)

    async def aclose(self) -> None:
        """Nothing to close: each trial's process ends with it."""
        return None


def _say_unconfined(name: str, source: str) -> None:
    """Once per target (once per run, at its first trial): this agent runs outside the sandbox."""
    warn(f"target {name!r} ({source}) runs unconfined ('sandbox: false'): the agent can read, change and reach everything you can")


def _secret_values(spec: CommandTargetSpec, shown: CommandTargetSpec) -> list[str]:
    """Values that may be secrets: every ``env`` value and every ``${VAR}`` a field names."""
    found = set(spec.env.values())
    for text in [*shown.command, *shown.env.values()]:
        found.update(os.environ.get(name, "") for name in ENV_REF.findall(text))
    return sorted((v for v in found if len(v) >= 4), key=len, reverse=True)


def _tail(stderr: deque[tuple[float, str]]) -> str:
    lines = [line for _t, line in stderr if line.strip()][-3:]
    if not lines:
        return ""
    text = " ".join(scrub(" | ".join(lines)).split())  # masked before the cut: no fragment survives it
    return ": " + clip(text, REASON_CHARS + 1, tail=True)


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return str(num)


# ------------------------------------------------------------------ the skill in the workspace


def _to_install(trial: TrialInput) -> list[Any]:
    """The skills this trial installs: ``trial.skills`` when set, else the with-arm's skill."""
    if trial.skills:
        return list(trial.skills)
    return [trial.skill] if trial.skill is not None else []


def skill_file(skill: SkillFile, workspace: Path, skill_path: str) -> Path:
    """Where ``skill`` goes in ``workspace`` (absolute); TargetError when that leaves it."""
    rel = skill_path.replace("{name}", skill.name)
    dest = Path(os.path.normpath(workspace / rel))
    if not dest.is_relative_to(workspace) or dest == workspace:
        raise TargetError(f"skill_path {rel!r} leaves the workspace")
    return dest


def _write_new(dest: Path, data: bytes, workspace: Path) -> bool:
    """Write ``data`` at ``dest`` inside ``workspace``, creating folders, never through a
    symlink; False when something is already there."""
    here = workspace
    for part in dest.relative_to(workspace).parts[:-1]:
        here = here / part
        if here.is_symlink() or (here.exists() and not here.is_dir()):
            raise TargetError(f"cannot install the skill: {here.relative_to(workspace).as_posix()!r} in the workspace is not a folder")
        here.mkdir(exist_ok=True)
    if dest.exists() or dest.is_symlink():
        return False
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return True


def install_skill(skill: SkillFile, workspace: Path, skill_path: str) -> Path:
    """Put the skill file (and its folder's files, for a SKILL.md) at ``skill_path``."""
    dest = skill_file(skill, workspace, skill_path)
    if not _write_new(dest, skill.text.encode("utf-8"), workspace):
        raise TargetError(f"cannot install the skill: the workspace already has {dest.relative_to(workspace).as_posix()!r}")
    budget = MAX_SKILL_BYTES
    for rel, path in skill.files:
        data = read_bounded(path, path.parent, limit=budget)
        if data is None or data[1]:
            continue
        budget -= len(data[0])
        _write_new(dest.parent / rel, data[0], workspace)
    return dest
