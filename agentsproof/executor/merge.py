"""``agentsproof merge``: shard reports (``eval-all --shard I/N``) joined into one run.

Each shard's items are already graded (their statistics depend on their own trials
only), so the merged report holds the same items, in the order a single machine would
have run them (sorted by eval file), with the run's summaries computed anew. Shards
must come from the same command, plugin, provider and models; an item in two shards is
refused. Its manifest (:func:`merged_manifest`) joins the shards' and digests the merged
trials, so ``agentsproof verify`` checks it like any report.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError
from agentsproof.executor.finalize import build_run
from agentsproof.model.results import RunResult
from agentsproof.model.settings import RunSettings


def merge_runs(runs: Sequence[tuple[Path, RunResult]]) -> RunResult:
    """One run from shard reports (``(path, report)`` pairs), items in file order and summaries computed anew;
    InputError when they differ in command, plugin, provider or models, or share an item."""
    if not runs:
        raise InputError("command line", "RESULT.json", "give at least one report to merge")
    with_items = [(p, r) for p, r in runs if r.items] or list(runs)
    first_path, first = with_items[0]
    for path, run in runs:
        if run.command != first.command:
            raise InputError(str(path), "command", f"is a {run.command!r} report; {first_path} is {first.command!r}")
        if run.plugin != first.plugin:
            raise InputError(str(path), "plugin", f"is {run.plugin!r}; {first_path} is {first.plugin!r}")
    for path, run in with_items:
        for key in ("provider", "model", "judge_model"):
            if getattr(run, key) != getattr(first, key):
                raise InputError(str(path), key, f"is {getattr(run, key)!r}; {first_path} has {getattr(first, key)!r}")
    seen: dict[str, Path] = {}
    items = []
    for path, run in runs:
        for it in run.items:
            if it.id in seen:
                raise InputError(str(path), f"items.{it.id}", f"is also in {seen[it.id]}; each item may come from one shard only")
            seen[it.id] = path
            items.append(it)
    items.sort(key=lambda it: (it.eval_path or "", it.id))
    settings = dataclasses.replace(RunSettings.from_dict(first.settings), shard=None, reused_trials=None, merged_from=[str(p) for p, _ in runs])
    reasons = [f"{p.name}: {r.incomplete_reason}" for p, r in runs if r.incomplete]
    merged = build_run(
        first.command,
        first.plugin,
        items,
        provider=first.provider,
        model=first.model,
        judge_model=first.judge_model,
        settings=settings,
        incomplete_reason="; ".join(reasons) or None,
        duration_s=max(r.duration_s for _, r in runs),
    )
    merged.created_at = max(r.created_at for _, r in runs)
    return merged


def merged_manifest(merged: RunResult, shards: Sequence[tuple[Path, RunResult]], argv: Sequence[str], ci: bool, sign_key: Path | None = None) -> dict[str, Any]:
    """The merged report's manifest: the shards' files, environments, agents, models and seeds
    joined (a file two shards name with different digests is refused: it changed between the
    shard runs), the merge's own command line, options and exit code, the digest of the merged
    trials, and each shard report's digest and trial digest (``shards``); InputError on a conflict."""
    from agentsproof.executor.proof import ProofOptions, common_manifest, file_sha256, run_exit_code, run_trial_rows, shown_path, text_safe, trials_digest

    files: dict[str, dict[str, Any]] = {}
    environments: list[dict[str, Any]] = []
    agents: dict[str, Any] = {}
    seeds: dict[str, Any] = {}
    served: dict[str, list[str]] = {}
    models: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    ci_rule = "point"
    for path, run in shards:
        m = run.manifest if isinstance(run.manifest, dict) else None
        rows.append({"report": shown_path(path), "sha256": file_sha256(path), "trials": (m or {}).get("trials"), "manifest": m is not None})
        if m is None:
            continue
        for name, row in _map(m.get("files")).items():
            if not isinstance(row, dict):
                continue
            if name in files and row.get("sha256") != files[name].get("sha256"):
                raise InputError(str(path), f"manifest.files.{name}", "differs from an earlier shard's (the file changed between the shard runs)")
            files.setdefault(name, row)
        envs = m.get("environments")
        for env in envs if isinstance(envs, list) else []:
            if env not in environments:
                environments.append(env)
        agents.update({k: v for k, v in _map(m.get("agents")).items() if k not in agents})
        seeds.update({k: v for k, v in _map(m.get("seeds")).items() if k not in seeds})
        got = _map(m.get("models"))
        for key, value in got.items():
            if key != "served":
                models.setdefault(key, value)
        for key, names in _map(got.get("served")).items():
            served[str(key)] = sorted({str(n) for n in served.get(str(key), [])} | {str(n) for n in (names if isinstance(names, list) else [])})
        ci_rule = str(_map(m.get("options")).get("ci_rule") or ci_rule)
    opts = ProofOptions(argv=argv, ci=ci, ci_rule=ci_rule, sign_key=sign_key)
    n, digest = trials_digest(run_trial_rows(merged))
    out = common_manifest(opts)
    out.update(
        {
            "files": dict(sorted(files.items())),
            "environments": environments,
            "agents": dict(sorted(agents.items())),
            "models": {**models, "served": served},
            "seeds": seeds,
            "exit_code": run_exit_code(merged, ci, False, ci_rule),
            "trials": {"count": n, "sha256": digest},
            "shards": rows,
        }
    )
    return dict(text_safe(out))


def _map(value: Any) -> dict[str, Any]:
    """``value`` when it is a mapping, else empty (a shard's manifest as read, not trusted)."""
    return value if isinstance(value, dict) else {}
