"""Proving a generated eval: is it about the skill, and does it tell the arms apart?

- **Relevance**: one LLM judge call (the judge model) reads the skill/agent and the
  generated task and answers ``{"relevant": true|false, "reason": "..."}``. An eval judged
  unrelated is rejected; an unusable verdict does not reject (the output says so).
- **Discrimination**: the eval is written to a scratch folder with the item's files and
  run through the real runner (:func:`agentsproof.executor.session.run_items`) with
  ``--check-trials`` trials per arm, at least one per case (the cases run round robin).
  It is **weak** when the with-arm's mean score does not beat the baseline's, or when
  every deterministic check passes in every trial of both arms (a check is one check of
  one case). The evidence (scores, checks passed in both arms, checks failed in the with-arm,
  the start of one answer per arm) goes back to the model with the request to redesign.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.llm.base import ChatRequest, LLMClient, LLMError
from agentsproof.model.results import ItemResult, Usage

if TYPE_CHECKING:
    from agentsproof.targets.base import TargetDef

RELEVANCE_SYSTEM = (
    "You review evaluation tasks written for an AI skill or agent. Decide whether the task "
    "exercises what the skill/agent is for: would following its instructions change how well "
    "a model answers this task? A task about another topic, or one any answer passes without "
    "the skill's guidance, is not relevant. Reply with only a JSON object: "
    '{"relevant": true or false, "reason": "one sentence"}.'
)
RELEVANCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"relevant": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["relevant", "reason"],
}
EXCERPT_CHARS = 600
MAX_LISTED_CHECKS = 12


@dataclass
class Verdict:
    """The relevance judge's answer on a generated eval: relevant or not, and why."""

    relevant: bool | None
    """None when the verdict could not be read (or the call failed)."""
    reason: str
    ran: bool
    """A reply came back (the call counts)."""
    usage: Usage = field(default_factory=Usage)


def _relevance_request(kind: str, source_text: str, eval_text: str) -> str:
    return (
        f"## The {kind}\n\n<<<SOURCE\n{source_text.strip()}\nSOURCE>>>\n\n"
        f"## The generated eval\n\n<<<EVAL\n{eval_text.strip()}\nEVAL>>>\n\n"
        f"Does this eval's task exercise what the {kind} is for? Reply with the JSON object only."
    )


async def check_relevance(client: LLMClient, model: str, kind: str, source_text: str, eval_text: str, timeout: float) -> Verdict:
    """Ask ``model`` whether the eval exercises what the skill or agent is for; never raises for a provider or reply failure."""
    from agentsproof.grading.judge import extract_json_object

    req = ChatRequest(
        messages=[
            {"role": "system", "content": RELEVANCE_SYSTEM},
            {"role": "user", "content": _relevance_request(kind, source_text, eval_text)},
        ],
        model=model,
        temperature=0.0,
        json_schema=RELEVANCE_SCHEMA,
        timeout=timeout,
    )
    try:
        resp = await client.complete(req)
    except LLMError as err:
        return Verdict(None, f"relevance check failed: {err}", ran=False)
    try:
        data = extract_json_object(resp.text or "")
        relevant = data.get("relevant")
        if not isinstance(relevant, bool):
            raise ValueError("no boolean 'relevant'")
        reason = " ".join(str(data.get("reason") or "").split())[:300]
        return Verdict(relevant, reason or ("relevant" if relevant else "unrelated"), ran=True, usage=resp.usage)
    except Exception as exc:  # noqa: BLE001 - any unusable verdict is reported, not fatal
        return Verdict(None, f"relevance verdict unusable ({' '.join(str(exc).split())[:120]})", ran=True, usage=resp.usage)


# ------------------------------------------------------------------ discrimination


@dataclass
class CheckOutcome:
    """The discrimination check of a generated eval: why it is weak or could not be scored, with the trials' figures."""

    weak: str | None = None
    """Why the eval does not discriminate; None when it does."""
    unusable: str | None = None
    """The check could not score both arms (provider/judge errors): no verdict."""
    evidence: str = ""
    scored: int = 0
    errored: int = 0
    tokens: int = 0
    delta: float | None = None


Check = tuple[str, str, str]
"""(case, kind, target); case is "" for an eval with one task."""


def _check_passes(res: ItemResult) -> dict[str, dict[Check, list[bool]]]:
    """Per arm, per deterministic check of a case: passed or not in each scored trial."""
    out: dict[str, dict[Check, list[bool]]] = {"with": {}, "without": {}}
    for arm in (res.with_arm, res.without_arm):
        for trial in arm.trials:
            if trial.status != "scored":
                continue
            for grader in trial.graders:
                if grader.type != "deterministic":
                    continue
                for c in grader.checks:
                    out[arm.arm].setdefault((trial.case or "", c.kind, c.target), []).append(c.passed)
    return out


def _excerpt(res: ItemResult, arm: str) -> str:
    trials = (res.with_arm if arm == "with" else res.without_arm).trials
    text = next((t.response for t in trials if t.status == "scored" and t.response), "")
    text = text.strip()
    return text[:EXCERPT_CHARS] + (" …" if len(text) > EXCERPT_CHARS else "")


