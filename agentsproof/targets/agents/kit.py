"""The helpers every agent target (``claude-code``, ``codex`` and the ACP agents) is built from.

**A hermetic home per trial.** Each trial gets a private harness folder outside its
workspace: ``home/`` (``HOME`` and the ``XDG_*`` folders point into it), ``config/`` (the
CLI's own config folder: ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``), ``tmp/`` (``TMPDIR``) and
the file the CLI's JSON stream is written to. Nothing of the user's home reaches the
agent: no settings, no login, no skills, plugins, instructions or memory; the folder is
deleted after the trial. The environment the CLI sees is built, not inherited: only
:data:`PASSED_ENV` (locale, PATH, certificates, proxies) comes from agentsproof's own, then
each target adds its credentials and settings, then the targets.yaml ``env``.

**Skills** are staged with :func:`stage_skills`: ``<folder>/<name>/SKILL.md`` plus the
other files of the skill's folder (regular files, bounded), front matter added when the
file has none (the CLIs skip a SKILL.md without a name and description). The skills of
``TrialInput.skills`` (activation suites, the plugin arm) are always staged, whatever
``inject`` says; :func:`offered_note` is the trial's record of how.

**Events.** Each CLI's JSON stream is read by its own :class:`EventStream` (one event at
a time). One trial, its turns and its record are :mod:`agentsproof.targets.agents.cli_trial`'s.

**The base class** of them all, over these helpers, is
:class:`agentsproof.targets.agents.base.AgentBase`.

**Sandbox.** :func:`sandboxed` puts a command line under bubblewrap with the loopback bridge
of its API's ports, for a CLI's run and an ACP agent's process alike.

**Running.** :func:`run_cli` runs the CLI in the workspace in its own process group
(:mod:`agentsproof.core.procgroup`), optionally under bubblewrap
(:mod:`agentsproof.isolation.sandbox`) or in the trial's container
(:mod:`agentsproof.targets.agents.container`), with stdout redirected into the harness so a long
stream is never cut at the process-group's output cap; :func:`read_json_lines` reads it.
"""

from __future__ import annotations

import abc
import json
import os
import shutil
import tempfile
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import urlsplit

from agentsproof.core.phases import phase
from agentsproof.core.procgroup import Outcome, run_group
from agentsproof.core.units import seconds
from agentsproof.model.items import SkillFile
from agentsproof.model.results import ToolCall
from agentsproof.model.skillfolder import split_frontmatter
from agentsproof.targets.base import NativeLauncher, TargetError, TrialInput

if TYPE_CHECKING:
    from agentsproof.isolation.sandbox import Bwrap, LoopbackBridge
    from agentsproof.model.environment import TrialEnvironment

PASSED_ENV = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TERM",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
)
"""The only variables of agentsproof's environment every agent CLI inherits."""
MAX_STAGED_BYTES = 50 * 1024 * 1024
"""Of a skill folder's files copied with it (its SKILL.md always)."""
MAX_STREAM_BYTES = 64 * 1024 * 1024
"""Of the CLI's JSON stream read back; the rest is dropped (a note says so)."""
REASON_CHARS = 300
STREAM_FILE = "stream.jsonl"


@dataclass
class Harness:
    """The private folders of one trial (see the module docstring)."""

    root: Path
    home: Path
    config: Path
    tmp: Path
    stream: Path

    @classmethod
    def create(cls, prefix: str) -> Harness:
        """New private folders for one trial, in a fresh temporary folder named ``prefix...``."""
        root = Path(os.path.realpath(tempfile.mkdtemp(prefix=prefix)))
        home, config, tmp = root / "home", root / "config", root / "tmp"
        for folder in (home, config, tmp):
            folder.mkdir(mode=0o700)
        return cls(root=root, home=home, config=config, tmp=tmp, stream=root / STREAM_FILE)

    def env(self) -> dict[str, str]:
        """The base environment: :data:`PASSED_ENV`, and every home-like variable in here."""
        env = {k: v for k, v in os.environ.items() if k in PASSED_ENV}
        env.setdefault("PATH", os.defpath)
        env.update(
            HOME=str(self.home),
            USERPROFILE=str(self.home),
            TMPDIR=str(self.tmp),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            XDG_DATA_HOME=str(self.home / ".local" / "share"),
            XDG_STATE_HOME=str(self.home / ".local" / "state"),
        )
        return env

    def remove(self) -> None:
        """Delete the trial's folders (whatever is left of them)."""
        shutil.rmtree(self.root, ignore_errors=True)


def find_program(env_name: str, program: str, what: str, hint: str) -> tuple[str | None, str]:
    """(path of ``program``, '') or (None, what is wrong): ``$env_name`` when set (it must be
    an executable file), else ``program`` on PATH. ``what`` names it in the message."""
    explicit = os.environ.get(env_name)
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file() or not os.access(path, os.X_OK):
            return None, f"{env_name}={explicit} is not an executable file; {hint}"
        return str(path), ""
    found = shutil.which(program)
    return (found, "") if found else (None, f"{what} was not found; {hint}")


