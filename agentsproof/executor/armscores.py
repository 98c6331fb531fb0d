"""What the runner reads off an item's arms: the scored trials per arm and per case (for the
adaptive policy), the judge panel's record, and whether a grader's reasoning goes in the log."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentsproof.model.items import EvalItem
from agentsproof.model.results import ArmResult

if TYPE_CHECKING:
    from agentsproof.grading.judge import PanelTally


def panel_record(item: EvalItem, tally: PanelTally | None) -> dict[str, Any] | None:
    """The item's ``judge_panel`` record from its panel's tally; None without a tally, or when
    the panel judged only per-pair verdicts (``pairwise``: its record is ``stats.pairwise.panel``)."""
    from agentsproof.grading.registry import entry

    per_trial = any((k := entry(g.type)).judged and not k.per_pair for c in (item.cases or (item.case_at(0),)) for g in c.graders)
    return tally.as_dict(tuple(item.judge_models), item.judge_combine) if tally is not None and per_trial else None


def logged(type_name: str) -> bool:
    """The grader's registered entry wants its score and reasoning in the trial's log."""
    from agentsproof.grading.registry import find

    found = find(type_name)  # a plugin's grader too
    return found is None or found.logged


def arm_scores(arm: ArmResult) -> list[float]:
    """The scores of the arm's scored trials, in trial order."""
    return [t.score for t in arm.trials if t.status == "scored" and t.score is not None]


def case_scores(item: EvalItem, with_arm: ArmResult, without_arm: ArmResult) -> list[tuple[list[float], list[float]]]:
    """Per case of ``item``, in case order: (with scores, without scores)."""
    table = {c.name: ([], []) for c in item.cases}  # type: dict[str, tuple[list[float], list[float]]]
    for arm, slot in ((with_arm, 0), (without_arm, 1)):
        for t in arm.trials:
            if t.status == "scored" and t.score is not None:
                table[item.case_at(t.index).name][slot].append(t.score)
    return list(table.values())
