"""agentv's set-up, read into commands run around every agent trial (:mod:`agentsproof.model.setup`).

- ``environment.setup`` (``{command: [argv], cwd, timeout_ms}``) with ``environment.env``:
  run before each trial with the trial's workspace seen at agentv's ``workdir`` path, in
  ``cwd`` (relative to the workdir) or the folder of the file declaring it, the recipe's
  JSON on stdin and ``AGENTV_ENVIRONMENT_WORKDIR`` set, as agentv's host environment does;
- ``workspace`` (inline, or ``file://workspace.yaml``): ``template`` (a folder, or a
  ``.code-workspace`` file's folder) seeds each trial's workspace when the suite has no
  ``environment.workdir``; ``hooks.before_all``/``before_each``/``after_each``/``after_all``
  (``command`` argv or a shell line, ``cwd``, ``timeout_ms``) run with agentv's JSON
  context on stdin and ``{{workspace_path}}``, ``{{test_id}}`` … filled in their
  arguments, in ``cwd`` or the eval's folder (the workspace file's); ``repos`` are cloned
  into the workspace (``git clone``, ``checkout.ref``); ``scope``, ``isolation``, ``mode``,
  ``docker``, ``env`` are read with a note;
- ``extensions``: ``file://hook.mjs:beforeAll`` runs the module's exported function with
  bun (agentv's runtime, TypeScript too; node without it), given agentv's context (``workspace_path``, ``test_id``, ``eval_dir`` …);
  ``agentv:agent-rules`` is read with a note (it tells agentv's own providers where the
  workspace's skills and rules are; an agent target finds them in its workspace itself).

Every path stays inside the project (:mod:`agentsproof.core.project`). Hooks run only for
agent targets: the model alone has no workspace (a note says so).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from agentsproof.core.errors import InputError
from agentsproof.model.setup import SetupCommand

HOOKS = ("before_all", "before_each", "after_each", "after_all")
EXT_HOOKS: dict[str, Literal["before", "after"]] = {"beforeAll": "before", "beforeEach": "before", "afterEach": "after", "afterAll": "after"}
DEFAULT_TIMEOUT_S = {"before": 60.0, "after": 30.0}
"""agentv's defaults for a workspace hook (fatal / warn)."""
SETUP_TIMEOUT_S = 600.0
WORKSPACE_KEYS = {"template", "hooks", "repos", "scope", "isolation", "mode", "docker", "env", "path"}
HOOK_KEYS = {"command", "cwd", "timeout_ms", "timeoutMs", "reset"}
NODE_HOOK = (
    "import { pathToFileURL } from 'node:url';"
    "let data = ''; for await (const chunk of process.stdin) data += chunk;"
    "const ctx = JSON.parse(data || '{}'); const [file, name] = process.argv.slice(1);"
    "const m = await import(pathToFileURL(file).href);"
    "const fn = m[name] ?? (m.default && m.default[name]);"
    "if (typeof fn !== 'function') { console.error(`${file} does not export function ${name}`); process.exit(2); }"
    "const r = await fn(ctx, { hookName: name });"
    "if (r && r.output) console.log(String(r.output));"
)


@dataclass
class SuiteSetup:
    """What an EVAL.yaml sets up: a workspace seed from ``workspace.template``, the commands, the notes."""

    template: Path | None = None
    environment: Any = None
    """agentv's ``environment: {type: docker, …}`` as a :class:`agentsproof.model.environment.Environment`."""
    commands: list[SetupCommand] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _err(src: str, where: str, message: str) -> InputError:
    return InputError(src, where, message)


def _argv(src: str, where: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str) and value.strip():
        return ("/bin/sh", "-c", value)
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise _err(src, where, "must be a command: a list of arguments (argv) or a shell line")


def _timeout(src: str, where: str, raw: dict[str, Any], default: float) -> float:
    ms = raw.get("timeout_ms", raw.get("timeoutMs"))
    if ms is None:
        return default
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not 0 < ms <= 86_400_000:
        raise _err(src, f"{where}.timeout_ms", "must be a number of milliseconds from 1 to 86400000")
    return ms / 1000


