"""``--retry-errors RUN.json``: re-run only the errored trials of a saved run and merge them.

The saved run names every item's eval file (``item.eval_path``); the files are loaded again
so the trials run with the current skill text and graders. Trials that never ran because
the saved run was aborted are run too. Everything else in the saved run is kept as it was.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Sequence

from agentsproof.errors import InputError
from agentsproof.executor.results import build_run, finalize_item
from agentsproof.executor.runner import Aborted, DualArmRunner, EvalItem, ItemRun, RunOptions
from agentsproof.executor.session import SessionOptions, interruptible, prepare_provider, run_sync
from agentsproof.pipeline.grader import Judge, needs_judge
from agentsproof.schemas.artifacts import ArmResult, ItemResult, RunResult, TrialResult


def trials_to_rerun(item: ItemResult, fill_missing: bool) -> list[tuple[str, int]]:
    """(arm, index) of errored trials, plus never-run ones when ``fill_missing``."""
    out = []
    for arm in (item.with_arm, item.without_arm):
        have = {t.index for t in arm.trials}
        out += [(arm.arm, t.index) for t in arm.trials if t.status == "errored"]
        if fill_missing:
            out += [(arm.arm, i) for i in range(item.trials_requested) if i not in have]
    return out


def _merge(arm: ArmResult, fresh: Sequence[TrialResult]) -> ArmResult:
    by_index = {t.index: t for t in arm.trials}
    for t in fresh:
        by_index[t.index] = t
    merged = ArmResult(arm=arm.arm, system_prompt_kind=arm.system_prompt_kind, trials=[by_index[i] for i in sorted(by_index)])
    return merged.summarize()


async def _rerun(saved: RunResult, items: dict[str, EvalItem], opts: SessionOptions, path: Path) -> RunResult:
    started = time.perf_counter()
    prepared = prepare_provider(opts.provider, opts.model, opts.judge_model)
    wanted = {it.id: trials_to_rerun(it, saved.incomplete) for it in saved.items}
    judge = None
    if any(needs_judge(items[i].graders) for i, todo in wanted.items() if todo):
        judge = Judge(client=prepared.client, model=prepared.judge_model)
    runner = DualArmRunner(
        prepared.client,
        RunOptions(model=prepared.model, parallel=opts.parallel, abort_after=opts.abort_after),
        judge,
        on_trial=opts.on_trial,
        on_item=opts.on_item,
    )
    jobs = [(item_id, arm, idx) for item_id, todo in wanted.items() for arm, idx in todo]
    try:
        with interruptible(runner):
            results = await asyncio.gather(
                *(runner.start_trial(items[i], arm, idx) for i, arm, idx in jobs), return_exceptions=True
            )
    finally:
        await prepared.client.aclose()
    fresh: dict[str, list[TrialResult]] = {}
    unfinished: set[str] = set()
    for (item_id, _, _), res in zip(jobs, results):
        if isinstance(res, (Aborted, asyncio.CancelledError)) and runner.state.aborted:
            unfinished.add(item_id)
        elif isinstance(res, BaseException):
            raise res
        else:
            fresh.setdefault(item_id, []).append(res)
    finals = []
    for old in saved.items:
        new = fresh.get(old.id, [])
        w = _merge(old.with_arm, [t for t in new if t.arm == "with"])
        wo = _merge(old.without_arm, [t for t in new if t.arm == "without"])
        short = len(w.trials) < old.trials_requested and saved.incomplete
        finals.append(finalize_item(ItemRun(item=items[old.id], with_arm=w, without_arm=wo, incomplete=old.id in unfinished or short)))
    settings = dict(saved.settings)
    # The provider of this run, not the saved one's (its URL, model file, ...).
    settings.update({k: v for k, v in prepared.client.describe().items() if k != "provider"})
    settings["retried_errors_from"] = str(path)
    settings["retried_trials"] = len(jobs)
    return build_run(
        saved.command,
        saved.plugin,
        finals,
        provider=prepared.provider,
        model=prepared.model,
        judge_model=prepared.judge_model,
        settings=settings,
        incomplete_reason=runner.state.abort_reason,
        duration_s=saved.duration_s + time.perf_counter() - started,
    )


def check_items(saved: RunResult, items: dict[str, EvalItem], path: Path) -> None:
    for it in saved.items:
        if it.id not in items:
            raise InputError(str(path), f"items.{it.id}", "not found in the eval files any more; re-run the whole command")


def retry_errors(saved: RunResult, items: dict[str, EvalItem], opts: SessionOptions, path: Path) -> RunResult:
    check_items(saved, items, path)
    return run_sync(_rerun(saved, items, opts, path))


def load_items_for_retry(saved: RunResult, saved_path: Path, path: Path | None) -> dict[str, EvalItem]:
    """Runner items for a saved run, from the eval files its items name."""
    from agentsproof.config import load_eval
    from agentsproof.executor.plan import item_from_eval, items_from_tc_eval
    from agentsproof.schemas.tc_eval import load_tc_eval

    out: dict[str, EvalItem] = {}
    tc_cache: dict[str, dict[str, EvalItem]] = {}
    for n, it in enumerate(saved.items):
        if not it.eval_path:
            raise InputError(str(saved_path), f"items.{n}.eval_path", "missing; cannot tell which eval file to re-run")
        if saved.command == "tc-eval":
            if it.eval_path not in tc_cache:
                tc = load_tc_eval(_eval_file(it.eval_path, saved_path, f"items.{n}.eval_path"))
                timeout = float(saved.settings.get("timeout") or 300.0)
                built = items_from_tc_eval(tc, trials=it.trials_requested, threshold=it.threshold, timeout=timeout)
                tc_cache[it.eval_path] = {b.id: b for b in built}
            found = tc_cache[it.eval_path].get(it.id)
            if found is None:
                raise InputError(it.eval_path, None, f"case {it.id!r} of {saved_path} is no longer in this file")
            found.trials = it.trials_requested
            out[it.id] = found
        else:
            built_item = item_from_eval(
                load_eval(_eval_file(it.eval_path, saved_path, f"items.{n}.eval_path")),
                trials=it.trials_requested,
                threshold=it.threshold,
            )
            if built_item.id != it.id:
                raise InputError(it.eval_path, None, f"now defines {built_item.id!r}, not {it.id!r} as in {saved_path}")
            out[it.id] = built_item
    if path is not None and saved.command in ("eval", "tc-eval"):
        recorded = {Path(i.eval_path).resolve() for i in saved.items if i.eval_path}
        given = Path(path).resolve()
        if given.is_dir():
            given = next((given / n for n in ("eval.yaml", "eval.yml") if (given / n).is_file()), given)
        if given not in recorded:
            raise InputError(str(saved_path), "items.eval_path", f"this run was made from {', '.join(sorted(map(str, recorded)))}, not {path}")
    if path is not None and saved.command == "eval-all":
        root = Path(path).resolve()
        outside = [i.eval_path for i in saved.items if i.eval_path and not Path(i.eval_path).resolve().is_relative_to(root)]
        if outside:
            raise InputError(str(saved_path), "items.eval_path", f"this run was made from evals outside {path} (e.g. {outside[0]})")
    return out


def _eval_file(recorded: str, saved_path: Path, field: str) -> Path:
    """A recorded eval path: absolute in runs of this version; a relative one (older runs)
    is tried from the current folder, then from the saved report's folder."""
    p = Path(recorded)
    if p.is_absolute() or p.exists():
        return p
    beside = saved_path.resolve().parent / p
    if beside.exists():
        return beside
    raise InputError(str(saved_path), field, f"eval file {recorded!r} not found (relative to this folder or to {saved_path.parent})")
