"""What each CLI command does, as plain functions the CLI (and tests) call."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from agentsproof.config import discover_evals, load_eval
from agentsproof.errors import EXIT_ERROR, EXIT_OK, AgentsproofError
from agentsproof.executor.plan import item_from_eval, items_from_tc_eval, plugin_name_for_dir, plugin_name_for_eval
from agentsproof.executor.session import SessionOptions, prepare_provider, run_items
from agentsproof.report import prepare_output, report_targets, write_reports
from agentsproof.schemas.artifacts import RunResult
from agentsproof.schemas.tc_eval import load_tc_eval


def _session(opts: dict[str, Any], settings: dict[str, Any]) -> SessionOptions:
    from agentsproof.console import Progress
    from agentsproof.stats.adaptive import policy_for

    progress = Progress()
    return SessionOptions(
        provider=opts.get("provider"),
        model=opts.get("model"),
        judge_model=opts.get("judge_model"),
        parallel=opts.get("parallel") or 1,
        abort_after=opts.get("abort_after", 5),
        settings=settings,
        on_trial=progress.trial,
        on_item=progress.item,
        policy=policy_for(opts, settings),
    )


def _settings(opts: dict[str, Any]) -> dict[str, Any]:
    return {k: opts.get(k) for k in ("trials", "threshold") if opts.get(k) is not None}


def _retry(command: str, path: Path, opts: dict[str, Any]) -> tuple[RunResult, dict[str, Path]]:
    """--retry-errors RUN.json: re-run the saved run's errored trials and write its reports again."""
    from agentsproof.errors import InputError
    from agentsproof.executor.rerun import load_items_for_retry, retry_errors
    from agentsproof.stats.compare import load_run

    saved_path = Path(opts["retry_errors"])
    saved = load_run(saved_path)
    if saved.command != command:
        raise InputError(str(saved_path), "command", f"is a {saved.command!r} run; retry it with `agentsproof {saved.command}`")
    items = load_items_for_retry(saved, saved_path, path)
    name = saved.items[0].name if command == "eval" and saved.items else saved.plugin
    targets = _targets(command, opts, saved.plugin, name)
    run = retry_errors(saved, items, _session({**opts, "adaptive": False}, {}), saved_path)
    return run, write_reports(run, targets)


def _targets(command: str, opts: dict[str, Any], plugin: str, stem: str) -> dict[str, Path]:
    """The report paths of this run, checked writable before the first model call."""
    output = opts.get("output") or Path("runs")
    targets = report_targets(command, output, plugin, stem)
    prepare_output(output, targets)
    return targets


def run_eval(path: Path, **opts: Any) -> tuple[RunResult, dict[str, Path]]:
    from agentsproof.stats.adaptive import adaptive_defaults

    if opts.get("retry_errors"):
        return _retry("eval", path, opts)
    opts = adaptive_defaults(opts)
    ev = load_eval(path)
    item = item_from_eval(ev, trials=opts.get("trials"), threshold=opts.get("threshold"))
    plugin = plugin_name_for_eval(ev.path)
    targets = _targets("eval", opts, plugin, ev.name)
    run = run_items("eval", plugin, [item], _session(opts, _settings(opts)))
    return run, write_reports(run, targets)


def run_eval_all(directory: Path, **opts: Any) -> tuple[RunResult, dict[str, Path]]:
    from agentsproof.stats.adaptive import adaptive_defaults

    if opts.get("retry_errors"):
        return _retry("eval-all", directory, opts)
    opts = adaptive_defaults(opts)
    paths = discover_evals(directory)
    evals = [load_eval(p) for p in paths]  # validate everything before the first call
    items = [item_from_eval(ev, trials=opts.get("trials"), threshold=opts.get("threshold")) for ev in evals]
    seen: dict[str, str] = {}
    for ev, item in zip(evals, items):
        if item.id in seen:
            from agentsproof.errors import InputError

            raise InputError(str(ev.path), None, f"{item.id!r} is also defined by {seen[item.id]}; item names must be unique")
        seen[item.id] = str(ev.path)
    plugin = plugin_name_for_dir(directory)
    targets = _targets("eval-all", opts, plugin, plugin)
    run = run_items("eval-all", plugin, items, _session(opts, _settings(opts)))
    return run, write_reports(run, targets)


def run_tc_eval(path: Path, **opts: Any) -> tuple[RunResult, dict[str, Path]]:
    from agentsproof.stats.adaptive import adaptive_defaults

    if opts.get("retry_errors"):
        return _retry("tc-eval", path, opts)
    opts = adaptive_defaults(opts)
    tc = load_tc_eval(path)
    trials = opts.get("trials") or 1
    items = items_from_tc_eval(tc, trials=trials, threshold=opts["threshold"], timeout=opts["timeout"])
    stem = tc.path.stem
    settings = {"trials": trials, "threshold": opts["threshold"], "timeout": opts["timeout"]}
    targets = _targets("tc-eval", opts, stem, stem)
    run = run_items("tc-eval", stem, items, _session(opts, settings))
    return run, write_reports(run, targets)


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
