"""``ablate``'s arms, run in rounds: one round at the cap, or, with ``--adaptive``, one per
planned look until every part's verdict is settled (:mod:`agentsproof.stats.ablation_looks`).

Each round is a run of every arm of the ablation (the eval's item, one item per part) on its
next trials: a part whose arm has stopped keeps its trial count, so its trials are all
reused and nothing of it is called again. The rounds share the report's journal (its
fingerprint does not depend on trial counts): round ``k + 1`` resumes round ``k``'s trials
from it, and ``--resume`` after an interrupt replays the rounds from the journal, deciding
the same stops on the same trials. No round writes a report: ``ablate`` writes one, once,
from the last (:func:`agentsproof.commands.ablate.run_ablation`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from agentsproof.core.errors import InputError
from agentsproof.executor.plan import RunPlan
from agentsproof.model.items import EvalItem
from agentsproof.model.options import RunFlags
from agentsproof.model.results import RunResult
from agentsproof.model.settings import RunSettings


@dataclass
class Rounds:
    """How the arms ran: the last round's result, every part's trial count and why it stopped."""

    run: RunResult | None
    looks: list[int]
    cap: int
    trials: dict[str, int] = field(default_factory=dict)
    """Part id → trials per arm its arm ran."""
    stops: dict[str, str] = field(default_factory=dict)
    """Part id → why its arm stopped: needed, removable, unclear (for good), cap, or interrupted."""
    targets: dict[str, Path] = field(default_factory=dict)
    calls: int = 0
    """LLM calls the rounds made (``--max-calls`` counts them across the rounds)."""
    spent: float = 0.0
    """Money the rounds spent (``--max-cost`` counts it across the rounds)."""


def schedule(cap: int, adaptive: bool) -> list[int]:
    """The looks (trials per arm): the delta's planned looks with ``--adaptive``, else the cap alone."""
    if not adaptive:
        return [cap]
    from agentsproof.stats.adaptive import planned_looks

    return planned_looks(cap)


def arms_at(whole: EvalItem, parts: list[tuple[str, EvalItem]], trials: dict[str, int]) -> list[EvalItem]:
    """The round's items: each part's arm at its trial count, the whole skill and no skill at the largest."""
    top = max(trials.values())
    return [dataclasses.replace(whole, trials=top), *[dataclasses.replace(it, trials=trials[pid]) for pid, it in parts]]


def run_rounds(plugin: str, whole: EvalItem, parts: list[tuple[str, EvalItem, int]], cfg: RunFlags, settings: RunSettings, stem: str, margin: float) -> Rounds:
    """Every arm, round after round, until each part's arm has stopped (``parts``: id, its
    item, its tokens); the last round holds every trial."""
    from agentsproof.commands.plan import plan_run
    from agentsproof.stats.ablation_looks import cases_upto, effects, settled

    if cfg.target and "," in cfg.target:
        raise InputError("command line", "--target", "ablate runs one target at a time; give one")
    cap = whole.trials
    looks = schedule(cap, cfg.adaptive)
    # one plan for every round: targets.yaml resolved and the reports checked once, before the
    # first round; each round runs it with its own trial counts and what is left of the budget
    base = plan_run("eval", plugin, [whole, *[it for _p, it, _t in parts]], cfg.replace(adaptive=False), stem, settings)
    arms = [(pid, it) for (pid, _it, _t), it in zip(parts, base.items[1:], strict=True)]
    done = Rounds(None, looks, cap, targets=dict(base.reports))
    trials = {pid: 0 for pid, _it, _t in parts}
    open_parts = [pid for pid, _it, _t in parts]
    resume = cfg.resume
    for n in looks:
        for pid in open_parts:
            trials[pid] = n
        items = arms_at(base.items[0], arms, trials)
        left = remaining(cfg, done)
        if done.run is not None and left is None:
            done.run.incomplete, done.run.incomplete_reason = True, spent_words(cfg, done)
            break
        run = _round(base, items, (left or cfg).replace(resume=resume))
        done.run, resume = run, True
        budget = run.settings.get("budget") or {}
        done.calls += int(budget.get("calls") or 0)
        done.spent += float(budget.get("spent_usd") or 0.0)
        if run.incomplete and budget.get("stopped") and done.calls != int(budget.get("calls") or 0):
            run.incomplete_reason = spent_words(cfg, done)  # the ablation's budget, not this round's share of it
        if run.incomplete or n == looks[-1]:
            break
        by_id = {it.id: it for it in run.items}
        whole_res = by_id[whole.id]
        spec = {
            "whole_item": whole.id,
            "looks": looks,
            "margin": margin,
            "parts": [{"id": pid, "item": it.id, "trials": trials[pid], "tokens": t} for pid, it, t in parts],
        }
        for (pid, it, _t), e in zip(parts, effects(spec, by_id), strict=True):
            if pid in open_parts:
                why = settled(e, cases_upto(whole_res, by_id[it.id].with_arm, whole_res.with_arm, n), n, cap, len(looks), margin)
                if why is not None:
                    done.stops[pid] = why
                    open_parts.remove(pid)
        if not open_parts:
            break
    for pid in open_parts:
        done.stops.setdefault(pid, "interrupted" if done.run is not None and done.run.incomplete else "cap")
    done.trials = trials
    return done


def remaining(cfg: RunFlags, done: Rounds) -> RunFlags | None:
    """``cfg`` with what is left of ``--max-calls`` / ``--max-cost`` after the rounds so far
    (one budget for the whole ablation); None when it is spent."""
    calls = None if cfg.max_calls is None else cfg.max_calls - done.calls
    cost = None if cfg.max_cost is None else cfg.max_cost - done.spent
    if (calls is not None and calls <= 0) or (cost is not None and cost <= 0):
        return None
    return cfg.replace(max_calls=calls, max_cost=cost)


def spent_words(cfg: RunFlags, done: Rounds) -> str:
    """Why the rounds stopped on the budget."""
    if cfg.max_calls is not None and done.calls >= cfg.max_calls:
        return f"stopped before crossing --max-calls {cfg.max_calls}: {done.calls} calls made over the ablation's rounds"
    return f"stopped before crossing --max-cost {cfg.max_cost}: ${done.spent:.4f} spent over the ablation's rounds"


def _round(base: RunPlan, items: list[EvalItem], cfg: RunFlags) -> RunResult:
    """One round: the rounds' plan run with this round's items and options (the trials the
    journal holds reused), no report written."""
    from agentsproof.commands.progress import Progress, more_allowed, run_total
    from agentsproof.executor.session import run_plan
    from agentsproof.report.files import ReportLock

    progress = Progress(run_total(items), parallel=cfg.parallel, more_allowed=more_allowed(cfg.provider), capped=True)
    plan = dataclasses.replace(base, items=tuple(items), run=cfg.replace(adaptive=False), spill=False, on_trial=progress.trial, on_item=progress.item)
    with ReportLock(base.reports["json"]), progress:
        return run_plan(plan)
