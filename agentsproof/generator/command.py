"""The eval-generate command: find the items, generate and check them, write, summarize."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from agentsproof.core.errors import EXIT_ERROR, EXIT_OK, InputError
from agentsproof.core.safepath import write_file
from agentsproof.executor.session import prepare_provider
from agentsproof.generator.core import DEFAULT_CHECK_RETRIES, DEFAULT_CHECK_TRIALS, DEFAULT_TRIALS, GenerateSettings, ItemOutcome, generate_all
from agentsproof.generator.files import REJECTED_DIR, copy_item_files, item_files, write_seeds
from agentsproof.generator.plugin import Plugin, discover_plugin
from agentsproof.generator.prompt import load_system_prompt
from agentsproof.model.skillfolder import inline_budget_tokens

DEFAULT_MODEL = "gpt-4o"
"""The spec's default generation model, used when neither --model nor AGENTSPROOF_MODEL is
given (not with the local provider, which runs its one embedded model)."""

LOCAL_NOTE = (
    "note: the local provider runs a 135M-parameter model, which rarely writes a usable eval; "
    "for real evals use a real provider: --provider openai (AGENTSPROOF_PROVIDER_URL, AGENTSPROOF_PROVIDER_KEY) "
    "or --provider copilot, with --model NAME"
)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def write_item(outcome: ItemOutcome, out: Path) -> tuple[bool, list[str]]:
    """Copy the item's files, then write the eval.yaml; (an eval.yaml was there, skipped files)."""
    assert outcome.generated is not None
    target = outcome.item.out_dir(out)
    eval_path = target / "eval.yaml"
    existed = eval_path.exists()
    skipped = copy_item_files(outcome.item, target)
    write_seeds(outcome.generated.seeds, target)
    write_file(target, "eval.yaml", outcome.generated.text.encode("utf-8"))
    return existed, skipped


def _check_note(outcome: ItemOutcome) -> str:
    if outcome.weak:
        return f"  WEAK: {outcome.weak}"
    p = outcome.proven
    if p is not None and p.delta is not None:
        return f"  (checked: the with-{outcome.item.kind} arm beats the baseline by {p.delta:+.2f})"
    return ""


def _report(outcome: ItemOutcome, settings: GenerateSettings, plugin: Plugin) -> None:
    item = outcome.item
    target = item.out_dir(settings.out)
    eval_path = target / "eval.yaml"
    for note in outcome.notes:
        click.echo(f"note: {plugin.name}/{item.label}: {note}", err=True)
    if outcome.generated is not None and settings.dry_run:  # outcome.ok
        files, _ = item_files(item)
        click.echo(f"# would write {eval_path}")
        for rel, src in files:
            click.echo(f"# would copy {src} -> {target / rel}")
        for folder, seed in outcome.generated.seeds.items():
            for rel in seed:
                click.echo(f"# would write {target / folder / rel} (workspace seed)")
        click.echo(outcome.generated.text)
        return
    if outcome.ok:
        try:
            existed, skipped = write_item(outcome, settings.out)
        except OSError as exc:
            outcome.generated = None
            outcome.error = f"{eval_path}: could not write: {exc.strerror or exc}"
        else:
            verb = "overwrote" if existed else "wrote"
            n_files = len(item_files(item)[0])
            copied = item.file_name if n_files == 1 else f"{item.file_name} and {_plural(n_files - 1, 'more file')}"
            retried = f"  (retried once after: {outcome.first_error})" if outcome.first_error else ""
            click.echo(f"  {verb:<9} {eval_path} + {copied}{retried}{_check_note(outcome)}")
            for s in skipped:
                click.echo(f"warning: {plugin.name}/{item.label}: not copied: {s}", err=True)
            return
    click.echo(f"error: {plugin.name}/{item.label}: {outcome.error}", err=True)


