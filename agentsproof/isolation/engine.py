"""The container engine: its calls, the images it builds, and the relay every trial container runs.

**Calls.** The ``docker`` CLI as an asyncio subprocess (never blocking the event loop).
:func:`docker` runs one CLI call with a timeout; :func:`put_archive` and :func:`get_archive`
copy a tar stream in and out of a container. (Calling the Engine API's archive and exec
endpoints over a local socket directly was measured no faster than the CLI: the engine's
own work dominates; ``bench/environments.py``.)

**Images.** An environment's image is named, or built once per content digest and reused.
``image: NAME`` is used as it is (the engine pulls it when it does not have it; no registry
reachable means one line naming the file and field). ``dockerfile:`` is built with
``docker build --network host`` (a build may fetch packages; the trials themselves get no
network but the model relay, see :mod:`agentsproof.isolation.environments`) and tagged
``agentsproof-env:<digest>``, where the digest covers the Dockerfile and every file, folder
and link of the context (paths, modes, bytes): nothing changed, nothing rebuilt, across
trials and runs, and the engine's own build cache serves what did not change. The
baseline arm of a task with ``baseline_empty`` paths is built from a staged copy of the
context with those paths as empty folders (its own digest).

A failed build is an :class:`~agentsproof.core.errors.InputError` (one line, exit 30)
naming the Dockerfile, the failing step (``step 3/5 RUN ...``), why (``exit 100``, or the
engine's message), the build log kept beside the report, and the field that named it.

**The relay.** The model endpoint's relay into a ``--network none`` container is also the
container's idle process. Inside, ``ap-relay`` (our own C source, ``agentsproof/data/ap_relay.c``, built static so it
runs in any Linux image: no python, no libc of the image) is the container's main process:
with ports it listens on ``127.0.0.1:PORT`` in the container and forwards each connection
to ``/opt/agentsproof/sock/lo-PORT.sock``; without, it just waits. Outside,
:class:`~agentsproof.isolation.sandbox.LoopbackBridge` (the bubblewrap sandbox's) serves those
sockets in a per-trial host folder mounted read-only there, forwarding to ``127.0.0.1:PORT``
on the host: the model endpoint's port, and nothing else.

The binary is found as ``$AGENTSPROOF_CONTAINER_RELAY``, else ``agentsproof/data/ap-relay``
(``make relay``), else built once with ``cc -static`` into ``~/.cache/agentsproof/relay/``
(keyed by the source's digest). The bind mounts need the engine on this machine; a remote
engine (``DOCKER_HOST=ssh://…``) has no such folder: use ``allow_internet: true`` there.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import shutil
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path

from agentsproof.core.errors import ContainerError, InputError
from agentsproof.model.environment import Environment

OUTPUT_CAP = 1024 * 1024
"""Bytes of a command's stdout (and of stderr) kept; the rest is read and dropped."""
SPLIT_FILE_CAP = 640 * 1024 * 1024
"""Bytes after the ``split`` mark written to the file at most: past them the file is emptied
and the rest read and dropped (a command that found the mark cannot fill the host's disk)."""
DOCKER_CALL_S = 120.0
"""Seconds an engine call (start, copy, inspect, remove) may take."""


def docker_cli() -> str:
    """The ``docker`` CLI on PATH; ContainerError saying how to get one when missing."""
    found = shutil.which("docker")
    if not found:
        raise ContainerError("the docker CLI is not on PATH (install docker.io, or docker-ce-cli for a remote engine via DOCKER_HOST)")
    return found


async def _read_split(stream: asyncio.StreamReader | None, cap: int, mark: bytes, out: Path, file_cap: int = SPLIT_FILE_CAP) -> bytes:
    """What comes before the first ``mark`` (capped, the rest dropped); what comes after it
    streamed to the file ``out`` (written in a thread; past ``file_cap`` bytes the file is
    emptied and the rest dropped, so it cannot end with a closing mark)."""
    from agentsproof.core.threads import to_thread

    head = bytearray()
    tail = b""
    fh = None
    written = 0
    over = False

    async def write(data: bytes) -> None:
        nonlocal written, over
        if over or fh is None:
            return
        written += len(data)
        if written > file_cap:
            over = True
            await to_thread(fh.truncate, 0)
            return
        await to_thread(fh.write, data)

    try:
        while stream is not None:
            chunk = await stream.read(1 << 16)
            if not chunk:
                break
            if fh is not None:
                await write(chunk)
                continue
            data = tail + chunk
            at = data.find(mark)
            if at >= 0:
                head += data[: max(0, min(at, cap - len(head)))]
                fh = await to_thread(open, out, "wb")
                await write(data[at + len(mark) :])
                continue
            keep = max(0, len(data) - len(mark) + 1)  # a mark cut between two chunks is found in the next
            head += data[: max(0, min(keep, cap - len(head)))]
            tail = data[keep:]
        if fh is None:
            head += tail[: max(0, cap - len(head))]
        return bytes(head)
    finally:
        if fh is not None:
            await to_thread(fh.close)


