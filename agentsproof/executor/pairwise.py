"""The pairwise pass: after both arms of an item ran, judge trial i's two answers as a pair.

Trial ``i`` of both arms ran the same case (the same prompt), so the pair is fair. The
pass runs once per command, after the runner, through the same judge (and client, cache
and budget) as every other judge call; a pair whose answers are not both scored is left
out. Its result goes into the item's ``stats["pairwise"]``: counts, the with-arm
preference rate (a tie counts half) and its 95 % percentile-bootstrap interval over pairs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import numpy as np

from agentsproof.executor.runner import ItemRun
from agentsproof.grading.judge import Judge
from agentsproof.grading.pairwise import PairVerdict, PairwiseGrader, judge_pair
from agentsproof.model.results import Usage
from agentsproof.stats.intervals import BOOTSTRAP_RESAMPLES, SEED


def pairwise_spec(graders: Sequence[Any]) -> PairwiseGrader | None:
    return next((g for g in graders if isinstance(g, PairwiseGrader)), None)


def wants_pairwise(run: ItemRun) -> bool:
    it = run.item
    return any(pairwise_spec(c.graders) for c in (it.cases or (it.case_at(0),)))


async def judge_item(run: ItemRun, judge: Judge, sem: asyncio.Semaphore) -> dict[str, Any]:
    it = run.item
    with_by = {t.index: t for t in run.with_arm.trials if t.status == "scored"}
    without_by = {t.index: t for t in run.without_arm.trials if t.status == "scored"}

    async def one(i: int) -> PairVerdict | None:
        case = it.case_at(i)
        spec = pairwise_spec(case.graders)
        if spec is None:
            return None
        async with sem:
            return await judge_pair(judge.within(it.timeout), spec, case.prompt, with_by[i].response, without_by[i].response)

    verdicts = [v for v in await asyncio.gather(*(one(i) for i in sorted(set(with_by) & set(without_by)))) if v is not None]
    return summarize(verdicts)


def summarize(verdicts: Sequence[PairVerdict]) -> dict[str, Any]:
    judged = [v for v in verdicts if v.winner is not None]
    wins = sum(v.winner == "with" for v in judged)
    losses = sum(v.winner == "without" for v in judged)
    ties = len(judged) - wins - losses
    usage = Usage()
    for v in verdicts:
        usage = usage + v.usage
    out: dict[str, Any] = {
        "pairs": len(judged), "with_preferred": wins, "without_preferred": losses, "ties": ties,
        "disagreements": sum(v.disagreement for v in judged), "errored": len(verdicts) - len(judged),
        "rate": None, "rate_ci": None, "calls": sum(v.calls for v in verdicts), "usage": usage.model_dump(),
        "method": "judge asked twice with the order swapped; disagreement = tie; rate = (with preferred + ties/2) / pairs; "
        f"95% percentile bootstrap over pairs, {BOOTSTRAP_RESAMPLES} resamples, seed {SEED}",
    }
    errors = [v.error for v in verdicts if v.error]
    if errors:
        out["first_error"] = errors[0]
    if judged:
        values = np.array([1.0 if v.winner == "with" else 0.0 if v.winner == "without" else 0.5 for v in judged])
        out["rate"] = float(values.mean())
        rng = np.random.default_rng(SEED)
        means = values[rng.integers(0, len(values), (BOOTSTRAP_RESAMPLES, len(values)))].mean(axis=1)
        lo, hi = np.quantile(means, [0.025, 0.975])
        out["rate_ci"] = [float(lo), float(hi)]
    return out


async def pairwise_pass(runs: Sequence[ItemRun], judge: Judge | None, parallel: int) -> dict[str, dict[str, Any]]:
    """Item id → its pairwise block, for the items with a pairwise grader."""
    if judge is None:
        return {}
    sem = asyncio.Semaphore(max(1, parallel))
    todo = [r for r in runs if wants_pairwise(r)]
    results = await asyncio.gather(*(judge_item(r, judge, sem) for r in todo))
    return {r.item.id: res for r, res in zip(todo, results, strict=True)}