def cases_note(written: list[ItemOutcome], trials: int) -> str | None:
    """How far the written evals are from settling a clear-cut skill for tasks like these
    (question (b)), from the project's own simulation through the report's interval
    (:func:`agentsproof.stats.tasks.clear_cut_cases`); None when every eval has enough cases."""
    if not written:
        return None
    from agentsproof.stats.tasks import clear_cut_cases

    counts = [len(o.generated.config.tasks or []) or 1 for o in written if o.generated is not None]
    need = clear_cut_cases(trials)
    if need is None:
        return (
            f"note: at --trials {trials} no number of cases up to 40 settles a clear-cut skill's grade for tasks like these; "
            "the evals settle it on their own cases (docs/statistics.md)"
        )
    few = sum(1 for n in counts if n < need)
    if not few:
        return None
    return (
        f"note: {few} of these evals {'has' if few == 1 else 'have'} fewer than {need} cases: a clear-cut skill's grade settles on their own "
        f"cases, but for tasks like these it takes about {need} cases at {trials} trials each — add tasks to settle it (docs/statistics.md)"
    )


def refresh_copies(plugin: Plugin, out: Path, *, dry_run: bool = False) -> int:
    """``--refresh``: copy every item's files again into its existing eval folder under ``out``
    and record their sources (no model call; the eval.yaml is kept). 0, or 30 when no eval
    of the plugin is there."""
    from agentsproof.formats.copies import stale_copies

    refreshed = 0
    for item in plugin.items:
        target = item.out_dir(out)
        if not (target / "eval.yaml").is_file():
            click.echo(f"  no eval   {target / 'eval.yaml'} (generate it first: eval-generate without --refresh)")
            continue
        before = stale_copies(target)
        if dry_run:
            click.echo(f"# would refresh {target}" + (f" ({len(before)} stale: {'; '.join(before)})" if before else ""))
            refreshed += 1
            continue
        skipped = copy_item_files(item, target)
        n = len(item_files(item)[0])
        state = f"{len(before)} stale cop{'y' if len(before) == 1 else 'ies'} updated" if before else "already up to date"
        click.echo(f"  refreshed {target}: {_plural(n, 'file')} copied, sources recorded ({state})")
        for s in skipped:
            click.echo(f"warning: {plugin.name}/{item.label}: not copied: {s}", err=True)
        refreshed += 1
    if not refreshed:
        click.echo(f"error: {out}: no eval of {plugin.name} to refresh; run eval-generate without --refresh first", err=True)
        return EXIT_ERROR
    click.echo(f"Refreshed {_plural(refreshed, 'eval')} in {out}{' (dry run: nothing written)' if dry_run else ''}.")
    return EXIT_OK


def _cost(outcomes: list[ItemOutcome]) -> str:
    calls = sum(o.calls for o in outcomes)
    failed = sum(o.failed_calls for o in outcomes)
    tokens = sum(o.usage.total_tokens for o in outcomes)
    text = f"{_plural(calls, 'call')}, {tokens:,} tokens"
    if failed:
        text += f"; {_plural(failed, 'call')} failed"
    trials = sum(o.check_trials for o in outcomes)
    errored = sum(o.check_errored for o in outcomes)
    if trials or errored:
        text += f"; check: {_plural(trials, 'trial')} scored (all arms)"
        text += f", {errored} errored" if errored else ""
        text += f", {sum(o.check_tokens for o in outcomes):,} tokens"
    return text


def _default_model(provider: str | None, model: str | None) -> tuple[str, str | None]:
    """(provider name, model): --model, else AGENTSPROOF_MODEL, else gpt-4o (local: its own)."""
    import os

    from agentsproof.llm.registry import resolve_provider_name

    name = resolve_provider_name(provider)
    if name != "local" and not model and not os.environ.get("AGENTSPROOF_MODEL"):
        model = DEFAULT_MODEL
    return name, model


