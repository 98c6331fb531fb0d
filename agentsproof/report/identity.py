"""What ran a run, said the same way in every header (terminal, HTML, Markdown, the CI
summary): the target, the provider, the model that answered and the judge."""

from __future__ import annotations

from typing import Any

from agentsproof.model.results import RunResult


def run_identity(run: RunResult) -> list[tuple[str, str]]:
    """[("target", …), ("provider", …), ("model", …), ("judge", …)] as display text."""
    names = sorted({it.target for it in run.items if it.target}) or ["chat"]
    agents: dict[str, Any] = run.settings.get("targets") or {}
    target = ", ".join(_target(n, agents.get(n)) for n in names)
    if names == ["chat"]:
        own = sorted({it.model for it in run.items if it.model})
        model = ", ".join(own) if own else (run.model or "—")
    else:
        model = ", ".join(_agent_model(agents.get(n)) for n in names if n != "chat")
        if "chat" in names and run.model:
            model += f"; chat: {run.model}"
    provider = run.provider if run.provider and run.provider != "none" else "none (no chat call)"
    judge = run.judge_model or "none (no LLM grader)"
    return [("target", target), ("provider", provider), ("model", model), ("judge", judge)]


def _target(name: str, described: Any) -> str:
    kind = described.get("target_type") if isinstance(described, dict) else None
    return f"{name} ({kind})" if kind and kind != name else name


def _agent_model(described: Any) -> str:
    if not isinstance(described, dict):
        return "the agent's own"
    model, source = described.get("model"), described.get("model_source")
    if model:
        return f"{model} (from {source})" if source else str(model)
    if "model_source" in described:
        return "the agent's own default"
    return "the agent's own"


def identity_line(run: RunResult, sep: str = " · ") -> str:
    """The run's identity (:func:`run_identity`) on one line, ``key value`` pairs joined by ``sep``."""
    return sep.join(f"{k} {v}" for k, v in run_identity(run))
