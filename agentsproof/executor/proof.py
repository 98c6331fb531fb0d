"""What a report is about, so a reader can check it: the manifest every report carries.

The manifest names (by SHA-256) the eval files, every file of the skill or agent under
test, targets.yaml and each task environment's Dockerfile and built image; the agent
programs' and agentsproof's versions; the models; the seeds; the command line (secrets
masked by :mod:`agentsproof.core.scrub`); the options that decide the exit code and that
exit code; and a digest of the recorded trials. ``agentsproof verify``
(:mod:`agentsproof.executor.verify`) re-derives every number from the trials and checks
the manifest against them (and, with ``--files``, against the files on disk).

One function per command writes it: :func:`run_manifest` (eval, eval-all, tc-eval and any
command that writes a :class:`RunResult`) and :func:`activation_manifest`.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.core.errors import EXIT_ERROR, EXIT_FAILED, EXIT_OK
from agentsproof.core.version import __version__

if TYPE_CHECKING:
    from agentsproof.model.items import EvalItem, SkillFile
    from agentsproof.model.results import ItemResult, RunResult
    from agentsproof.targets.base import TargetDef

MANIFEST_VERSION = "1"
SIG_NAMESPACE = "agentsproof"
"""The ``ssh-keygen -Y`` namespace of a report's signature."""
MAX_HASHED_BYTES = 1 << 32
"""Files larger than this are named without a digest (``sha256`` None)."""


@dataclass
class ProofOptions:
    """What a report's manifest records of the command beyond the run itself."""

    argv: Sequence[str] = ()
    ci: bool = False
    fail_on_underpowered: bool = False
    ci_rule: str = "point"
    sign_key: Path | None = None
    """``--sign KEY``: the private key the report will be signed with (its public key's fingerprint is recorded)."""
    extra_files: list[tuple[str, Path]] = field(default_factory=list)
    """(role, path) of further files the run read."""


# ------------------------------------------------------------------ the exit code


def run_exit_code(run: RunResult, ci: bool, fail_on_underpowered: bool = False, ci_rule: str = "point") -> int:
    """The exit code a run command ends with: 30 when the run is incomplete or has errored
    items, 1 when ``--ci`` and an item failed (or, with ``fail_on_underpowered``, came out
    underpowered), else 0."""
    del ci_rule  # the items' pass/fail already follows the rule
    from agentsproof.executor.gate import gate

    return gate(run, ci=ci, fail_on_underpowered=fail_on_underpowered).code  # the one rule the CLI exits by


def activation_exit_code(stats: Any, ci: bool) -> int:
    """The exit code ``agentsproof activation`` ends with: 30 when every trial errored, 1
    when ``--ci`` and a skill is below a floor, else 0."""
    if stats.trials and stats.errored == stats.trials:
        return EXIT_ERROR
    if ci and stats.failing:
        return EXIT_FAILED
    return EXIT_OK


# ------------------------------------------------------------------ digests


def canonical(value: Any) -> bytes:
    """``value`` as canonical JSON bytes (sorted keys, no spaces, ASCII): what is hashed."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode("ascii")


def run_trial_rows(run: RunResult) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(item id, arm, trial as JSON data) of every recorded trial, in report order."""
    for it in run.items:
        for arm in _arms(it):
            for t in arm.trials:
                yield it.id, arm.arm, t.model_dump(mode="json")


def _arms(it: ItemResult) -> list[Any]:
    return [it.with_arm, it.without_arm] + ([it.plugin_arm] if it.plugin_arm is not None else [])


def trials_digest(rows: Iterable[tuple[str, str, Any]]) -> tuple[int, str]:
    """(count, SHA-256) over the trials in order: each as canonical JSON with its item and arm."""
    h = hashlib.sha256(b"agentsproof-trials/1\n")
    n = 0
    for item_id, arm, data in rows:
        h.update(canonical([item_id, arm, data]))
        h.update(b"\n")
        n += 1
    return n, h.hexdigest()


def data_trials_digest(report: Mapping[str, Any]) -> tuple[int, str]:
    """:func:`trials_digest` of a JSON report as read back (no model objects: the same bytes)."""

    def rows() -> Iterator[tuple[str, str, Any]]:
        for it in report.get("items") or []:
            for key in ("with_arm", "without_arm", "plugin_arm"):
                arm = it.get(key)
                if isinstance(arm, dict):
                    for t in arm.get("trials") or []:
                        yield str(it.get("id")), str(arm.get("arm")), t

    return trials_digest(rows())


def activation_trials_digest(trial_log: Sequence[Any]) -> tuple[int, str]:
    """:func:`trials_digest` of an activation report's ``trial_log``."""
    return trials_digest(("activation", str(row.get("skill") if isinstance(row, dict) else ""), row) for row in trial_log)


