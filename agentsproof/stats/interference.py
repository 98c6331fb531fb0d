"""The interference verdict: does a skill do as well among its plugin's siblings as alone?

With ``--arms baseline,skill,plugin`` an item has three arms: the baseline, the skill
alone (``with``) and the skill with every skill of its plugin installed (``plugin``). The
skill's delta alone is ``with − baseline``, within its plugin ``plugin − baseline``; the
interference is their difference, ``plugin − with``, with the same smoothed percentile
bootstrap as an item's delta (:func:`agentsproof.stats.intervals.delta_ci`, the two arms
taken as independent samples). Pure: no I/O.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

VERDICTS = {
    "interferes": "its siblings make it worse: the interval of plugin − alone is below 0",
    "helps": "its siblings make it better: the interval of plugin − alone is above 0",
    "none shown": "the interval of plugin − alone includes 0",
    "unknown": "an arm has no scored trial",
}


def _scores(arm: Any) -> list[float]:
    return [t.score for t in arm.trials if t.status == "scored" and t.score is not None]


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def interference(item: Any, skill_name: str | None = None) -> dict[str, Any]:
    """The verdict for an item with a plugin arm (``item``: an ItemResult)."""
    from agentsproof.stats.intervals import DELTA_CI_METHOD, delta_ci

    w, wo, p = _scores(item.with_arm), _scores(item.without_arm), _scores(item.plugin_arm)
    mw, mwo, mp = _mean(w), _mean(wo), _mean(p)
    out: dict[str, Any] = {
        "delta_alone": None if mw is None or mwo is None else mw - mwo,
        "delta_in_plugin": None if mp is None or mwo is None else mp - mwo,
        "difference": None if mp is None or mw is None else mp - mw,
        "ci": None,
        "verdict": "unknown",
        "method": "plugin − alone: " + DELTA_CI_METHOD,
    }
    ci = delta_ci(p, w) if p and w else None
    if ci is not None:
        out["ci"] = [ci[0], ci[1]]
        out["verdict"] = "interferes" if ci[1] < 0 else "helps" if ci[0] > 0 else "none shown"
    out["meaning"] = VERDICTS[out["verdict"]]
    known = [t.skills_invoked for t in item.plugin_arm.trials if t.skills_invoked is not None]
    name = skill_name or item.name
    out["skill_loaded"] = [sum(name in s for s in known), len(known)] if known else None
    others = Counter(n for s in known for n in dict.fromkeys(s) if n != name)
    out["siblings_loaded"] = dict(others.most_common())
    return out
