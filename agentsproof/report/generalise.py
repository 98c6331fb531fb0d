"""The report's view of cases, verdicts, corrections, pairwise preference, tokens and cost.

``generalise_view`` adds one ``gen`` entry to the template context (see ``report.build_view``):
the forest plot, per item (by anchor) its case rows and charts, and the run's tokens and
cost per arm. Templates: ``_generalise.html.j2`` and ``_generalise.md.j2``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentsproof.model.results import ArmResult, RunResult, Usage
from agentsproof.report.charts import ForestRow, case_dots, forest_plot, preference_bar

if TYPE_CHECKING:
    from agentsproof.llm.prices import Price


@dataclass
class Spend:
    """Tokens and cost of one arm (or of everything): the trials' own calls and their judges'."""

    calls: int = 0
    """Trials (or pairwise verdicts) that made a call now."""
    cached: int = 0
    """Trials answered from the response cache (no call)."""
    trial_tokens: int = 0
    judge_tokens: int = 0
    cost_usd: float | None = None

    @property
    def tokens(self) -> int:
        """Trial and judge tokens together."""
        return self.trial_tokens + self.judge_tokens

    def add(self, other: Spend) -> None:
        """Add ``other``'s calls, tokens and cost to this one (a cost stays None until one is known)."""
        self.calls += other.calls
        self.cached += other.cached
        self.trial_tokens += other.trial_tokens
        self.judge_tokens += other.judge_tokens
        if other.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + other.cost_usd


@dataclass
class ItemGen:
    """What the generalisation section shows of one item: its verdict, per-case and pairwise figures and charts, its spend by arm."""

    verdict: str | None
    reasons: list[str]
    cases: dict[str, Any] | None
    case_svg: Any = None
    pairwise: dict[str, Any] | None = None
    pairwise_svg: Any = None
    spend: dict[str, Spend] = field(default_factory=dict)


def _prices(run: RunResult) -> tuple[Price | None, Price | None]:
    from agentsproof.core.errors import InputError
    from agentsproof.llm.prices import load_prices, price_for

    try:
        table = load_prices()
    except InputError:
        return None, None
    return price_for(run.model, table), price_for(run.judge_model, table)


def _cost(price: Price | None, usage: Usage) -> float | None:
    from agentsproof.llm.prices import cost_usd

    return cost_usd(price, usage) if price is not None else None


def _arm_spend(arm: ArmResult, price: Price | None, judge_price: Price | None) -> Spend:
    sp = Spend()
    for t in arm.trials:
        if t.cached:
            sp.cached += 1
        elif t.usage.total_tokens or t.status == "scored" or t.response:
            sp.calls += 1
        sp.trial_tokens += t.usage.total_tokens
        if t.cached:  # no call, no cost — but an unpriced model's cost stays unknown, never $0
            cost: float | None = 0.0 if price is not None else None
        elif t.cost_usd is not None:
            cost = t.cost_usd
        else:  # no tokens reported (an agent that says none) is an unknown cost, never $0
            cost = _cost(price, t.usage) if t.usage.total_tokens else None
        if cost is not None:
            sp.cost_usd = (sp.cost_usd or 0.0) + cost
        for g in t.graders:
            if g.usage.total_tokens:
                sp.judge_tokens += g.usage.total_tokens
                jc = _cost(judge_price, g.usage)
                if jc is not None:
                    sp.cost_usd = (sp.cost_usd or 0.0) + jc
    return sp


def _pairwise_spend(pw: dict[str, Any] | None, judge_price: Price | None) -> Spend:
    sp = Spend()
    if not pw:
        return sp
    usage = Usage.model_validate(pw.get("usage") or {})
    sp.calls = int(pw.get("calls") or 0)
    sp.judge_tokens = usage.total_tokens
    sp.cost_usd = _cost(judge_price, usage)
    return sp


def generalise_view(run: RunResult, views: Sequence[Any]) -> dict[str, Any]:
    """The generalisation section's context: per item its verdict, cases and spend, the forest rows and the totals."""
    price, judge_price = _prices(run)
    items: dict[str, ItemGen] = {}
    rows: list[ForestRow] = []
    totals = {"with": Spend(), "without": Spend(), "pairwise": Spend()}
    underpowered = 0
    for iv in views:
        it, s = iv.item, iv.s
        cases = s.get("cases")
        gen = ItemGen(verdict=s.get("verdict"), reasons=list(s.get("verdict_reasons") or []), cases=cases)
        if gen.verdict == "underpowered":
            underpowered += 1
        ci = s.get("delta_ci") or [None, None]
        if cases and cases.get("count", 0) > 1:
            gen.case_svg = case_dots([(r["name"], r["delta"]) for r in cases["rows"]], it.delta, ci[0], ci[1])
        pw = s.get("pairwise")
        if pw:
            gen.pairwise = pw
            gen.pairwise_svg = preference_bar(
                pw.get("with_preferred", 0), pw.get("ties", 0), pw.get("without_preferred", 0), pw.get("rate"), *(pw.get("rate_ci") or [None, None])
            )
        gen.spend = {
            "with": _arm_spend(it.with_arm, price, judge_price),
            "without": _arm_spend(it.without_arm, price, judge_price),
            "pairwise": _pairwise_spend(pw, judge_price),
        }
        for k in totals:
            totals[k].add(gen.spend[k])
        items[iv.anchor] = gen
        note = " ".join(x for x in (it.grade or "—", s.get("grade_mark") or "", "· underpowered" if gen.verdict == "underpowered" else "") if x)
        rows.append(ForestRow(it.name, it.delta, ci[0], ci[1], note, f"#{iv.anchor}"))
    total = Spend()
    for sp in totals.values():
        total.add(sp)
    return {
        "items": items,
        "forest": forest_plot(rows) if rows else None,
        "underpowered": underpowered,
        "correction": run.settings.get("p_adjust"),
        "spend": totals,
        "total": total,
        "limits": {k: run.settings[k] for k in ("max_cost", "max_calls") if run.settings.get(k) is not None},
        "cache": cache_line(run),
    }


def cache_line(run: RunResult) -> str | None:
    """One sentence on where the run's answers came from: the response cache and the journal,
    in the numbers the JSON holds (``settings.cache``, ``settings.reused_trials``)."""
    cache = run.settings.get("cache") if isinstance(run.settings.get("cache"), dict) else None
    reused = int(run.settings.get("reused_trials") or 0)
    parts = []
    if cache is not None and cache.get("cached_trials"):
        parts.append(f"{cache['cached_trials']} trial{'s' if cache['cached_trials'] != 1 else ''} from the cache")
    if reused:
        parts.append(f"{reused} trial{'s' if reused != 1 else ''} from the journal (--resume)")
    if not parts:
        return None
    if cache is not None:
        calls, hits = int(cache.get("calls") or 0), int(cache.get("hits") or 0)
        parts.append(f"{calls} call{'s' if calls != 1 else ''} made ({hits} answered from the cache, trials and judges)")
    return ", ".join(parts)
