"""``agentsproof verify``'s arithmetic: every number a report states, derived again from its
recorded trials by the same grading and statistics code the run used, and each that
differs named by its field.

- a trial's score from its grader results (:func:`agentsproof.grading.grade.combine`), its
  pass from the item's threshold;
- an arm's totals (:meth:`ArmResult.summarize`);
- an item's delta, grade, pass rate, pass/fail and statistics (intervals, p-values, the
  verdict; eval-all's adjusted p-values) — :mod:`agentsproof.stats`;
- the run's summaries, verdict and the exit code its manifest's options give;
- the numbers a run adds from outside its trials, where the report records what they were
  computed from (:mod:`agentsproof.executor.verify_extras`);
- the manifest's digest of the trials (a trial removed, added or changed).

Nothing here reads a file or calls a model: :mod:`agentsproof.commands.verify` does the
reading, the files' digests, the signature and ``--regrade``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from agentsproof.executor.verify_diff import TOLERANCE, Difference, same
from agentsproof.executor.verify_diff import diff as _diff
from agentsproof.executor.verify_diff import diff_tree as _diff_tree
from agentsproof.model.results import ArmResult, ItemResult, RunResult, compute_grade

__all__ = ["TOLERANCE", "Difference", "check_manifest", "item_grader", "rederive", "rederive_activation", "same"]

_ARM_FIELDS = ("scored", "errored", "passed_trials", "mean_score", "pass_rate", "mean_latency_s", "mean_total_tokens", "total_cost_usd", "skill_used_rate")
_SUMMARY_FIELDS = ("total", "passed", "failed", "errored", "not_run", "avg_delta", "grades")


# ------------------------------------------------------------------ trials and arms


def _trials(out: list[Difference], where: str, arm: ArmResult, threshold: float) -> None:
    from agentsproof.grading.grade import combine

    for n, t in enumerate(arm.trials):
        at = f"{where}.trials[{n}]"
        if t.status == "errored":
            if t.score is not None:
                out.append(Difference(f"{at}.score", t.score, None))
            continue
        score = combine(t.graders)
        if score is None:
            out.append(Difference(f"{at}.status", t.status, "errored (a grader errored)"))
            continue
        _diff(out, f"{at}.score", t.score, score)
        passed = score >= threshold - 1e-9
        if t.passed != passed:
            gate = t.passed is False and passed and any(g.score is not None and g.score < 1.0 for g in t.graders)
            if not gate:  # a required grader below its mark fails a trial whatever its score (grading.grade.failed_gate)
                out.append(Difference(f"{at}.passed", t.passed, passed))


def _arm(out: list[Difference], where: str, arm: ArmResult) -> None:
    again = arm.model_copy(update={"trials": list(arm.trials)}).summarize()
    for name in _ARM_FIELDS:
        _diff(out, f"{where}.{name}", getattr(arm, name), getattr(again, name))


def _arms(it: ItemResult) -> Iterator[tuple[str, ArmResult]]:
    yield "with_arm", it.with_arm
    yield "without_arm", it.without_arm
    if it.plugin_arm is not None:
        yield "plugin_arm", it.plugin_arm


# ------------------------------------------------------------------ items


def _item(it: ItemResult, ci_rule: str, single_arm: bool, incomplete: bool) -> ItemResult:
    """``it`` graded again from its arms (as :func:`agentsproof.executor.finalize.finalize_item` grades it)."""
    from agentsproof.core.units import tidy

    res = it.model_copy(deep=False)
    res.stats = {}
    if it.not_run:
        res.delta, res.grade, res.passed = None, None, False
    elif single_arm:
        from agentsproof.stats.single_arm import grade_single_arm

        res.suggestions = []
        graded = grade_single_arm(res, incomplete)
        graded.stats = tidy(graded.stats)  # type: ignore[assignment]
        return graded
    elif it.with_arm.mean_score is None or it.without_arm.mean_score is None:
        res.delta, res.grade, res.pass_rate, res.passed = None, None, it.with_arm.pass_rate, False
    else:
        from agentsproof.stats.cases import item_delta

        res.delta = item_delta(res)
        res.grade = compute_grade(res.delta) if res.delta is not None else None
        res.pass_rate = it.with_arm.pass_rate
        res.passed = (res.pass_rate or 0.0) >= res.threshold - 1e-9 and res.grade != "F"
    from agentsproof.stats import item_stats

    adaptive = (it.stats or {}).get("adaptive_stop")
    level = adaptive["level"] if isinstance(adaptive, dict) and adaptive.get("level") else 0.95
    res.stats = tidy(item_stats(res, level))  # type: ignore[assignment]
    if res.delta is not None:
        res.delta = tidy(res.delta)  # type: ignore[assignment]
    if it.not_run:
        res.stats["verdict"], res.stats["verdict_reasons"] = "not run", ["the run stopped before any trial of this item started"]
    if ci_rule == "interval" and not it.not_run and res.grade is not None and it.status != "errored":
        from agentsproof.stats.item import interval_rule_passes

        res.passed = interval_rule_passes(res.stats, res.threshold)
    return res


def _graded(jobs: list[tuple[ItemResult, bool]], ci_rule: str, incomplete: bool) -> list[ItemResult]:
    """Every item graded again; a large run's items on threads (the resampling runs in numpy, off the GIL)."""
    if len(jobs) < 2 or sum(len(it.with_arm.trials) + len(it.without_arm.trials) for it, _ in jobs) < 2000:
        return [_item(it, ci_rule, one, incomplete) for it, one in jobs]
    import os
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(len(jobs), os.cpu_count() or 1, 8)) as pool:
        return list(pool.map(lambda job: _item(job[0], ci_rule, job[1], incomplete), jobs))


