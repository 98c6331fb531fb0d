"""An ACP agent inside the trial's container (the item has an ``environment:``).

ACP needs the agent's stdin and stdout for the whole session, so the agent is started with
``docker exec -i`` in the trial's container (the engine ``$DOCKER_HOST`` names; the
container :class:`agentsproof.isolation.environments.Environments` started, labelled and
removes), and the SDK speaks to that process's pipes as it does to a local agent. As for
the agent CLIs (:mod:`agentsproof.targets.agents.container`): the agent's installed package
is mounted read-only at its host path (``container_mounts``), its native binary run where it
has one (else the program as it resolves: a Node agent needs ``node`` in the image); the
trial's hermetic harness (home, config, the staged skills) is copied in at its host path,
so every path in the agent's arguments and environment holds inside too, and the
workspace's host path is replaced by the container's workdir, which is the session's
``cwd``. The model endpoint on the host's loopback is relayed in by the container's relay.

In a container the client offers no ``fs`` or ``terminal`` capabilities: the agent reads,
writes and runs commands itself, inside the container (its own sandbox), and the runner
copies the workdir back before grading. At the end (or the timeout) the agent's process
tree in the container is stopped and killed (its pid is noted as it starts), then the
``docker exec`` client's group is ended. While it runs the container is watched against its
disk and process caps as every ``exec`` is: past one it is stopped, and the trial errors
naming the cap.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from agentsproof.isolation.container import HARNESS_DIR
from agentsproof.targets.agents.kit import Harness

if TYPE_CHECKING:
    from agentsproof.model.environment import TrialEnvironment

_RECORD_PID = 'echo $$ > "$0"; exec "$@"'
_KILL_TREE = (
    't() { kill -STOP "$1" 2>/dev/null; for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do t "$c"; done; kill -KILL "$1" 2>/dev/null; }; '
    '[ -f "$0" ] && t "$(cat "$0")"; rm -f "$0"'
)
"""Every process the agent started, stopped first (so none forks again), then killed, leaves first."""
STOP_S = 30.0


class InContainer:
    """One trial's agent in ``box`` (an :class:`agentsproof.isolation.container.Container`)."""

    def __init__(self, box: TrialEnvironment, harness: Harness, workspace: Path):
        self.box, self.harness, self.workspace = box, harness, str(workspace)
        self.pid_file = f"{HARNESS_DIR}/acp-{harness.root.name}.pid"  # made by every copy_in
        self._guard: asyncio.Task[None] | None = None

    async def command(self, argv: list[str], env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        """(the ``docker exec -i`` command line that runs ``argv`` in the container, the docker
        CLI's environment): the harness copied in first. Values never appear on the command
        line: ``-e NAME`` hands each over from the CLI's environment."""
        from agentsproof.isolation.engine import docker_cli
        from agentsproof.targets.agents.container import container_env, inside

        await self.box.copy_in(self.harness.root, str(self.harness.root))
        inner_env = container_env(env, self.workspace, self.box.workdir)
        program = argv[0]  # as the target resolved it (AcpBase._launch)
        cmd = [docker_cli(), "exec", "-i", "-w", self.box.workdir]
        for key in inner_env:
            cmd += ["-e", key]
        cmd += [self.box.name, "/bin/sh", "-c", _RECORD_PID, self.pid_file, program, *(inside(a, self.workspace, self.box.workdir) for a in argv[1:])]
        guard = getattr(self.box, "guard", None)
        if guard is not None:  # the disk and process caps, as box.exec watches its commands
            self._guard = asyncio.ensure_future(guard())
        return cmd, {**os.environ, **inner_env}

    def limit(self) -> str | None:
        """The cap the container was stopped at while the agent ran (None: none)."""
        return getattr(self.box, "stopped", None)

    async def stop(self) -> None:
        """Stop and kill the agent's process tree in the container (nothing when it already ended)."""
        if self._guard is not None:
            self._guard.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._guard
        with contextlib.suppress(Exception):  # a container stopped at a limit: nothing left to kill
            await self.box.exec(["/bin/sh", "-c", _KILL_TREE, self.pid_file], timeout=STOP_S)
