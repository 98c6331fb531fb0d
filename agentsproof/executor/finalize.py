"""From finished trials to graded items and a run summary."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentsproof.core.version import __version__
from agentsproof.executor.suggestions import suggestions_for
from agentsproof.model.results import ItemResult, RunResult, Summary, compute_grade
from agentsproof.model.settings import RunSettings

if TYPE_CHECKING:  # the runner (graders, providers) is not loaded to summarise: `agentsproof verify` needs only _summary
    from agentsproof.executor.runner import ItemRun


def finalize_item(run: ItemRun, ci_rule: str = "point") -> ItemResult:
    """The item's result from its finished arms: statistics, grade and suggestions (``ci_rule``: what ``--ci`` fails on)."""
    it = run.item
    w, wo = run.with_arm, run.without_arm
    res = ItemResult(
        id=it.id,
        name=it.name,
        kind=it.kind,
        eval_path=it.eval_path,
        source_path=it.source_path,
        source_sha256=it.source_sha256,
        task_name=it.task_name,
        instruction=it.prompt,
        instructions=[{"name": c.name, "instruction": c.prompt} for c in it.cases] if len(it.cases) > 1 else None,
        threshold=it.threshold,
        trials_requested=it.trials,
        target=it.target,
        model=it.model,
        with_arm=w,
        without_arm=wo,
        warnings=list(it.warnings),
    )
    if not w.trials and not wo.trials and run.incomplete:
        res.status = "incomplete"
        res.status_reason = "not run: the run stopped before any trial of this item started"
        res.passed = False
    elif tuple(it.arms) == ("with",):  # --baseline none: no grade (agentsproof.stats.single_arm)
        from agentsproof.core.units import tidy
        from agentsproof.stats.single_arm import grade_single_arm

        graded = grade_single_arm(res, run.incomplete)
        graded.stats = tidy(graded.stats)  # type: ignore[assignment]
        return graded
    elif w.mean_score is None or wo.mean_score is None:
        res.status = "errored"
        empty = "with-skill" if w.mean_score is None else "baseline"
        # The cause is in the arm that has no scored trial; its first error is the real one
        # (later ones are often its consequences, and the other arm's are beside the point).
        arm = w if w.mean_score is None else wo
        first = next((t.error for t in arm.trials if t.error), None)
        res.status_reason = f"no scored trial in the {empty} arm" + (f"; first error: {first}" if first else "")
        res.pass_rate = w.pass_rate
        res.passed = False
    else:
        from agentsproof.stats.cases import item_delta

        res.delta = item_delta(res)  # the mean of the per-case deltas; one case: with − without
        res.grade = compute_grade(res.delta) if res.delta is not None else None
        res.pass_rate = w.pass_rate
        res.passed = (res.pass_rate or 0.0) >= res.threshold - 1e-9 and res.grade != "F"
        if run.incomplete:
            res.status = "incomplete"
            res.status_reason = f"{w.scored + w.errored} of {it.trials} trials per arm ran before the run stopped"
    if run.plugin_arm is not None:  # --arms ...,plugin: the skill among its siblings
        from agentsproof.stats.interference import interference

        res.plugin_arm = run.plugin_arm
        res.interference = interference(res, it.skill.name if it.skill else None)
    from agentsproof.core.units import tidy
    from agentsproof.stats import item_stats

    level = run.adaptive_stop["level"] if run.adaptive_stop and run.adaptive_stop.get("level") else 0.95
    res.stats = tidy(item_stats(res, level))  # type: ignore[assignment]
    if res.delta is not None:
        res.delta = tidy(res.delta)  # type: ignore[assignment]
    if res.not_run:  # nothing ran: not a verdict on its power
        res.stats["verdict"], res.stats["verdict_reasons"] = "not run", ["the run stopped before any trial of this item started"]
    if run.adaptive_stop is not None:
        res.stats["adaptive_stop"] = run.adaptive_stop
    if ci_rule == "interval" and res.status != "errored" and not res.not_run and res.grade is not None:
        from agentsproof.stats.item import interval_rule_passes

        res.passed = interval_rule_passes(res.stats, res.threshold)  # the same stats the report prints
    if run.judge_panel is not None:
        res.stats["judge_panel"] = run.judge_panel
    res.suggestions = suggestions_for(res)
    if res.kind == "case":  # the spec's assertion_results + summary (agentsproof.stats.assertions)
        from agentsproof.stats.assertions import assertion_results

        res.assertion_results, res.summary = assertion_results(res)
    return res


def _summary(items: Sequence[ItemResult]) -> Summary:
    s = Summary(total=len(items))
    deltas = []
    for it in items:
        if it.not_run:
            s.not_run += 1
        elif it.status == "errored":
            s.errored += 1
        elif it.passed:
            s.passed += 1
        else:
            s.failed += 1
        if it.delta is not None:
            deltas.append(it.delta)
        if it.grade:
            s.grades[it.grade] = s.grades.get(it.grade, 0) + 1
    s.avg_delta = sum(deltas) / len(deltas) if deltas else None
    return s


def build_run(
    command: str,
    plugin: str,
    items: Sequence[ItemResult],
    *,
    provider: str,
    model: str,
    judge_model: str,
    settings: RunSettings | Mapping[str, Any],
    incomplete_reason: str | None = None,
    duration_s: float = 0.0,
) -> RunResult:
    """The graded run. ``settings``: what it records (a dict is read as a saved report's,
    :meth:`RunSettings.from_dict`); eval-all's p-values are adjusted (holm unless ``p_adjust``)."""
    if not isinstance(settings, RunSettings):
        settings = RunSettings.from_dict(settings)
    if command == "eval-all":
        from agentsproof.stats.multiplicity import apply_to_items

        if not settings.p_adjust:
            settings = dataclasses.replace(settings, p_adjust="holm")
        apply_to_items(items, settings.p_adjust or "holm")
    run = RunResult(
        tool_version=__version__,
        command=command,
        plugin=plugin,
        provider=provider,
        model=model,
        judge_model=judge_model,
        settings=settings.to_dict(),
        items=list(items),
        duration_s=duration_s,
    )
    run.skills = _summary([i for i in items if i.kind == "skill"])
    run.agents = _summary([i for i in items if i.kind == "agent"])
    run.cases = _summary([i for i in items if i.kind == "case"])
    run.overall = _summary(items)
    if incomplete_reason:
        run.incomplete = True
        run.incomplete_reason = incomplete_reason
    from agentsproof.executor.gate import base_verdict

    run.verdict = base_verdict(run)  # UNPROVEN: passed on too few trials, never a green PASS
    return run
