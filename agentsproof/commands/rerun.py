"""``--retry-errors RUN.json``: re-run only the errored trials of a saved run and merge them.

The saved run names every item's eval file (``item.eval_path``); the files are loaded again
so the trials run with the current skill text and graders. The saved run's scored trials
are kept as they are and its errored ones run again, through the same session path as
any run (progress lines, journal, interrupts): a retry is a run whose finished trials are
given. Trials that never ran because the saved run was aborted are run too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from agentsproof.core.errors import InputError
from agentsproof.formats import registry as formats
from agentsproof.formats.base import ItemRequest
from agentsproof.model.items import EvalItem
from agentsproof.model.results import ItemResult, RunResult, TrialResult
from agentsproof.model.settings import RunSettings
from agentsproof.targets.registry import is_agent


def retry_plan(saved: RunResult, items: dict[str, EvalItem], path: Path) -> tuple[list[EvalItem], dict[tuple[str, str, int], TrialResult], RunSettings]:
    """(items in the saved order with their trial counts, the trials to keep, the settings
    to record: the saved run's, with what was retried)."""
    _check_items(saved, items, path)
    ordered: list[EvalItem] = []
    prior: dict[tuple[str, str, int], TrialResult] = {}
    for it in saved.items:
        ran = max([t.index + 1 for t in it.with_arm.trials + it.without_arm.trials] or [0])
        # An aborted run also fills the trials it never started; a finished (or adaptive)
        # run keeps its trial count.
        item = dataclasses.replace(items[it.id], trials=it.trials_requested if saved.incomplete else max(ran, 1))
        for arm in (it.with_arm, it.without_arm):
            for t in arm.trials:
                if t.status == "scored" and t.index < item.trials:
                    prior[(it.id, t.arm, t.index)] = t
        ordered.append(item)
    settings = dataclasses.replace(
        RunSettings.from_dict(saved.settings),
        reused_trials=None,  # this run's count is recorded by the session
        retried_errors_from=str(path),
        retried_trials=sum(2 * i.trials for i in ordered) - len(prior),
    )
    return ordered, prior, settings


def _check_items(saved: RunResult, items: dict[str, EvalItem], path: Path) -> None:
    for it in saved.items:
        if it.id not in items:
            raise InputError(str(path), f"items.{it.id}", "not found in the eval files any more; re-run the whole command")


def load_items_for_retry(saved: RunResult, saved_path: Path, path: Path | None, skill: Path | None = None) -> dict[str, EvalItem]:
    """Runner items for a saved run, from the eval files its items name (see :func:`retry_items`)."""
    return retry_items(saved, saved_path, path, skill)[0]


def retry_items(
    saved: RunResult, saved_path: Path, path: Path | None, skill: Path | None = None
) -> tuple[dict[str, EvalItem], Callable[[RunResult], None] | None]:
    """Runner items for a saved run, built from the eval files its items name the way the
    original run built them (eval.yaml, evals.json, EVAL.yaml, a JSONL dataset; eval-all's
    ``<suite>/`` ids), and what the original run did to its report after the trials (an
    EVAL.yaml's check labels, a dataset's failure reasons), or None.

    ``skill`` is the retry's ``--skill``: an EVAL.yaml's skill is found by layout again; a
    skill the original run was given with ``--skill`` (a dataset's always) must be given again."""
    out: dict[str, EvalItem] = {}
    hooks: list[Callable[[RunResult], None]] = []
    cache: dict[tuple[str, str | None], dict[str, EvalItem]] = {}
    for n, it in enumerate(saved.items):
        if not it.eval_path:
            raise InputError(str(saved_path), f"items.{n}.eval_path", "missing; cannot tell which eval file to re-run")
        file = _eval_file(it.eval_path, saved_path, f"items.{n}.eval_path")
        base, agent = _matrix_id(it)  # a matrix run's ``<item>@<agent>``: built as <item>, on that agent
        if saved.command == "eval":  # an eval.yaml (an EVAL.yaml's `eval` run is a tc-eval run)
            out[it.id] = _as_run(_same_id(_eval_yaml_item(file, it, saved), it, base, saved_path), it, agent)
            continue
        key = (it.eval_path, it.target if agent else None)
        if key not in cache:
            if saved.command == "eval-all":
                kind, built, hook = _eval_all_file(file, it, saved)
                if kind == "eval.yaml":  # one item per eval.yaml: it must still be the same one
                    built = [_same_id(built[0], it, base, saved_path)]
            else:
                built, hook = _tc_eval_file(file, n, it, saved, saved_path, skill)
            cache[key] = {b.id: b for b in built}
            if hook is not None and not any(k[0] == it.eval_path for k in cache if k != key):
                hooks.append(hook)  # once per file, however many agents ran it
        found = cache[key].get(base)
        if found is None:
            raise InputError(it.eval_path, None, f"case {base!r} of {saved_path} is no longer in this file")
        out[it.id] = dataclasses.replace(_as_run(found, it, agent), trials=it.trials_requested)
    _check_given_path(saved, saved_path, path)

    def after(run: RunResult) -> None:
        for hook in hooks:
            hook(run)

    return out, after if hooks else None


def _same_id(built: EvalItem, it: ItemResult, base: str, saved_path: Path) -> EvalItem:
    if built.id != base:
        raise InputError(it.eval_path, None, f"now defines {built.id!r}, not {base!r} as in {saved_path}")
    return built


def _matrix_id(it: ItemResult) -> tuple[str, str | None]:
    """(the item's own id, the agent) for an item a matrix run (``--target a,b``) copied per
    agent as ``<item>@<agent>``; (its id, None) for any other item."""
    from agentsproof.report.matrix import base_id

    if it.target and is_agent(it.target) and it.id != base_id(it.id, it.target):
        return base_id(it.id, it.target), it.target
    return it.id, None


def _as_run(built: EvalItem, it: ItemResult, agent: str | None) -> EvalItem:
    """The item as the saved run ran it: a matrix copy gets its ``@<agent>`` id and agent back
    (what :func:`agentsproof.commands.per_target.expand` did), anything else is as built."""
    return dataclasses.replace(built, id=it.id, target=agent) if agent else built


def _target(it: ItemResult) -> str | None:
    return it.target if is_agent(it.target) else None


def _timeout(saved: RunResult) -> float | None:
    value = RunSettings.from_dict(saved.settings).timeout
    return float(value) if value else None


def _all_tasks(saved: RunResult) -> bool:
    return bool(RunSettings.from_dict(saved.settings).all_tasks)


def _request(it: ItemResult, saved: RunResult, *, target: str | None, skill: Path | None = None, in_plugin: bool = False) -> ItemRequest:
    """The item options the saved run was made with (its trial count, threshold and timeout)."""
    return ItemRequest(
        trials=it.trials_requested,
        threshold=it.threshold,
        timeout=_timeout(saved),
        target=target,
        all_tasks=_all_tasks(saved),
        skill=skill,
        in_plugin=in_plugin,
    )


def _eval_yaml_item(file: Path, it: ItemResult, saved: RunResult) -> EvalItem:
    return formats.get("eval.yaml").load(file, _request(it, saved, target=_target(it))).items[0]


def _eval_all_file(file: Path, it: ItemResult, saved: RunResult) -> tuple[str, list[EvalItem], Callable[[RunResult], None] | None]:
    """Every eval-all item of one file, built as eval-all builds them."""
    loaded = formats.load(file, "eval-all", _request(it, saved, target=_target(it), in_plugin=True))
    return loaded.format, loaded.items, loaded.after


def _tc_eval_file(
    file: Path, n: int, it: ItemResult, saved: RunResult, saved_path: Path, skill: Path | None
) -> tuple[list[EvalItem], Callable[[RunResult], None] | None]:
    """Every case of one tc-eval file (a JSONL dataset, an EVAL.yaml or an evals.json), with
    the skill the original run had: found by layout again, or given with ``--skill``."""
    fmt = formats.detect(file, "tc-eval")
    # an EVAL.yaml's target is the saved one as it is ("chat" included): the file's own may have changed
    target = it.target if fmt.name == "EVAL.yaml" else _target(it)
    if fmt.name in ("evals.json", "harbor"):  # names its own skill (a Harbor task: its skills folder)
        loaded = fmt.load(file, _request(it, saved, target=target))
        return loaded.items, loaded.after
    by_layout = fmt.load(file, _request(it, saved, target=target)) if fmt.name == "EVAL.yaml" else None  # its skill found beside it
    given = _given_skill(n, it, saved_path, skill, layout=by_layout.skill_path if by_layout else None)
    loaded = by_layout if by_layout is not None and given is None else fmt.load(file, _request(it, saved, target=target, skill=given))
    return loaded.items, loaded.after


def _given_skill(n: int, it: ItemResult, saved_path: Path, skill: Path | None, layout: Path | None) -> Path | None:
    """The ``--skill`` to build an EVAL.yaml's or a dataset's items with; None for the skill
    found by layout (``layout``; a dataset has none) or for no skill, as in the original run."""
    from agentsproof.formats.eval_yaml.items import sha256_text
    from agentsproof.model.items import BASELINE_SYSTEM_PROMPT

    field = f"items.{n}.source_path"
    had_skill = it.source_sha256 != sha256_text(BASELINE_SYSTEM_PROMPT)
    if not had_skill:
        if skill is not None:
            raise InputError("command line", "--skill", f"the run in {saved_path} had no skill (single-armed); retry it without --skill")
        if layout is not None:
            raise InputError(str(saved_path), field, f"the run had no skill, and {layout} is found beside the eval file now; re-run the whole command")
        return None
    if skill is not None:
        return skill
    recorded = Path(it.source_path)
    if layout is not None and recorded.is_absolute() and recorded == layout:
        return None  # found by layout, as in the original run
    raise InputError(str(saved_path), field, f"the run was made with --skill {it.source_path}; pass --skill again to retry it")


def _check_given_path(saved: RunResult, saved_path: Path, path: Path | None) -> None:
    """The eval file or folder given with --retry-errors is the one the run was made from."""
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
