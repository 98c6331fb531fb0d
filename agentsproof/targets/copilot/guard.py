"""The copilot target's permission guard: keeps a Copilot session in its trial's workspace.

Every permission request is answered by :class:`PermissionGuard`: writes only inside the
workspace, reads inside the workspace or the staged skill folder, shell commands only when
every path they name stays there (``..`` and symlinks resolved); memory, extension and
workflow requests are refused. Each refusal is told to the model and kept in the trial's
log. A shell command that computes a path at run time (``$VAR``, ``$(...)``, ``cd`` then a
relative path) is not contained by this check: run untrusted skills in a container.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

from agentsproof.model.results import LogEvent

DEVICES = {"/dev/null", "/dev/zero", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty"}
"""Paths a shell command may name wherever its workspace is."""
APPROVED_KINDS = {"url", "mcp", "custom-tool", "hook"}
"""Requests without a path: approved (the tool allowlist already chose the tools)."""


class PermissionGuard:
    """Answers the session's permission requests; keeps the agent in its workspace."""

    def __init__(self, workspace: Path, read_roots: list[Path], log: list[LogEvent], t0: float):
        self.workspace = workspace
        self.read_roots = [workspace, *read_roots]
        self.log = log
        self.t0 = t0
        self.denied: list[str] = []

    def decide(self, request: Any, invocation: Any) -> Any:
        """The SDK's answer to one permission request: approved once, or rejected with the reason logged."""
        from copilot.generated.rpc import PermissionDecisionApproveOnce, PermissionDecisionReject

        try:
            problem = self.problem(request)
        except Exception as exc:  # noqa: BLE001 - a request we cannot read is refused
            problem = f"could not check a {getattr(request, 'kind', '?')} request ({type(exc).__name__})"
        if problem is None:
            return PermissionDecisionApproveOnce()
        self.denied.append(problem)
        self.log.append(LogEvent(t=time.perf_counter() - self.t0, role="info", text=f"permission denied: {problem}"))
        return PermissionDecisionReject(feedback=f"{problem}; stay inside the working directory {self.workspace}")

    def problem(self, request: Any) -> str | None:
        """Why ``request`` is refused, or None to approve it."""
        kind = str(getattr(request, "kind", ""))
        if kind == "write":
            return self._paths("write", _write_paths(request), [self.workspace])
        if kind == "read":
            paths = [p for p in (getattr(request, "path", None), getattr(request, "resolved_path", None)) if isinstance(p, str)]
            return self._paths("read", paths, self.read_roots)
        if kind == "shell":
            return self._shell(request)
        if kind in APPROVED_KINDS:
            return None
        return f"{kind or 'unknown'} requests are not allowed in a trial"

    def _paths(self, what: str, paths: list[str], roots: list[Path]) -> str | None:
        if not paths:
            return f"{what} request without a path"
        for path in paths:
            if not inside(path, roots, self.workspace):
                return f"{what} {path} is outside the workspace"
        return None

    def _shell(self, request: Any) -> str | None:
        command = getattr(request, "full_command_text", "")
        if not isinstance(command, str):
            return "shell request without a command"
        named, writes = shell_paths(command)
        named += [p for p in getattr(request, "possible_paths", None) or [] if isinstance(p, str)]
        named += [p for p in (getattr(request, "resolved_paths", None) or {}).values() if isinstance(p, str)]
        for path in writes:
            if not _device(path) and not inside(path, [self.workspace], self.workspace):
                return f"shell command writes {path}, outside the workspace"
        for path in named:
            if not _device(path) and not inside(path, self.read_roots, self.workspace):
                return f"shell command names {path}, outside the workspace"
        return None


def _write_paths(request: Any) -> list[str]:
    paths = [getattr(request, "file_name", None), getattr(request, "resolved_path", None)]
    for edit in getattr(request, "file_edits", None) or []:
        for side in (getattr(edit, "before", None), getattr(edit, "after", None)):
            paths.append(getattr(side, "path", None))
    return [p for p in paths if isinstance(p, str) and p]


_WORD = re.compile(r"[^\s'\"`;|&<>()=,]+")
_REDIRECT = re.compile(r"(?:(?<![<>&])\d*>>?|&>>?|>\|)[ \t]*(?P<q>['\"]?)(?P<path>[^\s'\"`;|&<>()]+)")
_PROGRAM = re.compile(r"(?:^|[;&|(\n]|\$\()[ \t]*(?:[A-Za-z_][A-Za-z0-9_]*=\S*[ \t]+)*(?P<program>/[^\s'\"`;|&<>()]+)")


def shell_paths(command: str) -> tuple[list[str], list[str]]:
    """(paths a shell command names, paths it redirects output to).

    A word names a path when it has a ``/``, starts with ``~`` or is ``..`` (relative ones are
    checked from the workspace, so ``sub/../x`` passes and ``link/x`` through a symlink out
    does not); words are split at blanks, quotes, ``=``, ``,`` and shell operators, so paths
    inside ``-c '...'`` code or ``--out=/x`` count too. An absolute program
    (``/usr/bin/python3 ...``) and a ``#!`` line are not counted. Text only: variables and
    ``$(...)`` are not expanded."""
    programs = {m.group("program") for m in _PROGRAM.finditer(command)}
    writes = [m.group("path") for m in _REDIRECT.finditer(command)]
    named = []
    for m in _WORD.finditer(command):
        word = m.group(0)
        if word in programs or command[max(0, m.start() - 2) : m.start()] == "#!":
            continue
        if _looks_like_path(word):
            named.append(word)
    return named, writes


def _looks_like_path(word: str) -> bool:
    if "://" in word:
        return False
    return "/" in word or word.startswith("~") or word == ".."


def _device(path: str) -> bool:
    return path in DEVICES or path.startswith("/dev/fd/")


def inside(path: str | Path, roots: list[Path], base: Path | None = None) -> bool:
    """``path`` (relative to ``base``; ``~`` expanded) lies in one of ``roots`` once ``..``
    and symlinks are resolved."""
    p = Path(os.path.expanduser(str(path)))
    if not p.is_absolute():
        if base is None:
            return False
        p = base / p
    real = Path(os.path.realpath(p))
    return any(real == root or real.is_relative_to(root) for root in roots)


class ContainedGuard(PermissionGuard):
    """The guard of a session whose CLI runs inside the trial's own container: the container
    is the boundary (no host file, no network but the model's relay), so reads, writes and
    shell commands anywhere in it are approved, as a Harbor task expects; memory, extension
    and workflow requests are still refused."""

    def problem(self, request: Any) -> str | None:
        """Why ``request`` is refused (only the kinds no trial may use), or None to approve it."""
        if str(getattr(request, "kind", "")) in ("read", "write", "shell"):
            return None
        return super().problem(request)
