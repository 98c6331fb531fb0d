"""What a trial runs: one interface for a chat call and for real agents.

The runner hands a :class:`Target` one :class:`TrialInput` (the item, the arm, the system
prompt of that arm, the trial's own workspace) and gets back one :class:`TrialRecord`: the
final answer, the trajectory of tool calls, usage and cost. The runner, the graders and the
reports never branch on the kind of target; a new agent kind is one new module under
``agentsproof/targets/`` registered in :mod:`agentsproof.targets.registry`.

A target that cannot produce an answer raises :class:`TargetError` (an ``LLMError``): the
trial is *errored* with that reason, never failed.

Below them, what every target's targets.yaml entry shares: the file's name, ``${VAR}``
references, paths inside the workspace, and a defined target (:class:`TargetDef`); the
file itself is read by :mod:`agentsproof.targets.config`.
"""

from __future__ import annotations

import abc
import os
import re
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol

from pydantic import AfterValidator, BaseModel

from agentsproof.core.errors import InputError
from agentsproof.core.errors import TargetError as TargetError  # re-exported: targets raise it from here
from agentsproof.core.scrub import register_var
from agentsproof.model.environment import TrialEnvironment
from agentsproof.model.graders import workspace_glob
from agentsproof.model.items import EvalItem, SkillFile
from agentsproof.model.results import Arm, LogEvent, ToolCall, Usage

if TYPE_CHECKING:
    from agentsproof.model.environment import Environment


@dataclass
class TrialInput:
    """What one trial gives a target: the item, the arm, the prompts, the time and the workspace."""

    item: EvalItem
    arm: Arm
    """``with``, ``without`` or ``plugin`` (every skill of the plugin installed)."""
    index: int
    system: str
    """The system prompt of this arm: the skill/agent text, or the generic baseline."""
    prompt: str
    """The user's instruction."""
    timeout: float
    """Seconds the whole trial may take (the target must stop its agent by then)."""
    workspace: Path | None = None
    """A fresh folder for this trial only (agent targets run in it); None for chat trials."""
    skill: SkillFile | None = None
    """The skill/agent for the with-arm; None in the baseline arm."""
    turns: list[str] = field(default_factory=list)
    """Follow-up user messages after ``prompt``, in the same session (a multi-turn trial);
    the answer is the reply to the last one (the record's ``replies`` holds each)."""
    next_turn: Callable[[list[dict[str, str]]], Awaitable[str | None]] | None = None
    """After ``turns``: the simulated user, asked with the conversation so far
    (``{"role", "content"}`` messages) for the next message; None ends the conversation."""
    skills: list[SkillFile] = field(default_factory=list)
    """Every skill installed for this trial (activation suites, the plugin arm); empty: just ``skill``."""
    slot: tuple[str, str, int] | None = None
    """(item id, arm, index) for the response cache's key (``ChatRequest.slot``); set by the runner."""
    environment: TrialEnvironment | None = None
    """The trial's own container (the item has an ``environment:``), holding a copy of
    ``workspace`` at ``environment.workdir``: the target runs its agent there (the runner
    copies the workspace back out afterwards); None: on the host."""

    @property
    def with_skill(self) -> bool:
        """The with-skill arm (not the baseline, not the plugin arm)."""
        return self.arm == "with"


@dataclass
class TrialRecord:
    """What a target reports about one trial."""

    answer: str
    trajectory: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    latency_s: float = 0.0
    cached: bool = False
    skill_used: bool | None = None
    """Whether the agent loaded or read the skill (None: the target cannot tell)."""
    skills_invoked: list[str] | None = None
    """Names of the skills the agent loaded, in order (None: the target cannot tell)."""
    log: list[LogEvent] = field(default_factory=list)
    """Extra session-log events (stderr lines, notes) beside the trajectory."""
    raw_tool_calls: list[dict[str, Any]] = field(default_factory=list)
    """Tool calls as the provider reported them (chat targets), kept for the JSON report."""
    replies: list[str] = field(default_factory=list)
    """The reply to each user message, in order (the last is ``answer``); targets with a
    session fill it, empty means ``[answer]`` (graders with ``turn:`` read it)."""
    skills_offered: str | None = None
    """How the target offered ``TrialInput.skills`` (activation suites, the plugin arm), as
    one line for the trial's record; None: no several skills, or the target does not say."""


