"""A run's containers: one fresh, labelled container per trial, all removed, whatever happens.

:class:`Environments` is made once per run (by the executor, like
:class:`~agentsproof.isolation.workspace.Workspaces`). :meth:`Environments.prepare` builds or
finds every item's image before the first trial (a failed build: one line, exit 30);
:meth:`Environments.start` gives one trial a :class:`~agentsproof.isolation.container.Container`
with its workspace copied in; :meth:`Environments.remove` removes it after grading;
:meth:`Environments.close` removes whatever is left (success, failure, timeout, SIGINT and
SIGTERM all end there; a container's ``--init`` process also dies with its last process).

**Ahead.** From the second trial of a kind of container (image, relayed ports, mounts)
on, the next trials' containers are started while these run (as many as are in use, at
most :data:`SPARES`): each a fresh, unused container waiting for its trial (its ``org.agentsproof.trial`` label says ``ahead``), so a
trial's path does not wait for ``docker run``; the one left at the end is removed with
the rest.

**Labels.** Every container carries ``org.agentsproof.run=<run id>`` and
``org.agentsproof.owner=<host>/<pid>/<process start time>``. A run that was SIGKILLed cannot
clean up: the next run on the same host lists containers labelled by an owner whose
process is gone (same host, that pid no longer running with that start time), removes
them and says so in one line. Containers owned by a live run, or by another host, are
never touched.

**Network.** ``allow_internet: false`` (the default) runs ``--network none``: the container
has only its own loopback; what an agent needs of the model endpoint reaches it through
the relay (see :mod:`agentsproof.isolation.engine`). ``allow_internet: true`` runs
``--network host``: the container shares the host's network (and can reach what the
host can). No bridge network is ever created.

**Limits.** ``--cpus``, ``--memory`` = ``--memory-swap`` (no swap), ``--pids-limit``,
and the watchdog of
:class:`~agentsproof.isolation.container.Container` stops a trial that writes more than
``disk_mb`` into its writable layer or reaches its process cap.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import socket
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

from agentsproof.core.errors import ContainerError
from agentsproof.isolation.container import Container
from agentsproof.isolation.engine import IN_CONTAINER, docker, ensure_image, image_workdir, relay_argv, relay_binary
from agentsproof.isolation.sandbox import LoopbackBridge
from agentsproof.model.environment import DEFAULT_WORKDIR, Environment

LABEL_RUN = "org.agentsproof.run"
LABEL_OWNER = "org.agentsproof.owner"
LABEL_TRIAL = "org.agentsproof.trial"
START_S = 120.0
INLINE_PROBE = '[ "$(id -u)" = 0 ] && head --version 2>/dev/null | grep -q "GNU coreutils" && tar --version >/dev/null 2>&1'
"""Run once per image: may the seed be unpacked by the first command's exec (:attr:`Container.pending`),
and the workdir carried out by the agent's last one (:attr:`Container.kept`)?"""
SPARES = 4
"""Containers of one kind started ahead at most (see **Ahead** in the module docstring)."""
COPY_CAP = 512 * 1024 * 1024
"""Bytes of a container's workdir copied back into the host workspace at most."""
PREPARE_AT_ONCE = 4
"""Images :meth:`Environments.prepare` looks up (or builds) at once: each lookup is a few engine calls."""


def _clear(folder: Path) -> None:
    """Everything inside ``folder`` removed (never through a link); the folder stays."""
    from agentsproof.core.rmtree import remove_tree

    for child in list(folder.iterdir()):
        if child.is_dir() and not child.is_symlink():
            remove_tree(child, within=folder)
        else:
            child.unlink()


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot ('' when it is not running)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[-1].split()[19]


def owner_label(pid: int | None = None) -> str:
    """This process as the owner of a container: ``host/pid/start``."""
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}/{pid}/{_start_time(pid)}"


def owner_dead(label: str) -> bool:
    """The owner ``label`` names a process of this host that no longer runs."""
    host, _, rest = label.partition("/")
    pid_text, _, start = rest.partition("/")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    return _start_time(int(pid_text)) != start


async def reap_dead_runs() -> list[str]:
    """Remove the containers of this host's runs whose process is gone; their names."""
    got = await docker(["ps", "-a", "--filter", f"label={LABEL_OWNER}", "--format", f'{{{{.Names}}}}\t{{{{.Label "{LABEL_OWNER}"}}}}'], timeout=60)
    if got.returncode != 0:
        return []
    dead = []
    for line in got.stdout.decode("utf-8", "replace").splitlines():
        name, _, owner = line.partition("\t")
        if name and owner_dead(owner.strip()):
            dead.append(name)
    if dead:
        await docker(["rm", "-f", "-v", *dead], timeout=120)
    return dead