def _case_means(res: ItemResult) -> str:
    """'name 1.00 vs 0.00; …' per case (with-arm vs baseline mean), or "" for one task."""
    scores: dict[str, dict[str, list[float]]] = {}
    for arm in (res.with_arm, res.without_arm):
        for t in arm.trials:
            if t.case and t.status == "scored" and t.score is not None:
                scores.setdefault(t.case, {"with": [], "without": []})[arm.arm].append(t.score)

    def mean(xs: list[float]) -> str:
        return f"{sum(xs) / len(xs):.2f}" if xs else "-"

    return "; ".join(f"{case} {mean(s['with'])} vs {mean(s['without'])}" for case, s in scores.items())


def _fmt(checks: list[Check]) -> str:
    shown = [f"{f'{case}: ' if case else ''}{k} {t!r}" for case, k, t in checks[:MAX_LISTED_CHECKS]]
    more = len(checks) - len(shown)
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def judge_result(res: ItemResult) -> CheckOutcome:
    """The verdict on one checked eval (see the module docstring)."""
    w, wo = res.with_arm, res.without_arm
    out = CheckOutcome(
        scored=w.scored + wo.scored,
        errored=w.errored + wo.errored,
        tokens=w.total_usage.total_tokens + wo.total_usage.total_tokens,
        delta=res.delta,
    )
    if w.mean_score is None or wo.mean_score is None:
        out.unusable = res.status_reason or "no scored trial in an arm"
        return out
    passes = _check_passes(res)
    keys = list(dict.fromkeys([*passes["with"], *passes["without"]]))
    both = [k for k in keys if passes["with"].get(k) and all(passes["with"][k]) and passes["without"].get(k) and all(passes["without"][k])]
    failed_with = [k for k in keys if passes["with"].get(k) and not all(passes["with"][k])]
    lines = [f"With the {res.kind}: mean score {w.mean_score:.2f} over {w.scored} trials; baseline: {wo.mean_score:.2f} over {wo.scored} trials."]
    per_case = _case_means(res)
    if per_case:
        lines.append(f"Per case, mean score with the {res.kind} vs baseline: {per_case}.")
    if both:
        lines.append(f"Checks that passed in every trial of BOTH arms (they cannot show the {res.kind}'s effect): {_fmt(both)}.")
    if failed_with:
        lines.append(f"Checks that FAILED in the with-{res.kind} arm (an answer following the {res.kind} did not satisfy them): {_fmt(failed_with)}.")
    with_text, base_text = _excerpt(res, "with"), _excerpt(res, "without")
    if with_text:
        lines.append(f"Start of an answer WITH the {res.kind}:\n<<<\n{with_text}\n>>>")
    if base_text:
        lines.append(f"Start of a baseline answer:\n<<<\n{base_text}\n>>>")
    out.evidence = "\n".join(lines)
    if w.mean_score <= wo.mean_score + 1e-9:
        out.weak = f"the with-{res.kind} arm does not beat the baseline (mean score {w.mean_score:.2f} vs {wo.mean_score:.2f})"
    elif keys and len(both) == len(keys):
        out.weak = "every check passes in both arms: a baseline answer already satisfies them"
    return out


def evidence_request(reason: str, evidence: str) -> str:
    """The follow-up asking for a redesign after a weak check."""
    return (
        f"That eval was run, and it does not discriminate: {reason}.\n\n{evidence}\n\n"
        "Redesign the eval so that a capable model WITHOUT the guidance fails its checks and an answer "
        "that follows the guidance passes them: test what the guidance adds (its required structure, "
        "steps, rules or wording), not what any good answer does. Send the complete eval.yaml again: "
        "the YAML document only."
    )


def relevance_feedback(reason: str) -> str:
    """The follow-up asking for a new task after the relevance judge found the eval unrelated."""
    return (
        f"A reviewer judged that eval unrelated to what the guidance is for: {reason}\n"
        "Write a task that needs exactly what this guidance teaches. Send the complete eval.yaml again: "
        "the YAML document only."
    )


def run_check(
    eval_text: str,
    write_files: Callable[[Path], None],
    *,
    plugin: str,
    kind: str,
    name: str,
    trials: int,
    provider: str | None,
    model: str,
    judge_model: str | None,
    parallel: int,
    target_def: TargetDef | None = None,
) -> CheckOutcome:
    """Run one generated eval for real in a scratch folder (synchronous; call it in a thread).

    ``write_files(folder)`` puts the item's files there; the eval goes in as eval.yaml.
    ``trials`` per arm are spread over the cases, at least one per case."""
    from agentsproof.core.errors import AgentsproofError
    from agentsproof.core.safepath import write_file
    from agentsproof.executor.plan import RunPlan
    from agentsproof.executor.session import run_plan
    from agentsproof.formats.eval_yaml.items import item_from_eval
    from agentsproof.formats.eval_yaml.models import load_eval
    from agentsproof.model.options import RunFlags

    with tempfile.TemporaryDirectory(prefix="agentsproof-check-") as tmp:
        folder = Path(tmp) / f"{kind}s" / name
        folder.mkdir(parents=True)
        write_files(folder)
        write_file(folder, "eval.yaml", eval_text.encode("utf-8"))
        try:
            ev = load_eval(folder / "eval.yaml")
            cases = len(ev.config.run_tasks())
            item = item_from_eval(ev, trials=max(1, -(-trials // cases)))
            defs = {target_def.name: target_def} if target_def is not None else {}
            cfg = RunFlags(provider=provider, model=model, judge_model=judge_model, parallel=parallel, abort_after=0)
            run = run_plan(RunPlan("eval", plugin, (item,), name, cfg, target_defs=defs))  # no report: the check reads the result
        except AgentsproofError as err:
            return CheckOutcome(unusable=str(err))
    return judge_result(run.items[0])