def generate_cli(
    *,
    plugin_dir: Path,
    out: Path | None = None,
    trials: int = DEFAULT_TRIALS,
    dry_run: bool = False,
    parallel: int = 1,
    model: str | None = None,
    provider: str | None = None,
    judge_model: str | None = None,
    check: bool = True,
    check_trials: int = DEFAULT_CHECK_TRIALS,
    check_retries: int = DEFAULT_CHECK_RETRIES,
    activation: bool = True,
    target: str | None = None,
    targets_file: Path | None = None,
    refresh: bool = False,
) -> int:
    """The eval-generate command; returns the exit code (0, or 30 when any item failed)."""
    plugin = discover_plugin(Path(plugin_dir))
    if refresh:
        return refresh_copies(plugin, Path(out) if out is not None else Path("evals") / plugin.name, dry_run=dry_run)
    target_def = None
    if target is not None:
        from agentsproof.targets.config import check_target_name

        target_def = check_target_name(target, Path(plugin_dir), "command line", "--target", targets_file)
    out_dir = Path(out) if out is not None else Path("evals") / plugin.name
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(str(out_dir), "--out", "is a file; expected a folder")
    system_prompt, _where = load_system_prompt()
    inline_budget_tokens()  # a malformed AGENTSPROOF_SKILL_INLINE_TOKENS is refused before any call
    prepared = prepare_provider(*_default_model(provider, model), judge_model)
    client = prepared.client
    assert client is not None, "prepare_provider always builds a client"
    settings = GenerateSettings(
        out=out_dir,
        trials=trials,
        model=prepared.model,
        dry_run=dry_run,
        parallel=parallel,
        check=check,
        check_trials=check_trials,
        check_retries=check_retries,
        provider=prepared.provider,
        judge_model=prepared.judge_model,
        activation=activation,
        target=target,
        target_def=target_def,
    )
    skills, agents = plugin.count("skill"), plugin.count("agent")
    layout = plugin.layout.style if plugin.layout is not None and plugin.layout.style != "folder" else ""
    checking = f" · check {check_trials} trials per arm" if check else " · no check"
    click.echo(
        f"eval-generate · {plugin.name}{f' ({layout} plugin)' if layout else ''}: {_plural(skills, 'skill')}, {_plural(agents, 'agent')}"
        f" -> {out_dir} · {f'agent evals for target {target}' if target else 'chat evals'} · provider {prepared.provider}"
        f" · model {prepared.model}{checking}{' · dry run' if dry_run else ''}"
    )
    if prepared.provider == "local":
        click.echo(LOCAL_NOTE, err=True)
    outcomes = asyncio.run(generate_all(client, settings, system_prompt, plugin, lambda o: _report(o, settings, plugin)))
    done = sum(1 for o in outcomes if o.ok)
    failed = len(outcomes) - done
    weak = [o for o in outcomes if o.ok and o.weak]
    cost = _cost(outcomes)
    if dry_run:
        click.echo(f"Dry run: {done} of {_plural(len(outcomes), 'eval')} would be written; nothing was written ({cost}).")
    else:
        click.echo(f"Generated {done} of {_plural(len(outcomes), 'eval')} in {out_dir} ({cost}).")
    settle = cases_note([o for o in outcomes if o.ok and o.generated is not None], trials)
    if settle:
        click.echo(settle)
    if weak:
        click.echo(f"{_plural(len(weak), 'eval')} not proven to discriminate (written with a '# weak:' header; review or rewrite them):")
        for o in weak:
            click.echo(f"  {o.item.label}: {o.weak}")
    rejected = sum(len(o.rejected) for o in outcomes)
    if rejected and not dry_run:
        replies = "1 rejected reply" if rejected == 1 else f"{rejected} rejected replies"
        click.echo(f"{replies} kept with the reason in {out_dir / REJECTED_DIR}")
    if done and not dry_run:
        click.echo(f"Run them: agentsproof eval-all {out_dir} --model {prepared.model}")
    if failed:
        click.echo(f"error: {_plural(failed, 'item')} failed; see the lines above", err=True)
        return EXIT_ERROR
    return EXIT_OK