async def _read_capped(stream: asyncio.StreamReader | None, cap: int) -> bytes:
    if stream is None:
        return b""
    buf = bytearray()
    while True:
        chunk = await stream.read(1 << 16)
        if not chunk:
            return bytes(buf)
        if len(buf) < cap:
            buf += chunk[: cap - len(buf)]


@dataclass
class Called:
    """One finished docker CLI call."""

    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False

    def reason(self) -> str:
        """The last non-empty line of stderr (the engine's message), one line."""
        lines = [ln.strip() for ln in self.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
        return lines[-1][:300] if lines else f"exit {self.returncode}"


async def docker(
    args: list[str],
    *,
    timeout: float = DOCKER_CALL_S,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
    cap: int = OUTPUT_CAP,
    stdout_to: Path | None = None,
    split: bytes | None = None,
    file_cap: int = SPLIT_FILE_CAP,
) -> Called:
    """``docker ARGS`` with a timeout (the CLI is killed past it); ``env`` is added to the
    CLI's environment (the values ``-e NAME`` hands on); ``stdout_to`` streams stdout to a
    file; with ``split`` too, only what follows the first ``split`` mark on stdout goes to that
    file (none: the file is not made; emptied past ``file_cap`` bytes), what precedes it is the call's ``stdout``."""
    full_env = {**os.environ, **(env or {})}
    out_fh = open(stdout_to, "wb") if stdout_to is not None and split is None else None  # noqa: SIM115 - closed below
    try:
        proc = await asyncio.create_subprocess_exec(
            docker_cli(),
            *args,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=out_fh if out_fh is not None else asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=full_env,
        )
    except OSError as exc:
        if out_fh is not None:
            out_fh.close()
        raise ContainerError(f"the docker CLI could not be started: {exc.strerror or exc}") from None

    async def feed() -> None:
        if stdin is not None and proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                proc.stdin.write(stdin)
                await proc.stdin.drain()
            proc.stdin.close()

    async def collect() -> tuple[bytes, bytes]:
        reader = _read_split(proc.stdout, cap, split, stdout_to, file_cap) if split is not None and stdout_to is not None else _read_capped(proc.stdout, cap)
        out, err, _, _ = await asyncio.gather(reader, _read_capped(proc.stderr, cap), feed(), proc.wait())
        return out, err

    reading = asyncio.ensure_future(collect())
    timed_out = False
    try:
        out, err = await asyncio.wait_for(asyncio.shield(reading), timeout)
    except TimeoutError:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        out, err = await reading
    except asyncio.CancelledError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        with contextlib.suppress(Exception):
            await asyncio.shield(reading)
        raise
    finally:
        if out_fh is not None:
            out_fh.close()
    return Called(proc.returncode if proc.returncode is not None else -1, out, err, timed_out)


async def put_archive(name: str, data: bytes, dest: str = "/") -> Called:
    """Unpack the tar ``data`` at ``dest`` in the container ``name`` (``docker cp -``)."""
    return await docker(["cp", "-", f"{name}:{dest}"], stdin=data)


async def get_archive(name: str, path: str, out: Path, *, timeout: float = DOCKER_CALL_S) -> Called:
    """The tar of ``path`` in the container ``name`` written to ``out`` (``docker cp … -``)."""
    return await docker(["cp", f"{name}:{path}", "-"], stdout_to=out, timeout=timeout)


TAG_REPO = "agentsproof-env"
LABEL_DIGEST = "org.agentsproof.env-digest"
_STEP = re.compile(r"^(?:Step (?P<n>\d+/\d+) : (?P<legacy>.+)|#\d+ \[(?:[^\]\s]+ )?(?P<k>\d+/\d+)\] (?P<kit>.+))$")
_EXIT = re.compile(r"(?:returned a non-zero code|did not complete successfully: exit code): (\d+)")
_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]] = weakref.WeakKeyDictionary()
"""Per event loop (a lock is bound to the loop it first waited in; a run's oracle preflights
and its trials run in two), per digest: one build of an image at a time."""