def _mapping_or_file(src: str, where: str, value: Any, path: Path) -> tuple[dict[str, Any], Path]:
    """An inline mapping, or ``file://x.yaml`` holding one (its paths relative to it)."""
    from agentsproof.core.project import resolve_ref
    from agentsproof.core.validation import read_yaml

    if isinstance(value, str):
        rel = value.strip().removeprefix("file://")
        target = resolve_ref(rel, path, where, search_up=True)
        data = read_yaml(target)
        if isinstance(data, dict) and where in data and len(data) == 1:
            data = data[where]
        value, path = data, target
    if not isinstance(value, dict):
        raise _err(src, where, "must be a mapping or a file://… file holding one")
    return value, path


def environment_setup(src: str, env: Any, path: Path, project: Path, out: SuiteSetup) -> None:
    """``environment.setup`` (and ``environment.env``) as a ``before`` command."""
    from agentsproof.core.project import resolve_ref

    if env is None:
        return
    env, where_file = _mapping_or_file(src, "environment", env, path)
    if env.get("type") == "docker":
        out.environment = docker_environment(src, env, where_file, project, out)
    setup = env.get("setup")
    variables = env.get("env") or {}
    if not isinstance(variables, dict) or not all(isinstance(k, str) and isinstance(v, (str, int, float)) for k, v in variables.items()):
        raise _err(src, "environment.env", "must be a mapping of names to text values")
    if setup is None:
        return
    if not isinstance(setup, dict):
        raise _err(src, "environment.setup", "must be a mapping (command: [argv], cwd, timeout_ms)")
    extra = sorted(str(k) for k in setup if k not in ("command", "cwd", "timeout_ms"))
    if extra:
        raise _err(src, f"environment.setup.{extra[0]}", "unknown key; expected one of command, cwd, timeout_ms (agentv's own rule)")
    argv = _argv(src, "environment.setup.command", setup.get("command"))
    rel = env.get("workdir")
    if not isinstance(rel, str) or not rel.strip():
        raise _err(src, "environment.workdir", "environment.setup needs a workdir (the folder it prepares)")
    if out.environment is not None:  # docker: agentv runs it in the container's workdir; here in the workspace copied into it
        sub = str(setup["cwd"]) if isinstance(setup.get("cwd"), str) else "."
        out.notes.append("environment.setup (docker): runs in the sandbox on the trial's workspace before its container starts (the workspace is copied in)")
        out.commands.append(
            SetupCommand(
                label="environment.setup",
                when="before",
                argv=argv,
                cwd="{{workspace_path}}/" + sub.lstrip("/"),
                project=str(project),
                stdin="environment",
                env=tuple((k, str(v)) for k, v in variables.items()),
                timeout=_timeout(src, "environment.setup", setup, SETUP_TIMEOUT_S),
                eval_dir=str(path.resolve().parent),
            )
        )
        return
    workdir = resolve_ref(rel, where_file, "environment.workdir", must_exist=False, root=project)
    source_dir = where_file.resolve().parent
    cwd = source_dir
    if setup.get("cwd") is not None:
        if not isinstance(setup["cwd"], str):
            raise _err(src, "environment.setup.cwd", "must be a folder path")
        cwd = (workdir / setup["cwd"]).resolve() if not setup["cwd"].startswith("/") else Path(setup["cwd"])
        if not cwd.is_relative_to(project):
            raise _err(src, "environment.setup.cwd", f"{setup['cwd']!r} is outside the project {project}")
    out.commands.append(
        SetupCommand(
            label="environment.setup",
            when="before",
            argv=argv,
            cwd=str(cwd),
            project=str(project),
            mount_at=str(workdir),
            stdin="environment",
            env=tuple((k, str(v)) for k, v in variables.items()),
            timeout=_timeout(src, "environment.setup", setup, SETUP_TIMEOUT_S),
            eval_dir=str(path.resolve().parent),
        )
    )


