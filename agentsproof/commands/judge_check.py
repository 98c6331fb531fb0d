"""``agentsproof judge-check GOLD.jsonl``: how far the judge agrees with people.

Every gold item is put to each judge model the way an eval would (the same prompts as the
``llm_rubric``, ``assertions`` and ``pairwise`` graders), **twice** — self-consistency —
and a pairwise item in both orders — position consistency. Against the person's labels:

- assertions: accuracy and Cohen's κ (pass/fail);
- rubric scores: Spearman's ρ, plus accuracy and κ with scores cut at 0.5 (pass/fail);
- pairwise: accuracy and κ over A / B / tie (the verdict of both orders; if they differ, tie).

An errored judge call leaves its item out of that model's figures (counted in ``errored``).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.commands.gold import GoldItem, load_gold
from agentsproof.grading.assertions import AssertionsGrader, grade_assertions
from agentsproof.grading.judge import Judge
from agentsproof.grading.llm_rubric import LLMRubricGrader, grade_rubric
from agentsproof.grading.pairwise import PairwiseGrader, judge_pair
from agentsproof.stats.agreement import KAPPA_FLOOR, accuracy, cohen_kappa, consistency, consistency_by_item, spearman

if TYPE_CHECKING:
    from agentsproof.model.items import EvalItem
    from agentsproof.model.options import RunFlags
    from agentsproof.model.results import RunResult

ASKS = 2
"""Each item is judged this many times (self-consistency)."""


@dataclass
class Verdicts:
    """One judge model's verdicts on one gold item: one per ask (None: errored)."""

    asks: list[Any] = field(default_factory=list)
    position_consistent: list[bool] = field(default_factory=list)
    """pairwise: per ask, whether both orders named the same answer."""
    error: str | None = None


async def _ask(judge: Judge, item: GoldItem, k: int) -> tuple[Any, bool | None, str | None]:
    """(verdict, position consistent or None, error) of ask ``k``."""
    judge = judge.for_slot((f"judge-check:{item.id}", "judge", k))  # each ask its own cache slot: asked again, not replayed
    if item.kind == "rubric":
        res = await grade_rubric(item.answer or "", LLMRubricGrader(type="llm_rubric", rubric=item.rubric or ""), judge, item.task)
        return (None, None, res.error) if res.errored or res.score is None else (float(res.score), None, None)
    if item.kind == "assertion":
        res = await grade_assertions(item.answer or "", AssertionsGrader(type="assertions", assertions=[item.assertion or ""]), judge, item.task)
        if res.errored or not res.checks:
            return None, None, res.error
        return bool(res.checks[0].passed), None, None
    verdict = await judge_pair(judge, PairwiseGrader(type="pairwise", criteria=item.criteria), item.task, item.answer_a or "", item.answer_b or "")
    if verdict.winner is None:
        return None, None, verdict.error
    label = {"with": "A", "without": "B", "tie": "tie"}[verdict.winner]
    return label, not verdict.disagreement, None


async def _judge_all(judge: Judge, items: list[GoldItem], parallel: int) -> list[Verdicts]:
    gate = asyncio.Semaphore(parallel)

    async def one(item: GoldItem) -> Verdicts:
        out = Verdicts()
        for k in range(ASKS):
            async with gate:
                verdict, consistent, error = await _ask(judge, item, k)
            if error is not None:
                return Verdicts(error=error)
            out.asks.append(verdict)
            if consistent is not None:
                out.position_consistent.append(consistent)
        return out

    return list(await asyncio.gather(*(one(i) for i in items)))


def _kind_figures(kind: str, items: list[GoldItem], verdicts: list[Verdicts]) -> dict[str, Any]:
    pairs = [(i, v) for i, v in zip(items, verdicts, strict=True) if i.kind == kind]
    done = [(i, v) for i, v in pairs if v.error is None]
    out: dict[str, Any] = {"items": len(pairs), "errored": len(pairs) - len(done)}
    if not done:
        return out
    first = [v.asks[0] for _, v in done]
    second = [v.asks[1] for _, v in done]
    human = [i.human for i, _ in done]
    if kind == "rubric":
        out["spearman"] = spearman(first, human)
        cut_j = [s >= 0.5 for s in first]
        cut_h = [s >= 0.5 for s in human]
        out["accuracy"] = accuracy(cut_j, cut_h)
        out["kappa"] = cohen_kappa(cut_j, cut_h)
        out["self_consistency"] = consistency([round(s, 2) for s in first], [round(s, 2) for s in second])
        out["mean_abs_error"] = sum(abs(a - b) for a, b in zip(first, human, strict=True)) / len(done)
    else:
        out["accuracy"] = accuracy(first, human)
        out["kappa"] = cohen_kappa(first, human)
        out["self_consistency"] = consistency(first, second)
    if kind == "pairwise":
        out["position_consistency"] = consistency_by_item([v.position_consistent for _, v in done])
    return out


