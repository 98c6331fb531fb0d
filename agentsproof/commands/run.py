"""What each CLI command does, as plain functions the CLI (and tests) call."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from agentsproof.model.evalfile import DEFAULT_THRESHOLD, DEFAULT_TIMEOUT, load_eval
from agentsproof.core.errors import EXIT_ERROR, EXIT_OK, AgentsproofError, InputError
from agentsproof.formats.plan import item_from_eval, items_from_tc_eval, plugin_name_for_dir, plugin_name_for_eval
from agentsproof.executor.runner import EvalItem
from agentsproof.executor.session import SessionOptions, prepare_provider, run_items
from agentsproof.model.options import RunConfig
from agentsproof.report.files import prepare_output, report_targets
from agentsproof.model.results import RunResult


def write_outputs(run: RunResult, targets: dict[str, Path]) -> dict[str, Path]:
    """Every report of ``run``; the writers (and jinja2) are imported only now, after the run."""
    from agentsproof.report.exports import write_outputs as write

    return write(run, targets)


def _session(cfg: RunConfig, settings: dict[str, Any], **extra: Any) -> SessionOptions:
    from agentsproof.commands.console import Progress
    from agentsproof.stats.adaptive import policy_for

    progress = Progress()
    return SessionOptions(
        provider=cfg.provider,
        model=cfg.model,
        judge_model=cfg.judge_model,
        parallel=cfg.parallel,
        abort_after=cfg.abort_after,
        settings=settings,
        on_trial=progress.trial,
        on_item=progress.item,
        policy=policy_for(cfg, settings),
        resume=cfg.resume,
        cache=cfg.cache,
        cache_dir=cfg.cache_dir,
        prompt_cache=cfg.prompt_cache,
        max_calls=cfg.max_calls,
        max_cost=cfg.max_cost,
        **extra,
    )


def _settings(cfg: RunConfig) -> dict[str, Any]:
    out: dict[str, Any] = {k: getattr(cfg, k) for k in ("trials", "threshold") if getattr(cfg, k) is not None}
    if cfg.shard is not None:
        out["shard"] = str(cfg.shard)
    if cfg.all_tasks:
        out["all_tasks"] = True
    for k in ("max_cost", "max_calls"):
        if getattr(cfg, k) is not None:
            out[k] = getattr(cfg, k)
    return {**out, **_interop_settings(cfg)}


def _interop_settings(cfg: RunConfig) -> dict[str, Any]:
    from agentsproof.stats.single_arm import run_settings

    return run_settings(cfg.baseline, cfg.config)


def _arms(items: list[EvalItem], cfg: RunConfig) -> list[EvalItem]:
    """``--baseline none``: every item runs its with-arm only."""
    import dataclasses

    if cfg.baseline != "none":
        return items
    if cfg.adaptive:
        raise InputError("command line", "--adaptive", "stops once the grade is settled, and a single-arm run (--baseline none) has no grade; give one of them")
    return [dataclasses.replace(it, arms=("with",)) for it in items]


def _all_settings(cfg: RunConfig) -> dict[str, Any]:
    return {**_settings(cfg), "p_adjust": cfg.p_adjust}


def _targets(command: str, cfg: RunConfig, plugin: str, stem: str, kind: str | None = None) -> dict[str, Path]:
    """The report paths of this run, checked writable before the first model call."""
    targets = report_targets(command, cfg.output, plugin, stem, kind)
    prepare_output(cfg.output, targets)
    if cfg.junit is None and cfg.jsonl is None:
        return targets
    from agentsproof.report.exports import extra_targets

    return {**targets, **extra_targets(cfg.junit, cfg.jsonl)}


def resolve_targets(items: list[EvalItem], cfg: RunConfig) -> dict[str, Any]:
    """The definition of every agent target the items name (targets.yaml lookup from each
    eval file's folder); one line naming where the name was given when one is unknown."""
    defs: dict[str, Any] = {}
    for it in items:
        if it.target == "chat":
            continue
        from agentsproof.core.inputs import display
        from agentsproof.targets.config import find_target

        near = Path(it.eval_path) if it.eval_path else None
        try:
            found = find_target(it.target, near, cfg.targets_file)
        except InputError as err:
            if err.source is not None:
                raise
            where = ("command line", "--target") if cfg.target else (display(Path(it.eval_path or "eval.yaml")), "execution.target")
            raise InputError(where[0], where[1], err.message) from None
        prev = defs.get(it.target)
        if prev is not None and prev.spec != found.spec:
            raise InputError(found.source, it.target, f"is defined differently in {prev.source}; one name must mean one target in a run")
        defs[it.target] = found
    return defs


def _run(
    command: str, plugin: str, items: list[EvalItem], cfg: RunConfig, stem: str, settings: dict[str, Any], after: Any = None
) -> tuple[RunResult, dict[str, Path]]:
    """The one path every run takes: targets checked, trials run (journalled, resumable), reports written."""
    from agentsproof.executor.journal import journal_path

    items = _arms(items, cfg)
    if cfg.plan:
        from agentsproof.executor.costplan import print_plan

        print_plan(command, items, cfg)
        return None, {}  # type: ignore[return-value]
    target_defs = resolve_targets(items, cfg)
    targets = _targets(command, cfg, plugin, stem, items[0].kind if command == "eval" and items else None)
    session = _session(
        cfg, settings, journal=journal_path(targets["json"]), target_defs=target_defs,
        keep_workspaces=_workspaces_dir(targets) if cfg.keep_workspaces and target_defs else None,
        spill=after is None,  # ``after`` edits the trials in memory (datasets): they stay there
    )
    run = run_items(command, plugin, items, session)
    if after is not None:  # e.g. a dataset's failure reasons on its checks
        after(run)
    return run, write_outputs(run, targets)


def _workspaces_dir(targets: dict[str, Path]) -> Path:
    """Kept workspaces go beside the JSON report: ``<report>.workspaces/``."""
    json_path = targets["json"]
    return json_path.with_name(json_path.stem + ".workspaces")


def _retry(command: str, path: Path, cfg: RunConfig) -> tuple[RunResult, dict[str, Path]]:
    """--retry-errors RUN.json: the saved run's scored trials kept, its errored ones run again,
    through the same session path as any run."""
    from agentsproof.executor.journal import journal_path
    from agentsproof.commands.rerun import retry_items, retry_plan
    from agentsproof.stats.compare import load_run

    saved_path = Path(cfg.retry_errors)  # type: ignore[arg-type]
    saved = load_run(saved_path)
    if saved.command != command:
        raise InputError(str(saved_path), "command", f"is a {saved.command!r} run; retry it with `agentsproof {saved.command}`")
    by_id, after = retry_items(saved, saved_path, path, cfg.skill)  # the items as the original run built them
    items, prior, settings = retry_plan(saved, by_id, saved_path)
    if saved.settings.get("baseline") == "none":  # a single-arm run is retried single-armed
        items = _arms(items, cfg.replace(baseline="none", adaptive=False))
    name = saved.items[0].name if command == "eval" and saved.items else saved.plugin
    targets = _targets(command, cfg, saved.plugin, name, saved.items[0].kind if command == "eval" and saved.items else None)
    target_defs = resolve_targets(items, cfg)
    session = _session(
        cfg.replace(adaptive=False), settings, prior=prior, journal=journal_path(targets["json"]), base_duration_s=saved.duration_s,
        target_defs=target_defs, keep_workspaces=_workspaces_dir(targets) if cfg.keep_workspaces and target_defs else None,
        spill=after is None,  # `after` labels the trials in memory, as in _run
    )
    run = run_items(command, saved.plugin, items, session)
    if after is not None:  # check labels of an EVAL.yaml, a dataset's failure reasons
        after(run)
    return run, write_outputs(run, targets)


def run_eval(path: Path, cfg: RunConfig) -> tuple[RunResult, dict[str, Path]]:
    from agentsproof.stats.adaptive import adaptive_defaults

    if cfg.retry_errors:
        return _retry("eval", path, cfg)
    cfg = adaptive_defaults(cfg)
    from agentsproof.formats.evalyaml import is_eval_yaml

    if is_eval_yaml(Path(path)):  # an EVAL.yaml: one case per test (agentsproof.formats.evalyaml)
        from agentsproof.commands.evalyaml import run_eval_yaml

        return run_eval_yaml(Path(path), cfg)
    if cfg.skill is not None:
        raise InputError("command line", "--skill", "is for an EVAL.yaml; an eval.yaml names its skill in 'skill'")
    ev = load_eval(path)
    item = item_from_eval(ev, trials=cfg.trials, threshold=cfg.threshold, target=cfg.target, all_tasks=cfg.all_tasks)
    return _run("eval", plugin_name_for_eval(ev.path), [item], cfg, ev.name, _settings(cfg))


def run_eval_all(directory: Path, cfg: RunConfig) -> tuple[RunResult, dict[str, Path]]:
    from agentsproof.executor.shard import select_shard
    from agentsproof.stats.adaptive import adaptive_defaults

    if cfg.retry_errors:
        return _retry("eval-all", directory, cfg)
    cfg = adaptive_defaults(cfg)
    from agentsproof.formats.layout import plugin_evals

    from agentsproof.commands.evalyaml import eval_all_items, label_all

    paths = plugin_evals(directory)  # below DIR; else in the skill folders of the plugin at DIR (any layout)
    items, suites = eval_all_items(paths, cfg)  # eval.yaml, EVAL.yaml and evals/evals.json, all validated first
    seen: dict[str, str] = {}
    for item in items:
        if item.id in seen:
            raise InputError(str(item.eval_path), None, f"{item.id!r} is also defined by {seen[item.id]}; item names must be unique")
        seen[item.id] = str(item.eval_path)
    plugin = plugin_name_for_dir(directory)
    if cfg.shard is not None:
        items = select_shard(items, cfg.shard)
        if not items:
            return _empty_shard(plugin, cfg)
    return _run("eval-all", plugin, items, cfg, plugin, _all_settings(cfg), after=(lambda run: label_all(suites, run)) if suites else None)


def _empty_shard(plugin: str, cfg: RunConfig) -> tuple[RunResult, dict[str, Path]]:
    """A shard that got no items: an empty report (merge skips it), no model call."""
    from agentsproof.executor.results import build_run

    targets = _targets("eval-all", cfg, plugin, plugin)
    run = build_run("eval-all", plugin, [], provider=cfg.provider or "", model=cfg.model or "", judge_model=cfg.judge_model or "", settings=_settings(cfg))
    return run, write_outputs(run, targets)


def run_tc_eval(path: Path, cfg: RunConfig) -> tuple[RunResult, dict[str, Path]]:
    from agentsproof.stats.adaptive import adaptive_defaults

    if cfg.retry_errors:
        return _retry("tc-eval", path, cfg)
    cfg = adaptive_defaults(cfg)
    if Path(path).suffix.lower() == ".jsonl":
        return _run_dataset(Path(path), cfg)
    from agentsproof.formats.evalyaml import is_eval_yaml

    if Path(path).suffix.lower() in (".yaml", ".yml") and is_eval_yaml(Path(path)):
        from agentsproof.commands.evalyaml import run_eval_yaml

        return run_eval_yaml(Path(path), cfg)
    if cfg.skill is not None:
        raise InputError("command line", "--skill", "is for a JSONL dataset or an EVAL.yaml; an evals.json names its skill in skill_name")
    from agentsproof.model.tc_eval import load_tc_eval

    tc = load_tc_eval(path)
    trials = cfg.trials or 1
    threshold = cfg.threshold if cfg.threshold is not None else DEFAULT_THRESHOLD
    timeout = cfg.timeout if cfg.timeout is not None else DEFAULT_TIMEOUT
    items = items_from_tc_eval(tc, trials=trials, threshold=threshold, timeout=timeout, target=cfg.target)
    stem = tc_eval_name(tc)
    settings = {"trials": trials, "threshold": threshold, "timeout": timeout, **_interop_settings(cfg)}
    return _run("tc-eval", stem, items, cfg, stem, settings)


def _run_dataset(path: Path, cfg: RunConfig) -> tuple[RunResult, dict[str, Path]]:
    """``tc-eval cases.jsonl``: an agentprobe-style dataset (agentsproof.formats.dataset)."""
    from agentsproof.formats.dataset import dataset_items, explain_run, load_dataset
    from agentsproof.core.inputs import MAX_SOURCE_FILE_BYTES, display, read_text

    ds = load_dataset(path)
    skill = None
    if cfg.skill is not None:
        if not Path(cfg.skill).is_file():
            raise InputError(display(cfg.skill), "--skill", "file not found")
        text = read_text(Path(cfg.skill), source=display(cfg.skill), field="--skill", max_bytes=MAX_SOURCE_FILE_BYTES, what="skill file")
        if not text.strip():
            raise InputError(display(cfg.skill), "--skill", "is empty")
        skill = (Path(cfg.skill), text)
    trials = cfg.trials or 1
    threshold = cfg.threshold if cfg.threshold is not None else DEFAULT_THRESHOLD
    timeout = cfg.timeout if cfg.timeout is not None else DEFAULT_TIMEOUT
    items = dataset_items(ds, skill=skill, trials=trials, threshold=threshold, timeout=timeout, target=cfg.target)
    if skill is None:
        cfg = cfg.replace(baseline="none")
    if any(it.graders and it.target == "chat" and any(g.type == "tool_calls" for g in it.graders) for it in items):
        print("note: cases with expected_tools are graded on the agent's tool calls; a chat trial makes none (run with --target NAME)", file=sys.stderr)
    settings = {"trials": trials, "threshold": threshold, "timeout": timeout, "dataset": display(path), **_interop_settings(cfg)}
    stem = path.stem
    return _run("tc-eval", stem, items, cfg, stem, settings, after=lambda run: explain_run(ds, run))


def tc_eval_name(tc: Any) -> str:
    """What a tc-eval report is called: the evals file's stem, unless that is the generic
    ``evals`` — then the skill (its folder, for a SKILL.md) so two skills' reports differ."""
    stem = tc.path.stem
    if stem.lower() != "evals":
        return stem
    skill = tc.skill_path
    return skill.parent.name if skill.name.lower() == "skill.md" else skill.stem


def doctor(provider: str | None = None, model: str | None = None, judge_model: str | None = None) -> int:
    from agentsproof.llm.base import ChatRequest, LLMError

    out = sys.stdout
    try:
        prepared = prepare_provider(provider, model, judge_model)
    except AgentsproofError as err:
        print(f"provider: not usable\nfix: {err}", file=out)
        return EXIT_ERROR
    print(f"provider: {prepared.provider}", file=out)
    print(f"model: {prepared.model}", file=out)
    if prepared.judge_model != prepared.model:
        print(f"judge model: {prepared.judge_model}", file=out)
    for k, v in prepared.client.describe().items():
        if k != "provider" and v:
            print(f"{k}: {v}", file=out)

    async def _call() -> Any:
        try:
            return await prepared.client.complete(
                ChatRequest(
                    messages=[{"role": "user", "content": "Reply with the single word: ready"}],
                    model=prepared.model,
                    temperature=0.0,
                    max_tokens=8,
                    timeout=120,
                )
            )
        finally:
            await prepared.client.aclose()

    t0 = time.perf_counter()
    try:
        resp = asyncio.run(_call())
    except LLMError as err:
        print(f"call: FAILED after {time.perf_counter() - t0:.2f}s: {err}", file=out)
        fix = getattr(err, "fix", None)  # e.g. the local provider's crashed-worker advice
        print(f"fix: {fix or 'check the provider settings above (URL, key, model name) and that the service is running'}", file=out)
        return EXIT_ERROR
    print(f"latency: {resp.latency_s:.2f}s", file=out)
    print(f"tokens: {resp.usage.total_tokens}", file=out)
    print(f"reply: {resp.text.strip()[:80]!r}", file=out)
    print("status: ok", file=out)
    return EXIT_OK
