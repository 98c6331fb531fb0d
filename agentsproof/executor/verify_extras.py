"""``agentsproof verify``: the numbers a run adds from outside its trials, derived again where
the report records what they were computed from (docs/verify.md says which are not, and why).

- the A/A summary (``settings.aa``, ``--aa``): from the items as derived again
  (:func:`agentsproof.stats.aa.aa_summary`, the run's own code);
- the oracle's score (``items[i].oracle.score``): the mean of its tasks' recorded scores;
  each task's ``passed``: no failing check and no error;
- a judge panel's disagreement rate (``items[i].stats.judge_panel``): its recorded
  disagreements over its verdicts;
- the gold-agreement warnings (``items[i].stats.judge_agreement``): every kind whose
  recorded Cohen's kappa is below the item's floor is named in the item's warnings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentsproof.executor.verify_diff import Difference, diff, diff_tree
from agentsproof.model.results import ItemResult, RunResult


def rederive_outside(run: RunResult, derived: Sequence[ItemResult]) -> list[Difference]:
    """The differences in the numbers above (``derived``: the items graded again, in report order)."""
    out: list[Difference] = []
    aa = run.settings.get("aa")
    if isinstance(aa, Mapping) and "rows" in aa:
        from agentsproof.stats.aa import aa_summary

        again = aa_summary(list(derived), float(aa.get("alpha", 0.05)) if isinstance(aa.get("alpha"), (int, float)) else 0.05)
        diff_tree(out, "settings.aa", aa, again)
    for i, it in enumerate(run.items):
        where = f"items[{i}]"
        if isinstance(it.oracle, Mapping):
            _oracle(out, f"{where}.oracle", it.oracle)
        stats = it.stats or {}
        panel = stats.get("judge_panel")
        if isinstance(panel, Mapping):
            _panel(out, f"{where}.stats.judge_panel", panel)
        gold = stats.get("judge_agreement")
        if isinstance(gold, Mapping):
            _gold(out, where, it, gold)
    return out


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _oracle(out: list[Difference], where: str, oracle: Mapping[str, Any]) -> None:
    tasks = oracle.get("tasks")
    if not isinstance(tasks, list):
        return
    rows = [t for t in tasks if isinstance(t, Mapping)]
    scores = [s for s in (_number(t.get("score")) for t in rows) if s is not None]
    diff(out, f"{where}.score", oracle.get("score"), sum(scores) / len(scores) if scores else None)
    for k, t in enumerate(rows):
        diff(out, f"{where}.tasks[{k}].passed", t.get("passed"), not t.get("failing") and t.get("error") is None)


def _panel(out: list[Difference], where: str, panel: Mapping[str, Any]) -> None:
    verdicts, disagreements = panel.get("verdicts"), panel.get("disagreements")
    if not isinstance(verdicts, int) or not isinstance(disagreements, int):
        out.append(Difference(f"{where}.verdicts", verdicts, "whole numbers of verdicts and disagreements"))
        return
    if not 0 <= disagreements <= verdicts:
        out.append(Difference(f"{where}.disagreements", disagreements, f"between 0 and the {verdicts} verdicts"))
    diff(out, f"{where}.disagreement_rate", panel.get("disagreement_rate"), disagreements / verdicts if verdicts else None)


def _gold(out: list[Difference], where: str, it: ItemResult, block: Mapping[str, Any]) -> None:
    floor = _number(block.get("kappa_floor"))
    kinds = block.get("kinds")
    if floor is None or not isinstance(kinds, Mapping):
        return
    for kind, figures in kinds.items():
        kappa = (figures.get("kappa") or {}).get("value") if isinstance(figures, Mapping) else None
        if isinstance(kappa, (int, float)) and kappa < floor:
            said = f"Cohen's kappa {kappa:.2f} on the gold set's {kind} items is below {floor:g}"
            if not any(said in w for w in it.warnings):
                out.append(Difference(f"{where}.warnings", "(no warning)", f"a warning that {said}"))