def judge_check(gold: Path, *, provider: str | None, model: str | None, judge_models: list[str] | None, parallel: int = 4) -> dict[str, Any]:
    """The judge-check report: per judge model, per kind of gold item, the agreement figures."""
    from agentsproof.executor.session import prepare_provider

    items = load_gold(gold)
    prepared = prepare_provider(provider, model, judge_models[0] if judge_models else None)
    assert prepared.client is not None
    names = judge_models or [prepared.judge_model]
    client = prepared.client

    async def every_model() -> list[list[Verdicts]]:  # one event loop: the client's pool belongs to it
        return [await _judge_all(Judge(client=client, model=name), items, parallel) for name in names]

    models: list[dict[str, Any]] = []
    for name, verdicts in zip(names, asyncio.run(every_model()), strict=True):
        kinds = {k: _kind_figures(k, items, verdicts) for k in ("assertion", "rubric", "pairwise") if any(i.kind == k for i in items)}
        errors = [v.error for v in verdicts if v.error]
        models.append(
            {
                "judge_model": name,
                "kinds": kinds,
                "errored": len(errors),
                "first_error": errors[0] if errors else None,
                "verdicts": [{"id": i.id, "kind": i.kind, "human": i.human, "judge": v.asks, "error": v.error} for i, v in zip(items, verdicts, strict=True)],
            }
        )
    return {"gold": str(gold), "items": len(items), "provider": prepared.provider, "asks": ASKS, "kappa_floor": KAPPA_FLOOR, "models": models}


def _fmt(stat: dict[str, Any] | None, pct: bool = False) -> str:
    if not stat or stat.get("value") is None:
        return "—"
    v, ci = stat["value"], stat.get("ci")
    f = (lambda x: f"{x:.0%}") if pct else (lambda x: f"{x:+.2f}")
    return f"{f(v)} [{f(ci[0])}, {f(ci[1])}]" if ci else f(v)


def render(report: dict[str, Any]) -> list[str]:
    """A judge-check report as terminal lines: per judge model and kind, accuracy, kappa and consistency with intervals."""
    lines = [f"judge-check · {report['gold']} · {report['items']} gold items · provider {report['provider']} · each asked {report['asks']}x"]
    for m in report["models"]:
        lines.append(f"judge model {m['judge_model']}" + (f" · {m['errored']} errored (first: {m['first_error']})" if m["errored"] else ""))
        for kind, k in m["kinds"].items():
            row = f"  {kind:<10} {k['items']:>3} items  accuracy {_fmt(k.get('accuracy'), True)}  kappa {_fmt(k.get('kappa'))}"
            if "spearman" in k:
                row += f"  spearman {_fmt(k.get('spearman'))}"
            row += f"  self-consistency {_fmt(k.get('self_consistency'), True)}"
            if "position_consistency" in k:
                row += f"  position consistency {_fmt(k.get('position_consistency'), True)}"
            lines.append(row)
            kappa = (k.get("kappa") or {}).get("value")
            if kappa is not None and kappa < report["kappa_floor"]:
                lines.append(
                    f"    warning: kappa {kappa:.2f} is below {report['kappa_floor']}: this judge's {kind} verdicts do not match people well enough to trust"
                )
    lines.append(
        "intervals: 95 %; accuracy and self-consistency exact (Clopper–Pearson), position consistency exact over items, "
        "kappa the wider of Wald-t and t on log(1 - kappa), Spearman Fisher z; coverage: docs/statistics.md"
    )
    return lines


def write_json(report: dict[str, Any], path: Path) -> None:
    """Write the judge-check report to ``path`` as indented JSON (through safepath)."""
    from agentsproof.core.safepath import write_file

    write_file(path.parent, path.name, (json.dumps(report, indent=2) + "\n").encode("utf-8"))


def attach_gold_agreement(run: RunResult | None, items: list[EvalItem], cfg: RunFlags) -> list[str]:
    """eval.yaml ``judge: {gold: FILE}``: measure the run's judge on each gold set once,
    put the figures in the items' ``stats.judge_agreement`` and warn (in the item's
    warnings) when Cohen's kappa is below the item's floor. Returns the warnings."""
    golds: dict[str, list[EvalItem]] = {}
    for it in items:
        if it.judge_gold:
            golds.setdefault(it.judge_gold, []).append(it)
    if not golds or run is None:
        return []
    by_id = {r.id: r for r in run.items}
    out: list[str] = []
    for gold, group in golds.items():
        report = judge_check(Path(gold), provider=cfg.provider, model=cfg.model, judge_models=[run.judge_model] if run.judge_model else None)
        m = report["models"][0]
        for it in group:
            res = by_id.get(it.id)
            if res is None:
                continue
            block = {"gold": gold, "judge_model": m["judge_model"], "kappa_floor": it.judge_kappa_floor, "kinds": m["kinds"], "errored": m["errored"]}
            res.stats["judge_agreement"] = block
            low = [
                (kind, k["kappa"]["value"])
                for kind, k in m["kinds"].items()
                if (k.get("kappa") or {}).get("value") is not None and k["kappa"]["value"] < it.judge_kappa_floor
            ]
            for kind, kappa in low:
                msg = (
                    f"judge {m['judge_model']}: Cohen's kappa {kappa:.2f} on the gold set's {kind} items is below "
                    f"{it.judge_kappa_floor:g}; the grades rest on a judge that often disagrees with people"
                )
                res.warnings.append(msg)
                out.append(f"{res.name}: {msg}")
    return out
