"""The report's view model: what the Markdown and HTML templates show of a run.

``build_view(run)`` is the context both templates render; the JSON report is the
``RunResult`` itself.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentsproof.model.results import ArmResult, ItemResult, RunResult, TrialResult
from agentsproof.stats.checks import check_counts
from agentsproof.stats.item import EMPTY_ARM_STATS, EMPTY_ITEM_STATS

if TYPE_CHECKING:
    from agentsproof.llm.prices import Price

_SECRET_KEY = re.compile(r"(api[_-]?key|secret|password|passwd|authorization|bearer|^key$|_key$|token$)", re.I)
_KIND_TITLES = {"skill": "Skills", "agent": "Agents", "case": "Cases"}
_ARM_LABELS = {"skill": "With skill", "agent": "With agent", "baseline": "Baseline"}


@dataclass
class LogLine:
    """One entry of a trial's log as the report shows it (``t`` in seconds since the trial started)."""

    t: float
    role: str
    text: str
    ref: str | None = None
    """When set, the text is shown elsewhere in the report; this says where."""


@dataclass
class TrialView:
    """A trial as the report shows it: its log lines, and whether its response is shown."""

    trial: TrialResult
    log: list[LogLine]
    show_response: bool


@dataclass
class ArmView:
    """An arm as the report shows it: label, system prompt, latency (seconds), mean tokens, cost (USD) and its trials."""

    arm: ArmResult
    label: str
    system_prompt: str | None
    latency_median: float | None
    latency_max: float | None
    prompt_tokens_mean: float | None
    completion_tokens_mean: float | None
    cost_usd: float | None
    trials: list[TrialView]
    cache_saving_usd: float | None = None
    """What prompt caching saved in this arm (see agentsproof.llm.prices); None: no cache use or no price."""


@dataclass
class CheckRow:
    """One check of an item in the report's checks table: passes out of scored trials per arm, flaky, non-discriminating."""

    kind: str
    target: str
    with_passed: int | None
    with_total: int | None
    base_passed: int | None
    base_total: int | None
    flaky: bool = False
    non_discriminating: bool = False
    evidence: str = ""
    """Evidence from one failing with-arm trial, when there is one."""


@dataclass
class ItemView:
    """An item as the report shows it: its result label, normalized stats, arms and checks."""

    item: ItemResult
    anchor: str
    result: str
    s: dict[str, Any]
    has_stats: bool
    grade_note: str
    arms: list[ArmView]
    checks: list[CheckRow]
    errored_trials: list[TrialResult] = field(default_factory=list)

    @property
    def nothing_to_check(self) -> bool:
        """True when no trial of the item had a grader (a case with nothing to check: it scores 1.0)."""
        trials = [t for av in self.arms for t in av.arm.trials if t.status == "scored"]
        return bool(trials) and not any(t.graders for t in trials)

    @property
    def side_by_side(self) -> list[tuple[int, str | None, str | None]]:
        """A case with nothing to check: (trial index, with-arm answer, without-arm answer), the arms' outputs side by side
        (None: that arm has no such trial, or it errored); empty for an item with checks."""
        if not self.nothing_to_check:
            return []
        by_arm = [{t.index: (t.response if t.status == "scored" else None) for t in av.arm.trials} for av in self.arms[:2]]
        indices = sorted({i for arm in by_arm for i in arm})
        return [(i, by_arm[0].get(i), by_arm[1].get(i) if len(by_arm) > 1 else None) for i in indices]

    @property
    def failing_checks(self) -> list[CheckRow]:
        """The checks that failed in at least one scored with-arm trial."""
        return [c for c in self.checks if c.with_total and (c.with_passed or 0) < c.with_total]

    @property
    def delta_basis(self) -> str | None:
        """A delta paired by case whose paired means are not the arm means: what it is a difference of."""
        from agentsproof.stats.item import delta_basis_line

        return delta_basis_line(self.item.stats, self.item.delta)


@dataclass
class Section:
    """The report's items of one kind (skills, agents or cases), with its title and summary."""

    kind: str
    title: str
    summary: Any
    items: list[ItemView]


def normalize_stats(raw: dict[str, Any] | None) -> dict[str, Any]:
    """Every key of the stats contract present, so templates need no existence checks."""
    raw = raw or {}
    s = {**EMPTY_ITEM_STATS, **raw}
    for arm in ("with", "without"):
        s[arm] = {**EMPTY_ARM_STATS, **(raw.get(arm) or {})}
    s["flaky_checks"] = list(raw.get("flaky_checks") or [])
    s["non_discriminating_checks"] = list(raw.get("non_discriminating_checks") or [])
    return s


def item_result_label(item: ItemResult) -> str:
    """The item's result as printed: PASS, FAIL, UNPROVEN (passed on too few trials), ERROR or NOT RUN."""
    if item.not_run:
        return "NOT RUN"
    if item.status == "errored":
        return "ERROR"
    if item.passed and (item.stats or {}).get("enough_data") is False:
        return "UNPROVEN"  # it reached its threshold, on too few trials to say anything (never a green PASS)
    return "PASS" if item.passed else "FAIL"


