"""``agentsproof import atif DIR --eval FILE``: ATIF trajectories (ours or another tool's)
turned into trials of FILE's items and graded by its graders (agentsproof.interop.atif);
the report can then be re-graded like any run."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.core.errors import InputError
from agentsproof.grading.registry import entry
from agentsproof.model.results import ArmResult, ItemResult, RunResult, TrialResult
from agentsproof.targets.registry import is_agent

if TYPE_CHECKING:
    from agentsproof.interop.atif import Imported
    from agentsproof.model.items import EvalItem


def _pick_item(imp: Imported, items: list[EvalItem], src: str, copies: dict[str, EvalItem]) -> EvalItem:
    """The eval's item the trajectory is a trial of. One a matrix run (``--target a,b``)
    wrote names ``<item>@<agent>``: it is a trial of that agent's copy of the item, kept
    apart from the other agents' (``copies``, made as the matrix run made them)."""
    from agentsproof.report.matrix import base_id

    if imp.item is not None:
        for it in items:
            if it.id == imp.item:
                return it
        base = base_id(imp.item, imp.agent)
        for it in items if base != imp.item else []:
            if it.id == base:
                if imp.item not in copies:
                    copies[imp.item] = dataclasses.replace(it, id=imp.item, target=imp.agent)
                return copies[imp.item]
    if len(items) == 1:
        return items[0]
    user = next((e.text for e in imp.trial.log if e.role == "user"), "").strip()
    found = [it for it in items if user and (it.prompt.strip() == user or any(c.prompt.strip() == user for c in it.cases))]
    if len(found) == 1:
        return found[0]
    raise InputError(src, "steps", "matches none (or several) of the eval's items: its user message is not one of their instructions")


def _case_index(item: EvalItem, imp: Imported) -> int | None:
    """The case the trajectory answered, by its recorded case name or its user message."""
    if not item.cases:
        return 0
    names = [c.name for c in item.cases]
    if imp.trial.case in names:
        return names.index(imp.trial.case)
    user = next((e.text for e in imp.trial.log if e.role == "user"), "").strip()
    hits = [i for i, c in enumerate(item.cases) if c.prompt.strip() == user]
    return hits[0] if len(hits) == 1 else None


def import_atif(
    folder: Path,
    eval_file: Path,
    *,
    output: Path | None = None,
    arm: str = "with",
    provider: str | None = None,
    model: str | None = None,
    judge_model: str | None = None,
    cache: bool = True,
    parallel: int = 4,
) -> tuple[RunResult, dict[str, Path]]:
    """Grade the ATIF trajectories in ``folder`` with ``eval_file``'s graders as trials of ``arm``: the run and the reports written."""
    from agentsproof.commands.regrade import grade_run, refuse_inputs, write_regraded
    from agentsproof.core.inputs import display, safe_name
    from agentsproof.executor.finalize import build_run
    from agentsproof.executor.recorder import FileStore
    from agentsproof.formats import registry as formats
    from agentsproof.formats.base import ItemRequest
    from agentsproof.interop.atif import find_trajectories, read_trajectory

    started = time.perf_counter()
    if not folder.is_dir():
        raise InputError(display(folder), None, "not a folder of ATIF trajectories")
    loaded = formats.load(eval_file, "eval", ItemRequest())
    items = list(loaded.items)
    paths = list(find_trajectories(folder))
    if not paths:
        raise InputError(display(folder), None, "has no *.json ATIF trajectory below it")
    out = output or Path("runs") / safe_name(loaded.plugin, "plugin")
    stem = f"{safe_name(loaded.name, 'item')}-imported"
    refuse_inputs(out, stem, [eval_file, *paths])  # before any judge call
    per: dict[str, dict[str, list[TrialResult]]] = {it.id: {"with": [], "without": []} for it in items}
    by_id = {it.id: it for it in items}
    copies: dict[str, EvalItem] = {}  # a matrix run's items, per agent
    counters: dict[tuple[str, str, int], int] = {}
    for p in paths:
        src = display(p)
        imp = read_trajectory(p, src)
        item = _pick_item(imp, items, src, copies)
        if item.id not in by_id:
            by_id[item.id] = item
            per[item.id] = {"with": [], "without": []}
        case = _case_index(item, imp)
        if case is None:
            raise InputError(src, "steps", f"its user message is none of the instructions of {item.name!r}'s tasks")
        graders = item.case_at(case).graders
        needs = [g.type for g in graders if entry(g.type).reads_workspace]
        if needs and is_agent(item.target) and not imp.has_files:
            raise InputError(
                src, None, f"grader {needs[0]!r} of {item.name!r} reads the workspace, and this trajectory records no files (ATIF has no place for them)"
            )
        trial_arm = imp.trial.arm if imp.item is not None else arm
        key = (item.id, trial_arm, case)
        k = counters.get(key, 0)
        counters[key] = k + 1
        index = k * max(1, len(item.cases)) + case
        trial = imp.trial.model_copy(update={"arm": trial_arm, "index": index, "case": item.case_at(case).name if item.cases else None})
        per[item.id][trial_arm].append(trial)
    results = []
    single = not any(arms["without"] for arms in per.values())
    for item_id, arms in per.items():
        item = by_id[item_id]
        if not arms["with"] and not arms["without"]:
            continue
        if single:
            by_id[item_id] = dataclasses.replace(item, arms=("with",))
        n = max(len(arms["with"]), len(arms["without"]), 1)
        results.append(
            ItemResult(
                id=item.id,
                name=item.name,
                kind=item.kind,
                eval_path=str(Path(eval_file).resolve()),
                source_path=item.source_path,
                source_sha256=item.source_sha256,
                task_name=item.task_name,
                instruction=item.prompt,
                threshold=item.threshold,
                trials_requested=n,
                target=item.target,
                with_arm=ArmResult(
                    arm="with", system_prompt_kind=item.kind if item.kind != "case" else "skill", trials=sorted(arms["with"], key=lambda t: t.index)
                ),
                without_arm=ArmResult(arm="without", system_prompt_kind="baseline", trials=sorted(arms["without"], key=lambda t: t.index)),
            )
        )
    settings: dict[str, Any] = {"baseline": "none"} if single else {}
    saved = build_run(loaded.report, loaded.plugin, results, provider="imported", model="", judge_model="", settings=settings)
    store_dir = folder / "files"
    store = FileStore(store_dir) if store_dir.is_dir() else None
    from agentsproof.executor.regrade import NotRecorded, check_recorded

    for n, it in enumerate(saved.items):
        try:
            check_recorded(by_id[it.id], it, store)
        except NotRecorded as err:
            raise InputError(display(folder), f"items[{n}]", f"cannot grade: {err}") from None
    run = grade_run(
        saved,
        by_id,
        store,
        after=loaded.after,
        origin=str(folder.resolve()),
        evals=[str(Path(eval_file).resolve())],
        provider=provider,
        model=model,
        judge_model=judge_model,
        cache=cache,
        parallel=parallel,
        started=started,
    )
    run.regraded = {**(run.regraded or {}), "imported": "atif", "trajectories": len(paths), "changes": []}
    return run, write_regraded(run, out, stem)
