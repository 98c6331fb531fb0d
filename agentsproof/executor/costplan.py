"""``--plan``: what a run would cost, worked out before (instead of) any call; the lines
``render_plan`` returns are printed by the command.

Per item: trial calls (one per trial and arm for a chat target — 2 × trials per arm, 1 × for a
single-arm item such as ablate's part arms —, 2 more per trial for the plugin
arm's choose-then-answer; an agent target's own model calls are outside the harness and not
counted), judge calls per trial (one per
``llm_rubric``, one per assertion), pairwise calls (two per trial pair); a judge panel
(``judge_models``) multiplies both by its size. The retry budget
is the most a run can make: every judge call asked again up to ``JUDGE_ATTEMPTS`` times
and every call retried ``AGENTSPROOF_MAX_RETRIES`` times on 429/5xx. Tokens are
estimated — a prompt at about 4 characters a token, an answer at ``ANSWER_TOKENS``, a
verdict at ``VERDICT_TOKENS`` — and priced with the price table (``llm/prices.py``,
overridable with ``AGENTSPROOF_PRICES``); the embedded local model costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentsproof.model.items import EvalItem
from agentsproof.model.options import RunFlags
from agentsproof.model.results import Usage
from agentsproof.targets.registry import is_agent

ANSWER_TOKENS = 600
"""Estimated tokens of one trial answer."""
VERDICT_TOKENS = 150
"""Estimated tokens of one judge verdict."""
JUDGE_FRAME_TOKENS = 120
"""The judge's instructions around the task, answer and rubric."""


def _tok(text: str) -> int:
    return len(text) // 4 + 1


@dataclass
class Line:
    """One row of the plan: its calls and their estimated tokens."""

    calls: int = 0
    usage: Usage = field(default_factory=Usage)

    def add(self, calls: int, prompt: int, completion: int) -> None:
        """Count ``calls`` more calls of ``prompt`` prompt tokens and ``completion`` answer tokens each."""
        self.calls += calls
        self.usage = self.usage + Usage(prompt_tokens=prompt * calls, completion_tokens=completion * calls, total_tokens=(prompt + completion) * calls)


@dataclass
class Plan:
    """The estimated calls of a run: trial, judge and pairwise calls, and the agent trials (not counted in calls)."""

    trials: Line = field(default_factory=Line)
    judges: Line = field(default_factory=Line)
    pairwise: Line = field(default_factory=Line)
    agent_trials: int = 0


def _plan_items(items: Sequence[EvalItem]) -> Plan:
    from agentsproof.executor.pairwise import pairwise_spec
    from agentsproof.grading.registry import entry

    plan = Plan()
    for it in items:
        for i in range(it.trials):
            case = it.case_at(i)
            prompt = _tok(case.prompt)
            plugin = "plugin" in it.arms  # --arms ...,plugin: a third arm
            if not is_agent(it.target):
                plan.trials.add(1, _tok(it.system_prompt) + prompt, ANSWER_TOKENS)
                if "without" in it.arms:  # a single-arm item (--baseline none, ablate's arms) has no baseline call
                    plan.trials.add(1, _tok("You are a helpful assistant.") + prompt, ANSWER_TOKENS)
                if plugin:  # the simulated skill tool: a choosing call, then the answer with the skill
                    catalogue = sum(_tok(s.name) + 60 for s in it.plugin_skills)
                    plan.trials.add(1, catalogue + prompt, 20)
                    plan.trials.add(1, catalogue + _tok(it.system_prompt) + prompt, ANSWER_TOKENS)
            else:
                plan.agent_trials += len(it.arms)
            judge_in = JUDGE_FRAME_TOKENS + prompt + ANSWER_TOKENS
            panel = max(1, len(it.judge_models))  # eval.yaml judge_models: each verdict asked of every model
            for g in case.graders:
                texts = entry(g.type).judge_texts
                for text in texts(g) if texts is not None else ():
                    plan.judges.add(len(it.arms) * panel, judge_in + _tok(text), VERDICT_TOKENS)
            spec = pairwise_spec(case.graders)
            if spec is not None:
                plan.pairwise.add(2 * panel, JUDGE_FRAME_TOKENS + prompt + 2 * ANSWER_TOKENS + _tok(spec.criteria or ""), VERDICT_TOKENS)
    return plan


def _models(cfg: RunFlags) -> tuple[str, str, str]:
    """(provider, model, judge model) as the run would resolve them, without a call."""
    from agentsproof.core.errors import AgentsproofError
    from agentsproof.llm.registry import resolve_models, resolve_provider_name

    try:
        provider = resolve_provider_name(cfg.provider)
    except AgentsproofError:
        provider = cfg.provider or "auto (no provider configured)"
    try:
        choice = resolve_models(provider, cfg.model, cfg.judge_model)
        return provider, choice.model, choice.judge_model
    except AgentsproofError:
        model = cfg.model or "(no model given)"
        return provider, model, cfg.judge_model or model