def workspace_setup(src: str, value: Any, path: Path, project: Path, out: SuiteSetup) -> None:
    """agentv's ``workspace``: its template, hooks and repos."""
    from agentsproof.core.project import resolve_ref

    if value is None:
        return
    ws, where_file = _mapping_or_file(src, "workspace", value, path)
    extra = sorted(str(k) for k in ws if k not in WORKSPACE_KEYS)
    if extra:
        raise _err(src, f"workspace.{extra[0]}", f"unknown key; expected one of {', '.join(sorted(WORKSPACE_KEYS))}")
    base = where_file.resolve().parent
    template = ws.get("template")
    if template is not None:
        if not isinstance(template, str) or not template.strip():
            raise _err(src, "workspace.template", "must be a folder (or a .code-workspace file)")
        found = resolve_ref(template, where_file, "workspace.template", search_up=True)
        out.template = found if found.is_dir() else found.parent
    for key in ("scope", "isolation", "mode", "docker", "env", "path"):
        if ws.get(key) is not None:
            out.notes.append(f"workspace.{key}: read, not used: every trial runs in a fresh copy of the workspace (agentv's scope: attempt)")
    hooks = ws.get("hooks") or {}
    if not isinstance(hooks, dict):
        raise _err(src, "workspace.hooks", "must be a mapping of before_all, before_each, after_each, after_all")
    if hooks.get("enabled") is False:
        hooks = {}
    extra = sorted(str(k) for k in hooks if k not in (*HOOKS, "enabled"))
    if extra:
        raise _err(src, f"workspace.hooks.{extra[0]}", f"unknown hook; expected one of {', '.join(HOOKS)}")
    for name in HOOKS:  # before_all before before_each, after_each before after_all
        raw = hooks.get(name)
        if raw is None:
            continue
        where = f"workspace.hooks.{name}"
        if not isinstance(raw, dict):
            raise _err(src, where, "must be a mapping (command, cwd, timeout_ms)")
        extra = sorted(str(k) for k in raw if k not in HOOK_KEYS)
        if extra:
            raise _err(src, f"{where}.{extra[0]}", f"unknown key; expected one of {', '.join(sorted(HOOK_KEYS))}")
        when: Literal["before", "after"] = "before" if name.startswith("before") else "after"
        cwd = base
        if raw.get("cwd") is not None:
            if not isinstance(raw["cwd"], str):
                raise _err(src, f"{where}.cwd", "must be a folder path")
            cwd = resolve_ref(raw["cwd"], where_file, f"{where}.cwd", root=project)
        out.commands.append(
            SetupCommand(
                label=where,
                when=when,
                argv=_argv(src, f"{where}.command", raw.get("command")),
                cwd=str(cwd),
                project=str(project),
                stdin="workspace",
                timeout=_timeout(src, where, raw, DEFAULT_TIMEOUT_S[when]),
                fatal=when == "before",
                eval_dir=str(path.resolve().parent),
            )
        )
    repos = ws.get("repos") or []
    if not isinstance(repos, list):
        raise _err(src, "workspace.repos", "must be a list of repositories (path, source, checkout)")
    for i, repo in enumerate(repos):
        out.commands.append(_repo(src, f"workspace.repos[{i}]", repo, where_file, project))


