"""An eval's environment: the Docker image every trial runs in, and the per-trial handle.

Three nouns, shared by the formats (which read ``environment:``), the executor (which owns
a trial's container), the targets (which run their agent through it) and the graders
(which read the workspace through it):

- :class:`EnvironmentSpec`: the ``environment:`` mapping of eval.yaml (and targets.yaml),
  as written: ``image`` or ``dockerfile`` (+ ``context``), ``workdir``, ``cpus``,
  ``memory_mb``, ``pids``, ``disk_mb``, ``allow_internet`` (default false),
  ``build_timeout``. Unknown keys are refused (one line naming the file and field).
- :class:`Environment`: the same, resolved against the file that declared it (absolute
  Dockerfile and context paths, the file named for error messages); it is what
  :class:`~agentsproof.model.items.EvalItem` carries. A format that builds its own
  (Harbor task folders) fills it directly.
- :class:`TrialEnvironment`: one trial's fresh container (a Protocol here; the engine is
  :mod:`agentsproof.isolation.container`): ``exec`` a command in it, copy files in and out,
  read one file. A target gets it as ``TrialInput.environment``; a grader as
  ``TrialContext.environment``, while the container still exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pydantic import Field, field_validator, model_validator

from agentsproof.model.graders import FieldError, Strict

DEFAULT_WORKDIR = "/workspace"
"""Where a trial's workspace is inside the container when ``workdir`` is not given."""
DEFAULT_BUILD_TIMEOUT = 1800.0
"""Seconds a ``docker build`` may take."""
DEFAULT_PIDS = 512
DEFAULT_MEMORY_MB = 4096
DEFAULT_DISK_MB = 2048
"""What a trial may write in its container (its writable layer) before it is stopped."""
MAX_BUILD_TIMEOUT = 6 * 3600.0


def _abs_posix(value: str, field: str) -> str:
    if not value.startswith("/") or "\x00" in value or any(p == ".." for p in value.split("/")):
        raise FieldError(field, f"{value!r} is not an absolute path inside the container (e.g. /workspace)")
    return value.rstrip("/") or "/"


class EnvironmentSpec(Strict):
    """``environment:``: the Docker image every trial of the eval runs in (a fresh container each)."""

    image: str | None = Field(None, min_length=1, description="An image name (pulled by the engine if absent), e.g. python:3.12-slim.")
    dockerfile: str | None = Field(None, min_length=1, description="A Dockerfile (relative to the yaml), built once per content digest.")
    context: str | None = Field(None, min_length=1, description="The build context folder (relative to the yaml); default: the Dockerfile's folder.")
    workdir: str | None = Field(None, description=f"The workspace inside the container (absolute); default {DEFAULT_WORKDIR}.")
    cpus: float | None = Field(None, gt=0, le=256, allow_inf_nan=False, description="CPUs a trial may use (docker --cpus).")
    memory_mb: int | None = Field(None, ge=16, le=1024 * 1024, strict=True, description=f"Memory cap in MB (no swap); default {DEFAULT_MEMORY_MB}.")
    pids: int | None = Field(None, ge=8, le=1_000_000, strict=True, description=f"Process cap (docker --pids-limit); default {DEFAULT_PIDS}.")
    disk_mb: int | None = Field(
        None, ge=1, le=1024 * 1024, strict=True, description=f"What a trial may write in its container, in MB; default {DEFAULT_DISK_MB}."
    )
    allow_internet: bool = Field(False, strict=True, description="false (default): no network but the model endpoint's relay. true: the host's network.")
    build_timeout: float | None = Field(
        None, gt=0, le=MAX_BUILD_TIMEOUT, allow_inf_nan=False, description=f"Seconds the image build may take; default {DEFAULT_BUILD_TIMEOUT:g}."
    )

    @field_validator("workdir")
    @classmethod
    def _workdir(cls, value: str | None) -> str | None:
        return None if value is None else _abs_posix(value, "workdir")

    @model_validator(mode="after")
    def _one_source(self) -> EnvironmentSpec:
        if (self.image is None) == (self.dockerfile is None):
            raise FieldError("image" if self.image is not None else "image/dockerfile", "give exactly one of 'image: NAME' and 'dockerfile: FILE'")
        if self.context is not None and self.dockerfile is None:
            raise FieldError("context", "a build context needs 'dockerfile:'")
        return self


@dataclass(frozen=True)
class Environment:
    """A resolved ``environment:``: what the engine builds or pulls, and how each trial's container is capped."""

    source: str
    """The file that declared it (for one-line errors), as shown to the user."""
    field: str = "environment"
    """Where in that file (e.g. ``environment`` or ``[environment]``)."""
    image: str | None = None
    dockerfile: Path | None = None
    context: Path | None = None
    workdir: str | None = None
    """None: the image's own WORKDIR when it has one, else :data:`DEFAULT_WORKDIR`."""
    cpus: float | None = None
    memory_mb: int = DEFAULT_MEMORY_MB
    pids: int = DEFAULT_PIDS
    disk_mb: int = DEFAULT_DISK_MB
    allow_internet: bool = False
    build_timeout: float = DEFAULT_BUILD_TIMEOUT
    baseline_empty: tuple[str, ...] = ()
    """Context paths (relative, POSIX) replaced by empty folders in the baseline arm's
    image (a task whose Dockerfile COPYs its skills: the baseline must not see them)."""

    def describe(self) -> dict[str, object]:
        """What determines its results (the journal fingerprint, the report's settings)."""
        return {
            "image": self.image,
            "dockerfile": str(self.dockerfile) if self.dockerfile else None,
            "workdir": self.workdir,
            "cpus": self.cpus,
            "memory_mb": self.memory_mb,
            "pids": self.pids,
            "disk_mb": self.disk_mb,
            "allow_internet": self.allow_internet,
        }