def file_sha256(path: Path) -> str | None:
    """The file's SHA-256 (never through a symlink's target being a device: regular files only); None when unreadable."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    import stat

    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_HASHED_BYTES:
        return None
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest()


def shown_path(path: Path) -> str:
    """How the manifest names a file: relative to the working folder when below it, else absolute; '/'-separated."""
    p = Path(os.path.abspath(path))
    try:
        return p.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return p.as_posix()


class _Files:
    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}

    def add(self, role: str, path: Path | str | None) -> None:
        if not path:
            return
        p = Path(path)
        if not p.is_file():
            return
        name = shown_path(p)
        if name in self.rows:
            return
        self.rows[name] = {"role": role, "sha256": file_sha256(p), "size": _size(p)}

    def skill(self, skill: SkillFile | None, role: str = "skill") -> None:
        if skill is None:
            return
        self.add(role, skill.source_path)
        for _rel, path in skill.files:
            self.add(role, path)


def _size(p: Path) -> int | None:
    try:
        return p.stat().st_size
    except OSError:
        return None


# ------------------------------------------------------------------ programs, images, command line


def masked_argv(argv: Sequence[str]) -> list[str]:
    """The command line with secrets masked: every registered secret (core.scrub), and the
    value of an option or ``NAME=VALUE`` whose name says it holds one."""
    from agentsproof.core.scrub import MASK, register, scrub, secret_name

    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            register(arg)
            out.append(MASK)
            hide_next = False
            continue
        if arg.startswith("--") and secret_name(arg[2:].split("=", 1)[0].replace("-", "_")):
            if "=" in arg:
                name, value = arg.split("=", 1)
                register(value)
                out.append(f"{name}={MASK}")
            else:
                out.append(arg)
                hide_next = True
            continue
        if "=" in arg and secret_name(arg.split("=", 1)[0].lstrip("-")):
            name, value = arg.split("=", 1)
            register(value)
            out.append(f"{name}={MASK}")
            continue
        out.append(scrub(arg))
    return out


def program_version(path: str, timeout: float = 20.0) -> str | None:
    """``PROGRAM --version``'s first line (None when it does not answer)."""
    try:
        got = subprocess.run([path, "--version"], capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    from agentsproof.core.scrub import scrub

    text = (got.stdout or got.stderr).decode("utf-8", "replace").strip().splitlines()
    return scrub(text[0][:200]) if text and got.returncode == 0 else None


def agent_programs(target_defs: Mapping[str, TargetDef]) -> dict[str, dict[str, Any]]:
    """Each agent target's program, its path and its reported version (``--version``)."""
    from agentsproof.targets.registry import target_class

    out: dict[str, dict[str, Any]] = {}
    for name, found in sorted(target_defs.items()):
        kind = getattr(found.spec, "type", None)
        row: dict[str, Any] = {"kind": kind, "defined_in": found.source}
        try:
            cls: Any = target_class(kind) if isinstance(kind, str) else None
        except Exception:  # noqa: BLE001 - a plugin kind that no longer loads: named without a program
            cls = None
        info = getattr(cls, "program_info", None)
        if info is not None:
            path, _problem = info.find()
            row["program"] = info.binary
            row["version"] = program_version(path) if path else None
        out[name] = row
    return out


def environment_rows(items: Sequence[EvalItem]) -> list[dict[str, Any]]:
    """Each task environment once: its Dockerfile's digest, the image tag and the engine's image id."""
    from agentsproof.executor.session import run_sync

    seen: dict[tuple[str | None, str | None], dict[str, Any]] = {}
    for it in items:
        env = it.environment
        if env is None:
            continue
        key = (env.image, str(env.dockerfile) if env.dockerfile else None)
        if key in seen:
            continue
        row: dict[str, Any] = {"source": env.source, "image": env.image}
        if env.dockerfile is not None:
            row["dockerfile"] = shown_path(env.dockerfile)
            row["dockerfile_sha256"] = file_sha256(env.dockerfile)
            try:
                from agentsproof.isolation.engine import TAG_REPO, context_digest

                row["image"] = f"{TAG_REPO}:{context_digest(env)}"
            except Exception:  # noqa: BLE001 - a context that changed since the run: no tag, said so
                row["image"] = None
        seen[key] = row
    for row in seen.values():
        row["image_id"] = run_sync(_image_id(row["image"])) if row.get("image") else None
    return list(seen.values())


async def _image_id(tag: str) -> str | None:
    from agentsproof.isolation.engine import docker

    try:
        got = await docker(["image", "inspect", "-f", "{{.Id}}", tag], timeout=60)
    except Exception:  # noqa: BLE001 - no engine here: the id is unknown, not an error of the run
        return None
    return got.stdout.decode("utf-8", "replace").strip() or None if got.returncode == 0 else None


def key_fingerprint(key: Path) -> str | None:
    """The SHA-256 fingerprint of ``key``'s public half (``ssh-keygen -l``), None when unreadable."""
    pub = Path(str(key) + ".pub")
    target = pub if pub.is_file() else key
    try:
        got = subprocess.run(["ssh-keygen", "-l", "-E", "sha256", "-f", str(target)], capture_output=True, timeout=30, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    parts = got.stdout.decode("utf-8", "replace").split()
    return parts[1] if got.returncode == 0 and len(parts) > 1 else None


def served_models() -> dict[str, list[str]]:
    """Requested model → the models the server's replies named (agentsproof.llm.served)."""
    from agentsproof.llm.served import take

    return take()


# ------------------------------------------------------------------ the manifests


def text_safe(value: Any) -> Any:
    """``value`` with every string made encodable: a file name's undecodable bytes (surrogates) as ``\\xNN`` text."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {text_safe(k): text_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [text_safe(v) for v in value]
    return value


def common_manifest(opts: ProofOptions) -> dict[str, Any]:
    """What every manifest records: versions, the working folder, the masked command line, the options, the signature."""
    out: dict[str, Any] = {
        "version": MANIFEST_VERSION,
        "agentsproof": __version__,
        "root": Path.cwd().as_posix(),
        "command_line": masked_argv(opts.argv),
        "options": {"ci": opts.ci, "fail_on_underpowered": opts.fail_on_underpowered, "ci_rule": opts.ci_rule},
    }
    if opts.sign_key is not None:
        out["signature"] = {"tool": "ssh-keygen -Y sign", "namespace": SIG_NAMESPACE, "key": key_fingerprint(opts.sign_key)}
    else:
        out["signature"] = None
    return out


def run_manifest(run: RunResult, items: Sequence[EvalItem], target_defs: Mapping[str, TargetDef], opts: ProofOptions) -> dict[str, Any]:
    """The manifest of a :class:`RunResult` report (written into ``run.manifest`` by the caller)."""
    files = _Files()
    for it in items:
        files.add("eval", it.eval_path)
        if it.source_path and it.source_path != it.eval_path:
            files.add(it.kind if it.kind in ("skill", "agent") else "source", it.source_path)
        files.skill(it.skill)
        for s in (*it.with_skills, *it.plugin_skills):
            files.skill(s, "plugin skill")
        if it.judge_gold:
            files.add("judge gold", it.judge_gold)
        if it.environment is not None and it.environment.dockerfile is not None:
            files.add("dockerfile", it.environment.dockerfile)
    for found in target_defs.values():
        if found.source and found.source != "built-in":  # the targets.yaml it came from (its display path, or in its folder)
            near = [Path(found.source)] + ([found.folder / Path(found.source).name] if found.folder is not None else [])
            files.add("targets", next((p for p in near if p.is_file()), None))
    for role, path in opts.extra_files:
        files.add(role, path)
    n, digest = trials_digest(run_trial_rows(run))
    seeds = {k: v for k, v in run.settings.items() if "seed" in k}
    out = common_manifest(opts)
    out.update(
        {
            "files": dict(sorted(files.rows.items())),
            "environments": environment_rows(items),
            "agents": agent_programs(target_defs),
            "models": {
                "provider": run.provider,
                "model": run.model,
                "judge_model": run.judge_model,
                "item_models": sorted({it.model for it in run.items if it.model}),
                "agent_models": {k: v.get("model") for k, v in (run.settings.get("targets") or {}).items() if isinstance(v, dict)},
                "served": served_models(),
            },
            "seeds": seeds,
            "exit_code": run_exit_code(run, opts.ci, opts.fail_on_underpowered, opts.ci_rule),
            "trials": {"count": n, "sha256": digest},
        }
    )
    return dict(text_safe(out))


def activation_manifest(
    trial_log: Sequence[dict[str, Any]],
    suite_sources: Iterable[str],
    skills: Iterable[SkillFile],
    described: Mapping[str, Any],
    opts: ProofOptions,
    stats: Any = None,
) -> dict[str, Any]:
    """The manifest of an activation report: its eval files, the installed skills, its target and the trials' digest."""
    files = _Files()
    for src in suite_sources:
        files.add("eval", src)
    for s in skills:
        files.skill(s)
    for role, path in opts.extra_files:
        files.add(role, path)
    n, digest = activation_trials_digest(trial_log)
    out = common_manifest(opts)
    out.update(
        {
            "files": dict(sorted(files.rows.items())),
            "environments": [],
            "agents": {},
            "models": {"provider": described.get("provider"), "model": described.get("model"), "served": served_models()},
            "seeds": {},
            "exit_code": activation_exit_code(stats, opts.ci) if stats is not None else None,
            "trials": {"count": n, "sha256": digest},
        }
    )
    return dict(text_safe(out))
