"""One Harbor task folder as read: ``task.toml``'s keys checked, its files found.

What is honoured (Harbor's ``TaskConfig``, schema 1.0 to 1.3): ``[agent] timeout_sec``
(the trial's timeout), ``[verifier] timeout_sec`` / ``env`` / ``user`` (the verifier
grader's), ``[solution] env`` (the oracle's), ``[environment]`` ``build_timeout_sec``,
``docker_image`` (only when there is no ``environment/Dockerfile``: the image is built from
the task's own Dockerfile when it has one), ``cpus``, ``memory_mb`` (or the older
``memory = "2G"``), ``storage_mb`` (or ``storage``), ``network_mode`` (``no-network`` or
``public``; or the older ``allow_internet``; Harbor's default, public, when absent),
``workdir``, ``skills_dir``, ``os = "linux"``. ``[task]``, ``[metadata]``, ``version`` /
``schema_version``, ``source`` and ``artifacts`` are descriptive (the workspace is kept
anyway).

What cannot be honoured is refused by name, one line naming the file and key (exit 30):
multi-step tasks (``steps`` / a ``steps/`` folder), compose services
(``environment/docker-compose.yaml``, ``[verifier] collect``), MCP servers, GPUs and TPUs,
a separate verifier environment, a Windows task, ``[agent] user``, a network allowlist or a
phase's own network policy, ``[environment] env`` and ``healthcheck``. Another unknown key is named on stderr
once and otherwise ignored (Harbor adds keys between versions).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError

TASK_FILE = "task.toml"
INSTRUCTION_FILE = "instruction.md"
MAX_TOML_BYTES = 200_000
MAX_INSTRUCTION_BYTES = 1_000_000
MAX_TIMEOUT_S = 24 * 3600.0
COMPOSE_FILES = ("docker-compose.yaml", "docker-compose.yml", "compose.yaml", "compose.yml")

KNOWN: dict[str, frozenset[str]] = {
    "": frozenset(
        {
            "version",
            "schema_version",
            "task",
            "metadata",
            "agent",
            "verifier",
            "environment",
            "solution",
            "source",
            "steps",
            "multi_step_reward_strategy",
            "artifacts",
        }
    ),
    "agent": frozenset({"timeout_sec", "user", "network_mode", "allowed_hosts"}),
    "verifier": frozenset({"timeout_sec", "env", "user", "environment", "environment_mode", "collect", "network_mode", "allowed_hosts"}),
    "solution": frozenset({"env"}),
    "environment": frozenset(
        {
            "build_timeout_sec",
            "docker_image",
            "os",
            "cpus",
            "memory_mb",
            "memory",
            "storage_mb",
            "storage",
            "gpus",
            "gpu_types",
            "tpu",
            "allow_internet",
            "network_mode",
            "allowed_hosts",
            "env",
            "healthcheck",
            "mcp_servers",
            "skills_dir",
            "workdir",
        }
    ),
}
"""The keys of each table this reader knows (honoured or refused); ``task`` and ``metadata`` are free-form."""


@dataclass
class HarborTask:
    """A Harbor task folder, its ``task.toml`` read and its files found."""

    folder: Path
    toml: Path
    source: str
    """``task.toml`` as messages name it."""
    name: str
    instruction: str
    dockerfile: Path | None
    docker_image: str | None
    tests: Path
    """The ``tests/`` folder (copied to ``/tests`` in the container)."""
    solution: Path | None
    """``solution/solve.sh``, when there is one (the oracle)."""
    agent_timeout: float | None = None
    verifier_timeout: float | None = None
    verifier_env: dict[str, str] = field(default_factory=dict)
    verifier_user: str | None = None
    solution_env: dict[str, str] = field(default_factory=dict)
    build_timeout: float | None = None
    cpus: float | None = None
    memory_mb: int | None = None
    storage_mb: int | None = None
    allow_internet: bool = True
    workdir: str | None = None
    skills_dir: str | None = None
    ignored: list[str] = field(default_factory=list)
    """Unknown keys, named on stderr once and otherwise ignored."""


def is_task_folder(path: Path) -> bool:
    """A folder holding ``task.toml`` and ``instruction.md`` (regular files)."""
    try:
        return path.is_dir() and (path / TASK_FILE).is_file() and (path / INSTRUCTION_FILE).is_file()
    except OSError:
        return False


def task_folder(path: Path) -> Path:
    """The task folder of ``path``: itself, or the folder of its ``task.toml`` / ``instruction.md``."""
    return path.parent if path.name in (TASK_FILE, INSTRUCTION_FILE) and not path.is_dir() else path


def _number(value: Any, src: str, key: str, *, low: float = 0.0, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not low < value <= high:
        shown = f" and at most {high:g}" if math.isfinite(high) else ""
        raise InputError(src, key, f"expected a number above {low:g}{shown}, got {value!r}")
    return float(value)


def _int(value: Any, src: str, key: str, *, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InputError(src, key, f"expected a whole number of at least {low}, got {value!r}")
    return value


SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)[iI]?[bB]?\s*$")


def _size_mb(value: Any, src: str, key: str) -> int:
    """Harbor's older ``memory = "2G"`` / ``storage = "10G"``, in MB."""
    match = SIZE.match(value) if isinstance(value, str) else None
    if match is None:
        raise InputError(src, key, f"expected a size such as '2G' or '512M', got {value!r}")
    scale = {"": 1 / (1024 * 1024), "k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}[match.group(2).lower()]
    mb = int(float(match.group(1)) * scale)
    if mb < 1:
        raise InputError(src, key, f"{value!r} is less than 1 MB")
    return mb


VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def _env(value: Any, src: str, key: str) -> dict[str, str]:
    """An ``env`` table: names to strings; ``${NAME}`` (``${NAME:-default}``) is taken from
    agentsproof's environment, and the value registered as a secret (never in a report)."""
    if not isinstance(value, dict):
        raise InputError(src, key, 'expected a table of NAME = "value"')
    out: dict[str, str] = {}
    for name, raw in value.items():
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise InputError(src, f"{key}.{name}", "is not a variable name")
        if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
            raise InputError(src, f"{key}.{name}", "expected a string")
        text = str(raw)

        def expand(m: re.Match[str], name: str = name) -> str:
            got = os.environ.get(m.group(1))
            if got is None and m.group(2) is None:
                raise InputError(src, f"{key}.{name}", f"${{{m.group(1)}}} is not set in agentsproof's environment")
            if got is not None:
                from agentsproof.core.scrub import register_var

                register_var(m.group(1), got)
            return got if got is not None else m.group(2)

        out[name] = VAR.sub(expand, text)
    return out


def _table(data: dict[str, Any], name: str, src: str) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise InputError(src, name, "expected a table")
    return value


def _refuse(src: str, key: str, why: str) -> InputError:
    return InputError(src, key, f"{why}; agentsproof cannot run this Harbor task as it is (see docs/harbor.md, 'What is refused')")


def _refusals(data: dict[str, Any], folder: Path, src: str) -> None:
    """Every key that cannot be honoured, refused by name (the first one found)."""
    if "steps" in data or "multi_step_reward_strategy" in data or (folder / "steps").is_dir():
        raise _refuse(src, "steps", "multi-step tasks (ordered steps with their own instructions and tests) are not supported")
    env = _table(data, "environment", src)
    for name in COMPOSE_FILES:
        if (folder / "environment" / name).exists():
            raise _refuse(src, f"environment/{name}", "compose services (several containers) are not supported")
    if env.get("mcp_servers"):
        raise _refuse(src, "environment.mcp_servers", "MCP servers are not supported")
    gpus = env.get("gpus", 0)
    if gpus not in (0, None):
        raise _refuse(src, "environment.gpus", f"GPUs are not supported (asks for {gpus!r})")
    if env.get("tpu"):
        raise _refuse(src, "environment.tpu", "TPUs are not supported")
    os_name = env.get("os", "linux")
    if os_name != "linux":
        raise _refuse(src, "environment.os", f"only Linux tasks run (asks for {os_name!r})")
    if env.get("network_mode") == "allowlist" or env.get("allowed_hosts"):
        raise _refuse(src, "environment.network_mode", "a network allowlist is not supported (no-network or public only)")
    if env.get("env"):
        raise _refuse(src, "environment.env", "environment variables for the task's container are not supported")
    if env.get("healthcheck"):
        raise _refuse(src, "environment.healthcheck", "a readiness healthcheck is not supported")
    verifier = _table(data, "verifier", src)
    if "environment" in verifier or verifier.get("environment_mode") == "separate":
        key = "verifier.environment" if "environment" in verifier else "verifier.environment_mode"
        raise _refuse(src, key, "a separate verifier environment is not supported (the verifier runs in the agent's container)")
    if verifier.get("collect"):
        raise _refuse(src, "verifier.collect", "collect commands run in compose services, which are not supported")
    agent = _table(data, "agent", src)
    if agent.get("user") not in (None, "root", 0):
        raise _refuse(src, "agent.user", f"running the agent as another OS user ({agent['user']!r}) is not supported")
    for phase, table in (("agent", agent), ("verifier", verifier)):
        if table.get("network_mode") is not None or table.get("allowed_hosts"):
            raise _refuse(src, f"{phase}.network_mode", "a network policy of its own for one phase is not supported (give [environment] network_mode)")


def _unknown(data: dict[str, Any]) -> list[str]:
    out = [k for k in data if k not in KNOWN[""]]
    for table, keys in KNOWN.items():
        if table and isinstance(data.get(table), dict):
            out += [f"{table}.{k}" for k in data[table] if k not in keys]
    return out


def _container_path(value: Any, src: str, key: str) -> str:
    if not isinstance(value, str) or not value.startswith("/") or "\x00" in value or ".." in value.split("/"):
        raise InputError(src, key, f"expected an absolute path inside the container, got {value!r}")
    return value.rstrip("/") or "/"


def read_task(path: Path) -> HarborTask:
    """The Harbor task at ``path`` (its folder, or its ``task.toml``); InputError naming the file and key otherwise."""
    import tomllib

    from agentsproof.core.inputs import display, read_text

    folder = task_folder(Path(path))
    toml = folder / TASK_FILE
    src = display(toml)
    if not is_task_folder(folder):
        raise InputError(display(folder), None, f"not a Harbor task folder (it needs {TASK_FILE} and {INSTRUCTION_FILE})")
    text = read_text(toml, source=src, field=None, max_bytes=MAX_TOML_BYTES, what="task file")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise InputError(src, None, f"not valid TOML: {err}") from None
    _refusals(data, folder, src)
    instruction = read_text(
        folder / INSTRUCTION_FILE, source=display(folder / INSTRUCTION_FILE), field=None, max_bytes=MAX_INSTRUCTION_BYTES, what="instruction"
    )
    if not instruction.strip():
        raise InputError(display(folder / INSTRUCTION_FILE), None, "is empty; it is the agent's instruction")
    agent, verifier = _table(data, "agent", src), _table(data, "verifier", src)
    env, solution = _table(data, "environment", src), _table(data, "solution", src)
    dockerfile = folder / "environment" / "Dockerfile"
    image = env.get("docker_image")
    if image is not None and (not isinstance(image, str) or not image.strip()):
        raise InputError(src, "environment.docker_image", f"expected an image name, got {image!r}")
    if not dockerfile.is_file() and image is None:
        raise InputError(src, "environment", "the task has no environment/Dockerfile and no [environment] docker_image; nothing to run it in")
    tests = folder / "tests"
    if not (tests / "test.sh").is_file():
        raise InputError(display(tests / "test.sh"), None, "not found: a Harbor task's verifier is tests/test.sh (it writes /logs/verifier/reward.txt)")
    solve = folder / "solution" / "solve.sh"
    task = HarborTask(
        folder=folder,
        toml=toml,
        source=src,
        name=folder.resolve().name,
        instruction=instruction,
        dockerfile=dockerfile if dockerfile.is_file() else None,
        docker_image=image if not dockerfile.is_file() else None,
        tests=tests,
        solution=solve if solve.is_file() else None,
        ignored=_unknown(data),
    )
    if "timeout_sec" in agent:
        task.agent_timeout = _number(agent["timeout_sec"], src, "agent.timeout_sec", high=MAX_TIMEOUT_S)
    if "timeout_sec" in verifier:
        task.verifier_timeout = _number(verifier["timeout_sec"], src, "verifier.timeout_sec", high=MAX_TIMEOUT_S)
    if "env" in verifier:
        task.verifier_env = _env(verifier["env"], src, "verifier.env")
    if verifier.get("user") is not None:
        user = verifier["user"]
        if isinstance(user, bool) or not isinstance(user, (str, int)) or not str(user).strip():
            raise InputError(src, "verifier.user", f"expected a user name or uid, got {user!r}")
        task.verifier_user = str(user)
    if "env" in solution:
        task.solution_env = _env(solution["env"], src, "solution.env")
    if "build_timeout_sec" in env:
        task.build_timeout = _number(env["build_timeout_sec"], src, "environment.build_timeout_sec", high=6 * 3600.0)
    if "cpus" in env:
        task.cpus = _number(env["cpus"], src, "environment.cpus", high=256)
    if "memory_mb" in env:
        task.memory_mb = _int(env["memory_mb"], src, "environment.memory_mb", low=16)
    elif "memory" in env:
        task.memory_mb = _size_mb(env["memory"], src, "environment.memory")
    if "storage_mb" in env:
        task.storage_mb = _int(env["storage_mb"], src, "environment.storage_mb")
    elif "storage" in env:
        task.storage_mb = _size_mb(env["storage"], src, "environment.storage")
    if "network_mode" in env:  # Harbor 0.26's spelling: no-network or public (allowlist refused above)
        if env["network_mode"] not in ("no-network", "public"):
            raise InputError(src, "environment.network_mode", f"expected 'no-network' or 'public', got {env['network_mode']!r}")
        task.allow_internet = env["network_mode"] == "public"
    elif "allow_internet" in env:  # the older spelling
        if not isinstance(env["allow_internet"], bool):
            raise InputError(src, "environment.allow_internet", f"expected true or false, got {env['allow_internet']!r}")
        task.allow_internet = env["allow_internet"]
    if "workdir" in env:
        task.workdir = _container_path(env["workdir"], src, "environment.workdir")
    if "skills_dir" in env:
        task.skills_dir = _container_path(env["skills_dir"], src, "environment.skills_dir")
    return task