def _single(it: ItemResult, single_arm: bool) -> bool:
    """The item was graded as a single-arm item (the run's --baseline none, or no baseline trials and no delta)."""
    return bool(
        single_arm or (not it.without_arm.trials and it.with_arm.trials and it.delta is None and it.grade is None and "delta_ci" not in (it.stats or {}))
    )


def item_grader(settings: Mapping[str, Any], incomplete: bool) -> Callable[[ItemResult], ItemResult]:
    """A function that grades one item of a run with these settings again (as :func:`rederive`
    does), for a caller that grades each item as soon as it is read (``rederive(derived=...)``)."""
    from agentsproof.model.settings import RunSettings

    rs = RunSettings.from_dict(dict(settings))
    ci_rule, single_arm = rs.ci_rule or "point", rs.baseline == "none"
    return lambda it: _item(it, ci_rule, _single(it, single_arm), incomplete)


def rederive(run: RunResult, settings: Mapping[str, Any] | None = None, derived: list[ItemResult] | None = None) -> list[Difference]:
    """Every number of ``run`` derived again; the ones that differ (empty: all hold).
    ``derived``: the items already graded again (:func:`item_grader`), in report order."""
    from agentsproof.executor.finalize import _summary
    from agentsproof.model.settings import RunSettings

    out: list[Difference] = []
    rs = RunSettings.from_dict(dict(settings if settings is not None else run.settings))
    ci_rule = rs.ci_rule or "point"
    single_arm = rs.baseline == "none"
    jobs: list[tuple[ItemResult, bool]] = []
    for i, it in enumerate(run.items):
        where = f"items[{i}]"
        for name, arm in _arms(it):
            _trials(out, f"{where}.{name}", arm, it.threshold)
            _arm(out, f"{where}.{name}", arm)
        jobs.append((it, _single(it, single_arm)))
    derived_items = list(derived) if derived is not None else _graded(jobs, ci_rule, run.incomplete)
    if run.command == "eval-all":
        from agentsproof.stats.multiplicity import apply_to_items

        apply_to_items(derived_items, rs.p_adjust or "holm")
    for i, (it, again) in enumerate(zip(run.items, derived_items, strict=True)):
        where = f"items[{i}]"
        for name in ("delta", "grade", "pass_rate", "passed"):
            _diff(out, f"{where}.{name}", getattr(it, name), getattr(again, name))
        _diff_tree(out, f"{where}.stats", it.stats, again.stats)
    from agentsproof.executor.verify_extras import rederive_outside

    out += rederive_outside(run, derived_items)  # the A/A summary, the oracle's score, a panel's rate, gold-agreement warnings
    for kind, pick in (("skills", "skill"), ("agents", "agent"), ("cases", "case"), ("overall", None)):
        summary = _summary([it for it in run.items if pick is None or it.kind == pick])
        stated = getattr(run, kind)
        for name in _SUMMARY_FIELDS:
            _diff(out, f"{kind}.{name}", getattr(stated, name), getattr(summary, name))
    from agentsproof.executor.gate import gate

    opts = _dict(run.manifest.get("options")) if isinstance(run.manifest, dict) else {}
    verdict = gate(run, ci=bool(opts.get("ci")), fail_on_underpowered=bool(opts.get("fail_on_underpowered"))).verdict
    _diff(out, "verdict", run.verdict, verdict)
    return out


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def check_manifest(run: RunResult, raw: Mapping[str, Any], digested: tuple[int, str] | None = None) -> list[Difference]:
    """The manifest's trial digest against the trials as recorded (``digested``: that digest,
    already taken), and its exit code against the run's."""
    from agentsproof.executor.proof import data_trials_digest, run_exit_code

    out: list[Difference] = []
    manifest = run.manifest
    if not isinstance(manifest, dict):
        return [Difference("manifest", None, "a manifest (the report has none: made by an older agentsproof, or removed)")]
    n, digest = digested if digested is not None else data_trials_digest(raw)
    stated = _dict(manifest.get("trials"))
    _diff(out, "manifest.trials.count", stated.get("count"), n)
    _diff(out, "manifest.trials.sha256", stated.get("sha256"), digest)
    opts = _dict(manifest.get("options"))
    code = run_exit_code(run, bool(opts.get("ci")), bool(opts.get("fail_on_underpowered")), str(opts.get("ci_rule") or "point"))
    _diff(out, "manifest.exit_code", manifest.get("exit_code"), code)
    return out


