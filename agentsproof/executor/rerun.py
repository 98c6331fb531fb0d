"""``--retry-errors RUN.json``: re-run only the errored trials of a saved run and merge them.

The saved run names every item's eval file (``item.eval_path``); the files are loaded again
so the trials run with the current skill text and graders. The saved run's scored trials
are kept as they are and its errored ones run again, through the same session path as
any run (progress lines, journal, interrupts): a retry is a run whose finished trials are
given. Trials that never ran because the saved run was aborted are run too.
"""

from __future__ import annotations

from pathlib import Path

from agentsproof.errors import InputError
from agentsproof.executor.runner import EvalItem
from agentsproof.schemas.artifacts import RunResult, TrialResult


def retry_plan(
    saved: RunResult, items: dict[str, EvalItem], path: Path
) -> tuple[list[EvalItem], dict[tuple[str, str, int], TrialResult], dict]:
    """(items in the saved order with their trial counts, the trials to keep, settings)."""
    check_items(saved, items, path)
    ordered: list[EvalItem] = []
    prior: dict[tuple[str, str, int], TrialResult] = {}
    for it in saved.items:
        item = items[it.id]
        ran = max([t.index + 1 for t in it.with_arm.trials + it.without_arm.trials] or [0])
        # An aborted run also fills the trials it never started; a finished (or adaptive)
        # run keeps its trial count.
        item.trials = it.trials_requested if saved.incomplete else max(ran, 1)
        for arm in (it.with_arm, it.without_arm):
            for t in arm.trials:
                if t.status == "scored" and t.index < item.trials:
                    prior[(it.id, t.arm, t.index)] = t
        ordered.append(item)
    settings = dict(saved.settings)
    settings.pop("reused_trials", None)
    settings["retried_errors_from"] = str(path)
    settings["retried_trials"] = sum(2 * i.trials for i in ordered) - len(prior)
    return ordered, prior, settings


def check_items(saved: RunResult, items: dict[str, EvalItem], path: Path) -> None:
    for it in saved.items:
        if it.id not in items:
            raise InputError(str(path), f"items.{it.id}", "not found in the eval files any more; re-run the whole command")


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
                built = items_from_tc_eval(
                    tc, trials=it.trials_requested, threshold=it.threshold, timeout=timeout,
                    target=it.target if it.target != "chat" else None,
                )
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
                target=it.target if it.target != "chat" else None,
                all_tasks=bool(saved.settings.get("all_tasks")),
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
