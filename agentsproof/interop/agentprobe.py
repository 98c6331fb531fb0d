"""A saved run as an agentprobe report (``agentsproof convert RUN.json --to agentprobe-report``).

agentprobe's ``RunReport``: ``run_id``, ``started_at``, ``dataset``, ``adapter``, ``total``,
``passed``, ``pass_rate``, ``results`` (one ``CaseResult`` per run of a case: ``case_id``,
``passed``, ``answer``, ``tools_used``, ``latency_ms``, ``failure_reasons``, ``error``,
``errored``), ``repeats``, ``summaries`` (per case: runs, passed, pass_rate over scored
runs, flaky, errored), ``agent_config`` and ``errored``. Only the with-arm's trials are
exported (agentprobe has one arm); errored trials stay errored and out of the pass rates.
``agentprobe-compare`` and ``agentsproof compare`` both read the result.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentsproof.model.results import ItemResult, TrialResult


def _case_id(item: ItemResult) -> str:
    ident: str = item.id
    if item.kind == "case" and ident.startswith("case-"):
        return ident[len("case-") :]
    return ident


def _reasons(trial: TrialResult) -> list[str]:
    out = []
    for g in trial.graders:
        if g.errored and g.error:
            out.append(f"{g.type}: {g.error}")
        for c in g.checks:
            if not c.passed:
                out.append(f"{c.kind} {c.target!r}: {c.evidence}"[:500])
    return out


def agentprobe_report(path: Path) -> dict[str, Any]:
    """The saved run at ``path`` as an agentprobe ``RunReport`` (its with-arm's trials only); InputError when it is not a run."""
    from agentsproof.report.saved import load_run

    run = load_run(path)
    results: list[dict[str, Any]] = []
    for item in run.items:
        for t in sorted(item.with_arm.trials, key=lambda t: t.index):
            errored = t.status == "errored"
            results.append(
                {
                    "case_id": _case_id(item),
                    "passed": bool(t.passed) and not errored,
                    "answer": t.response,
                    "tools_used": [s.name for s in t.trajectory],
                    "latency_ms": round(t.latency_s * 1000, 3),
                    "failure_reasons": [] if errored or t.passed else _reasons(t),
                    "error": t.error,
                    "errored": errored,
                }
            )
    summaries = []
    for item in run.items:
        group = [r for r in results if r["case_id"] == _case_id(item)]
        scored = [r for r in group if not r["errored"]]
        passed = sum(1 for r in scored if r["passed"])
        lat = [r["latency_ms"] for r in scored]
        summaries.append(
            {
                "case_id": _case_id(item),
                "runs": len(group),
                "passed": passed,
                "pass_rate": passed / len(scored) if scored else 0.0,
                "avg_latency_ms": sum(lat) / len(lat) if lat else None,
                "flaky": 0 < passed < len(scored),
                "errored": len(group) - len(scored),
            }
        )
    scored_all = [r for r in results if not r["errored"]]
    stamp = run.created_at.replace("-", "").replace(":", "").split("+")[0]
    config = run.settings.get("config") or {}
    return {
        "run_id": f"agentsproof-{run.plugin}-{stamp}",
        "started_at": run.created_at,
        "dataset": run.settings.get("dataset") or run.settings.get("eval_yaml") or run.plugin,
        "adapter": next((i.target for i in run.items if i.target), "chat"),
        "total": len(results),
        "passed": sum(1 for r in results if r["passed"]),
        "pass_rate": sum(1 for r in scored_all if r["passed"]) / len(scored_all) if scored_all else 0.0,
        "results": results,
        "repeats": max((i.trials_requested for i in run.items), default=1),
        "summaries": summaries,
        "agent_config": {str(k): str(v) for k, v in config.items()},
        "errored": sum(1 for r in results if r["errored"]),
    }