def _run_price(run: RunResult) -> Any:
    """The price row of the run's model, when any trial used a prompt cache (None otherwise or unknown)."""
    if not any(t.usage.cache_read_tokens or t.usage.cache_write_tokens for it in run.items for a in (it.with_arm, it.without_arm) for t in a.trials):
        return None
    from agentsproof.core.errors import InputError
    from agentsproof.llm.prices import load_prices, price_for

    try:
        return price_for(run.model, load_prices())
    except InputError:  # a prices file broken since the run: the saving is just not shown
        return None


def _judge_cost(run: RunResult, trials: Iterable[TrialResult]) -> float | None:
    """The judge calls' cost at the judge model's price (reports only; None when unpriced or no judge call)."""
    usage = [g.usage for t in trials for g in t.graders if g.usage.total_tokens]
    if not usage:
        return None
    from agentsproof.core.errors import InputError
    from agentsproof.llm.prices import cost_usd, load_prices, price_for

    try:
        price = price_for(run.judge_model, load_prices())
    except InputError:
        return None
    costs = [cost_usd(price, u) for u in usage]
    return sum(c for c in costs if c is not None) if price is not None else None


def _trial_view(t: TrialResult, system: str | None) -> TrialView:
    lines: list[LogLine] = []
    for e in t.log:
        ref = None
        if e.role == "system" and system is not None and e.text == system:
            ref = f"system prompt of this arm ({len(e.text):,} chars), shown above the trials"
        elif e.role == "assistant" and e.text == t.response and t.response:
            ref = "the response, shown above"
        lines.append(LogLine(e.t, e.role, e.text, ref))
    return TrialView(t, lines, show_response=t.status == "scored" or bool(t.response))


def _arm_view(arm: ArmResult, price: Price | None = None) -> ArmView:
    system = next((e.text for t in arm.trials for e in t.log if e.role == "system"), None)
    # trials spilled to the journal (agentsproof.executor.spill) are not a list: each view is made when rendered
    trials: Any = [_trial_view(t, system) for t in arm.trials] if isinstance(arm.trials, list) else LazyViews(arm.trials, lambda t: _trial_view(t, system))
    scored = [t for t in arm.trials if t.status == "scored"]
    lat = [t.latency_s for t in scored]
    costs = [t.cost_usd for t in arm.trials if t.cost_usd is not None]
    return ArmView(
        arm=arm,
        label=_ARM_LABELS.get(arm.system_prompt_kind, arm.system_prompt_kind.capitalize() or arm.arm),
        system_prompt=system,
        latency_median=statistics.median(lat) if lat else None,
        latency_max=max(lat) if lat else None,
        prompt_tokens_mean=sum(t.usage.prompt_tokens for t in scored) / len(scored) if scored else None,
        completion_tokens_mean=sum(t.usage.completion_tokens for t in scored) / len(scored) if scored else None,
        cost_usd=sum(costs) if costs else None,
        trials=trials,
        cache_saving_usd=_cache_saving(arm, price),
    )


def _cache_saving(arm: ArmResult, price: Price | None) -> float | None:
    from agentsproof.llm.prices import cache_saving_usd

    used = arm.total_usage.cache_read_tokens or arm.total_usage.cache_write_tokens
    return cache_saving_usd(price, arm.total_usage) if used and price is not None else None


def _first_failure_evidence(arm: ArmResult) -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    for t in arm.trials:
        if t.status != "scored":
            continue
        for g in t.graders:
            for c in g.checks:
                if not c.passed and (c.kind, c.target) not in out:
                    out[(c.kind, c.target)] = c.evidence
    return out


def _check_rows(item: ItemResult, s: dict[str, Any]) -> list[CheckRow]:
    w = check_counts(item.with_arm)
    b = check_counts(item.without_arm)
    evidence = _first_failure_evidence(item.with_arm)
    flaky = {(f.get("kind"), f.get("target")) for f in s["flaky_checks"] if f.get("arm", "with") == "with"}
    nondisc = {(f.get("kind"), f.get("target")) for f in s["non_discriminating_checks"]}
    rows = []
    for key in list(w) + [k for k in b if k not in w]:
        wp, wt = w.get(key, (None, None))
        bp, bt = b.get(key, (None, None))
        rows.append(CheckRow(key[0], key[1], wp, wt, bp, bt, key in flaky, key in nondisc, evidence.get(key, "")))
    return rows


def _anchor(item: ItemResult, index: int, seen: set[str]) -> str:
    base = "item-" + (re.sub(r"[^A-Za-z0-9_-]+", "-", item.id).strip("-") or str(index))
    anchor = base if base not in seen else f"{base}-{index}"
    seen.add(anchor)
    return anchor