def resolve(spec: EnvironmentSpec, base: Path, source: str, field: str = "environment") -> Environment:
    """``spec`` with its paths made absolute against ``base`` (the declaring file's folder).
    The caller confines and checks the paths (:func:`agentsproof.core.inputs.confined`)."""
    dockerfile = (base / spec.dockerfile).resolve() if spec.dockerfile else None
    context = (base / spec.context).resolve() if spec.context else (dockerfile.parent if dockerfile else None)
    return Environment(
        source=source,
        field=field,
        image=spec.image,
        dockerfile=dockerfile,
        context=context,
        workdir=spec.workdir,
        cpus=spec.cpus,
        memory_mb=spec.memory_mb if spec.memory_mb is not None else DEFAULT_MEMORY_MB,
        pids=spec.pids if spec.pids is not None else DEFAULT_PIDS,
        disk_mb=spec.disk_mb if spec.disk_mb is not None else DEFAULT_DISK_MB,
        allow_internet=spec.allow_internet,
        build_timeout=spec.build_timeout if spec.build_timeout is not None else DEFAULT_BUILD_TIMEOUT,
    )


def resolve_confined(spec: EnvironmentSpec, path: Path, field: str = "environment", *, root: Path | None = None) -> Environment:
    """``spec`` as written in the file ``path`` (an eval file, a targets.yaml), its Dockerfile
    and context confined to ``root`` (default: the eval's tree, :func:`~agentsproof.core.inputs.confined`)
    and checked (InputError naming the field)."""
    from agentsproof.core.errors import InputError
    from agentsproof.core.inputs import confined, display

    src = display(path)
    if spec.dockerfile is not None:
        dockerfile = confined(spec.dockerfile, path, f"{field}.dockerfile", root=root)
        if not dockerfile.is_file():
            raise InputError(src, f"{field}.dockerfile", f"file {spec.dockerfile!r} not found (looked in {display(path.parent)})")
        context = confined(spec.context, path, f"{field}.context", root=root) if spec.context is not None else dockerfile.parent
        if not context.is_dir():
            raise InputError(src, f"{field}.context", f"folder {spec.context!r} not found (looked in {display(path.parent)})")
    return resolve(spec, path.resolve().parent, src, field)


@dataclass
class ExecResult:
    """What a command run in a trial's container left."""

    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    latency_s: float = 0.0
    limit: str | None = None
    """A limit the container hit while it ran (``memory``, ``pids``, ``disk``), as one line; None: none."""


class TrialEnvironment(Protocol):
    """One trial's own container, alive from before the agent starts until its graders finished."""

    @property
    def workdir(self) -> str:
        """The workspace's absolute path inside the container."""
        ...

    @property
    def name(self) -> str:
        """The container's name (labelled with the run; for logs)."""
        ...

    async def exec(
        self,
        argv: list[str],
        *,
        env: dict[str, str] | None = None,
        timeout: float,
        workdir: str | None = None,
        stdin: bytes | None = None,
        user: str | None = None,
        keep: tuple[str, ...] | None = None,
    ) -> ExecResult:
        """Run ``argv`` (no shell) in the container; a timeout kills it and sets ``timed_out``.
        A container that cannot run it raises :class:`~agentsproof.core.errors.TargetError`.
        ``keep`` (an agent's last command): the workdir, and those of these absolute paths
        that exist, may be carried out by the same call as it ends, for the next
        :meth:`copy_out` of the workdir and :meth:`read_file` (any later call drops it)."""
        ...

    async def copy_in(self, host: Path, dest: str) -> None:
        """Copy the host folder ``host``'s contents (never following a link) into ``dest`` in the container."""
        ...

    async def copy_in_once(self, host: Path, dest: str) -> None:
        """:meth:`copy_in`, unless this container already has ``host`` at ``dest`` (noted by the
        container itself: an agent's harness, kept for the session's later turns)."""
        ...

    async def copy_out(self, src: str, host: Path, *, cap_bytes: int) -> list[str]:
        """Copy the container folder ``src``'s contents into the (empty) host folder ``host``:
        regular files, folders and links that stay inside only; returns notes on what was left out."""
        ...

    async def read_file(self, path: str, *, cap_bytes: int) -> bytes | None:
        """One file's bytes (at most ``cap_bytes``); None when it does not exist."""
        ...

    async def stop(self, why: str) -> None:
        """Stop every process in the container now (a timeout); later commands fail with ``why``."""
        ...