def context_digest(env: Environment, empty: tuple[str, ...] = ()) -> str:
    """The image's content digest: the Dockerfile's bytes and the context's tree (``empty``: paths counted as empty folders)."""
    from agentsproof.core.treecopy import TreeProblem, walk_tree

    assert env.dockerfile is not None and env.context is not None
    h = hashlib.sha256(b"agentsproof-env/1\0")
    try:
        h.update(env.dockerfile.read_bytes())
    except OSError as err:
        raise InputError(env.source, f"{env.field}.dockerfile", f"cannot be read ({err.strerror or err})") from None
    skip = tuple(p.strip("/") for p in empty)
    h.update(repr(sorted(skip)).encode())
    try:
        for entry in walk_tree(env.context):
            if any(entry.rel == p or entry.rel.startswith(p + "/") for p in skip):
                continue
            h.update(f"\0{entry.file_type}\0{entry.rel}\0{entry.link}\0".encode())
            if entry.file_type == "file":
                path = env.context / entry.rel
                h.update(oct(path.stat().st_mode & 0o7777).encode())
                with open(path, "rb") as fh:
                    while chunk := fh.read(1 << 20):
                        h.update(chunk)
    except TreeProblem as err:
        raise InputError(env.source, f"{env.field}.context", str(err)) from None
    return h.hexdigest()[:20]


def failing_step(log: str) -> str:
    """The last build step the log started, as ``step N/M INSTRUCTION`` (legacy ``Step N/M : X``
    or BuildKit ``#N [k/m] X``); ``before the first step`` when none started."""
    last = ""
    for line in log.splitlines():
        m = _STEP.match(line.strip())
        if m:
            count = m.group("n") or m.group("k") or ""
            text = (m.group("legacy") or m.group("kit") or "").strip()
            last = f"step {count} {text}" if count else text
    return last[:200] or "before the first step"


def failure_reason(log: str, fallback: str) -> str:
    """Why the failing step failed, in one line: ``exit N`` for a RUN that exited non-zero,
    else the engine's last message (``COPY failed: ...``)."""
    code = _EXIT.findall(log)
    if code:
        return f"exit {code[-1]}"
    return fallback


async def image_exists(tag: str) -> bool:
    """The engine has ``tag`` already."""
    return (await docker(["image", "inspect", "-f", "{{.Id}}", tag], timeout=60)).returncode == 0


async def image_workdir(tag: str) -> str:
    """The image's own WORKDIR ('' when it sets none)."""
    got = await docker(["image", "inspect", "-f", "{{.Config.WorkingDir}}", tag], timeout=60)
    return got.stdout.decode("utf-8", "replace").strip() if got.returncode == 0 else ""


async def ensure_image(env: Environment, *, baseline: bool = False, log_dir: Path | None = None) -> tuple[str, bool]:
    """The image tag a trial of ``env`` runs (built when missing) and whether it was built now."""
    if env.image is not None:
        if await image_exists(env.image):
            return env.image, False
        pulled = await docker(["pull", env.image], timeout=env.build_timeout)
        if pulled.returncode != 0:
            raise InputError(env.source, f"{env.field}.image", f"{env.image!r} is not on the engine and cannot be pulled: {pulled.reason()}")
        return env.image, False
    empty = env.baseline_empty if baseline else ()
    digest = await asyncio.to_thread(context_digest, env, empty)
    tag = f"{TAG_REPO}:{digest}"
    lock = _locks.setdefault(asyncio.get_running_loop(), {}).setdefault(digest, asyncio.Lock())
    async with lock:
        if await image_exists(tag):
            return tag, False
        await _build(env, tag, digest, empty, log_dir)
        return tag, True