def _repo(src: str, where: str, repo: Any, where_file: Path, project: Path) -> SetupCommand:
    """One ``workspace.repos`` entry as a ``git clone`` into the workspace (in the sandbox: no network, so a remote one fails there, saying so)."""
    from agentsproof.core.safepath import parts

    if not isinstance(repo, dict):
        raise _err(src, where, "must be a mapping (path, source: {type: git, url} or {type: local, path}, checkout: {ref})")
    dest = repo.get("path")
    if not isinstance(dest, str) or not dest.strip():
        raise _err(src, f"{where}.path", "must be a folder path inside the workspace")
    try:
        parts(dest)
    except OSError:
        raise _err(src, f"{where}.path", f"{dest!r} leaves the workspace") from None
    source = repo.get("source") or {}
    if not isinstance(source, dict):
        raise _err(src, f"{where}.source", "must be a mapping (type: git, url) or (type: local, path)")
    url = source.get("url") or source.get("path")
    if not isinstance(url, str) or not url.strip():
        raise _err(src, f"{where}.source", "needs a url (type: git) or a path (type: local)")
    if source.get("type") == "local":
        from agentsproof.core.project import resolve_ref

        url = str(resolve_ref(url, where_file, f"{where}.source.path", root=project))
    checkout = repo.get("checkout") or {}
    ref = checkout.get("ref") if isinstance(checkout, dict) else None
    script = 'git clone --quiet "$1" "$2"' + (' && git -C "$2" checkout --quiet "$3"' if isinstance(ref, str) and ref else "")
    argv = ("/bin/sh", "-c", script, "sh", url, "{{workspace_path}}/" + dest.strip("/"), *([ref] if isinstance(ref, str) and ref else []))
    return SetupCommand(label=where, when="before", argv=argv, cwd=str(where_file.resolve().parent), project=str(project), timeout=SETUP_TIMEOUT_S)


def extensions_setup(src: str, value: Any, path: Path, project: Path, out: SuiteSetup) -> None:
    """agentv's ``extensions``: file hooks run with bun (agentv's runtime) when it is found, else node; agent-rules noted."""
    from agentsproof.core.project import resolve_ref

    if value is None:
        return
    if not isinstance(value, list):
        raise _err(src, "extensions", "must be a list (file://hook.mjs:beforeAll, agentv:agent-rules)")
    for i, ext in enumerate(value):
        where = f"extensions[{i}]"
        ident = ext.get("id") if isinstance(ext, dict) else ext
        if not isinstance(ident, str):
            raise _err(src, where, "must be file://path:hook or agentv:agent-rules")
        if ident.startswith("agentv:agent-rules"):
            out.notes.append(
                f"{where}: agentv:agent-rules tells agentv's providers where the workspace's skills, hooks, agents and rules are; "
                "an agent target reads its workspace itself, so it is read, not run"
            )
            continue
        if not ident.startswith("file://"):
            raise _err(src, where, f"{ident!r}: expected file://path/to/hook.mjs:beforeAll or agentv:agent-rules")
        rel, _, hook = ident.removeprefix("file://").rpartition(":")
        if isinstance(ext, dict) and ext.get("hook"):
            rel, hook = ident.removeprefix("file://"), str(ext["hook"])
        if hook not in EXT_HOOKS or not rel:
            raise _err(src, where, f"{ident!r}: the hook must be one of {', '.join(EXT_HOOKS)} (file://hook.mjs:beforeAll)")
        module = resolve_ref(rel, path, where, search_up=True)
        when = EXT_HOOKS[hook]
        from agentsproof.core.bun import find_bun

        bun = find_bun()  # agentv's own runtime, TypeScript included; else node (TypeScript from node 22.6)
        flags = ["--experimental-strip-types"] if module.suffix in (".ts", ".mts", ".cts") else []
        if flags and not bun and _node_version() < (22, 6):  # node before 22.6 has no --experimental-strip-types: the hook fails, its trials error
            out.notes.append(f"{where}: a TypeScript hook needs Node.js 22.6 or later (--experimental-strip-types); node here is older, so its trials error")
        runner = (bun, "-e") if bun else (shutil.which("node") or "node", *flags, "--input-type=module", "-e")
        out.commands.append(
            SetupCommand(
                label=f"{where}:{hook}",
                when=when,
                argv=(*runner, NODE_HOOK, str(module), hook),
                cwd=str(path.resolve().parent),
                project=str(project),
                stdin="extension",
                timeout=DEFAULT_TIMEOUT_S[when],
                fatal=when == "before",
                eval_dir=str(path.resolve().parent),
            )
        )


