"""The model endpoint's relay into a ``--network none`` container, and the container's idle process.

Inside, ``ap-relay`` (our own C source, ``agentsproof/data/ap_relay.c``, built static so it
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
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from agentsproof.core.errors import ContainerError

SOURCE = Path(__file__).resolve().parent.parent / "data" / "ap_relay.c"
BUILT = SOURCE.with_name("ap-relay")
IN_CONTAINER = "/opt/agentsproof"
"""Where the relay's folders are mounted: ``bin/ap-relay`` and ``sock/lo-PORT.sock``."""
_lock = asyncio.Lock()


def _cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agentsproof" / "relay"


def _build(dest: Path) -> Path:
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
        return await asyncio.to_thread(_build, folder)


def relay_argv(ports: list[int]) -> list[str]:
    """The container's main process: the relay for ``ports`` (none: it just waits)."""
    return [f"{IN_CONTAINER}/bin/ap-relay", *(f"{p}={IN_CONTAINER}/sock/lo-{p}.sock" for p in ports)]
