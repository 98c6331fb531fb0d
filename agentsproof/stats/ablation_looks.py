"""``ablate``'s numbers from a run's arms, at every look: what the reports state and verify re-derives.

The arms of an ablation are the eval's item (the whole skill and no skill), one item per
part (the skill without it, its with-arm only) and, when several parts are removable, the
smallest skill. :func:`derive` computes every stated number from those arms' trials and the
ablation's record of how they ran (``spec``): which item is which part, how many trials
each part's arm ran, the planned looks. ``ablate`` writes its report from it and
``agentsproof verify`` calls it again on the report's own trials.

**Looks and ``--adaptive``.** Without it every arm runs to the cap: one look, and the
numbers are those of :mod:`agentsproof.stats.ablation` (95 % intervals, Holm across the
parts). With it the arms run in rounds, at the delta's planned looks
(:func:`agentsproof.stats.adaptive.planned_looks`, ``K`` of them), and after each round a
part's arm stops once its verdict is settled. The rule is the delta's kind (Bonferroni over
the planned looks), with Holm across the parts kept:

* at each look ``l`` an open part's two one-sided p-values (needed, removable) are taken on
  the first ``n_l`` trials of its arm and of the whole skill's, paired by case;
* its *sequential* p-value of a claim is ``K ×`` the least of those over the looks it saw
  (capped at 1), and Holm runs across the parts on these, one family per claim;
* a part stops once it is called **needed**, or **removable** while its projected interval
  at the cap could not reach "needed", or **unclear for good**: the interval the rule would
  see at the cap if the remaining trials scored like these
  (:func:`agentsproof.stats.adaptive.projected_interval`, at the most lenient level a claim
  can get, one-sided ``alpha/K``) reaches neither claim. The whole skill and no skill run
  as long as any part does.

Why it holds after any look: this is the closed test whose every intersection of null
hypotheses is tested by Bonferroni over its parts × the K looks (each one-sided p-value at a
fixed look is valid; the union of |I|·K tests at alpha/(|I|·K) each errs with at most alpha),
and Holm on the sequential p-values is its shortcut. A part that stops contributes its
looks so far; stopping for futility never makes a claim. So a false "needed" or "removable"
anywhere, however the arms stopped, has chance at most alpha. The printed interval of a
part is at level ``1 − alpha/K`` at its last look: it misses the effect only if some look's
interval would, at most alpha in all (with one look: the 95 % interval).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from agentsproof.model.results import ArmResult, ItemResult, compute_grade
from agentsproof.stats.ablation import ALPHA, PartEffect, decide, non_inferior, one_sided_p, usable
from agentsproof.stats.cases import CaseScores, by_case, delta_interval, mean_case_delta
from agentsproof.stats.wald import default_question


def arm_upto(arm: ArmResult, n: int) -> ArmResult:
    """The arm's trials of index below ``n`` (its first ``n`` trials)."""
    return arm.model_copy(update={"trials": [t for t in arm.trials if t.index < n]})


def cases_upto(item: ItemResult, first: ArmResult, second: ArmResult, n: int) -> CaseScores:
    """Per case (``first``'s scores, ``second``'s) over the first ``n`` trials of each."""
    return [(a, b) for _name, a, b, _err in by_case(item, (arm_upto(first, n), arm_upto(second, n)))]


def sequential_p(ps: Sequence[float], looks: int) -> float:
    """A claim's p-value valid after any of ``looks`` planned looks: ``looks ×`` the least seen, at most 1."""
    return min(1.0, looks * min(ps))


def part_at_looks(
    name: str, cases_at: Callable[[int], CaseScores], seen: Sequence[int], looks: int, tokens: int, margin: float, alpha: float = ALPHA
) -> PartEffect:
    """A part's effect at its last look (``seen[-1]`` trials per arm), its interval at level
    ``1 − alpha/looks`` and its sequential p-values over the looks ``seen`` (each look's
    raw p-values in ``extra``)."""
    p_needed: list[float] = []
    p_removable: list[float] = []
    got: list[tuple[list[float], list[float]]] = []
    for n in seen:
        got = usable(cases_at(n))
        if got:
            q = default_question(len(got))
            p_needed.append(one_sided_p(got, 0.0, "upper", q))
            p_removable.append(one_sided_p(got, -margin, "lower", q))
    q = default_question(len(got))
    extra: dict[str, Any] = {"looks": list(seen), "p_needed_looks": p_needed, "p_removable_looks": p_removable}
    if not got:
        return PartEffect(name, None, None, q, 0, tokens=tokens, extra=extra)
    return PartEffect(
        name,
        mean_case_delta(got),
        delta_interval(got, 1 - alpha / max(1, looks), q),
        q,
        len(got),
        p_needed=sequential_p(p_needed, looks),
        p_removable=sequential_p(p_removable, looks),
        tokens=tokens,
        extra=extra,
    )


def reachable(cases: CaseScores, done: int, cap: int, looks: int, margin: float, alpha: float = ALPHA) -> tuple[bool, bool]:
    """(needed, removable): whether the claim could still be shown by the cap, judged on the
    interval at the cap if the remaining trials scored like these, one-sided ``alpha/looks``
    (the most lenient level Holm can give a claim). Both False at the cap."""
    if done >= cap:
        return False, False
    got = usable(cases)
    if not got:
        return True, True
    from agentsproof.stats.adaptive import projected_interval

    first = [x for a, _b in got for x in a]
    second = [x for _a, b in got for x in b]
    proj = projected_interval(first, second, done, cap, looks, 2 * alpha, got)
    if proj is None:
        return True, True
    return proj[1] < 0, proj[0] > -margin