def suite_setup(src: str, data: dict[str, Any], path: Path) -> SuiteSetup:
    """Everything an EVAL.yaml sets up (see the module); InputError naming the field."""
    from agentsproof.core.project import project_root

    project = project_root(path)
    out = SuiteSetup()
    workspace_setup(src, data.get("workspace"), path, project, out)
    environment_setup(src, data.get("environment"), path, project, out)
    extensions_setup(src, data.get("extensions"), path, project, out)
    order = {"environment.setup": 0}
    out.commands.sort(key=lambda c: (c.when != "before", order.get(c.label, 1)))  # the recipe first, as agentv prepares it
    return out


DOCKER_KEYS = {"type", "workdir", "context", "dockerfile", "image", "env", "resources", "mounts", "secrets", "setup"}
_SIZE = {"k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}


def _megabytes(src: str, where: str, value: Any) -> int:
    """Docker's sizes (``2g``, ``512m``, ``1024``: bytes) in MB."""
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)b?\s*", str(value).lower())
    if m is None:
        raise _err(src, where, f"{value!r}: expected a size such as 512m or 2g")
    number, unit = float(m.group(1)), m.group(2)
    return max(1, int(number * _SIZE[unit])) if unit else max(1, int(number / (1024 * 1024)))


def docker_environment(src: str, env: dict[str, Any], where_file: Path, project: Path, out: SuiteSetup) -> Any:
    """agentv's docker recipe as our container environment (docs/environments.md): ``image``, or
    ``context`` with ``dockerfile`` (default ``Dockerfile`` in it), ``workdir`` (in the container),
    ``resources.cpus`` / ``memory`` / ``disk``. ``env``, ``mounts``, ``secrets`` and ``resources.gpu``
    are read with a note (a trial's container gets no host folder but its workspace, and no secret)."""
    from pydantic import ValidationError

    from agentsproof.core.validation import format_validation_error
    from agentsproof.model.environment import EnvironmentSpec, resolve_confined

    extra = sorted(str(k) for k in env if k not in DOCKER_KEYS)
    if extra:
        raise _err(src, f"environment.{extra[0]}", f"unknown key; expected one of {', '.join(sorted(DOCKER_KEYS))}")
    raw: dict[str, Any] = {}
    if env.get("image") is not None:
        raw["image"] = env["image"]
    elif env.get("context") is not None:
        context = str(env["context"])
        raw["context"] = context
        raw["dockerfile"] = str(env.get("dockerfile") or (context.rstrip("/") + "/Dockerfile"))
    else:
        raise _err(src, "environment", "a docker recipe needs 'image' or 'context' (agentv's rule)")
    if isinstance(env.get("workdir"), str):
        raw["workdir"] = env["workdir"]
    resources = env.get("resources") or {}
    if not isinstance(resources, dict):
        raise _err(src, "environment.resources", "must be a mapping (cpus, memory, disk, gpu)")
    if resources.get("cpus") is not None:
        raw["cpus"] = resources["cpus"]
    if resources.get("memory") is not None:
        raw["memory_mb"] = _megabytes(src, "environment.resources.memory", resources["memory"])
    if resources.get("disk") is not None:
        raw["disk_mb"] = _megabytes(src, "environment.resources.disk", resources["disk"])
    for key in ("env", "mounts", "secrets"):
        if env.get(key):
            out.notes.append(f"environment.{key}: read, not used: a trial's container gets its workspace only (no host folder, no secret)")
    if resources.get("gpu"):
        out.notes.append("environment.resources.gpu: read, not used: trials' containers get no GPU")
    try:
        spec = EnvironmentSpec.model_validate(raw)
    except ValidationError as exc:
        field, msg = format_validation_error(exc)
        raise _err(src, f"environment.{field}", msg) from None
    return resolve_confined(spec, where_file, "environment", root=project)


@cache
def _node_version() -> tuple[int, int]:
    """node's (major, minor) on PATH; (0, 0) when there is none or it does not say."""
    import re
    import subprocess

    node = shutil.which("node")
    if node is None:
        return (0, 0)
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return (0, 0)
    m = re.match(r"v(\d+)\.(\d+)", out.strip())
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)