def installed_skills(trial: TrialInput) -> list[SkillFile]:
    """The skills a trial installs: ``trial.skills`` when given (either arm), else the
    with-arm's ``trial.skill`` (a skill, not an agent); none in a plain baseline."""
    if trial.skills:
        return [s for s in trial.skills if s.kind != "agent"]
    if trial.with_skill and trial.skill is not None and trial.skill.kind != "agent":
        return [trial.skill]
    return []


def watched_skill(trial: TrialInput) -> str | None:
    """The name ``skill_used`` is about: the trial's skill, else the item's; None when the
    trial installs nothing."""
    if trial.skill is not None:
        return trial.skill.name
    if not installed_skills(trial):
        return None
    return trial.item.skill.name if trial.item.skill is not None else trial.item.name


def offered_note(trial: TrialInput, inject: str, how: str) -> str:
    """What the trial log says about the skills of ``trial.skills`` (activation suites, the
    plugin arm), ``how`` the target offered them; empty when the trial has none."""
    names = [s.name for s in installed_skills(trial)] if trial.skills else []
    if not names:
        return ""
    shown = ", ".join(names[:10]) + (f", … ({len(names) - 10} more)" if len(names) > 10 else "")
    note = f"offered {len(names)} skill{'s' if len(names) != 1 else ''} ({shown}) {how}"
    if inject == "system":
        note += "; inject: system puts one skill in the system prompt, so several are staged as skills"
    return note


def stage_skills(skills: list[SkillFile], folder: Path) -> dict[str, Path]:
    """Write each skill as ``folder/<name>/SKILL.md`` with its folder's files; name → its folder.
    Every write goes through :mod:`agentsproof.core.safepath`: a name that is not one plain
    path component (``/V/pwn``, ``../x``) is refused, and nothing is written through a link."""
    from agentsproof.core import safepath

    out: dict[str, Path] = {}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for skill in skills:
            why = safepath.name_problem(skill.name)
            if why is not None:
                raise TargetError(f"cannot stage the skill: its name {why}")
            dest = folder / skill.name
            if os.path.lexists(dest):
                continue  # the same name twice: the first one wins
            safepath.make_dir(folder, skill.name)
            total = 0
            for rel, path in skill.files:
                if path.is_symlink() or not path.is_file():
                    continue
                total += path.stat().st_size
                if total > MAX_STAGED_BYTES:
                    break
                try:
                    safepath.write_file(dest, rel, safepath.read_file(path, MAX_STAGED_BYTES), exist="fail")
                except (safepath.UnsafePath, FileExistsError):
                    continue  # a path that leaves the skill's folder, or a link met on the way
            safepath.write_file(dest, "SKILL.md", with_front_matter(skill).encode("utf-8"))
            out[skill.name] = dest
    except OSError as exc:
        raise TargetError(f"could not stage the skill: {exc.strerror or exc}") from None
    return out


def with_front_matter(skill: SkillFile) -> str:
    """The skill's text, with ``name``/``description`` front matter added where missing."""
    import yaml

    meta, body = split_frontmatter(skill.text)
    if isinstance(meta.get("name"), str) and isinstance(meta.get("description"), str):
        return skill.text
    description = meta.get("description") if isinstance(meta.get("description"), str) else _first_line(body) or skill.name
    head = {**meta, "name": meta["name"] if isinstance(meta.get("name"), str) else skill.name, "description": description}
    return "---\n" + yaml.safe_dump(head, sort_keys=False, allow_unicode=True) + "---\n" + body


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:200]
    return ""


def loopback_port(url: str | None) -> int | None:
    """The port of a ``http(s)://127.0.0.1|localhost|[::1]:PORT`` URL, else None."""
    if not url:
        return None
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    return port if parts.hostname in ("127.0.0.1", "localhost", "::1") else None


@dataclass
class CliCall:
    """How :func:`run_cli` starts a CLI."""

    argv: list[str]
    workspace: Path
    harness: Harness
    env: dict[str, str]
    timeout: float
    stdin_text: str | None = None
    sandbox: Bwrap | None = None
    """The bubblewrap to run under, or None."""
    loopback_ports: list[int] = field(default_factory=list)
    launchers: tuple[NativeLauncher, ...] = ()
    """The target kind's ``native_launchers``: in a container its native binary runs, not its Node wrapper."""
    environment: TrialEnvironment | None = None
    """The trial's container (an :class:`agentsproof.isolation.container.Container`):
    the CLI runs there instead (:mod:`agentsproof.targets.agents.container`), not under ``sandbox``."""