async def next_user_message(trial: TrialInput, conversation: list[dict[str, str]]) -> str | None:
    """What the user says after the agent's last reply in ``conversation`` (which starts
    with the prompt): the next of ``trial.turns``, then the simulated user's; None: the
    conversation is over. Every target with a session sends these in that session."""
    sent = sum(1 for m in conversation if m.get("role") == "user") - 1
    if sent < len(trial.turns):
        return trial.turns[sent]
    if trial.next_turn is not None:
        return await trial.next_turn(list(conversation))
    return None


MODEL_ENV = "AGENTSPROOF_MODEL"


def agent_model(flag: str | None, own: str | None) -> tuple[str | None, str]:
    """The model an agent target runs, and where it came from: ``--model``, then
    ``AGENTSPROOF_MODEL``, then the target's own ``model`` setting, else the agent's own
    default. Every agent target calls this, so the order is the same for all of them."""
    import os

    if flag and flag.strip():
        return flag.strip(), "--model"
    env = os.environ.get(MODEL_ENV, "").strip()
    if env:
        return env, MODEL_ENV
    if own and own.strip():
        return own.strip(), "the target's model setting"
    return None, "the agent's own default"


class TargetFactory(Protocol):
    """The constructor every registered target kind has (what
    :func:`agentsproof.targets.registry.build_target` calls; ``tests/test_registries.py``
    checks each kind, in-tree or installed)::

        def __init__(self, name, spec, shown, *, model=None, source="targets.yaml")

    ``name`` is the targets.yaml name; ``spec`` its entry (the class's ``spec_model``) with
    ``${VAR}`` expanded, to run with; ``shown`` the same entry as written, for
    :meth:`Target.describe` and reports (never a secret); ``model`` the run's ``--model``
    (pass it to :func:`agent_model`); ``source`` the targets file, for set-up errors."""

    def __call__(self, name: str, spec: Any, shown: Any, /, *, model: str | None = None, source: str = ...) -> Target:
        """A ready target named ``name`` from its checked targets.yaml entry."""
        ...


TARGET_ARGS = ("name", "spec", "shown")
"""The positional parameters of :class:`TargetFactory`, in order; ``model`` and ``source``
are keyword-only."""


@dataclass(frozen=True)
class NativeLauncher:
    """A CLI installed by npm whose Node wrapper launches a native binary: in a trial's
    container the binary is run, not the wrapper (the image need not have Node). ``wrapper``
    is the file name the CLI's path resolves to (``codex.js``); each of ``globs`` is (how
    many folders up from the wrapper's folder, a glob below it), tried in order."""

    wrapper: str
    globs: tuple[tuple[int, str], ...]

    def binary(self, real: Path) -> Path | None:
        """The native binary beside the wrapper at ``real`` (resolved), or None."""
        for up, pattern in self.globs:
            base = real.parents[up] if len(real.parents) > up else real.parent
            for found in sorted(base.glob(pattern)):
                return found
        return None