# ------------------------------------------------------------------ activation reports


def rederive_activation(data: Mapping[str, Any]) -> list[Difference]:
    """An activation report's scores derived again from its ``trial_log`` (suites rebuilt from
    the prompts the trials ran), and its manifest's trial digest."""
    from agentsproof.executor.proof import activation_trials_digest
    from agentsproof.model.activation import ActivationPrompt, ActivationSuite, ActivationTrial
    from agentsproof.model.items import SkillFile
    from agentsproof.stats.activation import as_dict, score

    log = data.get("trial_log") or []
    skills = data.get("skills") or []
    suites: list[ActivationSuite] = []
    for s in skills:
        name = s.get("skill")
        prompts: dict[tuple[str, bool], ActivationPrompt] = {}
        for row in log:
            if row.get("skill") == name:
                p = row.get("prompt") or {}
                text = str(p.get("text", ""))
                prompts.setdefault((text, bool(p.get("expect"))), ActivationPrompt(text, bool(p.get("expect")), str(p.get("type") or "")))
        suites.append(
            ActivationSuite(
                skill=SkillFile(name=name, kind="skill", text=""),
                prompts=list(prompts.values()),
                min_recall=float(s.get("min_recall", 0.8)),
                min_precision=float(s.get("min_precision", 0.8)),
            )
        )
    trials = [ActivationTrial(**{**row, "prompt": ActivationPrompt(**row["prompt"])}) for row in log]
    installed = list(next(iter((data.get("matrix") or {}).values()), {}) or [])
    names = [c for c in installed if c != "none"] or None
    scored = score(suites, trials, names)
    again = as_dict(scored)
    out: list[Difference] = []
    _diff_tree(out, "report", {k: v for k, v in data.items() if k in again}, again)
    manifest = data.get("manifest")
    if not isinstance(manifest, dict):
        out.append(Difference("manifest", None, "a manifest (the report has none)"))
        return out
    n, digest = activation_trials_digest(log)
    stated = _dict(manifest.get("trials"))
    _diff(out, "manifest.trials.count", stated.get("count"), n)
    _diff(out, "manifest.trials.sha256", stated.get("sha256"), digest)
    from agentsproof.executor.proof import activation_exit_code

    _diff(out, "manifest.exit_code", manifest.get("exit_code"), activation_exit_code(scored, bool(_dict(manifest.get("options")).get("ci"))))
    return out