async def _build(env: Environment, tag: str, digest: str, empty: tuple[str, ...], log_dir: Path | None) -> None:
    assert env.dockerfile is not None and env.context is not None
    with tempfile.TemporaryDirectory(prefix="agentsproof-build-") as tmp:
        context = env.context
        if empty:
            context = await asyncio.to_thread(_stage_without, env.context, Path(tmp) / "context", empty)
        log_path = Path(tmp) / "build.log"
        # --force-rm: the legacy builder (BuildKit off) keeps a failed step's container; nothing we start may outlive us
        args = ["build", "--force-rm", "--network", "host", "--label", f"{LABEL_DIGEST}={digest}", "-f", str(env.dockerfile), "-t", tag, str(context)]
        got = await docker(args, timeout=env.build_timeout, stdout_to=log_path, env={"DOCKER_BUILDKIT": "0"})
        log = log_path.read_text("utf-8", "replace") + got.stderr.decode("utf-8", "replace")
        kept = _keep_log(log, digest, log_dir)
        if got.returncode == 0 and not got.timed_out:
            return
        where = f"build log: {kept}; " if kept else ""
        why = f"timed out after {env.build_timeout:g}s" if got.timed_out else failure_reason(log, got.reason())
        from agentsproof.core.inputs import display

        # one line naming the Dockerfile and its failing step: `env/Dockerfile: step 3/5 RUN apt-get install nope: exit 100 (...)`
        raise InputError(display(env.dockerfile), None, f"{failing_step(log)}: {why} ({where}the image of {env.source} {env.field}.dockerfile)")


def _keep_log(log: str, digest: str, log_dir: Path | None) -> str | None:
    """The build log written beside the report (``build-<digest>.log``); None without a folder."""
    if log_dir is None:
        return None
    from agentsproof.core.safepath import write_file

    try:
        write_file(log_dir, f"build-{digest}.log", log.encode("utf-8"))
    except OSError:
        return None
    return str(log_dir / f"build-{digest}.log")


def _stage_without(context: Path, dest: Path, empty: tuple[str, ...]) -> Path:
    """A copy of ``context`` in ``dest`` with each path of ``empty`` an empty folder."""
    from agentsproof.core.rmtree import remove_tree
    from agentsproof.core.treecopy import TreeProblem, copy_tree

    try:
        copy_tree(context, dest)
    except TreeProblem as err:
        raise ContainerError(f"the build context cannot be staged: {err}") from None
    for rel in empty:
        path = dest / rel.strip("/")
        if path.is_symlink() or path.exists():
            remove_tree(path, within=dest) if path.is_dir() and not path.is_symlink() else path.unlink()
        path.mkdir(parents=True, exist_ok=True)
    return dest


SOURCE = Path(__file__).resolve().parent.parent / "data" / "ap_relay.c"
BUILT = SOURCE.with_name("ap-relay")
IN_CONTAINER = "/opt/agentsproof"
"""Where the relay's folders are mounted: ``bin/ap-relay`` and ``sock/lo-PORT.sock``."""
_lock = asyncio.Lock()


def _cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agentsproof" / "relay"


def _build_relay(dest: Path) -> Path:
    """``cc -static`` the relay into ``dest`` (a folder); ContainerError when no compiler can."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise ContainerError("the container relay is not built and no C compiler is here (run `make relay`, or install gcc and libc6-dev)")
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest) as tmp:
        out = Path(tmp) / "ap-relay"
        import subprocess

        got = subprocess.run([cc, "-static", "-O2", "-o", str(out), str(SOURCE)], capture_output=True, text=True, timeout=300, check=False)
        if got.returncode != 0:
            raise ContainerError(f"the container relay could not be built ({cc} -static): {got.stderr.strip()[-300:]}")
        final = dest / "ap-relay"
        os.replace(out, final)
    return final


def find_relay() -> Path | None:
    """The relay binary already there (env, package data, cache), or None."""
    explicit = os.environ.get("AGENTSPROOF_CONTAINER_RELAY", "").strip()
    if explicit:
        return Path(explicit) if Path(explicit).is_file() else None
    if BUILT.is_file():
        return BUILT
    cached = _cache_dir() / hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16] / "ap-relay"
    return cached if cached.is_file() else None


async def relay_binary() -> Path:
    """The relay binary, built once (in a thread) when missing."""
    async with _lock:
        found = find_relay()
        if found is not None:
            return found
        if os.environ.get("AGENTSPROOF_CONTAINER_RELAY", "").strip():
            raise ContainerError(f"AGENTSPROOF_CONTAINER_RELAY={os.environ['AGENTSPROOF_CONTAINER_RELAY']} is not a file")
        folder = _cache_dir() / hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
        return await asyncio.to_thread(_build_relay, folder)


def relay_argv(ports: list[int]) -> list[str]:
    """The container's main process: the relay for ``ports`` (none: it just waits)."""
    return [f"{IN_CONTAINER}/bin/ap-relay", *(f"{p}={IN_CONTAINER}/sock/lo-{p}.sock" for p in ports)]