class Target(abc.ABC):
    """One kind of thing a trial can run; a registered kind is built as :class:`TargetFactory` says."""

    kind: str = "chat"
    """``chat``, ``copilot``, ``command``, ``http``."""
    spec_model: type[BaseModel] | None = None
    """Its targets.yaml entry (None for the built-in chat call, which has none)."""
    name: str = "chat"
    """The name in targets.yaml (``chat`` for the built-in chat call)."""
    uses_workspace: bool = False
    """True for agents that work in a per-trial folder."""
    runs_in_environment: bool = False
    """True when :meth:`run` runs its agent inside ``TrialInput.environment`` (the trial's
    container) whenever it is given. An item with an ``environment:`` whose target cannot is
    refused when the run is planned (one line, exit 30), never run on the host instead."""
    max_concurrency: int | None = None
    timeout: float | None = None
    """The target's own seconds per trial (targets.yaml ``timeout``), which replaces the
    eval's; None: the eval's ``timeout``."""
    offers_skills: bool = False
    """True when the target offers every skill of ``TrialInput.skills`` (activation suites,
    the plugin arm) to its agent; a target that cannot has those trials errored, never run
    as if the skills were there."""
    native_launchers: tuple[NativeLauncher, ...] = ()
    """The Node wrappers of this kind's CLI whose native binary runs in a trial's container
    instead (:func:`agentsproof.targets.agents.container.native_program`); none by default."""
    agentv_ids: tuple[str, ...] = ()
    """agentv's provider kinds (the ``id`` of an ``.agentv/providers.yaml`` entry) this kind
    runs as its built-in target, e.g. ``copilot-cli`` for ``copilot``; none by default."""

    def loopback_ports(self) -> list[int]:
        """Host loopback ports its agent must reach from inside a trial's container (the
        model endpoint): relayed into a ``--network none`` container; none by default."""
        return []

    def container_mounts(self) -> list[Path]:
        """Host folders its agent needs inside a trial's container (e.g. the agent CLI's own
        install), mounted read-only at the same path; none by default."""
        return []

    async def prepare(self, trial: TrialInput) -> None:
        """Set the workspace up before the agent starts (e.g. install the with-arm's skill).

        Runs before the runner snapshots the workspace, so what it writes is not counted as
        files the agent created. A problem raises :class:`TargetError` (errored trial)."""
        return None

    @abc.abstractmethod
    async def run(self, trial: TrialInput) -> TrialRecord:
        """Run one trial; raise :class:`TargetError` (or another ``LLMError``) for an errored one."""

    def describe(self) -> dict[str, Any]:
        """What determines this target's results (goes into the journal fingerprint and the
        report's settings). No secrets: tokens are named by their env var, never by value."""
        return {"target": self.name, "target_type": self.kind}

    async def aclose(self) -> None:
        """Release what the target holds (a client, a server); nothing by default."""
        return None


TARGETS_FILE = "targets.yaml"
MAX_TARGET_TIMEOUT = 86_400.0
"""One day: the longest timeout a target may set."""
ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
"""``${NAME}``: an environment variable, expanded when the run starts."""


def relative(value: str | None) -> str | None:
    """``value`` checked as a path or glob inside the workspace (ValueError when it leaves it); None stays None."""
    if value is None:
        return None
    try:
        return workspace_glob(value)
    except ValueError as exc:
        raise ValueError(str(exc)) from None


def http_url(value: str) -> str:
    """``value`` when it is an http(s) URL a client can connect to; ValueError saying what
    is wrong (without quoting it: once ``${VAR}`` is expanded it may hold a secret).
    A value still holding a ``${VAR}`` reference is checked once it is expanded."""
    from urllib.parse import urlsplit

    if ENV_REF.search(value):
        return value
    if any(ch.isspace() or not ch.isprintable() for ch in value):
        raise ValueError("is not a URL: it holds a space or a control character")
    try:
        parts = urlsplit(value)
        scheme, host, port = parts.scheme.lower(), parts.hostname, parts.port
    except ValueError as exc:
        what = str(exc)
        if "range" in what:
            raise ValueError(f"has a port outside 1..65535 ({what})") from None
        raise ValueError(f"is not a valid URL ({what})") from None
    if scheme not in ("http", "https"):
        raise ValueError("is not an http:// or https:// URL")
    if not host:
        raise ValueError("has no host (expected http://HOST[:PORT]/...)")
    if port is not None and not 1 <= port <= 65535:
        raise ValueError(f"has port {port}, outside 1..65535")
    return value


def env_mapping(env: dict[str, str]) -> dict[str, str]:
    """A target's ``env``, checked at load: every key a name a process environment can hold
    (not empty, no ``=``, no NUL) and no value with a NUL (which no process can be given).
    A FieldError names the key, never the value."""
    from agentsproof.model.graders import FieldError

    for key, value in env.items():
        if not key or "=" in key or "\x00" in key:
            shown = key.replace("\x00", "\\0") if key else "(empty)"
            raise FieldError(shown, "is not an environment variable name (it is empty or holds '=' or a NUL)")
        if "\x00" in value:
            raise FieldError(key, "holds a NUL character, which no environment variable can")
    return env


