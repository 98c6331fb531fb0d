"""eval-generate: have an LLM write one eval.yaml per skill and agent of a plugin.

For each item the model gets the suite-generator system prompt and the item's file. Its
reply is validated (see :mod:`agentsproof.generator.validate`); an invalid reply is sent
back once with the validation error. A valid eval's cases are then reviewed
(:mod:`agentsproof.generator.cases`): fewer than five distinct cases, or a case copied
from the file, sends it back with the measurement, up to ``--check-retries`` times, and
fails the item after that. An eval with enough cases is then **checked**
(:mod:`agentsproof.generator.check`): a relevance judge rejects a task unrelated to the
item, and a short real run (``--check-trials`` per arm) finds evals that do not tell the
arms apart; both go back to the model with the evidence, up to ``--check-retries`` times.
An eval still weak after that is written with a ``# weak: <reason>`` header and listed.
Every rejected reply is kept under ``<out>/.rejected/`` with its reason.

Valid evals are written atomically to ``<out>/skills/<name>/eval.yaml`` (beside a copy of
the whole skill folder) or ``<out>/agents/<name>/eval.yaml`` (beside a copy of the agent
file); existing files there are overwritten, and the output says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentsproof.core.errors import InputError
from agentsproof.core.inputs import MAX_SOURCE_FILE_BYTES, display, read_text
from agentsproof.generator.cases import review_cases
from agentsproof.generator.check import (
    CheckOutcome,
    check_relevance,
    evidence_request,
    relevance_feedback,
    run_check,
)
from agentsproof.generator.files import copy_item_files, save_rejected, write_seeds
from agentsproof.generator.plugin import Plugin, PluginItem
from agentsproof.generator.prompt import cases_feedback, correction_request, item_request
from agentsproof.generator.validate import GeneratedEval, InvalidEval, build_eval, dump_eval, keep_tasks
from agentsproof.llm.base import ChatRequest, LLMClient, LLMError
from agentsproof.model.results import Usage
from agentsproof.model.skillfolder import skill_prompt

if TYPE_CHECKING:
    from agentsproof.targets.base import TargetDef

ATTEMPTS = 2
"""The first reply plus one retry with the validation error."""
TEMPERATURE = 0.2
CALL_TIMEOUT_S = 300.0
DEFAULT_CHECK_TRIALS = 2
DEFAULT_TRIALS = 3
"""``defaults.trials`` of a generated eval: trials per arm and case. With the five cases
every generated eval has, 3 make 15 per arm (the --reliable count), which settles a
clear-cut skill (pass chance 0.95 against 0.05) as "A (CI within A)" in about 97 % of runs;
1 per case settles it in about 62 % (tests/stats/test_generated_defaults.py)."""
DEFAULT_CHECK_RETRIES = 1


@dataclass
class ItemOutcome:
    """What eval-generate did for one skill or agent: the eval written or the error, calls, tokens and the check's figures."""

    item: PluginItem
    generated: GeneratedEval | None = None
    error: str | None = None
    """One line, ``field: message``, when the item failed."""
    first_error: str | None = None
    """The validation error of a first reply that was then corrected."""
    calls: int = 0
    """Calls that really ran: a reply came back (generation and relevance)."""
    failed_calls: int = 0
    """Calls that ended in a provider error (after its retries)."""
    usage: Usage = field(default_factory=Usage)
    weak: str | None = None
    """Why the written eval is not proven (it carries a ``# weak:`` header)."""
    proven: CheckOutcome | None = None
    """The check that the written eval passed."""
    check_trials: int = 0
    check_errored: int = 0
    check_tokens: int = 0
    rejected: list[tuple[Path | None, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when an eval was generated for the item."""
        return self.generated is not None


@dataclass
class GenerateSettings:
    """How ``agentsproof eval-generate`` runs: where to write, the model, trials, and whether to check the evals."""

    out: Path
    trials: int
    model: str
    dry_run: bool = False
    parallel: int = 1
    check: bool = True
    check_trials: int = DEFAULT_CHECK_TRIALS
    check_retries: int = DEFAULT_CHECK_RETRIES
    provider: str | None = None
    judge_model: str | None = None
    activation: bool = True
    """Also write each skill's activation suite (agentsproof.generator.activation)."""
    target: str | None = None
    """``--target``: write agent evals for this target (workspace seed, files/script graders)."""
    target_def: TargetDef | None = None
    """Its definition (the check run builds it)."""


def _write_item(item: PluginItem, gen: GeneratedEval, folder: Path) -> None:
    """The item's files and its eval's workspace seeds, into ``folder`` (the check's scratch copy)."""
    copy_item_files(item, folder)
    write_seeds(gen.seeds, folder)


def read_source(item: PluginItem) -> str:
    """The item's file as text (inputs rules: regular file, size cap, UTF-8); InvalidEval otherwise."""
    try:
        text = read_text(item.source, source=display(item.source), field=None, max_bytes=MAX_SOURCE_FILE_BYTES)
    except InputError as err:
        raise InvalidEval(item.source.name, err.message) from None
    if not text.strip():
        raise InvalidEval(item.source.name, "is empty; there is nothing to evaluate")
    return text


def provenance(plugin: Plugin, item: PluginItem, weak: str | None = None) -> str:
    """The comment header of a generated eval.yaml: where it came from, and a ``# weak:`` line when it is not proven."""
    source = plugin.source_label(item.source)
    head = f"# weak: {' '.join(weak.split())}\n" if weak else ""
    return head + (
        f"# Generated by agentsproof eval-generate from {source}.\n"
        "# Review the task and checks before trusting the grade; rerunning eval-generate overwrites this file.\n"
    )


class _Item:
    """One item's conversation with the model."""

    def __init__(self, client: LLMClient, settings: GenerateSettings, plugin: Plugin, outcome: ItemOutcome):
        self.client = client
        self.settings = settings
        self.plugin = plugin
        self.outcome = outcome
        self.messages: list[dict[str, str]] = []
        self.raw_source = ""
        """The item's file as written (the design rule and the copy measure read it)."""

    def reject(self, reply: str, reason: str) -> None:
        out = self.outcome
        path = None
        if not self.settings.dry_run:
            path = save_rejected(self.settings.out, out.item, len(out.rejected) + 1, reply, reason)
        out.rejected.append((path, reason))

    async def ask(self) -> str | None:
        req = ChatRequest(messages=list(self.messages), model=self.settings.model, temperature=TEMPERATURE, timeout=CALL_TIMEOUT_S)
        try:
            response = await self.client.complete(req)
        except LLMError as err:
            self.outcome.failed_calls += 1
            self.outcome.error = f"provider: {err}"
            return None
        self.outcome.calls += 1
        self.outcome.usage = self.outcome.usage + response.usage
        return response.text if isinstance(response.text, str) else ""

    async def valid_reply(self) -> tuple[GeneratedEval, str] | None:
        """A reply that validates (one retry with the error), or None with outcome.error set."""
        out = self.outcome
        for attempt in range(1, ATTEMPTS + 1):
            text = await self.ask()
            if text is None:
                return None
            try:
                return build_eval(text, out.item, self.settings.trials, provenance(self.plugin, out.item), self.raw_source, target=self.settings.target), text
            except InvalidEval as err:
                self.reject(text, f"invalid: {err}")
                if attempt == ATTEMPTS:
                    out.error = f"{err} (still invalid after {ATTEMPTS - 1} retry; nothing written)"
                    return None
                out.first_error = str(err)
                self.messages += [
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": correction_request(err.field, err.message)},
                ]
        raise AssertionError("unreachable")  # pragma: no cover

    def distinct_cases(self, gen: GeneratedEval, text: str, last: bool) -> GeneratedEval | bool | None:
        """The eval with its distinct cases; False: rejected and asked again; None: rejected for good."""
        out, s = self.outcome, self.settings
        review = review_cases(gen.config, out.item.source.name, self.raw_source)
        if review.problem is None:
            out.notes += review.notes
            config = keep_tasks(gen.config, review.keep)
            return gen if config is gen.config else GeneratedEval(config, provenance(self.plugin, out.item) + dump_eval(config), gen.seeds)
        reason = f"tasks: {review.problem}"
        self.reject(text, reason)
        if last:
            n = s.check_retries
            out.error = f"{reason} (after {n} regeneration{'s' if n != 1 else ''}; nothing written)"
            return None
        self.messages += [{"role": "assistant", "content": text}, {"role": "user", "content": cases_feedback(review.problem)}]
        return False

    async def relevant(self, source_text: str, gen: GeneratedEval, text: str, last: bool) -> bool | None:
        """True: go on; False: rejected and asked again; None: rejected for good."""
        out, s = self.outcome, self.settings
        verdict = await check_relevance(self.client, s.judge_model or s.model, out.item.kind, source_text, gen.text, CALL_TIMEOUT_S)
        if verdict.ran:
            out.calls += 1
            out.usage = out.usage + verdict.usage
        else:
            out.failed_calls += 1
        if verdict.relevant is None:
            out.notes.append(verdict.reason)
            return True
        if verdict.relevant:
            return True
        reason = f"unrelated to the {out.item.kind}: {verdict.reason}"
        self.reject(text, reason)
        if last:
            out.error = f"{reason} (after {s.check_retries} regeneration{'s' if s.check_retries != 1 else ''}; nothing written)"
            return None
        self.messages += [{"role": "assistant", "content": text}, {"role": "user", "content": relevance_feedback(verdict.reason)}]
        return False

    async def discriminates(self, gen: GeneratedEval) -> CheckOutcome:
        out, s = self.outcome, self.settings
        item = out.item
        result = await asyncio.to_thread(
            run_check,
            gen.text,
            lambda folder: _write_item(item, gen, folder),
            plugin=self.plugin.name,
            kind=item.kind,
            name=item.name,
            trials=s.check_trials,
            provider=s.provider,
            model=s.model,
            judge_model=s.judge_model,
            parallel=s.parallel,
            target_def=s.target_def,
        )
        out.check_trials += result.scored
        out.check_errored += result.errored
        out.check_tokens += result.tokens
        return result

    def finish(self, gen: GeneratedEval, weak: str | None) -> ItemOutcome:
        """The eval to write; a weak one gets its ``# weak:`` header."""
        out = self.outcome
        out.error = None
        out.weak = weak
        if weak:
            body = gen.text[len(provenance(self.plugin, out.item)) :]
            gen = GeneratedEval(gen.config, provenance(self.plugin, out.item, weak) + body, gen.seeds)
        out.generated = gen
        return out

    async def run(self, system_prompt: str) -> ItemOutcome:
        out, s = self.outcome, self.settings
        try:
            source_text = self.raw_source = read_source(out.item)
        except InvalidEval as err:
            out.error = str(err)
            return out
        if out.item.kind == "skill":  # the model sees the skill as a trial will: with its folder's files
            source_text = skill_prompt(source_text, out.item.source.parent).system_prompt
        self.messages = [
            {"role": "system", "content": system_prompt},
            {"role": "user", "content": item_request(out.item, source_text, s.trials, target=s.target)},
        ]
        rounds = s.check_retries + 1  # the case review regenerates even with --no-check
        fallback: tuple[GeneratedEval, str, float] | None = None
        """The best related-but-weak eval so far (by delta): written if no later reply does better."""
        for round_no in range(rounds):
            last = round_no == rounds - 1
            got = await self.valid_reply()
            reviewed = None if got is None else self.distinct_cases(got[0], got[1], last)
            if reviewed is False:
                continue
            rel = None
            if got is not None and isinstance(reviewed, GeneratedEval):
                rel = True if not s.check else await self.relevant(source_text, reviewed, got[1], last)
            if got is None or not isinstance(reviewed, GeneratedEval) or rel is None:
                if fallback is not None:  # a failed regeneration does not lose the weak eval before it
                    return self.finish(fallback[0], f"{fallback[1]} (the regeneration failed: {out.error})")
                return out
            gen, text = reviewed, got[1]
            if not s.check:
                return self.finish(gen, None)
            if rel is False:
                continue
            result = await self.discriminates(gen)
            if result.unusable:
                return self.finish(gen, f"not proven: the check could not score both arms ({result.unusable})")
            if not result.weak:
                out.proven = result
                return self.finish(gen, None)
            delta = result.delta if result.delta is not None else -1.0
            if fallback is None or delta >= fallback[2]:  # on a tie, the later reply (it saw the evidence)
                fallback = (gen, result.weak, delta)
            if last:
                if fallback[0] is not gen:
                    self.reject(text, f"weak: {result.weak} (an earlier reply that scored better was kept)\n{result.evidence}")
                n = s.check_retries
                return self.finish(fallback[0], f"{fallback[1]} (still weak after {n} regeneration{'s' if n != 1 else ''})")
            self.reject(text, f"weak: {result.weak}\n{result.evidence}")
            self.messages += [
                {"role": "assistant", "content": text},
                {"role": "user", "content": evidence_request(result.weak, result.evidence)},
            ]
        raise AssertionError("unreachable")  # pragma: no cover


async def generate_item(client: LLMClient, settings: GenerateSettings, system_prompt: str, plugin: Plugin, item: PluginItem) -> ItemOutcome:
    """Ask for the item's eval, validate and check it; never raises for the item's own problems."""
    outcome = await _Item(client, settings, plugin, ItemOutcome(item)).run(system_prompt)
    if settings.activation and outcome.ok and item.kind == "skill":
        await add_activation(client, settings, plugin, outcome)
    return outcome


def _description(item: PluginItem) -> str:
    from agentsproof.model.skillfolder import split_frontmatter

    try:
        meta, body = split_frontmatter(read_source(item))
    except InvalidEval:
        return ""
    text = meta.get("description") if isinstance(meta.get("description"), str) else ""
    if not text:
        text = next((ln.strip() for ln in body.splitlines() if ln.strip() and not ln.startswith("#")), "")
    return " ".join(str(text).split())[:1024]


async def add_activation(client: LLMClient, settings: GenerateSettings, plugin: Plugin, outcome: ItemOutcome) -> None:
    """Generate, check and append the skill's activation suite; a suite that stays unusable
    is left out with a note (the eval itself is still written)."""
    from agentsproof.generator.activation import dump_suite, generate_suite

    item = outcome.item
    siblings = [(o.name, _description(o)) for o in plugin.items if o.kind == "skill" and o.name != item.name]
    got = await generate_suite(client, settings.model, item.name, _description(item) or item.name, siblings, settings.check_retries, CALL_TIMEOUT_S)
    outcome.calls += got.calls
    outcome.usage = outcome.usage + got.usage
    gen = outcome.generated
    if got.config is None or gen is None:
        outcome.notes.append(f"activation suite left out: {got.problem}")
        return
    if got.dropped:
        outcome.notes.append(f"activation suite: {got.dropped} near-duplicate prompt(s) dropped")
    outcome.generated = GeneratedEval(gen.config.model_copy(update={"activation": got.config}), gen.text.rstrip("\n") + "\n" + dump_suite(got.config))


async def generate_all(
    client: LLMClient,
    settings: GenerateSettings,
    system_prompt: str,
    plugin: Plugin,
    on_done: Callable[[ItemOutcome], None],
) -> list[ItemOutcome]:
    """Generate every item, at most ``settings.parallel`` at once; ``on_done`` sees each as it finishes."""
    limit = max(1, settings.parallel)
    if client.max_concurrency:
        limit = min(limit, client.max_concurrency)
    gate = asyncio.Semaphore(limit)

    async def one(item: PluginItem) -> ItemOutcome:
        async with gate:
            outcome = await generate_item(client, settings, system_prompt, plugin, item)
        on_done(outcome)
        return outcome

    try:
        return list(await asyncio.gather(*(one(i) for i in plugin.items)))
    finally:
        await client.aclose()
