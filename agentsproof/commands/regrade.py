"""``agentsproof regrade RUN.json [--eval FILE]``: the recorded trials of a saved run graded
again with the eval's current graders and judges; no target runs (agentsproof.executor.regrade).

The eval files are the ones the run names (``items[].eval_path``), or ``--eval FILE`` for a
run of one file; their items are rebuilt the way the original run built them
(agentsproof.commands.rerun). The new report goes beside RUN.json as
``<RUN>-regraded.{json,md,html}`` (or in ``--output DIR``), marked re-graded with what changed.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.core.errors import InputError
from agentsproof.llm.base import ChatRequest, ChatResponse, LLMClient
from agentsproof.model.results import ItemResult, RunResult

if TYPE_CHECKING:
    from collections.abc import Callable

    from agentsproof.executor.recorder import FileStore
    from agentsproof.executor.runner import ItemRun
    from agentsproof.model.items import EvalItem


class _Counting(LLMClient):
    """Counts the calls that reach the provider (judge calls; below the response cache)."""

    def __init__(self, inner: LLMClient):
        self.inner = inner
        self.name = inner.name
        self.max_concurrency = inner.max_concurrency
        self.calls = 0

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        return await self.inner.complete(request)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()


def _with_eval(saved: RunResult, eval_file: Path, run_path: Path) -> RunResult:
    paths = {it.eval_path for it in saved.items}
    if saved.command == "eval-all" or len(paths) != 1:
        raise InputError("command line", "--eval", f"{run_path} was made from {len(paths)} eval files; --eval replaces the one file of an eval or tc-eval run")
    if not eval_file.exists():
        raise InputError("command line", "--eval", f"file {str(eval_file)!r} not found")
    copy = saved.model_copy(deep=True)
    for it in copy.items:
        it.eval_path = str(eval_file.resolve())
    return copy


def _signature(it: ItemResult) -> dict[str, list[str]]:
    """Per case, the graders and checks its trials were graded with."""
    out: dict[str, list[str]] = {}
    for t in it.with_arm.trials + it.without_arm.trials:
        if t.graders and (t.case or "") not in out:
            out[t.case or ""] = [f"{g.type}({', '.join(c.target[:60] for c in g.checks)})" if g.checks else g.type for g in t.graders]
    return out


def changes(before: RunResult, after: RunResult) -> list[str]:
    """What re-grading changed: graders per case, then scores, pass rates and grades per item."""
    out: list[str] = []
    old = {it.id: it for it in before.items}
    for it in after.items:
        prev = old.get(it.id)
        if prev is None:
            continue
        a, b = _signature(prev), _signature(it)
        for case in sorted(set(a) | set(b)):
            if a.get(case) != b.get(case):
                label = f"{it.name}" + (f" case {case}" if case else "")
                out.append(f"{label}: graders {' + '.join(a.get(case, [])) or 'none'} -> {' + '.join(b.get(case, [])) or 'none'}")
        for arm, p_arm, n_arm in (("with", prev.with_arm, it.with_arm), ("without", prev.without_arm, it.without_arm)):
            if p_arm.mean_score != n_arm.mean_score:
                out.append(f"{it.name}: {arm}-arm mean {_num(p_arm.mean_score)} -> {_num(n_arm.mean_score)}")
        if prev.grade != it.grade:
            out.append(f"{it.name}: grade {prev.grade or '-'} -> {it.grade or '-'}")
        if prev.passed != it.passed:
            out.append(f"{it.name}: {'passed' if prev.passed else 'failed'} -> {'passed' if it.passed else 'failed'}")
    return out


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def regrade(
    run_path: Path,
    *,
    eval_file: Path | None = None,
    output: Path | None = None,
    provider: str | None = None,
    model: str | None = None,
    judge_model: str | None = None,
    cache: bool = True,
    parallel: int = 4,
    ci: bool = False,
    sign: Path | None = None,
) -> tuple[RunResult, dict[str, Path]]:
    """Grade a saved run's trials again with its eval files' graders (or ``eval_file``'s): the new run and the reports written
    (its manifest records ``ci``, which decides its exit code; ``sign``: the key the caller signs the JSON report with)."""
    from agentsproof.commands.rerun import retry_items
    from agentsproof.core.inputs import display
    from agentsproof.executor.recorder import FileStore, store_dir
    from agentsproof.executor.regrade import NotRecorded, check_recorded
    from agentsproof.model.settings import RunSettings
    from agentsproof.report.saved import load_run

    started = time.perf_counter()
    saved = load_run(run_path)
    out = output or Path(run_path).resolve().parent
    stem = Path(run_path).stem
    stem = stem if stem.endswith("-regraded") else stem + "-regraded"
    refuse_inputs(out, stem, [Path(run_path), eval_file])  # before any judge call
    source = _with_eval(saved, eval_file, run_path) if eval_file is not None else saved
    items, after = retry_items(source, run_path, None)
    if RunSettings.from_dict(saved.settings).baseline == "none":  # a single-arm run (a Harbor task without skills) is graded single-armed
        import dataclasses

        items = {k: dataclasses.replace(v, arms=("with",)) for k, v in items.items()}
    folder = store_dir(Path(run_path))
    if not folder.is_dir() and saved.regraded:  # a re-graded report reads the original's store
        folder = store_dir(Path(saved.regraded.get("from", "")))
    store = FileStore(folder) if folder.is_dir() else None
    for n, it in enumerate(saved.items):
        try:
            check_recorded(items[it.id], it, store)
        except NotRecorded as err:
            raise InputError(display(Path(run_path)), f"items[{n}]", f"cannot re-grade: {err}") from None
    origin = str(Path(saved.regraded["from"]) if saved.regraded else Path(run_path).resolve())
    run = grade_run(
        saved,
        items,
        store,
        after=after,
        origin=origin,
        evals=[it.eval_path for it in source.items if it.eval_path],
        provider=provider,
        model=model,
        judge_model=judge_model,
        cache=cache,
        parallel=parallel,
        started=started,
    )
    from agentsproof.commands.proof import proof_options, seal

    seal(run, list(items.values()), {}, proof_options(ci=ci, sign=sign))  # the re-graded report verifies like any other (docs/verify.md)
    return run, write_regraded(run, out, stem)


def grade_run(
    saved: RunResult,
    items: dict[str, EvalItem],
    store: FileStore | None,
    *,
    after: Callable[[RunResult], None] | None,
    origin: str,
    evals: list[str],
    provider: str | None,
    model: str | None,
    judge_model: str | None,
    cache: bool,
    parallel: int,
    started: float,
) -> RunResult:
    """``saved``'s trials graded with ``items``' graders: a new run, marked re-graded from ``origin``."""
    from agentsproof.executor.finalize import build_run, finalize_item

    (runs, pairwise), judge_calls, judge_name = asyncio.run(_grade(saved, items, store, provider, model, judge_model, cache, parallel))
    from agentsproof.model.settings import RunSettings

    ci_rule = RunSettings.from_dict(saved.settings).ci_rule or "point"  # the run's own pass rule
    results = []
    for r, prev in zip(runs, saved.items, strict=True):
        res = finalize_item(r, ci_rule)
        res.oracle = prev.oracle  # the preflight is not re-run: it is the eval's, not the trials'
        if res.id in pairwise:
            res.stats["pairwise"] = pairwise[res.id]
        results.append(res)
    run = build_run(
        saved.command,
        saved.plugin,
        results,
        provider=saved.provider,
        model=saved.model,
        judge_model=judge_name or saved.judge_model,
        settings=saved.settings,
        incomplete_reason=saved.incomplete_reason if saved.incomplete else None,
        duration_s=time.perf_counter() - started,
    )
    if after is not None:
        after(run)
    run.regraded = {
        "from": origin,
        "eval": [str(p) for p in dict.fromkeys(evals)],
        "changes": changes(saved, run),
        "target_calls": 0,
        "judge_calls": judge_calls,
    }
    return run


def _regraded_targets(out: Path, stem: str) -> dict[str, Path]:
    return {fmt: out / f"{stem}.{fmt}" for fmt in ("json", "md", "html")}


def refuse_inputs(out: Path, stem: str, inputs: list[Path | None]) -> None:
    """InputError when a report this command writes would replace one of its inputs (e.g.
    ``regrade X-regraded.json`` beside itself): give --output."""
    from agentsproof.core.safepath import refuse_overwrite

    for path in _regraded_targets(out, stem).values():
        refuse_overwrite(path, inputs, "command line", "--output")


def write_regraded(run: RunResult, out: Path, stem: str) -> dict[str, Path]:
    """Write ``<out>/<stem>.{json,md,html}``: the paths by format; InputError when ``out`` cannot be made."""
    targets = _regraded_targets(out, stem)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(str(out), "--output", f"cannot create: {err.strerror or err}") from None
    from agentsproof.report.files import write_outputs

    return write_outputs(run, targets)


async def _grade(
    saved: RunResult,
    items: dict[str, EvalItem],
    store: FileStore | None,
    provider: str | None,
    model: str | None,
    judge_model: str | None,
    cache: bool,
    parallel: int,
) -> tuple[tuple[list[ItemRun], dict[str, dict[str, Any]]], int, str]:
    from agentsproof.executor.pairwise import pairwise_pass
    from agentsproof.executor.regrade import regrade_item
    from agentsproof.grading.grade import Judge, needs_judge

    wanted = [items[it.id] for it in saved.items]
    graders = [g for item in wanted for c in (item.cases or (item.case_at(0),)) for g in c.graders]
    judge = None
    counting = None
    client: LLMClient | None = None
    name = ""
    if needs_judge(graders):
        from agentsproof.executor.session import prepare_provider

        prepared = prepare_provider(provider, model or saved.model or None, judge_model or saved.judge_model or None)
        if prepared.client is None:
            raise InputError("command line", "--provider", "the eval's judges need a provider to re-grade")
        counting = _Counting(prepared.client)
        client = counting
        if cache and os.environ.get("AGENTSPROOF_NO_CACHE", "").strip() in ("", "0"):
            from agentsproof.llm.cache import CachingClient, ResponseCache, default_cache_dir

            client = CachingClient(counting, ResponseCache(default_cache_dir()))
        judge = Judge(client=client, model=prepared.judge_model)
        name = prepared.judge_model
    try:
        runs = [await regrade_item(item, it, store, judge, parallel) for item, it in zip(wanted, saved.items, strict=True)]
        pairwise = await pairwise_pass(runs, judge, parallel)
    finally:
        if client is not None:
            await client.aclose()
    return (runs, pairwise), (counting.calls if counting is not None else 0), name
