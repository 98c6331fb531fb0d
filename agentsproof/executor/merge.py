"""``agentsproof merge``: shard reports (``eval-all --shard I/N``) joined into one run.

Each shard's items are already graded (their statistics depend on their own trials
only), so the merged report holds the same items, in the order a single machine would
have run them (sorted by eval file), with the run's summaries computed anew. Shards
must come from the same command, plugin, provider and models; an item in two shards is
refused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

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