class Environments:
    """One run's trial containers (see the module docstring)."""

    def __init__(self, *, log_dir: Path | None = None):
        self.run_id = uuid.uuid4().hex[:12]
        self.owner = owner_label()
        self.log_dir = log_dir
        """Where failed (and successful) build logs are kept: beside the report."""
        self._bridges: dict[str, tuple[LoopbackBridge, Path]] = {}
        self._images: dict[tuple[int, bool], tuple[str, str]] = {}
        self._image_files: dict[str, bool] = {}
        """Per image tag: its workdir holds files of its own (copied back into each trial's host workspace before the snapshot)."""
        self._inline: dict[str, bool] = {}
        """Per image tag: its default user is root and it has GNU ``head`` and ``tar`` (the seed can ride on the first command)."""
        self._live: dict[str, Container] = {}
        self._counter = itertools.count(1)
        self._removing: set[asyncio.Task[None]] = set()
        self._doomed: list[str] = []
        """Containers to remove, waiting for the removal under way (:meth:`_rm`)."""
        self._remover: asyncio.Task[None] | None = None
        self._reaped = False
        self._spares: dict[tuple[object, ...], list[asyncio.Task[Container]]] = {}
        """Per kind of container (image, ports, mounts): those started ahead for the next trials."""
        self._started: dict[tuple[object, ...], int] = {}
        self._in_use: dict[str, tuple[object, ...]] = {}
        """The kind of every container handed to a trial and not removed yet."""
        self._closing = False
        self.built: list[str] = []
        """Tags built by this run (a bench checks nothing is rebuilt when nothing changed)."""

    async def reap(self) -> list[str]:
        """Once per run: remove dead runs' leftovers, saying so in one line."""
        if self._reaped:
            return []
        self._reaped = True
        gone = await reap_dead_runs()
        if gone:
            from agentsproof.core.notice import note

            note(f"removed {len(gone)} container(s) left by an earlier run that was killed: {', '.join(gone[:5])}{' …' if len(gone) > 5 else ''}")
        return gone

    async def image(self, env: Environment, *, baseline: bool = False) -> tuple[str, str]:
        """(tag, workdir) for ``env``'s trials (``baseline``: the baseline arm's image), built once."""
        key = (id(env), baseline and bool(env.baseline_empty))
        if key not in self._images:
            tag, built = await ensure_image(env, baseline=key[1], log_dir=self.log_dir)
            if built:
                self.built.append(tag)
            workdir = env.workdir or await image_workdir(tag) or DEFAULT_WORKDIR
            self._images[key] = (tag, workdir)
        return self._images[key]

    async def prepare(self, envs: list[Environment]) -> None:
        """Before the first trial: dead runs' leftovers removed, every image there (InputError: a failed build).

        The images are looked up (built when missing) :data:`PREPARE_AT_ONCE` at a time, one per
        image spec at once (two items with the same Dockerfile never build it together); the
        first failure, in ``envs`` order, is raised once every lookup is done."""
        await self.reap()
        await relay_binary()
        wanted: dict[tuple[object, ...], tuple[Environment, bool]] = {}
        for env in envs:
            for baseline in (False, True) if env.baseline_empty else (False,):
                wanted.setdefault((env.image, str(env.dockerfile), str(env.context), baseline), (env, baseline))
        gate = asyncio.Semaphore(PREPARE_AT_ONCE)

        async def one(env: Environment, baseline: bool) -> None:
            async with gate:
                await self.image(env, baseline=baseline)

        got = await asyncio.gather(*(one(env, baseline) for env, baseline in wanted.values()), return_exceptions=True)
        for failed in got:
            if isinstance(failed, BaseException):
                raise failed
        for env in envs:  # the others of the same spec (their image there now)
            await self.image(env)
            if env.baseline_empty:
                await self.image(env, baseline=True)

    def run_args(self, env: Environment, name: str, workdir: str, trial: str, relay: Path, sockets: Path | None) -> list[str]:
        """``docker run`` options of one trial's container (labels, network, limits, mounts)."""
        args = ["run", "-d", "--init", "--name", name, "--label", f"{LABEL_RUN}={self.run_id}", "--label", f"{LABEL_OWNER}={self.owner}"]
        args += ["--label", f"{LABEL_TRIAL}={trial}", "--network", "host" if env.allow_internet else "none"]
        args += ["--memory", f"{env.memory_mb}m", "--memory-swap", f"{env.memory_mb}m", "--pids-limit", str(env.pids)]
        if env.cpus:
            args += ["--cpus", f"{env.cpus:g}"]
        args += ["--workdir", workdir]
        args += ["--mount", f"type=bind,src={relay},dst={IN_CONTAINER}/bin/ap-relay,readonly"]
        if sockets is not None:
            args += ["--mount", f"type=bind,src={sockets},dst={IN_CONTAINER}/sock,readonly"]
        return args

    async def _bridge(self, name: str, ports: list[int]) -> Path:
        """The host side of the relay for one container: a folder of sockets, one per port."""
        import tempfile

        folder = Path(tempfile.mkdtemp(prefix="ap-relay-"))
        folder.chmod(0o755)  # the image's user may not be root: it must reach the sockets
        bridge = LoopbackBridge(folder, ports)
        self._bridges[name] = (bridge, folder)
        for path in (await bridge.start()).values():
            path.chmod(0o777)
        return folder

    async def start(
        self, env: Environment, *, trial: str, workspace: Path | None, baseline: bool = False, ports: list[int] | None = None, mounts: list[Path] | None = None
    ) -> Container:
        """A fresh container for one trial (``trial``: e.g. ``item/arm/index``), ``workspace``
        copied into its workdir; ``ports``: host loopback ports its agent may reach (the model
        endpoint), relayed into the container's own 127.0.0.1 (with ``allow_internet`` the
        host's network is shared instead); ``mounts``: host folders mounted read-only at the same path (an agent CLI's install)."""
        tag, workdir = await self.image(env, baseline=baseline)
        relayed = sorted(set(ports or ())) if not env.allow_internet else []
        folders = tuple(mounts or ())
        key: tuple[object, ...] = (id(env), tag, workdir, tuple(relayed), folders)
        container = await self._take_spare(key)
        if container is None:
            container = await self._launch(env, tag, workdir, trial, relayed, folders)
        self._in_use[container.name] = key
        self._started[key] = self._started.get(key, 0) + 1
        if self._started[key] >= 2 and not self._closing:
            # from the second trial of a kind on, the next trials' containers start while these run:
            # as many as are in use (the parallel trials), at most SPARES
            want = min(SPARES, sum(1 for k in self._in_use.values() if k == key))
            spares = self._spares.setdefault(key, [])
            while len(spares) < want:
                spares.append(asyncio.ensure_future(self._launch(env, tag, workdir, "ahead", relayed, folders)))
        try:
            if workspace is not None:
                await self._seed(container, tag, workspace)
        except BaseException:
            await self.remove(container)
            raise
        return container

    async def _take_spare(self, key: tuple[object, ...]) -> Container | None:
        """The container started ahead for ``key``, when it started (None: start one now)."""
        spares = self._spares.get(key)
        if not spares:
            return None
        spare = spares.pop(0)
        try:
            return await asyncio.shield(spare)
        except asyncio.CancelledError:
            spare.add_done_callback(self._drop_spare)  # the trial was cancelled: the spare is removed once started
            raise
        except Exception:  # noqa: BLE001 - a spare that did not start: this trial starts its own (and says why if that fails too)
            return None

    def _drop_spare(self, task: asyncio.Task[Container]) -> None:
        if not task.cancelled() and task.exception() is None:
            self._removing.add(asyncio.ensure_future(self.remove(task.result())))

    async def _launch(self, env: Environment, tag: str, workdir: str, trial: str, relayed: list[int], mounts: tuple[Path, ...]) -> Container:
        """A fresh labelled container of ``tag``, started (``trial`` labels it; ``ahead``: a spare)."""
        relay = await relay_binary()
        name = f"agentsproof-{self.run_id}-{next(self._counter)}"
        container = Container(name=name, workdir=workdir, env=env)
        self._live[name] = container
        try:
            sockets = await self._bridge(name, relayed) if relayed else None
            args = [*self.run_args(env, name, workdir, trial, relay, sockets)]
            for folder in mounts:
                args += ["--mount", f"type=bind,src={folder},dst={folder},readonly"]
            args += ["--entrypoint", relay_argv(relayed)[0], tag, *relay_argv(relayed)[1:]]
            got = await docker(args, timeout=START_S)
            if got.returncode != 0:
                raise ContainerError(f"the trial's container could not be started from {tag}: {got.reason()}")
        except BaseException:
            await self.remove(container)
            raise
        return container

    @contextlib.asynccontextmanager
    async def container(
        self, env: Environment, *, trial: str, workspace: Path | None, baseline: bool = False, ports: list[int] | None = None, mounts: list[Path] | None = None
    ) -> AsyncIterator[Container]:
        """:meth:`start` … :meth:`remove` as ``async with`` (e.g. an oracle run outside the runner)."""
        box = await self.start(env, trial=trial, workspace=workspace, baseline=baseline, ports=ports, mounts=mounts)
        try:
            yield box
        finally:
            await self.remove(box)

    async def _seed(self, container: Container, tag: str, workspace: Path) -> None:
        """The host workspace copied in; when the image's workdir has files of its own, the
        merged result copied back, so the host copy is what the agent starts from."""
        import tempfile

        if tag not in self._image_files:
            with tempfile.TemporaryDirectory(prefix="agentsproof-probe-") as tmp:
                await container.copy_out(container.workdir, Path(tmp), cap_bytes=COPY_CAP)
                has_files = any(Path(tmp).iterdir())
            try:
                inline = (await container.exec(["/bin/sh", "-c", INLINE_PROBE], timeout=60.0)).returncode == 0
            except ContainerError:  # no /bin/sh in the image: the seed is copied in the usual way
                inline = False
            # both at once: a trial started meanwhile probes too, and never sees one without the other
            self._inline[tag], self._image_files[tag] = inline, has_files
        container.can_carry = self._inline[tag]  # the agent's last exec may carry the workdir back out (Container.kept)
        if any(workspace.iterdir()):  # an empty seed: nothing to copy
            # unpacked by the first command's own exec when the image can (one engine call fewer)
            defer = self._inline[tag] and not self._image_files[tag]
            await container.copy_in(workspace, container.workdir, defer=defer)
        if self._image_files[tag]:
            await container.copy_out(container.workdir, workspace, cap_bytes=COPY_CAP)

    async def collect(self, container: Container, workspace: Path) -> list[str]:
        """After the agent: the host workspace replaced by the container's workdir (notes on
        what was left out): from the tar the agent's last exec carried out when there is one
        (:attr:`Container.kept`), else copied out now."""
        await asyncio.to_thread(_clear, workspace)
        return await container.copy_out(container.workdir, workspace, cap_bytes=COPY_CAP)

    async def remove(self, container: Container) -> None:
        """Remove the container and its anonymous volumes, in the background (the trial is
        done with it; :meth:`close` waits for every removal, so none is lost)."""
        self._live.pop(container.name, None)
        self._in_use.pop(container.name, None)
        await container.drop_kept()
        await self._unbridge(container.name)
        self._doomed.append(container.name)
        if self._remover is None or self._remover.done():
            task = self._remover = asyncio.ensure_future(self._rm())
            self._removing.add(task)
            task.add_done_callback(self._removing.discard)

    async def _rm(self) -> None:
        """Remove the containers waiting for it: those that came while one call ran go
        together in the next (one ``docker rm`` for several: fewer engine calls at ``--parallel``)."""
        while self._doomed:
            names, self._doomed = self._doomed, []
            with contextlib.suppress(Exception):
                await docker(["rm", "-f", "-v", *names], timeout=120)

    async def _unbridge(self, name: str) -> None:
        held = self._bridges.pop(name, None)
        if held is not None:
            from agentsproof.core.rmtree import remove_tree

            with contextlib.suppress(Exception):
                await held[0].aclose()
            remove_tree(held[1])

    async def close(self) -> None:
        """Remove every container of this run still there (by label, so none is missed), spares too."""
        self._closing = True
        spares = [t for kind in self._spares.values() for t in kind]
        self._spares = {}
        # awaited, not cancelled: a start cut short may still make its container; started, the label sweep below finds it
        await asyncio.gather(*spares, return_exceptions=True)
        self._live.clear()
        if self._removing:
            await asyncio.gather(*self._removing, return_exceptions=True)
        for name in list(self._bridges):
            await self._unbridge(name)
        got = await docker(["ps", "-aq", "--filter", f"label={LABEL_RUN}={self.run_id}"], timeout=60)
        ids = got.stdout.decode().split() if got.returncode == 0 else []
        if ids:
            await docker(["rm", "-f", "-v", *ids], timeout=120)
