"""The real Docker engine for tests, and the one base image every docker test shares.

The engine is whatever ``DOCKER_HOST`` names (``make test`` starts its own ``dockerd`` in
``scripts/test-machine.sh`` and exports it). Without a reachable engine the docker tests skip, and fail under ``CI``.
The base image is a Debian bookworm minbase rootfs imported once per machine (no image
registry is reachable on these machines), found or made in this order:

1. ``AGENTSPROOF_TEST_IMAGE``, when set (an image the engine already has);
2. an image the engine already has: ``agentsproof-test/bookworm:base`` (made by step 3 or 4
   on an earlier run) or ``agentsproof-dev/bookworm:base`` (a development machine's);
3. a rootfs already on disk (``AGENTSPROOF_TEST_ROOTFS``, ``/var/cache/ap-rootfs/bookworm``
   or ``~/.cache/agentsproof/bookworm-rootfs``), ``docker import``-ed;
4. ``debootstrap --variant=minbase bookworm`` into ``~/.cache/agentsproof/bookworm-rootfs``
   (needs root and a Debian mirror; about 2-3 minutes), then imported.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

TEST_IMAGE = "agentsproof-test/bookworm:base"
DEV_IMAGE = "agentsproof-dev/bookworm:base"
ROOTFS_CACHE = Path.home() / ".cache" / "agentsproof" / "bookworm-rootfs"


def _docker(*args: str, timeout: float = 120, **kw: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["docker", *args], capture_output=True, timeout=timeout, check=False, **kw)  # type: ignore[call-overload, no-any-return]


def missing(why: str) -> None:
    """Skip the test (fail under CI, where the engine must be there)."""
    if os.environ.get("CI"):
        pytest.fail(f"the Docker engine is needed under CI: {why}")
    pytest.skip(why)


def engine_problem() -> str | None:
    """Why no engine can be used (None: it answers)."""
    if shutil.which("docker") is None:
        return "the docker CLI is not installed (apt-get install docker.io)"
    got = _docker("version", "--format", "{{.Server.Version}}", timeout=30)
    if got.returncode != 0:
        return f"no Docker engine answers at {os.environ.get('DOCKER_HOST', 'the default socket')}: {got.stderr.decode(errors='replace').strip()[:200]}"
    return None


def has_image(name: str) -> bool:
    return _docker("image", "inspect", name, timeout=30).returncode == 0


def _rootfs() -> Path | None:
    for candidate in (os.environ.get("AGENTSPROOF_TEST_ROOTFS"), "/var/cache/ap-rootfs/bookworm", str(ROOTFS_CACHE)):
        if candidate and (Path(candidate) / "bin" / "sh").exists() and (Path(candidate) / "etc" / "debian_version").is_file():
            return Path(candidate)
    return None


def _debootstrap() -> Path:
    if shutil.which("debootstrap") is None or os.geteuid() != 0:
        missing("no base image, no rootfs, and debootstrap cannot run here (install debootstrap, run as root)")
    ROOTFS_CACHE.parent.mkdir(parents=True, exist_ok=True)
    work = ROOTFS_CACHE.with_name("bookworm-rootfs.partial")
    if work.exists():
        shutil.rmtree(work)
    mirror = os.environ.get("AGENTSPROOF_DEBIAN_MIRROR", "http://deb.debian.org/debian")
    got = subprocess.run(["debootstrap", "--variant=minbase", "bookworm", str(work), mirror], capture_output=True, timeout=1800, check=False)
    if got.returncode != 0:
        missing(f"debootstrap failed: {got.stderr.decode(errors='replace').strip()[-300:]}")
    work.rename(ROOTFS_CACHE)
    return ROOTFS_CACHE


def base_image() -> str:
    """The shared base image's name (made once per machine, see the module docstring)."""
    chosen = os.environ.get("AGENTSPROOF_TEST_IMAGE")
    if chosen:
        if not has_image(chosen):
            missing(f"AGENTSPROOF_TEST_IMAGE={chosen} is not on the engine")
        return chosen
    for name in (TEST_IMAGE, DEV_IMAGE):
        if has_image(name):
            return name
    rootfs = _rootfs() or _debootstrap()
    tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
    got = _docker("import", "-", TEST_IMAGE, timeout=900, stdin=tar.stdout)
    tar.wait()
    if got.returncode != 0:
        missing(f"docker import of {rootfs} failed: {got.stderr.decode(errors='replace').strip()[:300]}")
    return TEST_IMAGE


def run_containers(label: str) -> list[str]:
    """Containers (running or not) carrying ``label`` (``key`` or ``key=value``)."""
    got = _docker("ps", "-aq", "--filter", f"label={label}", timeout=30)
    return got.stdout.decode().split()


def own_containers() -> list[str]:
    """Containers left by runs of this test process (their owner label names its pid):
    other processes may share the engine (another test session, a developer's run)."""
    got = _docker("ps", "-a", "--filter", "label=org.agentsproof.owner", "--format", '{{.ID}}\t{{.Label "org.agentsproof.owner"}}', timeout=30)
    mine = []
    for line in got.stdout.decode().splitlines():
        cid, _, owner = line.partition("\t")
        parts = owner.split("/")
        if len(parts) == 3 and parts[1] == str(os.getpid()):
            mine.append(cid)
    return mine
