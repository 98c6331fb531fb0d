"""Running an agent under bubblewrap: every command target, unless it says ``sandbox: false``.

What the agent sees inside the sandbox:

* **Files.** The whole file system read-only (``--ro-bind / /``), except: its own
  workspace, read-write at its real path; the trial's harness folder (trace file, loopback
  sockets), read-write at its real path; a private, empty ``/tmp`` and ``/run`` (tmpfs); a
  minimal ``/dev`` and, with a PID namespace, its own ``/proc``. Inside the masked
  ``/tmp`` and ``/run``, the absolute paths the targets file's command line names (never
  what a ``{prompt}``, ``{workspace}``, ``{skill_file}`` or ``{model}`` filled in) and the
  Python running agentsproof are mounted back read-only (:func:`runtime_paths`). The workspaces root is
  covered by an empty tmpfs before the trial's own folder is bound back, so the other
  trials' workspaces (and the rest of ``--keep-workspaces``) are hidden.
* **Processes.** A new PID namespace (``--unshare-pid``, when the kernel allows it; it is
  probed once): the agent sees only its own processes, and when the sandbox's first
  process ends the kernel kills every process left in it. ``--die-with-parent`` ends the
  sandbox when agentsproof dies. IPC is unshared too.
* **Network.** A new network namespace (``--unshare-net``) holding only its own loopback
  interface: no other host, no host's loopback service, no abstract unix socket of the
  host is reachable. The ports listed in ``loopback_ports`` are the exception: for each,
  a relay (this module run as a script, as the sandbox's first process) listens on
  ``127.0.0.1:PORT`` (and ``[::1]:PORT`` when it can) inside the sandbox and forwards
  each connection over a unix socket in the harness folder to a :class:`LoopbackBridge`
  in agentsproof, which connects to ``127.0.0.1:PORT`` on the host. Only those ports on
  the host's 127.0.0.1 are reachable, and only through that path.
* **Not covered.** Path-named unix sockets on the read-only file system outside ``/tmp``
  and ``/run`` (e.g. in a home folder) can still be connected to: a read-only mount does
  not stop ``connect()``. The home folder is read-only, so an agent that must write its
  own settings needs ``HOME`` (or its config variable) pointed into the workspace via the
  target's ``env``.

The relay part of this file uses the standard library only: it runs as
``python -I sandbox.py relay PORT=SOCKET ... -- ARGV...`` inside the sandbox, with
no access to the agentsproof package.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

INSTALL_HINT = "apt-get install bubblewrap"
FALLBACK_BWRAP = "/usr/bin/bwrap"
"""Used when ``bwrap`` is not on PATH."""
PROBE_TIMEOUT_S = 15.0
RELAY_SCRIPT = Path(__file__).resolve()
MAX_SOCKET_PATH = 100
"""A unix socket path must fit in sockaddr_un (108 bytes on Linux)."""


@dataclass(frozen=True)
class Bwrap:
    """A bubblewrap that starts here: its path, and whether it can have its own PID namespace."""

    path: str
    unshare_pid: bool


_probed: dict[str, Bwrap | str] = {}


def _base_flags(unshare_pid: bool) -> list[str]:
    """bubblewrap's flags for every sandbox: the one list of :func:`agentsproof.core.confine.base_flags`."""
    from agentsproof.core.confine import base_flags

    return base_flags(unshare_pid)