def settled(effect: PartEffect, cases: CaseScores, done: int, cap: int, looks: int, margin: float, alpha: float = ALPHA) -> str | None:
    """Why a part's arm stops after this look (its verdict already adjusted across the parts):
    ``needed``, ``removable``, ``unclear`` (for good), or None to go on."""
    if effect.p_needed_adjusted is not None and effect.p_needed_adjusted < alpha:
        return "needed"
    can_need, can_remove = reachable(cases, done, cap, looks, margin, alpha)
    if effect.p_removable_adjusted is not None and effect.p_removable_adjusted < alpha and not can_need:
        return "removable"
    if not can_need and not can_remove:
        return "unclear"
    return None


def _items(items: Sequence[ItemResult] | Mapping[str, ItemResult]) -> Mapping[str, ItemResult]:
    return items if isinstance(items, Mapping) else {it.id: it for it in items}


def effects(spec: Mapping[str, Any], items: Sequence[ItemResult] | Mapping[str, ItemResult]) -> list[PartEffect]:
    """Every part's effect, interval, sequential p-values and verdict (Holm across the parts),
    each at the trials its arm ran (``spec["parts"][k]["trials"]``)."""
    by_id = _items(items)
    whole = by_id[spec["whole_item"]]
    planned = [int(n) for n in spec["looks"]]
    margin, alpha = float(spec["margin"]), float(spec.get("alpha", ALPHA))
    out = []
    for part in spec["parts"]:
        ran_item = by_id.get(part["item"])  # an arm an interrupt kept from its first trial is not in the run
        arm = ran_item.with_arm if ran_item is not None else ArmResult(arm="with", system_prompt_kind="skill")
        ran = int(part["trials"])
        seen = [n for n in planned if n < ran] + [ran]
        out.append(part_at_looks(part["id"], partial(cases_upto, whole, arm, whole.with_arm), seen, len(planned), int(part["tokens"]), margin, alpha))
    decide(out, alpha)
    return out


def part_row(part: Mapping[str, Any], e: PartEffect) -> dict[str, Any]:
    """One part's row of the report: what it is (from ``part``) and its numbers (from ``e``)."""
    return {
        **{k: part[k] for k in ("id", "kind", "title", "tokens", "files", "item", "trials") if k in part},
        "stop": part.get("stop"),
        "effect": e.effect,
        "interval": list(e.interval) if e.interval else None,
        "question": e.question,
        "cases": e.cases,
        "per_1k_tokens": e.per_1k_tokens,
        "p_needed_looks": e.extra.get("p_needed_looks", []),
        "p_removable_looks": e.extra.get("p_removable_looks", []),
        "p_needed": e.p_needed,
        "p_removable": e.p_removable,
        "p_needed_adjusted": e.p_needed_adjusted,
        "p_removable_adjusted": e.p_removable_adjusted,
        "verdict": e.verdict,
    }


def smallest_numbers(spec: Mapping[str, Any], items: Sequence[ItemResult] | Mapping[str, ItemResult], removed: Sequence[str]) -> dict[str, Any] | None:
    """The smallest skill's confirmation: against the whole skill (non-inferiority at the
    margin) and against no skill (delta, interval, grades), on the trials its arm ran; None
    when no part is removable or its arm did not run."""
    small = spec.get("smallest")
    if not removed or not small or small.get("item") is None:
        return None
    by_id = _items(items)
    whole = by_id[spec["whole_item"]]
    arm = by_id[small["item"]].with_arm
    n = int(small["trials"])
    margin = float(spec["margin"])
    vs_whole = non_inferior(cases_upto(whole, arm, whole.with_arm, n), margin, float(spec.get("alpha", ALPHA)))
    vs_none = usable(cases_upto(whole, arm, whole.without_arm, n))
    d = mean_case_delta(vs_none) if vs_none else None
    ci = delta_interval(vs_none) if d is not None else None
    return {
        "vs_whole": {**vs_whole, "interval": list(vs_whole["interval"]) if vs_whole["interval"] else None},
        "vs_none": {
            "delta": d,
            "interval": list(ci) if ci else None,
            "grade": compute_grade(d) if d is not None else None,
            "grade_low": compute_grade(ci[0]) if ci else None,
            "grade_high": compute_grade(ci[1]) if ci else None,
        },
        "together_not_removable": len(removed) > 1 and not vs_whole["non_inferior"],
    }


def derive(spec: Mapping[str, Any], items: Sequence[ItemResult] | Mapping[str, ItemResult]) -> dict[str, Any]:
    """Every number the ablation states, from ``spec`` (the parts and how their arms ran) and
    the run's items: the whole skill's delta, each part's row, the removable parts, the
    smallest skill's confirmation and the trials the arms ran."""
    by_id = _items(items)
    found = effects(spec, by_id)
    removed = [e.part for e in found if e.verdict == "removable"]
    whole = by_id[spec["whole_item"]]
    small = smallest_numbers(spec, by_id, removed)
    if small is not None:
        small["removed"] = removed
    return {
        "whole": {
            "delta": whole.delta,
            "grade": whole.grade,
            "interval": (whole.stats or {}).get("delta_ci"),
            "with_mean": whole.with_arm.mean_score,
            "without_mean": whole.without_arm.mean_score,
        },
        "parts": [part_row(p, e) for p, e in zip(spec["parts"], found, strict=True)],
        "removable": removed,
        "smallest": small,
        "calls": {"trials": sum(len(a.trials) for i in _ids(spec) if i in by_id for a in (by_id[i].with_arm, by_id[i].without_arm))},
    }


def _ids(spec: Mapping[str, Any]) -> set[str]:
    small = spec.get("smallest") or {}
    return {spec["whole_item"], *(p["item"] for p in spec["parts"]), *([small["item"]] if small.get("item") else [])}
