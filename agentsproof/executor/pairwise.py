"""The pairwise pass: after both arms of an item ran, judge trial i's two answers as a pair.

Trial ``i`` of both arms ran the same case (the same prompt), so the pair is fair. The
pass runs once per command, after the runner, through the same judge (and client, cache
and budget) as every other judge call; a pair whose answers are not both scored is left
out. Its result goes into the item's ``stats["pairwise"]``: counts, the with-arm
preference rate (a tie counts half) and its 95 % interval
(:func:`agentsproof.stats.preference.preference_interval`: Clopper–Pearson on the
pseudo-counts, clustered by case).

With a judge panel (eval.yaml ``judge_models``) every model is asked both orders and the
figures come from the panel's verdicts; ``stats["pairwise"]["panel"]`` adds how often the
models split, each model's position consistency, and every pair's verdicts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from agentsproof.executor.runner import ItemRun
from agentsproof.grading.judge import Judge
from agentsproof.grading.pairwise import PairVerdict, PairwiseGrader, judge_pair, judge_pair_panel
from agentsproof.model.results import Usage
from agentsproof.stats.preference import PREFERENCE_METHOD, preference_interval


def pairwise_spec(graders: Sequence[Any]) -> PairwiseGrader | None:
    """The first ``pairwise`` grader of ``graders``, or None."""
    return next((g for g in graders if isinstance(g, PairwiseGrader)), None)


def _wants_pairwise(run: ItemRun) -> bool:
    it = run.item
    return any(pairwise_spec(c.graders) for c in (it.cases or (it.case_at(0),)))


async def _judge_item(run: ItemRun, judge: Judge, sem: asyncio.Semaphore) -> dict[str, Any]:
    it = run.item
    with_by = {t.index: t for t in run.with_arm.trials if t.status == "scored"}
    without_by = {t.index: t for t in run.without_arm.trials if t.status == "scored"}

    models = tuple(it.judge_models)

    async def one(i: int) -> tuple[int, PairVerdict] | None:
        case = it.case_at(i)
        spec = pairwise_spec(case.graders)
        if spec is None:
            return None
        async with sem:
            bounded = judge.within(it.timeout)
            if models:
                return i, await judge_pair_panel(bounded, models, spec, case.prompt, with_by[i].response, without_by[i].response)
            return i, await judge_pair(bounded, spec, case.prompt, with_by[i].response, without_by[i].response)

    done = [v for v in await asyncio.gather(*(one(i) for i in sorted(set(with_by) & set(without_by)))) if v is not None]
    out = summarize([v for _, v in done], [it.case_at(i).name for i, _ in done])
    if models:
        out["panel"] = panel_summary(models, done)
        out["method"] += "; judge panel: each model asked both orders, the pair's verdict is the models' majority (a tie for first place = tie)"
    return out


def panel_summary(models: tuple[str, ...], done: Sequence[tuple[int, PairVerdict]]) -> dict[str, Any]:
    """How the panel judged the pairs: splits, each model's position consistency, every pair's verdicts."""
    judged = [v for _, v in done if v.winner is not None]
    split = sum(v.split for v in judged)
    members = []
    for k, m in enumerate(models):
        own = [v.members[k] for v in judged]
        consistent = sum(not o.disagreement for o in own)
        usage = Usage()
        for _, v in done:
            if v.members:
                usage = usage + v.members[k].usage
        members.append(
            {
                "model": m,
                "pairs": len(own),
                "position_consistent": consistent,
                "position_consistency": consistent / len(own) if own else None,
                "with_preferred": sum(o.winner == "with" for o in own),
                "without_preferred": sum(o.winner == "without" for o in own),
                "ties": sum(o.winner == "tie" for o in own),
                "errored": sum(1 for _, v in done if v.members and v.members[k].error is not None),
                "usage": usage.model_dump(),
            }
        )
    rows = [
        {
            "trial": i,
            "verdict": v.winner,
            "models": [o.winner for o in v.members],
            "position_consistent": [None if o.winner is None else not o.disagreement for o in v.members],
            **({"error": v.error} if v.error else {}),
        }
        for i, v in done
    ]
    return {
        "models": list(models),
        "combine": "majority",
        "pairs": len(judged),
        "disagreements": split,
        "disagreement_rate": split / len(judged) if judged else None,
        "members": members,
        "verdicts": rows,
    }


def summarize(verdicts: Sequence[PairVerdict], cases: Sequence[str] | None = None) -> dict[str, Any]:
    """The pairwise block; ``cases``: each verdict's case (the interval is clustered by case)."""
    names = list(cases) if cases is not None else [""] * len(verdicts)
    judged_cases = [c for v, c in zip(verdicts, names, strict=True) if v.winner is not None]
    judged = [v for v in verdicts if v.winner is not None]
    wins = sum(v.winner == "with" for v in judged)
    losses = sum(v.winner == "without" for v in judged)
    ties = len(judged) - wins - losses
    usage = Usage()
    for v in verdicts:
        usage = usage + v.usage
    out: dict[str, Any] = {
        "pairs": len(judged),
        "with_preferred": wins,
        "without_preferred": losses,
        "ties": ties,
        "disagreements": sum(v.disagreement for v in judged),
        "errored": len(verdicts) - len(judged),
        "rate": None,
        "rate_ci": None,
        "calls": sum(v.calls for v in verdicts),
        "usage": usage.model_dump(),
        "method": f"judge asked twice with the order swapped; disagreement = tie; rate = (with preferred + ties/2) / pairs; 95% interval: {PREFERENCE_METHOD}",
    }
    errors = [v.error for v in verdicts if v.error]
    if errors:
        out["first_error"] = errors[0]
    if judged:
        values = [1.0 if v.winner == "with" else 0.0 if v.winner == "without" else 0.5 for v in judged]
        out["rate"] = sum(values) / len(values)
        ci = preference_interval(values, judged_cases)
        out["rate_ci"] = list(ci) if ci else None
    return out


async def pairwise_pass(runs: Sequence[ItemRun], judge: Judge | None, parallel: int) -> dict[str, dict[str, Any]]:
    """Item id → its pairwise block, for the items with a pairwise grader."""
    if judge is None:
        return {}
    sem = asyncio.Semaphore(max(1, parallel))
    todo = [r for r in runs if _wants_pairwise(r)]
    results = await asyncio.gather(*(_judge_item(r, judge, sem) for r in todo))
    return {r.item.id: res for r, res in zip(todo, results, strict=True)}
