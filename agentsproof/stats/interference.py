"""The interference verdict: does a skill do as well among its plugin's siblings as alone?

With ``--arms baseline,skill,plugin`` an item has three arms: the baseline, the skill
alone (``with``) and the skill with every skill of its plugin installed (``plugin``). The
skill's delta alone is ``with − baseline``, within its plugin ``plugin − baseline``; the
interference is their difference, ``plugin − with``: the mean over the cases of each
case's ``mean(plugin) − mean(with)``, with the same interval as an item's delta
(:func:`agentsproof.stats.cases.delta_interval`, the plugin arm in the place of ``with``
and the skill alone in the place of the baseline), so it holds the difference it is
printed beside and answers the same question: (b), on tasks like these, from 5 cases,
else (a), on these cases (``question`` and ``method`` name it). Pure: no I/O.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentsproof.model.results import ArmResult, ItemResult

VERDICTS = {
    "interferes": "its siblings make it worse: the interval of plugin − alone is below 0",
    "helps": "its siblings make it better: the interval of plugin − alone is above 0",
    "none shown": "the interval of plugin − alone includes 0",
    "unknown": "an arm has no scored trial",
}


def verdict_of(ci: tuple[float, float]) -> str:
    """The verdict of an interval of plugin − alone, on its ends as printed (two decimals,
    like the grades): a top of −0.004 prints "−0.00", which includes 0, so none is shown."""
    top, bottom = round(round(ci[1], 9), 2), round(round(ci[0], 9), 2)
    return "interferes" if top < 0 else "helps" if bottom > 0 else "none shown"


def _scores(arm: ArmResult) -> list[float]:
    return [t.score for t in arm.trials if t.status == "scored" and t.score is not None]


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def interference(item: ItemResult, skill_name: str | None = None) -> dict[str, Any]:
    """The verdict for an item with a plugin arm (``item``: an ItemResult)."""
    from agentsproof.stats.cases import by_case, delta_interval
    from agentsproof.stats.tasks import BETTING_METHOD
    from agentsproof.stats.wald import TASKS, cases_method, default_question

    plugin = item.plugin_arm
    if plugin is None:
        raise ValueError(f"item {item.id!r} has no plugin arm to compare")
    w, wo, p = _scores(item.with_arm), _scores(item.without_arm), _scores(plugin)
    mw, mwo, mp = _mean(w), _mean(wo), _mean(p)
    out: dict[str, Any] = {
        "delta_alone": None if mw is None or mwo is None else mw - mwo,
        "delta_in_plugin": None if mp is None or mwo is None else mp - mwo,
        "difference": None,
        "ci": None,
        "verdict": "unknown",
        "question": None,
        "method": None,
    }
    cases = [(a, b) for _, a, b, _ in by_case(item, (plugin, item.with_arm)) if a and b] if p and w else []
    if cases:  # the question delta_interval answers by default for this many cases, and its method
        out["question"] = default_question(len(cases))
        how = BETTING_METHOD if out["question"] == TASKS else cases_method(cases)
        where = "on tasks like these (b)" if out["question"] == TASKS else "on these cases (a)"
        out["method"] = f"plugin − alone, {where}: {how}"
    ci = delta_interval(cases) if cases else None
    if ci is not None:
        out["difference"] = sum(sum(a) / len(a) - sum(b) / len(b) for a, b in cases) / len(cases)
        out["ci"] = [ci[0], ci[1]]
        out["verdict"] = verdict_of(ci)
    out["meaning"] = VERDICTS[out["verdict"]]
    known = [t.skills_invoked for t in plugin.trials if t.skills_invoked is not None]
    name = skill_name or item.name
    out["skill_loaded"] = [sum(name in s for s in known), len(known)] if known else None
    others = Counter(n for s in known for n in dict.fromkeys(s) if n != name)
    out["siblings_loaded"] = dict(others.most_common())
    return out
