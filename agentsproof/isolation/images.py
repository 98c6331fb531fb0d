"""An environment's image: named, or built once per content digest and reused.

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
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import tempfile
import weakref
from pathlib import Path

from agentsproof.core.errors import ContainerError, InputError
from agentsproof.isolation.engine import docker
from agentsproof.model.environment import Environment

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