_CACHE_WORDS = {"cached_trials": "trials from the cache", "hits": "calls answered from the cache", "calls": "calls made"}


def setting_text(value: Any) -> Any:
    """A run setting as a reader sees it: a mapping as ``key value`` pairs (the cache's in
    words), a list joined; scalars as they are."""
    if isinstance(value, dict):
        if set(value) <= set(_CACHE_WORDS):
            return ", ".join(f"{value[k]} {_CACHE_WORDS[k]}" for k in _CACHE_WORDS if k in value)
        return "; ".join(f"{k}: {setting_text(v)}" for k, v in value.items()) or "—"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(setting_text(v)) for v in value) or "—"
    return value


def build_view(run: RunResult) -> dict[str, Any]:
    """Everything the templates need, computed in one linear pass over the run."""
    seen: set[str] = set()
    views: list[ItemView] = []
    price = _run_price(run)
    for i, it in enumerate(run.items):
        s = normalize_stats(it.stats)
        label = s["grade_label"] or ""
        note = label[len(it.grade) :].strip() if it.grade and label.startswith(it.grade) else label
        views.append(
            ItemView(
                item=it,
                anchor=_anchor(it, i, seen),
                result=item_result_label(it),
                s=s,
                has_stats=bool(it.stats),
                grade_note=note,
                arms=[_arm_view(it.with_arm, price), _arm_view(it.without_arm, price)],
                checks=_check_rows(it, s),
                errored_trials=[
                    t for t in it.with_arm.trials + it.without_arm.trials + (it.plugin_arm.trials if it.plugin_arm else []) if t.status == "errored"
                ],
            )
        )
    sections = []
    for kind in ("skill", "agent", "case"):
        members = [v for v in views if v.item.kind == kind]
        if members:
            summary = {"skill": run.skills, "agent": run.agents, "case": run.cases}[kind]
            sections.append(Section(kind, _KIND_TITLES[kind], summary, members))
    ordered = [v for sec in sections for v in sec.items]  # drill-down follows the summaries
    settings = {k: ("(redacted)" if _SECRET_KEY.search(str(k)) else setting_text(v)) for k, v in run.settings.items()}
    from agentsproof.report.generalise import generalise_view
    from agentsproof.report.identity import run_identity
    from agentsproof.report.matrix import agent_matrix

    arms = [a.arm for v in views for a in v.arms]
    costs, cache_read, errored = run_totals(arms)
    from agentsproof.report.manifest import manifest_view

    return {
        "manifest": manifest_view(run.manifest),
        "identity": run_identity(run),
        "single_arm": run.settings.get("baseline") == "none",
        "flaky_items": [it for it in run.items if it.stats.get("flaky")],
        "gen": generalise_view(run, views),
        "run_cost_usd": sum(costs) if costs else None,
        "judge_cost_usd": _judge_cost(run, (t for a in arms for t in a.trials)) if costs else None,
        "run_cache_read_tokens": cache_read,
        "run": run,
        "items": ordered,
        "sections": sections,
        "settings": settings,
        "trial_count": sum(len(a.trials) for a in arms),
        "errored_trial_count": errored,
        "plugin_collisions": _plugin_collisions(run),
        "matrix": agent_matrix(run.items, {v.item.id: v.anchor for v in views}),
    }


def _plugin_collisions(run: RunResult) -> list[dict[str, Any]]:
    """The colliding pairs the plugin arms saw (--arms baseline,skill,plugin)."""
    if not any(getattr(it, "plugin_arm", None) for it in run.items):
        return []
    from agentsproof.report.activation import plugin_arm_collisions

    return plugin_arm_collisions(run.items)


def run_totals(arms: list[Any]) -> tuple[list[float], int, int]:
    """(costs, prompt-cache read tokens, errored trials) over the run, without a list of
    every trial: arms spilled to the journal (a large run) give their own totals."""
    costs: list[float] = []
    cache_read = errored = 0
    for a in arms:
        if isinstance(a.trials, list):
            costs += [t.cost_usd for t in a.trials if t.cost_usd is not None]
            cache_read += sum(t.usage.cache_read_tokens for t in a.trials)
            errored += sum(1 for t in a.trials if t.status == "errored")
        else:
            costs += [a.total_cost_usd] if a.total_cost_usd is not None else []
            cache_read += a.total_usage.cache_read_tokens
            errored += len(a.trials) - a.scored
    return costs, cache_read, errored


class LazyViews:
    """An arm's trial views, made one at a time when iterated (spilled arms)."""

    __slots__ = ("trials", "make")

    def __init__(self, trials: Collection[TrialResult], make: Callable[[TrialResult], Any]):
        self.trials = trials
        self.make = make

    def __iter__(self) -> Iterator[Any]:
        for t in self.trials:
            yield self.make(t)

    def __len__(self) -> int:
        return len(self.trials)

    def __bool__(self) -> bool:
        return len(self.trials) > 0