def _price(provider: str, model: str) -> Any:
    from agentsproof.llm.prices import Price, load_prices, price_for
    from agentsproof.llm.registry import priced

    return price_for(model, load_prices()) if priced(provider) else Price.of(0.0, 0.0)


def _trials_words(items: Sequence[EvalItem]) -> str:
    """``15 trials per arm (3 per case)``; several items: ``30 trials per arm in all (15 per
    item, 3 per case)``, each part said only when every item shares it."""
    total = sum(i.trials for i in items)
    per_item = {i.trials for i in items}
    per_case = {i.trials / max(1, len(i.cases)) for i in items}
    parts = [f"{per_item.pop()} per item"] if len(items) > 1 and len(per_item) == 1 else []
    if len(per_case) == 1 and (n := per_case.pop()) == int(n) and any(len(i.cases) > 1 for i in items):
        parts.append(f"{int(n)} per case")
    return f"{total} trials per arm{' in all' if len(items) > 1 else ''}" + (f" ({', '.join(parts)})" if parts else "")


def render_plan(command: str, items: Sequence[EvalItem], cfg: RunFlags) -> list[str]:
    """The ``--plan`` lines for ``items`` run by ``command``: calls, tokens and estimated cost (USD) per kind of call, and the retry budget."""
    from agentsproof.grading.judge import JUDGE_ATTEMPTS
    from agentsproof.llm.prices import cost_usd
    from agentsproof.llm.retry import RetryPolicy

    provider, model, judge_model = _models(cfg)
    plan = _plan_items(items)
    retries = RetryPolicy.from_env().max_retries
    cases = sum(max(1, len(i.cases)) for i in items)
    out = [
        f"plan: agentsproof {command} · {len(items)} item{'s' if len(items) != 1 else ''} · {cases} case{'s' if cases != 1 else ''} · "
        f"{_trials_words(items)}{' (the --adaptive cap)' if cfg.adaptive else ''} · provider {provider}"
    ]
    rows = [("trials", model, plan.trials), ("judges", judge_model, plan.judges), ("pairwise judge", judge_model, plan.pairwise)]
    out.append(f"  {'calls made by':<15} {'model':<28} {'calls':>7} {'prompt tok':>11} {'output tok':>11} {'cost (est.)':>12}")
    total_cost: float | None = 0.0
    for label, m, line in rows:
        if not line.calls:
            continue
        price = _price(provider, m)
        cost = cost_usd(price, line.usage) if price is not None else None
        total_cost = None if cost is None or total_cost is None else total_cost + cost
        shown = "no price" if cost is None else f"${cost:,.4f}"
        out.append(f"  {label:<15} {m[:28]:<28} {line.calls:>7,} {line.usage.prompt_tokens:>11,} {line.usage.completion_tokens:>11,} {shown:>12}")
    calls = plan.trials.calls + plan.judges.calls + plan.pairwise.calls
    judge_calls = plan.judges.calls + plan.pairwise.calls
    most = (plan.trials.calls + judge_calls * JUDGE_ATTEMPTS) * (1 + retries)
    tokens = plan.trials.usage + plan.judges.usage + plan.pairwise.usage
    out.append(
        f"  total: {calls:,} LLM calls, about {tokens.total_tokens:,} tokens, "
        + ("cost unknown (a model has no price; add it with AGENTSPROOF_PRICES)" if total_cost is None else f"about ${total_cost:,.4f}")
    )
    out.append(
        f"  retry budget: at most {most:,} requests (each judge call re-asked up to {JUDGE_ATTEMPTS}x, each request retried up to {retries}x on 429/5xx)"
    )
    if plan.agent_trials:
        out.append(f"  agent trials: {plan.agent_trials:,} (their own model calls are made by the agent and are not counted here)")
    if cfg.trials_per_item is not None:
        forced = [i for i in items if len(i.cases) > cfg.trials_per_item]
        out.append(f"  trials: {cfg.trials_per_item} per arm per item, spread round robin over its cases")
        if forced:
            out.append(
                f"  note: {len(forced)} item{'s have' if len(forced) != 1 else ' has'} more cases than {cfg.trials_per_item} trials, "
                f"so {'they run' if len(forced) != 1 else 'it runs'} one trial per case: "
                + ", ".join(f"{i.name} ({len(i.cases)} cases)" for i in forced[:5])
                + (" …" if len(forced) > 5 else "")
            )
    limits = [f"--max-calls {cfg.max_calls}" if cfg.max_calls is not None else "", f"--max-cost {cfg.max_cost:g} USD" if cfg.max_cost is not None else ""]
    if any(limits):
        out.append("  limits: " + ", ".join(x for x in limits if x) + " (the run stops cleanly before crossing them)")
    out.append(f"  estimates: prompts at ~4 characters a token, answers ~{ANSWER_TOKENS} tokens, verdicts ~{VERDICT_TOKENS} tokens; nothing was called")
    return out