async def sandboxed(sandbox: Bwrap, workspace: Path, harness: Harness, argv: list[str], ports: list[int], named: list[str]) -> tuple[list[str], LoopbackBridge]:
    """(``argv`` under bubblewrap, the started :class:`~agentsproof.isolation.sandbox.LoopbackBridge`
    of ``ports``, which the caller closes): the workspace writable, the harness too, no
    network but those loopback ports. Only the paths ``named`` may be bound back in under a
    masked /tmp (the program, the entry's own arguments; never the prompt or other
    filled-in text, which could name a host path under /tmp)."""
    from agentsproof.isolation.sandbox import LoopbackBridge, bwrap_argv
    from agentsproof.isolation.workspace import covered_root

    bridge = LoopbackBridge(harness.root, sorted(set(ports)))
    try:
        with phase("sandbox"):
            sockets = await bridge.start()
    except OSError as exc:
        raise TargetError(f"cannot prepare the sandbox: {exc.strerror or exc}") from None
    wrapped = bwrap_argv(sandbox, workspace=workspace, workspaces_root=covered_root(workspace), harness=harness.root, argv=argv, sockets=sockets, named=named)
    return wrapped, bridge


async def run_cli(settings: CliCall) -> Outcome:
    """Run the CLI with stdout going to ``harness.stream``; the outcome's stdout is empty."""
    s = settings
    if s.environment is not None:
        from agentsproof.targets.agents.container import run_in_container

        return await run_in_container(
            s.environment,
            s.argv,
            workspace=s.workspace,
            harness_root=s.harness.root,
            stream_file=s.harness.stream,
            env=s.env,
            timeout=s.timeout,
            stdin_text=s.stdin_text,
            launchers=s.launchers,
        )
    argv = ["/bin/sh", "-c", 'out=$1; shift; exec "$@" > "$out"', "sh", str(s.harness.stream), *s.argv]
    bridge = None
    try:
        if s.sandbox is not None:
            argv, bridge = await sandboxed(s.sandbox, s.workspace, s.harness, argv, s.loopback_ports, s.argv[:1])
        with phase("agent"):
            return await run_group(argv, cwd=s.workspace, env=s.env, stdin_text=s.stdin_text, timeout=s.timeout)
    finally:
        if bridge is not None:
            await bridge.aclose()


def read_json_lines(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """(the JSON objects, one a line, of the stream file; notes on skipped or cut lines)."""
    notes: list[str] = []
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_STREAM_BYTES + 1)
    except OSError:
        return [], notes
    if len(raw) > MAX_STREAM_BYTES:
        raw = raw[:MAX_STREAM_BYTES]
        notes.append(f"the agent's event stream was cut at {MAX_STREAM_BYTES // (1024 * 1024)} MB")
    out, bad = [], 0
    for line in _lines(raw):
        try:
            obj = json.loads(line)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            out.append(obj)
        else:
            bad += 1
    if bad:
        notes.append(f"skipped {bad} line{'s' if bad != 1 else ''} of the event stream that were not JSON objects")
    return out, notes


def _lines(raw: bytes) -> Iterator[str]:
    for line in raw.decode("utf-8", "replace").splitlines():
        if line.strip():
            yield line


def stderr_tail(stderr: deque[tuple[float, str]]) -> str:
    """``: last | stderr | lines`` (bounded), or empty."""
    lines = [line for _t, line in stderr if line.strip()][-3:]
    if not lines:
        return ""
    text = " ".join(" | ".join(lines).split())
    return ": " + (text if len(text) <= REASON_CHARS else "…" + text[-REASON_CHARS:])


def failure(out: Outcome, timeout: float, what: str) -> TargetError | None:
    """The error for a CLI that timed out or failed without a usable stream, or None."""
    if out.timed_out:
        return TargetError(f"{what} timed out after {seconds(timeout)}" + stderr_tail(out.stderr), kind="timeout")
    if out.returncode != 0:
        return TargetError(f"{what} exited with code {out.returncode}" + stderr_tail(out.stderr))
    return None


def clip(value: Any, cap: int) -> str:
    """``value`` as text (JSON for non-strings), at most ``cap`` characters."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= cap else text[: cap - 1] + "…"


def mentions(text: str, folders: dict[str, Path]) -> list[str]:
    """The names of the staged skills whose folder ``text`` names."""
    return [name for name, folder in folders.items() if str(folder) in text]


@dataclass
class EventStream(abc.ABC):
    """One CLI run's JSON stream, read one event at a time by the CLI's own reader
    (:class:`agentsproof.targets.agents.claude_stream.ClaudeStream`,
    :class:`agentsproof.targets.agents.codex_events.CodexEvents`)."""

    staged: dict[str, Path] = field(default_factory=dict)
    """Skill name → its staged folder (for ``skills_invoked``)."""
    invoked: list[str] = field(default_factory=list)
    """The staged skills the agent loaded, in order."""

    def take_all(self, events: list[dict[str, Any]]) -> Self:
        """Read every event of ``events``, in order; the stream itself."""
        for event in events:
            self.take(event)
        return self

    @abc.abstractmethod
    def take(self, event: dict[str, Any]) -> None:
        """Read one event of the stream."""

    @abc.abstractmethod
    def trajectory(self) -> list[ToolCall]:
        """The tool calls, in order."""

    @abc.abstractmethod
    def answer(self) -> str | None:
        """The final answer, or None when the run gave none."""