def _probe(path: str) -> Bwrap | str:
    """The bwrap at ``path`` with the flags that work here, or why it cannot start."""
    reason = "it did not start"
    for unshare_pid in (True, False):
        try:
            done = subprocess.run(
                [path, *_base_flags(unshare_pid), "--", "true"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=PROBE_TIMEOUT_S,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{type(exc).__name__}: {exc}"
        if done.returncode == 0:
            return Bwrap(path, unshare_pid)
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = lines[-1][:200] if lines else f"exit code {done.returncode}"
    return reason


def find_bwrap(source: str, name: str) -> Bwrap:
    """A working bubblewrap, probed once per process; InputError when it is missing or
    cannot create its namespaces here."""
    from agentsproof.core.errors import InputError

    path = shutil.which("bwrap") or (FALLBACK_BWRAP if os.access(FALLBACK_BWRAP, os.X_OK) else None)
    field = f"{name}.sandbox"
    opt_out = f"or set '{name}: sandbox: false' to run the agent unconfined"
    if path is None:
        raise InputError(source, field, f"needs bubblewrap, and 'bwrap' is not installed (install it: {INSTALL_HINT}; {opt_out})")
    if path not in _probed:
        _probed[path] = _probe(path)
    found = _probed[path]
    if isinstance(found, str):
        raise InputError(
            source,
            field,
            f"needs bubblewrap, and {path} cannot start a sandbox here: {found} (user namespaces must be allowed; {opt_out})",
        )
    return found


MASKED = (Path("/tmp"), Path("/run"))
"""Folders the sandbox replaces with empty ones (their sockets would be reachable otherwise)."""


def runtime_paths(argv: list[str], workspaces_root: Path) -> list[str]:
    """What must stay visible, read-only, inside the masked folders: the Python running
    agentsproof (the loopback relay runs on it), the relay script, and the absolute paths the
    command line names (an agent script, a venv's interpreter and its venv, the
    ``node_modules`` folder an npm-installed CLI lives in) — e.g. when the
    checkout or the venv lives under /tmp. Never a masked folder itself, nor a folder that
    holds the workspaces."""
    candidates = [Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), RELAY_SCRIPT.parent]
    for arg in argv:
        if os.path.isabs(arg) and os.path.exists(arg):
            p = Path(arg)
            candidates.append(p)
            if p.parent.name == "bin" and (p.parent.parent / "pyvenv.cfg").is_file():
                candidates.append(p.parent.parent)
            with contextlib.suppress(OSError):
                candidates.append(p.resolve())
            for q in (p, candidates[-1]):
                top = next((a for a in reversed(q.parents) if a.name == "node_modules"), None)
                if top is not None:
                    candidates.append(top)  # an npm-installed CLI needs its whole package tree (JS, native binaries)
    out: list[str] = []
    for c in sorted({Path(os.path.abspath(c)) for c in candidates}, key=lambda p: len(p.parts)):
        if not any(c != m and c.is_relative_to(m) for m in MASKED):
            continue  # outside the masked folders it is visible already (read-only)
        if workspaces_root.is_relative_to(c) or c.is_relative_to(workspaces_root):
            continue  # would show other trials' workspaces
        if str(c) not in out and not any(c.is_relative_to(Path(o)) for o in out):
            out.append(str(c))
    return out


def dotdot_dirs(argv: list[str], mounted: list[str]) -> list[str]:
    """The folders a ``..`` in an absolute argument passes through that the masked /tmp and
    /run would hide (``{here}/../agent.py`` with the targets file under /tmp): made as empty
    folders in the sandbox, so the path resolves to the file :func:`runtime_paths` mounted
    (its normalised form) without showing anything else of the folder it names."""
    out: list[str] = []
    for arg in argv:
        if not (os.path.isabs(arg) and ".." in Path(arg).parts and os.path.exists(arg)):
            continue
        cur = Path("/")
        for part in Path(arg).parts[1:]:
            if part == "..":
                hidden = any(cur != m and cur.is_relative_to(m) for m in MASKED)
                if hidden and cur.is_dir() and not any(cur.is_relative_to(Path(m)) for m in mounted) and str(cur) not in out:
                    out.append(str(cur))
                cur = cur.parent
            elif part not in ("", "."):
                cur = cur / part
    return out


def bwrap_argv(
    bw: Bwrap,
    *,
    workspace: Path,
    workspaces_root: Path,
    harness: Path,
    argv: list[str],
    sockets: dict[int, Path],
    named: list[str],
) -> list[str]:
    """The command line that runs ``argv`` in ``workspace`` under bubblewrap.

    ``named`` are the command's arguments as the targets file wrote them (never the filled
    ``{prompt}``: an instruction that happens to be a path under /tmp must not open that
    path to the agent); only those are candidates for :func:`runtime_paths`. ``sockets``
    maps each allowed loopback port to its unix socket in ``harness``; when it is not
    empty the relay runs first inside the sandbox and starts ``argv`` itself."""
    ws, root, hv = str(workspace), str(workspaces_root), str(harness)
    out = [bw.path, *_base_flags(bw.unshare_pid)]
    mounted = runtime_paths(named, workspaces_root)
    for path in mounted:
        out += ["--ro-bind", path, path]
    for folder in dotdot_dirs(named, mounted):
        out += ["--dir", folder]
    if workspaces_root != Path("/"):
        out += ["--tmpfs", root]
    out += ["--bind", ws, ws, "--bind", hv, hv, "--chdir", ws, "--"]
    if sockets:
        pairs = [f"{port}={path}" for port, path in sorted(sockets.items())]
        out += [sys.executable, "-I", str(RELAY_SCRIPT), "relay", *pairs, "--"]
    return out + argv


class LoopbackBridge:
    """Outside the sandbox: one unix socket per allowed port, each connection forwarded to
    ``127.0.0.1:PORT`` on the host. Lives for one trial."""

    def __init__(self, folder: Path, ports: list[int]):
        self.folder = folder
        self.ports = list(ports)
        self.sockets: dict[int, Path] = {}
        self._servers: list[asyncio.AbstractServer] = []
        self._conns: set[asyncio.Task[None]] = set()

    async def start(self) -> dict[int, Path]:
        """Listen on each port's unix socket; port → socket path (OSError when a path is too long)."""
        for port in self.ports:
            path = self.folder / f"lo-{port}.sock"
            if len(str(path)) > MAX_SOCKET_PATH:
                raise OSError(f"the socket path {path} is too long for a unix socket")
            server = await asyncio.start_unix_server(functools.partial(self._accept, port), path=str(path))
            self._servers.append(server)
            self.sockets[port] = path
        return self.sockets

    async def _accept(self, port: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._conns.add(task)
        up_writer = None
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            for w in (writer, up_writer):
                if w is not None:
                    w.close()
            self._conns.discard(task)

    async def aclose(self) -> None:
        """Stop listening and end every forwarded connection."""
        for server in self._servers:
            server.close()
        for task in list(self._conns):
            task.cancel()
        if self._conns:
            await asyncio.gather(*self._conns, return_exceptions=True)
        self._servers.clear()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except OSError:
        writer.close()


# ------------------------------------------------------------------ inside the sandbox


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        conn, _addr = listener.accept()
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            up.connect(path)
        except OSError:
            conn.close()
            up.close()
            continue
        threading.Thread(target=_pump, args=(conn, up), daemon=True).start()
        threading.Thread(target=_pump, args=(up, conn), daemon=True).start()


def relay_main(args: list[str]) -> int:
    """``PORT=SOCKET ... -- ARGV...``: listen on each port, then run ARGV and return its code."""
    if "--" not in args:
        print("agentsproof sandbox relay: usage: relay PORT=SOCKET ... -- ARGV", file=sys.stderr)
        return 125
    cut = args.index("--")
    pairs, argv = args[:cut], args[cut + 1 :]
    for pair in pairs:
        port_text, _, path = pair.partition("=")
        port = int(port_text)
        for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
            try:
                listener = socket.socket(family, socket.SOCK_STREAM)
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                listener.bind((host, port))
                listener.listen(128)
            except OSError as exc:
                if family == socket.AF_INET:
                    print(f"agentsproof sandbox relay: cannot listen on 127.0.0.1:{port}: {exc}", file=sys.stderr)
                    return 125
                continue
            threading.Thread(target=_serve, args=(listener, path), daemon=True).start()
    try:
        child = subprocess.Popen(argv)
    except OSError as exc:
        print(f"agentsproof sandbox: cannot run {argv[0]!r}: {exc.strerror or exc}", file=sys.stderr)
        return 127
    code = child.wait()
    return code if code >= 0 else 128 - code


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "relay":
    sys.stdout.flush()
    os._exit(relay_main(sys.argv[2:]))
