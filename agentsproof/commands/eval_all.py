"""``eval-all``: every eval file found below a folder, as one run.

What it finds is :func:`agentsproof.formats.layout.plugin_evals`'s (each format's
``discoverable``); each file is loaded, linted and oracle-checked as ``eval`` does
(:mod:`agentsproof.commands.run`), and one that is refused is listed, not fatal; the
files' items make one plan (:func:`agentsproof.commands.plan.plan_run`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from agentsproof.commands.plan import adaptive_defaults, all_settings, item_request, plan_run, report_paths, run_settings
from agentsproof.commands.run import copies_gate, execute, lint_gate, load_file, retry, write_sealed
from agentsproof.core.errors import InputError
from agentsproof.formats.base import Loaded
from agentsproof.formats.eval_yaml.items import plugin_name_for_dir
from agentsproof.model.options import RunFlags
from agentsproof.model.results import RunResult


def run_eval_all(directory: Path, cfg: RunFlags, *, strict: bool = False, allow_refused: bool = False) -> tuple[RunResult | None, dict[str, Path]]:
    """Every eval file found below ``directory`` as one run (this shard's items, when sharded); (None, {}) for ``--plan``.

    A file that does not load (or that lint or the oracle refuses) is listed with its one
    error line; exit 30 before any trial when none runs, with ``strict`` (``--strict``), or
    under ``--ci`` (a gate fails closed) unless ``allow_refused`` (``--allow-refused``): then
    the others run and the run's report records it (``settings.refused``)."""
    from agentsproof.executor.shard import select_shard

    if cfg.retry_errors:
        return retry("eval-all", directory, cfg)
    cfg = adaptive_defaults(cfg)
    files, refused = load_all(directory, cfg)
    closed = strict or (cfg.ci and not allow_refused and not cfg.plan)  # --ci: the gate fails closed
    if refused and (closed or not files):  # nothing runs: the first refusal is the error line
        first, more = refused[0], len(refused) - 1
        flag = "--strict" if strict else "--ci"
        if more:
            _say_refused(directory, refused, len(files) + len(refused), f"the run stops ({flag})" if files else "none runs")
        why = ""
        if files:
            why = "--strict: the run is refused" if strict else "--ci: a refused eval file fails the run; --allow-refused runs the others"
        also = f"{more} more eval file{'s' if more > 1 else ''} refused, listed above" if more else ""
        tail = "; ".join(t for t in (why, also) if t)
        raise InputError(first.source, first.field, first.message + (f" ({tail})" if tail else ""))
    if refused:
        _say_refused(directory, refused, len(files) + len(refused), "the others run (--strict or --ci without --allow-refused: none)")
    items = [item for f in files for item in f.items]
    plugin = plugin_name_for_dir(directory)
    if cfg.shard is not None:
        items = select_shard(items, cfg.shard)
        if not items:
            return _empty_shard(plugin, cfg)
    settings = all_settings(cfg)
    if refused:
        settings = dataclasses.replace(settings, refused=[{"file": e.source or str(directory), "error": e.format()} for e in refused])
    return execute(plan_run("eval-all", plugin, items, cfg, plugin, settings, after=after_all(files)))


def load_all(directory: Path, cfg: RunFlags) -> tuple[list[Loaded], list[InputError]]:
    """eval-all's files below ``directory`` (else in the skill folders of the plugin at it, any
    layout), each loaded, linted and (unless ``--plan``) oracle-checked: the ones that run, and
    the refusals of the others, one error each. A file without a skill to compare with (an
    EVAL.yaml with no SKILL.md near it, a promptfooconfig.yaml) runs its with-arm only; an item
    id another file already defined refuses the later file."""
    from agentsproof.formats.layout import plugin_evals

    request = item_request(cfg, in_plugin=True)
    files: list[Loaded] = []
    refused: list[InputError] = []
    seen: dict[str, str] = {}
    for p in plugin_evals(directory):
        try:
            loaded = load_file(p, "eval-all", request)
            lint_gate(loaded, p)
            copies_gate(loaded, cfg)
            for item in loaded.items:
                if item.id in seen:
                    raise InputError(str(item.eval_path), None, f"{item.id!r} is also defined by {seen[item.id]}; item names must be unique")
        except InputError as err:
            refused.append(err)
            continue
        if loaded.single_arm:  # nothing to compare against: the model or target alone, as `eval` runs it
            loaded.items = [dataclasses.replace(it, arms=("with",)) for it in loaded.items]
        seen.update((item.id, str(item.eval_path)) for item in loaded.items)
        files.append(loaded)
    if cfg.plan or not files:
        return files, refused
    # the oracle preflights of every file at once, --parallel at a time (as trials run)
    from agentsproof.commands.oracle import attach, preflight_all

    checked = []
    for loaded, found in zip(files, preflight_all(files, cfg), strict=True):
        if isinstance(found, InputError):
            refused.append(found)
            continue
        loaded.after = attach(found, loaded.after)
        checked.append(loaded)
    return checked, refused


def _say_refused(directory: Path, refused: list[InputError], total: int, then: str) -> None:
    """The refused files on stderr, one line each, before any trial; ``then``: what happens next."""
    from agentsproof.core.notice import note, say

    note(f"{directory}: {len(refused)} of {total} eval files refused; {then}:")
    for err in refused:
        say(f"  refused: {err.format()}")


def after_all(files: list[Loaded]) -> Callable[[RunResult], None] | None:
    """What the files' formats do to the run's result before reports are written, in file order."""
    hooks = [f.after for f in files if f.after is not None]
    if not hooks:
        return None

    def after(run: RunResult) -> None:
        for hook in hooks:
            hook(run)

    return after


def _empty_shard(plugin: str, cfg: RunFlags) -> tuple[RunResult, dict[str, Path]]:
    """A shard that got no items: an empty report (merge skips it), no model call."""
    from agentsproof.executor.finalize import build_run
    from agentsproof.executor.plan import RunPlan

    plan = RunPlan("eval-all", plugin, (), plugin, cfg, reports=report_paths("eval-all", cfg, plugin, plugin))
    run = build_run(
        "eval-all",
        plugin,
        [],
        provider=cfg.provider or "",
        model=cfg.model or "",
        judge_model=cfg.judge_model or "",
        settings=dataclasses.replace(run_settings(cfg), aa=None),
    )  # nothing ran: no A/A block
    return run, write_sealed(run, plan)