EnvMapping = Annotated[dict[str, str], AfterValidator(env_mapping)]
"""A target's ``env`` field, checked by :func:`env_mapping`."""


@dataclass(frozen=True)
class TargetDef:
    """A target as defined in targets.yaml (or built in), its spec not yet expanded."""

    name: str
    spec: Any
    """The spec as written (``${VAR}`` references unexpanded): safe to show."""
    source: str
    """The file it came from (or 'built-in')."""
    folder: Path | None = None
    """The folder of that file (``{here}``); None for the built-in targets."""
    environment: Environment | None = None
    """Its ``environment:`` (the Docker image its trials run in when the eval gives none), resolved."""

    def expanded(self) -> Any:
        """The spec with ``${VAR}`` and ``{here}`` replaced; InputError naming a missing
        variable, or a field that is invalid once expanded (naming the variables, never
        their values). Every expanded value is registered with the scrubber."""
        from pydantic import ValidationError

        from agentsproof.core.validation import format_validation_error

        written = self.spec.model_dump(by_alias=True)
        data = _expand(written, self.source, self.name, self.folder)
        try:
            # ``expanded``: the checks that need the run's environment (a key's variable set)
            return type(self.spec).model_validate(data, context={"expanded": True})
        except ValidationError as exc:
            field, msg = format_validation_error(exc)
            raise InputError(self.source, f"{self.name}.{field}", _expanded_reason(written, field, msg)) from None


def _expanded_reason(written: dict[str, Any], field: str, msg: str) -> str:
    """Why a field is invalid after expansion, with no expanded value in it."""
    from agentsproof.core.scrub import scrub

    value: Any = written
    for part in field.replace("[", ".").replace("]", "").split("."):
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            value = None
    names = sorted(set(ENV_REF.findall(str(value if value is not None else written))))
    values = [os.environ.get(n, "") for n in names]
    reason = " ".join(scrub(msg, values).split())
    for v in values:  # short values too, where the message quotes them: this line shows none of them
        if v and v.strip():
            for shown in (repr(v), repr(v.strip()), f'"{v.strip()}"'):
                reason = reason.replace(shown, "***")
    refs = ", ".join("${" + n + "}" for n in names)
    return f"is not valid once {refs} is expanded: {reason}" if refs else reason


def _expand(value: Any, source: str, field: str, here: Path | None) -> Any:
    if isinstance(value, str):

        def sub(m: re.Match[str]) -> str:
            name = m.group(1)
            if name not in os.environ:
                raise InputError(source, field, f"environment variable {name} is not set")
            register_var(name, os.environ[name])
            return os.environ[name]

        text = ENV_REF.sub(sub, value)
        return text.replace("{here}", str(here)) if here is not None else text
    if isinstance(value, dict):
        return {k: _expand(v, source, f"{field}.{k}", here) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, source, f"{field}[{i}]", here) for i, v in enumerate(value)]
    return value


def agentv_entries(near: Path, order: tuple[str, str] = ("providers", "targets")) -> Iterator[tuple[Path, int, dict[str, Any]]]:
    """Every entry of agentv's own target files near an eval, nearest folder first: ``(file,
    index, entry)`` from ``.agentv/providers.yaml`` and ``.agentv/targets.yaml`` in ``near``'s
    folder, then in each folder above it. ``order`` says which of agentv's two spellings wins
    (the file read first in a folder, the key read first in a file holding both). InputError
    naming a file that holds no list of providers or targets."""
    from agentsproof.core.inputs import display
    from agentsproof.core.validation import read_yaml

    folder = near.resolve() if near.is_dir() else near.resolve().parent
    for parent in [folder, *folder.parents]:
        for stem in order:
            file = parent / ".agentv" / f"{stem}.yaml"
            if not file.is_file():
                continue
            data = read_yaml(file)
            if isinstance(data, dict):
                data = data.get(order[0], data.get(order[1]))
            if not isinstance(data, list):
                raise InputError(display(file), None, "expected a list of providers (id, label, ...) or targets (name, provider, ...)")
            for i, entry in enumerate(e for e in data if isinstance(e, dict)):
                yield file, i, entry
